package renderer

import (
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// kube-proxy rejects traffic to a ClusterIP on a port the service does not
// expose, and traffic to an address of the service CIDR no service holds.
// VPP's translators pass such packets untranslated (NAT44-ED with
// forwarding on; cnat's interposed VIPs), and the FIB would then send them
// out of the node. A drop route ends them instead: the translators rewrite
// what they serve before the FIB lookup, so only what nobody translated
// meets the route. VPP's ACL plugin cannot reject, so clients see a timeout
// rather than a refusal (docs/renderer-nat44.md, "Unknown ports and
// unallocated service IPs").

// ServiceCIDRDropRoutes returns a drop route per service CIDR of family f in
// each of vrfs (kube-proxy's --service-cluster-ip-range), node-wide.
func ServiceCIDRDropRoutes(cidrs []netip.Prefix, f Family, vrfs ...uint32) []vppcfg.Item {
	var out []vppcfg.Item
	for _, p := range cidrs {
		if !f.Has(p.Addr()) {
			continue
		}
		for _, vrf := range dedupVRFs(vrfs) {
			out = append(out, &vppcfg.DropRoute{Prefix: p.Masked(), VRF: vrf})
		}
	}
	return out
}

// ClusterIPDropRoutes returns a host drop route, in each of vrfs, per
// ClusterIP of family f that no service CIDR covers: the other ports of a
// live ClusterIP are dropped even without --service-cluster-ip-range. One
// item per ClusterIP and VRF: a service change costs O(1) routes.
func ClusterIPDropRoutes(svc *model.ContivService, cidrs []netip.Prefix, f Family, vrfs ...uint32) []vppcfg.Item {
	var out []vppcfg.Item
	for _, ip := range svc.ClusterIPs {
		ip = ip.Unmap()
		if !f.Has(ip) || ip.IsUnspecified() || slices.ContainsFunc(cidrs, func(p netip.Prefix) bool { return p.Contains(ip) }) {
			continue
		}
		for _, vrf := range dedupVRFs(vrfs) {
			out = append(out, &vppcfg.DropRoute{Prefix: HostPrefix(ip), VRF: vrf})
		}
	}
	return out
}

// dedupVRFs returns vrfs without repeats, in order; none means table 0.
// The usual pod and host VRF pair (0, 0) costs no allocation.
func dedupVRFs(vrfs []uint32) []uint32 {
	switch {
	case len(vrfs) == 0:
		return []uint32{0}
	case len(vrfs) == 2 && vrfs[0] == vrfs[1]:
		return vrfs[:1]
	}
	out := slices.Clone(vrfs)
	slices.Sort(out)
	return slices.Compact(out)
}
