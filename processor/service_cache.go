package processor

import (
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/internal/idmap"
	"github.com/vppsvc/vppsvc/model"
)

// sliceKey identifies an EndpointSlice by namespace and name.
type sliceKey struct{ Namespace, Name string }

func (k sliceKey) String() string { return k.Namespace + "/" + k.Name }

// serviceEntry is everything known about one service ID: the Service (nil
// while only slices are known), its slices, and its last computed value (nil
// when it is not rendered). Keeping slices grouped per service is what makes
// an event cost O(that service) instead of O(cluster). The objects are the
// informers' own, kept by pointer: the cache adds no copy of them.
type serviceEntry struct {
	svc    *corev1.Service
	slices sliceSet
	value  *model.ContivService
}

// id is the entry's service ID, from whichever of the Service, the value
// and the slices it holds: the cache's map does not keep it (idmap). An
// entry is removed before it would hold none of them.
func (e *serviceEntry) id() model.ServiceID {
	switch {
	case e.svc != nil:
		return ServiceIDOf(e.svc)
	case e.value != nil:
		return e.value.ID
	case e.slices.len() > 0:
		s := e.slices.first()
		return model.ServiceID{Namespace: s.Namespace, Name: s.Labels[discoveryv1.LabelServiceName]}
	}
	return model.ServiceID{}
}

// emptyWithout reports whether the entry holds nothing once the named parts
// go: its Service (noSvc) and the slice of that name.
func (e *serviceEntry) emptyWithout(noSvc bool, slice string) bool {
	n := e.slices.len()
	return (e.svc == nil || noSvc) && e.value == nil &&
		(n == 0 || n == 1 && e.slices.has(slice))
}

// serviceCache holds the service entries, which slice belongs to which
// service, and the indexes that tell which services a node-level change
// touches.
type serviceCache struct {
	entries idmap.Map[serviceEntry]
	// A slice's owner must be remembered, because a slice's service-name
	// label can change and a delete carries only the slice name. The
	// EndpointSlice controller names a slice after its service
	// ("<service>-<suffix>"), so the owner of such a slice is found among
	// the services its name starts with (ownerOf); only the other slices
	// are kept here. A map of every slice cost about 90 bytes a service.
	unnamedOwners map[sliceKey]model.ServiceID
	// byBackendIP maps each backend IP of a rendered service to the services
	// using it.
	byBackendIP backendIndex
	// nodePort holds rendered services with a node port, for
	// UpdateNodePortServices.
	nodePort map[model.ServiceID]struct{}
	// hinted holds rendered services with zone-hinted backends: only their
	// value depends on this node's zone.
	hinted   map[model.ServiceID]struct{}
	rendered int
}

func newServiceCache() *serviceCache { return newServiceCacheSized(0, [2]int{}) }

// newServiceCacheSized returns a cache with room for the given numbers of
// services and endpoints (IPv4, IPv6): a Resync knows them, and growing the maps
// from empty (rehashing every entry at each doubling) was a tenth of a cold
// sync of 5,000 services × 10 endpoints.
func newServiceCacheSized(services int, endpoints [2]int) *serviceCache {
	return &serviceCache{
		entries:       idmap.New(services, (*serviceEntry).id),
		unnamedOwners: map[sliceKey]model.ServiceID{},
		byBackendIP:   newBackendIndex(endpoints[0], endpoints[1]),
		nodePort:      map[model.ServiceID]struct{}{},
		hinted:        map[model.ServiceID]struct{}{},
	}
}

// setService stores a Service.
func (c *serviceCache) setService(svc *corev1.Service) model.ServiceID {
	id := ServiceIDOf(svc)
	if e := c.entries.Get(id); e != nil {
		e.svc = svc
	} else {
		c.entries.Set(&serviceEntry{svc: svc})
	}
	return id
}

// deleteService forgets a Service; its slices stay until they are deleted.
func (c *serviceCache) deleteService(id model.ServiceID) {
	if e := c.entries.Get(id); e != nil {
		if e.emptyWithout(true, "") {
			c.entries.Delete(id)
		}
		e.svc = nil
	}
}

// setSlice stores a slice under its service and returns the service it
// belonged to before, if that was another one (the label changed).
func (c *serviceCache) setSlice(key sliceKey, owner model.ServiceID, s *discoveryv1.EndpointSlice) (previous model.ServiceID, moved bool) {
	e := c.entries.Get(owner)
	// A slice is held by one entry at most: if owner's holds it, no other
	// does, and its owner need not be looked for (nor owner's entry
	// looked up again, which was a tenth of a cold sync's slice pass).
	if e == nil || !e.slices.has(key.Name) {
		if old, had := c.ownerOf(key, owner); had && old != owner {
			c.detachSlice(key, old) // never owner's entry
			previous, moved = old, true
		}
	}
	if namedAfter(key, owner) {
		delete(c.unnamedOwners, key)
	} else {
		c.unnamedOwners[key] = owner
	}
	if e != nil {
		e.slices.set(s)
	} else {
		c.entries.Set(&serviceEntry{slices: sliceSet{one: s}})
	}
	return previous, moved
}

// deleteSlice forgets a slice and returns the service it belonged to.
func (c *serviceCache) deleteSlice(key sliceKey) (model.ServiceID, bool) {
	owner, had := c.ownerOf(key, model.ServiceID{})
	if had {
		c.detachSlice(key, owner)
	}
	return owner, had
}

// ownerOf returns the service that holds the slice: the one kept in
// unnamedOwners, or else the service among those the slice is named after
// (every prefix of its name that ends before a '-') whose entry holds a
// slice of that name. A slice is held by one entry at most, so the first
// found is the owner. notOwner is a service known not to hold the slice,
// whose entry need not be looked at (the zero ID for none).
func (c *serviceCache) ownerOf(key sliceKey, notOwner model.ServiceID) (model.ServiceID, bool) {
	if id, ok := c.unnamedOwners[key]; ok {
		return id, true
	}
	for i := len(key.Name) - 1; i > 0; i-- {
		if key.Name[i] != '-' {
			continue
		}
		id := model.ServiceID{Namespace: key.Namespace, Name: key.Name[:i]}
		if id == notOwner {
			continue
		}
		if e := c.entries.Get(id); e != nil && e.slices.has(key.Name) {
			return id, true
		}
	}
	return model.ServiceID{}, false
}

// namedAfter reports whether ownerOf finds owner from the slice's name.
func namedAfter(key sliceKey, owner model.ServiceID) bool {
	return key.Namespace == owner.Namespace && len(key.Name) > len(owner.Name) &&
		key.Name[len(owner.Name)] == '-' && key.Name[:len(owner.Name)] == owner.Name
}

func (c *serviceCache) detachSlice(key sliceKey, owner model.ServiceID) {
	delete(c.unnamedOwners, key)
	if e := c.entries.Get(owner); e != nil {
		if e.emptyWithout(false, key.Name) {
			c.entries.Delete(owner)
		}
		e.slices.delete(key.Name)
	}
}

// setValue records the new computed value of a service, updates the indexes
// and drops the entry once nothing is left of it. It returns the previous
// value and the backend IPs that started or stopped backing any service.
func (c *serviceCache) setValue(id model.ServiceID, v *model.ContivService) (old *model.ContivService, crossed []netip.Addr) {
	old = c.setEntryValue(id, c.entries.Get(id), v, func(ip netip.Addr) { crossed = append(crossed, ip) })
	return old, crossed
}

// setEntryValue is setValue of e, the entry of id (nil when there is none),
// calling crossed with each backend IP that started or stopped backing any
// service instead of listing them.
func (c *serviceCache) setEntryValue(id model.ServiceID, e *serviceEntry, v *model.ContivService, crossed func(netip.Addr)) (old *model.ContivService) {
	if e == nil {
		return nil
	}
	old = e.value
	if e.svc == nil && e.slices.len() == 0 {
		c.entries.Delete(id) // while the value still names it
	}
	e.value = v
	if old == v {
		return old
	}
	if old != nil {
		c.rendered--
	}
	if v != nil {
		c.rendered++
	}
	setMember(c.nodePort, id, v != nil && v.HasNodePort())
	setMember(c.hinted, id, v != nil && hasZoneHints(v))

	// Most services have a few backends: their IPs are listed on the stack.
	var oldBuf, newBuf [8]netip.Addr
	oldIPs, newIPs := backendIPs(old, oldBuf[:0]), backendIPs(v, newBuf[:0])
	// Walk both sorted lists at once: IPs only in old lose this service,
	// IPs only in new gain it.
	i, j := 0, 0
	for i < len(oldIPs) || j < len(newIPs) {
		switch {
		case j == len(newIPs) || (i < len(oldIPs) && oldIPs[i].Less(newIPs[j])):
			if c.byBackendIP.remove(oldIPs[i], e) {
				crossed(oldIPs[i])
			}
			i++
		case i == len(oldIPs) || newIPs[j].Less(oldIPs[i]):
			if c.byBackendIP.add(newIPs[j], e) {
				crossed(newIPs[j])
			}
			j++
		default:
			i++
			j++
		}
	}
	return old
}

// isBackend reports whether ip backs at least one rendered service.
func (c *serviceCache) isBackend(ip netip.Addr) bool {
	return c.byBackendIP.has(ip)
}

func setMember(set map[model.ServiceID]struct{}, id model.ServiceID, in bool) {
	if in {
		set[id] = struct{}{}
	} else {
		delete(set, id)
	}
}

// backendIPs returns the distinct backend IPs of a value, sorted, in buf
// when they fit.
func backendIPs(v *model.ContivService, buf []netip.Addr) []netip.Addr {
	if v == nil {
		return nil
	}
	n := 0
	for _, p := range v.Ports {
		n += len(p.Backends)
	}
	out := buf[:0]
	if cap(out) < n {
		out = make([]netip.Addr, 0, n)
	}
	for _, p := range v.Ports {
		for _, b := range p.Backends {
			out = append(out, b.IP)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out)
}

// hasZoneHints reports whether the value could change with this node's zone:
// that is the case only if some port's backends carry hints (see
// filterByZoneHints, which only filters when every endpoint is hinted).
func hasZoneHints(v *model.ContivService) bool {
	for _, p := range v.Ports {
		for _, b := range p.Backends {
			if b.ZoneHints.Len() > 0 {
				return true
			}
		}
	}
	return false
}
