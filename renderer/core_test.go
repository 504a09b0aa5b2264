package renderer_test

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// toyNode is the node context of toyCore: frontend interfaces only.
type toyNode struct{ ifs model.Interfaces }

func (n toyNode) Equal(o toyNode) bool                              { return n.ifs.Equal(o.ifs) }
func (n toyNode) FrontendInterfaces() model.Interfaces              { return n.ifs }
func (n toyNode) WithFrontendInterfaces(i model.Interfaces) toyNode { return toyNode{i} }

// toyCore drives a Core with a toy translation: one static mapping per
// ClusterIP to the service's first backend, a deny rule for a ClusterIP
// without backends, and an LB mapping whenever there are several backends.
func toyCore(t *testing.T, shards int) (*renderer.Core[toyNode], *renderertest.Client) {
	t.Helper()
	c := renderertest.NewClient("toy")
	core, err := renderer.NewCore(renderer.CoreConfig[toyNode]{
		Name:   "toy",
		Client: c,
		Log:    quiet(),
		Shards: renderer.ACLShards{Renderer: "toy", Count: shards, Family: renderer.IPv4},
		NodeOf: func(ev *model.ResyncEventData) toyNode { return toyNode{ev.FrontendIfs} },
		RenderService: func(svc *model.ContivService, _ toyNode, items []vppcfg.Item) renderer.Rendering {
			r := renderer.Rendering{Items: items[:0]} // the core's room, reused for every service
			for _, fe := range renderer.Frontends(svc, nil, renderer.IPv4) {
				bs := svc.ClusterBackends(fe.PortName)
				switch len(bs) {
				case 0:
					r.Rules = append(r.Rules, renderer.FrontendRule(vppcfg.ACLDeny, netip.MustParsePrefix("0.0.0.0/0"), fe))
				case 1:
					r.Items = append(r.Items, &vppcfg.NAT44StaticMapping{External: fe.Addr, Protocol: fe.Protocol, Local: bs[0].AddrPort(), Out2InOnly: true})
				default:
					m := &vppcfg.NAT44LBMapping{External: fe.Addr, Protocol: fe.Protocol, Out2InOnly: true}
					for _, b := range bs {
						m.Locals = append(m.Locals, vppcfg.NAT44LBLocal{Addr: b.AddrPort(), Probability: 1})
					}
					r.Items = append(r.Items, m)
				}
			}
			return r
		},
		RenderNode: func(toyNode) []vppcfg.Item { return []vppcfg.Item{&vppcfg.NAT44Global{Forwarding: true}} },
		Claim: func(it vppcfg.Item) vppcfg.Key {
			if m, ok := it.(*vppcfg.NAT44StaticMapping); ok {
				return vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, m.External, m.Protocol)
			}
			return it.Key()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return core, c
}

func quiet() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func toySvc(name, clusterIP string, backends ...string) *model.ContivService {
	s := &model.ContivService{
		ID:         model.ServiceID{Namespace: "default", Name: name},
		ClusterIPs: model.NewIPAddresses(netip.MustParseAddr(clusterIP)),
		Ports:      []model.NamedPort{{ServicePort: model.ServicePort{Protocol: model.ProtocolTCP, Port: 80}}},
	}
	for _, b := range backends {
		a := netip.MustParseAddrPort(b)
		s.SetBackends("", append(s.Backends(""), model.ServiceBackend{IP: a.Addr(), Port: a.Port()}))
	}
	return s
}

// TestCoreFilterItemsFollowFilteredServices: the filter shards, their
// bindings and the permit-all ACL come with the first service that has
// filter rules and go with the last one; in between, a service changes only
// its own shard.
func TestCoreFilterItemsFollowFilteredServices(t *testing.T) {
	core, c := toyCore(t, 2)
	must(t, core.Resync(&model.ResyncEventData{FrontendIfs: model.NewInterfaces("tap0")}))
	renderertest.RequireCommits(t, c, "resync put=[nat44-global/global] del=[]")

	all := renderertest.KeyList(renderertest.FilterKeys(renderer.ACLShards{Renderer: "toy", Count: 2, Family: renderer.IPv4}, model.NewInterfaces("tap0"))...)
	a, b := toySvc("a", "10.96.0.1"), toySvc("b", "10.96.0.2")
	must(t, core.AddService(a))
	renderertest.RequireCommits(t, c, "txn put="+all+" del=[]")
	must(t, core.AddService(b))
	shardB := "acl/toy-filter-0" + fmt.Sprint(renderer.ACLShards{Count: 2}.Of(b.ID))
	renderertest.RequireCommits(t, c, "txn put=["+shardB+"] del=[]")
	must(t, core.DeleteService(b))
	renderertest.RequireCommits(t, c, "txn put=["+shardB+"] del=[]")
	must(t, core.DeleteService(a))
	renderertest.RequireCommits(t, c, "txn put=[] del="+all)
}

func TestCoreWritesOnlyWhatChanged(t *testing.T) {
	core, c := toyCore(t, 1)
	keep := toySvc("keep", "10.96.0.9") // filtered throughout: the filter items stay
	must(t, core.Resync(&model.ResyncEventData{FrontendIfs: model.NewInterfaces("tap0"), Services: []*model.ContivService{keep}}))
	c.TakeCommits()
	lb := "nat44-lb-mapping/10.96.0.1:80/tcp"
	static := "nat44-static-mapping/10.96.0.1:80/tcp"

	v1 := toySvc("a", "10.96.0.1")
	must(t, core.AddService(v1))
	renderertest.RequireCommits(t, c, "txn put=[acl/toy-filter-00] del=[]")

	v2 := toySvc("a", "10.96.0.1", "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80")
	must(t, core.UpdateService(v1, v2))
	renderertest.RequireCommits(t, c, "txn put=[acl/toy-filter-00 "+lb+"] del=[]")

	v3 := toySvc("a", "10.96.0.1", "10.1.2.2:80", "10.1.2.3:80")
	must(t, core.UpdateService(v2, v3))
	renderertest.RequireCommits(t, c, "txn put=["+lb+"] del=[]")

	v4 := toySvc("a", "10.96.0.1", "10.1.2.2:80")
	must(t, core.UpdateService(v3, v4))
	renderertest.RequireCommits(t, c, "txn put=["+static+"] del=["+lb+"]")

	must(t, core.UpdateLocalFrontendIfs(nil, model.NewInterfaces("tap0", "tap1")))
	renderertest.RequireCommits(t, c, "txn put=[acl-binding/tap1/input/toy-filter-00 acl-binding/tap1/input/vppsvc-permit-all] del=[]")

	boom := errors.New("boom")
	c.FailNextCommit(boom)
	if err := core.DeleteService(v4); !errors.Is(err, boom) {
		t.Fatalf("DeleteService = %v, want boom", err)
	}
	must(t, core.DeleteService(v4)) // the retry makes the same diff
	renderertest.RequireCommits(t, c, "txn put=[] del=["+static+"]")
	must(t, core.DeleteService(v4))
	renderertest.RequireCommits(t, c)
}

// The core hands the VPP layer each item with its claim as the key
// (vppcfg.PutKeyed), so that the layer keeps the index's copy of the
// name: every put but the one-backend static mapping (claimed under the
// LB mapping's key) and the shard ACLs (no claim) comes with its own key,
// on a resync and on a change.
func TestCoreHandsItsClaimsAsKeys(t *testing.T) {
	core, c := toyCore(t, 1)
	lb, static := toySvc("a", "10.96.0.1", "10.1.2.2:80", "10.1.2.3:80"), toySvc("b", "10.96.0.2", "10.1.2.4:80")
	must(t, core.Resync(&model.ResyncEventData{FrontendIfs: model.NewInterfaces("tap0"), Services: []*model.ContivService{lb, static}}))
	must(t, core.UpdateService(lb, toySvc("a", "10.96.0.1", "10.1.2.2:80", "10.1.2.3:80", "10.1.2.5:80")))
	must(t, core.AddService(toySvc("c", "10.96.0.3", "10.1.2.6:80", "10.1.2.7:80")))
	commits := c.TakeCommits()
	if len(commits) != 3 {
		t.Fatalf("%d commits, want 3: %v", len(commits), commits)
	}
	keyed := 0
	for _, m := range commits {
		want := slices.DeleteFunc(slices.Clone(m.Puts), func(k vppcfg.Key) bool {
			return k.Kind == vppcfg.KindNAT44StaticMapping || k.Kind == vppcfg.KindACL
		})
		if !slices.Equal(m.Keyed, want) {
			t.Errorf("%s: handed with their keys %s, want %s", m, renderertest.KeyList(m.Keyed...), renderertest.KeyList(want...))
		}
		keyed += len(m.Keyed)
	}
	if keyed < 4 { // the global, two bindings and an LB mapping on the resync alone
		t.Fatalf("only %d puts handed with their keys", keyed)
	}
}

// TestCoreResyncOfAServiceListedTwice: of two values of one service in a
// Resync, the later is rendered, and nothing of the earlier.
func TestCoreResyncOfAServiceListedTwice(t *testing.T) {
	core, c := toyCore(t, 1)
	first, last := toySvc("a", "10.96.0.1", "10.1.2.2:80"), toySvc("a", "10.96.0.2", "10.1.2.3:80")
	must(t, core.Resync(&model.ResyncEventData{FrontendIfs: model.NewInterfaces("tap0"), Services: []*model.ContivService{first, last}}))
	renderertest.RequireCommits(t, c, "resync put=[nat44-global/global nat44-static-mapping/10.96.0.2:80/tcp] del=[]")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestNewCoreRejectsIncompleteConfig(t *testing.T) {
	if _, err := renderer.NewCore(renderer.CoreConfig[toyNode]{Name: "x"}); err == nil {
		t.Fatal("NewCore accepted a config without client")
	}
	if _, err := renderer.NewCore(renderer.CoreConfig[toyNode]{Name: "x", Client: renderertest.NewClient("x")}); err == nil {
		t.Fatal("NewCore accepted a config without translation")
	}
}
