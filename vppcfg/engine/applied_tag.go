package engine

import (
	"strings"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// The VPP tag of an applied item is almost always the one this layer writes
// for its owner and label, so it is computed when needed instead of kept
// with every item. oddTags holds the exceptions, by key: a dumped object
// whose tag was shortened or names another of the item's owners, or an item
// whose owner or label changed while VPP kept the tag it was created with.
type oddTags map[vppcfg.Key]string

// of returns the tag VPP holds for the applied item a at k ("" for kinds
// VPP keeps no tag for).
func (o oddTags) of(k vppcfg.Key, a appliedEntry) string {
	if t, ok := o[k]; ok {
		return t
	}
	if !core.Taggable(k.Kind) {
		return ""
	}
	return core.Tag(a.Owner.String(), core.ItemLabel(a.Item))
}

// keep records that the applied item a at k carries tag, storing it only
// when of would not compute it.
func (o oddTags) keep(k vppcfg.Key, a appliedEntry, tag string) {
	delete(o, k)
	if core.Taggable(k.Kind) {
		if !isTag(tag, a.Owner.String(), core.ItemLabel(a.Item)) {
			o[k] = tag
		}
	} else if tag != "" {
		o[k] = tag
	}
}

// writesTag reports whether a driver sends the tag with ops of type t: an
// update rewrites it, a delete names the object it removes. Adding or
// removing an LB mapping's local does neither, so that an endpoint change
// does not build a tag.
func writesTag(t driverapi.OpType) bool { return t == driverapi.OpUpdate || t == driverapi.OpDelete }

// relabel keeps k's tag after its applied item a changed in place from
// owner and label: VPP still holds the tag written before.
func (o oddTags) relabel(k vppcfg.Key, a appliedEntry, owner, label string) {
	if _, odd := o[k]; odd || !core.Taggable(k.Kind) {
		return
	}
	if a.Owner.String() != owner || core.ItemLabel(a.Item) != label {
		o[k] = core.Tag(owner, label)
	}
}

// isTag reports whether tag is Tag(owner, label), without building it in
// the common case of a tag short enough to be written whole.
func isTag(tag, owner, label string) bool {
	if len(core.TagPrefix)+len(owner)+1+len(label) > core.MaxTagLen {
		return tag == core.Tag(owner, label)
	}
	rest, ok := strings.CutPrefix(tag, core.TagPrefix)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, owner)
	return ok && len(rest) == 1+len(label) && rest[0] == ':' && rest[1:] == label
}
