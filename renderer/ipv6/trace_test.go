package ipv6_test

// Packet traces through the whole control plane and the fake VPP, or a real
// VPP when dataplane.SocketEnv names one (see harness_test.go for the
// address plan). The scenarios both cnat faces share are
// renderer/internal/cnattrace's: each TestTraceX at the end of this file
// runs the scenario X on IPv6. The tests before them are IPv6's own.

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/renderer/internal/cnattrace"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
)

// TestTraceDualStack registers both renderers: the IPv4 half of a
// dual-stack service goes through NAT44-ED, the IPv6 half through cnat, and
// neither renderer programs (or touches) the other's objects.
func TestTraceDualStack(t *testing.T) {
	svc := tracetest.Service("dual", "fd00:96::28", tracetest.LoadBalancer(30089, "198.51.100.28", "2001:db8:1b::28"), tracetest.DualStack("10.96.0.28", "fd00:96::28"), func(s *corev1.Service) {
		s.Spec.LoadBalancerSourceRanges = []string{"100.64.1.0/24", "2001:db8:c:1::/64"}
	})
	v4 := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: "dual-v4", Labels: map[string]string{discoveryv1.LabelServiceName: "dual"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: tracetest.Ptr("http"), Protocol: tracetest.Ptr(corev1.ProtocolTCP), Port: tracetest.Ptr(int32(8080))}},
		Endpoints:   []discoveryv1.Endpoint{tracetest.Local("10.1.1.2"), tracetest.Remote("10.1.2.2")},
	}
	v6 := k8sSlice("dual", tracetest.Local("fd00:1:1::2"), tracetest.Remote("fd00:1:2::2"))
	e := faceWith(agentOptions{nat44: true}).NewEnv(t, cnattrace.Cluster{
		Services: []*corev1.Service{svc},
		Slices:   []*discoveryv1.EndpointSlice{v4, v6},
	})
	pod4 := tracetest.Client{Name: "local pod (IPv4)", Ingress: "tap9", Addr: netip.MustParseAddr("10.1.1.9")}
	ext4 := tracetest.Client{Name: "external client (IPv4)", Ingress: "uplink0", Addr: netip.MustParseAddr("100.64.1.5")}

	tr := e.Trace(pod4, tracetest.TCP, "10.96.0.28:80")
	if tr.Verdict != fakevpp.Forward || !tr.ReplyOK || !strings.Contains(strings.Join(tr.Steps, "\n"), "nat44") || cnattrace.CNATTranslated(tr.Steps) {
		t.Fatalf("IPv4 ClusterIP flow not translated by NAT44-ED alone: %s to %s\n%s", tr.Verdict, tr.Out.Dst, strings.Join(tr.Steps, "\n"))
	}
	pod2, remote2 := "[fd00:1:1::2]:8080", "[fd00:1:2::2]:8080" // port "http" 8080
	tr = e.Check(localPod, tracetest.TCP, "[fd00:96::28]:80", tracetest.Reaches(pod2, remote2).SNATTo(pod2))
	if steps := strings.Join(tr.Steps, "\n"); !strings.Contains(steps, "cnat") || strings.Contains(steps, "nat44-ed-") {
		t.Fatalf("IPv6 ClusterIP flow not translated by cnat alone:\n%s", steps)
	}
	if tr := e.Trace(ext4, tracetest.TCP, "198.51.100.28:80"); tr.Verdict != fakevpp.Forward || !tr.ReplyOK {
		t.Fatalf("IPv4 LoadBalancer flow: %s (%s)\n%s", tr.Verdict, tr.Reason, strings.Join(tr.Steps, "\n"))
	}
	e.Check(external, tracetest.TCP, "[2001:db8:1b::28]:80", tracetest.Reaches(pod2, remote2).SNATAll())
	e.Check(outsider, tracetest.TCP, "[2001:db8:1b::28]:80", tracetest.Dropped)

	t.Run("each renderer's objects hold only its family", func(t *testing.T) {
		dataplane.FakeOnly(t, e.Node, "reads fakevpp's dump format")
		checkFamilies(t, e.Node.Dump())
	})
	t.Run("a change of one family's endpoints calls only that family's plugin", func(t *testing.T) {
		e.Node.ResetCalls()
		v6b := v6.DeepCopy()
		v6b.Endpoints = append(v6b.Endpoints, tracetest.Remote("fd00:1:2::3"))
		e.Agent.UpdateEndpointSlice(v6b)
		assertCalls(t, e.Node, "cnat_", "nat44_")
		e.Node.ResetCalls()
		v4b := v4.DeepCopy()
		v4b.Endpoints = append(v4b.Endpoints, tracetest.Remote("10.1.2.3"))
		e.Agent.UpdateEndpointSlice(v4b)
		assertCalls(t, e.Node, "nat44_", "cnat_")
	})
}

// checkFamilies checks a fake VPP dump: NAT44 sections hold no IPv6 address,
// cnat sections no IPv4 address, and each renderer's service ACL only rules
// of its family.
func checkFamilies(t *testing.T, dump string) {
	t.Helper()
	section, sawCNAT, sawNAT := "", false, false
	var entry []string
	flush := func() {
		text := strings.Join(entry, "\n")
		entry = nil
		switch {
		case text == "":
		case strings.HasPrefix(section, "nat44"):
			sawNAT = sawNAT || strings.Contains(text, "10.96.0.28")
			if strings.Contains(text, "fd00:") || strings.Contains(text, "2001:db8:") {
				t.Errorf("IPv6 in NAT44 state (%s): %s", section, text)
			}
		case strings.HasPrefix(section, "cnat"):
			sawCNAT = sawCNAT || strings.Contains(text, "fd00:96::28")
			if strings.Contains(text, "10.96.") || strings.Contains(text, "10.1.") || strings.Contains(text, "198.51.100.") {
				t.Errorf("IPv4 in cnat state (%s): %s", section, text)
			}
		case section == "acl" && strings.Contains(text, "ipv6-"):
			if strings.Contains(text, "198.51.100.") || strings.Contains(text, "100.64.") {
				t.Errorf("IPv4 rule in the IPv6 renderer's ACL: %s", text)
			}
		case section == "acl" && strings.Contains(text, "nat44-"):
			if strings.Contains(text, "2001:db8:") {
				t.Errorf("IPv6 rule in the NAT44 renderer's ACL: %s", text)
			}
		}
	}
	for _, line := range strings.Split(dump, "\n") {
		switch {
		case strings.HasPrefix(line, "    "):
			entry = append(entry, line)
		case strings.HasPrefix(line, "  "):
			flush()
			entry = append(entry, line)
		default:
			flush()
			section = strings.TrimSuffix(line, ":")
		}
	}
	flush()
	if !sawCNAT || !sawNAT {
		t.Errorf("dual-stack ClusterIPs missing from the dump (cnat %t, nat44 %t):\n%s", sawCNAT, sawNAT, dump)
	}
}

// assertCalls checks that the last change wrote some want-prefixed message
// and no forbidden-prefixed one.
func assertCalls(t *testing.T, v dataplane.Node, want, forbidden string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		calls := v.Calls()
		var wrote bool
		for msg := range calls {
			if strings.HasPrefix(msg, forbidden) && !tracetest.IsReadOnly(msg) {
				t.Fatalf("the change sent %s: %v", msg, calls)
			}
			wrote = wrote || strings.HasPrefix(msg, want) && !tracetest.IsReadOnly(msg)
		}
		if wrote {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the change sent no %s message: %v", want, calls)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTraceSCTPPortsAreDropped: cnat translates no SCTP over IPv6, so an
// SCTP service port is not rendered: the ClusterIP's exclusive VIP drops it,
// a filter rule the LoadBalancer IP's.
func TestTraceSCTPPortsAreDropped(t *testing.T) {
	e := ipv6Face.NewEnv(t, cnattrace.Cluster{
		Services: []*corev1.Service{tracetest.Service("mixed", "fd00:96::40", tracetest.LoadBalancer(30040, "2001:db8:1b::40"), tracetest.SCTPPort(9000))},
		Slices:   []*discoveryv1.EndpointSlice{k8sSlice("mixed", tracetest.Remote("fd00:1:2::2"))},
	})
	e.ForEachClient(t, ipv6Face.AllClients(), func(cl tracetest.Client) {
		e.Check(cl, tracetest.SCTP, "[fd00:96::40]:9000", tracetest.Dropped)
		e.Check(cl, tracetest.SCTP, "[2001:db8:1b::40]:9000", tracetest.Dropped)
		e.Check(cl, tracetest.TCP, "[fd00:96::40]:80", tracetest.Reaches("[fd00:1:2::2]:8080"))
	})
}

// The scenarios both cnat faces share (renderer/internal/cnattrace), on IPv6.
func TestTraceClusterIP(t *testing.T) {
	cnattrace.ClusterIP(t, ipv6Face)
}
func TestTraceHairpin(t *testing.T) {
	cnattrace.Hairpin(t, ipv6Face)
}
func TestTraceHairpinOnly(t *testing.T) {
	cnattrace.HairpinOnly(t, ipv6Face)
}
func TestTraceHairpinOnlySourceRangesSkipInternalClients(t *testing.T) {
	cnattrace.HairpinOnlySourceRangesSkipInternalClients(t, ipv6Face)
}
func TestTraceNodePortOnThisNodesIPv6Address(t *testing.T) {
	cnattrace.NodePortOnThisNodesIP(t, ipv6Face)
}
func TestTraceExternalIPs(t *testing.T) {
	cnattrace.ExternalIPs(t, ipv6Face)
}
func TestTraceLoadBalancerIngress(t *testing.T) {
	cnattrace.LoadBalancerIngress(t, ipv6Face)
}
func TestTraceExternalTrafficPolicyLocal(t *testing.T) {
	cnattrace.ExternalTrafficPolicyLocal(t, ipv6Face)
}
func TestTraceExternalTrafficPolicyLocalWithoutOwnClients(t *testing.T) {
	cnattrace.ExternalTrafficPolicyLocalWithoutOwnClients(t, ipv6Face)
}
func TestTraceInternalTrafficPolicyLocal(t *testing.T) {
	cnattrace.InternalTrafficPolicyLocal(t, ipv6Face)
}
func TestTraceTerminatingFallback(t *testing.T) {
	cnattrace.TerminatingFallback(t, ipv6Face)
}
func TestTraceNoEndpointsDrops(t *testing.T) {
	cnattrace.NoEndpointsDrops(t, ipv6Face)
}
func TestTraceLoadBalancerSourceRanges(t *testing.T) {
	cnattrace.LoadBalancerSourceRanges(t, ipv6Face)
}
func TestTraceLoadBalancerSourceRangesHoldingTheNode(t *testing.T) {
	cnattrace.LoadBalancerSourceRangesHoldingTheNode(t, ipv6Face)
}
func TestTraceSessionAffinity(t *testing.T) {
	cnattrace.SessionAffinity(t, ipv6Face)
}
func TestTraceMultiPortNamedTargetPorts(t *testing.T) {
	cnattrace.MultiPortNamedTargetPorts(t, ipv6Face)
}
func TestTraceUDP(t *testing.T) {
	cnattrace.UDP(t, ipv6Face)
}
func TestTraceEndpointChangeUpdatesInPlace(t *testing.T) {
	cnattrace.EndpointChangeUpdatesInPlace(t, ipv6Face)
}
func TestTraceDeleteLeavesNoTrace(t *testing.T) {
	cnattrace.DeleteLeavesNoTrace(t, ipv6Face)
}
func TestTraceAgentRestartChangesNothing(t *testing.T) {
	cnattrace.AgentRestartChangesNothing(t, ipv6Face)
}
func TestTraceFilterShardsPassUnrelatedTraffic(t *testing.T) {
	cnattrace.FilterShardsPassUnrelatedTraffic(t, ipv6Face)
}
func TestTraceVPPRestartReappliesEverything(t *testing.T) {
	cnattrace.VPPRestartReappliesEverything(t, ipv6Face)
}
func TestTraceServiceCIDR(t *testing.T) {
	cnattrace.ServiceCIDR(t, ipv6Face)
}
func TestTraceOpenFlowAcrossEndpointChanges(t *testing.T) {
	cnattrace.OpenFlowAcrossEndpointChanges(t, ipv6Face)
}
func TestTraceHairpinOnlyAgentRestartChangesNothing(t *testing.T) {
	cnattrace.HairpinOnlyAgentRestartChangesNothing(t, ipv6Face)
}
func TestTraceHairpinOnlySwitchBackRemovesFeatures(t *testing.T) {
	cnattrace.HairpinOnlySwitchBackRemovesFeatures(t, ipv6Face)
}
