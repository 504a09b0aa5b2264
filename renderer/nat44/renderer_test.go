package nat44

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"

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
	return newTestRendererWith(t, testConfig(), services...)
}

func newTestRendererWith(t *testing.T, cfg Config, services ...*model.ContivService) (*Renderer, *renderertest.Client, *logtest.Hook) {
	t.Helper()
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	c := renderertest.NewClient(Name, checkNAT44)
	r, err := New(c, cfg, log)
	must(t, err)
	must(t, r.Resync(resyncEvent(testNode(), services...)))
	c.TakeCommits()
	return r, c, hook
}

func resyncEvent(node Node, services ...*model.ContivService) *model.ResyncEventData {
	ev := &model.ResyncEventData{NodeIPs: node.IPs, FrontendIfs: node.FrontendIfs, BackendIfs: node.BackendIfs, Services: services}
	ev.SortServices()
	return ev
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var (
	keyList     = renderertest.KeyList
	mustCommits = renderertest.RequireCommits
)

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

// checkNAT44 adds the renderer's own invariants to renderertest.CheckVPP:
// every mapping is out2in-only (docs: a backend must keep its source
// address, and one backend sits behind many frontends) and LB locals are in
// canonical order.
func checkNAT44(items map[vppcfg.Key]vppcfg.Item) []string {
	var errs []string
	for k, it := range items {
		switch v := it.(type) {
		case *vppcfg.NAT44LBMapping:
			if !v.Out2InOnly {
				errs = append(errs, k.String()+": not out2in-only")
			}
			if !slices.IsSortedFunc(v.Locals, func(a, b vppcfg.NAT44LBLocal) int { return a.Addr.Compare(b.Addr) }) {
				errs = append(errs, k.String()+": locals not sorted")
			}
		case *vppcfg.NAT44StaticMapping:
			if !v.Out2InOnly {
				errs = append(errs, k.String()+": not out2in-only")
			}
		}
	}
	return errs
}

// TestConformance runs the shared renderer conformance suite, with few
// shards so that services share them, and with egress SNAT (whose identity
// mappings compete with service frontends).
func TestConformance(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"default config, 3 shards": func(c *Config) { c.ACLShards = 3 },
		"egress SNAT, 1 shard": func(c *Config) {
			c.ACLShards = 1
			c.EgressSNAT = EgressSNAT{Enabled: true, Interface: "uplink0", Address: nodeIP, IdentityPorts: []PortProtocol{{80, "tcp"}}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig()
			mutate(&cfg)
			renderertest.Run(t, func(c vppcfg.Client) (vppsvc.ServiceRendererAPI, error) {
				log, _ := logtest.NewNullLogger()
				return New(c, cfg, log)
			}, renderertest.WithOwner(Name), renderertest.WithChecks(checkNAT44))
		})
	}
}

func TestResyncPutsNodeItems(t *testing.T) {
	log, _ := logtest.NewNullLogger()
	c := renderertest.NewClient(Name)
	r, err := New(c, testConfig(), log)
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
	lbKey := vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("10.96.0.10:80"), tcp)
	shard := shardKey(r.cfg, "web")

	v1 := service("web", "10.96.0.10", withBackends("", be("10.1.1.2:8080", "local"), be("10.1.2.2:8080")))
	must(t, r.AddService(v1))
	drop := vppcfgtest.DropRouteKey(pfx("10.96.0.10/32"), 0)
	mustCommits(t, c, "txn put="+keyList(drop, lbKey)+" del=[]")

	t.Run("adding a backend puts the same LB key once", func(t *testing.T) {
		v2 := service("web", "10.96.0.10", withBackends("", be("10.1.1.2:8080", "local"), be("10.1.2.2:8080"), be("10.1.2.3:8080")))
		must(t, r.UpdateService(v1, v2))
		mustCommits(t, c, "txn put="+keyList(lbKey)+" del=[]")
		v1 = v2
	})
	t.Run("an update that renders the same items commits nothing", func(t *testing.T) {
		v2 := v1.Clone()
		v2.HealthCheckNodePort = 31000
		must(t, r.UpdateService(v1, v2))
		mustCommits(t, c)
		v1 = v2
	})
	t.Run("one backend left: the same LB mapping, one local", func(t *testing.T) {
		v2 := service("web", "10.96.0.10", withBackends("", be("10.1.2.3:8080")))
		must(t, r.UpdateService(v1, v2))
		mustCommits(t, c, "txn put="+keyList(lbKey)+" del=[]")
		v1 = v2
	})
	t.Run("no backend: a drop rule; the first filtered service brings every filter shard and binding", func(t *testing.T) {
		v2 := service("web", "10.96.0.10")
		must(t, r.UpdateService(v1, v2))
		mustCommits(t, c, "txn put="+keyList(filterKeys(r.cfg)...)+" del="+keyList(lbKey))
		if acl := findItem(c.Items(), shard).(*vppcfg.ACL); !slices.Equal(acl.Rules, []vppcfg.ACLRule{deny("10.96.0.10", tcp, 80)}) {
			t.Fatalf("the service's shard holds %s", acl)
		}
		v1 = v2
	})
	t.Run("delete: the last filtered service takes the filter items away, only the node items stay", func(t *testing.T) {
		must(t, r.DeleteService(v1))
		mustCommits(t, c, "txn put=[] del="+keyList(append(filterKeys(r.cfg), drop)...))
		assertItems(t, c.Items(), nodeOnly(r.cfg))
	})
	t.Run("deleting an unknown service is a no-op", func(t *testing.T) {
		must(t, r.DeleteService(v1))
		mustCommits(t, c)
	})
	t.Run("a single-stack IPv6 NodePort service is not this renderer's business", func(t *testing.T) {
		v6 := service("v6", "fd00:96::10", withPort("", model.ProtocolTCP, 80, nodePort))
		must(t, r.AddService(v6))
		mustCommits(t, c)
	})
}

// TestFilterShardsHoldServicesInOrder checks the shard composition: with one
// shard, two services' rules share it, each service's rules together and in
// order, by service ID; a change of one rewrites the shard in place and
// never touches a binding.
func TestFilterShardsHoldServicesInOrder(t *testing.T) {
	cfg := testConfig()
	cfg.ACLShards = 1
	a := service("a", "10.96.0.1", withPort("", model.ProtocolTCP, 80, nodePort))
	b := service("b", "10.96.0.2")
	r, c, _ := newTestRendererWith(t, cfg, b)
	must(t, r.AddService(a))
	shard := vppcfg.ACLKey("nat44-filter-00")
	mustCommits(t, c, "txn put="+keyList(shard, vppcfgtest.DropRouteKey(pfx("10.96.0.1/32"), 0))+" del=[]")
	want := []vppcfg.ACLRule{
		deny("10.96.0.1", tcp, 80), deny("192.168.16.1", tcp, nodePort), deny("192.168.16.2", tcp, nodePort),
		deny("10.96.0.2", tcp, 80),
	}
	acl := findItem(c.Items(), shard).(*vppcfg.ACL)
	if !slices.Equal(acl.Rules, want) {
		t.Fatalf("shard rules:\n  %v\nwant\n  %v", acl.Rules, want)
	}
	a2 := a.Clone()
	a2.SetBackends("", []model.ServiceBackend{be("10.1.2.2:8080")})
	must(t, r.UpdateService(a, a2))
	commits := c.TakeCommits()
	if len(commits) != 1 || !slices.Contains(commits[0].Puts, shard) {
		t.Fatalf("commits %v, want one that replaces the shard", commits)
	}
	for _, k := range append(commits[0].Puts, commits[0].Deletes...) {
		if k.Kind == vppcfg.KindACLBinding {
			t.Fatalf("a service change wrote binding %s", k)
		}
	}
	acl = findItem(c.Items(), shard).(*vppcfg.ACL)
	if !slices.Equal(acl.Rules, want[3:]) {
		t.Fatalf("shard rules after a got an endpoint: %v, want only b's", acl.Rules)
	}
}

func findItem(items []vppcfg.Item, k vppcfg.Key) vppcfg.Item {
	for _, it := range items {
		if it.Key() == k {
			return it
		}
	}
	return nil
}

func TestAffinityBackendRemovalRecreatesMapping(t *testing.T) {
	sticky := func(s *model.ContivService) { s.SessionAffinityTimeout = 600 }
	v1 := service("sticky", "10.96.0.13", sticky, withBackends("", be("10.1.2.2:8080"), be("10.1.2.3:8080"), be("10.1.2.4:8080")))
	r, c, _ := newTestRenderer(t, v1)
	key := keyList(vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("10.96.0.13:80"), tcp))

	v2 := service("sticky", "10.96.0.13", sticky, withBackends("", be("10.1.2.2:8080"), be("10.1.2.3:8080"), be("10.1.2.4:8080"), be("10.1.2.5:8080")))
	must(t, r.UpdateService(v1, v2))
	mustCommits(t, c, "txn put="+key+" del=[]") // an addition keeps affinity records valid

	v3 := service("sticky", "10.96.0.13", sticky, withBackends("", be("10.1.2.2:8080"), be("10.1.2.3:8080"), be("10.1.2.5:8080")))
	must(t, r.UpdateService(v2, v3))
	mustCommits(t, c, "txn put="+key+" del=[]") // the VPP layer re-creates it (NAT44LBMapping's descriptor)

	// Without affinity a removal is a plain put (the layer removes the local).
	v4 := v3.Clone()
	v4.SessionAffinityTimeout = 0
	must(t, r.UpdateService(v3, v4))
	mustCommits(t, c, "txn put="+key+" del=[]")
	v5 := service("sticky", "10.96.0.13", withBackends("", be("10.1.2.2:8080"), be("10.1.2.3:8080")))
	must(t, r.UpdateService(v4, v5))
	mustCommits(t, c, "txn put="+key+" del=[]")
}

func TestUpdateNodePortServices(t *testing.T) {
	np := service("np", "10.96.0.14", withBackends("", be("10.1.2.2:8080"), be("10.1.2.3:8080")), func(s *model.ContivService) {
		s.SetPort("", model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: nodePort})
	})
	plain := service("plain", "10.96.0.10", withBackends("", be("10.1.2.2:8080"), be("10.1.2.3:8080")))
	r, c, _ := newTestRenderer(t, np, plain)

	must(t, r.UpdateNodePortServices(ips("192.168.16.1", "192.168.16.3"), []*model.ContivService{np}))
	mustCommits(t, c, "txn put="+keyList(vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("192.168.16.3:30080"), tcp))+
		" del="+keyList(vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("192.168.16.2:30080"), tcp)))

	// Same IPs again: nothing to do.
	must(t, r.UpdateNodePortServices(ips("192.168.16.1", "192.168.16.3"), []*model.ContivService{np}))
	mustCommits(t, c)
}

func TestUpdateLocalInterfaces(t *testing.T) {
	empty := service("empty", "10.96.0.22")
	r, c, _ := newTestRenderer(t, empty)
	node := testNode()
	filterKeys := func(ifName string) []vppcfg.Key {
		var keys []vppcfg.Key
		for _, it := range r.cfg.shards().Bindings(model.NewInterfaces(ifName)) {
			if it.Key().Kind == vppcfg.KindACLBinding {
				keys = append(keys, it.Key())
			}
		}
		return keys
	}

	// A new pod's interface: the filter ACLs and the outside role (no
	// service needs the short-circuit, so no cnat feature).
	tap3 := append(filterKeys("tap3"), vppcfgtest.NAT44InterfaceKey("tap3", vppcfg.NAT44Outside))
	newFront := model.NewInterfaces(append(slices.Clone(node.FrontendIfs), "tap3")...)
	must(t, r.UpdateLocalFrontendIfs(node.FrontendIfs, newFront))
	mustCommits(t, c, "txn put="+keyList(tap3...)+" del=[]")

	must(t, r.UpdateLocalBackendIfs(node.BackendIfs, model.NewInterfaces("tap1", "tap3")))
	mustCommits(t, c, "txn put="+keyList(vppcfgtest.NAT44InterfaceKey("tap3", vppcfg.NAT44Inside))+" del=[]")

	must(t, r.UpdateLocalFrontendIfs(newFront, node.FrontendIfs))
	mustCommits(t, c, "txn put=[] del="+keyList(tap3...))
}

func TestCommitFailureRollsBack(t *testing.T) {
	r, c, _ := newTestRenderer(t)
	before := c.Items()
	svc := service("web", "10.96.0.10", withBackends("", be("10.1.2.2:8080"), be("10.1.2.3:8080")))
	boom := errors.New("boom")
	c.FailNextCommit(boom)
	if err := r.AddService(svc); !errors.Is(err, boom) {
		t.Fatalf("AddService error = %v, want boom", err)
	}
	assertItems(t, c.Items(), before)
	// The same call made again (the conformance suite's stricter check; the
	// processor itself resyncs after a failure) commits the same diff.
	must(t, r.AddService(svc))
	mustCommits(t, c, "txn put="+keyList(vppcfgtest.DropRouteKey(pfx("10.96.0.10/32"), 0), vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("10.96.0.10:80"), tcp))+" del=[]")
	must(t, r.AddService(svc))
	mustCommits(t, c)
}

func TestConflictingFrontendsSmallestIDWins(t *testing.T) {
	shared := func(s *model.ContivService) { s.ExternalIPs = ips("203.0.113.10") }
	a := service("a", "10.96.0.1", shared, withBackends("", be("10.1.2.1:8080")))
	b := service("b", "10.96.0.2", shared, withBackends("", be("10.1.2.2:8080")))
	r, c, hook := newTestRenderer(t, b)
	ext := vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("203.0.113.10:80"), tcp)
	holder := func() string {
		for _, it := range c.Items() {
			if it.Key() == ext {
				return it.(*vppcfg.NAT44LBMapping).Label
			}
		}
		return ""
	}
	if holder() != "default/b" {
		t.Fatalf("holder = %q", holder())
	}
	must(t, r.AddService(a))
	if holder() != "default/a" {
		t.Fatalf("after adding a, holder = %q, want default/a", holder())
	}
	if !hasLog(hook, logrus.WarnLevel, "wanted by several services") {
		t.Fatal("no warning about the conflict")
	}
	must(t, r.DeleteService(a))
	if holder() != "default/b" {
		t.Fatalf("after deleting a, holder = %q, want default/b", holder())
	}
}

func TestSCTPWarnsOncePerService(t *testing.T) {
	r, _, hook := newTestRenderer(t)
	v1 := service("sctp", "10.96.0.28", withPort("sig", model.ProtocolSCTP, 3868, 0), withBackends("", be("10.1.2.2:8080")))
	must(t, r.AddService(v1))
	v2 := service("sctp", "10.96.0.28", withPort("sig", model.ProtocolSCTP, 3868, 0), withBackends("", be("10.1.2.3:8080")))
	must(t, r.UpdateService(v1, v2))
	must(t, r.Resync(resyncEvent(testNode(), v2)))
	if n := countLogs(hook, logrus.WarnLevel, "SCTP"); n != 1 {
		t.Fatalf("%d SCTP warnings, want 1", n)
	}
}

func hasLog(hook *logtest.Hook, level logrus.Level, substr string) bool {
	return countLogs(hook, level, substr) > 0
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

func TestEgressIdentityPortWinsOverServiceFrontend(t *testing.T) {
	log, hook := logtest.NewNullLogger()
	cfg := testConfig()
	cfg.EgressSNAT = EgressSNAT{Enabled: true, Interface: "uplink0", Address: nodeIP, IdentityPorts: []PortProtocol{{4789, "udp"}}}
	c := renderertest.NewClient(Name)
	r, err := New(c, cfg, log)
	must(t, err)
	// An external IP equal to the node IP, on the VXLAN port.
	vx := service("vx", "10.96.0.40", withoutDefaultPort, withPort("vx", model.ProtocolUDP, 4789, 0),
		withBackends("vx", be("10.1.2.2:4789"), be("10.1.2.3:4789")),
		func(s *model.ContivService) { s.ExternalIPs = ips("192.168.16.1") })
	must(t, r.Resync(resyncEvent(testNode(), vx)))
	identity := vppcfgtest.NAT44IdentityMappingKey(nodeIP, 4789, udp, 0)
	lb := vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("192.168.16.1:4789"), udp)
	keys := map[vppcfg.Key]bool{}
	for _, it := range c.Items() {
		keys[it.Key()] = true
	}
	if !keys[identity] || keys[lb] {
		t.Fatalf("identity mapping present=%v, conflicting LB mapping present=%v", keys[identity], keys[lb])
	}
	if !keys[vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("10.96.0.40:4789"), udp)] {
		t.Fatal("the ClusterIP mapping is missing")
	}
	must(t, r.DeleteService(vx))
	if !slices.ContainsFunc(c.Items(), func(it vppcfg.Item) bool { return it.Key() == identity }) {
		t.Fatal("deleting the service removed the identity mapping")
	}
	if !hasLog(hook, logrus.WarnLevel, "egress SNAT identity port") {
		t.Fatal("no warning about the service frontend hidden by the identity mapping")
	}
}

func TestLogsCarryRendererServiceAndKey(t *testing.T) {
	r, _, hook := newTestRenderer(t)
	must(t, r.AddService(service("web", "10.96.0.10", withBackends("", be("10.1.2.2:8080"), be("10.1.2.3:8080")))))
	want := vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("10.96.0.10:80"), tcp).String()
	for _, e := range hook.AllEntries() {
		if e.Message == "put" && e.Data["key"] == want {
			if e.Data["renderer"] != Name || e.Data["service"] != "default/web" {
				t.Fatalf("put logged with fields %v", e.Data)
			}
			return
		}
	}
	t.Fatalf("no debug log of the put of %s", want)
}

// TestShortCircuitFeaturesFollowServices: cnat's feature nodes run on the
// internal frontend interfaces only while some service needs the
// short-circuit; they come with the first such service and go with the last,
// in the same transaction as its translations, and follow new interfaces.
func TestShortCircuitFeaturesFollowServices(t *testing.T) {
	r, c, _ := newTestRenderer(t)
	features := func(ifs ...string) []vppcfg.Key {
		var keys []vppcfg.Key
		for _, ifName := range ifs {
			for _, it := range shortCircuitFeatures(ifName) {
				keys = append(keys, it.Key())
			}
		}
		return keys
	}
	internal := []string{"host0", "tap1", "tap2"}
	local := func(name, ip string) *model.ContivService {
		return service(name, ip, func(s *model.ContivService) {
			s.ExternalTrafficPolicy = model.TrafficPolicyLocal
			s.LoadBalancerIPs = ips("198.51.100." + ip[len(ip)-2:])
		}, withBackends("", be("10.1.2.2:8080")))
	}
	sc := func(s *model.ContivService) vppcfg.Key {
		return vppcfgtest.CNATTranslationKey(netip.AddrPortFrom(s.LoadBalancerIPs[0], 80), vppcfg.ProtoTCP)
	}
	a, b := local("a", "10.96.0.31"), local("b", "10.96.0.32")

	must(t, r.AddService(a))
	commit := commitText(c)
	for _, k := range append(features(internal...), sc(a)) {
		assert.Contains(t, commit, k.String(), "the first service brings the features, in its own transaction")
	}
	assert.NotContains(t, commit, "uplink0/ip4-unicast/cnat-input-ip4", "never on the uplink")

	must(t, r.AddService(b))
	commit = commitText(c)
	assert.Contains(t, commit, sc(b).String())
	assert.NotContains(t, commit, "cnat-input-ip4", "the features are already there")

	must(t, r.UpdateService(b, service("b", "10.96.0.32", withBackends("", be("10.1.2.2:8080")))))
	commit = commitText(c)
	assert.NotContains(t, commit, "cnat-input-ip4", "a still needs them")

	node := testNode()
	must(t, r.UpdateLocalFrontendIfs(node.FrontendIfs, model.NewInterfaces(append(slices.Clone(node.FrontendIfs), "tap3")...)))
	commit = commitText(c)
	for _, k := range features("tap3") {
		assert.Contains(t, commit, k.String(), "a new pod interface gets them")
	}

	must(t, r.DeleteService(a))
	commit = commitText(c)
	for _, k := range append(features(append(internal, "tap3")...), sc(a)) {
		assert.Contains(t, commit, "del=", "the last service takes them away")
		assert.Contains(t, commit, k.String())
	}

	// A Resync with a Local service brings them back, one without does not.
	must(t, r.Resync(resyncEvent(node, a)))
	assert.Contains(t, commitText(c), features("tap1")[0].String())
	must(t, r.Resync(resyncEvent(node)))
	c.TakeCommits()
	for _, it := range c.Items() {
		assert.NotEqual(t, vppcfg.KindInterfaceFeature, it.Key().Kind, "%s left after a Resync without Local services", it.Key())
	}
}

// commitText is the commits since the last take, one per line.
func commitText(c *renderertest.Client) string {
	var lines []string
	for _, m := range c.TakeCommits() {
		lines = append(lines, fmt.Sprint(m))
	}
	return strings.Join(lines, "\n")
}
