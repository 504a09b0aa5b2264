package vppcfg

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
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
// left alone, unless Options.Claims gives an owner a predicate that claims
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

// validateOwner checks an owner name: it becomes part of every tag.
func validateOwner(owner string) error {
	switch {
	case owner == "":
		return fmt.Errorf("owner: empty name")
	case len(owner) > MaxOwnerLen:
		return fmt.Errorf("owner %q: longer than %d bytes", owner, MaxOwnerLen)
	case strings.ContainsAny(owner, ": \x00"):
		return fmt.Errorf("owner %q: must not contain ':', spaces or NUL", owner)
	}
	return nil
}

// UntaggedClaimFunc reports whether an untagged VPP object not desired by anybody
// belongs to an owner (for example a cnat translation whose VIP lies in the
// owner's service prefixes), so that it may be removed as stale.
type UntaggedClaimFunc func(Item) bool

// taggable reports whether VPP stores a tag for items of kind k.
func taggable(k Kind) bool { return describe(k).taggable() }

// itemLabel returns the label an item contributes to its tag.
func itemLabel(it Item) string {
	if d := descriptorOf(it); d.taggable() {
		return d.label(it)
	}
	return ""
}

// withLabel returns a copy of a dumped item with the label recovered from its tag.
func withLabel(it Item, label string) Item { return descriptorOf(it).withLabel(it, label) }

// withUnobservable copies into a dumped item the fields VPP does not report
// back, from the desired value (each kind's descriptor names them: cnat
// dumps show IsRealIP, flags and flow hash as 0, NAT44 static mapping dumps
// omit the twice-NAT pool address, LB mapping dumps never fill the
// affinity). Drift in those fields cannot be detected; it is fixed by the
// next change of the item.
func withUnobservable(observed, desired Item) Item {
	return descriptorOf(observed).withUnobservable(observed, desired)
}

// desiredLookup is what classification needs to know about desired state.
type desiredLookup interface {
	// get returns the desired value of key and its owners (sorted).
	get(k Key) (Item, []string, bool)
	// keyByTag finds the desired item of a kind keyed by label
	// (kindSpec.KeyedByLabel) whose tag, for one of its owners, is tag.
	keyByTag(tag string) (Key, bool)
}

// classified is a dump sorted into what the layer owns and what it must not touch.
type classified struct {
	// applied are objects this layer made (tagged ours) or that an owner
	// claims; orphans among them are not desired by anybody.
	applied map[Key]appliedEntry
	// tags are the tags of applied objects that differ from the one the
	// layer would write for them.
	tags oddTags
	// unowned are untagged objects nobody claims; one is adopted when an
	// owner comes to desire its key.
	unowned map[Key]appliedEntry
	// owners share one copy of each owner name among the entries.
	owners ownerRefs
	// foreign are tagged objects of others (or untagged objects of taggable
	// kinds); they block desired items at the same VPP identity.
	foreign map[Key]Item
	// names are the names of the objects of kinds keyed by label, by kind
	// and VPP index: merged values refer to them by index.
	names map[Kind]map[uint32]string
	// aclFront are the foreign ACL indexes bound per interface, kept in
	// front; aclOrder are our ACLs bound per interface, in VPP order (the
	// merged state of ACL bindings, kind_acl_binding_merge.go).
	aclFront map[string]aclIndexes
	aclOrder map[string]aclNameList
}

// classify maps a dump back to items and owners.
func classify(st *driverapi.State, desired desiredLookup, claims map[string]UntaggedClaimFunc) *classified {
	c := &classified{
		applied:  map[Key]appliedEntry{},
		tags:     oddTags{},
		unowned:  map[Key]appliedEntry{},
		owners:   ownerRefs{},
		foreign:  map[Key]Item{},
		names:    map[Kind]map[uint32]string{},
		aclFront: map[string]aclIndexes{},
		aclOrder: map[string]aclNameList{},
	}
	var mergedObjs []driverapi.Observed
	for _, o := range st.Objects {
		kind := o.Item.Key().Kind
		d := describe(kind)
		switch {
		case d.merge != nil:
			mergedObjs = append(mergedObjs, o) // once the objects they refer to are known
		case !d.taggable():
			c.addUntagged(o, desired, claims)
		default:
			c.addTagged(o, d, desired)
		}
	}
	for _, o := range mergedObjs {
		describe(o.Item.Key().Kind).merge.observe(c, o, desired)
	}
	return c
}

// addTagged classifies an object of a taggable kind by its tag.
func (c *classified) addTagged(o driverapi.Observed, d *descriptor, desired desiredLookup) {
	owner, label, ours := ParseTag(o.Tag)
	if !ours {
		if !d.keyedByLabel {
			c.foreign[o.Item.Key()] = o.Item
		}
		return
	}
	var key Key
	if d.keyedByLabel {
		if k, ok := desired.keyByTag(o.Tag); ok {
			key = k
			label = k.Name
		} else {
			key = Key{Kind: d.kind, Name: label}
		}
	} else {
		key = o.Item.Key()
		if di, owners, ok := desired.get(key); ok {
			for _, ow := range owners {
				if Tag(ow, itemLabel(di)) == o.Tag {
					label = itemLabel(di)
					break
				}
			}
		}
	}
	item := withLabel(o.Item, label)
	e := appliedEntry{Item: item, Handle: o.Handle, Owner: c.owners.of(owner)}
	if di, owners, ok := desired.get(key); ok {
		e.Item = withUnobservable(item, di)
		e.Owner = c.owners.of(owners[0])
	} else {
		e.Orphan = true
	}
	if _, dup := c.applied[key]; dup {
		// A second object with the same identity (an interrupted create
		// retried by an earlier run): keep it under a key of its own so
		// that it is pruned like any stale object.
		key = Key{Kind: key.Kind, Name: fmt.Sprintf("%s#dup%d", key.Name, o.Handle)}
		e.Orphan = true
	}
	c.applied[key] = e
	c.tags.keep(key, e, o.Tag)
	if d.keyedByLabel {
		if c.names[d.kind] == nil {
			c.names[d.kind] = map[uint32]string{}
		}
		c.names[d.kind][o.Handle] = key.Name
	}
}

func (c *classified) addUntagged(o driverapi.Observed, desired desiredLookup, claims map[string]UntaggedClaimFunc) {
	key := o.Item.Key()
	e := appliedEntry{Item: o.Item, Handle: o.Handle}
	if d, owners, ok := desired.get(key); ok {
		e.Item = withUnobservable(o.Item, d)
		e.Owner = c.owners.of(owners[0])
		c.applied[key] = e
		return
	}
	for _, owner := range sortedKeys(claims) {
		if claims[owner](o.Item) {
			e.Owner, e.Orphan = c.owners.of(owner), true
			c.applied[key] = e
			return
		}
	}
	c.unowned[key] = e
}
