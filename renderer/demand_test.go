package renderer_test

import (
	"errors"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// switchNode is a node context with a switch that follows the services.
type switchNode struct {
	ifs model.Interfaces
	on  bool
}

func (n switchNode) Equal(o switchNode) bool              { return n.ifs.Equal(o.ifs) && n.on == o.on }
func (n switchNode) FrontendInterfaces() model.Interfaces { return n.ifs }
func (n switchNode) WithFrontendInterfaces(i model.Interfaces) switchNode {
	n.ifs = i
	return n
}

// TestCoreDemandFollowsServices: the node's switch is on while some service
// needs it, flips in the transaction of the service that turns it, stays as
// it was when that transaction fails, and Resync derives it from the
// services.
func TestCoreDemandFollowsServices(t *testing.T) {
	c := renderertest.NewClient("toy")
	feature := &vppcfg.InterfaceFeature{Interface: "tap0", Arc: "ip4-unicast", Feature: "toy-feature"}
	core, err := renderer.NewCore(renderer.CoreConfig[switchNode]{
		Name:   "toy",
		Client: c,
		Log:    quiet(),
		Shards: renderer.ACLShards{Renderer: "toy", Count: 1, Family: renderer.IPv4},
		NodeOf: func(ev *model.ResyncEventData) switchNode { return switchNode{ifs: ev.FrontendIfs} },
		RenderService: func(svc *model.ContivService, _ switchNode, _ []vppcfg.Item) renderer.Rendering {
			var r renderer.Rendering
			for _, fe := range renderer.Frontends(svc, nil, renderer.IPv4) {
				if bs := svc.ClusterBackends(fe.PortName); len(bs) > 0 {
					r.Items = append(r.Items, &vppcfg.NAT44StaticMapping{External: fe.Addr, Protocol: fe.Protocol, Local: bs[0].AddrPort(), Out2InOnly: true})
				}
			}
			return r
		},
		RenderNode: func(n switchNode) []vppcfg.Item {
			items := []vppcfg.Item{&vppcfg.NAT44Global{Forwarding: true}}
			if n.on {
				items = append(items, feature)
			}
			return items
		},
		Demand: &renderer.NodeDemand[switchNode]{
			Needs: func(svc *model.ContivService) bool { return svc.ExternalTrafficPolicy == model.TrafficPolicyLocal },
			Set: func(n switchNode, on bool) switchNode {
				n.on = on
				return n
			},
		},
	})
	must(t, err)
	local := func(s *model.ContivService) *model.ContivService {
		s.ExternalTrafficPolicy = model.TrafficPolicyLocal
		return s
	}
	feat := feature.Key().String()
	a := toySvc("a", "10.96.0.1", "10.1.2.1:80")
	b := local(toySvc("b", "10.96.0.2", "10.1.2.2:80"))
	mb := "nat44-static-mapping/10.96.0.2:80/tcp"

	must(t, core.Resync(&model.ResyncEventData{FrontendIfs: model.NewInterfaces("tap0"), Services: []*model.ContivService{a}}))
	renderertest.RequireCommits(t, c, "resync put=[nat44-global/global nat44-static-mapping/10.96.0.1:80/tcp] del=[]")
	must(t, core.AddService(b))
	renderertest.RequireCommits(t, c, "txn put=["+feat+" "+mb+"] del=[]")

	boom := errors.New("boom")
	c.FailNextCommit(boom)
	if err := core.DeleteService(b); !errors.Is(err, boom) {
		t.Fatalf("DeleteService = %v, want boom", err)
	}
	must(t, core.UpdateService(a, local(toySvc("a", "10.96.0.1", "10.1.2.1:80"))))
	renderertest.RequireCommits(t, c) // the switch stayed on: nothing to write
	must(t, core.DeleteService(b))
	renderertest.RequireCommits(t, c, "txn put=[] del=["+mb+"]") // a still needs it
	must(t, core.UpdateService(nil, a))
	renderertest.RequireCommits(t, c, "txn put=[] del=["+feat+"]")

	must(t, core.Resync(&model.ResyncEventData{FrontendIfs: model.NewInterfaces("tap0"), Services: []*model.ContivService{a, b}}))
	renderertest.RequireCommits(t, c, "resync put=["+feat+" nat44-global/global nat44-static-mapping/10.96.0.1:80/tcp "+mb+"] del=[]")
}
