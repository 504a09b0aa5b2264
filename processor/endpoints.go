package processor

import (
	"cmp"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/model"
)

// endpoint is one EndpointSlice endpoint with its conditions resolved,
// offered to one service port.
type endpoint struct {
	backend model.ServiceBackend // Port is the slice port's
	// ready uses the API's rule that a missing condition counts as ready.
	ready bool
	// servingTerminating endpoints are the KEP-1669 fallback: still able to
	// serve while they shut down.
	servingTerminating bool
	// svcPort is the index of the service port in ContivService.Ports (an
	// int32 beside the flags: the endpoint is 48 bytes, not 56).
	svcPort int32
}

// rank orders duplicates of one IP:port seen in several slices: the local
// copy wins (as in kube-proxy), then the one in the better condition.
func (e endpoint) rank() int {
	r := 0
	switch {
	case e.ready:
		r = 2
	case e.servingTerminating:
		r = 1
	}
	if e.backend.Local {
		r += 4
	}
	return r
}

// sliceBackendPort is a slice port that matched a service port.
type sliceBackendPort struct {
	svcPort int32 // the index of the service port in ContivService.Ports
	port    uint16
}

// candidates joins the slices to the service ports (sorted by name, as
// ContivService.Ports): it appends to room every endpoint of a slice once
// for every port the slice serves, sorted by port (the index in svcPorts),
// then as appendUsableBackends
// wants them. Slices are visited in name order, and the sort is stable, so
// that the winner among duplicates does not depend on the order they
// arrived in.
func (c *converter) candidates(svc *corev1.Service, fam ipFamilies, svcPorts []model.NamedPort, in []*discoveryv1.EndpointSlice, node NodeContext, room []endpoint) []endpoint {
	sorted := in // one slice, the common case: nothing to order, no copy
	if len(in) > 1 {
		sorted = slices.Clone(in)
		slices.SortFunc(sorted, func(a, b *discoveryv1.EndpointSlice) int {
			if a == nil || b == nil {
				return cmp.Compare(boolInt(a != nil), boolInt(b != nil))
			}
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Namespace, b.Namespace))
		})
	}
	list := room[:0]
	var portBuf [4]sliceBackendPort // a slice's matched ports, most often one
	for _, s := range sorted {
		if !c.sliceUsable(svc, s, fam) {
			continue
		}
		ports := c.matchSlicePorts(s, svcPorts, portBuf[:0])
		if len(ports) == 0 {
			continue
		}
		list = c.appendSliceEndpoints(list, s, ports, node)
	}
	slices.SortStableFunc(list, func(a, b endpoint) int {
		if c := cmp.Compare(a.svcPort, b.svcPort); c != 0 {
			return c
		}
		if c := model.CompareBackends(a.backend, b.backend); c != 0 {
			return c
		}
		return cmp.Compare(b.rank(), a.rank())
	})
	return list
}

// pickBackends sets, per port of out, the endpoints renderers should use,
// from the candidates (sorted as candidates returns them), into room, which
// has space for every candidate (allocValue): each port's list is appended
// where the previous one ends, clipped so that an append to one cannot
// write into the next.
func pickBackends(out *model.ContivService, room []model.ServiceBackend, candidates []endpoint, zone string) {
	keepLocal := out.ExternalTrafficPolicy == model.TrafficPolicyLocal || out.InternalTrafficPolicy == model.TrafficPolicyLocal
	for from := 0; from < len(candidates); {
		to := from + 1
		for to < len(candidates) && candidates[to].svcPort == candidates[from].svcPort {
			to++
		}
		picked := appendUsableBackends(room[:0], candidates[from:to], zone, keepLocal)
		if len(picked) > 0 {
			out.Ports[candidates[from].svcPort].Backends = slices.Clip(picked)
		}
		room = picked[len(picked):]
		from = to
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// appendUsableBackends appends the endpoints one service port uses to dst.
// The candidates are those of the port, sorted by IP:port and, among
// copies of one IP:port, best rank first, in slice order among equals: the
// first copy is kept. Every serving endpoint is passed on: the ready ones,
// filtered by zone hints per address family (kube-proxy runs one proxier
// per family), and the serving-terminating ones marked Terminating;
// endpoints that are neither are dropped. Renderers pick from them per
// traffic policy with model.ContivService.ClusterBackends and
// LocalBackends, which fall back to the terminating endpoints separately
// for the cluster-wide and the local set, as kube-proxy's
// CategorizeEndpoints does (KEP-1669). Hints are not applied to
// terminating endpoints, as in kube-proxy: they are only used when nothing
// is ready, and then any serving endpoint is better than none. What is
// appended is sorted by IP:port, as the candidates are.
func appendUsableBackends(dst []model.ServiceBackend, list []endpoint, zone string, keepLocal bool) []model.ServiceBackend {
	duplicate := func(i int) bool {
		return i > 0 && model.CompareBackends(list[i-1].backend, list[i].backend) == 0
	}
	hints4, hints6 := zoneFilter{zone: zone, keepLocal: keepLocal}, zoneFilter{zone: zone, keepLocal: keepLocal}
	for i, e := range list {
		switch {
		case duplicate(i) || !e.ready:
		case e.backend.IP.Is4():
			hints4.see(e.backend)
		default:
			hints6.see(e.backend)
		}
	}
	for i, e := range list {
		switch {
		case duplicate(i):
		case e.ready && e.backend.IP.Is4():
			if hints4.keeps(e.backend) {
				dst = append(dst, e.backend)
			}
		case e.ready:
			if hints6.keeps(e.backend) {
				dst = append(dst, e.backend)
			}
		case e.servingTerminating:
			b := e.backend
			b.Terminating = true
			dst = append(dst, b)
		}
	}
	return dst
}

// sliceUsable checks that a slice belongs to the service and carries addresses
// of a family the service serves. FQDN slices and slices of a family the
// service lacks are skipped silently: they are valid, just not ours to use.
func (c *converter) sliceUsable(svc *corev1.Service, s *discoveryv1.EndpointSlice, fam ipFamilies) bool {
	if s == nil {
		c.problems = append(c.problems, Problem{Kind: KindEndpointSlice, Object: c.object(), Reason: "nil EndpointSlice passed for service"})
		return false
	}
	if !c.slicesOwned && (s.Namespace != svc.Namespace || s.Labels[discoveryv1.LabelServiceName] != svc.Name) {
		c.sliceProblem(s, "metadata.labels["+discoveryv1.LabelServiceName+"]", s.Labels[discoveryv1.LabelServiceName], "slice does not belong to service "+c.object())
		return false
	}
	switch s.AddressType {
	case discoveryv1.AddressTypeIPv4:
		return fam.v4
	case discoveryv1.AddressTypeIPv6:
		return fam.v6
	case discoveryv1.AddressTypeFQDN:
		return false
	}
	c.sliceProblem(s, "addressType", string(s.AddressType), "unknown address type; slice skipped")
	return false
}

// matchSlicePorts returns the slice ports that serve a service port. Like
// kube-proxy, a slice port serves the service port of the same name and
// protocol, and its number is the backend port: the EndpointSlice controller
// has already resolved named and numbered targetPorts per pod. They are
// appended to buf[:0], the caller's room on its stack.
func (c *converter) matchSlicePorts(s *discoveryv1.EndpointSlice, svcPorts []model.NamedPort, buf []sliceBackendPort) []sliceBackendPort {
	out := buf[:0]
	for _, p := range s.Ports {
		if p.Name == nil {
			c.sliceProblem(s, "ports[].name", "", "port without name; port skipped")
			continue
		}
		proto := model.ProtocolTCP
		if p.Protocol != nil {
			var ok bool
			if proto, ok = parseProtocol(*p.Protocol); !ok {
				c.sliceProblem(s, "ports[].protocol", string(*p.Protocol), "unknown protocol; port skipped")
				continue
			}
		}
		if p.Port == nil || !validPort(*p.Port) {
			value := ""
			if p.Port != nil {
				value = strconv.Itoa(int(*p.Port))
			}
			c.sliceProblem(s, "ports[].port", value, "port missing or out of range 1-65535; port skipped")
			continue
		}
		i, ok := slices.BinarySearchFunc(svcPorts, *p.Name, func(p model.NamedPort, name string) int { return cmp.Compare(p.Name, name) })
		if ok && svcPorts[i].Protocol == proto {
			out = append(out, sliceBackendPort{svcPort: int32(i), port: uint16(*p.Port)})
		}
	}
	return out
}

// appendSliceEndpoints parses the endpoints of a slice and appends each,
// once for every service port the slice serves, to out. Only the first
// address of an endpoint is used: the API says all addresses of one
// endpoint are fungible, and kube-proxy uses the first.
func (c *converter) appendSliceEndpoints(out []endpoint, s *discoveryv1.EndpointSlice, ports []sliceBackendPort, node NodeContext) []endpoint {
	if need := len(out) + len(s.Endpoints)*len(ports); need > cap(out) {
		// Once and to size: most services have one slice.
		out = append(make([]endpoint, 0, need), out...)
	}
	for _, ep := range s.Endpoints {
		if len(ep.Addresses) == 0 {
			c.sliceProblem(s, "endpoints[].addresses", "", "endpoint without address; skipped")
			continue
		}
		ip, ok := parseIP(ep.Addresses[0])
		if !ok {
			c.sliceProblem(s, "endpoints[].addresses", ep.Addresses[0], "not an IP address; endpoint skipped")
			continue
		}
		if ip.Is4() != (s.AddressType == discoveryv1.AddressTypeIPv4) {
			c.sliceProblem(s, "endpoints[].addresses", ep.Addresses[0], "address family differs from addressType "+string(s.AddressType)+"; endpoint skipped")
			continue
		}
		cond := ep.Conditions
		ready := cond.Ready == nil || *cond.Ready
		serving := cond.Serving == nil || *cond.Serving
		terminating := cond.Terminating != nil && *cond.Terminating
		e := endpoint{
			backend: model.ServiceBackend{
				IP:          ip,
				Local:       ep.NodeName != nil && node.Name != "" && *ep.NodeName == node.Name,
				HostNetwork: node.NodeIPs.Has(ip),
				ZoneHints:   zoneHints(ep.Hints),
			},
			ready:              ready,
			servingTerminating: serving && terminating,
		}
		for _, p := range ports {
			e.backend.Port, e.svcPort = p.port, p.svcPort
			out = append(out, e)
		}
	}
	return out
}

// zoneHints returns the hinted zone names as a set; empty when the slice
// carries none.
func zoneHints(h *discoveryv1.EndpointHints) model.Zones {
	if h == nil || len(h.ForZones) == 0 {
		return model.Zones{}
	}
	names := make([]string, len(h.ForZones))
	for i, z := range h.ForZones {
		names[i] = z.Name
	}
	return model.NewZones(names...)
}
