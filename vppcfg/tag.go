package vppcfg

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Ownership in VPP.
//
// Kinds that VPP lets us tag (static, identity and LB mappings, ACLs) carry a
// tag built from the owner and the item's label (an ACL's name):
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

// TagPrefix starts every tag this layer writes.
const TagPrefix = "vppsvc:"

// MaxTagLen is the longest tag VPP stores (string[64] including the NUL).
const MaxTagLen = 63

// MaxOwnerLen bounds owner names so that a tag always keeps a readable label.
const MaxOwnerLen = 24

const tagHashLen = 8

// Tag returns the VPP tag for an item of owner with the given label.
func Tag(owner, label string) string {
	full := TagPrefix + owner + ":" + label
	if len(full) <= MaxTagLen {
		return full
	}
	sum := sha256.Sum256([]byte(owner + "\x00" + label))
	keep := MaxTagLen - 1 - tagHashLen
	for keep > 0 && !utf8.RuneStart(full[keep]) {
		keep--
	}
	return full[:keep] + "~" + hex.EncodeToString(sum[:])[:tagHashLen]
}

// ParseTag splits a tag written by this layer into owner and label. The
// label of a shortened tag is its readable, cut part. ok is false for tags
// this layer did not write.
func ParseTag(tag string) (owner, label string, ok bool) {
	rest, found := strings.CutPrefix(tag, TagPrefix)
	if !found {
		return "", "", false
	}
	owner, label, found = strings.Cut(rest, ":")
	if !found || owner == "" {
		return "", "", false
	}
	return owner, label, true
}

// UntaggedClaimFunc reports whether an untagged VPP object not desired by anybody
// belongs to an owner (for example a cnat translation whose VIP lies in the
// owner's service prefixes), so that it may be removed as stale.
type UntaggedClaimFunc func(Item) bool
