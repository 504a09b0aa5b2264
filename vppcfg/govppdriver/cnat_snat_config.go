package govppdriver

import (
	"fmt"
	"net/netip"
	"slices"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/cnat"

	"github.com/vppsvc/vppsvc/internal/govppnode"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

func init() {
	register(&kindDriver{
		kind:  vppcfg.KindCNATSnatConfig,
		needs: capCNAT,
		messages: []api.Message{&cnat.CnatSetSnatAddresses{}, &cnat.CnatSetSnatPolicy{},
			&cnat.CnatSnatPolicyAddDelExcludePfx{}},
		ops: forItem(func(op *driverapi.Op, c *vppcfg.CNATSnatConfig, _ *driverapi.OpResult) []*call {
			old, _ := op.Old.(*vppcfg.CNATSnatConfig)
			return snatConfigCalls(op.Type, c, old)
		}),
		// VPP has no dump of the SNAT addresses, policy or prefixes.
	})
}

// snatConfigCalls sets, changes or clears cnat's global SNAT settings. All
// these messages are idempotent, which is what lets the layer re-assert
// them after a resync (VPP cannot dump the policy or the prefixes).
func snatConfigCalls(t driverapi.OpType, c, old *vppcfg.CNATSnatConfig) []*call {
	if t == driverapi.OpDelete {
		calls := []*call{setSnatAddresses(&vppcfg.CNATSnatConfig{}), setSnatPolicy(vppcfg.CNATSnatPolicyNone)}
		for _, p := range c.ExcludePrefixes {
			calls = append(calls, addDelExcludePrefix(false, p))
		}
		return calls
	}
	var calls []*call
	if old == nil || old.SnatIP4 != c.SnatIP4 || old.SnatIP6 != c.SnatIP6 || t == driverapi.OpCreate {
		calls = append(calls, setSnatAddresses(c))
	}
	if old == nil || old.Policy != c.Policy || t == driverapi.OpCreate {
		calls = append(calls, setSnatPolicy(c.Policy))
	}
	for _, p := range c.ExcludePrefixes {
		if old == nil || t == driverapi.OpCreate || !slices.Contains(old.ExcludePrefixes, p) {
			calls = append(calls, addDelExcludePrefix(true, p))
		}
	}
	if old != nil {
		for _, p := range old.ExcludePrefixes {
			if !slices.Contains(c.ExcludePrefixes, p) {
				calls = append(calls, addDelExcludePrefix(false, p))
			}
		}
	}
	return calls
}

func setSnatAddresses(c *vppcfg.CNATSnatConfig) *call {
	return &call{
		req:   &cnat.CnatSetSnatAddresses{SnatIP4: ip4(c.SnatIP4), SnatIP6: ip6(c.SnatIP6), SwIfIndex: anyInterface},
		reply: &cnat.CnatSetSnatAddressesReply{},
		check: accept(fmt.Sprintf("set cnat SNAT addresses %s %s", c.SnatIP4, c.SnatIP6)),
	}
}

func setSnatPolicy(p vppcfg.CNATSnatPolicy) *call {
	return &call{
		req:   &cnat.CnatSetSnatPolicy{Policy: cnat.CnatSnatPolicies(p)},
		reply: &cnat.CnatSetSnatPolicyReply{},
		check: accept(fmt.Sprintf("set cnat SNAT policy %s", p)),
	}
}

// addDelExcludePrefix adds or removes a destination never source-NATed. VPP
// answers +1 to the delete of an absent prefix: gone is what we wanted.
func addDelExcludePrefix(isAdd bool, p netip.Prefix) *call {
	what := fmt.Sprintf("%s cnat SNAT exclude prefix %s", verb(isAdd), p)
	check := accept(what)
	if !isAdd {
		check = accept(what, api.VPPApiError(1))
	}
	return &call{
		req:   &cnat.CnatSnatPolicyAddDelExcludePfx{IsAdd: boolU8(isAdd), Prefix: govppnode.Prefix(p)},
		reply: &cnat.CnatSnatPolicyAddDelExcludePfxReply{},
		check: check,
	}
}
