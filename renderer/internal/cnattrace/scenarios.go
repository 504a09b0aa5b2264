package cnattrace

// The scenarios, named as the faces' tests without "TestTrace" (see
// renderer/ipv6/harness_test.go for the address plan they are written in).
// They assert behaviour (who reaches which endpoint, with or without
// source NAT, what is dropped), not item layout, which renderer/ipv6's
// translate_test.go covers.

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/renderer/cnat"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
)

// The endpoints' "http" port 8080 of the plan's pods (map with Face.A).
const (
	pod2    = "[fd00:1:1::2]:8080"
	pod3    = "[fd00:1:1::3]:8080"
	remote2 = "[fd00:1:2::2]:8080"
	remote3 = "[fd00:1:2::3]:8080"
	remote4 = "[fd00:1:2::4]:8080"
)

const (
	protoTCP = tracetest.TCP
	protoUDP = tracetest.UDP
)

// Short names for the shared builders and expectations.
var (
	k8sService       = tracetest.Service
	nodePortType     = tracetest.NodePort
	loadBalancer     = tracetest.LoadBalancer
	externalIPs      = tracetest.ExternalIPs
	etpLocal         = tracetest.ETPLocal
	itpLocal         = tracetest.ITPLocal
	clientIPAffinity = tracetest.ClientIPAffinity
	local            = tracetest.Local
	remote           = tracetest.Remote
	terminating      = tracetest.Terminating
	reaches          = tracetest.Reaches
	dropped          = tracetest.Dropped
)

func ClusterIP(t *testing.T, f *Face) {
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{k8sService("web", f.A("fd00:96::10"))},
		Slices:   []*discoveryv1.EndpointSlice{f.Slice("web", local(f.A("fd00:1:1::2")), remote(f.A("fd00:1:2::2")), remote(f.A("fd00:1:2::3")))},
	})
	e.forEachClient(t, func(cl tracetest.Client) {
		// The local endpoint is source-NATed (hairpin SNAT, per path), the
		// remote ones see the client.
		e.Check(cl, protoTCP, f.A("[fd00:96::10]:80"), reaches(f.A(pod2), f.A(remote2), f.A(remote3)).SNATTo(f.A(pod2)))
	})
	t.Run("other ports of the ClusterIP are dropped by the exclusive VIP", func(t *testing.T) {
		e.T = t
		e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::10]:443"), tracetest.DroppedBecause("exclusive VIP "+f.A("fd00:96::10")+", no translation for port 443/TCP"))
	})
	t.Run("unrelated traffic passes untranslated", func(t *testing.T) {
		e.T = t
		tr := e.Trace(f.LocalPod, protoTCP, f.A("[fd00:1:2::7]:22"))
		if tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != f.A("[fd00:1:2::7]:22") || tr.SNAT || !tr.ReplyOK {
			t.Fatalf("pod to remote pod: %s to %s snat=%t replyOK=%t\n%s", tr.Verdict, tr.Out.Dst, tr.SNAT, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
		}
	})
}

func Hairpin(t *testing.T, f *Face) {
	c := Cluster{
		Services: []*corev1.Service{k8sService("self", f.A("fd00:96::11")), k8sService("pair", f.A("fd00:96::12"))},
		Slices: []*discoveryv1.EndpointSlice{
			f.Slice("self", local(f.A("fd00:1:1::2"))),
			f.Slice("pair", local(f.A("fd00:1:1::2")), local(f.A("fd00:1:1::3"))),
		},
	}
	t.Run("hairpinSNAT: the pod reaching itself gets a reply from the ClusterIP", func(t *testing.T) {
		e := f.NewEnv(t, c)
		e.Check(f.PodClient(2), protoTCP, f.A("[fd00:96::11]:80"), reaches(f.A(pod2)).SNATAll())
		for range 20 {
			e.Check(f.PodClient(2), protoTCP, f.A("[fd00:96::12]:80"), reaches(f.A(pod2), f.A(pod3)).SNATAll())
		}
	})
	t.Run("without hairpinSNAT the pod receives its own address as source", func(t *testing.T) {
		cfg := f.config()
		cfg.HairpinSNAT = cnat.HairpinSNATOff
		e := f.NewEnvWith(t, cfg, c)
		tr := e.Check(f.PodClient(2), protoTCP, f.A("[fd00:96::11]:80"), reaches(f.A(pod2)))
		// Its stack answers itself, bypassing VPP: the connection to the
		// ClusterIP never completes (docs/renderer-ipv6.md, "Hairpin").
		if tr.Out.Src.Addr() != tr.Out.Dst.Addr() {
			t.Fatalf("expected a packet from the pod to itself, got %s → %s", tr.Out.Src, tr.Out.Dst)
		}
	})
}

// hairpinSNAT "hairpin-only": cnat-input-ip<N> and cnat-output-ip<N> on the
// pods' taps and host0 with cnat's K8S policy source-NAT exactly the flows of
// a pod that lands on itself (dataplane case cnat/k8s-policy-hairpin); every
// other client keeps its address, through the ClusterIP and the external
// frontends alike.
func HairpinOnly(t *testing.T, f *Face) {
	cfg := f.config()
	cfg.HairpinSNAT = cnat.HairpinSNATOnly
	e := f.NewEnvWith(t, cfg, Cluster{
		Services: []*corev1.Service{
			k8sService("self", f.A("fd00:96::11")),
			k8sService("pair", f.A("fd00:96::12"), loadBalancer(30084, f.A("2001:db8:1b::12"))),
			k8sService("local-lb", f.A("fd00:96::13"), loadBalancer(30085, f.A("2001:db8:1b::13")), etpLocal),
		},
		Slices: []*discoveryv1.EndpointSlice{
			f.Slice("self", local(f.A("fd00:1:1::2"))),
			f.Slice("pair", local(f.A("fd00:1:1::2")), local(f.A("fd00:1:1::3")), remote(f.A("fd00:1:2::2"))),
			f.Slice("local-lb", local(f.A("fd00:1:1::2"))),
		},
	})
	t.Run("the pod reaching itself is source-NATed, its flows to others are not", func(t *testing.T) {
		e.T = t
		e.Check(f.PodClient(2), protoTCP, f.A("[fd00:96::11]:80"), reaches(f.A(pod2)).SNATAll())
		// Under externalTrafficPolicy Local too, where no path has a source.
		e.Check(f.PodClient(2), protoTCP, f.A("[2001:db8:1b::13]:80"), reaches(f.A(pod2)).SNATAll())
		e.Check(f.PodClient(3), protoTCP, f.A("[2001:db8:1b::13]:80"), reaches(f.A(pod2)))
		for range 20 {
			e.Check(f.PodClient(2), protoTCP, f.A("[fd00:96::12]:80"), reaches(f.A(pod2), f.A(pod3), f.A(remote2)).SNATTo(f.A(pod2)))
		}
	})
	e.forEachClient(t, func(cl tracetest.Client) {
		e.Check(cl, protoTCP, f.A("[fd00:96::12]:80"), reaches(f.A(pod2), f.A(pod3), f.A(remote2)))
	})
	t.Run("external frontends: remote endpoints still source-NATed for the uplink's clients only", func(t *testing.T) {
		e.T = t
		e.Check(f.External, protoTCP, f.A("[2001:db8:1b::12]:80"), reaches(f.A(pod2), f.A(pod3), f.A(remote2)).SNATTo(f.A(remote2)))
		e.Check(f.RemotePod, protoTCP, f.A("[fd00:16::1]:30084"), reaches(f.A(pod2), f.A(pod3), f.A(remote2)).SNATTo(f.A(remote2)))
		// cnat-input ignores path sources: the pod's own node turns the
		// remote endpoint's reply back, as it routes the pod's address.
		e.Check(f.LocalPod, protoTCP, f.A("[2001:db8:1b::12]:80"), reaches(f.A(pod2), f.A(pod3), f.A(remote2)))
		e.Check(f.TheNode, protoTCP, f.A("[fd00:16::1]:30084"), reaches(f.A(pod2), f.A(pod3), f.A(remote2)))
	})
}

// The price of "hairpin-only": cnat-input rewrites before the input ACL, so
// loadBalancerSourceRanges no longer stop this node's pods and host, which
// reach the LoadBalancer IP from outside the ranges; the uplink's clients
// are still filtered.
func HairpinOnlySourceRangesSkipInternalClients(t *testing.T, f *Face) {
	c := Cluster{
		Services: []*corev1.Service{k8sService("lb", f.A("fd00:96::23"), loadBalancer(30088, f.A("2001:db8:1b::23")), func(s *corev1.Service) {
			s.Spec.LoadBalancerSourceRanges = []string{f.A("2001:db8:c:1::/64")}
		})},
		Slices: []*discoveryv1.EndpointSlice{f.Slice("lb", remote(f.A("fd00:1:2::2")))},
	}
	t.Run("default: the pod outside the ranges is dropped", func(t *testing.T) {
		e := f.NewEnv(t, c)
		e.Check(f.LocalPod, protoTCP, f.A("[2001:db8:1b::23]:80"), dropped)
	})
	t.Run("hairpin-only: the pod passes, the outsider does not", func(t *testing.T) {
		cfg := f.config()
		cfg.HairpinSNAT = cnat.HairpinSNATOnly
		e := f.NewEnvWith(t, cfg, c)
		e.Check(f.LocalPod, protoTCP, f.A("[2001:db8:1b::23]:80"), reaches(f.A(remote2)))
		e.Check(f.TheNode, protoTCP, f.A("[2001:db8:1b::23]:80"), reaches(f.A(remote2)))
		e.Check(f.Outsider, protoTCP, f.A("[2001:db8:1b::23]:80"), dropped)
		e.Check(f.External, protoTCP, f.A("[2001:db8:1b::23]:80"), reaches(f.A(remote2)).SNATAll())
	})
}

func NodePortOnThisNodesIP(t *testing.T, f *Face) {
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{k8sService("np", f.A("fd00:96::13"), nodePortType(30080))},
		Slices:   []*discoveryv1.EndpointSlice{f.Slice("np", local(f.A("fd00:1:1::2")), remote(f.A("fd00:1:2::2")))},
	})
	e.forEachClient(t, func(cl tracetest.Client) {
		e.Check(cl, protoTCP, f.A("[fd00:16::1]:30080"), reaches(f.A(pod2), f.A(remote2)).SNATAll())
		// Another node's IP is not intercepted: that node answers it.
		e.CheckPasses(cl, protoTCP, f.A("[fd00:16::2]:30080"))
		e.Check(cl, protoTCP, f.A("[fd00:96::13]:80"), reaches(f.A(pod2), f.A(remote2)).SNATTo(f.A(pod2)))
	})
	t.Run("the node IP is a real IP: other ports still reach the node", func(t *testing.T) {
		e.T = t
		e.CheckLocal(f.External, protoTCP, f.A("[fd00:16::1]:22"))
	})
}

func ExternalIPs(t *testing.T, f *Face) {
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{k8sService("ext", f.A("fd00:96::14"), externalIPs(f.A("2001:db8:e::10"), f.A("2001:db8:e::11")))},
		Slices:   []*discoveryv1.EndpointSlice{f.Slice("ext", remote(f.A("fd00:1:2::2")), remote(f.A("fd00:1:2::3")))},
	})
	e.forEachClient(t, func(cl tracetest.Client) {
		e.Check(cl, protoTCP, f.A("[2001:db8:e::10]:80"), reaches(f.A(remote2), f.A(remote3)).SNATAll())
		e.Check(cl, protoTCP, f.A("[2001:db8:e::11]:80"), reaches(f.A(remote2), f.A(remote3)).SNATAll())
		e.Check(cl, protoTCP, f.A("[2001:db8:e::10]:81"), dropped)
	})
}

func LoadBalancerIngress(t *testing.T, f *Face) {
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{k8sService("lb", f.A("fd00:96::15"), loadBalancer(30081, f.A("2001:db8:1b::10")))},
		Slices:   []*discoveryv1.EndpointSlice{f.Slice("lb", local(f.A("fd00:1:1::2")), remote(f.A("fd00:1:2::2")))},
	})
	e.forEachClient(t, func(cl tracetest.Client) {
		e.Check(cl, protoTCP, f.A("[2001:db8:1b::10]:80"), reaches(f.A(pod2), f.A(remote2)).SNATAll())
		e.Check(cl, protoTCP, f.A("[fd00:16::1]:30081"), reaches(f.A(pod2), f.A(remote2)).SNATAll())
	})
}

func ExternalTrafficPolicyLocal(t *testing.T, f *Face) {
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{
			k8sService("with-local", f.A("fd00:96::16"), loadBalancer(30082, f.A("2001:db8:1b::16")), etpLocal),
			k8sService("no-local", f.A("fd00:96::17"), loadBalancer(30083, f.A("2001:db8:1b::17")), externalIPs(f.A("2001:db8:e::17")), etpLocal),
		},
		Slices: []*discoveryv1.EndpointSlice{
			f.Slice("with-local", local(f.A("fd00:1:1::2")), local(f.A("fd00:1:1::3")), remote(f.A("fd00:1:2::2"))),
			f.Slice("no-local", remote(f.A("fd00:1:2::2")), remote(f.A("fd00:1:2::3"))),
		},
	})
	t.Run("with local endpoints: only those, client address kept", func(t *testing.T) {
		e.forEachClient(t, func(cl tracetest.Client) {
			e.Check(cl, protoTCP, f.A("[2001:db8:1b::16]:80"), reaches(f.A(pod2), f.A(pod3)))
			e.Check(cl, protoTCP, f.A("[fd00:16::1]:30082"), reaches(f.A(pod2), f.A(pod3)))
			e.CheckPasses(cl, protoTCP, f.A("[fd00:16::2]:30082"))
		})
		// The ClusterIP keeps every endpoint (internalTrafficPolicy Cluster).
		e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::16]:80"), reaches(f.A(pod2), f.A(pod3), f.A(remote2)).SNATTo(f.A(pod2), f.A(pod3)))
	})
	t.Run("without local endpoints: this node's pods and the node reach every endpoint, other clients are dropped", func(t *testing.T) {
		// kube-proxy sends the node's own clients of an f.External frontend
		// to every endpoint of the cluster and drops the others.
		for _, cl := range []tracetest.Client{f.LocalPod, f.TheNode} {
			for _, fe := range []string{f.A("[2001:db8:1b::17]:80"), f.A("[2001:db8:e::17]:80"), f.A("[fd00:16::1]:30083")} {
				e.Check(cl, protoTCP, fe, reaches(f.A(remote2), f.A(remote3)))
			}
		}
		for _, cl := range []tracetest.Client{f.RemotePod, f.External} {
			for _, fe := range []string{f.A("[2001:db8:1b::17]:80"), f.A("[2001:db8:e::17]:80"), f.A("[fd00:16::1]:30083")} {
				e.Check(cl, protoTCP, fe, dropped)
			}
		}
		e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::17]:80"), reaches(f.A(remote2), f.A(remote3)))
	})
}

// ExternalTrafficPolicyLocalWithoutOwnClients: a node whose
// configuration names neither its pods nor its kernel's sources cannot tell
// them from the uplink's clients, so an externalTrafficPolicy: Local
// service without a local endpoint drops them all (docs/renderer-ipv6.md).
func ExternalTrafficPolicyLocalWithoutOwnClients(t *testing.T, f *Face) {
	cfg := f.config()
	cfg.NodeSources, cfg.LocalClients = nil, nil
	e := f.NewEnvWith(t, cfg, Cluster{
		Services: []*corev1.Service{k8sService("no-local", f.A("fd00:96::17"), loadBalancer(30083, f.A("2001:db8:1b::17")), etpLocal)},
		Slices:   []*discoveryv1.EndpointSlice{f.Slice("no-local", remote(f.A("fd00:1:2::2")), remote(f.A("fd00:1:2::3")))},
	})
	e.forEachClient(t, func(cl tracetest.Client) {
		e.Check(cl, protoTCP, f.A("[2001:db8:1b::17]:80"), dropped)
		e.Check(cl, protoTCP, f.A("[fd00:16::1]:30083"), dropped)
	})
	e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::17]:80"), reaches(f.A(remote2), f.A(remote3)))
}

func InternalTrafficPolicyLocal(t *testing.T, f *Face) {
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{
			k8sService("itp", f.A("fd00:96::18"), itpLocal),
			k8sService("itp-none", f.A("fd00:96::19"), itpLocal),
		},
		Slices: []*discoveryv1.EndpointSlice{
			f.Slice("itp", local(f.A("fd00:1:1::2")), remote(f.A("fd00:1:2::2"))),
			f.Slice("itp-none", remote(f.A("fd00:1:2::2"))),
		},
	})
	e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::18]:80"), reaches(f.A(pod2)).SNATAll())
	e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::19]:80"), dropped)
	e.Check(f.TheNode, protoTCP, f.A("[fd00:96::19]:80"), dropped)
}

func TerminatingFallback(t *testing.T, f *Face) {
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{
			k8sService("term", f.A("fd00:96::20"), nodePortType(30084), etpLocal),
			k8sService("mixed", f.A("fd00:96::21")),
		},
		Slices: []*discoveryv1.EndpointSlice{
			f.Slice("term", terminating(local(f.A("fd00:1:1::2"))), terminating(remote(f.A("fd00:1:2::2")))),
			f.Slice("mixed", terminating(local(f.A("fd00:1:1::2"))), remote(f.A("fd00:1:2::2")), remote(f.A("fd00:1:2::3"))),
		},
	})
	e.forEachClient(t, func(cl tracetest.Client) {
		// Nothing ready: the terminating endpoints still serve, per policy.
		e.Check(cl, protoTCP, f.A("[fd00:96::20]:80"), reaches(f.A(pod2), f.A(remote2)).SNATTo(f.A(pod2)))
		e.Check(cl, protoTCP, f.A("[fd00:16::1]:30084"), reaches(f.A(pod2)))
		// Something ready: terminating endpoints get no new flows.
		e.Check(cl, protoTCP, f.A("[fd00:96::21]:80"), reaches(f.A(remote2), f.A(remote3)))
	})
	t.Run("policy Local falls back to the local terminating endpoint while a remote one is ready", func(t *testing.T) {
		// kube-proxy (CategorizeEndpoints) serves a Local frontend from the
		// local serving-terminating endpoints when no local endpoint is
		// ready, even if remote ones are, while the ClusterIP (policy
		// Cluster) uses only the ready remote endpoint.
		e := f.NewEnv(t, Cluster{
			Services: []*corev1.Service{k8sService("drain", f.A("fd00:96::29"), nodePortType(30093), etpLocal)},
			Slices:   []*discoveryv1.EndpointSlice{f.Slice("drain", terminating(local(f.A("fd00:1:1::2"))), remote(f.A("fd00:1:2::2")))},
		})
		e.forEachClient(t, func(cl tracetest.Client) {
			e.Check(cl, protoTCP, f.A("[fd00:16::1]:30093"), reaches(f.A(pod2)))
			e.CheckPasses(cl, protoTCP, f.A("[fd00:16::2]:30093"))
			e.Check(cl, protoTCP, f.A("[fd00:96::29]:80"), reaches(f.A(remote2)))
		})
	})
}

func NoEndpointsDrops(t *testing.T, f *Face) {
	mixed := k8sService("mixed", f.A("fd00:96::21"), nodePortType(30085), func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090, NodePort: 30086})
	})
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{
			k8sService("empty", f.A("fd00:96::22"), nodePortType(30087), externalIPs(f.A("2001:db8:e::22"))),
			mixed,
		},
		Slices: []*discoveryv1.EndpointSlice{f.Slice("mixed", remote(f.A("fd00:1:2::2")))},
	})
	e.forEachClient(t, func(cl tracetest.Client) {
		e.Check(cl, protoTCP, f.A("[fd00:96::22]:80"), dropped)
		e.Check(cl, protoTCP, f.A("[2001:db8:e::22]:80"), dropped)
		e.Check(cl, protoTCP, f.A("[fd00:16::1]:30087"), dropped)
		e.CheckPasses(cl, protoTCP, f.A("[fd00:16::2]:30087"))
	})
	t.Run("a port without endpoints next to a served one", func(t *testing.T) {
		e.T = t
		e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::21]:80"), reaches(f.A(remote2)))
		// The ClusterIP stays an exclusive cnat VIP, which drops the port
		// without translation; the node IP is real, so the ACL drops.
		if tr := e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::21]:9090"), dropped); !strings.Contains(tr.Reason, "cnat") {
			t.Fatalf("ClusterIP:9090 dropped by %q, want cnat's exclusive VIP\n%s", tr.Reason, strings.Join(tr.Steps, "\n"))
		}
		if tr := e.Check(f.External, protoTCP, f.A("[fd00:16::1]:30086"), dropped); !strings.Contains(tr.Reason, "acl") {
			t.Fatalf("node port 30086 dropped by %q, want the service ACL", tr.Reason)
		}
	})
}

func LoadBalancerSourceRanges(t *testing.T, f *Face) {
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{k8sService("lb", f.A("fd00:96::23"), loadBalancer(30088, f.A("2001:db8:1b::23")), func(s *corev1.Service) {
			s.Spec.LoadBalancerSourceRanges = []string{f.A("2001:db8:c:1::/64"), f.A("100.64.1.0/24")}
		})},
		Slices: []*discoveryv1.EndpointSlice{f.Slice("lb", remote(f.A("fd00:1:2::2")))},
	})
	e.Check(f.External, protoTCP, f.A("[2001:db8:1b::23]:80"), reaches(f.A(remote2)).SNATAll())
	e.Check(f.Outsider, protoTCP, f.A("[2001:db8:1b::23]:80"), dropped)
	// As in kube-proxy, the ranges restrict the LoadBalancer IP only.
	e.Check(f.Outsider, protoTCP, f.A("[fd00:16::1]:30088"), reaches(f.A(remote2)).SNATAll())
	e.Check(f.Outsider, protoTCP, f.A("[fd00:96::23]:80"), reaches(f.A(remote2)))
}

// LoadBalancerSourceRangesHoldingTheNode: a range that holds the
// node's address of the family lets the node send as the LoadBalancer IP (kube-proxy's
// rule for VIP-style load balancers); a range that does not, drops it.
func LoadBalancerSourceRangesHoldingTheNode(t *testing.T, f *Face) {
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{
			k8sService("node-ranged", f.A("fd00:96::25"), loadBalancer(30089, f.A("2001:db8:1b::25")), func(s *corev1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{f.A("fd00:16::/64")}
			}),
			k8sService("other-ranged", f.A("fd00:96::26"), loadBalancer(30090, f.A("2001:db8:1b::26")), func(s *corev1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{f.A("2001:db8:c:1::/64")}
			}),
		},
		Slices: []*discoveryv1.EndpointSlice{f.Slice("node-ranged", remote(f.A("fd00:1:2::2"))), f.Slice("other-ranged", remote(f.A("fd00:1:2::3")))},
	})
	asVIP := func(ip string) tracetest.Client {
		return tracetest.Client{Name: "node as " + ip, Ingress: "host0", Addr: netip.MustParseAddr(ip)}
	}
	if tr := e.Trace(asVIP(f.A("2001:db8:1b::25")), protoTCP, f.A("[2001:db8:1b::25]:80")); tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != f.A(remote2) {
		t.Errorf("the node as its LoadBalancer IP, range holding the node: %s to %s (%s)\n%s", tr.Verdict, tr.Out.Dst, tr.Reason, strings.Join(tr.Steps, "\n"))
	}
	e.Check(asVIP(f.A("2001:db8:1b::26")), protoTCP, f.A("[2001:db8:1b::26]:80"), dropped)
	// The node's kernel sends from its host-link address (nodeSources):
	// the node's own traffic, admitted where a range holds the node.
	if tr := e.Trace(f.TheNode, protoTCP, f.A("[2001:db8:1b::25]:80")); tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != f.A(remote2) || !tr.ReplyOK {
		t.Errorf("the node from its host link, range holding the node: %s to %s (%s) replyOK=%t\n%s", tr.Verdict, tr.Out.Dst, tr.Reason, tr.ReplyOK, strings.Join(tr.Steps, "\n"))
	}
	e.Check(f.TheNode, protoTCP, f.A("[2001:db8:1b::26]:80"), dropped)
	e.Check(f.External, protoTCP, f.A("[2001:db8:1b::26]:80"), reaches(f.A(remote3)).SNATAll())
}

func SessionAffinity(t *testing.T, f *Face) {
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{k8sService("sticky", f.A("fd00:96::24"), clientIPAffinity)},
		Slices:   []*discoveryv1.EndpointSlice{f.Slice("sticky", remote(f.A("fd00:1:2::2")), remote(f.A("fd00:1:2::3")), remote(f.A("fd00:1:2::4")))},
	})
	first := e.Check(f.External, protoTCP, f.A("[fd00:96::24]:80"), reaches(f.A(remote2), f.A(remote3), f.A(remote4)))
	for range 20 { // new source ports, same client: same endpoint
		if tr := e.Check(f.External, protoTCP, f.A("[fd00:96::24]:80"), reaches(f.A(remote2), f.A(remote3), f.A(remote4))); tr.Out.Dst != first.Out.Dst {
			t.Fatalf("client moved from %s to %s", first.Out.Dst, tr.Out.Dst)
		}
	}
	seen := map[netip.AddrPort]bool{}
	for i := range 32 {
		cl := tracetest.Client{Name: "client", Ingress: "uplink0", Addr: netip.MustParseAddr(f.A(fmt.Sprintf("2001:db8:c:1::%d", 100+i)))}
		seen[e.Check(cl, protoTCP, f.A("[fd00:96::24]:80"), reaches(f.A(remote2), f.A(remote3), f.A(remote4))).Out.Dst] = true
	}
	if len(seen) < 2 {
		t.Fatalf("32 clients all pinned to %v", seen)
	}
}

func MultiPortNamedTargetPorts(t *testing.T, f *Face) {
	svc := k8sService("multi", f.A("fd00:96::25"), func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{
			{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromString("web")},
			{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090, TargetPort: intstr.FromString("metrics")},
		}
	})
	slice := f.Slice("multi", remote(f.A("fd00:1:2::2")))
	slice.Ports = []discoveryv1.EndpointPort{
		{Name: tracetest.Ptr("http"), Protocol: tracetest.Ptr(corev1.ProtocolTCP), Port: tracetest.Ptr(int32(8080))},
		{Name: tracetest.Ptr("metrics"), Protocol: tracetest.Ptr(corev1.ProtocolTCP), Port: tracetest.Ptr(int32(9100))},
	}
	e := f.NewEnv(t, Cluster{Services: []*corev1.Service{svc}, Slices: []*discoveryv1.EndpointSlice{slice}})
	e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::25]:80"), reaches(f.A(remote2)))
	e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::25]:9090"), reaches(f.A("[fd00:1:2::2]:9100")))
}

func UDP(t *testing.T, f *Face) {
	svc := k8sService("dns", f.A("fd00:96::53"), func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53}}
	})
	slice := f.Slice("dns", remote(f.A("fd00:1:2::2")), remote(f.A("fd00:1:2::3")))
	slice.Ports = []discoveryv1.EndpointPort{{Name: tracetest.Ptr("dns"), Protocol: tracetest.Ptr(corev1.ProtocolUDP), Port: tracetest.Ptr(int32(5353))}}
	e := f.NewEnv(t, Cluster{Services: []*corev1.Service{svc}, Slices: []*discoveryv1.EndpointSlice{slice}})
	e.forEachClient(t, func(cl tracetest.Client) {
		e.Check(cl, protoUDP, f.A("[fd00:96::53]:53"), reaches(f.A("[fd00:1:2::2]:5353"), f.A("[fd00:1:2::3]:5353")))
		e.Check(cl, protoTCP, f.A("[fd00:96::53]:53"), dropped)
	})
}

// EndpointChangeUpdatesInPlace checks that a new or removed
// backend is an in-place update of the translation (cnat keeps its ID) and
// of the service's flow keeper, that new flows only use the new set, and
// that flows already open to a backend that stays keep going.
func EndpointChangeUpdatesInPlace(t *testing.T, f *Face) {
	svc := k8sService("scale", f.A("fd00:96::26"))
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{svc},
		Slices:   []*discoveryv1.EndpointSlice{f.Slice("scale", remote(f.A("fd00:1:2::2")), remote(f.A("fd00:1:2::3")))},
	})
	open := e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::26]:80"), reaches(f.A(remote2), f.A(remote3)))
	data := func() fakevpp.Trace {
		return e.Node.Trace(fakevpp.Packet{Ingress: f.LocalPod.Ingress, Protocol: protoTCP, Src: open.In.Src, Dst: open.In.Dst, TCPFlags: 0x10})
	}
	e.Node.ResetCalls()
	e.Agent.UpdateEndpointSlice(f.Slice("scale", remote(f.A("fd00:1:2::2")), remote(f.A("fd00:1:2::3")), remote(f.A("fd00:1:2::4"))))
	if calls := e.Node.Calls(); calls["cnat_translation_update"] != 2 || calls["cnat_translation_del"] != 0 || tracetest.Writes(e.Node) != 2 {
		t.Fatalf("adding an endpoint sent %v, want two cnat_translation_updates (the translation and the flow keeper)", calls)
	}
	if tr := data(); tr.Verdict != fakevpp.Forward || tr.Out.Dst != open.Out.Dst {
		t.Fatalf("open flow after the update: %s to %s (%s), want it kept to %s\n%s", tr.Verdict, tr.Out.Dst, tr.Reason, open.Out.Dst, strings.Join(tr.Steps, "\n"))
	}
	e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::26]:80"), reaches(f.A(remote2), f.A(remote3), f.A(remote4)))

	// Remove the open flow's endpoint: new flows never reach it. What the
	// stale session does now is not asserted: its backend's host entry is
	// gone, and on VPP its route index may name a re-used load-balance
	// object by then (seen forwarding again).
	rest := []discoveryv1.Endpoint{remote(f.A("fd00:1:2::4"))}
	for _, a := range []string{f.A("fd00:1:2::2"), f.A("fd00:1:2::3")} {
		if netip.AddrPortFrom(netip.MustParseAddr(a), 8080) != open.Out.Dst {
			rest = append(rest, remote(a))
		}
	}
	e.Agent.UpdateEndpointSlice(f.Slice("scale", rest...))
	for range 20 {
		if tr := e.Trace(f.LocalPod, protoTCP, f.A("[fd00:96::26]:80")); tr.Out.Dst == open.Out.Dst {
			t.Fatalf("a new flow reached the removed endpoint %s", open.Out.Dst)
		}
	}
}

func DeleteLeavesNoTrace(t *testing.T, f *Face) {
	f.requireFake(t)
	web := k8sService("web", f.A("fd00:96::10"), loadBalancer(30090, f.A("2001:db8:1b::10")), externalIPs(f.A("2001:db8:e::10")),
		func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{f.A("2001:db8:c:1::/64")} })
	empty := k8sService("empty", f.A("fd00:96::22"))
	v := f.NewNode(t)
	ag := f.StartAgent(t, v, f.config())
	Cluster{}.resync(ag)
	before := v.Dump()

	ag.UpdateService(web)
	ag.UpdateService(empty)
	ag.UpdateEndpointSlice(f.Slice("web", local(f.A("fd00:1:1::2")), remote(f.A("fd00:1:2::2"))))
	e := &Env{Env: tracetest.NewEnv(t, v, f.NodeIP, 50000), Agent: ag, f: f}
	e.Check(f.External, protoTCP, f.A("[2001:db8:1b::10]:80"), reaches(f.A(pod2), f.A(remote2)).SNATAll())
	e.Check(f.LocalPod, protoTCP, f.A("[fd00:96::22]:80"), dropped)
	if v.Dump() == before {
		t.Fatal("services changed nothing in VPP")
	}

	ag.DeleteService("default", "web")
	ag.DeleteService("default", "empty")
	// The flow's session, and the FIB entries (cnat clients) it holds, stay
	// until the session expires, as in VPP; the configuration must be gone.
	if after := dumpWithout(v.Dump(), "cnat clients", "cnat sessions"); after != before {
		t.Fatalf("VPP configuration after deleting every service differs from before adding them\n--- before\n%s--- after\n%s", before, after)
	}
}

// dumpWithout returns a fake VPP dump without the named sections.
func dumpWithout(dump string, sections ...string) string {
	var b strings.Builder
	skip := false
	for _, line := range strings.SplitAfter(dump, "\n") {
		if line != "" && !strings.HasPrefix(line, " ") {
			skip = slices.Contains(sections, strings.TrimSuffix(strings.TrimSpace(line), ":"))
		}
		if !skip {
			b.WriteString(line)
		}
	}
	return b.String()
}

func AgentRestartChangesNothing(t *testing.T, f *Face) {
	c := Cluster{
		Services: []*corev1.Service{
			k8sService("web", f.A("fd00:96::10"), loadBalancer(30091, f.A("2001:db8:1b::10")), clientIPAffinity, func(s *corev1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{f.A("2001:db8:c:1::/64")}
			}),
			k8sService("one", f.A("fd00:96::11"), nodePortType(30092), etpLocal),
			k8sService("empty", f.A("fd00:96::22")),
		},
		Slices: []*discoveryv1.EndpointSlice{
			f.Slice("web", local(f.A("fd00:1:1::2")), remote(f.A("fd00:1:2::2")), remote(f.A("fd00:1:2::3"))),
			f.Slice("one", local(f.A("fd00:1:1::3"))),
		},
	}
	e := f.NewEnv(t, c)
	tr := e.Check(f.External, protoTCP, f.A("[2001:db8:1b::10]:80"), reaches(f.A(pod2), f.A(remote2), f.A(remote3)).SNATAll())
	before := e.Node.Dump()

	// The agent restarts; VPP keeps running.
	e.Agent.Stop()
	e.Node.ResetCalls()
	ag := f.StartAgent(t, e.Node, f.config())
	c.resync(ag)
	time.Sleep(100 * time.Millisecond) // let the reconciler settle
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
	data := e.Node.Trace(fakevpp.Packet{Ingress: f.External.Ingress, Protocol: protoTCP, Src: tr.In.Src, Dst: tr.In.Dst, TCPFlags: 0x10})
	if data.Verdict != fakevpp.Forward || data.Out.Dst != tr.Out.Dst {
		t.Fatalf("open connection after restart: %s to %s, was %s", data.Verdict, data.Out.Dst, tr.Out.Dst)
	}
}

// FilterShardsPassUnrelatedTraffic: without filtered services no
// filter ACL is bound; with one, every shard is, the empty ones holding a
// placeholder; either way traffic that is no service's passes untouched,
// whatever its protocol (tracetest.Env.CheckFilterShardsPassUnrelated).
func FilterShardsPassUnrelatedTraffic(t *testing.T, f *Face) {
	e := f.NewEnv(t, Cluster{})
	unrelated := []tracetest.Flow{
		tracetest.FlowOf(f.External, protoTCP, f.A("[fd00:1:1::3]:8080")), tracetest.FlowOf(f.LocalPod, protoTCP, f.A("[fd00:1:2::7]:22")), tracetest.FlowOf(f.LocalPod, protoUDP, f.A("[fd00:1:2::7]:53")),
		tracetest.FlowOf(f.RemotePod, protoTCP, f.A("[fd00:1:1::2]:22")), tracetest.FlowOf(f.TheNode, protoUDP, f.A("[fd00:1:1::2]:5353")),
	}
	e.CheckFilterShardsPassUnrelated(t, f.Name, cnat.DefaultConfig().ACLShards, unrelated, f.A("[fd00:16::1]:22"),
		func() { e.Agent.UpdateService(k8sService("empty", f.A("fd00:96::22"))) }, // no endpoints
		tracetest.FlowOf(f.LocalPod, protoTCP, f.A("[fd00:96::22]:80")))
}

// VPPRestartReappliesEverything: VPP restarts under a running
// agent; once the node's interfaces are back, the agent re-applies the
// cnat translations and every client reaches the service again.
//
// On a real VPP 25.10 the agent re-applies a translation before the
// node's routes to its local pods are back, and cnat then keeps the
// drop it resolved for that pod after the /128 route appears
// (docs/renderer-ipv6.md, VPP restarts): known, not yet handled.
func VPPRestartReappliesEverything(t *testing.T, f *Face) {
	if dataplane.OnRealVPP() {
		t.Skip("VPP 25.10's cnat keeps a stale drop for local backends whose route comes back after the translation (docs/renderer-ipv6.md, VPP restarts)")
	}
	e := f.NewEnv(t, Cluster{
		Services: []*corev1.Service{k8sService("web", f.A("fd00:96::10"))},
		Slices:   []*discoveryv1.EndpointSlice{f.Slice("web", local(f.A("fd00:1:1::2")), remote(f.A("fd00:1:2::2")))},
	})
	check := func() {
		e.forEachClient(t, func(cl tracetest.Client) {
			e.Check(cl, protoTCP, f.A("[fd00:96::10]:80"), reaches(f.A(pod2), f.A(remote2)).SNATTo(f.A(pod2)))
		})
	}
	check()
	resyncs := e.Agent.Resyncs()
	dataplane.Restart(t, e.Node)
	e.Agent.WaitReapplied(t, resyncs, 30*time.Second)
	check()
}

// CNATTranslated tells whether a cnat node rewrote the packet: on fakevpp a
// cnat step with an arrow, on a real VPP a cnat node that created or found a
// session (the NAT44 renderer's cnat-input-ip4 runs on pod interfaces and
// passes what is no cnat address).
func CNATTranslated(steps []string) bool {
	for _, s := range steps {
		if strings.Contains(s, "cnat") && (strings.Contains(s, "→") || strings.Contains(s, "created session") || strings.Contains(s, "found session")) {
			return true
		}
	}
	return false
}

// ServiceCIDR: a service CIDR of the family drops what no cnat VIP holds
// (a live ClusterIP's other ports are dropped by its exclusive VIP anyway).
func ServiceCIDR(t *testing.T, f *Face) {
	cfg := f.config()
	cfg.ServiceCIDRs = []netip.Prefix{netip.MustParsePrefix(f.A("fd00:96::/108"))}
	e := f.NewEnvWith(t, cfg, Cluster{
		Services: []*corev1.Service{k8sService("web", f.A("fd00:96::10"))},
		Slices:   []*discoveryv1.EndpointSlice{f.Slice("web", remote(f.A("fd00:1:2::2")))},
	})
	e.forEachClient(t, func(cl tracetest.Client) {
		e.Check(cl, protoTCP, f.A("[fd00:96::99]:80"), dropped)
		e.Check(cl, protoTCP, f.A("[fd00:96::10]:443"), dropped)
		e.Check(cl, protoTCP, f.A("[fd00:96::10]:80"), reaches(f.A(remote2)).SNATTo())
	})
}

// OpenFlowAcrossEndpointChanges follows one established flow
// through a scale-up to three endpoints and a scale-down back to its own
// endpoint. A cnat session forwards through the load balance of its
// backend's host entry (cs_lbi), which every translation update releases
// and re-creates unless something else holds it: a host route to the pod
// (local endpoints here, as CNIs install them), another translation of the
// same backend (a NodePort service's second frontend), or the service's
// flow keeper (docs/renderer-ipv6.md, "Open flows across endpoint changes").
func OpenFlowAcrossEndpointChanges(t *testing.T, f *Face) {
	cases := []struct {
		name  string
		svc   *corev1.Service
		ep    func(string) discoveryv1.Endpoint
		addrs []string // the open flow's endpoint first
		snat  bool
	}{
		{"local endpoint with a host route, ClusterIP only", k8sService("a", f.A("fd00:96::31")), local,
			[]string{f.A("fd00:1:1::2"), f.A("fd00:1:1::3"), f.A("fd00:1:1::4")}, true},
		{"remote endpoint, NodePort: two translations track it", k8sService("c", f.A("fd00:96::33"), nodePortType(30133)), remote,
			[]string{f.A("fd00:1:2::2"), f.A("fd00:1:2::3"), f.A("fd00:1:2::4")}, false},
		{"remote endpoint, ClusterIP only: the flow keeper holds it", k8sService("b", f.A("fd00:96::32")), remote,
			[]string{f.A("fd00:1:2::2"), f.A("fd00:1:2::3"), f.A("fd00:1:2::4")}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := f.NewEnv(t, Cluster{Services: []*corev1.Service{c.svc}, Slices: []*discoveryv1.EndpointSlice{f.Slice(c.svc.Name, c.ep(c.addrs[0]))}})
			want := reaches(netip.AddrPortFrom(netip.MustParseAddr(c.addrs[0]), 8080).String())
			if c.snat {
				want = want.SNATAll()
			}
			open := e.Check(f.LocalPod, protoTCP, netip.AddrPortFrom(netip.MustParseAddr(c.svc.Spec.ClusterIP), 80).String(), want)
			data := func(when string) {
				t.Helper()
				tr := e.Node.Trace(fakevpp.Packet{Ingress: f.LocalPod.Ingress, Protocol: protoTCP, Src: open.In.Src, Dst: open.In.Dst, TCPFlags: 0x10})
				if tr.Verdict != fakevpp.Forward || tr.Out.Src != open.Out.Src || tr.Out.Dst != open.Out.Dst {
					t.Fatalf("open flow %s: %s to %s (%s), want it kept to %s\n%s", when, tr.Verdict, tr.Out.Dst, tr.Reason, open.Out.Dst, strings.Join(tr.Steps, "\n"))
				}
			}
			data("before any change")
			eps := []discoveryv1.Endpoint{c.ep(c.addrs[0])}
			for _, a := range c.addrs[1:] {
				eps = append(eps, c.ep(a))
				e.Agent.UpdateEndpointSlice(f.Slice(c.svc.Name, eps...))
				data(fmt.Sprintf("after the scale-up to %d endpoints", len(eps)))
			}
			e.Agent.UpdateEndpointSlice(f.Slice(c.svc.Name, c.ep(c.addrs[0])))
			data("after the scale-down to its own endpoint")
		})
	}
}

// hairpinOnlyCluster has a service whose only endpoint is pod 2 and a
// LoadBalancer service with two local endpoints and a remote one.
func hairpinOnlyCluster(f *Face) Cluster {
	return Cluster{
		Services: []*corev1.Service{
			k8sService("self", f.A("fd00:96::11")),
			k8sService("pair", f.A("fd00:96::12"), loadBalancer(30084, f.A("2001:db8:1b::12"))),
		},
		Slices: []*discoveryv1.EndpointSlice{
			f.Slice("self", local(f.A("fd00:1:1::2"))),
			f.Slice("pair", local(f.A("fd00:1:1::2")), local(f.A("fd00:1:1::3")), remote(f.A("fd00:1:2::2"))),
		},
	}
}

func hairpinOnlyConfig(f *Face) cnat.Config {
	cfg := f.config()
	cfg.HairpinSNAT = cnat.HairpinSNATOnly
	return cfg
}

// reassertedSNAT are the messages of cnat's SNAT settings, which VPP cannot
// dump: every agent start re-sends them, unchanged (docs/vpp-layer.md).
var reassertedSNAT = map[string]bool{"cnat_set_snat_addresses": true, "cnat_set_snat_policy": true, "cnat_snat_policy_add_del_if": true}

func HairpinOnlyAgentRestartChangesNothing(t *testing.T, f *Face) {
	e := f.NewEnvWith(t, hairpinOnlyConfig(f), hairpinOnlyCluster(f))
	open := e.Check(f.PodClient(2), protoTCP, f.A("[fd00:96::11]:80"), reaches(f.A(pod2)).SNATAll())
	before, features := e.Node.Dump(), f.EnabledFeatures(t, e.Node)
	if want := "set interface feature tap2 cnat-input-" + f.IP() + " arc " + f.IP() + "-unicast"; !slices.Contains(features, want) {
		t.Fatalf("hairpin-only enabled no cnat-input-%s on tap2: %v", f.IP(), features)
	}

	// The agent restarts; VPP keeps running.
	e.Agent.Stop()
	e.Node.ResetCalls()
	ag := f.StartAgent(t, e.Node, hairpinOnlyConfig(f))
	hairpinOnlyCluster(f).resync(ag)
	ag.WaitSettled(t)
	t.Logf("VPP calls during the restart: %v", e.Node.Calls())
	for msg, n := range e.Node.Calls() {
		if !tracetest.IsReadOnly(msg) && !reassertedSNAT[msg] {
			t.Errorf("restart sent %d %s", n, msg)
		}
	}
	if after := e.Node.Dump(); after != before {
		t.Fatalf("VPP state changed across the agent restart\n--- before\n%s--- after\n%s", before, after)
	}
	if after := f.EnabledFeatures(t, e.Node); !slices.Equal(after, features) {
		t.Fatalf("features changed across the agent restart: %v, were %v", after, features)
	}
	// The pod's open connection to itself keeps its source NAT.
	data := e.Node.Trace(fakevpp.Packet{Ingress: f.PodClient(2).Ingress, Protocol: protoTCP, Src: open.In.Src, Dst: open.In.Dst, TCPFlags: 0x10})
	if data.Verdict != fakevpp.Forward || data.Out.Src != open.Out.Src || data.Out.Dst != open.Out.Dst {
		t.Fatalf("open connection after restart: %s %s → %s, was %s → %s", data.Verdict, data.Out.Src, data.Out.Dst, open.Out.Src, open.Out.Dst)
	}
}

// A restart with hairpinSNAT true after hairpin-only removes cnat-input-ip<N>
// and cnat-output-ip<N> (claimed, read back). With them left on the pods'
// taps, cnat-input would translate the pods' flows without the paths'
// source NAT. cnat's SNAT policy, addresses and POD table stay (VPP cannot
// dump them); without the feature nodes nothing consults them for the family.
func HairpinOnlySwitchBackRemovesFeatures(t *testing.T, f *Face) {
	e := f.NewEnvWith(t, hairpinOnlyConfig(f), hairpinOnlyCluster(f))
	e.Check(f.LocalPod, protoTCP, f.A("[2001:db8:1b::12]:80"), reaches(f.A(pod2), f.A(pod3), f.A(remote2)))
	if len(f.EnabledFeatures(t, e.Node)) == 0 {
		t.Fatal("hairpin-only enabled no feature")
	}

	e.Agent.Stop()
	e.Agent = f.StartAgent(t, e.Node, f.config())
	hairpinOnlyCluster(f).resync(e.Agent)
	e.Agent.WaitSettled(t)
	if f := f.EnabledFeatures(t, e.Node); len(f) != 0 {
		t.Fatalf("features left after the switch back to hairpinSNAT true: %v", f)
	}
	// Every path of the LoadBalancer IP is source-NATed again, for this
	// node's pods too.
	for range 10 {
		e.Check(f.LocalPod, protoTCP, f.A("[2001:db8:1b::12]:80"), reaches(f.A(pod2), f.A(pod3), f.A(remote2)).SNATAll())
	}
	e.Check(f.PodClient(2), protoTCP, f.A("[fd00:96::11]:80"), reaches(f.A(pod2)).SNATAll())
}
