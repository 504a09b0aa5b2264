package renderertest

import (
	"fmt"
	"net/netip"

	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// CheckVPP checks what VPP and the VPP layer require of one renderer's
// whole desired state, whatever the renderer, and returns one message per
// violation:
//
//   - NAT44: one mapping per external address:port/protocol whatever its
//     kind (VPP rejects a second one), at least two locals and no zero
//     weight in an LB mapping (VPP rejects the first and divides by zero on
//     all-zero weights), and the NAT44 plugin item whenever NAT44 items
//     exist (the layer holds them pending without it);
//   - cnat: at least one path per translation (VPP 25.10 aborts on an
//     empty list), no path to port 0 (cnat rewrites the port to 0), paths of
//     the VIP's family, and translations of one address agreeing on
//     IsRealIP (cnat keeps the kind it saw first);
//   - ACLs: a name that fits a VPP tag, at least one rule (an ACL without
//     rules denies everything on the interfaces it is bound to), rules with
//     both prefixes of one family, bindings only of desired ACLs, and on
//     every interface with a filter ACL bound on input the shared
//     permit-all ACL bound last, equal to renderer.PermitAllACL (without it
//     every unrelated packet on the interface would be dropped).
func CheckVPP(items map[vppcfg.Key]vppcfg.Item) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	external := map[string]vppcfg.Key{}
	claimExternal := func(k vppcfg.Key, ext netip.AddrPort, proto vppcfg.Protocol) {
		id := ext.String() + "/" + proto.String()
		if other, dup := external[id]; dup {
			fail("%s and %s share the VPP external key %s", other, k, id)
		}
		external[id] = k
	}
	realIP := map[netip.Addr]bool{}
	permitAll, filtered := map[string]bool{}, map[string]bool{}
	nat := false
	for k, it := range items {
		switch v := it.(type) {
		case *vppcfg.NAT44LBMapping:
			nat = true
			claimExternal(k, v.External, v.Protocol)
			if len(v.Locals) < 2 {
				fail("%s: fewer than 2 locals", k)
			}
			for _, l := range v.Locals {
				if l.Probability == 0 {
					fail("%s: local %s has probability 0", k, l.Addr)
				}
			}
		case *vppcfg.NAT44StaticMapping:
			nat = true
			claimExternal(k, v.External, v.Protocol)
		case *vppcfg.NAT44IdentityMapping:
			nat = true
			claimExternal(k, netip.AddrPortFrom(v.Addr, v.Port), v.Protocol)
		case *vppcfg.NAT44Interface, *vppcfg.NAT44Address:
			nat = true
		case *vppcfg.CNATTranslation:
			checkTranslation(k, v, fail)
			if was, seen := realIP[v.VIP.Addr()]; seen && was != v.IsRealIP {
				fail("%s: translations of %s disagree on IsRealIP (cnat keeps the first)", k, v.VIP.Addr())
			}
			realIP[v.VIP.Addr()] = v.IsRealIP
		case *vppcfg.ACL:
			checkACL(k, v, fail)
		case *vppcfg.ACLBinding:
			if items[vppcfg.ACLKey(v.ACL)] == nil {
				fail("%s: ACL %q not desired", k, v.ACL)
			}
			switch {
			case v.Direction != vppcfg.ACLInput:
			case v.ACL == renderer.PermitAllACLName:
				permitAll[v.Interface] = true
				if v.Priority != renderer.PermitAllPriority {
					fail("%s: the permit-all ACL is not bound last (priority %d)", k, v.Priority)
				}
			case v.Priority >= renderer.PermitAllPriority:
				fail("%s: bound after the permit-all ACL (priority %d)", k, v.Priority)
			default:
				filtered[v.Interface] = true
			}
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

func checkTranslation(k vppcfg.Key, t *vppcfg.CNATTranslation, fail func(string, ...any)) {
	if len(t.Paths) == 0 {
		fail("%s: empty path list", k)
	}
	for _, p := range t.Paths {
		if p.Dst.Port() == 0 || p.Dst.Addr().Unmap().Is4() != t.VIP.Addr().Unmap().Is4() {
			fail("%s: bad path destination %s", k, p.Dst)
		}
	}
}

func checkACL(k vppcfg.Key, acl *vppcfg.ACL, fail func(string, ...any)) {
	if acl.Name == "" || len(acl.Name) > renderer.MaxTagLen {
		fail("%s: name must be 1 to %d bytes", k, renderer.MaxTagLen)
	}
	if len(acl.Rules) == 0 {
		fail("%s: no rules (an empty ACL denies everything)", k)
	}
	for _, r := range acl.Rules {
		if r.Src.Addr().Is4() != r.Dst.Addr().Is4() {
			fail("%s: rule %s mixes families", k, r)
		}
	}
	if acl.Name == renderer.PermitAllACLName && !acl.Equal(renderer.PermitAllACL()) {
		fail("%s: differs from renderer.PermitAllACL, which every renderer shares by value", k)
	}
}
