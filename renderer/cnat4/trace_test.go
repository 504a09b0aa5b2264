package cnat4_test

// Packet traces through the whole control plane and the fake VPP, or a real
// VPP when dataplane.SocketEnv names one (see harness_test.go for the
// address plan). The scenarios both cnat faces share are
// renderer/internal/cnattrace's: each TestTraceX at the end of this file
// runs the scenario X on IPv4. The tests before them are IPv4's own.

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/renderer/internal/cnattrace"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
)

// TestTraceSCTP: cnat translates IPv4 SCTP (unlike IPv6), so SCTP service
// ports are rendered as TCP and UDP ones: the ClusterIP, the LoadBalancer
// IP and the node port reach the endpoints, source-NATed as TCP would be
// but keeping the client's source port (cnat has no SCTP port allocator);
// a port without endpoints is dropped by its exclusive VIP, and
// loadBalancerSourceRanges hold for SCTP too (every SCTP port of the
// LoadBalancer IP: the ACL plugin reads no SCTP ports).
func TestTraceSCTP(t *testing.T) {
	e := ipv4Face.NewEnv(t, cnattrace.Cluster{
		Services: []*corev1.Service{
			tracetest.Service("mixed", "10.96.0.40", tracetest.LoadBalancer(30040, "198.51.100.40"), tracetest.SCTPPort(9000), func(s *corev1.Service) {
				s.Spec.Ports[len(s.Spec.Ports)-1].NodePort = 30042
			}),
			tracetest.Service("ranged", "10.96.0.41", tracetest.LoadBalancer(30041, "198.51.100.41"), tracetest.SCTPPort(9001), func(s *corev1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{"100.64.1.0/24"}
			}),
		},
		Slices: []*discoveryv1.EndpointSlice{sctpSlice("mixed", tracetest.Local("10.1.1.2"), tracetest.Remote("10.1.2.2")), sctpSlice("ranged", tracetest.Remote("10.1.2.3"))},
	})
	sctpPod2, sctpRemote2, sctpRemote3 := "10.1.1.2:9000", "10.1.2.2:9000", "10.1.2.3:9000"
	e.ForEachClient(t, ipv4Face.AllClients(), func(cl tracetest.Client) {
		e.Check(cl, tracetest.SCTP, "10.96.0.40:9000", tracetest.Reaches(sctpPod2, sctpRemote2).SNATTo(sctpPod2))
		e.Check(cl, tracetest.SCTP, "198.51.100.40:9000", tracetest.Reaches(sctpPod2, sctpRemote2).SNATAll())
		e.Check(cl, tracetest.SCTP, "10.96.0.40:9001", tracetest.Dropped)
		e.Check(cl, tracetest.TCP, "10.96.0.40:80", tracetest.Reaches("10.1.1.2:8080", "10.1.2.2:8080").SNATTo("10.1.1.2:8080"))
	})
	t.Run("node port", func(t *testing.T) {
		e.T = t
		tr := e.Check(external, tracetest.SCTP, "192.168.16.1:30042", tracetest.Reaches(sctpPod2, sctpRemote2).SNATAll())
		if tr.Out.Src.Port() != tr.In.Src.Port() {
			t.Fatalf("SCTP source port %d rewritten to %d: cnat allocates no SCTP port", tr.In.Src.Port(), tr.Out.Src.Port())
		}
	})
	t.Run("source ranges", func(t *testing.T) {
		e.T = t
		e.Check(external, tracetest.SCTP, "198.51.100.41:9001", tracetest.Reaches(sctpRemote3).SNATAll())
		e.Check(outsider, tracetest.SCTP, "198.51.100.41:9001", tracetest.Dropped)
		e.Check(outsider, tracetest.SCTP, "10.96.0.41:9001", tracetest.Reaches(sctpRemote3))
	})
}

// sctpSlice is an IPv4 slice of svc with port "http" 8080 and port "sctp"
// 9000 (the target of tracetest.SCTPPort).
func sctpSlice(svc string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	s := k8sSlice(svc, eps...)
	s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: tracetest.Ptr("sctp"), Protocol: tracetest.Ptr(corev1.ProtocolSCTP), Port: tracetest.Ptr(int32(9000))})
	return s
}

// The scenarios both cnat faces share (renderer/internal/cnattrace), on IPv4.
func TestTraceClusterIP(t *testing.T) {
	cnattrace.ClusterIP(t, ipv4Face)
}
func TestTraceHairpin(t *testing.T) {
	cnattrace.Hairpin(t, ipv4Face)
}
func TestTraceHairpinOnly(t *testing.T) {
	cnattrace.HairpinOnly(t, ipv4Face)
}
func TestTraceHairpinOnlySourceRangesSkipInternalClients(t *testing.T) {
	cnattrace.HairpinOnlySourceRangesSkipInternalClients(t, ipv4Face)
}
func TestTraceNodePortOnThisNodesIPv4Address(t *testing.T) {
	cnattrace.NodePortOnThisNodesIP(t, ipv4Face)
}
func TestTraceExternalIPs(t *testing.T) {
	cnattrace.ExternalIPs(t, ipv4Face)
}
func TestTraceLoadBalancerIngress(t *testing.T) {
	cnattrace.LoadBalancerIngress(t, ipv4Face)
}
func TestTraceExternalTrafficPolicyLocal(t *testing.T) {
	cnattrace.ExternalTrafficPolicyLocal(t, ipv4Face)
}
func TestTraceExternalTrafficPolicyLocalWithoutOwnClients(t *testing.T) {
	cnattrace.ExternalTrafficPolicyLocalWithoutOwnClients(t, ipv4Face)
}
func TestTraceInternalTrafficPolicyLocal(t *testing.T) {
	cnattrace.InternalTrafficPolicyLocal(t, ipv4Face)
}
func TestTraceTerminatingFallback(t *testing.T) {
	cnattrace.TerminatingFallback(t, ipv4Face)
}
func TestTraceNoEndpointsDrops(t *testing.T) {
	cnattrace.NoEndpointsDrops(t, ipv4Face)
}
func TestTraceLoadBalancerSourceRanges(t *testing.T) {
	cnattrace.LoadBalancerSourceRanges(t, ipv4Face)
}
func TestTraceLoadBalancerSourceRangesHoldingTheNode(t *testing.T) {
	cnattrace.LoadBalancerSourceRangesHoldingTheNode(t, ipv4Face)
}
func TestTraceSessionAffinity(t *testing.T) {
	cnattrace.SessionAffinity(t, ipv4Face)
}
func TestTraceMultiPortNamedTargetPorts(t *testing.T) {
	cnattrace.MultiPortNamedTargetPorts(t, ipv4Face)
}
func TestTraceUDP(t *testing.T) {
	cnattrace.UDP(t, ipv4Face)
}
func TestTraceEndpointChangeUpdatesInPlace(t *testing.T) {
	cnattrace.EndpointChangeUpdatesInPlace(t, ipv4Face)
}
func TestTraceDeleteLeavesNoTrace(t *testing.T) {
	cnattrace.DeleteLeavesNoTrace(t, ipv4Face)
}
func TestTraceAgentRestartChangesNothing(t *testing.T) {
	cnattrace.AgentRestartChangesNothing(t, ipv4Face)
}
func TestTraceFilterShardsPassUnrelatedTraffic(t *testing.T) {
	cnattrace.FilterShardsPassUnrelatedTraffic(t, ipv4Face)
}
func TestTraceVPPRestartReappliesEverything(t *testing.T) {
	cnattrace.VPPRestartReappliesEverything(t, ipv4Face)
}
func TestTraceServiceCIDR(t *testing.T) {
	cnattrace.ServiceCIDR(t, ipv4Face)
}
func TestTraceOpenFlowAcrossEndpointChanges(t *testing.T) {
	cnattrace.OpenFlowAcrossEndpointChanges(t, ipv4Face)
}
func TestTraceHairpinOnlyAgentRestartChangesNothing(t *testing.T) {
	cnattrace.HairpinOnlyAgentRestartChangesNothing(t, ipv4Face)
}
func TestTraceHairpinOnlySwitchBackRemovesFeatures(t *testing.T) {
	cnattrace.HairpinOnlySwitchBackRemovesFeatures(t, ipv4Face)
}
