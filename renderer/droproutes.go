package renderer

import (
	"iter"
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

// FamilyCIDRs returns the prefixes of family f among cidrs, masked, sorted
// and without repeats: what a renderer of f keeps of the service CIDRs the
// processor reports (model.ResyncEventData.ServiceCIDRs).
func FamilyCIDRs(cidrs []netip.Prefix, f Family) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range cidrs {
		// An IPv4-mapped IPv6 prefix is neither family's: the processor
		// refuses them, and a route for one would be an IPv6 route.
		if p.IsValid() && !p.Addr().Is4In6() && f.Has(p.Addr()) {
			out = append(out, p.Masked())
		}
	}
	slices.SortFunc(out, netip.Prefix.Compare)
	return slices.Compact(out)
}

// EffectiveServiceCIDRs is the precedence of the service CIDRs: those
// configured for the renderer (kube-proxy's --service-cluster-ip-range)
// when there are any, else those the processor reported from the cluster's
// ServiceCIDR objects. Explicit configuration beats discovery.
func EffectiveServiceCIDRs(configured, reported []netip.Prefix) []netip.Prefix {
	if len(configured) > 0 {
		return configured
	}
	return reported
}

// ServiceCIDRChanges returns, as changes that re-render each from its
// value, the services whose per-ClusterIP drop routes (ClusterIPDropRoutes)
// differ between the service CIDRs old and new: those with a ClusterIP of
// family f that one set covers and the other does not. A service CIDR
// change thus writes only the routes of the ClusterIPs it moves.
func ServiceCIDRChanges(old, new []netip.Prefix, f Family, services iter.Seq[*model.ContivService]) []Change {
	if slices.Equal(old, new) {
		return nil
	}
	var out []Change
	for svc := range services {
		for _, ip := range svc.ClusterIPs {
			ip = ip.Unmap()
			if f.Has(ip) && covered(old, ip) != covered(new, ip) {
				out = append(out, Change{ID: svc.ID, Service: svc})
				break
			}
		}
	}
	return out
}

// covered reports whether a prefix of cidrs contains ip.
func covered(cidrs []netip.Prefix, ip netip.Addr) bool {
	return slices.ContainsFunc(cidrs, func(p netip.Prefix) bool { return p.Contains(ip) })
}

// ServiceCIDRDropRoutes returns a drop route per service CIDR of family f in
// each of vrfs (kube-proxy's --service-cluster-ip-range, or the cluster's
// ServiceCIDR objects), node-wide.
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
// live ClusterIP are dropped even without a service CIDR, and so are those
// of a ClusterIP outside every service CIDR (a range being removed). One
// item per ClusterIP and VRF: a service change costs O(1) routes.
func ClusterIPDropRoutes(svc *model.ContivService, cidrs []netip.Prefix, f Family, vrfs ...uint32) []vppcfg.Item {
	return AppendClusterIPDropRoutes(nil, svc, cidrs, f, vrfs...)
}

// AppendClusterIPDropRoutes is ClusterIPDropRoutes appended to out: a
// renderer appends them to its service's other items without a list of
// their own.
func AppendClusterIPDropRoutes(out []vppcfg.Item, svc *model.ContivService, cidrs []netip.Prefix, f Family, vrfs ...uint32) []vppcfg.Item {
	for _, ip := range svc.ClusterIPs {
		ip = ip.Unmap()
		if !f.Has(ip) || ip.IsUnspecified() || covered(cidrs, ip) {
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
