package renderertest

import (
	"fmt"

	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/vppcfgtest"
)

// CheckVPP checks what VPP and the VPP layer require of one renderer's
// whole desired state, whatever the renderer, and returns one message per
// violation:
//
//   - every item valid as the VPP layer judges it (vppcfgtest.Validate: an LB
//     mapping with at least two locals, a cnat translation with paths of
//     the VIP's family and no port 0, ACL rules of one family, …);
//   - NAT44: one mapping per external key (vppcfg.ExternalKey) whatever its
//     kind and VRF (VPP rejects a second one; the layer lets identity
//     mappings of one address share it across VRFs, renderers do not), no
//     zero weight in an LB mapping, and the NAT44 plugin item whenever NAT44
//     items exist (the layer holds them pending without it);
//   - items agreeing on what VPP keeps once per group
//     (vppcfgtest.SharedSetting: cnat keeps the real-IP flag of a VIP address
//     as its first translation set it);
//   - ACLs: a name that fits a VPP tag, at least one rule (an ACL without
//     rules denies everything on the interfaces it is bound to), bindings
//     only of desired ACLs, and on every interface with a filter ACL bound
//     on input the shared permit-all ACL bound last, equal to
//     renderer.PermitAllACL (without it every unrelated packet on the
//     interface would be dropped).
func CheckVPP(items map[vppcfg.Key]vppcfg.Item) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	external := map[string]vppcfg.Key{}
	shared := map[string]string{}
	permitAll, filtered := map[string]bool{}, map[string]bool{}
	nat := false
	for k, it := range items {
		if err := vppcfgtest.Validate(it); err != nil {
			fail("%v", err)
		}
		nat = nat || (vppcfgtest.IsNAT44(k.Kind) && k != vppcfg.NAT44GlobalKey())
		if ext, ok := vppcfg.ExternalKey(it); ok {
			if other, dup := external[ext]; dup {
				fail("%s and %s share the VPP external key %s", other, k, ext)
			}
			external[ext] = k
		}
		// The renderers' own conventions, beyond what the layer requires.
		if lb, ok := it.(*vppcfg.NAT44LBMapping); ok {
			for _, l := range lb.Locals {
				if l.Probability == 0 && l != vppcfg.LBPlaceholder(lb) {
					fail("%s: local %s has probability 0", k, l.Addr)
				}
			}
		}
		if g, v, ok := vppcfgtest.SharedSetting(it); ok {
			if was, seen := shared[g]; seen && was != v {
				fail("%s: items disagree on the %s (%s, %s; VPP keeps the first)", k, g, was, v)
			}
			shared[g] = v
		}
		if acl, ok := it.(*vppcfg.ACL); ok {
			checkACL(k, acl, fail)
		}
		if b, ok := it.(*vppcfg.ACLBinding); ok {
			checkBinding(k, b, items, fail, permitAll, filtered)
		}
	}
	for ifName := range filtered {
		if !permitAll[ifName] {
			fail("interface %s has filter ACLs on input but no permit-all ACL", ifName)
		}
	}
	if nat && items[vppcfg.NAT44GlobalKey()] == nil {
		fail("NAT44 items without nat44-global")
	}
	return errs
}

func checkACL(k vppcfg.Key, acl *vppcfg.ACL, fail func(string, ...any)) {
	if acl.Name == "" || len(acl.Name) > renderer.MaxLabelLen {
		fail("%s: name must be 1 to %d bytes", k, renderer.MaxLabelLen)
	}
	if len(acl.Rules) == 0 {
		fail("%s: no rules (an empty ACL denies everything)", k)
	}
	if acl.Name == renderer.PermitAllACLName && !acl.Equal(renderer.PermitAllACL()) {
		fail("%s: differs from renderer.PermitAllACL, which every renderer shares by value", k)
	}
}

// checkBinding records which interfaces filter on input and which carry the
// permit-all ACL, and checks the binding's ACL and place.
func checkBinding(k vppcfg.Key, b *vppcfg.ACLBinding, items map[vppcfg.Key]vppcfg.Item, fail func(string, ...any), permitAll, filtered map[string]bool) {
	if items[vppcfg.ACLKey(b.ACL)] == nil {
		fail("%s: ACL %q not desired", k, b.ACL)
	}
	switch {
	case b.Direction != vppcfg.ACLInput:
	case b.ACL == renderer.PermitAllACLName:
		permitAll[b.Interface] = true
		if b.Priority != renderer.PermitAllPriority {
			fail("%s: the permit-all ACL is not bound last (priority %d)", k, b.Priority)
		}
	case b.Priority >= renderer.PermitAllPriority:
		fail("%s: bound after the permit-all ACL (priority %d)", k, b.Priority)
	default:
		filtered[b.Interface] = true
	}
}
