package renderview

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

var (
	ap = netip.MustParseAddrPort
	ip = netip.MustParseAddr
	pf = netip.MustParsePrefix
)

func be(addr string, local bool) model.ServiceBackend {
	a := ap(addr)
	return model.ServiceBackend{IP: a.Addr(), Port: a.Port(), Local: local}
}

// Items are attributed to a service by the renderer's ServiceKeys, not by
// their address: a mapping at the service's frontend that the renderer
// gave to another service (a conflict it resolved) is not shown.
func TestServicesAttributeItemsByServiceKeys(t *testing.T) {
	web := model.ServiceID{Namespace: "default", Name: "web"}
	other := model.ServiceID{Namespace: "default", Name: "other"}
	svc := &model.ContivService{ID: web, ClusterIPs: model.NewIPAddresses(ip("10.96.0.10")),
		Ports: []model.NamedPort{{Name: "http", ServicePort: model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: 30080},
			Backends: []model.ServiceBackend{be("10.1.1.2:8080", true), be("10.1.2.2:8080", false)}}}}
	lb := &vppcfg.NAT44LBMapping{External: ap("10.96.0.10:80"), Protocol: vppcfg.ProtoTCP, Label: "default/web",
		Locals: []vppcfg.NAT44LBLocal{{Addr: ap("10.1.1.2:8080"), Probability: 1}, {Addr: ap("10.1.2.2:8080"), Probability: 1}}}
	np := &vppcfg.NAT44StaticMapping{External: ap("192.168.16.1:30080"), Protocol: vppcfg.ProtoTCP, Local: ap("10.1.1.2:8080")}
	stray := &vppcfg.NAT44IdentityMapping{Addr: ip("192.168.16.1"), Port: 30080, Protocol: vppcfg.ProtoTCP}
	shard := &vppcfg.ACL{Name: "nat44-filter-03", Rules: []vppcfg.ACLRule{
		{Action: vppcfg.ACLDeny, Src: pf("0.0.0.0/0"), Dst: pf("192.168.16.1/32"), Protocol: vppcfg.ProtoTCP, DstPorts: vppcfg.SinglePort(30080)},
		{Action: vppcfg.ACLDeny, Src: pf("0.0.0.0/0"), Dst: pf("10.96.0.99/32"), Protocol: vppcfg.ProtoTCP, DstPorts: vppcfg.SinglePort(80)},
	}}
	global := &vppcfg.NAT44Global{Forwarding: true}
	in := Input{
		Services:    []*model.ContivService{svc},
		NodePortIPs: model.NewIPAddresses(ip("192.168.16.1")),
		Items:       []vppcfg.Item{global, lb, np, stray, shard},
		ServiceKeys: map[string]map[model.ServiceID][]vppcfg.Key{
			"nat44": {web: {lb.Key(), stray.Key()}, other: {np.Key()}},
		},
		Owners: func(vppcfg.Key) []string { return []string{"nat44"} },
		Types:  map[model.ServiceID]string{web: "NodePort"},
	}
	svcs := Services(in)
	require.Len(t, svcs, 1)
	s := svcs[0]
	assert.Equal(t, "NodePort", s.Type)
	require.Len(t, s.Ports, 1)
	fes := s.Ports[0].Frontends
	require.Len(t, fes, 2)
	assert.Equal(t, ap("10.96.0.10:80"), fes[0].Addr)
	require.Len(t, fes[0].Objects, 1)
	assert.Equal(t, lb.Key(), fes[0].Objects[0].Item.Key())
	assert.Equal(t, "nat44", fes[0].Objects[0].Renderer)
	assert.Empty(t, fes[0].Filters, "the rule for 10.96.0.99 is another frontend's")
	assert.Empty(t, fes[1].Objects, "the node port's mapping belongs to default/other")
	require.Len(t, fes[1].Filters, 1)
	assert.Equal(t, FilterRule{Renderer: "nat44", ACL: "nat44-filter-03", Index: 0, Rule: shard.Rules[0]}, fes[1].Filters[0])
	require.Len(t, s.Other, 1, "an item of the service that implements no frontend")
	assert.Equal(t, stray.Key(), s.Other[0].Item.Key())
	// global, np (not this service's) and the shard
	assert.Equal(t, 3, NodeWide(in.Items, svcs))

	var b strings.Builder
	require.NoError(t, WriteServices(&b, "node-a", svcs, 3, []string{"default/x: headless"}))
	assert.Equal(t, `# node node-a: 1 services, as vppsvc programs them into VPP

default/web  NodePort
  traffic policy    external Cluster, internal Cluster
  session affinity  none
  port http 80/TCP, node port 30080
    ClusterIP    10.96.0.10:80/TCP          nat44 lb-mapping → 2 backends
    NodePort     192.168.16.1:30080/TCP     dropped (no backend) by acl nat44-filter-03 #0
    backends
      10.1.1.2:8080            -          local, ready
      10.1.2.2:8080            -          ready
  also              nat44 nat44-identity-mapping/192.168.16.1:30080/tcp/vrf0

# not rendered: default/x: headless
# 3 node-wide items (NAT44-ED settings, pool addresses, interface roles, filter ACLs and their
#   bindings) serve every service: -o vppcli, -o yaml or -o json print all items
# terms (self-twice-nat, out2in-only, exclusive and interposed VIPs, filter shards …) are explained
#   in docs/glossary.md
`, b.String())
}

// Bad input does not panic: a nil service is skipped, an item key the
// renderer names but that is not desired is ignored, and a port without
// frontends (SCTP) says why.
func TestServicesBadInput(t *testing.T) {
	id := model.ServiceID{Namespace: "ns", Name: "sctp"}
	svc := &model.ContivService{ID: id, ClusterIPs: model.NewIPAddresses(ip("10.96.0.20")),
		Ports: []model.NamedPort{{ServicePort: model.ServicePort{Protocol: model.ProtocolSCTP, Port: 9}}}}
	svcs := Services(Input{
		Services:    []*model.ContivService{nil, svc},
		ServiceKeys: map[string]map[model.ServiceID][]vppcfg.Key{"nat44": {id: {vppcfg.ACLKey("gone")}}},
	})
	require.Len(t, svcs, 1)
	assert.Empty(t, svcs[0].Other)
	require.Len(t, svcs[0].Ports, 1)
	assert.Empty(t, svcs[0].Ports[0].Frontends)
	assert.Contains(t, svcs[0].Ports[0].Skipped, "SCTP")
}

func TestBackendsSummary(t *testing.T) {
	two := []netip.AddrPort{ap("10.1.1.2:80"), ap("10.1.2.2:80")}
	three := append(two, ap("10.1.3.2:80"))
	assert.Equal(t, "3 backends", backendsSummary(three, 3))
	assert.Equal(t, "10.1.1.2:80, 10.1.2.2:80", backendsSummary(two, 3), "a subset of two is listed")
	assert.Equal(t, "3 of 5 backends", backendsSummary(three, 5))
	assert.Equal(t, "10.1.1.2:80", backendsSummary(two[:1], 1), "one backend is named")
}
