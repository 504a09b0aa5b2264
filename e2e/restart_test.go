package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Scenario 3: the API server goes away under a running agent (its watches
// break, relists fail) and objects change meanwhile; when a new API server
// instance comes up on the same etcd, the agent's informers relist or
// resume and the agent converges without restarting.
func TestWatchInterruption(t *testing.T) {
	ns := newNamespace(t)
	fake := newFakeVPP()
	a := startAgent(t, fake, fake)

	svcA := createService(t, ns, newService("a"))
	createSlice(t, ns, newSlice("a", "a-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.2"), remote("10.1.2.2")))
	svcB := createService(t, ns, newService("b"))
	createSlice(t, ns, newSlice("b", "b-abcde", discoveryv1.AddressTypeIPv4, remote("10.1.2.4")))
	ipA, ipB := clusterIP(t, svcA, false), clusterIP(t, svcB, false)
	a.waitFlows(t, "before the interruption",
		flow{localPod, hostPort(ipA, 80), reaches("10.1.1.2:8080", "10.1.2.2:8080")},
		flow{localPod, hostPort(ipB, 80), reaches("10.1.2.4:8080")},
	)

	cluster.StopAPIServer()
	t.Cleanup(func() { // leave a running API server to the next test
		if !cluster.Running() {
			if err := cluster.StartAPIServer(); err != nil {
				t.Errorf("restarting the API server: %v", err)
			}
		}
	})
	// A new API server instance on the same etcd, not yet reachable by the
	// agent: the changes are made while the agent sees the API server down.
	direct, err := cluster.StartAPIServerHidden()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sl, err := direct.DiscoveryV1().EndpointSlices(ns).Get(ctx, "a-abcde", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setEndpoints(sl, local("10.1.1.2"), remote("10.1.2.2"), remote("10.1.2.3"))
	if _, err := direct.DiscoveryV1().EndpointSlices(ns).Update(ctx, sl, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := direct.CoreV1().Services(ns).Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := direct.DiscoveryV1().EndpointSlices(ns).Delete(ctx, "b-abcde", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	svcC, err := direct.CoreV1().Services(ns).Create(ctx, newService("c"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.DiscoveryV1().EndpointSlices(ns).Create(ctx, newSlice("c", "c-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.3")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ipC := clusterIP(t, svcC, false)
	// Nothing reached the agent.
	if p := traceProblem(fake, localPod, hostPort(ipB, 80), reaches("10.1.2.4:8080")); p != "" {
		t.Fatalf("the agent changed VPP while the API server was down: %s", p)
	}

	// The API server is back.
	fake.ResetCalls()
	back := time.Now()
	if err := cluster.Expose(); err != nil {
		t.Fatal(err)
	}
	// client-go's reflectors retry with a jittered exponential backoff
	// (0.8s doubling, up to 30s) while the server refuses connections.
	a.waitFlowsWithin(t, 60*time.Second, "after the API server came back",
		flow{localPod, hostPort(ipA, 80), reaches("10.1.1.2:8080", "10.1.2.2:8080", "10.1.2.3:8080")},
		flow{localPod, hostPort(ipB, 80), untranslated},
		flow{localPod, hostPort(ipC, 80), reaches("10.1.1.3:8080")},
	)
	t.Logf("converged %s after the API server came back", time.Since(back).Round(10*time.Millisecond))
	// The Service and EndpointSlice informers relist independently, so c may
	// briefly have no endpoints (rejected by an ACL) before its slice
	// arrives: ACL requests depend on that order and are only logged.
	nat, acl := withoutACL(a.settledCalls(t))
	t.Logf("ACL requests after the interruption: %v", acl)
	expectCalls(t, "changes made while the API server was down", nat, map[string]int{
		"nat44_lb_static_mapping_add_del_local": 1, // a: one more endpoint
		"nat44_add_del_lb_static_mapping":       2, // b deleted, c created
		"nat44_interface_add_del_feature":       1, // tap3 (c's endpoint) becomes a backend interface
		// No route: the ServiceCIDR's drop route covers b's and c's ClusterIPs.
	})

	// Without a restart of its own: still the first Resync, the watcher
	// still running.
	if st := a.proc.Stats(); st.Resyncs != 1 {
		t.Errorf("the processor got %d Resyncs, want 1 (the agent must converge through events)", st.Resyncs)
	}
	if dump := fake.Dump(); strings.Contains(dump, ipB.String()) {
		t.Errorf("the VPP dump still mentions the deleted service's %s:\n%s", ipB, dump)
	}

	// And it keeps following live changes.
	updateSlice(t, ns, "c-abcde", func(s *discoveryv1.EndpointSlice) { setEndpoints(s, local("10.1.1.4")) })
	a.waitFlows(t, "live change after the interruption", flow{localPod, hostPort(ipC, 80), reaches("10.1.1.4:8080")})
}

// Scenario 4: the agent stops, objects change, a new agent starts against
// the same (still configured) VPP: it converges with only the requests the
// changes need and removes what was deleted meanwhile.
func TestAgentRestart(t *testing.T) {
	ns := newNamespace(t)
	fake := newFakeVPP()
	first := startAgent(t, fake, fake)

	svcA := createService(t, ns, newService("a"))
	createSlice(t, ns, newSlice("a", "a-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.2"), remote("10.1.2.2")))
	svcB := createService(t, ns, newService("b"))
	createSlice(t, ns, newSlice("b", "b-abcde", discoveryv1.AddressTypeIPv4, remote("10.1.2.4")))
	svcC := createService(t, ns, newService("c", nodePort))
	createSlice(t, ns, newSlice("c", "c-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.3"), remote("10.1.2.5")))
	ipA, ipB, ipC := clusterIP(t, svcA, false), clusterIP(t, svcB, false), clusterIP(t, svcC, false)
	npC := nodePortOf(t, svcC, "http")
	cFlows := []flow{
		{localPod, hostPort(ipC, 80), reaches("10.1.1.3:8080", "10.1.2.5:8080")},
		{external, hostPort(nodeIPv4, npC), reaches("10.1.1.3:8080", "10.1.2.5:8080").snatted(true)},
	}
	first.waitFlows(t, "first agent", append(cFlows,
		flow{localPod, hostPort(ipA, 80), reaches("10.1.1.2:8080", "10.1.2.2:8080")},
		flow{localPod, hostPort(ipB, 80), reaches("10.1.2.4:8080")},
	)...)
	first.settledCalls(t)
	first.Stop()

	// While no agent runs: a's remote endpoint is replaced, b is deleted,
	// d is created; c does not change.
	updateSlice(t, ns, "a-abcde", func(s *discoveryv1.EndpointSlice) {
		setEndpoints(s, local("10.1.1.2"), remote("10.1.2.3"))
	})
	deleteService(t, ns, "b")
	deleteSlice(t, ns, "b-abcde")
	svcD := createService(t, ns, newService("d"))
	createSlice(t, ns, newSlice("d", "d-abcde", discoveryv1.AddressTypeIPv4, local("10.1.1.4")))
	ipD := clusterIP(t, svcD, false)

	// A new agent process: a new API connection to the same VPP.
	fake.ResetCalls()
	second := startAgent(t, fake, fake.NewAdapter())
	second.waitFlows(t, "second agent", append(cFlows,
		flow{localPod, hostPort(ipA, 80), reaches("10.1.1.2:8080", "10.1.2.3:8080")},
		flow{localPod, hostPort(ipB, 80), untranslated},
		flow{localPod, hostPort(ipD, 80), reaches("10.1.1.4:8080")},
	)...)
	expectCalls(t, "agent restart after changes", second.settledCalls(t), map[string]int{
		"nat44_lb_static_mapping_add_del_local": 2, // a: 10.1.2.3 added, 10.1.2.2 removed
		"nat44_add_del_lb_static_mapping":       2, // b deleted, d created
		"nat44_interface_add_del_feature":       1, // tap4 (d's endpoint) becomes a backend interface
		// No route: the ServiceCIDR's drop route covers b's and d's ClusterIPs.
	})
	if dump := fake.Dump(); strings.Contains(dump, ipB.String()) {
		t.Errorf("the VPP dump still mentions the deleted service's %s:\n%s", ipB, dump)
	}

	// Another restart, with nothing changed: VPP is left alone.
	settled := fake.Dump()
	second.Stop()
	fake.ResetCalls()
	third := startAgent(t, fake, fake.NewAdapter())
	third.waitFlows(t, "third agent", append(cFlows,
		flow{localPod, hostPort(ipA, 80), reaches("10.1.1.2:8080", "10.1.2.3:8080")},
		flow{localPod, hostPort(ipD, 80), reaches("10.1.1.4:8080")},
	)...)
	expectCalls(t, "agent restart without changes", third.settledCalls(t), nil)
	if got := withoutSessions(fake.Dump()); got != withoutSessions(settled) {
		t.Errorf("a restart without changes changed VPP:\nbefore:\n%s\nafter:\n%s", settled, got)
	}
}

// withoutSessions drops the NAT session counters (the traces make sessions).
func withoutSessions(dump string) string {
	var out []string
	for _, l := range strings.Split(dump, "\n") {
		if !strings.Contains(l, "total=") || !strings.Contains(l, "dynamic=") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
