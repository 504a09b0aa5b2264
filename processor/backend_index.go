package processor

import (
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
)

// backendIndex maps each backend IP of a rendered service to the services
// using it: a node-IP change flips HostNetwork on exactly those, and a local
// pod is a backend while its IP is in the index.
//
// It holds an entry per endpoint of the cluster, so its slot size is most
// of its cost: the key is the address's 16 bytes (backend IPs carry no zone
// and are unmapped, see parseIP) and the value one pointer to the service's
// cache entry. The few IPs that back several services keep the others in a
// second, small map.
type backendIndex struct {
	first map[backendKey]*serviceEntry
	more  map[backendKey][]*serviceEntry
}

// backendKey is a backend IP in 16 bytes instead of netip.Addr's 24.
type backendKey [16]byte

func keyOf(ip netip.Addr) backendKey { return ip.As16() }

func newBackendIndex(endpoints int) backendIndex {
	return backendIndex{first: make(map[backendKey]*serviceEntry, endpoints), more: map[backendKey][]*serviceEntry{}}
}

// len returns the number of distinct backend IPs.
func (x backendIndex) len() int { return len(x.first) }

// has reports whether ip backs at least one rendered service.
func (x backendIndex) has(ip netip.Addr) bool {
	_, used := x.first[keyOf(ip)]
	return used
}

// ids returns the services using ip, in no particular order. Every user has
// a value: an entry is a user only while its value holds the IP.
func (x backendIndex) ids(ip netip.Addr) []model.ServiceID {
	k := keyOf(ip)
	e, used := x.first[k]
	if !used {
		return nil
	}
	out := []model.ServiceID{e.value.ID}
	for _, m := range x.more[k] {
		out = append(out, m.value.ID)
	}
	return out
}

// add records that e uses ip and reports whether ip was unused before.
func (x backendIndex) add(ip netip.Addr, e *serviceEntry) bool {
	k := keyOf(ip)
	if _, used := x.first[k]; !used {
		x.first[k] = e
		return true
	}
	x.more[k] = append(x.more[k], e)
	return false
}

// remove forgets that e uses ip and reports whether ip is now unused.
func (x backendIndex) remove(ip netip.Addr, e *serviceEntry) bool {
	k := keyOf(ip)
	first, used := x.first[k]
	if !used {
		return false
	}
	more := x.more[k]
	if first == e {
		if len(more) == 0 {
			delete(x.first, k)
			return true
		}
		x.first[k] = more[len(more)-1]
		more = more[:len(more)-1]
	} else if i := slices.Index(more, e); i >= 0 {
		more = slices.Delete(more, i, i+1)
	}
	if len(more) == 0 {
		delete(x.more, k)
	} else {
		x.more[k] = more
	}
	return false
}
