package ipv6

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

const (
	local1  = "[fd00:1:1::2]:8080"
	local2  = "[fd00:1:1::3]:8080"
	remote1 = "[fd00:1:2::2]:8080"
	remote2 = "[fd00:1:2::3]:8080"
)

func TestRenderService(t *testing.T) {
	maglev := func(c *Config) { c.LoadBalancing = LBMaglev }
	noHairpin := func(c *Config) { c.HairpinSNAT = HairpinSNATOff }
	hairpinOnly := func(c *Config) { c.HairpinSNAT = HairpinSNATOnly }
	tests := []struct {
		name   string
		svc    *model.ContivService
		config func(*Config)
		want   []vppcfg.Item
		rules  []vppcfg.ACLRule
	}{
		{
			name: "ClusterIP: remote endpoint kept as is, local endpoint source-NATed for hairpin",
			svc:  service("web", "fd00:96::10", withBackends("", be(local1, "local"), be(remote1))),
			want: []vppcfg.Item{xlat("[fd00:96::10]:80", tcp, snat(local1), to(remote1))},
		},
		{
			name:   "ClusterIP without hairpin SNAT keeps every client address",
			svc:    service("web", "fd00:96::10", withBackends("", be(local1, "local"), be(remote1))),
			config: noHairpin,
			want:   []vppcfg.Item{xlat("[fd00:96::10]:80", tcp, to(local1), to(remote1))},
		},
		{
			name:   "ClusterIP with hairpin-only: no path source-NATed (cnat-output does it per flow)",
			svc:    service("web", "fd00:96::10", withBackends("", be(local1, "local"), be(remote1))),
			config: hairpinOnly,
			want:   []vppcfg.Item{xlat("[fd00:96::10]:80", tcp, to(local1), to(remote1))},
		},
		{
			name: "ClusterIP with only remote endpoints needs no source NAT and no port allocation",
			svc:  service("web", "fd00:96::10", withBackends("", be(remote1), be(remote2))),
			want: []vppcfg.Item{xlat("[fd00:96::10]:80", tcp, to(remote1), to(remote2))},
		},
		{
			name: "NodePort, policy Cluster: a translation per IPv6 node IP, real IPs, every path source-NATed",
			svc:  service("np", "fd00:96::10", withNodePort, withBackends("", be(local1, "local"), be(remote1))),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, snat(local1), to(remote1)),
				realIP(xlat("[fd00:16::1]:30080", tcp, snat(local1), snat(remote1))),
				realIP(xlat("[fd00:16::2]:30080", tcp, snat(local1), snat(remote1))),
			},
		},
		{
			name:   "NodePort, policy Cluster, no hairpin SNAT: only remote paths source-NATed",
			svc:    service("np", "fd00:96::10", withNodePort, withBackends("", be(local1, "local"), be(remote1))),
			config: noHairpin,
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, to(local1), to(remote1)),
				realIP(xlat("[fd00:16::1]:30080", tcp, to(local1), snat(remote1))),
				realIP(xlat("[fd00:16::2]:30080", tcp, to(local1), snat(remote1))),
			},
		},
		{
			name: "externalTrafficPolicy Local: local endpoints only, client address preserved",
			svc: service("np", "fd00:96::10", withNodePort, externalLocal,
				withBackends("", be(local1, "local"), be(remote1))),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, snat(local1), to(remote1)),
				realIP(xlat("[fd00:16::1]:30080", tcp, to(local1))),
				realIP(xlat("[fd00:16::2]:30080", tcp, to(local1))),
			},
		},
		{
			name:  "externalTrafficPolicy Local without local endpoint: node ports denied by ACL (node IPs are real)",
			svc:   service("np", "fd00:96::10", withNodePort, externalLocal, withBackends("", be(remote1))),
			want:  []vppcfg.Item{xlat("[fd00:96::10]:80", tcp, to(remote1))},
			rules: []vppcfg.ACLRule{deny("fd00:16::1", tcp, nodePort), deny("fd00:16::2", tcp, nodePort)},
		},
		{
			name: "externalTrafficPolicy Local without local endpoint on an external IP with another served port: cnat drops",
			svc: service("ext", "fd00:96::10", externalLocal, withoutDefaultPort,
				withPort("a", model.ProtocolTCP, 80, 0), withPort("b", model.ProtocolTCP, 81, 0),
				func(s *model.ContivService) { s.ExternalIPs = ips("2001:db8:e::10") },
				withBackends("a", be(local1, "local")), withBackends("b", be(remote1))),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, snat(local1)),
				xlat("[fd00:96::10]:81", tcp, to(remote1)),
				xlat("[2001:db8:e::10]:80", tcp, to(local1)),
			},
		},
		{
			name: "internalTrafficPolicy Local without local endpoint: the ClusterIP is denied, external IPs served",
			svc: service("itp", "fd00:96::10", internalLocal, withBackends("", be(remote1)),
				func(s *model.ContivService) { s.ExternalIPs = ips("2001:db8:e::10") }),
			want:  []vppcfg.Item{xlat("[2001:db8:e::10]:80", tcp, snat(remote1))},
			rules: []vppcfg.ACLRule{deny("fd00:96::10", tcp, 80)},
		},
		{
			name: "internalTrafficPolicy Local with a local endpoint",
			svc:  service("itp", "fd00:96::10", internalLocal, withBackends("", be(local1, "local"), be(remote1))),
			want: []vppcfg.Item{xlat("[fd00:96::10]:80", tcp, snat(local1))},
		},
		{
			name: "no endpoints: every frontend denied, no translation (never an empty path list)",
			svc: service("empty", "fd00:96::10", withNodePort,
				func(s *model.ContivService) { s.ExternalIPs = ips("2001:db8:e::10") }),
			rules: []vppcfg.ACLRule{
				deny("fd00:96::10", tcp, 80), deny("2001:db8:e::10", tcp, 80),
				deny("fd00:16::1", tcp, nodePort), deny("fd00:16::2", tcp, nodePort),
			},
		},
		{
			name: "a port without endpoints next to a served one: the exclusive VIP drops it, node ports need the ACL",
			svc: service("mixed", "fd00:96::10", withoutDefaultPort,
				withPort("http", model.ProtocolTCP, 80, 30080), withPort("metrics", model.ProtocolTCP, 9090, 30090),
				withBackends("http", be(remote1))),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, to(remote1)),
				realIP(xlat("[fd00:16::1]:30080", tcp, snat(remote1))),
				realIP(xlat("[fd00:16::2]:30080", tcp, snat(remote1))),
			},
			rules: []vppcfg.ACLRule{deny("fd00:16::1", tcp, 30090), deny("fd00:16::2", tcp, 30090)},
		},
		{
			name: "loadBalancerSourceRanges: IPv6 ranges permitted on the LoadBalancer frontend, others denied",
			svc: service("lb", "fd00:96::10", withBackends("", be(remote1)), func(s *model.ContivService) {
				s.LoadBalancerIPs = ips("2001:db8:1b::10")
				s.LoadBalancerSourceRanges = []netip.Prefix{pfx("100.64.1.0/24"), pfx("2001:db8:c:1::/64")}
			}),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, to(remote1)),
				xlat("[2001:db8:1b::10]:80", tcp, snat(remote1)),
			},
			rules: []vppcfg.ACLRule{
				rule(vppcfg.ACLPermit, "2001:db8:c:1::/64", "2001:db8:1b::10", tcp, 80),
				deny("2001:db8:1b::10", tcp, 80),
			},
		},
		{
			name: "IPv4-only source ranges do not restrict IPv6 frontends",
			svc: service("lb", "fd00:96::10", withBackends("", be(remote1)), func(s *model.ContivService) {
				s.LoadBalancerIPs = ips("2001:db8:1b::10")
				s.LoadBalancerSourceRanges = []netip.Prefix{pfx("100.64.1.0/24")}
			}),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, to(remote1)),
				xlat("[2001:db8:1b::10]:80", tcp, snat(remote1)),
			},
		},
		{
			name: "session affinity: maglev with a source-address flow hash, also for one endpoint",
			svc: service("sticky", "fd00:96::10", withNodePort, withBackends("", be(remote1)),
				func(s *model.ContivService) { s.SessionAffinityTimeout = 10800 }),
			want: []vppcfg.Item{
				sticky(xlat("[fd00:96::10]:80", tcp, to(remote1))),
				sticky(realIP(xlat("[fd00:16::1]:30080", tcp, snat(remote1)))),
				sticky(realIP(xlat("[fd00:16::2]:30080", tcp, snat(remote1)))),
			},
		},
		{
			name:   "maglev from the configuration, default flow hash",
			svc:    service("web", "fd00:96::10", withBackends("", be(remote1), be(remote2))),
			config: maglev,
			want: []vppcfg.Item{func() vppcfg.Item {
				t := xlat("[fd00:96::10]:80", tcp, to(remote1), to(remote2))
				t.LBType = vppcfg.CNATLBMaglev
				return t
			}()},
		},
		{
			name: "dual-stack: IPv4 addresses, IPv4 endpoints and SCTP ports are left out",
			svc: service("dual", "fd00:96::10", withPort("sig", model.ProtocolSCTP, 3868, 0),
				withBackends("", be("10.1.2.2:8080"), be(remote1)), withBackends("sig", be(remote1)),
				func(s *model.ContivService) { s.ClusterIPs = ips("10.96.0.10", "fd00:96::10") }),
			want: []vppcfg.Item{xlat("[fd00:96::10]:80", tcp, to(remote1))},
		},
		{
			name: "a single-stack IPv4 service has no IPv6 frontend, not even node ports or IPv6 external IPs",
			svc: service("v4only", "10.96.0.10", withNodePort, withBackends("", be("10.1.2.2:8080")),
				func(s *model.ContivService) { s.ExternalIPs = ips("2001:db8:e::10") }),
			want: nil,
		},
		{
			name: "terminating endpoints serve only where no ready one may (per traffic policy)",
			svc: service("roll", "fd00:96::10", withNodePort, externalLocal,
				withBackends("", be(local1, "local", "term"), be(remote1))),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, to(remote1)),
				realIP(xlat("[fd00:16::1]:30080", tcp, to(local1))),
				realIP(xlat("[fd00:16::2]:30080", tcp, to(local1))),
			},
		},
		{
			name: "an external IP that is a node IP is a real IP, never an exclusive VIP",
			svc: service("hostip", "fd00:96::10", withBackends("", be(remote1)),
				func(s *model.ContivService) { s.ExternalIPs = ips("fd00:16::1") }),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, to(remote1)),
				realIP(xlat("[fd00:16::1]:80", tcp, snat(remote1))),
			},
		},
		{
			name: "an unserved external IP that is a node IP is denied by ACL even next to a served port",
			svc: service("hostip", "fd00:96::10", withPort("b", model.ProtocolTCP, 81, 0), withBackends("", be(remote1)),
				func(s *model.ContivService) { s.ExternalIPs = ips("fd00:16::1") }),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, to(remote1)),
				realIP(xlat("[fd00:16::1]:80", tcp, snat(remote1))),
			},
			rules: []vppcfg.ACLRule{deny("fd00:16::1", tcp, 81)},
		},
		{
			name: "named ports, each with its own target port and protocol",
			svc: service("dns", "fd00:96::53", withoutDefaultPort,
				withPort("dns", model.ProtocolUDP, 53, 0), withPort("dns-tcp", model.ProtocolTCP, 53, 0),
				withBackends("dns", be("[fd00:1:2::2]:5353")), withBackends("dns-tcp", be("[fd00:1:2::2]:5354"))),
			want: []vppcfg.Item{
				xlat("[fd00:96::53]:53", tcp, to("[fd00:1:2::2]:5354")),
				xlat("[fd00:96::53]:53", udp, to("[fd00:1:2::2]:5353")),
			},
		},
		{
			name: "an external IP equal to a LoadBalancer IP is one frontend",
			svc: service("same", "fd00:96::10", withBackends("", be(remote1)), func(s *model.ContivService) {
				s.ExternalIPs = ips("2001:db8:e::10")
				s.LoadBalancerIPs = ips("2001:db8:e::10")
			}),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, to(remote1)),
				xlat("[2001:db8:e::10]:80", tcp, snat(remote1)),
			},
		},
		{
			name: "endpoints without a port are skipped and repeated ones collapse",
			svc:  service("dup", "fd00:96::10", withBackends("", be("[fd00:1:2::9]:0"), be(remote1), be(remote1))),
			want: []vppcfg.Item{xlat("[fd00:96::10]:80", tcp, to(remote1))},
		},
		{
			name: "a host-network endpoint on this node is local",
			svc:  service("kubelet", "fd00:96::10", withBackends("", be("[fd00:16::1]:10250", "local", "hostnet"))),
			want: []vppcfg.Item{xlat("[fd00:96::10]:80", tcp, snat("[fd00:16::1]:10250"))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			if tt.config != nil {
				tt.config(&cfg)
			}
			got := RenderService(tt.svc, testNode(), &cfg)
			// Flow keepers have their own table (TestFlowKeeper).
			assertItems(t, withoutKeepers(got.Items), renderer.SortItems(tt.want))
			if !slices.Equal(got.Rules, tt.rules) {
				t.Fatalf("rules:\n  %v\nwant\n  %v", got.Rules, tt.rules)
			}
		})
	}
}

// TestFlowKeeper: the keeper holds exactly the backend addresses that one
// translation of the service alone tracks, and exists only when there is
// one.
func TestFlowKeeper(t *testing.T) {
	tests := []struct {
		name string
		svc  *model.ContivService
		want *vppcfg.CNATTranslation // nil: no keeper
	}{
		{
			name: "ClusterIP only: every backend",
			svc:  service("web", "fd00:96::10", withBackends("", be(local1, "local"), be(remote1))),
			want: keeper("fd00:96::10", local1, remote1),
		},
		{
			name: "one pod on two target ports: its address held once, at its first port",
			svc:  service("web", "fd00:96::10", withBackends("", be("[fd00:1:2::2]:8081"), be(remote1), be(remote2))),
			want: keeper("fd00:96::10", remote1, remote2),
		},
		{
			name: "NodePort, policy Cluster: the node-port translations track every backend too",
			svc:  service("np", "fd00:96::10", withNodePort, withBackends("", be(local1, "local"), be(remote1))),
		},
		{
			name: "NodePort, policy Local: the remote backend is the ClusterIP's alone",
			svc:  service("np", "fd00:96::10", withNodePort, externalLocal, withBackends("", be(local1, "local"), be(remote1))),
			want: keeper("fd00:96::10", remote1),
		},
		{
			name: "two ports over the same pods: each backend tracked twice",
			svc: service("two", "fd00:96::10", withoutDefaultPort,
				withPort("a", model.ProtocolTCP, 80, 0), withPort("b", model.ProtocolTCP, 81, 0),
				withBackends("a", be(remote1), be(remote2)), withBackends("b", be(remote1), be(remote2))),
		},
		{
			name: "two ports over different pods: each once",
			svc: service("two", "fd00:96::10", withoutDefaultPort,
				withPort("a", model.ProtocolTCP, 80, 0), withPort("b", model.ProtocolTCP, 81, 0),
				withBackends("a", be(remote1)), withBackends("b", be(remote2))),
			want: keeper("fd00:96::10", remote1, remote2),
		},
		{
			name: "no endpoint: no translation, no keeper",
			svc:  service("empty", "fd00:96::10"),
		},
		{
			name: "IPv4-only service: nothing",
			svc:  service("v4", "10.96.0.10", withBackends("", be("10.1.2.2:8080"))),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			var got []vppcfg.Item
			for _, it := range RenderService(tt.svc, testNode(), &cfg).Items {
				if tr, ok := it.(*vppcfg.CNATTranslation); ok && tr.Protocol == keeperProtocol {
					got = append(got, it)
				}
			}
			var want []vppcfg.Item
			if tt.want != nil {
				want = append(want, tt.want)
			}
			assertItems(t, got, want)
		})
	}
}

func TestRenderServiceIsDeterministic(t *testing.T) {
	cfg := testConfig()
	svc := service("web", "fd00:96::10", withNodePort, withPort("b", model.ProtocolUDP, 53, 30053),
		withBackends("", be(remote2), be(local1, "local"), be(remote1)), withBackends("b", be(local2, "local")),
		func(s *model.ContivService) { s.ExternalIPs = ips("2001:db8:e::2", "2001:db8:e::1") })
	first := RenderService(svc, testNode(), &cfg)
	for range 20 {
		again := RenderService(svc.Clone(), testNode(), &cfg)
		assertItems(t, again.Items, first.Items)
		if !slices.Equal(again.Rules, first.Rules) {
			t.Fatalf("rules differ: %v, then %v", first.Rules, again.Rules)
		}
	}
}

func TestRenderNodeHasNothingOfItsOwn(t *testing.T) {
	for _, mode := range []HairpinSNAT{HairpinSNATLocalPaths, HairpinSNATOff} {
		cfg := testConfig()
		cfg.HairpinSNAT = mode
		if items := RenderNode(testNode(), &cfg); len(items) != 0 {
			t.Fatalf("hairpinSNAT %s: RenderNode = %s, want nothing (the core adds the filter ACLs)", mode, itemLines(items))
		}
	}
}

// hairpin-only: the K8S policy with the SNAT address, and on every frontend
// interface but the uplink the POD table and both feature nodes; nothing
// while the uplink is not among the frontends.
func TestRenderNodeHairpinOnly(t *testing.T) {
	cfg := testConfig()
	cfg.HairpinSNAT = HairpinSNATOnly
	var want []vppcfg.Item
	want = append(want, &vppcfg.CNATSnatConfig{Part: vppcfg.CNATSnatIPv6, SnatIP6: nodeIP6, Policy: vppcfg.CNATSnatPolicyK8s})
	for _, i := range []string{"host0", "tap1", "tap2"} {
		want = append(want, &vppcfg.CNATSnatInterface{Interface: i, Table: vppcfg.CNATSnatPod},
			&vppcfg.InterfaceFeature{Interface: i, Arc: "ip6-unicast", Feature: "cnat-input-ip6"},
			&vppcfg.InterfaceFeature{Interface: i, Arc: "ip6-output", Feature: "cnat-output-ip6"})
	}
	got := renderer.SortItems(RenderNode(testNode(), &cfg))
	if g, w := itemLines(got), itemLines(renderer.SortItems(want)); g != w {
		t.Fatalf("RenderNode =\n%s\nwant\n%s", g, w)
	}
	node := testNode()
	node.FrontendIfs = model.NewInterfaces("host0", "tap1")
	if items := RenderNode(node, &cfg); len(items) != 0 {
		t.Fatalf("without the uplink among the frontends: RenderNode = %s, want nothing", itemLines(items))
	}
}

func TestFrontendsSortedAndDeduplicated(t *testing.T) {
	svc := service("fe", "fd00:96::10", withNodePort, func(s *model.ContivService) {
		s.ClusterIPs = ips("10.96.0.10", "fd00:96::10")
		s.ExternalIPs = ips("2001:db8:e::10", "fd00:16::2")
		s.LoadBalancerIPs = ips("2001:db8:e::10")
	})
	var got []string
	for _, fe := range Frontends(svc, testNode().IPs) {
		got = append(got, fe.Kind.String()+" "+fe.Addr.String()+"/"+fe.Protocol.String()+map[bool]string{true: " real"}[fe.RealIP])
	}
	want := []string{
		"cluster-ip [fd00:96::10]:80/tcp",
		"external-ip [2001:db8:e::10]:80/tcp",
		"external-ip [fd00:16::2]:80/tcp real",
		"node-port [fd00:16::1]:30080/tcp real",
		"node-port [fd00:16::2]:30080/tcp real",
	}
	if len(got) != len(want) {
		t.Fatalf("Frontends = %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("Frontends = %q, want %q", got, want)
		}
	}
}
