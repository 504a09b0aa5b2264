package renderer

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/model"
)

// Family is an IP address family. Each renderer serves one, as kube-proxy
// runs one proxier per family.
type Family uint8

const (
	IPv4 Family = 4
	IPv6 Family = 6
)

func (f Family) String() string {
	if f == IPv6 {
		return "IPv6"
	}
	return "IPv4"
}

// Has reports whether a is an address of the family. IPv4-mapped IPv6
// addresses count as IPv4, as everywhere in the model.
func (f Family) Has(a netip.Addr) bool {
	a = a.Unmap()
	if f == IPv6 {
		return a.Is6()
	}
	return a.Is4()
}

// HostPrefix returns the prefix that matches exactly a (/32 or /128).
func HostPrefix(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen())
}

// unspecified returns the family's unspecified address (0.0.0.0 or ::).
func (f Family) unspecified() netip.Addr {
	if f == IPv6 {
		return netip.IPv6Unspecified()
	}
	return netip.IPv4Unspecified()
}

// Serves reports whether a renderer of family f renders the service at all:
// only when the service has a ClusterIP of that family. kube-proxy's
// proxier of one family ignores services without a ClusterIP of its family
// in the same way. Without the rule a single-stack service would get
// node-port frontends on every node IP of the other family, which no
// endpoint of that family can serve, so each of them would only cost a
// drop rule. (External and LoadBalancer IPs of a family the service lacks
// never reach the renderers: the processor keeps only the families of the
// ClusterIPs. Headless services are not rendered at all.)
func Serves(svc *model.ContivService, f Family) bool {
	for _, ip := range svc.ClusterIPs {
		if f.Has(ip) {
			return true
		}
	}
	return false
}
