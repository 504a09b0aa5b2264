package ipv6

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// TestOwnClientsOnly: an externalTrafficPolicy: Local service without a
// local endpoint serves the node's own clients from every endpoint when the
// configuration names them, and keeps every other client off by filter.
func TestOwnClientsOnly(t *testing.T) {
	const pods, host = "fd00:1:1::/64", "fd00:30::2/128"
	withLB := func(ranges ...string) func(*model.ContivService) {
		return func(s *model.ContivService) {
			s.LoadBalancerIPs = ips("2001:db8:1b::10")
			for _, r := range ranges {
				s.LoadBalancerSourceRanges = append(s.LoadBalancerSourceRanges, pfx(r))
			}
		}
	}
	tests := []struct {
		name  string
		svc   *model.ContivService
		want  []vppcfg.Item
		rules []vppcfg.ACLRule
	}{
		{
			name: "no local endpoint: the external frontends take the cluster set, admit pods and node, deny the rest",
			svc:  service("np", "fd00:96::10", withNodePort, externalLocal, withLB(), withBackends("", be(remote1), be(remote2))),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, to(remote1), to(remote2)),
				xlat("[2001:db8:1b::10]:80", tcp, to(remote1), to(remote2)),
				realIP(xlat("[fd00:16::1]:30080", tcp, to(remote1), to(remote2))),
				realIP(xlat("[fd00:16::2]:30080", tcp, to(remote1), to(remote2))),
			},
			rules: []vppcfg.ACLRule{
				rule(vppcfg.ACLPermit, pods, "2001:db8:1b::10", tcp, 80), rule(vppcfg.ACLPermit, host, "2001:db8:1b::10", tcp, 80), deny("2001:db8:1b::10", tcp, 80),
				rule(vppcfg.ACLPermit, pods, "fd00:16::1", tcp, nodePort), rule(vppcfg.ACLPermit, host, "fd00:16::1", tcp, nodePort), deny("fd00:16::1", tcp, nodePort),
				rule(vppcfg.ACLPermit, pods, "fd00:16::2", tcp, nodePort), rule(vppcfg.ACLPermit, host, "fd00:16::2", tcp, nodePort), deny("fd00:16::2", tcp, nodePort),
			},
		},
		{
			name: "source ranges that hold part of the pods and no node: only that part",
			svc:  service("lb", "fd00:96::10", externalLocal, withLB("fd00:1:1::/80", "2001:db8:c:1::/64"), withBackends("", be(remote1))),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, to(remote1)),
				xlat("[2001:db8:1b::10]:80", tcp, to(remote1)),
			},
			rules: []vppcfg.ACLRule{
				rule(vppcfg.ACLPermit, "fd00:1:1::/80", "2001:db8:1b::10", tcp, 80), deny("2001:db8:1b::10", tcp, 80),
			},
		},
		{
			name: "a local endpoint: every client gets the local set, as without the setting",
			svc:  service("np", "fd00:96::10", externalLocal, withLB(), withBackends("", be(local1, "local"), be(remote1))),
			want: []vppcfg.Item{
				xlat("[fd00:96::10]:80", tcp, snat(local1), to(remote1)),
				xlat("[2001:db8:1b::10]:80", tcp, to(local1)),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.LocalClients = []netip.Prefix{pfx(pods)}
			cfg.NodeSources = []netip.Prefix{pfx(host)}
			got := RenderService(tt.svc, testNode(), &cfg)
			assertItems(t, withoutKeepers(got.Items), renderer.SortItems(tt.want))
			if !slices.Equal(got.Rules, tt.rules) {
				t.Fatalf("rules:\n  %v\nwant\n  %v", got.Rules, tt.rules)
			}
		})
	}
}

func TestWarnsWhenPodsCannotReachALocalOnlyService(t *testing.T) {
	for _, configured := range []bool{false, true} {
		log, hook := logtest.NewNullLogger()
		cfg := testConfig()
		if configured {
			cfg.LocalClients = []netip.Prefix{pfx("fd00:1:1::/64")}
		}
		r, err := New(renderertest.NewClient(Name, checkIPv6), cfg, log)
		must(t, err)
		must(t, r.Resync(resyncEvent(testNode())))
		must(t, r.AddService(service("np", "fd00:96::10", withNodePort, externalLocal, withBackends("", be(remote1)))))
		must(t, r.AddService(service("served", "fd00:96::11", withNodePort, externalLocal, withBackends("", be(local1, "local")))))
		n := countLogs(hook, logrus.WarnLevel, "unreachable from this node's pods")
		if want := map[bool]int{false: 1, true: 0}[configured]; n != want {
			t.Fatalf("localClients set %t: %d warnings, want %d", configured, n, want)
		}
	}
}
