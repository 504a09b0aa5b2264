// Package vppcli writes VPP configuration items as the VPP CLI lines an
// operator would type to get the same configuration. Each item's lines come
// from its kind's descriptor (present.CLICommands); this package orders them,
// folds the ACL bindings of an interface into the one API call VPP takes,
// and explains the renderers' placeholder ACLs.
package vppcli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/present"
)

// Lines returns the CLI lines for items, in creation order (kind, then key).
// ACL bindings refer to ACLs by index; the indexes are those a fresh VPP
// assigns when the ACLs are created in the order printed. The bindings of
// one interface are folded into one `binary-api acl_interface_set_acl_list`
// line (the API call the VPP layer makes: the whole list of the interface,
// input then output, in priority order), because `set acl-plugin interface`
// binds one ACL per line. Empty filter shards hold a placeholder rule that
// VPP needs; they are introduced by one comment that says so.
func Lines(items []vppcfg.Item) []string {
	items = slices.Clone(items)
	slices.SortFunc(items, compareItems)
	aclIndex := map[string]int{}
	var out []string
	for _, it := range items {
		if acl, ok := it.(*vppcfg.ACL); ok {
			aclIndex[acl.Name] = len(aclIndex)
		}
	}
	placeholderNoted := false
	bindings := map[string][2][]string{}
	var bindingIfs []string
	for _, it := range items {
		if b, ok := it.(*vppcfg.ACLBinding); ok {
			lists, seen := bindings[b.Interface]
			if !seen {
				bindingIfs = append(bindingIfs, b.Interface)
			}
			d := 0
			if b.Direction == vppcfg.ACLOutput {
				d = 1
			}
			lists[d] = append(lists[d], aclRef(b.ACL, aclIndex))
			bindings[b.Interface] = lists
			continue
		}
		if acl, ok := it.(*vppcfg.ACL); ok && acl.IsPlaceholder() && !placeholderNoted {
			placeholderNoted = true
			out = append(out, placeholderNote(items)...)
		}
		out = append(out, lines(it)...)
	}
	slices.Sort(bindingIfs)
	for _, ifName := range bindingIfs {
		out = append(out, aclListLine(ifName, bindings[ifName]))
	}
	return out
}

// aclRef is an ACL's index, or a placeholder naming it when the ACL is not
// among the items.
func aclRef(name string, aclIndex map[string]int) string {
	if idx, ok := aclIndex[name]; ok {
		return fmt.Sprint(idx)
	}
	return "<index of " + name + ">"
}

// aclListLine sets the whole ACL list of one interface.
func aclListLine(ifName string, lists [2][]string) string {
	var b strings.Builder
	b.WriteString("binary-api acl_interface_set_acl_list " + ifName)
	for d, dir := range []string{"input", "output"} {
		if len(lists[d]) > 0 {
			b.WriteString(" " + dir + " " + strings.Join(lists[d], " "))
		}
	}
	return b.String()
}

// placeholderNote explains, once, the placeholder ACLs among items.
func placeholderNote(items []vppcfg.Item) []string {
	var names []string
	for _, it := range items {
		if acl, ok := it.(*vppcfg.ACL); ok && acl.IsPlaceholder() {
			names = append(names, acl.Name)
		}
	}
	return Wrap("# ", "#   ", fmt.Sprintf("%d empty filter shards have no rules. VPP denies everything on an ACL "+
		"without rules, so each holds one placeholder permit-nothing rule (docs/glossary.md#filter-shard): %s",
		len(names), nameRanges(names)), Width)
}

// compareItems orders items by key, except ACL bindings of the same
// interface and direction, which are ordered by priority (then ACL name).
func compareItems(a, b vppcfg.Item) int {
	ba, okA := a.(*vppcfg.ACLBinding)
	bb, okB := b.(*vppcfg.ACLBinding)
	if okA && okB && ba.Interface == bb.Interface && ba.Direction == bb.Direction {
		if c := cmp.Compare(ba.Priority, bb.Priority); c != 0 {
			return c
		}
		return cmp.Compare(ba.ACL, bb.ACL)
	}
	return a.Key().Compare(b.Key())
}

// lines are the CLI lines of one item, as its kind's descriptor writes
// them; an empty filter shard's line is marked as the placeholder it is.
func lines(it vppcfg.Item) []string {
	out := present.CLICommands(it)
	if acl, ok := it.(*vppcfg.ACL); ok && acl.IsPlaceholder() && len(out) == 1 {
		out[0] += "  # placeholder"
	}
	return out
}
