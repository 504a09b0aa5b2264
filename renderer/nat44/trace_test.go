package nat44_test

// Packet traces through the whole control plane and the fake VPP (see
// harness_test.go for the address plan). These tests assert behaviour (who
// reaches which endpoint, with or without source NAT, what is dropped), not
// item layout, which translate_test.go covers.

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
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
	"github.com/vppsvc/vppsvc/renderer/nat44"
)

func TestTraceClusterIPWithSeveralBackends(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("web", "10.96.0.10")},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("web", local("10.1.1.2"), remote("10.1.2.2"), remote("10.1.2.3"))},
	})
	all := []string{"10.1.1.2:8080", "10.1.2.2:8080", "10.1.2.3:8080"}
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			e.Check(cl, protoTCP, "10.96.0.10:80", reaches(false, all...))
		})
	}
	t.Run("other ports of the ClusterIP are dropped", func(t *testing.T) {
		// kube-proxy rejects them; VPP cannot reject, the ClusterIP's drop
		// route ends what NAT44-ED did not translate.
		for _, cl := range allClients {
			e.T = t
			e.Check(cl, protoTCP, "10.96.0.10:443", tracetest.DroppedBecause("matches drop route 10.96.0.10/32"))
			e.Check(cl, protoUDP, "10.96.0.10:80", tracetest.DroppedBecause("matches drop route 10.96.0.10/32"))
		}
	})
	t.Run("unrelated traffic passes untranslated", func(t *testing.T) {
		e.T = t
		tr := e.Trace(localPod, protoTCP, "10.1.2.7:22")
		if tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != "10.1.2.7:22" || tr.SNAT || !tr.ReplyOK {
			t.Fatalf("pod to remote pod: %s to %s snat=%t replyOK=%t\n%s", tr.Verdict, tr.Out.Dst, tr.SNAT, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
		}
		tr = e.Trace(remotePod, protoTCP, "10.1.1.2:22")
		if tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != "10.1.1.2:22" || tr.SNAT || !tr.ReplyOK {
			t.Fatalf("remote pod to pod: %s to %s snat=%t replyOK=%t\n%s", tr.Verdict, tr.Out.Dst, tr.SNAT, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
		}
	})
}

func TestTracePodReachesItselfThroughItsService(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("self", "10.96.0.11"), k8sService("pair", "10.96.0.12")},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("self", local("10.1.1.2")),
			k8sSlice("pair", local("10.1.1.2"), local("10.1.1.3")),
		},
	})
	// One backend: always itself, always self-twice-NATed.
	e.Check(podClient(2), protoTCP, "10.96.0.11:80", reaches(true, "10.1.1.2:8080"))
	// Two backends: self-twice-NAT exactly when the draw picks itself, and
	// the draws balanced. VPP draws backends and twice-NAT ports from one
	// LCG whose low bit alternates; with weights whose sum is a power of
	// two, a pod that once picked itself picked itself for good (19 of 20
	// on VPP 25.10) until the renderer spread the weights (weightSpread).
	self := 0
	var tr fakevpp.Trace
	for range 40 {
		tr = e.Trace(podClient(2), protoTCP, "10.96.0.12:80")
		toSelf := tr.Out.Dst.Addr() == netip.MustParseAddr("10.1.1.2")
		if tr.Verdict != fakevpp.Forward || !tr.ReplyOK || tr.SNAT != toSelf {
			t.Fatalf("to %s: verdict %s snat=%t replyOK=%t\n%s", tr.Out.Dst, tr.Verdict, tr.SNAT, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
		}
		if toSelf {
			self++
		}
	}
	if self < 10 || self > 30 {
		t.Fatalf("40 draws reached the pod itself %d times, want 10–30; the last:\n%s", self, strings.Join(tr.Steps, "\n"))
	}
}

// TestTraceNodePortOnThisNodesIP: NodePorts are answered on this node's
// primary IP (kube-proxy's default --nodeport-addresses); another node's
// IP:nodePort is not intercepted, so the packet goes on to that node, which
// answers it under its own policies (kube-proxy does the same).
func TestTraceNodePortOnThisNodesIP(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("np", "10.96.0.13", nodePortType(30080))},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("np", local("10.1.1.2"), remote("10.1.2.2"))},
	})
	all := []string{"10.1.1.2:8080", "10.1.2.2:8080"}
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			e.Check(cl, protoTCP, "192.168.16.1:30080", reaches(true, all...))
			e.CheckPasses(cl, protoTCP, "192.168.16.2:30080")
			e.Check(cl, protoTCP, "10.96.0.13:80", reaches(false, all...))
		})
	}
}

func TestTraceExternalIPs(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("ext", "10.96.0.14", func(s *corev1.Service) {
			s.Spec.ExternalIPs = []string{"203.0.113.10", "203.0.113.11"}
		})},
		slices: []*discoveryv1.EndpointSlice{k8sSlice("ext", remote("10.1.2.2"), remote("10.1.2.3"))},
	})
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			e.Check(cl, protoTCP, "203.0.113.10:80", reaches(true, "10.1.2.2:8080", "10.1.2.3:8080"))
			e.Check(cl, protoTCP, "203.0.113.11:80", reaches(true, "10.1.2.2:8080", "10.1.2.3:8080"))
		})
	}
}

func TestTraceLoadBalancerIngress(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("lb", "10.96.0.15", loadBalancer(30081, "198.51.100.10"))},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("lb", local("10.1.1.2"), remote("10.1.2.2"))},
	})
	all := []string{"10.1.1.2:8080", "10.1.2.2:8080"}
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			e.Check(cl, protoTCP, "198.51.100.10:80", reaches(true, all...))
			e.Check(cl, protoTCP, "192.168.16.1:30081", reaches(true, all...))
		})
	}
}

// TestTraceExternalTrafficPolicyLocal: externalTrafficPolicy Local applies
// to clients outside the cluster only. Clients arriving on the uplink (a
// remote pod, an external client) reach only this node's endpoints and keep
// their address; this node's pods and the node itself are short-circuited,
// as kube-proxy does, to every endpoint through the ClusterIP (the
// ClusterIP's own source NAT), also when no endpoint is local.
func TestTraceExternalTrafficPolicyLocal(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{
			k8sService("with-local", "10.96.0.16", loadBalancer(30082, "198.51.100.16"), etpLocal),
			k8sService("no-local", "10.96.0.17", loadBalancer(30083, "198.51.100.17"), etpLocal, externalIPs("203.0.113.17")),
		},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("with-local", local("10.1.1.2"), local("10.1.1.3"), remote("10.1.2.2")),
			k8sSlice("no-local", remote("10.1.2.2"), remote("10.1.2.3")),
		},
	})
	outside := []client{remotePod, external}
	inside := []client{localPod, theNode}
	t.Run("clients outside the cluster: local endpoints only, client IP kept", func(t *testing.T) {
		e.T = t
		for _, cl := range outside {
			e.Check(cl, protoTCP, "198.51.100.16:80", reaches(false, "10.1.1.2:8080", "10.1.1.3:8080"))
			e.Check(cl, protoTCP, "192.168.16.1:30082", reaches(false, "10.1.1.2:8080", "10.1.1.3:8080"))
			// Another node's IP: that node answers under its own endpoints.
			e.CheckPasses(cl, protoTCP, "192.168.16.2:30082")
			e.Check(cl, protoTCP, "198.51.100.17:80", dropped)
			e.Check(cl, protoTCP, "192.168.16.1:30083", dropped)
			e.Check(cl, protoTCP, "203.0.113.17:80", dropped)
		}
	})
	t.Run("this node's pods and the node: every endpoint, as through the ClusterIP", func(t *testing.T) {
		e.T = t
		all := []string{"10.1.1.2:8080", "10.1.1.3:8080", "10.1.2.2:8080"}
		remotes := []string{"10.1.2.2:8080", "10.1.2.3:8080"}
		for _, cl := range inside {
			e.Check(cl, protoTCP, "198.51.100.16:80", reaches(false, all...))
			e.Check(cl, protoTCP, "192.168.16.1:30082", reaches(false, all...))
			e.Check(cl, protoTCP, "198.51.100.17:80", reaches(false, remotes...))
			e.Check(cl, protoTCP, "192.168.16.1:30083", reaches(false, remotes...))
			e.Check(cl, protoTCP, "203.0.113.17:80", reaches(false, remotes...))
			e.CheckPasses(cl, protoTCP, "192.168.16.2:30082")
		}
	})
	t.Run("the ClusterIP keeps every endpoint", func(t *testing.T) {
		e.T = t
		e.Check(localPod, protoTCP, "10.96.0.16:80", reaches(false, "10.1.1.2:8080", "10.1.1.3:8080", "10.1.2.2:8080"))
		e.Check(localPod, protoTCP, "10.96.0.17:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080"))
	})
	t.Run("a pod that is an endpoint reaches the service through its LoadBalancer IP", func(t *testing.T) {
		e.T = t
		e.Check(podClient(2), protoTCP, "198.51.100.16:80", reaches(false, "10.1.1.2:8080", "10.1.1.3:8080", "10.1.2.2:8080").SNATTo("10.1.1.2:8080"))
	})
}

func TestTraceInternalTrafficPolicyLocal(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{
			k8sService("itp", "10.96.0.18", itpLocal),
			k8sService("itp-none", "10.96.0.19", itpLocal),
		},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("itp", local("10.1.1.2"), remote("10.1.2.2")),
			k8sSlice("itp-none", remote("10.1.2.2")),
		},
	})
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			e.Check(cl, protoTCP, "10.96.0.18:80", reaches(false, "10.1.1.2:8080"))
			e.Check(cl, protoTCP, "10.96.0.19:80", dropped)
		})
	}
}

func TestTraceTerminatingFallback(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("term", "10.96.0.20"), k8sService("mixed", "10.96.0.21")},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("term", terminating(local("10.1.1.2")), terminating(remote("10.1.2.2"))),
			k8sSlice("mixed", terminating(local("10.1.1.2")), remote("10.1.2.2"), remote("10.1.2.3")),
		},
	})
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			// Nothing ready: the terminating endpoints still serve.
			e.Check(cl, protoTCP, "10.96.0.20:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080"))
			// Something ready: terminating endpoints get no new flows.
			e.Check(cl, protoTCP, "10.96.0.21:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080"))
		})
	}
}

// TestTraceLocalTerminatingFallback: under externalTrafficPolicy Local a
// node whose only local endpoint is terminating keeps serving its external
// frontends from it, even while endpoints on other nodes are ready, as
// kube-proxy's CategorizeEndpoints does (KEP-1669, per category); the
// ClusterIP (policy Cluster) uses only the ready remote endpoint.
func TestTraceLocalTerminatingFallback(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("drain", "10.96.0.29", loadBalancer(30091, "198.51.100.29"), etpLocal)},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("drain", terminating(local("10.1.1.2")), remote("10.1.2.2"))},
	})
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			// External frontends: the local terminating endpoint for clients
			// outside the cluster; internal clients get the ClusterIP's
			// choice, the ready remote endpoint.
			want := reaches(false, "10.1.1.2:8080")
			if cl == localPod || cl == theNode {
				want = reaches(false, "10.1.2.2:8080")
			}
			e.Check(cl, protoTCP, "192.168.16.1:30091", want)
			e.Check(cl, protoTCP, "198.51.100.29:80", want)
			e.Check(cl, protoTCP, "10.96.0.29:80", reaches(false, "10.1.2.2:8080"))
		})
	}
}

func TestTraceNoEndpointsDrops(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{
			k8sService("empty", "10.96.0.22", loadBalancer(30084, "198.51.100.22")),
			k8sService("web", "10.96.0.10"),
		},
		slices: []*discoveryv1.EndpointSlice{k8sSlice("empty"), k8sSlice("web", remote("10.1.2.2"), remote("10.1.2.3"))},
	})
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			e.Check(cl, protoTCP, "10.96.0.22:80", dropped)
			e.Check(cl, protoTCP, "198.51.100.22:80", dropped)
			e.Check(cl, protoTCP, "192.168.16.1:30084", dropped)
			// The drop ACL matches only its own frontends.
			e.Check(cl, protoTCP, "10.96.0.10:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080"))
		})
	}
	t.Run("unrelated traffic on filtered interfaces passes", func(t *testing.T) {
		e.T = t
		for _, tc := range []struct {
			cl  client
			dst string
		}{{localPod, "10.1.2.7:22"}, {remotePod, "10.1.1.2:22"}, {external, "10.1.1.3:8080"}} {
			tr := e.Trace(tc.cl, protoTCP, tc.dst)
			if tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != tc.dst || !tr.ReplyOK {
				t.Fatalf("%s → %s: %s (%s)\n%s", tc.cl.Name, tc.dst, tr.Verdict, tr.Reason, strings.Join(tr.Steps, "\n"))
			}
		}
	})
}

func TestTraceLoadBalancerSourceRanges(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{
			k8sService("ranged", "10.96.0.23", loadBalancer(30085, "198.51.100.23"), func(s *corev1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{"100.64.1.0/24", "10.1.0.0/16"}
			}),
			k8sService("open", "10.96.0.24", loadBalancer(30086, "198.51.100.24")),
		},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("ranged", remote("10.1.2.2"), remote("10.1.2.3")),
			k8sSlice("open", remote("10.1.2.4"), remote("10.1.2.5")),
		},
	})
	ranged := reaches(true, "10.1.2.2:8080", "10.1.2.3:8080")
	e.Check(external, protoTCP, "198.51.100.23:80", ranged)
	e.Check(localPod, protoTCP, "198.51.100.23:80", ranged)
	e.Check(remotePod, protoTCP, "198.51.100.23:80", ranged)
	e.Check(denied, protoTCP, "198.51.100.23:80", dropped)
	e.Check(theNode, protoTCP, "198.51.100.23:80", dropped)
	// Source ranges restrict the LoadBalancer IP only (as in kube-proxy).
	e.Check(denied, protoTCP, "192.168.16.1:30085", ranged)
	e.Check(denied, protoTCP, "10.96.0.23:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080"))
	// Other services and other traffic are untouched.
	e.Check(denied, protoTCP, "198.51.100.24:80", reaches(true, "10.1.2.4:8080", "10.1.2.5:8080"))
}

// TestTraceLoadBalancerSourceRangesHoldingTheNode: when a source range holds
// the node's IP, traffic the node sends as the LoadBalancer IP (a node that
// owns the VIP) passes the filter, as kube-proxy allows; with ranges that
// do not hold the node, it is dropped like any other client.
func TestTraceLoadBalancerSourceRangesHoldingTheNode(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{
			k8sService("node-ranged", "10.96.0.26", loadBalancer(30087, "198.51.100.26"), func(s *corev1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{"192.168.16.0/24"}
			}),
			k8sService("other-ranged", "10.96.0.27", loadBalancer(30088, "198.51.100.27"), func(s *corev1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{"100.64.1.0/24"}
			}),
		},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("node-ranged", remote("10.1.2.2")),
			k8sSlice("other-ranged", remote("10.1.2.3")),
		},
	})
	asVIP := func(ip string) client {
		return client{Name: "node as " + ip, Ingress: "host0", Addr: netip.MustParseAddr(ip)}
	}
	// The reply goes to the LoadBalancer IP, which is VPP's here, not the
	// node's: only the forward path is the filter's business.
	if tr := e.Trace(asVIP("198.51.100.26"), protoTCP, "198.51.100.26:80"); tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != "10.1.2.2:8080" {
		t.Errorf("the node as its LoadBalancer IP, range holding the node: %s to %s (%s)\n%s", tr.Verdict, tr.Out.Dst, tr.Reason, strings.Join(tr.Steps, "\n"))
	}
	e.Check(asVIP("198.51.100.27"), protoTCP, "198.51.100.27:80", dropped)
	// The node's kernel sends from its host-link address (nodeSources):
	// the node's own traffic, admitted where a range holds the node.
	e.Check(theNode, protoTCP, "198.51.100.26:80", reaches(true, "10.1.2.2:8080"))
	e.Check(theNode, protoTCP, "198.51.100.27:80", dropped)
	e.Check(external, protoTCP, "198.51.100.27:80", reaches(true, "10.1.2.3:8080"))
}

func TestTraceSessionAffinity(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("sticky", "10.96.0.25", func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: tracetest.Ptr(int32(600))}}
		})},
		slices: []*discoveryv1.EndpointSlice{k8sSlice("sticky", remote("10.1.2.2"), remote("10.1.2.3"), remote("10.1.2.4"), remote("10.1.2.5"))},
	})
	all := []string{"10.1.2.2:8080", "10.1.2.3:8080", "10.1.2.4:8080", "10.1.2.5:8080"}
	firsts := map[netip.AddrPort]bool{}
	for _, cl := range allClients {
		// The first connection is a draw among all endpoints ...
		first := e.Check(cl, protoTCP, "10.96.0.25:80", reaches(false, all...)).Out.Dst
		firsts[first] = true
		// ... the next ones follow the client's affinity record.
		for range 10 {
			e.Check(cl, protoTCP, "10.96.0.25:80", reaches(false, first.String()))
		}
	}
	t.Logf("first picks of %d clients: %v", len(allClients), firsts)
}

// TestTraceSessionAffinityTimeout shows what NAT44-ED's affinity timeout is
// keyed on (docs/renderer-nat44.md, "Session affinity timeout"): the
// client's record lives while any of its sessions to the frontend exists,
// and its timeoutSeconds countdown starts only when the last one is freed.
// An expired session is freed lazily, by the next session allocation's LRU
// reclaim (one a time, after that allocation's own affinity lookup), so
// the client stays pinned well past timeoutSeconds without a connection.
// kube-proxy counts from the last new connection. The transitory timeout is
// lowered to 1 s so that the real VPP can be waited for.
func TestTraceSessionAffinityTimeout(t *testing.T) {
	cfg := testConfig()
	cfg.Timeouts.TCPTransitory = 1
	e := newEnvWith(t, cfg, cluster{
		services: []*corev1.Service{k8sService("sticky", "10.96.0.25", func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: tracetest.Ptr(int32(2))}}
		})},
		slices: []*discoveryv1.EndpointSlice{k8sSlice("sticky", remote("10.1.2.2"), remote("10.1.2.3"), remote("10.1.2.4"), remote("10.1.2.5"))},
	})
	all := []string{"10.1.2.2:8080", "10.1.2.3:8080", "10.1.2.4:8080", "10.1.2.5:8080"}
	pinned := e.Check(external, protoTCP, "10.96.0.25:80", reaches(false, all...)).Out.Dst.String()
	e.Check(external, protoTCP, "10.96.0.25:80", reaches(false, pinned))

	// 3.5 s without a connection, past transitory (1 s) + timeoutSeconds
	// (2 s): the two expired sessions still hold the record, so the client
	// is still pinned (this allocation frees one of them, after its lookup).
	waitOn(e.Node, 3500*time.Millisecond)
	e.Check(external, protoTCP, "10.96.0.25:80", reaches(false, pinned))

	// Its sessions expire; another client's two new sessions free them
	// (each allocation frees the oldest expired transitory session), and
	// the record's 2 s countdown starts.
	waitOn(e.Node, 1500*time.Millisecond)
	other := e.Check(remotePod, protoTCP, "10.96.0.25:80", reaches(false, all...)).Out.Dst.String()
	e.Check(remotePod, protoTCP, "10.96.0.25:80", reaches(false, other))
	waitOn(e.Node, 2500*time.Millisecond)

	// The record has expired: the next connection is a draw again.
	e.Check(external, protoTCP, "10.96.0.25:80", reaches(false, all...))
}

// waitOn lets d pass on node: the fake's clock, or real time on a real VPP,
// whose clock cannot be advanced.
func waitOn(node dataplane.Node, d time.Duration) {
	if f, ok := node.(*dataplane.Fake); ok {
		f.VPP.Advance(d)
		return
	}
	time.Sleep(d)
}

func TestTraceMultiPortNamedTargetPorts(t *testing.T) {
	svc := k8sService("multi", "10.96.0.26", func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{
			{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80},
			{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090},
			{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53},
		}
	})
	slice := k8sSlice("multi", local("10.1.1.2"), remote("10.1.2.2"))
	slice.Ports = []discoveryv1.EndpointPort{
		{Name: tracetest.Ptr("http"), Protocol: tracetest.Ptr(corev1.ProtocolTCP), Port: tracetest.Ptr(int32(8080))},
		{Name: tracetest.Ptr("metrics"), Protocol: tracetest.Ptr(corev1.ProtocolTCP), Port: tracetest.Ptr(int32(9100))},
		{Name: tracetest.Ptr("dns"), Protocol: tracetest.Ptr(corev1.ProtocolUDP), Port: tracetest.Ptr(int32(5353))},
	}
	e := newEnv(t, cluster{services: []*corev1.Service{svc}, slices: []*discoveryv1.EndpointSlice{slice}})
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			e.Check(cl, protoTCP, "10.96.0.26:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080"))
			e.Check(cl, protoTCP, "10.96.0.26:9090", reaches(false, "10.1.1.2:9100", "10.1.2.2:9100"))
			e.Check(cl, protoUDP, "10.96.0.26:53", reaches(false, "10.1.1.2:5353", "10.1.2.2:5353"))
		})
	}
}

func TestTraceUDP(t *testing.T) {
	svc := k8sService("dns", "10.96.0.27", nodePortType(30053), func(s *corev1.Service) {
		s.Spec.Ports[0].Protocol = corev1.ProtocolUDP
		s.Spec.Ports[0].Port = 53
	})
	slice := k8sSlice("dns", local("10.1.1.2"), remote("10.1.2.2"))
	slice.Ports[0].Protocol = tracetest.Ptr(corev1.ProtocolUDP)
	slice.Ports[0].Port = tracetest.Ptr(int32(53))
	e := newEnv(t, cluster{services: []*corev1.Service{svc}, slices: []*discoveryv1.EndpointSlice{slice}})
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			e.Check(cl, protoUDP, "10.96.0.27:53", reaches(false, "10.1.1.2:53", "10.1.2.2:53"))
			e.Check(cl, protoUDP, "192.168.16.1:30053", reaches(true, "10.1.1.2:53", "10.1.2.2:53"))
			// Same port number over TCP is not the service.
			if tr := e.Trace(cl, protoTCP, "10.96.0.27:53"); tr.Verdict == fakevpp.Forward && tr.Out.Dst.Addr() != netip.MustParseAddr("10.96.0.27") {
				t.Fatalf("TCP 53 translated to %s", tr.Out.Dst)
			}
		})
	}
}

func TestTraceDualStackRendersIPv4Half(t *testing.T) {
	svc := k8sService("dual", "10.96.0.28", func(s *corev1.Service) {
		s.Spec.ClusterIPs = []string{"10.96.0.28", "fd00:96::28"}
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	})
	v6 := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: "dual-v6", Labels: map[string]string{discoveryv1.LabelServiceName: "dual"}},
		AddressType: discoveryv1.AddressTypeIPv6,
		Ports:       []discoveryv1.EndpointPort{{Name: tracetest.Ptr("http"), Protocol: tracetest.Ptr(corev1.ProtocolTCP), Port: tracetest.Ptr(int32(8080))}},
		Endpoints:   []discoveryv1.Endpoint{endpoint("fd00:1:1::2", thisNode), endpoint("fd00:1:2::2", otherNode)},
	}
	e := newEnv(t, cluster{
		services: []*corev1.Service{svc},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("dual", local("10.1.1.2"), remote("10.1.2.2")), v6},
	})
	for _, cl := range allClients {
		e.Check(cl, protoTCP, "10.96.0.28:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080"))
	}
	dump := e.Node.Dump()
	if strings.Contains(dump, "fd00:") {
		t.Fatalf("IPv6 addresses in VPP state programmed by the NAT44 renderer:\n%s", dump)
	}
}

func TestTraceScaleKeepsSessionsToUnchangedBackends(t *testing.T) {
	svc := k8sService("web", "10.96.0.10")
	e := newEnv(t, cluster{
		services: []*corev1.Service{svc},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("web", remote("10.1.2.2"), remote("10.1.2.3"), remote("10.1.2.4"))},
	})
	// Open one connection per client and remember where each went.
	type conn struct {
		cl  client
		syn fakevpp.Trace
	}
	var conns []conn
	for _, cl := range allClients {
		tr := e.Check(cl, protoTCP, "10.96.0.10:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080", "10.1.2.4:8080"))
		conns = append(conns, conn{cl, tr})
	}
	// next sends a data segment of an open connection.
	next := func(c conn) fakevpp.Trace {
		return e.Node.Trace(fakevpp.Packet{Ingress: c.cl.Ingress, Protocol: protoTCP, Src: c.syn.In.Src, Dst: c.syn.In.Dst, TCPFlags: 0x10})
	}
	used := map[string]bool{}
	for _, c := range conns {
		used[c.syn.Out.Dst.String()] = true
	}

	// Scale up: every open connection keeps its backend.
	e.agent.proc.UpdateEndpointSlice(k8sSlice("web", remote("10.1.2.2"), remote("10.1.2.3"), remote("10.1.2.4"), remote("10.1.2.5"), local("10.1.1.2")))
	for _, c := range conns {
		if tr := next(c); tr.Verdict != fakevpp.Forward || tr.Out.Dst != c.syn.Out.Dst {
			t.Fatalf("after scale-up, %s's connection: %s to %s, was %s\n%s", c.cl.Name, tr.Verdict, tr.Out.Dst, c.syn.Out.Dst, strings.Join(tr.Steps, "\n"))
		}
	}
	e.Check(localPod, protoTCP, "10.96.0.10:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080", "10.1.2.3:8080", "10.1.2.4:8080", "10.1.2.5:8080"))

	// Scale down by one endpoint that no connection uses (10.1.2.5 is
	// new, so unused); connections to the others survive.
	e.agent.proc.UpdateEndpointSlice(k8sSlice("web", remote("10.1.2.2"), remote("10.1.2.3"), remote("10.1.2.4"), local("10.1.1.2")))
	for _, c := range conns {
		if tr := next(c); tr.Verdict != fakevpp.Forward || tr.Out.Dst != c.syn.Out.Dst {
			t.Fatalf("after scale-down, %s's connection: %s to %s, was %s\n%s", c.cl.Name, tr.Verdict, tr.Out.Dst, c.syn.Out.Dst, strings.Join(tr.Steps, "\n"))
		}
	}
	e.Check(localPod, protoTCP, "10.96.0.10:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080", "10.1.2.3:8080", "10.1.2.4:8080"))

	// Remove the endpoint of the first connection: its sessions go (VPP
	// deletes the sessions of a removed local), the others stay.
	gone := conns[0].syn.Out.Dst
	var keep []discoveryv1.Endpoint
	for _, a := range []string{"10.1.2.2", "10.1.2.3", "10.1.2.4"} {
		if a != gone.Addr().String() {
			keep = append(keep, remote(a))
		}
	}
	keep = append(keep, local("10.1.1.2"))
	e.agent.proc.UpdateEndpointSlice(k8sSlice("web", keep...))
	for _, c := range conns {
		tr := next(c)
		if c.syn.Out.Dst == gone {
			if tr.Verdict == fakevpp.Forward && tr.Out.Dst == gone {
				t.Fatalf("%s's connection still reaches the removed endpoint %s", c.cl.Name, gone)
			}
			continue
		}
		if tr.Verdict != fakevpp.Forward || tr.Out.Dst != c.syn.Out.Dst {
			t.Fatalf("after removing %s, %s's connection: %s to %s, was %s", gone, c.cl.Name, tr.Verdict, tr.Out.Dst, c.syn.Out.Dst)
		}
	}
}

// TestTraceOneToTwoToOneKeepsSessions: a service scaled from one endpoint
// to two and back keeps every open connection to the endpoint that stays
// (one endpoint is an LB mapping too, padded with a never-drawn
// placeholder, so the scale is local steps, not a new mapping); the
// connections of an endpoint that leaves end. The one-endpoint ClusterIP's
// other ports reach its drop route, on the real VPP too: no static mapping
// registers the ClusterIP as a local address.
func TestTraceOneToTwoToOneKeepsSessions(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("web", "10.96.0.10")},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("web", remote("10.1.2.2"))},
	})
	first := netip.MustParseAddrPort("10.1.2.2:8080")
	var conns []fakevpp.Trace
	for _, cl := range allClients {
		conns = append(conns, e.Check(cl, protoTCP, "10.96.0.10:80", reaches(false, first.String())))
	}
	e.Check(localPod, protoTCP, "10.96.0.10:443", tracetest.DroppedBecause("matches drop route 10.96.0.10/32"))
	// next sends a data segment of connection i.
	next := func(i int) fakevpp.Trace {
		return e.Node.Trace(fakevpp.Packet{Ingress: allClients[i].Ingress, Protocol: protoTCP, Src: conns[i].In.Src, Dst: conns[i].In.Dst, TCPFlags: 0x10})
	}
	stillOn := func(when string, to netip.AddrPort) {
		t.Helper()
		for i, cl := range allClients {
			if tr := next(i); tr.Verdict != fakevpp.Forward || tr.Out.Dst != to || !tr.ReplyOK {
				t.Fatalf("%s, %s's connection: %s to %s (replyOK=%t), want %s\n%s", when, cl.Name, tr.Verdict, tr.Out.Dst, tr.ReplyOK, to, strings.Join(tr.Steps, "\n"))
			}
		}
	}

	e.agent.proc.UpdateEndpointSlice(k8sSlice("web", remote("10.1.2.2"), remote("10.1.2.3")))
	stillOn("after 1 → 2", first)
	e.Check(remotePod, protoTCP, "10.96.0.10:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080"))

	e.agent.proc.UpdateEndpointSlice(k8sSlice("web", remote("10.1.2.2")))
	stillOn("after 2 → 1", first)

	// 1 → 2, then the first endpoint leaves: its connections end, new ones
	// reach the second.
	e.agent.proc.UpdateEndpointSlice(k8sSlice("web", remote("10.1.2.2"), remote("10.1.2.3")))
	e.agent.proc.UpdateEndpointSlice(k8sSlice("web", remote("10.1.2.3")))
	for i, cl := range allClients {
		if tr := next(i); tr.Verdict == fakevpp.Forward && tr.Out.Dst == first {
			t.Fatalf("%s's connection still reaches the removed endpoint %s", cl.Name, first)
		}
	}
	e.Check(external, protoTCP, "10.96.0.10:80", reaches(false, "10.1.2.3:8080"))
}

func TestTraceDeleteLeavesNoTrace(t *testing.T) {
	web := k8sService("web", "10.96.0.10", loadBalancer(30087, "198.51.100.10"), func(s *corev1.Service) {
		s.Spec.LoadBalancerSourceRanges = []string{"100.64.1.0/24"}
		s.Spec.ExternalIPs = []string{"203.0.113.10"}
	})
	empty := k8sService("empty", "10.96.0.22")
	one := k8sService("one", "10.96.0.11", nodePortType(30088))
	v := newNode(t)
	ag := startAgent(t, v)
	ag.proc.Resync(cluster{}.snapshot())
	before := v.Dump()

	ag.proc.UpdateService(web)
	ag.proc.UpdateService(empty)
	ag.proc.UpdateService(one)
	ag.proc.UpdateEndpointSlice(k8sSlice("web", local("10.1.1.2"), remote("10.1.2.2")))
	ag.proc.UpdateEndpointSlice(k8sSlice("one", remote("10.1.2.2")))
	e := &env{Env: tracetest.NewEnv(t, v, nodeIP, 50000), agent: ag}
	e.Check(external, protoTCP, "198.51.100.10:80", reaches(true, "10.1.1.2:8080", "10.1.2.2:8080"))
	e.Check(external, protoTCP, "192.168.16.1:30088", reaches(true, "10.1.2.2:8080"))
	e.Check(localPod, protoTCP, "10.96.0.22:80", dropped)
	if v.Dump() == before {
		t.Fatal("services changed nothing in VPP")
	}

	ag.proc.DeleteService("default", "web")
	ag.proc.DeleteService("default", "empty")
	ag.proc.DeleteService("default", "one")
	after := v.Dump()
	if after != before {
		t.Fatalf("VPP state after deleting every service differs from before adding them\n--- before\n%s--- after\n%s", before, after)
	}
	// Only the node-wide configuration stays: the filter shards hold their
	// placeholders again, and nothing names a service or its addresses.
	for _, s := range []string{"default/", "10.96.", "198.51.100.", "203.0.113.", "30087", "30088", "deny"} {
		if strings.Contains(after, s) {
			t.Fatalf("%q left in VPP after delete:\n%s", s, after)
		}
	}
}

func TestTraceAgentRestartChangesNothing(t *testing.T) {
	c := cluster{
		services: []*corev1.Service{
			k8sService("web", "10.96.0.10", loadBalancer(30089, "198.51.100.10"), func(s *corev1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{"100.64.1.0/24"}
				s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			}),
			k8sService("one", "10.96.0.11", nodePortType(30090), etpLocal),
			k8sService("empty", "10.96.0.22"),
		},
		slices: []*discoveryv1.EndpointSlice{
			k8sSlice("web", local("10.1.1.2"), remote("10.1.2.2"), remote("10.1.2.3")),
			k8sSlice("one", local("10.1.1.3")),
		},
	}
	e := newEnv(t, c)
	tr := e.Check(external, protoTCP, "198.51.100.10:80", reaches(true, "10.1.1.2:8080", "10.1.2.2:8080", "10.1.2.3:8080"))
	before := e.Node.Dump()

	// The agent restarts; VPP keeps running.
	e.agent.Stop()
	e.Node.ResetCalls()
	ag := startAgent(t, e.Node)
	ag.proc.Resync(c.snapshot())
	// Let the reconciler settle: it may still be processing events.
	time.Sleep(100 * time.Millisecond)
	t.Logf("VPP calls during the restart: %v", e.Node.Calls())
	for msg, n := range e.Node.Calls() {
		if !tracetest.IsReadOnly(msg) {
			t.Errorf("restart sent %d %s", n, msg)
		}
	}
	if after := e.Node.Dump(); after != before {
		t.Fatalf("VPP state changed across the agent restart\n--- before\n%s--- after\n%s", before, after)
	}
	// The open connection survives.
	data := e.Node.Trace(fakevpp.Packet{Ingress: external.Ingress, Protocol: protoTCP, Src: tr.In.Src, Dst: tr.In.Dst, TCPFlags: 0x10})
	if data.Verdict != fakevpp.Forward || data.Out.Dst != tr.Out.Dst {
		t.Fatalf("open connection after restart: %s to %s, was %s", data.Verdict, data.Out.Dst, tr.Out.Dst)
	}
}

func TestTraceAffinityEndpointRemoval(t *testing.T) {
	sticky := func(s *corev1.Service) {
		s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: tracetest.Ptr(int32(600))}}
	}
	addrs := []string{"10.1.2.2", "10.1.2.3", "10.1.2.4"}
	slice := func(skip netip.Addr) *discoveryv1.EndpointSlice {
		var eps []discoveryv1.Endpoint
		for _, a := range addrs {
			if a != skip.String() {
				eps = append(eps, remote(a))
			}
		}
		return k8sSlice("sticky", eps...)
	}
	e := newEnv(t, cluster{services: []*corev1.Service{k8sService("sticky", "10.96.0.25", sticky)}, slices: []*discoveryv1.EndpointSlice{slice(netip.Addr{})}})
	pinned := e.Check(external, protoTCP, "10.96.0.25:80", reaches(false, "10.1.2.2:8080", "10.1.2.3:8080", "10.1.2.4:8080")).Out.Dst
	e.Check(external, protoTCP, "10.96.0.25:80", reaches(false, pinned.String()))

	// The pinned endpoint goes away: the client is balanced again over the
	// endpoints that remain, and pinned to its new pick.
	e.agent.proc.UpdateEndpointSlice(slice(pinned.Addr()))
	var rest []string
	for _, a := range addrs {
		if a != pinned.Addr().String() {
			rest = append(rest, a+":8080")
		}
	}
	again := e.Check(external, protoTCP, "10.96.0.25:80", reaches(false, rest...)).Out.Dst
	e.Check(external, protoTCP, "10.96.0.25:80", reaches(false, again.String()))
}

// TestTraceEgressSNAT runs with an overlay: with the uplink an output-feature
// interface, a service flow that would enter and leave through it (an
// external client reaching a backend on another node through the uplink) is
// translated a second time on the way out (VPP's
// nat44_ed_not_translate_output_feature translates what arrived on an
// output-feature interface) and its reply is lost, so egress SNAT needs the
// other nodes' pods behind another interface.
func TestTraceEgressSNAT(t *testing.T) {
	cfg := testConfig()
	cfg.EgressSNAT = nat44.EgressSNAT{Enabled: true, Interface: "uplink0", Address: nodeIP,
		IdentityPorts: []nat44.PortProtocol{{Port: 4789, Protocol: "udp"}}}
	v := newNodeWith(t, true)
	ag := startAgentWith(t, v, cfg, "uplink0", "host0", "vxlan0")
	ag.proc.Resync(cluster{
		services: []*corev1.Service{k8sService("np", "10.96.0.13", nodePortType(30080))},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("np", local("10.1.1.2"), remote("10.1.2.2"))},
	}.snapshot())
	e := &env{Env: tracetest.NewEnv(t, v, nodeIP, 40000), agent: ag}

	// Pod egress to the internet leaves with the node's address ...
	tr := e.Trace(localPod, protoUDP, "8.8.8.8:53")
	if tr.Verdict != fakevpp.Forward || tr.Egress != "uplink0" || !tr.SNAT || tr.Out.Src.Addr() != nodeIP || !tr.ReplyOK {
		t.Fatalf("pod egress: %s via %s from %s snat=%t replyOK=%t\n%s", tr.Verdict, tr.Egress, tr.Out.Src, tr.SNAT, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
	}
	// ... traffic to other nodes' pods does not.
	tr = e.Trace(localPod, protoTCP, "10.1.2.7:22")
	if tr.Verdict != fakevpp.Forward || tr.Egress != "vxlan0" || tr.SNAT || !tr.ReplyOK {
		t.Fatalf("pod to remote pod: %s via %s from %s snat=%t\n%s", tr.Verdict, tr.Egress, tr.Out.Src, tr.SNAT, strings.Join(tr.Steps, "\n"))
	}
	// Services still work, also through the output-feature uplink.
	overlayPod := client{Name: "remote pod (overlay)", Ingress: "vxlan0", Addr: remotePod.Addr}
	for _, cl := range []client{localPod, theNode, overlayPod, external} {
		e.Check(cl, protoTCP, "192.168.16.1:30080", reaches(true, "10.1.1.2:8080", "10.1.2.2:8080"))
		e.Check(cl, protoTCP, "10.96.0.13:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080"))
	}
}

// TestTraceFilterShardsPassUnrelatedTraffic: without filtered services no
// filter ACL is bound; with one, every shard is, the empty ones holding a
// placeholder; either way traffic that is no service's passes untouched,
// whatever its protocol (tracetest.Env.CheckFilterShardsPassUnrelated).
func TestTraceFilterShardsPassUnrelatedTraffic(t *testing.T) {
	e := newEnv(t, cluster{})
	unrelated := []tracetest.Flow{
		tracetest.FlowOf(external, protoTCP, "10.1.1.3:8080"), tracetest.FlowOf(localPod, protoTCP, "10.1.2.7:22"), tracetest.FlowOf(localPod, protoUDP, "10.1.2.7:53"),
		tracetest.FlowOf(remotePod, protoTCP, "10.1.1.2:22"), tracetest.FlowOf(theNode, protoUDP, "10.1.1.2:5353"),
	}
	e.CheckFilterShardsPassUnrelated(t, nat44.Name, nat44.DefaultConfig().ACLShards, unrelated, "192.168.16.1:22",
		func() { e.agent.proc.UpdateService(k8sService("empty", "10.96.0.22")) }, // no endpoints
		tracetest.FlowOf(localPod, protoTCP, "10.96.0.22:80"))
}

// TestTraceVPPRestartReappliesEverything: VPP restarts under a running
// agent; the node's interfaces come back (re-created by the test on a real
// VPP, as a CNI would), the agent notices, re-applies everything, and
// every client reaches the services again.
func TestTraceVPPRestartReappliesEverything(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{k8sService("np", "10.96.0.13", nodePortType(30080))},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("np", local("10.1.1.2"), remote("10.1.2.2"))},
	})
	all := []string{"10.1.1.2:8080", "10.1.2.2:8080"}
	check := func() {
		for _, cl := range allClients {
			e.Check(cl, protoTCP, "10.96.0.13:80", reaches(false, all...))
			e.Check(cl, protoTCP, "192.168.16.1:30080", reaches(true, all...))
		}
	}
	check()
	resyncs := e.agent.Rec.Stats().Resyncs
	dataplane.Restart(t, e.Node)
	e.agent.WaitReapplied(t, resyncs, 30*time.Second)
	check()
}

// TestTraceServiceCIDR: with the service CIDR configured (kube-proxy's
// --service-cluster-ip-range), traffic to an address of it that no service
// holds is dropped for every client, as kube-proxy rejects it; the services
// and other traffic are untouched. Without it, only the live ClusterIPs'
// other ports are dropped (TestTraceClusterIPWithSeveralBackends).
func TestTraceServiceCIDR(t *testing.T) {
	cfg := testConfig()
	cfg.ServiceCIDRs = []netip.Prefix{netip.MustParsePrefix("10.96.0.0/12")}
	e := newEnvWith(t, cfg, cluster{
		services: []*corev1.Service{k8sService("web", "10.96.0.10")},
		slices:   []*discoveryv1.EndpointSlice{k8sSlice("web", local("10.1.1.2"), remote("10.1.2.2"))},
	})
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			e.Check(cl, protoTCP, "10.96.0.99:80", dropped)
			e.Check(cl, protoUDP, "10.111.1.1:53", dropped)
			e.Check(cl, protoTCP, "10.96.0.10:443", dropped)
			e.Check(cl, protoTCP, "10.96.0.10:80", reaches(false, "10.1.1.2:8080", "10.1.2.2:8080"))
			e.CheckPasses(cl, protoTCP, "10.112.0.1:80") // just outside the range
		})
	}
}

// TestTraceSCTPPortsAreDropped: NAT44-ED cannot translate SCTP (an unknown
// protocol to it: a port mapping never matches, as a real VPP 25.10 shows),
// so an SCTP service port is not rendered and its frontends drop SCTP: the
// ClusterIP by its drop route, external and LoadBalancer IPs by a filter
// rule. The service's TCP port works as usual.
func TestTraceSCTPPortsAreDropped(t *testing.T) {
	e := newEnv(t, cluster{
		services: []*corev1.Service{
			k8sService("mixed", "10.96.0.40", loadBalancer(30040, "198.51.100.40"), tracetest.SCTPPort(9000)),
			k8sService("sctp-only", "10.96.0.41", externalIPs("203.0.113.41"), func(s *corev1.Service) {
				s.Spec.Ports = nil
				tracetest.SCTPPort(9000)(s)
			}),
		},
		slices: []*discoveryv1.EndpointSlice{k8sSlice("mixed", remote("10.1.2.2")), k8sSlice("sctp-only", remote("10.1.2.3"))},
	})
	for _, cl := range allClients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			for _, dst := range []string{"10.96.0.40:9000", "198.51.100.40:9000", "10.96.0.41:9000", "203.0.113.41:9000"} {
				e.Check(cl, tracetest.SCTP, dst, dropped)
			}
			e.Check(cl, protoTCP, "10.96.0.40:80", reaches(false, "10.1.2.2:8080"))
		})
	}
}
