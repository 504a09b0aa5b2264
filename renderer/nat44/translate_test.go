package nat44

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Expected-item builders. label is the service label of default/<name>.

func lbMap(name, ext string, proto vppcfg.Protocol, twice vppcfg.TwiceNATMode, affinity uint32, locals ...vppcfg.NAT44LBLocal) *vppcfg.NAT44LBMapping {
	return &vppcfg.NAT44LBMapping{
		External: ap(ext), Protocol: proto, Locals: locals, Affinity: affinity,
		Out2InOnly: true, TwiceNAT: twice, Label: "default/" + name,
	}
}

func loc(addr string, prob uint8) vppcfg.NAT44LBLocal {
	return vppcfg.NAT44LBLocal{Addr: ap(addr), Probability: prob}
}

// shortCircuit is the cnat translation that sends internal clients of an
// external frontend to the ClusterIP (shortCircuits).
func shortCircuit(ext, clusterIP string) *vppcfg.CNATTranslation {
	return &vppcfg.CNATTranslation{VIP: ap(ext), Protocol: vppcfg.ProtoTCP, IsRealIP: true, Paths: []vppcfg.CNATPath{{Dst: ap(clusterIP)}}}
}

// single is the mapping of a frontend with one backend: an LB mapping of
// one local and vppcfg.LBPlaceholder, which the renderer adds itself.
func single(name, ext string, proto vppcfg.Protocol, local vppcfg.NAT44LBLocal, twice vppcfg.TwiceNATMode) *vppcfg.NAT44LBMapping {
	return &vppcfg.NAT44LBMapping{
		External: ap(ext), Protocol: proto,
		// Beside it the placeholder: unspecified address, the frontend's
		// port, probability 0, the local's VRF (sorted first).
		Locals:     []vppcfg.NAT44LBLocal{{Addr: netip.AddrPortFrom(netip.IPv4Unspecified(), ap(ext).Port()), VRF: local.VRF}, local},
		Out2InOnly: true, TwiceNAT: twice, Label: "default/" + name,
	}
}

func rule(action vppcfg.ACLAction, src, dst string, proto vppcfg.Protocol, dport uint16) vppcfg.ACLRule {
	return vppcfg.ACLRule{
		Action: action, Src: pfx(src), Dst: pfx(dst + "/32"), Protocol: proto,
		SrcPorts: vppcfg.AnyPort, DstPorts: vppcfg.SinglePort(dport),
	}
}

func deny(dst string, proto vppcfg.Protocol, dport uint16) vppcfg.ACLRule {
	return rule(vppcfg.ACLDeny, "0.0.0.0/0", dst, proto, dport)
}

const (
	tcp      = vppcfg.ProtoTCP
	udp      = vppcfg.ProtoUDP
	self     = vppcfg.TwiceNATSelf
	twice    = vppcfg.TwiceNATAlways
	noTwice  = vppcfg.TwiceNATOff
	hostVRF  = 7
	localWt  = 3
	remoteWt = 2
	// The probabilities VPP gets for small mappings (weightSpread).
	localProb  = localWt * weightSpread
	remoteProb = remoteWt * weightSpread
	nodePort   = 30080
	nodePort2  = 30443
)

func TestRenderService(t *testing.T) {
	cfg := testConfig()
	cfg.LocalEndpointWeight, cfg.RemoteEndpointWeight = localWt, remoteWt
	cfg.HostVRF = hostVRF

	nodePortSvc := func(s *model.ContivService) {
		s.SetPort("", model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: nodePort})
	}
	etpLocal := func(s *model.ContivService) { s.ExternalTrafficPolicy = model.TrafficPolicyLocal }
	itpLocal := func(s *model.ContivService) { s.InternalTrafficPolicy = model.TrafficPolicyLocal }
	externalIP := func(s *model.ContivService) { s.ExternalIPs = ips("203.0.113.10") }
	lbIP := func(s *model.ContivService) { s.LoadBalancerIPs = ips("198.51.100.10") }
	two := withBackends("", be("10.1.1.2:8080", "local"), be("10.1.2.2:8080"))

	tests := []struct {
		name  string
		svc   *model.ContivService
		want  []vppcfg.Item
		rules []vppcfg.ACLRule
	}{
		{
			name: "ClusterIP with several backends: LB mapping, self twice-NAT, local/remote weights",
			svc:  service("web", "10.96.0.10", withBackends("", be("10.1.1.2:8080", "local"), be("10.1.2.2:8080"), be("10.1.2.3:8080"))),
			want: []vppcfg.Item{
				lbMap("web", "10.96.0.10:80", tcp, self, 0, loc("10.1.1.2:8080", localProb), loc("10.1.2.2:8080", remoteProb), loc("10.1.2.3:8080", remoteProb)),
			},
		},
		{
			name: "one backend: an LB mapping of one local",
			svc:  service("one", "10.96.0.11", withBackends("", be("10.1.2.2:8080"))),
			want: []vppcfg.Item{single("one", "10.96.0.11:80", tcp, loc("10.1.2.2:8080", 6), self)},
		},
		{
			name: "host-network backends live in the host VRF",
			svc:  service("hn", "10.96.0.12", withBackends("", be("192.168.16.1:6443", "local", "hostnet"), be("192.168.16.2:6443", "hostnet"))),
			want: []vppcfg.Item{
				lbMap("hn", "10.96.0.12:80", tcp, self, 0,
					vppcfg.NAT44LBLocal{Addr: ap("192.168.16.1:6443"), Probability: localProb, VRF: hostVRF},
					vppcfg.NAT44LBLocal{Addr: ap("192.168.16.2:6443"), Probability: remoteProb, VRF: hostVRF}),
			},
		},
		{
			name: "session affinity",
			svc:  service("sticky", "10.96.0.13", two, func(s *model.ContivService) { s.SessionAffinityTimeout = 10800 }),
			want: []vppcfg.Item{lbMap("sticky", "10.96.0.13:80", tcp, self, 10800, loc("10.1.1.2:8080", localProb), loc("10.1.2.2:8080", remoteProb))},
		},
		{
			name: "NodePort on every IPv4 node IP, twice-NAT for Cluster policy",
			svc:  service("np", "10.96.0.14", nodePortSvc, two),
			want: []vppcfg.Item{
				lbMap("np", "10.96.0.14:80", tcp, self, 0, loc("10.1.1.2:8080", localProb), loc("10.1.2.2:8080", remoteProb)),
				lbMap("np", "192.168.16.1:30080", tcp, twice, 0, loc("10.1.1.2:8080", localProb), loc("10.1.2.2:8080", remoteProb)),
				lbMap("np", "192.168.16.2:30080", tcp, twice, 0, loc("10.1.1.2:8080", localProb), loc("10.1.2.2:8080", remoteProb)),
			},
		},
		{
			name: "external IP and LoadBalancer IP, twice-NAT for Cluster policy",
			svc:  service("ext", "10.96.0.15", externalIP, lbIP, withBackends("", be("10.1.2.2:8080"))),
			want: []vppcfg.Item{
				single("ext", "10.96.0.15:80", tcp, loc("10.1.2.2:8080", 6), self),
				single("ext", "198.51.100.10:80", tcp, loc("10.1.2.2:8080", 6), twice),
				single("ext", "203.0.113.10:80", tcp, loc("10.1.2.2:8080", 6), twice),
			},
		},
		{
			name: "externalTrafficPolicy Local with local endpoints: external frontends use them only, client IP kept",
			svc:  service("etp", "10.96.0.16", nodePortSvc, lbIP, etpLocal, withBackends("", be("10.1.1.2:8080", "local"), be("10.1.1.3:8080", "local"), be("10.1.2.2:8080"))),
			want: []vppcfg.Item{
				lbMap("etp", "10.96.0.16:80", tcp, self, 0, loc("10.1.1.2:8080", localProb), loc("10.1.1.3:8080", localProb), loc("10.1.2.2:8080", remoteProb)),
				lbMap("etp", "192.168.16.1:30080", tcp, noTwice, 0, loc("10.1.1.2:8080", localProb), loc("10.1.1.3:8080", localProb)),
				lbMap("etp", "192.168.16.2:30080", tcp, noTwice, 0, loc("10.1.1.2:8080", localProb), loc("10.1.1.3:8080", localProb)),
				lbMap("etp", "198.51.100.10:80", tcp, noTwice, 0, loc("10.1.1.2:8080", localProb), loc("10.1.1.3:8080", localProb)),
				// Internal clients (this node's pods and host) go to the ClusterIP.
				shortCircuit("192.168.16.1:30080", "10.96.0.16:80"),
				shortCircuit("192.168.16.2:30080", "10.96.0.16:80"),
				shortCircuit("198.51.100.10:80", "10.96.0.16:80"),
			},
		},
		{
			name: "externalTrafficPolicy Local without local endpoints: external frontends dropped, ClusterIP served",
			svc:  service("etp-none", "10.96.0.17", nodePortSvc, externalIP, etpLocal, withBackends("", be("10.1.2.2:8080"), be("10.1.2.3:8080"))),
			want: []vppcfg.Item{
				lbMap("etp-none", "10.96.0.17:80", tcp, self, 0, loc("10.1.2.2:8080", remoteProb), loc("10.1.2.3:8080", remoteProb)),
				shortCircuit("192.168.16.1:30080", "10.96.0.17:80"),
				shortCircuit("192.168.16.2:30080", "10.96.0.17:80"),
				shortCircuit("203.0.113.10:80", "10.96.0.17:80"),
			},
			rules: []vppcfg.ACLRule{
				deny("203.0.113.10", tcp, 80),
				deny("192.168.16.1", tcp, nodePort),
				deny("192.168.16.2", tcp, nodePort),
			},
		},
		{
			name: "internalTrafficPolicy Local: ClusterIP uses local endpoints only",
			svc:  service("itp", "10.96.0.18", itpLocal, withBackends("", be("10.1.1.2:8080", "local"), be("10.1.2.2:8080"))),
			want: []vppcfg.Item{single("itp", "10.96.0.18:80", tcp, loc("10.1.1.2:8080", 9), self)},
		},
		{
			name:  "internalTrafficPolicy Local without local endpoints: ClusterIP dropped",
			svc:   service("itp-none", "10.96.0.19", itpLocal, withBackends("", be("10.1.2.2:8080"))),
			rules: []vppcfg.ACLRule{deny("10.96.0.19", tcp, 80)},
		},
		{
			name: "ready endpoints are preferred over terminating ones",
			svc:  service("term-mixed", "10.96.0.20", withBackends("", be("10.1.1.2:8080", "local", "term"), be("10.1.2.2:8080"))),
			want: []vppcfg.Item{single("term-mixed", "10.96.0.20:80", tcp, loc("10.1.2.2:8080", 6), self)},
		},
		{
			name: "Local policy falls back to local terminating endpoints while remote ones are ready (KEP-1669)",
			svc:  service("term-local", "10.96.0.33", nodePortSvc, etpLocal, withBackends("", be("10.1.1.2:8080", "local", "term"), be("10.1.2.2:8080"))),
			want: []vppcfg.Item{
				single("term-local", "10.96.0.33:80", tcp, loc("10.1.2.2:8080", 6), self),
				single("term-local", "192.168.16.1:30080", tcp, loc("10.1.1.2:8080", 9), noTwice),
				single("term-local", "192.168.16.2:30080", tcp, loc("10.1.1.2:8080", 9), noTwice),
				shortCircuit("192.168.16.1:30080", "10.96.0.33:80"),
				shortCircuit("192.168.16.2:30080", "10.96.0.33:80"),
			},
		},
		{
			name: "externalTrafficPolicy Local with source ranges: the LoadBalancer IP keeps its ranges for pods too, not short-circuited",
			svc: service("etp-ranges", "10.96.0.34", nodePortSvc, lbIP, etpLocal, withBackends("", be("10.1.1.2:8080", "local")), func(s *model.ContivService) {
				s.LoadBalancerSourceRanges = []netip.Prefix{pfx("100.64.1.0/24")}
			}),
			want: []vppcfg.Item{
				single("etp-ranges", "10.96.0.34:80", tcp, loc("10.1.1.2:8080", 9), self),
				single("etp-ranges", "192.168.16.1:30080", tcp, loc("10.1.1.2:8080", 9), noTwice),
				single("etp-ranges", "192.168.16.2:30080", tcp, loc("10.1.1.2:8080", 9), noTwice),
				single("etp-ranges", "198.51.100.10:80", tcp, loc("10.1.1.2:8080", 9), noTwice),
				shortCircuit("192.168.16.1:30080", "10.96.0.34:80"),
				shortCircuit("192.168.16.2:30080", "10.96.0.34:80"),
			},
			rules: []vppcfg.ACLRule{
				rule(vppcfg.ACLPermit, "100.64.1.0/24", "198.51.100.10", tcp, 80),
				deny("198.51.100.10", tcp, 80),
			},
		},
		{
			name: "terminating endpoints serve when none is ready",
			svc:  service("term", "10.96.0.21", withBackends("", be("10.1.1.2:8080", "local", "term"), be("10.1.2.2:8080", "term"))),
			want: []vppcfg.Item{lbMap("term", "10.96.0.21:80", tcp, self, 0, loc("10.1.1.2:8080", localProb), loc("10.1.2.2:8080", remoteProb))},
		},
		{
			name: "no endpoints: every frontend dropped",
			svc:  service("empty", "10.96.0.22", nodePortSvc, lbIP),
			rules: []vppcfg.ACLRule{
				deny("10.96.0.22", tcp, 80),
				deny("198.51.100.10", tcp, 80),
				deny("192.168.16.1", tcp, nodePort),
				deny("192.168.16.2", tcp, nodePort),
			},
		},
		{
			name: "loadBalancerSourceRanges: only listed IPv4 clients reach LoadBalancer frontends",
			svc: service("ranges", "10.96.0.23", lbIP, externalIP, withBackends("", be("10.1.2.2:8080")), func(s *model.ContivService) {
				s.LoadBalancerSourceRanges = []netip.Prefix{pfx("100.64.1.0/24"), pfx("100.64.2.0/24"), pfx("2001:db8::/32")}
			}),
			want: []vppcfg.Item{
				single("ranges", "10.96.0.23:80", tcp, loc("10.1.2.2:8080", 6), self),
				single("ranges", "198.51.100.10:80", tcp, loc("10.1.2.2:8080", 6), twice),
				single("ranges", "203.0.113.10:80", tcp, loc("10.1.2.2:8080", 6), twice),
			},
			rules: []vppcfg.ACLRule{
				rule(vppcfg.ACLPermit, "100.64.1.0/24", "198.51.100.10", tcp, 80),
				rule(vppcfg.ACLPermit, "100.64.2.0/24", "198.51.100.10", tcp, 80),
				deny("198.51.100.10", tcp, 80),
			},
		},
		{
			name: "loadBalancerSourceRanges of the other family only: no restriction (as kube-proxy)",
			svc: service("ranges6", "10.96.0.24", lbIP, withBackends("", be("10.1.2.2:8080")), func(s *model.ContivService) {
				s.LoadBalancerSourceRanges = []netip.Prefix{pfx("2001:db8::/32")}
			}),
			want: []vppcfg.Item{
				single("ranges6", "10.96.0.24:80", tcp, loc("10.1.2.2:8080", 6), self),
				single("ranges6", "198.51.100.10:80", tcp, loc("10.1.2.2:8080", 6), twice),
			},
		},
		{
			name: "source ranges on a LoadBalancer frontend without endpoints: the deny comes first",
			svc: service("ranges-empty", "10.96.0.25", lbIP, func(s *model.ContivService) {
				s.LoadBalancerSourceRanges = []netip.Prefix{pfx("100.64.1.0/24")}
			}),
			rules: []vppcfg.ACLRule{deny("10.96.0.25", tcp, 80), deny("198.51.100.10", tcp, 80)},
		},
		{
			name: "multi-port service with named target ports: one mapping per port, each with its backends",
			svc: service("multi", "10.96.0.26", withoutDefaultPort, nodePortSvc, func(s *model.ContivService) {
				s.DeletePort("")
				s.SetPort("http", model.ServicePort{Protocol: model.ProtocolTCP, Port: 80})
				s.SetPort("https", model.ServicePort{Protocol: model.ProtocolTCP, Port: 443, NodePort: nodePort2})
				s.SetBackends("http", []model.ServiceBackend{be("10.1.1.2:8080", "local"), be("10.1.2.2:8081")})
				s.SetBackends("https", []model.ServiceBackend{be("10.1.1.2:8443", "local")})
			}),
			want: []vppcfg.Item{
				single("multi", "10.96.0.26:443", tcp, loc("10.1.1.2:8443", 9), self),
				single("multi", "192.168.16.1:30443", tcp, loc("10.1.1.2:8443", 9), twice),
				single("multi", "192.168.16.2:30443", tcp, loc("10.1.1.2:8443", 9), twice),
				lbMap("multi", "10.96.0.26:80", tcp, self, 0, loc("10.1.1.2:8080", localProb), loc("10.1.2.2:8081", remoteProb)),
			},
		},
		{
			name: "UDP and TCP on the same port number",
			svc: service("dns", "10.96.0.27", withoutDefaultPort,
				withPort("dns", model.ProtocolUDP, 53, 0), withPort("dns-tcp", model.ProtocolTCP, 53, 0),
				withBackends("dns", be("10.1.1.5:53", "local"), be("10.1.2.5:53")),
				withBackends("dns-tcp", be("10.1.1.5:53", "local"), be("10.1.2.5:53"))),
			want: []vppcfg.Item{
				lbMap("dns", "10.96.0.27:53", tcp, self, 0, loc("10.1.1.5:53", localProb), loc("10.1.2.5:53", remoteProb)),
				lbMap("dns", "10.96.0.27:53", udp, self, 0, loc("10.1.1.5:53", localProb), loc("10.1.2.5:53", remoteProb)),
			},
		},
		{
			name: "SCTP ports are skipped, other ports rendered",
			svc: service("sctp", "10.96.0.28", withPort("sig", model.ProtocolSCTP, 3868, 0),
				withBackends("", be("10.1.2.2:8080")), withBackends("sig", be("10.1.2.2:3868"))),
			want: []vppcfg.Item{single("sctp", "10.96.0.28:80", tcp, loc("10.1.2.2:8080", 6), self)},
		},
		{
			name: "dual-stack: only the IPv4 half is rendered",
			svc: service("dual", "10.96.0.29", nodePortSvc, func(s *model.ContivService) {
				s.ClusterIPs = ips("10.96.0.29", "fd00:96::29")
				s.LoadBalancerIPs = ips("198.51.100.29", "2001:db8::29")
				s.SetBackends("", []model.ServiceBackend{be("10.1.1.2:8080", "local"), be("[fd00:1:1::2]:8080", "local"), be("10.1.2.2:8080"), be("[fd00:1:2::2]:8080")})
			}),
			want: []vppcfg.Item{
				lbMap("dual", "10.96.0.29:80", tcp, self, 0, loc("10.1.1.2:8080", localProb), loc("10.1.2.2:8080", remoteProb)),
				lbMap("dual", "192.168.16.1:30080", tcp, twice, 0, loc("10.1.1.2:8080", localProb), loc("10.1.2.2:8080", remoteProb)),
				lbMap("dual", "192.168.16.2:30080", tcp, twice, 0, loc("10.1.1.2:8080", localProb), loc("10.1.2.2:8080", remoteProb)),
				lbMap("dual", "198.51.100.29:80", tcp, twice, 0, loc("10.1.1.2:8080", localProb), loc("10.1.2.2:8080", remoteProb)),
			},
		},
		{
			name: "IPv6-only service renders nothing",
			svc:  service("v6", "fd00:96::30", withBackends("", be("[fd00:1:1::2]:8080", "local"))),
			want: nil,
		},
		{
			name: "single-stack IPv6 NodePort service: no IPv4 node-port frontend, so no drop rule either",
			svc:  service("v6np", "fd00:96::31", nodePortSvc, withBackends("", be("[fd00:1:1::2]:8080", "local"))),
			want: nil,
		},
		{
			name: "single-stack IPv6 NodePort service without endpoints: nothing to drop in IPv4",
			svc:  service("v6np-empty", "fd00:96::32", nodePortSvc),
			want: nil,
		},
		{
			name: "an address that is both external IP and LoadBalancer IP gets one mapping",
			svc: service("same", "10.96.0.31", withBackends("", be("10.1.2.2:8080")), func(s *model.ContivService) {
				s.ExternalIPs = ips("198.51.100.31")
				s.LoadBalancerIPs = ips("198.51.100.31")
			}),
			want: []vppcfg.Item{
				single("same", "10.96.0.31:80", tcp, loc("10.1.2.2:8080", 6), self),
				single("same", "198.51.100.31:80", tcp, loc("10.1.2.2:8080", 6), twice),
			},
		},
		{
			name: "duplicate backends collapse",
			svc:  service("dup", "10.96.0.32", withBackends("", be("10.1.2.2:8080"), be("10.1.2.2:8080"))),
			want: []vppcfg.Item{single("dup", "10.96.0.32:80", tcp, loc("10.1.2.2:8080", 6), self)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RenderService(tt.svc, testNode(), &cfg)
			// Every service with an IPv4 frontend also drops its ClusterIP's
			// other ports (no service CIDR configured here).
			want := slices.Clone(tt.want)
			if renderer.Serves(tt.svc, renderer.IPv4) {
				want = append(want, renderer.ClusterIPDropRoutes(tt.svc, nil, renderer.IPv4, cfg.PodVRF, cfg.HostVRF)...)
			}
			assertItems(t, got.Items, renderer.SortItems(want))
			if !slices.Equal(got.Rules, tt.rules) {
				t.Fatalf("rules:\n  %v\nwant\n  %v", got.Rules, tt.rules)
			}
		})
	}
}

func TestRenderServiceDoesNotModifyInput(t *testing.T) {
	cfg := testConfig()
	svc := service("web", "10.96.0.10", withBackends("", be("10.1.2.3:8080"), be("10.1.2.2:8080")))
	before := svc.Clone()
	RenderService(svc, testNode(), &cfg)
	if !svc.Equal(before) {
		t.Fatalf("RenderService changed its input:\n%s\n%s", before, svc)
	}
}
