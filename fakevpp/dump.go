package fakevpp

import (
	"fmt"
	"sort"
	"strings"
)

// dumpWriter collects Dump's entries per section. Entries are sorted within a
// section, so the output does not depend on pool indices or creation order;
// an entry may span lines (an ACL with its rules, in order).
type dumpWriter struct {
	sections []string
	entries  map[string][]string
}

func (w *dumpWriter) add(section, format string, args ...any) {
	if w.entries == nil {
		w.entries = map[string][]string{}
	}
	if _, ok := w.entries[section]; !ok {
		w.sections = append(w.sections, section)
		w.entries[section] = nil
	}
	w.entries[section] = append(w.entries[section], fmt.Sprintf(format, args...))
}

func (w *dumpWriter) String() string {
	var b strings.Builder
	for _, s := range w.sections {
		e := append([]string(nil), w.entries[s]...)
		sort.Strings(e)
		b.WriteString(s + ":\n")
		for _, x := range e {
			b.WriteString("  " + strings.ReplaceAll(x, "\n", "\n    ") + "\n")
		}
	}
	return b.String()
}

// ifName names an interface in dumps and steps; a deleted one shows its
// former index.
func (v *VPP) ifName(sw uint32) string {
	if ifc := v.iface(sw); ifc != nil {
		return ifc.name
	}
	if sw == ^uint32(0) {
		return "~0"
	}
	return fmt.Sprintf("#%d(absent)", sw)
}

// Dump returns the whole state as stable, sorted text for golden tests:
// interfaces and ACLs appear by name and tag (indices are volatile), sessions
// are summarised as counts. Plugins add their sections in plugin order.
func (v *VPP) Dump() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	w := &dumpWriter{}
	v.ifaces.each(func(_ uint32, ifc *iface) bool {
		state := "up"
		if ifc.index == 0 {
			state = "down"
		}
		var addrs []string
		for _, p := range ifc.addrs {
			addrs = append(addrs, p.String())
		}
		line := ifc.name + " " + state
		if len(addrs) > 0 {
			line += " " + strings.Join(addrs, ",")
		}
		if ifc.unnumbered {
			line += " unnumbered to " + v.ifName(ifc.unnumberedTo)
		}
		if ifc.ip6Link > countIP6Addrs(ifc) {
			line += " ip6-enabled"
		}
		if ifc.startup {
			line += " startup"
		}
		w.add("interfaces", "%s", line)
		return true
	})
	for _, r := range v.routes {
		w.add("routes", "%s via %s", r.dst, r.ifName)
	}
	for _, p := range pipeline().plugins {
		if p.dump != nil {
			p.dump(v, w)
		}
	}
	return w.String()
}
