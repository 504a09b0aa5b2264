package processor

import (
	"cmp"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/model"
)

// endpoint is one EndpointSlice endpoint with its conditions resolved.
type endpoint struct {
	backend model.ServiceBackend // Port is filled in per slice port
	// ready uses the API's rule that a missing condition counts as ready.
	ready bool
	// servingTerminating endpoints are the KEP-1669 fallback: still able to
	// serve while they shut down.
	servingTerminating bool
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
	svcPortName string
	port        uint16
}

// backends joins the slices to the service ports and sets, per port of out,
// the endpoints renderers should use. Slices are visited in name order so
// that the winner among duplicates does not depend on the order they arrived
// in.
func (c *converter) backends(svc *corev1.Service, out *model.ContivService, in []*discoveryv1.EndpointSlice, node NodeContext) {
	fam := familiesOf(out.ClusterIPs)
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

	// Candidates per service-port name, in slice-name order.
	candidates := make(map[string][]endpoint, len(out.Ports))
	var portBuf [4]sliceBackendPort // a slice's matched ports, most often one
	for _, s := range sorted {
		if !c.sliceUsable(svc, s, fam) {
			continue
		}
		ports := c.matchSlicePorts(s, out, portBuf[:0])
		if len(ports) == 0 {
			continue
		}
		eps := c.sliceEndpoints(s, node)
		for i, sp := range ports {
			list := candidates[sp.svcPortName]
			if list == nil && i == len(ports)-1 {
				// The slice's own list serves its last port: no copy (the
				// common case is one slice and one port per service).
				for j := range eps {
					eps[j].backend.Port = sp.port
				}
				candidates[sp.svcPortName] = eps
				continue
			}
			list = slices.Grow(list, len(eps))
			for _, e := range eps {
				e.backend.Port = sp.port
				list = append(list, e)
			}
			candidates[sp.svcPortName] = list
		}
	}

	keepLocal := out.ExternalTrafficPolicy == model.TrafficPolicyLocal || out.InternalTrafficPolicy == model.TrafficPolicyLocal
	for i := range out.Ports {
		if list := candidates[out.Ports[i].Name]; len(list) > 0 {
			if b := usableBackends(list, node.Zone, keepLocal); len(b) > 0 {
				out.Ports[i].Backends = b
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// usableBackends picks the endpoints of one service port. Duplicates of an
// IP:port keep the best-ranked copy, the first in slice order among equals.
// Every serving endpoint is passed on: the ready ones, filtered by zone hints
// per address family (kube-proxy runs one proxier per family), and the
// serving-terminating ones marked Terminating; endpoints that are neither
// are dropped. Renderers pick from them per traffic policy with
// model.ContivService.ClusterBackends and LocalBackends, which fall back to
// the terminating endpoints separately for the cluster-wide and the local
// set, as kube-proxy's CategorizeEndpoints does (KEP-1669). Hints are not
// applied to terminating endpoints, as in kube-proxy: they are only used
// when nothing is ready, and then any serving endpoint is better than none.
// The result is sorted by IP:port.
func usableBackends(list []endpoint, zone string, keepLocal bool) []model.ServiceBackend {
	// A stable sort keeps slice order among copies of equal rank.
	slices.SortStableFunc(list, func(a, b endpoint) int {
		if c := model.CompareBackends(a.backend, b.backend); c != 0 {
			return c
		}
		return cmp.Compare(b.rank(), a.rank())
	})
	// Each list gets its full size at its first append: a service is
	// recomputed on every endpoint change, and growing by doubling was a
	// fifth of that recomputation's allocations.
	var ready4, ready6, out []model.ServiceBackend
	add := func(to []model.ServiceBackend, b model.ServiceBackend) []model.ServiceBackend {
		if to == nil {
			to = make([]model.ServiceBackend, 0, len(list))
		}
		return append(to, b)
	}
	for i, e := range list {
		if i > 0 && model.CompareBackends(list[i-1].backend, e.backend) == 0 {
			continue // a lower-ranked duplicate
		}
		switch {
		case e.ready && e.backend.IP.Is4():
			ready4 = add(ready4, e.backend)
		case e.ready:
			ready6 = add(ready6, e.backend)
		case e.servingTerminating:
			b := e.backend
			b.Terminating = true
			out = add(out, b)
		}
	}
	if out == nil && (len(ready4) == 0 || len(ready6) == 0) {
		// One family and nothing terminating: the filtered list is the result.
		out = filterByZoneHints(ready4, zone, keepLocal)
		if len(ready4) == 0 {
			out = filterByZoneHints(ready6, zone, keepLocal)
		}
		slices.SortFunc(out, model.CompareBackends)
		return out
	}
	out = append(out, filterByZoneHints(ready4, zone, keepLocal)...)
	out = append(out, filterByZoneHints(ready6, zone, keepLocal)...)
	slices.SortFunc(out, model.CompareBackends)
	return out
}

// sliceUsable checks that a slice belongs to the service and carries addresses
// of a family the service serves. FQDN slices and slices of a family the
// service lacks are skipped silently: they are valid, just not ours to use.
func (c *converter) sliceUsable(svc *corev1.Service, s *discoveryv1.EndpointSlice, fam ipFamilies) bool {
	if s == nil {
		c.problems = append(c.problems, Problem{Kind: KindEndpointSlice, Object: c.object(), Reason: "nil EndpointSlice passed for service"})
		return false
	}
	if s.Namespace != svc.Namespace || s.Labels[discoveryv1.LabelServiceName] != svc.Name {
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
func (c *converter) matchSlicePorts(s *discoveryv1.EndpointSlice, svc *model.ContivService, buf []sliceBackendPort) []sliceBackendPort {
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
		if sp, ok := svc.Port(*p.Name); ok && sp.Protocol == proto {
			out = append(out, sliceBackendPort{svcPortName: *p.Name, port: uint16(*p.Port)})
		}
	}
	return out
}

// sliceEndpoints parses the endpoints of a slice. Only the first address of an
// endpoint is used: the API says all addresses of one endpoint are fungible,
// and kube-proxy uses the first.
func (c *converter) sliceEndpoints(s *discoveryv1.EndpointSlice, node NodeContext) []endpoint {
	out := make([]endpoint, 0, len(s.Endpoints))
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
		out = append(out, endpoint{
			backend: model.ServiceBackend{
				IP:          ip,
				Local:       ep.NodeName != nil && node.Name != "" && *ep.NodeName == node.Name,
				HostNetwork: node.NodeIPs.Has(ip),
				ZoneHints:   zoneHints(ep.Hints),
			},
			ready:              ready,
			servingTerminating: serving && terminating,
		})
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
