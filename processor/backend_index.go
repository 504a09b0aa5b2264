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
// of its cost: the key is the address's 4 or 16 bytes, one map per family
// (backend IPs carry no zone and are unmapped, see parseIP), and the value
// one pointer to the service's cache entry.
type backendIndex struct {
	v4 usersByAddr[[4]byte]
	v6 usersByAddr[[16]byte]
}

// newBackendIndex returns an index with room for the given numbers of IPv4
// and IPv6 endpoints.
func newBackendIndex(endpoints4, endpoints6 int) backendIndex {
	return backendIndex{v4: newUsersByAddr[[4]byte](endpoints4), v6: newUsersByAddr[[16]byte](endpoints6)}
}

// len returns the number of distinct backend IPs.
func (x backendIndex) len() int { return len(x.v4.first) + len(x.v6.first) }

// has reports whether ip backs at least one rendered service.
func (x backendIndex) has(ip netip.Addr) bool {
	if ip.Is4() {
		return x.v4.has(ip.As4())
	}
	return x.v6.has(ip.As16())
}

// ids returns the services using ip, in no particular order.
func (x backendIndex) ids(ip netip.Addr) []model.ServiceID {
	if ip.Is4() {
		return x.v4.ids(ip.As4())
	}
	return x.v6.ids(ip.As16())
}

// add records that e uses ip and reports whether ip was unused before.
func (x backendIndex) add(ip netip.Addr, e *serviceEntry) bool {
	if ip.Is4() {
		return x.v4.add(ip.As4(), e)
	}
	return x.v6.add(ip.As16(), e)
}

// remove forgets that e uses ip and reports whether ip is now unused.
func (x backendIndex) remove(ip netip.Addr, e *serviceEntry) bool {
	if ip.Is4() {
		return x.v4.remove(ip.As4(), e)
	}
	return x.v6.remove(ip.As16(), e)
}

// usersByAddr is the index of one address family: the first user of each
// address in first and, for the few addresses that back several services,
// the others in more.
type usersByAddr[K comparable] struct {
	first map[K]*serviceEntry
	more  map[K][]*serviceEntry
}

func newUsersByAddr[K comparable](size int) usersByAddr[K] {
	return usersByAddr[K]{first: make(map[K]*serviceEntry, size), more: map[K][]*serviceEntry{}}
}

func (u usersByAddr[K]) has(k K) bool {
	_, used := u.first[k]
	return used
}

// ids returns the IDs of the users of k. Every user has a value: an entry
// is a user only while its value holds the address.
func (u usersByAddr[K]) ids(k K) []model.ServiceID {
	e, used := u.first[k]
	if !used {
		return nil
	}
	out := []model.ServiceID{e.value.ID}
	for _, m := range u.more[k] {
		out = append(out, m.value.ID)
	}
	return out
}

func (u usersByAddr[K]) add(k K, e *serviceEntry) bool {
	if _, used := u.first[k]; !used {
		u.first[k] = e
		return true
	}
	u.more[k] = append(u.more[k], e)
	return false
}

func (u usersByAddr[K]) remove(k K, e *serviceEntry) bool {
	first, used := u.first[k]
	if !used {
		return false
	}
	more := u.more[k]
	if first == e {
		if len(more) == 0 {
			delete(u.first, k)
			return true
		}
		u.first[k] = more[len(more)-1]
		more = more[:len(more)-1]
	} else if i := slices.Index(more, e); i >= 0 {
		more = slices.Delete(more, i, i+1)
	}
	if len(more) == 0 {
		delete(u.more, k)
	} else {
		u.more[k] = more
	}
	return false
}
