package renderer

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// PermitAllACLName is the name (VPP tag) of the shared permit-all ACL.
const PermitAllACLName = "vppsvc-permit-all"

// ACL binding priorities. The VPP layer concatenates the ACLs bound to one
// direction of an interface into the single list VPP evaluates, ordered by
// ascending Priority (then name); the first matching rule of the whole list
// decides, and a packet no rule matches is denied.
//
// A renderer that filters traffic therefore binds ACLs that match only its
// own services' destinations (its filter shards, ACLShards) at
// ServiceACLPriority, and binds the shared permit-all ACL at
// PermitAllPriority, the largest value, so that it comes last and lets all
// other traffic through. Without it, binding a filter ACL would drop every
// unrelated packet on the interface.
const (
	ServiceACLPriority int32 = 1000
	PermitAllPriority  int32 = 1 << 30
)

// PermitAllACL returns the shared ACL that permits every IPv4 and IPv6
// packet. Every renderer must put exactly this value (same key, equal rules)
// so that the VPP layer treats it as one shared item, kept until its last
// owner deletes it. It holds rules for both families because an ACL bound to
// an interface filters IPv4 and IPv6 alike: a v4-only permit-all would drop
// all IPv6 on the interface.
func PermitAllACL() *vppcfg.ACL {
	return &vppcfg.ACL{
		Name: PermitAllACLName,
		Rules: []vppcfg.ACLRule{
			permitAllRule(netip.PrefixFrom(netip.IPv4Unspecified(), 0)),
			permitAllRule(netip.PrefixFrom(netip.IPv6Unspecified(), 0)),
		},
	}
}

func permitAllRule(any netip.Prefix) vppcfg.ACLRule {
	return vppcfg.ACLRule{
		Action:   vppcfg.ACLPermit,
		Src:      any,
		Dst:      any,
		Protocol: vppcfg.ProtoAny,
		SrcPorts: vppcfg.AnyPort,
		DstPorts: vppcfg.AnyPort,
	}
}

// PermitAllBinding binds the shared permit-all ACL as the last input ACL of
// an interface. Renderers bind it on every interface where they bind an
// input ACL of their own; like PermitAllACL it is shared by equal value.
func PermitAllBinding(ifName string) *vppcfg.ACLBinding {
	return &vppcfg.ACLBinding{
		Interface: ifName,
		Direction: vppcfg.ACLInput,
		ACL:       PermitAllACLName,
		Priority:  PermitAllPriority,
	}
}
