package renderview

import (
	"slices"
	"strings"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/present"
)

// Document is what `render -o json` and `-o yaml` print: every desired VPP
// item with its owners and state, enums as names, the ACL bindings of an
// interface folded into one entry. docs/cli.md ("The render JSON contract")
// documents it; the field names are part of that contract.
type Document struct {
	Node  string  `json:"node"`
	Items []Entry `json:"items"`
}

// Entry is one item of the document.
type Entry struct {
	// Key is the VPP layer's key, "<kind>/<name>"; "acl-bindings/<interface>"
	// for the folded bindings of an interface.
	Key    string   `json:"key"`
	Kind   string   `json:"kind"`
	Owners []string `json:"owners"`
	// State is applied, pending or failed (the worst of its bindings for a
	// folded entry).
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	Config any    `json:"config"`
}

// ItemStatus is what the VPP layer says about one item.
type ItemStatus struct {
	Owners []string
	State  string
	Reason string
}

// KindACLBindings is the kind of a folded entry.
const KindACLBindings = "acl-bindings"

// BuildDocument turns desired items into the document, in creation order,
// with the folded binding entries last, by interface. status may be nil.
func BuildDocument(node string, items []vppcfg.Item, status func(vppcfg.Key) (ItemStatus, bool)) Document {
	items = slices.Clone(items)
	slices.SortFunc(items, func(a, b vppcfg.Item) int { return a.Key().Compare(b.Key()) })
	doc := Document{Node: node, Items: []Entry{}}
	get := func(k vppcfg.Key) ItemStatus {
		if status == nil {
			return ItemStatus{}
		}
		st, _ := status(k)
		return st
	}
	var bindings []*vppcfg.ACLBinding
	for _, it := range items {
		if b, ok := it.(*vppcfg.ACLBinding); ok {
			bindings = append(bindings, b)
			continue
		}
		st := get(it.Key())
		owner := ""
		if len(st.Owners) > 0 {
			owner = st.Owners[0]
		}
		doc.Items = append(doc.Items, Entry{Key: it.Key().String(), Kind: it.Key().Kind.String(),
			Owners: nonNil(st.Owners), State: st.State, Reason: st.Reason, Config: present.Printable(it, owner)})
	}
	return foldBindings(doc, bindings, get)
}

// BindingsConfig is the folded ACL list of one interface, in the order VPP
// evaluates it.
type BindingsConfig struct {
	Interface string   `json:"interface"`
	Input     []string `json:"input"`
	Output    []string `json:"output"`
}

func foldBindings(doc Document, bindings []*vppcfg.ACLBinding, get func(vppcfg.Key) ItemStatus) Document {
	slices.SortFunc(bindings, func(a, b *vppcfg.ACLBinding) int {
		if c := strings.Compare(a.Interface, b.Interface); c != 0 {
			return c
		}
		if a.Priority != b.Priority {
			return int(a.Priority) - int(b.Priority)
		}
		return strings.Compare(a.ACL, b.ACL)
	})
	for i := 0; i < len(bindings); {
		ifName := bindings[i].Interface
		cfg := BindingsConfig{Interface: ifName, Input: []string{}, Output: []string{}}
		e := Entry{Key: KindACLBindings + "/" + ifName, Kind: KindACLBindings, Owners: []string{}}
		for ; i < len(bindings) && bindings[i].Interface == ifName; i++ {
			b := bindings[i]
			if b.Direction == vppcfg.ACLOutput {
				cfg.Output = append(cfg.Output, b.ACL)
			} else {
				cfg.Input = append(cfg.Input, b.ACL)
			}
			st := get(b.Key())
			for _, o := range st.Owners {
				if !slices.Contains(e.Owners, o) {
					e.Owners = append(e.Owners, o)
				}
			}
			if stateRank(st.State) > stateRank(e.State) {
				e.State, e.Reason = st.State, st.Reason
			}
		}
		slices.Sort(e.Owners)
		e.Config = cfg
		doc.Items = append(doc.Items, e)
	}
	return doc
}

// stateRank orders states so that a folded entry shows its worst binding.
func stateRank(s string) int {
	switch s {
	case "applied":
		return 1
	case "pending":
		return 2
	case "failed":
		return 3
	case "":
		return 0
	}
	return 4
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
