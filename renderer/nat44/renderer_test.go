package nat44

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// newTestRenderer returns a renderer over a fake client, resynced to an
// empty cluster on testNode, with the resync commit already taken.
func newTestRenderer(t *testing.T, services ...*model.ContivService) (*Renderer, *fakeClient, *logtest.Hook) {
	t.Helper()
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	c := newFakeClient()
	r, err := New(c, testConfig(), log)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Resync(resyncEvent(testNode(), services...)); err != nil {
		t.Fatal(err)
	}
	c.takeCommits()
	return r, c, hook
}

func resyncEvent(node Node, services ...*model.ContivService) *model.ResyncEventData {
	ev := &model.ResyncEventData{NodeIPs: node.IPs, FrontendIfs: node.FrontendIfs, BackendIfs: node.BackendIfs, Services: services}
	ev.SortServices()
	return ev
}

// mustCommits checks that the last call produced exactly the given commits.
func mustCommits(t *testing.T, c *fakeClient, want ...string) {
	t.Helper()
	got := c.takeCommits()
	lines := make([]string, len(got))
	for i, l := range got {
		lines[i] = l.String()
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("commits:\n  %s\nwant:\n  %s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func nodeKeys(filtering bool) []vppcfg.Key {
	cfg := testConfig()
	var keys []vppcfg.Key
	for _, it := range RenderNode(testNode(), &cfg, filtering) {
		keys = append(keys, it.Key())
	}
	return keys
}

// keyList renders keys as the fake client logs them.
func keyList(keys ...vppcfg.Key) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k.String()
	}
	slices.Sort(s)
	return "[" + strings.Join(s, " ") + "]"
}

func TestResyncPutsNodeItems(t *testing.T) {
	log, _ := logtest.NewNullLogger()
	c := newFakeClient()
	r, err := New(c, testConfig(), log)
	must(t, err)
	must(t, r.Resync(resyncEvent(testNode())))
	mustCommits(t, c, "resync put="+keyList(nodeKeys(false)...)+" del=[]")
}

func TestServiceLifecycle(t *testing.T) {
	r, c, _ := newTestRenderer(t)
	lbKey := vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("10.96.0.10:80"), tcp)
	smKey := vppcfg.NAT44MappingKey(vppcfg.KindNAT44StaticMapping, ap("10.96.0.10:80"), tcp)
	aclName := ACLName(model.ServiceID{Namespace: "default", Name: "web"})

	v1 := service("web", "10.96.0.10", withBackends("", be("10.1.1.2:8080", "local"), be("10.1.2.2:8080")))
	must(t, r.AddService(v1))
	mustCommits(t, c, "txn put="+keyList(lbKey)+" del=[]")

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
	t.Run("one backend left: the LB mapping becomes a static mapping", func(t *testing.T) {
		v2 := service("web", "10.96.0.10", withBackends("", be("10.1.2.3:8080")))
		must(t, r.UpdateService(v1, v2))
		mustCommits(t, c, "txn put="+keyList(smKey)+" del="+keyList(lbKey))
		v1 = v2
	})
	t.Run("no backend: mapping replaced by a drop ACL and the shared permit-all", func(t *testing.T) {
		v2 := service("web", "10.96.0.10")
		must(t, r.UpdateService(v1, v2))
		puts := []vppcfg.Key{vppcfg.ACLKey(aclName), vppcfg.ACLKey(renderer.PermitAllACLName)}
		for _, ifName := range testNode().FrontendIfs {
			puts = append(puts, vppcfg.ACLBindingKey(ifName, vppcfg.ACLInput, aclName),
				vppcfg.ACLBindingKey(ifName, vppcfg.ACLInput, renderer.PermitAllACLName))
		}
		mustCommits(t, c, "txn put="+keyList(puts...)+" del="+keyList(smKey))
		v1 = v2
	})
	t.Run("delete removes everything the service owned", func(t *testing.T) {
		must(t, r.DeleteService(v1))
		got := c.takeCommits()
		if len(got) != 1 || len(got[0].Puts) != 0 || len(got[0].Deletes) != 2+2*len(testNode().FrontendIfs) {
			t.Fatalf("commits %v", got)
		}
		assertItems(t, c.snapshot(), RenderNode(testNode(), &r.cfg, false))
	})
	t.Run("deleting an unknown service is a no-op", func(t *testing.T) {
		must(t, r.DeleteService(v1))
		mustCommits(t, c)
	})
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
	mustCommits(t, c, "txn put=[] del="+key, "txn put="+key+" del=[]")

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
		s.Ports[""] = model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: nodePort}
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
	aclName := ACLName(empty.ID)
	node := testNode()

	newFront := model.NewInterfaces(append(slices.Clone(node.FrontendIfs), "tap3")...)
	must(t, r.UpdateLocalFrontendIfs(node.FrontendIfs, newFront))
	mustCommits(t, c, "txn put="+keyList(
		vppcfg.NAT44InterfaceKey("tap3", vppcfg.NAT44Outside),
		vppcfg.ACLBindingKey("tap3", vppcfg.ACLInput, aclName),
		vppcfg.ACLBindingKey("tap3", vppcfg.ACLInput, renderer.PermitAllACLName))+" del=[]")

	must(t, r.UpdateLocalBackendIfs(node.BackendIfs, model.NewInterfaces("tap1", "tap3")))
	mustCommits(t, c, "txn put="+keyList(vppcfg.NAT44InterfaceKey("tap3", vppcfg.NAT44Inside))+" del=[]")

	must(t, r.UpdateLocalFrontendIfs(newFront, node.FrontendIfs))
	mustCommits(t, c, "txn put=[] del="+keyList(
		vppcfg.NAT44InterfaceKey("tap3", vppcfg.NAT44Outside),
		vppcfg.ACLBindingKey("tap3", vppcfg.ACLInput, aclName),
		vppcfg.ACLBindingKey("tap3", vppcfg.ACLInput, renderer.PermitAllACLName)))
}

func TestCommitFailureRollsBack(t *testing.T) {
	r, c, _ := newTestRenderer(t)
	before := c.snapshot()
	svc := service("web", "10.96.0.10", withBackends("", be("10.1.2.2:8080"), be("10.1.2.3:8080")))
	boom := errors.New("boom")
	c.failNext = boom
	if err := r.AddService(svc); !errors.Is(err, boom) {
		t.Fatalf("AddService error = %v, want boom", err)
	}
	assertItems(t, c.snapshot(), before)
	// The processor retries with the same arguments: the same diff is committed.
	must(t, r.AddService(svc))
	mustCommits(t, c, "txn put="+keyList(vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("10.96.0.10:80"), tcp))+" del=[]")
	must(t, r.AddService(svc))
	mustCommits(t, c)
}

func TestConflictingFrontendsSmallestIDWins(t *testing.T) {
	shared := func(s *model.ContivService) { s.ExternalIPs = ips("203.0.113.10") }
	a := service("a", "10.96.0.1", shared, withBackends("", be("10.1.2.1:8080")))
	b := service("b", "10.96.0.2", shared, withBackends("", be("10.1.2.2:8080")))
	r, c, hook := newTestRenderer(t, b)
	ext := vppcfg.NAT44MappingKey(vppcfg.KindNAT44StaticMapping, ap("203.0.113.10:80"), tcp)
	holder := func() string {
		for _, it := range c.snapshot() {
			if it.Key() == ext {
				return it.(*vppcfg.NAT44StaticMapping).Label
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

// TestIncrementalEqualsResync drives a renderer with random sequences of
// calls, the way the processor would, and checks after every call that the
// items it holds through its client equal what a fresh renderer puts on
// Resync of the same cluster state; the fake client checks the VPP
// invariants at every commit.
func TestIncrementalEqualsResync(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			w := newWorld(rng)
			r, c, _ := newTestRenderer(t)
			for step := 0; step < 60; step++ {
				what, err := w.step(r)
				if err != nil {
					t.Fatalf("step %d (%s): %v", step, what, err)
				}
				want := resyncedItems(t, w)
				if got := c.snapshot(); !equalItems(got, want) {
					t.Fatalf("step %d (%s): incremental state differs from resync\n--- incremental\n%s--- resync\n%s",
						step, what, itemLines(got), itemLines(want))
				}
			}
			// A Resync of the same state changes nothing.
			before := c.snapshot()
			must(t, r.Resync(w.event()))
			assertItems(t, c.snapshot(), before)
		})
	}
}

func resyncedItems(t *testing.T, w *world) []vppcfg.Item {
	t.Helper()
	c := newFakeClient()
	log, _ := logtest.NewNullLogger()
	r, err := New(c, testConfig(), log)
	must(t, err)
	must(t, r.Resync(w.event()))
	return c.snapshot()
}

func equalItems(a, b []vppcfg.Item) bool {
	return slices.EqualFunc(a, b, func(x, y vppcfg.Item) bool { return x.Key() == y.Key() && x.Equal(y) })
}

// world is a random cluster as the processor sees it.
type world struct {
	rng      *rand.Rand
	services map[model.ServiceID]*model.ContivService
	node     Node
}

func newWorld(rng *rand.Rand) *world {
	return &world{rng: rng, services: map[model.ServiceID]*model.ContivService{}, node: testNode()}
}

func (w *world) event() *model.ResyncEventData {
	var svcs []*model.ContivService
	for _, s := range w.services {
		svcs = append(svcs, s)
	}
	return resyncEvent(w.node, svcs...)
}

func (w *world) pick(n int) int { return w.rng.IntN(n) }

// step makes one random change and tells the renderer, sometimes twice (a
// processor retry must be harmless).
func (w *world) step(r *Renderer) (string, error) {
	var what string
	var call func() error
	switch op := w.pick(10); {
	case op < 6:
		id := model.ServiceID{Namespace: "ns", Name: fmt.Sprint("svc", w.pick(6))}
		old := w.services[id]
		if old != nil && w.pick(4) == 0 {
			delete(w.services, id)
			what, call = "delete "+id.String(), func() error { return r.DeleteService(old) }
			break
		}
		svc := w.randomService(id)
		w.services[id] = svc
		if old == nil {
			what, call = "add "+svc.String(), func() error { return r.AddService(svc) }
		} else {
			what, call = "update "+svc.String(), func() error { return r.UpdateService(old, svc) }
		}
	case op < 7:
		w.node.IPs = w.subset("192.168.16.1", "192.168.16.2", "192.168.16.3", "fd00:16::1")
		var np []*model.ContivService
		for _, s := range w.services {
			if s.HasNodePort() {
				np = append(np, s)
			}
		}
		what, call = "node IPs "+w.node.IPs.String(), func() error { return r.UpdateNodePortServices(w.node.IPs, np) }
	case op < 9:
		old := w.node.FrontendIfs
		w.node.FrontendIfs = model.NewInterfaces(append([]string{"uplink0", "host0"}, w.taps()...)...)
		what, call = "frontend ifs "+w.node.FrontendIfs.String(), func() error { return r.UpdateLocalFrontendIfs(old, w.node.FrontendIfs) }
	default:
		old := w.node.BackendIfs
		w.node.BackendIfs = model.NewInterfaces(w.taps()...)
		what, call = "backend ifs "+w.node.BackendIfs.String(), func() error { return r.UpdateLocalBackendIfs(old, w.node.BackendIfs) }
	}
	if err := call(); err != nil {
		return what, err
	}
	if w.pick(5) == 0 {
		return what + " (repeated)", call()
	}
	return what, nil
}

func (w *world) taps() []string {
	var out []string
	for i := range 4 {
		if w.pick(2) == 0 {
			out = append(out, fmt.Sprint("tap", i))
		}
	}
	return out
}

func (w *world) subset(addrs ...string) model.IPAddresses {
	var out []string
	for _, a := range addrs {
		if w.pick(2) == 0 {
			out = append(out, a)
		}
	}
	return ips(out...)
}

// randomService draws a service from small pools, so that services share
// external IPs and ports (conflicts) and backends come and go.
func (w *world) randomService(id model.ServiceID) *model.ContivService {
	n := id.Name[len(id.Name)-1] - '0'
	s := &model.ContivService{
		ID:         id,
		ClusterIPs: ips(fmt.Sprintf("10.96.0.%d", 10+n), fmt.Sprintf("fd00:96::%d", 10+n)),
		Ports:      map[string]model.ServicePort{},
		Backends:   map[string][]model.ServiceBackend{},
	}
	if w.pick(2) == 0 {
		s.ExternalTrafficPolicy = model.TrafficPolicyLocal
	}
	if w.pick(4) == 0 {
		s.InternalTrafficPolicy = model.TrafficPolicyLocal
	}
	if w.pick(2) == 0 {
		s.SessionAffinityTimeout = 600
	}
	s.ExternalIPs = w.subset("203.0.113.1", "203.0.113.2")
	s.LoadBalancerIPs = w.subset("198.51.100.1", "203.0.113.2")
	if w.pick(2) == 0 {
		s.LoadBalancerSourceRanges = []netip.Prefix{pfx("100.64.1.0/24"), pfx("2001:db8::/32")}[:1+w.pick(2)]
	}
	protos := []model.Protocol{model.ProtocolTCP, model.ProtocolUDP, model.ProtocolSCTP}
	for i, name := range []string{"a", "b"}[:1+w.pick(2)] {
		var nodePort uint16
		if w.pick(2) == 0 {
			nodePort = uint16(30000 + 10*int(n) + i)
		}
		s.Ports[name] = model.ServicePort{Protocol: protos[w.pick(3)], Port: uint16(80 + i), NodePort: nodePort}
		var bs []model.ServiceBackend
		for j := range 5 {
			if w.pick(2) == 0 {
				continue
			}
			b := model.ServiceBackend{IP: ip(fmt.Sprintf("10.1.%d.%d", 1+j%2, 2+j)), Port: 8080, Local: j%2 == 0}
			if w.pick(6) == 0 {
				b.Terminating = true
			}
			bs = append(bs, b)
		}
		slices.SortFunc(bs, model.CompareBackends)
		s.Backends[name] = bs
	}
	return s
}

func TestEgressIdentityPortWinsOverServiceFrontend(t *testing.T) {
	log, hook := logtest.NewNullLogger()
	cfg := testConfig()
	cfg.EgressSNAT = EgressSNAT{Enabled: true, Interface: "uplink0", Address: nodeIP, IdentityPorts: []PortProtocol{{4789, "udp"}}}
	c := newFakeClient()
	r, err := New(c, cfg, log)
	must(t, err)
	// An external IP equal to the node IP, on the VXLAN port.
	vx := service("vx", "10.96.0.40", withoutDefaultPort, withPort("vx", model.ProtocolUDP, 4789, 0),
		withBackends("vx", be("10.1.2.2:4789"), be("10.1.2.3:4789")),
		func(s *model.ContivService) { s.ExternalIPs = ips("192.168.16.1") })
	must(t, r.Resync(resyncEvent(testNode(), vx)))
	identity := vppcfg.NAT44IdentityMappingKey(nodeIP, 4789, udp, 0)
	lb := vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("192.168.16.1:4789"), udp)
	keys := map[vppcfg.Key]bool{}
	for _, it := range c.snapshot() {
		keys[it.Key()] = true
	}
	if !keys[identity] || keys[lb] {
		t.Fatalf("identity mapping present=%v, conflicting LB mapping present=%v", keys[identity], keys[lb])
	}
	if !keys[vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, ap("10.96.0.40:4789"), udp)] {
		t.Fatal("the ClusterIP mapping is missing")
	}
	must(t, r.DeleteService(vx))
	if !slices.ContainsFunc(c.snapshot(), func(it vppcfg.Item) bool { return it.Key() == identity }) {
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
