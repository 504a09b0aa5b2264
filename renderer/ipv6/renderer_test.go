package ipv6

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/vppcfgtest"
)

// newTestRenderer returns a renderer over a renderertest client, resynced to
// the given services on testNode, with the resync commit already taken.
func newTestRenderer(t *testing.T, services ...*model.ContivService) (*Renderer, *renderertest.Client, *logtest.Hook) {
	t.Helper()
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	c := renderertest.NewClient(Name, checkIPv6)
	r, err := New(c, testConfig(), log)
	must(t, err)
	must(t, r.Resync(resyncEvent(testNode(), services...)))
	c.TakeCommits()
	return r, c, hook
}

func resyncEvent(node Node, services ...*model.ContivService) *model.ResyncEventData {
	ev := &model.ResyncEventData{NodeIPs: node.IPs, FrontendIfs: node.FrontendIfs, Services: services}
	ev.SortServices()
	return ev
}

var (
	keyList     = renderertest.KeyList
	mustCommits = renderertest.RequireCommits
)

func trKey(vip string, proto vppcfg.Protocol) vppcfg.Key {
	return vppcfgtest.CNATTranslationKey(ap(vip), proto)
}

// shardKey is the key of the filter ACL that holds a service's rules.
func shardKey(cfg Config, name string) vppcfg.Key {
	s := cfg.shards()
	return vppcfg.ACLKey(s.Name(s.Of(model.ServiceID{Namespace: "default", Name: name})))
}

// nodeOnly is what the renderer holds for testNode without services (and
// without filter rules): its own node-wide items.
func nodeOnly(cfg Config) []vppcfg.Item { return renderer.SortItems(RenderNode(testNode(), &cfg)) }

// filterKeys are the keys of the filter items on testNode (see
// renderertest.FilterKeys).
func filterKeys(cfg Config) []vppcfg.Key {
	return renderertest.FilterKeys(cfg.shards(), testNode().FrontendIfs)
}

// checkIPv6 adds the renderer's own invariants to renderertest.CheckVPP:
// only cnat translations and ACL items, filter rules that each match one
// frontend (never ICMPv6, which neighbour discovery needs), paths in
// canonical order with one path per endpoint, and AllocPort exactly when
// some path is source-NATed.
func checkIPv6(items map[vppcfg.Key]vppcfg.Item) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	for k, it := range items {
		switch v := it.(type) {
		case *vppcfg.CNATTranslation:
			snat := false
			for i, p := range v.Paths {
				if i > 0 && v.Paths[i-1].Dst.Compare(p.Dst) >= 0 {
					fail("%s: paths not sorted or repeated", k)
				}
				snat = snat || p.Src.IsValid()
			}
			if snat != v.AllocPort {
				fail("%s: AllocPort %t but source NAT on some path %t", k, v.AllocPort, snat)
			}
		case *vppcfg.ACL:
			for _, r := range v.Rules {
				if v.Name != renderer.PermitAllACLName && (r.Protocol == vppcfg.ProtoAny || r.Dst.Bits() != 128) {
					fail("%s: rule %s matches more than one frontend (would also hit ICMPv6 or other hosts)", k, r)
				}
			}
		case *vppcfg.ACLBinding:
		case *vppcfg.CNATSnatConfig: // hairpin-only
			if v.Policy != vppcfg.CNATSnatPolicyK8s || v.Part != vppcfg.CNATSnatIPv6 || !v.SnatIP6.Is6() || len(v.ExcludePrefixes) > 0 {
				fail("%s: %s is not the IPv6 part with the K8S policy", k, v)
			}
		case *vppcfg.CNATSnatInterface:
			if v.Table != vppcfg.CNATSnatPod {
				fail("%s: not in the POD table", k)
			}
		case *vppcfg.InterfaceFeature:
			if v.Feature != cnatInputFeature6 && v.Feature != cnatOutputFeature6 {
				fail("%s: feature %s is not cnat's IPv6 feature node", k, v.Feature)
			}
		case *vppcfg.DropRoute: // a service CIDR's
			if !v.Prefix.Addr().Is6() || v.Prefix.Bits() == 128 {
				fail("%s: not an IPv6 service CIDR's route", k)
			}
		default:
			fail("%s: unexpected item kind", k)
		}
	}
	return errs
}

// TestConformance runs the shared renderer conformance suite, with few
// shards so that services share them, and without hairpin SNAT.
func TestConformance(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"default config, 3 shards":    func(c *Config) { c.ACLShards = 3 },
		"maglev, no hairpin, 1 shard": func(c *Config) { c.ACLShards, c.LoadBalancing, c.HairpinSNAT = 1, LBMaglev, HairpinSNATOff },
		"hairpin-only, 2 shards":      func(c *Config) { c.ACLShards, c.HairpinSNAT = 2, HairpinSNATOnly },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig()
			mutate(&cfg)
			renderertest.Run(t, func(c vppcfg.Client) (vppsvc.ServiceRendererAPI, error) {
				return New(c, cfg, nil)
			}, renderertest.WithOwner(Name), renderertest.WithChecks(checkIPv6))
		})
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := New(nil, testConfig(), nil); err == nil {
		t.Fatal("New accepted a nil client")
	}
	if _, err := New(renderertest.NewClient(Name), DefaultConfig(), nil); err == nil {
		t.Fatal("New accepted a config without snatAddress")
	}
}

func TestResyncOfAnEmptyClusterPutsNothing(t *testing.T) {
	c := renderertest.NewClient(Name)
	r, err := New(c, testConfig(), nil)
	must(t, err)
	must(t, r.Resync(resyncEvent(testNode())))
	var keys []vppcfg.Key
	for _, it := range nodeOnly(testConfig()) {
		keys = append(keys, it.Key())
	}
	mustCommits(t, c, "resync put="+keyList(keys...)+" del=[]")
}

func TestServiceLifecycle(t *testing.T) {
	r, c, _ := newTestRenderer(t)
	key := keyList(trKey("[fd00:96::10]:0", vppcfg.ProtoExperiment), trKey("[fd00:96::10]:80", tcp))
	shard := shardKey(r.cfg, "web")

	v1 := service("web", "fd00:96::10", withBackends("", be(local1, "local"), be(remote1)))
	must(t, r.AddService(v1))
	mustCommits(t, c, "txn put="+key+" del=[]")

	t.Run("a new backend is one put of the same translation", func(t *testing.T) {
		v2 := service("web", "fd00:96::10", withBackends("", be(local1, "local"), be(remote1), be(remote2)))
		must(t, r.UpdateService(v1, v2))
		mustCommits(t, c, "txn put="+key+" del=[]")
		v1 = v2
	})
	t.Run("an update that renders the same items commits nothing", func(t *testing.T) {
		v2 := v1.Clone()
		v2.HealthCheckNodePort = 31000
		must(t, r.UpdateService(v1, v2))
		mustCommits(t, c)
		v1 = v2
	})
	t.Run("a node port adds translations on the node IPs only; they hold every backend, so the flow keeper goes", func(t *testing.T) {
		v2 := v1.Clone()
		withNodePort(v2)
		must(t, r.UpdateService(v1, v2))
		mustCommits(t, c, "txn put="+keyList(trKey("[fd00:16::1]:30080", tcp), trKey("[fd00:16::2]:30080", tcp))+" del="+keyList(trKey("[fd00:96::10]:0", vppcfg.ProtoExperiment)))
		v1 = v2
	})
	t.Run("no backend: drop rules; the first filtered service brings every filter shard and binding", func(t *testing.T) {
		v2 := v1.Clone()
		for i := range v2.Ports {
			v2.Ports[i].Backends = nil
		}
		must(t, r.UpdateService(v1, v2))
		mustCommits(t, c, "txn put="+keyList(filterKeys(r.cfg)...)+
			" del="+keyList(trKey("[fd00:96::10]:80", tcp), trKey("[fd00:16::1]:30080", tcp), trKey("[fd00:16::2]:30080", tcp)))
		for _, it := range c.Items() {
			if it.Key() == shard && len(it.(*vppcfg.ACL).Rules) != 3 {
				t.Fatalf("the service's shard holds %s, want its 3 drop rules", it)
			}
		}
		v1 = v2
	})
	t.Run("delete: the last filtered service takes the filter items away", func(t *testing.T) {
		must(t, r.DeleteService(v1))
		mustCommits(t, c, "txn put=[] del="+keyList(filterKeys(r.cfg)...))
		assertItems(t, c.Items(), nodeOnly(r.cfg))
	})
	t.Run("deleting an unknown service is a no-op", func(t *testing.T) {
		must(t, r.DeleteService(v1))
		mustCommits(t, c)
	})
}

func TestAffinityChangeIsOnePut(t *testing.T) {
	v1 := service("sticky", "fd00:96::13", withBackends("", be(remote1), be(remote2)))
	r, c, _ := newTestRenderer(t, v1)
	v2 := v1.Clone()
	v2.SessionAffinityTimeout = 600
	must(t, r.UpdateService(v1, v2))
	// The VPP layer sees the LB type and flow hash change (NeedsRecreate)
	// and deletes and re-creates the translation; the renderer just puts it.
	mustCommits(t, c, "txn put="+keyList(trKey("[fd00:96::13]:80", tcp))+" del=[]")
	got := withoutKeepers(c.Items())[0].(*vppcfg.CNATTranslation)
	if !got.NeedsRecreate(withoutKeepers(RenderService(v1, testNode(), &r.cfg).Items)[0]) {
		t.Fatalf("turning affinity on must make the layer re-create %s", got)
	}
}

func TestUpdateNodePortServices(t *testing.T) {
	np := service("np", "fd00:96::14", withNodePort, withBackends("", be(remote1)))
	plain := service("plain", "fd00:96::10", withBackends("", be(remote1)))
	hostIP := service("hostip", "fd00:96::15", withBackends("", be(remote1)),
		func(s *model.ContivService) { s.ExternalIPs = ips("fd00:16::3") })
	r, c, _ := newTestRenderer(t, np, plain, hostIP)

	t.Run("IPv4 node IPs only: nothing to do", func(t *testing.T) {
		must(t, r.UpdateNodePortServices(ips("fd00:16::1", "fd00:16::2", "192.168.16.9"), []*model.ContivService{np}))
		mustCommits(t, c)
	})
	t.Run("a node IP replaced: its node-port translations move", func(t *testing.T) {
		must(t, r.UpdateNodePortServices(ips("fd00:16::1", "fd00:16::4"), []*model.ContivService{np}))
		mustCommits(t, c, "txn put="+keyList(trKey("[fd00:16::4]:30080", tcp))+" del="+keyList(trKey("[fd00:16::2]:30080", tcp)))
	})
	t.Run("an external IP that becomes a node IP turns into a real IP", func(t *testing.T) {
		must(t, r.UpdateNodePortServices(ips("fd00:16::1", "fd00:16::3", "fd00:16::4"), []*model.ContivService{np}))
		mustCommits(t, c, "txn put="+keyList(trKey("[fd00:16::3]:30080", tcp), trKey("[fd00:16::3]:80", tcp))+" del=[]")
		for _, it := range c.Items() {
			if it.Key() == trKey("[fd00:16::3]:80", tcp) && !it.(*vppcfg.CNATTranslation).IsRealIP {
				t.Fatalf("%s is not a real IP", it)
			}
		}
	})
}

func TestUpdateLocalInterfaces(t *testing.T) {
	empty := service("empty", "fd00:96::22")
	served := service("served", "fd00:96::23", withBackends("", be(remote1)))
	r, c, _ := newTestRenderer(t, empty, served)
	node := testNode()
	var filterKeys []vppcfg.Key
	for _, it := range r.cfg.shards().Bindings(model.NewInterfaces("tap3")) {
		if it.Key().Kind == vppcfg.KindACLBinding {
			filterKeys = append(filterKeys, it.Key())
		}
	}

	newFront := model.NewInterfaces(append(slices.Clone(node.FrontendIfs), "tap3")...)
	must(t, r.UpdateLocalFrontendIfs(node.FrontendIfs, newFront))
	mustCommits(t, c, "txn put="+keyList(filterKeys...)+" del=[]")

	must(t, r.UpdateLocalBackendIfs(nil, model.NewInterfaces("tap1", "tap3")))
	mustCommits(t, c)

	must(t, r.UpdateLocalFrontendIfs(newFront, node.FrontendIfs))
	mustCommits(t, c, "txn put=[] del="+keyList(filterKeys...))
}

func TestCommitFailureRollsBack(t *testing.T) {
	r, c, _ := newTestRenderer(t)
	svc := service("web", "fd00:96::10", withBackends("", be(remote1)))
	boom := errors.New("boom")
	c.FailNextCommit(boom)
	if err := r.AddService(svc); !errors.Is(err, boom) {
		t.Fatalf("AddService error = %v, want boom", err)
	}
	// The same call made again (the conformance suite's stricter check; the
	// processor itself resyncs after a failure) commits the same diff.
	must(t, r.AddService(svc))
	mustCommits(t, c, "txn put="+keyList(trKey("[fd00:96::10]:0", vppcfg.ProtoExperiment), trKey("[fd00:96::10]:80", tcp))+" del=[]")
	must(t, r.AddService(svc))
	mustCommits(t, c)
}

func TestConflictingFrontendsSmallestIDWins(t *testing.T) {
	shared := func(s *model.ContivService) { s.ExternalIPs = ips("2001:db8:e::10") }
	a := service("a", "fd00:96::1", shared, withBackends("", be(remote1)))
	b := service("b", "fd00:96::2", shared, withBackends("", be(remote2)))
	r, c, hook := newTestRenderer(t, b)
	holder := func() netip.AddrPort {
		for _, it := range c.Items() {
			if it.Key() == trKey("[2001:db8:e::10]:80", tcp) {
				return it.(*vppcfg.CNATTranslation).Paths[0].Dst
			}
		}
		return netip.AddrPort{}
	}
	if holder() != ap(remote2) {
		t.Fatalf("holder = %s", holder())
	}
	must(t, r.AddService(a))
	if holder() != ap(remote1) {
		t.Fatalf("after adding a, the external IP leads to %s, want a's %s", holder(), remote1)
	}
	if countLogs(hook, logrus.WarnLevel, "wanted by several services") != 1 {
		t.Fatal("no single warning about the conflict")
	}
	must(t, r.DeleteService(a))
	if holder() != ap(remote2) {
		t.Fatalf("after deleting a, the external IP leads to %s, want b's %s", holder(), remote2)
	}
}

func TestSCTPWarnsOncePerService(t *testing.T) {
	r, c, hook := newTestRenderer(t)
	v1 := service("sctp", "fd00:96::28", withPort("sig", model.ProtocolSCTP, 3868, 0), withBackends("sig", be(remote1)))
	must(t, r.AddService(v1))
	v2 := service("sctp", "fd00:96::28", withPort("sig", model.ProtocolSCTP, 3868, 0), withBackends("sig", be(remote2)))
	must(t, r.UpdateService(v1, v2))
	must(t, r.Resync(resyncEvent(testNode(), v2)))
	if n := countLogs(hook, logrus.WarnLevel, "SCTP"); n != 1 {
		t.Fatalf("%d SCTP warnings, want 1", n)
	}
	v4only := service("sctp4", "10.96.0.28", withPort("sig", model.ProtocolSCTP, 3868, 0))
	must(t, r.AddService(v4only))
	if n := countLogs(hook, logrus.WarnLevel, "SCTP"); n != 1 {
		t.Fatal("warned about the SCTP port of an IPv4-only service")
	}
	for _, it := range c.Items() {
		if tr, ok := it.(*vppcfg.CNATTranslation); ok && tr.Protocol == vppcfg.ProtoSCTP {
			t.Fatalf("SCTP translation rendered: %s", tr)
		}
	}
}

func TestLogsCarryRendererServiceAndKey(t *testing.T) {
	r, _, hook := newTestRenderer(t)
	must(t, r.AddService(service("web", "fd00:96::10", withBackends("", be(remote1)))))
	var sawService, sawKey bool
	for _, e := range hook.AllEntries() {
		if e.Data["renderer"] != Name {
			t.Fatalf("log %q without renderer=%s: %v", e.Message, Name, e.Data)
		}
		sawService = sawService || e.Data["service"] == "default/web"
		sawKey = sawKey || e.Data["key"] == trKey("[fd00:96::10]:80", tcp).String()
	}
	if !sawService || !sawKey {
		t.Fatalf("no log with the service (%t) or the key (%t)", sawService, sawKey)
	}
}

func countLogs(hook *logtest.Hook, level logrus.Level, substr string) int {
	n := 0
	for _, e := range hook.AllEntries() {
		if e.Level == level && strings.Contains(e.Message, substr) {
			n++
		}
	}
	return n
}
