// Package renderview turns what `vppsvc render` computed — the processor's
// services and the VPP layer's desired items — into what an operator reads:
// one block per Kubernetes Service (Services, WriteServices) and the desired
// VPP items with names instead of numbers and ACL bindings folded per
// interface (Document). It never changes an item: it only prints them.
package renderview

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/present"
)

// Input is what the service view is built from.
type Input struct {
	Services []*model.ContivService
	// NodePortIPs are the addresses the renderers open node ports on.
	NodePortIPs model.IPAddresses
	// Items are the desired VPP items of every renderer.
	Items []vppcfg.Item
	// ServiceKeys are, per renderer, the keys of the items each service
	// wins (renderer.Core.ServiceKeys): how an item names its service.
	ServiceKeys map[string]map[model.ServiceID][]vppcfg.Key
	// Owners returns the owners (renderer names) of a desired item.
	Owners func(vppcfg.Key) []string
	// Types are the Services' spec.type by ID, when known (optional).
	Types map[model.ServiceID]string
	// BackendNodes are the nodes of endpoint IPs, when known (optional).
	BackendNodes map[netip.Addr]string
}

// Service is one service as the view shows it.
type Service struct {
	ID                    model.ServiceID
	Type                  string
	ExternalTrafficPolicy model.TrafficPolicy
	InternalTrafficPolicy model.TrafficPolicy
	// AffinityTimeout is the ClientIP affinity timeout in seconds; 0 for none.
	AffinityTimeout     uint32
	SourceRanges        []netip.Prefix
	HealthCheckNodePort uint16
	Ports               []Port
	// Other are the service's items that implement no frontend.
	Other []Object
	// Skipped are the invalid elements of the Service the processor left out
	// (a port out of range, an unknown protocol), each with its field, value
	// and reason: the warning of the log, where the service is read.
	Skipped []string
}

// Port is one service port, its frontends and its backends.
type Port struct {
	Name string
	model.ServicePort
	// Skipped says why no renderer translates the port (SCTP), or is empty.
	Skipped   string
	Frontends []Frontend
	Backends  []Backend
}

// Backend is one endpoint of a port with the node it runs on.
type Backend struct {
	model.ServiceBackend
	Node string
}

// Frontend is one address:port/protocol of a port and the VPP objects that
// implement it.
type Frontend struct {
	Kind     renderer.FrontendKind
	Addr     netip.AddrPort
	Protocol vppcfg.Protocol
	// Objects are the translations (NAT44 mappings, cnat translations) of
	// the frontend, at most one per renderer in a consistent state.
	Objects []Object
	// Filters are the ACL rules that match the frontend as destination.
	Filters []FilterRule
}

// Object is one desired VPP item and the renderer that wants it.
type Object struct {
	Renderer string
	Item     vppcfg.Item
}

// FilterRule is one rule of a filter ACL (a shard) that matches a frontend.
type FilterRule struct {
	Renderer string
	ACL      string
	Index    int
	Rule     vppcfg.ACLRule
}

// frontKey is what a translation or a filter rule names a frontend by.
type frontKey struct {
	addr  netip.AddrPort
	proto vppcfg.Protocol
}

// itemIndex finds the desired items of a service and of a frontend.
type itemIndex struct {
	// byService are the items each service wins, from every renderer.
	byService map[model.ServiceID][]Object
	// filters are the filter-ACL rules by the frontend they match.
	filters map[frontKey][]FilterRule
}

func newItemIndex(in Input) *itemIndex {
	ix := &itemIndex{byService: map[model.ServiceID][]Object{}, filters: map[frontKey][]FilterRule{}}
	byKey := make(map[vppcfg.Key]vppcfg.Item, len(in.Items))
	for _, it := range in.Items {
		byKey[it.Key()] = it
		acl, ok := it.(*vppcfg.ACL)
		if !ok {
			continue
		}
		owner := ""
		if in.Owners != nil {
			if o := in.Owners(it.Key()); len(o) > 0 {
				owner = o[0]
			}
		}
		for i, r := range acl.Rules {
			if k, ok := ruleFrontend(r); ok {
				ix.filters[k] = append(ix.filters[k], FilterRule{Renderer: owner, ACL: acl.Name, Index: i, Rule: r})
			}
		}
	}
	for _, r := range slices.Sorted(maps.Keys(in.ServiceKeys)) {
		for id, keys := range in.ServiceKeys[r] {
			for _, k := range keys {
				if it, ok := byKey[k]; ok {
					ix.byService[id] = append(ix.byService[id], Object{Renderer: r, Item: it})
				}
			}
		}
	}
	for _, objs := range ix.byService {
		slices.SortFunc(objs, func(a, b Object) int {
			return cmp.Or(cmp.Compare(a.Renderer, b.Renderer), a.Item.Key().Compare(b.Item.Key()))
		})
	}
	return ix
}

// translationFrontend is the frontend a translation implements.
func translationFrontend(it vppcfg.Item) (frontKey, bool) {
	t, ok := present.FrontendTranslationOf(it)
	return frontKey{t.Frontend, t.Protocol}, ok
}

// ruleFrontend returns the frontend a filter rule is about: the renderers'
// filter rules name one destination address, protocol and port.
func ruleFrontend(r vppcfg.ACLRule) (frontKey, bool) {
	if !r.Dst.IsValid() || r.Dst.Bits() != r.Dst.Addr().BitLen() || r.Protocol == vppcfg.ProtoAny ||
		r.DstPorts.First != r.DstPorts.Last || r.Dst.Addr().IsUnspecified() {
		return frontKey{}, false
	}
	return frontKey{netip.AddrPortFrom(r.Dst.Addr(), r.DstPorts.First), r.Protocol}, true
}

// Services builds the view of every service, sorted by namespace/name.
func Services(in Input) []Service {
	ix := newItemIndex(in)
	svcs := slices.DeleteFunc(slices.Clone(in.Services), func(s *model.ContivService) bool { return s == nil })
	slices.SortFunc(svcs, func(a, b *model.ContivService) int { return a.ID.Compare(b.ID) })
	out := make([]Service, 0, len(svcs))
	for _, svc := range svcs {
		out = append(out, buildService(svc, in, ix))
	}
	return out
}

func buildService(svc *model.ContivService, in Input, ix *itemIndex) Service {
	s := Service{
		ID:                    svc.ID,
		Type:                  in.Types[svc.ID],
		ExternalTrafficPolicy: svc.ExternalTrafficPolicy,
		InternalTrafficPolicy: svc.InternalTrafficPolicy,
		AffinityTimeout:       svc.SessionAffinityTimeout,
		SourceRanges:          svc.LoadBalancerSourceRanges,
		HealthCheckNodePort:   svc.HealthCheckNodePort,
	}
	var fronts []renderer.Frontend
	for _, f := range []renderer.Family{renderer.IPv4, renderer.IPv6} {
		fronts = append(fronts, renderer.Frontends(svc, in.NodePortIPs, f)...)
	}
	objects := map[frontKey][]Object{}
	for _, o := range ix.byService[svc.ID] {
		if k, ok := translationFrontend(o.Item); ok {
			objects[k] = append(objects[k], o)
		}
	}
	used := map[vppcfg.Key]bool{}
	for _, name := range svc.PortNames() {
		sp, _ := svc.Port(name)
		p := Port{Name: name, ServicePort: sp}
		if _, ok := renderer.L4Protocol(p.Protocol); !ok {
			p.Skipped = p.Protocol.String() + " is not translated by NAT44-ED nor by cnat"
		}
		for _, b := range svc.Backends(name) {
			p.Backends = append(p.Backends, Backend{ServiceBackend: b, Node: in.BackendNodes[b.IP]})
		}
		for _, fe := range fronts {
			if fe.PortName != name {
				continue
			}
			k := frontKey{fe.Addr, fe.Protocol}
			f := Frontend{Kind: fe.Kind, Addr: fe.Addr, Protocol: fe.Protocol, Filters: ix.filters[k], Objects: objects[k]}
			for _, o := range f.Objects {
				used[o.Item.Key()] = true
			}
			p.Frontends = append(p.Frontends, f)
		}
		slices.SortStableFunc(p.Frontends, compareFrontends)
		s.Ports = append(s.Ports, p)
	}
	for _, o := range ix.byService[svc.ID] {
		if !used[o.Item.Key()] {
			s.Other = append(s.Other, o)
		}
	}
	return s
}

// compareFrontends puts IPv4 before IPv6, then keeps the renderers' order
// (kind, address).
func compareFrontends(a, b Frontend) int {
	return cmp.Compare(a.Addr.Addr().BitLen(), b.Addr.Addr().BitLen())
}

// NodeWide counts the items that belong to no service: NAT44-ED settings,
// pool addresses, interface roles, filter ACLs and their bindings, which
// serve every service at once.
func NodeWide(items []vppcfg.Item, svcs []Service) int {
	used := map[vppcfg.Key]bool{}
	for _, s := range svcs {
		for _, o := range s.Other {
			used[o.Item.Key()] = true
		}
		for _, p := range s.Ports {
			for _, f := range p.Frontends {
				for _, o := range f.Objects {
					used[o.Item.Key()] = true
				}
			}
		}
	}
	n := 0
	for _, it := range items {
		if !used[it.Key()] {
			n++
		}
	}
	return n
}
