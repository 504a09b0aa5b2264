package ipv6

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

// newTestRenderer returns a renderer over a mem client, resynced to the
// given services on testNode, with the resync commit already taken.
func newTestRenderer(t *testing.T, services ...*model.ContivService) (*Renderer, *memClient, *logtest.Hook) {
	t.Helper()
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	c := newMemClient()
	r, err := New(c, testConfig(), log)
	must(t, err)
	must(t, r.Resync(resyncEvent(testNode(), services...)))
	c.takeCommits()
	return r, c, hook
}

func resyncEvent(node Node, services ...*model.ContivService) *model.ResyncEventData {
	ev := &model.ResyncEventData{NodeIPs: node.IPs, FrontendIfs: node.FrontendIfs, Services: services}
	ev.SortServices()
	return ev
}

// mustCommits checks that the last calls produced exactly the given commits.
func mustCommits(t *testing.T, c *memClient, want ...string) {
	t.Helper()
	if got := c.takeCommits(); !slices.Equal(got, want) {
		t.Fatalf("commits:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func trKey(vip string, proto vppcfg.Protocol) vppcfg.Key {
	return vppcfg.CNATTranslationKey(ap(vip), proto)
}

// aclKeys are the keys of a service ACL and, when withPermitAll, of the
// shared permit-all ACL, bound on every interface of ifs.
func aclKeys(aclName string, withPermitAll bool, ifs ...string) []vppcfg.Key {
	keys := []vppcfg.Key{vppcfg.ACLKey(aclName)}
	if withPermitAll {
		keys = append(keys, vppcfg.ACLKey(renderer.PermitAllACLName))
	}
	for _, ifName := range ifs {
		keys = append(keys, vppcfg.ACLBindingKey(ifName, vppcfg.ACLInput, aclName))
		if withPermitAll {
			keys = append(keys, vppcfg.ACLBindingKey(ifName, vppcfg.ACLInput, renderer.PermitAllACLName))
		}
	}
	return keys
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := New(nil, testConfig(), nil); err == nil {
		t.Fatal("New accepted a nil client")
	}
	if _, err := New(newMemClient(), DefaultConfig(), nil); err == nil {
		t.Fatal("New accepted a config without snatAddress")
	}
}

func TestResyncOfAnEmptyClusterPutsNothing(t *testing.T) {
	c := newMemClient()
	r, err := New(c, testConfig(), nil)
	must(t, err)
	must(t, r.Resync(resyncEvent(testNode())))
	mustCommits(t, c, "resync put=[] del=[]")
}

func TestServiceLifecycle(t *testing.T) {
	r, c, _ := newTestRenderer(t)
	key := keyList(trKey("[fd00:96::10]:80", tcp))
	aclName := ACLName(model.ServiceID{Namespace: "default", Name: "web"})

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
	t.Run("a node port adds translations on the node IPs only", func(t *testing.T) {
		v2 := v1.Clone()
		withNodePort(v2)
		must(t, r.UpdateService(v1, v2))
		mustCommits(t, c, "txn put="+keyList(trKey("[fd00:16::1]:30080", tcp), trKey("[fd00:16::2]:30080", tcp))+" del=[]")
		v1 = v2
	})
	t.Run("no backend: translations replaced by a drop ACL and the shared permit-all", func(t *testing.T) {
		v2 := v1.Clone()
		v2.Backends = map[string][]model.ServiceBackend{}
		must(t, r.UpdateService(v1, v2))
		mustCommits(t, c, "txn put="+keyList(aclKeys(aclName, true, testNode().FrontendIfs...)...)+
			" del="+keyList(trKey("[fd00:96::10]:80", tcp), trKey("[fd00:16::1]:30080", tcp), trKey("[fd00:16::2]:30080", tcp)))
		v1 = v2
	})
	t.Run("delete removes everything the service owned", func(t *testing.T) {
		must(t, r.DeleteService(v1))
		mustCommits(t, c, "txn put=[] del="+keyList(aclKeys(aclName, true, testNode().FrontendIfs...)...))
		if items := c.snapshot(); len(items) != 0 {
			t.Fatalf("left after delete:\n%s", itemLines(items))
		}
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
	got := c.snapshot()[0].(*vppcfg.CNATTranslation)
	if !got.NeedsRecreate(RenderService(v1, testNode(), &r.cfg)[0]) {
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
		for _, it := range c.snapshot() {
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
	aclName := ACLName(empty.ID)
	node := testNode()

	newFront := model.NewInterfaces(append(slices.Clone(node.FrontendIfs), "tap3")...)
	must(t, r.UpdateLocalFrontendIfs(node.FrontendIfs, newFront))
	mustCommits(t, c, "txn put="+keyList(
		vppcfg.ACLBindingKey("tap3", vppcfg.ACLInput, aclName),
		vppcfg.ACLBindingKey("tap3", vppcfg.ACLInput, renderer.PermitAllACLName))+" del=[]")

	must(t, r.UpdateLocalBackendIfs(nil, model.NewInterfaces("tap1", "tap3")))
	mustCommits(t, c)

	must(t, r.UpdateLocalFrontendIfs(newFront, node.FrontendIfs))
	mustCommits(t, c, "txn put=[] del="+keyList(
		vppcfg.ACLBindingKey("tap3", vppcfg.ACLInput, aclName),
		vppcfg.ACLBindingKey("tap3", vppcfg.ACLInput, renderer.PermitAllACLName)))
}

func TestCommitFailureRollsBack(t *testing.T) {
	r, c, _ := newTestRenderer(t)
	svc := service("web", "fd00:96::10", withBackends("", be(remote1)))
	boom := errors.New("boom")
	c.failNext = boom
	if err := r.AddService(svc); !errors.Is(err, boom) {
		t.Fatalf("AddService error = %v, want boom", err)
	}
	// The processor retries with the same arguments: the same diff is committed.
	must(t, r.AddService(svc))
	mustCommits(t, c, "txn put="+keyList(trKey("[fd00:96::10]:80", tcp))+" del=[]")
	must(t, r.AddService(svc))
	mustCommits(t, c)
}

func TestConflictingFrontendsSmallestIDWins(t *testing.T) {
	shared := func(s *model.ContivService) { s.ExternalIPs = ips("2001:db8:e::10") }
	a := service("a", "fd00:96::1", shared, withBackends("", be(remote1)))
	b := service("b", "fd00:96::2", shared, withBackends("", be(remote2)))
	r, c, hook := newTestRenderer(t, b)
	holder := func() netip.AddrPort {
		for _, it := range c.snapshot() {
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
	for _, it := range c.snapshot() {
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

// TestIncrementalEqualsResync drives a renderer with seeded random
// sequences of calls, the way the processor would, and checks after every
// call that the items it holds through its client equal what a fresh
// renderer puts on Resync of the same cluster state; the mem client checks
// the invariants at every commit.
func TestIncrementalEqualsResync(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			w := newWorld(rand.New(rand.NewPCG(seed, 0x1b6)))
			r, c, _ := newTestRenderer(t)
			for step := range 60 {
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
	c := newMemClient()
	r, err := New(c, testConfig(), nil)
	must(t, err)
	must(t, r.Resync(w.event()))
	return c.snapshot()
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
	case op < 8:
		// Node IPs sometimes include an external IP of the pool.
		w.node.IPs = w.subset("fd00:16::1", "fd00:16::2", "fd00:16::3", "2001:db8:e::2", "192.168.16.1")
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
		ifs := model.NewInterfaces(w.taps()...)
		what, call = "backend ifs "+ifs.String(), func() error { return r.UpdateLocalBackendIfs(nil, ifs) }
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
// external IPs and ports (conflicts), addresses become node IPs, and
// backends come and go.
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
	if w.pick(3) == 0 {
		s.SessionAffinityTimeout = 600
	}
	s.ExternalIPs = w.subset("2001:db8:e::1", "2001:db8:e::2")
	s.LoadBalancerIPs = w.subset("2001:db8:1b::1", "2001:db8:e::2")
	if w.pick(2) == 0 {
		s.LoadBalancerSourceRanges = []netip.Prefix{pfx("2001:db8:c:1::/64"), pfx("100.64.1.0/24")}[:1+w.pick(2)]
	}
	protos := []model.Protocol{model.ProtocolTCP, model.ProtocolUDP, model.ProtocolSCTP}
	for i, name := range []string{"a", "b"}[:1+w.pick(2)] {
		var np uint16
		if w.pick(2) == 0 {
			np = uint16(30000 + 10*int(n) + i)
		}
		s.Ports[name] = model.ServicePort{Protocol: protos[w.pick(3)], Port: uint16(80 + i), NodePort: np}
		var bs []model.ServiceBackend
		for j := range 5 {
			if w.pick(2) == 0 {
				continue
			}
			b := model.ServiceBackend{IP: ip(fmt.Sprintf("fd00:1:%d::%d", 1+j%2, 2+j)), Port: 8080, Local: j%2 == 0}
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
