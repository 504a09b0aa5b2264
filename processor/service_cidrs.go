package processor

import (
	"net/netip"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc"
)

// serviceCIDRCache holds the service CIDRs of the cluster's ServiceCIDR
// objects (networking.k8s.io/v1) and the set renderers get: the configured
// ones (Config.ServiceCIDRs) when there are any, else the union of the
// objects' CIDRs in force. ServiceCIDR objects are few (one per range an
// administrator added), so the union is recomputed on every change.
type serviceCIDRCache struct {
	configured []netip.Prefix
	// byName are the valid CIDRs of each object in force: neither being
	// deleted nor marked not Ready.
	byName map[string][]netip.Prefix
	// current is the set renderers last got, sorted and masked.
	current []netip.Prefix
}

func newServiceCIDRCache(configured []netip.Prefix) *serviceCIDRCache {
	c := &serviceCIDRCache{configured: sortedPrefixes(configured), byName: map[string][]netip.Prefix{}}
	c.current = c.effective()
	return c
}

// set stores the CIDRs of one object (none: the object does not count) and
// returns the new effective set and whether it changed.
func (c *serviceCIDRCache) set(name string, cidrs []netip.Prefix) ([]netip.Prefix, bool) {
	if len(cidrs) == 0 {
		delete(c.byName, name)
	} else {
		c.byName[name] = cidrs
	}
	next := c.effective()
	changed := !slices.Equal(next, c.current)
	c.current = next
	return next, changed
}

// effective is the configured set, or the union of the objects' CIDRs.
func (c *serviceCIDRCache) effective() []netip.Prefix {
	if len(c.configured) > 0 {
		return c.configured
	}
	var all []netip.Prefix
	for _, cidrs := range c.byName {
		all = append(all, cidrs...)
	}
	return sortedPrefixes(all)
}

// sortedPrefixes returns ps masked, sorted and without repeats; nil for
// none.
func sortedPrefixes(ps []netip.Prefix) []netip.Prefix {
	if len(ps) == 0 {
		return nil
	}
	out := make([]netip.Prefix, len(ps))
	for i, p := range ps {
		out[i] = p.Masked()
	}
	slices.SortFunc(out, netip.Prefix.Compare)
	return slices.Compact(out)
}

// parseServiceCIDR returns the CIDRs of a ServiceCIDR object that count:
// none while the object is being deleted (the API server allocates no
// ClusterIP from it any more, and the ClusterIPs still in it keep their own
// drop routes) or while its Ready condition is False; a missing condition
// counts as ready, as the API server's allocator takes it (no controller
// may be running to set it). An element that is not a CIDR, is not in
// canonical form, is IPv4-mapped or has length 0 (a route for it would drop
// every address of its family) is skipped and reported.
func parseServiceCIDR(sc *networkingv1.ServiceCIDR) ([]netip.Prefix, []Problem) {
	var out []netip.Prefix
	var probs []Problem
	for _, v := range sc.Spec.CIDRs {
		p, err := netip.ParsePrefix(v)
		reason := ""
		switch {
		case err != nil:
			reason = "not a CIDR"
		case p.Addr().Is4In6():
			reason = "IPv4-mapped IPv6 prefix; not a service CIDR of either family"
		case p.Bits() == 0:
			reason = "a prefix of length 0 would drop every address of its family"
		case p.Masked() != p:
			reason = "host bits set; not a CIDR in canonical form"
		}
		if reason != "" {
			probs = append(probs, Problem{Kind: KindServiceCIDR, Object: sc.Name, Field: "spec.cidrs[]",
				Value: v, Reason: reason + "; skipped"})
			continue
		}
		out = append(out, p)
	}
	if sc.DeletionTimestamp != nil || cidrNotReady(sc) {
		return nil, probs
	}
	return out, probs
}

// cidrNotReady reports a Ready condition that is False (or Unknown).
func cidrNotReady(sc *networkingv1.ServiceCIDR) bool {
	for _, c := range sc.Status.Conditions {
		if c.Type == networkingv1.ServiceCIDRConditionReady {
			return c.Status != metav1.ConditionTrue
		}
	}
	return false
}

// resetServiceCIDRs replaces the ServiceCIDR objects with those of a
// snapshot; Resync hands renderers the result.
func (p *Processor) resetServiceCIDRs(objs []*networkingv1.ServiceCIDR) {
	p.cidrs = newServiceCIDRCache(p.cfg.ServiceCIDRs)
	for _, sc := range objs {
		if sc == nil || sc.Name == "" {
			p.report(problemOwner{kind: KindServiceCIDR}, []Problem{{Kind: KindServiceCIDR, Field: "metadata.name", Reason: "nil or unnamed ServiceCIDR ignored"}})
			continue
		}
		cidrs, probs := parseServiceCIDR(sc)
		p.report(problemOwner{kind: KindServiceCIDR, name: sc.Name}, probs)
		p.cidrs.set(sc.Name, cidrs)
	}
}

// UpdateServiceCIDR handles a created or changed ServiceCIDR object. While
// service CIDRs are configured (Config.ServiceCIDRs) the objects change
// nothing rendered.
func (p *Processor) UpdateServiceCIDR(sc *networkingv1.ServiceCIDR) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Events[KindServiceCIDR]++
	if sc == nil || sc.Name == "" {
		p.report(problemOwner{kind: KindServiceCIDR}, []Problem{{Kind: KindServiceCIDR, Field: "metadata.name", Reason: "nil or unnamed ServiceCIDR ignored"}})
		return
	}
	cidrs, probs := parseServiceCIDR(sc)
	p.report(problemOwner{kind: KindServiceCIDR, name: sc.Name}, probs)
	p.applyServiceCIDRs(p.cidrs.set(sc.Name, cidrs))
}

// DeleteServiceCIDR handles a deleted ServiceCIDR object.
func (p *Processor) DeleteServiceCIDR(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Events[KindServiceCIDR]++
	p.problems.forget(problemOwner{kind: KindServiceCIDR, name: name})
	p.applyServiceCIDRs(p.cidrs.set(name, nil))
}

// applyServiceCIDRs tells the renderers that care about a change of the
// effective service CIDRs.
func (p *Processor) applyServiceCIDRs(cidrs []netip.Prefix, changed bool) {
	if !changed || !p.synced {
		return
	}
	p.fanOut("UpdateServiceCIDRs", "", func(r renderer) error {
		if u, ok := r.(vppsvc.ServiceCIDRRenderer); ok {
			return u.UpdateServiceCIDRs(slices.Clone(cidrs))
		}
		return nil
	})
}

// ServiceCIDRs returns the service CIDRs renderers get: the configured
// ones, or else those of the ServiceCIDR objects in force.
func (p *Processor) ServiceCIDRs() []netip.Prefix {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.cidrs.current)
}
