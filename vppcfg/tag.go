package vppcfg

import "github.com/vppsvc/vppsvc/vppcfg/internal/core"

// Ownership in VPP.
//
// Kinds that VPP lets us tag (static, identity and LB mappings, ACLs) carry a
// tag built from the owner and the item's label (an ACL's name; core.Tag,
// which the engine writes and parses):
//
//	vppsvc:<owner>:<label>
//
// cut to 63 bytes (VPP's tag field is 64 bytes with the terminator) as
// <first 54 bytes>~<8 hex digits of sha256(owner, label)> when longer. The tag
// is deterministic, so a restarted agent recomputes the tags of what it wants
// and matches them against the dump: equal tag and equal value means the
// object is adopted as is (hitless restart). A tagged object whose owner part
// is another owner of this layer is ours too; one with any other tag, or
// none, is foreign and never touched.
//
// Untagged kinds (NAT44 global, pool addresses, interface roles, cnat
// translations and SNAT settings, interface features) cannot say who made
// them. The rule: an untagged object at a key some owner desires is adopted
// by that owner (desiring it claims it); an untagged object nobody desires is
// left alone, unless the engine's Options.Claims gives an owner a predicate that claims
// it, in which case it is removed as stale once that owner has committed its
// first ResyncTxn.

// The bounds of VPP tags: MaxTagLen is the longest tag VPP stores
// (string[64] including the NUL), which also bounds the labels (ACL names)
// that stay readable in a tag; MaxOwnerLen bounds owner names so that a
// tag always keeps a readable label.
const (
	MaxTagLen   = core.MaxTagLen
	MaxOwnerLen = 24
)

// UntaggedClaimFunc reports whether an untagged VPP object not desired by anybody
// belongs to an owner (for example a cnat translation whose VIP lies in the
// owner's service prefixes), so that it may be removed as stale.
type UntaggedClaimFunc func(Item) bool
