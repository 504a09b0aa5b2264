package cnat4_test

// Agent restarts around hairpinSNAT "hairpin-only": what the mode enables
// on VPP is read back by the next agent (cnat's feature nodes through
// feature_is_enabled) and claimed by the renderer, so a restart in the same
// mode leaves VPP alone and a restart in another mode takes the nodes away.

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/internal/agenttest"
	"github.com/vppsvc/vppsvc/renderer/cnat"
	"github.com/vppsvc/vppsvc/renderer/cnat4"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
)

// hairpinOnlyCluster has a service whose only endpoint is pod 2 and a
// LoadBalancer service with two local endpoints and a remote one.
var hairpinOnlyCluster = cluster{
	services: []*corev1.Service{
		k8sService("self", "10.96.0.11"),
		k8sService("pair", "10.96.0.12", loadBalancer(30084, "198.51.100.12")),
	},
	slices: []*discoveryv1.EndpointSlice{
		k8sSlice("self", local("10.1.1.2")),
		k8sSlice("pair", local("10.1.1.2"), local("10.1.1.3"), remote("10.1.2.2")),
	},
}

func hairpinOnlyConfig() cnat4.Config {
	cfg := testConfig()
	cfg.HairpinSNAT = cnat.HairpinSNATOnly
	return cfg
}

// reassertedSNAT are the messages of cnat's SNAT settings, which VPP cannot
// dump: every agent start re-sends them, unchanged (docs/vpp-layer.md).
var reassertedSNAT = map[string]bool{"cnat_set_snat_addresses": true, "cnat_set_snat_policy": true, "cnat_snat_policy_add_del_if": true}

func TestTraceHairpinOnlyAgentRestartChangesNothing(t *testing.T) {
	e := newEnvWith(t, agentOptions{cfg: hairpinOnlyConfig()}, hairpinOnlyCluster)
	open := e.Check(podClient(2), protoTCP, "10.96.0.11:80", reaches(pod2).SNATAll())
	before, features := e.Node.Dump(), enabledFeatures(t, e.Node)
	if !slices.Contains(features, "set interface feature tap2 cnat-input-ip4 arc ip4-unicast") {
		t.Fatalf("hairpin-only enabled no cnat-input-ip4 on tap2: %v", features)
	}

	// The agent restarts; VPP keeps running.
	e.agent.Stop()
	e.Node.ResetCalls()
	ag := startAgent(t, e.Node, agentOptions{cfg: hairpinOnlyConfig()})
	ag.proc.Resync(hairpinOnlyCluster.snapshot())
	waitSettled(t, ag.Run)
	t.Logf("VPP calls during the restart: %v", e.Node.Calls())
	for msg, n := range e.Node.Calls() {
		if !tracetest.IsReadOnly(msg) && !reassertedSNAT[msg] {
			t.Errorf("restart sent %d %s", n, msg)
		}
	}
	if after := e.Node.Dump(); after != before {
		t.Fatalf("VPP state changed across the agent restart\n--- before\n%s--- after\n%s", before, after)
	}
	if after := enabledFeatures(t, e.Node); !slices.Equal(after, features) {
		t.Fatalf("features changed across the agent restart: %v, were %v", after, features)
	}
	// The pod's open connection to itself keeps its source NAT.
	data := e.Node.Trace(fakevpp.Packet{Ingress: podClient(2).Ingress, Protocol: protoTCP, Src: open.In.Src, Dst: open.In.Dst, TCPFlags: 0x10})
	if data.Verdict != fakevpp.Forward || data.Out.Src != open.Out.Src || data.Out.Dst != open.Out.Dst {
		t.Fatalf("open connection after restart: %s %s → %s, was %s → %s", data.Verdict, data.Out.Src, data.Out.Dst, open.Out.Src, open.Out.Dst)
	}
}

// A restart with hairpinSNAT true after hairpin-only removes cnat-input-ip4
// and cnat-output-ip4 (claimed, read back). With them left on the pods'
// taps, cnat-input would translate the pods' flows without the paths'
// source NAT. cnat's SNAT policy, addresses and POD table stay (VPP cannot
// dump them); without the feature nodes nothing consults them for IPv4.
func TestTraceHairpinOnlySwitchBackRemovesFeatures(t *testing.T) {
	e := newEnvWith(t, agentOptions{cfg: hairpinOnlyConfig()}, hairpinOnlyCluster)
	e.Check(localPod, protoTCP, "198.51.100.12:80", reaches(pod2, pod3, remote2))
	if len(enabledFeatures(t, e.Node)) == 0 {
		t.Fatal("hairpin-only enabled no feature")
	}

	e.agent.Stop()
	e.agent = startAgent(t, e.Node, agentOptions{cfg: testConfig()})
	e.agent.proc.Resync(hairpinOnlyCluster.snapshot())
	waitSettled(t, e.agent.Run)
	if f := enabledFeatures(t, e.Node); len(f) != 0 {
		t.Fatalf("features left after the switch back to hairpinSNAT true: %v", f)
	}
	// Every path of the LoadBalancer IP is source-NATed again, for this
	// node's pods too.
	for range 10 {
		e.Check(localPod, protoTCP, "198.51.100.12:80", reaches(pod2, pod3, remote2).SNATAll())
	}
	e.Check(podClient(2), protoTCP, "10.96.0.11:80", reaches(pod2).SNATAll())
}

// enabledFeatures lists the interface features the VPP layer's driver reads
// back from node (feature_is_enabled with the arcs' canaries), sorted.
func enabledFeatures(t *testing.T, node dataplane.Node) []string {
	t.Helper()
	d, err := govppdriver.Connect(node.Adapter(), govppdriver.Options{Logger: tracetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	select {
	case <-govppdriver.NewConnectGate(d).Connected():
	case <-time.After(10 * time.Second):
		t.Fatal("driver did not connect")
	}
	st, err := d.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range st.Objects {
		if f, ok := o.Item.(*vppcfg.InterfaceFeature); ok {
			out = append(out, f.String())
		}
	}
	slices.Sort(out)
	return out
}

// waitSettled waits until the agent's VPP layer holds every desired item and
// has removed every stale one.
func waitSettled(t *testing.T, run *agenttest.Run) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := run.Rec.Stats()
		settled := s.Synced && !s.Applying && s.Pending == 0 && s.Failed == 0 && s.Applied == s.Desired &&
			!slices.ContainsFunc(run.Rec.Statuses(), func(st engine.ItemStatus) bool { return st.Deleting })
		if settled {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the VPP layer did not settle: %+v", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
