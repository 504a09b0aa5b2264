package renderview

import (
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/vppcli"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/present"
)

// GlossaryURL is where the terms the views print are explained.
const GlossaryURL = "docs/glossary.md"

// WriteServices prints one block per service: its policies, then per port
// each frontend with the VPP objects that implement it, and the backends.
// nodeWide is the number of desired items that belong to no service;
// notRendered lists the services the processor left out ("ns/name: why").
func WriteServices(w io.Writer, node string, svcs []Service, nodeWide int, notRendered []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# node %s: %d services, as vppsvc programs them into VPP\n", node, len(svcs))
	for _, s := range svcs {
		b.WriteString("\n")
		writeService(&b, s)
	}
	b.WriteString("\n")
	for _, n := range notRendered {
		writeWrapped(&b, "# not rendered: ", "#   ", n)
	}
	writeWrapped(&b, "# ", "#   ", fmt.Sprintf("%d node-wide items (NAT44-ED settings, pool addresses, interface roles, "+
		"filter ACLs and their bindings) serve every service: -o vppcli, -o yaml or -o json print all %s",
		nodeWide, "items"))
	writeWrapped(&b, "# ", "#   ", "terms (self-twice-nat, out2in-only, exclusive and interposed VIPs, filter shards …) are explained in "+GlossaryURL)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeService(b *strings.Builder, s Service) {
	head := s.ID.String()
	if s.Type != "" {
		head += "  " + s.Type
	}
	b.WriteString(head + "\n")
	fmt.Fprintf(b, "  traffic policy    external %s, internal %s\n", s.ExternalTrafficPolicy, s.InternalTrafficPolicy)
	if s.AffinityTimeout != 0 {
		fmt.Fprintf(b, "  session affinity  ClientIP, timeout %d s\n", s.AffinityTimeout)
	} else {
		b.WriteString("  session affinity  none\n")
	}
	if len(s.SourceRanges) > 0 {
		writeWrapped(b, "  source ranges     ", "                    ", joinPrefixes(s.SourceRanges)+" (LoadBalancer frontends only)")
	}
	if s.HealthCheckNodePort != 0 {
		fmt.Fprintf(b, "  health check      node port %d\n", s.HealthCheckNodePort)
	}
	for _, p := range s.Ports {
		writePort(b, s, p)
	}
	for _, skipped := range s.Skipped {
		writeWrapped(b, "  skipped           ", strings.Repeat(" ", 20), skipped)
	}
	for _, o := range s.Other {
		if r, ok := o.Item.(*vppcfg.DropRoute); ok {
			writeWrapped(b, "  other ports       ", strings.Repeat(" ", 20),
				fmt.Sprintf("%s dropped by %s drop route (table %d)", r.Prefix, o.Renderer, r.VRF))
			continue
		}
		if t, ok := o.Item.(*vppcfg.CNATTranslation); ok && t.Protocol == vppcfg.ProtoExperiment {
			writeWrapped(b, "  flow keeper       ", strings.Repeat(" ", 20),
				fmt.Sprintf("%s %s holds the routes of %d backends, so open flows survive endpoint changes", o.Renderer, o.Item.Key(), len(t.Paths)))
			continue
		}
		writeWrapped(b, "  also              ", strings.Repeat(" ", 20), o.Renderer+" "+o.Item.Key().String())
	}
}

func writePort(b *strings.Builder, s Service, p Port) {
	head := "  port "
	if p.Name != "" {
		head += p.Name + " "
	}
	head += fmt.Sprintf("%d/%s", p.Port, p.Protocol)
	if p.NodePort != 0 {
		head += fmt.Sprintf(", node port %d", p.NodePort)
	}
	b.WriteString(head + "\n")
	if p.Skipped != "" {
		fmt.Fprintf(b, "    not rendered: %s\n", p.Skipped)
	}
	for _, f := range p.Frontends {
		writeFrontend(b, f, familyBackends(p.Backends, f.Addr.Addr()), trafficPolicyOf(s, f.Kind))
	}
	if len(p.Backends) == 0 {
		b.WriteString("    backends: none\n")
		return
	}
	b.WriteString("    backends\n")
	for _, be := range p.Backends {
		b.WriteString("      " + backendLine(be) + "\n")
	}
}

// familyBackends counts the backends of the frontend's address family: a
// renderer translates one family, to endpoints of that family only.
func familyBackends(bs []Backend, a netip.Addr) int {
	n := 0
	for _, b := range bs {
		if b.IP.Unmap().Is4() == a.Unmap().Is4() {
			n++
		}
	}
	return n
}

// frontendKinds are the Kubernetes names of the frontend kinds.
var frontendKinds = map[renderer.FrontendKind]string{
	renderer.ClusterIPFrontend:    "ClusterIP",
	renderer.NodePortFrontend:     "NodePort",
	renderer.LoadBalancerFrontend: "LoadBalancer",
	renderer.ExternalIPFrontend:   "ExternalIP",
}

// frontendColumn is where a frontend's VPP objects start: after the
// longest IPv6 node port frontend.
const frontendColumn = 44

func writeFrontend(b *strings.Builder, f Frontend, familyBackends int, policy model.TrafficPolicy) {
	head := fmt.Sprintf("    %-12s %s/%s", frontendKinds[f.Kind], f.Addr, strings.ToUpper(f.Protocol.String()))
	var parts []string
	for _, o := range f.Objects {
		parts = append(parts, objectSummary(o, familyBackends, policy))
	}
	onlyShortCircuit := len(f.Objects) > 0 && !slices.ContainsFunc(f.Objects, func(o Object) bool { return !isShortCircuit(o) })
	if j := denyAll(f.Filters); (len(f.Objects) == 0 || onlyShortCircuit) && j >= 0 {
		why := "no backend"
		if policy == model.TrafficPolicyLocal {
			why = "no local backend"
		}
		d := f.Filters[j]
		what := "dropped"
		if onlyShortCircuit {
			what = "dropped for clients outside the cluster"
		}
		parts = append(parts, fmt.Sprintf("%s (%s) by acl %s #%d", what, why, d.ACL, d.Index))
		f.Filters = slices.Delete(slices.Clone(f.Filters), j, j+1)
	}
	parts = append(parts, filterSummaries(f.Filters)...)
	if len(parts) == 0 {
		parts = append(parts, "no VPP object: not rendered on this node")
	}
	pad := strings.Repeat(" ", frontendColumn)
	if len(head) < frontendColumn {
		head += pad[len(head):]
	} else {
		b.WriteString(head + "\n")
		head = pad
	}
	for i, p := range parts {
		if i > 0 {
			head = pad
		}
		writeWrapped(b, head, pad+"  ", p)
	}
}

// objectSummary names a translation, its flags and where it sends.
func objectSummary(o Object, familyBackends int, policy model.TrafficPolicy) string {
	t, ok := present.FrontendTranslationOf(o.Item)
	name := t.Name
	if !ok {
		name = o.Item.Key().Kind.String()
	}
	s := name
	if o.Renderer != "" {
		s = o.Renderer + " " + name
	}
	if len(t.Flags) > 0 {
		s += " " + strings.Join(t.Flags, ",")
	}
	s += " → " + backendsSummary(t.Backends, familyBackends)
	switch {
	case isShortCircuit(o):
		s += " (internal clients)"
	case policy == model.TrafficPolicyLocal:
		s += " (Local)"
	}
	return s
}

// isShortCircuit tells the NAT44 renderer's cnat translation that sends this
// node's pods and host, reaching an external frontend of an
// externalTrafficPolicy Local service, to the ClusterIP
// (docs/renderer-nat44.md, "Internal clients of externalTrafficPolicy Local").
func isShortCircuit(o Object) bool {
	t, ok := o.Item.(*vppcfg.CNATTranslation)
	return ok && o.Renderer == "nat44" && t.VIP.Addr().Is4()
}

// backendsSummary says where a translation sends: every backend of the
// family, or the few it picked (a Local traffic policy's local ones).
func backendsSummary(to []netip.AddrPort, familyBackends int) string {
	switch {
	case len(to) == familyBackends && len(to) != 1:
		return fmt.Sprintf("%d backends", len(to))
	case len(to) <= 2:
		s := make([]string, len(to))
		for i, a := range to {
			s[i] = a.String()
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%d of %d backends", len(to), familyBackends)
}

// filterSummaries gives one line per ACL: its name and the rules that
// match the frontend.
func filterSummaries(rules []FilterRule) []string {
	var out []string
	for i := 0; i < len(rules); {
		j := i
		var rs []string
		for ; j < len(rules) && rules[j].ACL == rules[i].ACL; j++ {
			rs = append(rs, ruleSummary(rules[j]))
		}
		// The shard's name says which renderer it belongs to.
		out = append(out, "acl "+rules[i].ACL+" "+strings.Join(rs, ", "))
		i = j
	}
	return out
}

func ruleSummary(r FilterRule) string {
	s := fmt.Sprintf("#%d %s", r.Index, r.Rule.Action)
	if r.Rule.Src.Bits() != 0 {
		s += " " + r.Rule.Src.String()
	}
	return s
}

// denyAll returns the first rule that drops every client of the
// frontend, or -1.
func denyAll(rules []FilterRule) int {
	for i, r := range rules {
		if r.Rule.Action == vppcfg.ACLDeny && r.Rule.Src.Bits() == 0 {
			return i
		}
	}
	return -1
}

func backendLine(be Backend) string {
	s := fmt.Sprintf("%-24s", be.AddrPort())
	node := be.Node
	if node == "" {
		node = "-"
	}
	s += fmt.Sprintf(" %-10s", node)
	var flags []string
	if be.Local {
		flags = append(flags, "local")
	}
	if be.HostNetwork {
		flags = append(flags, "host-network")
	}
	if be.Terminating {
		flags = append(flags, "serving, terminating")
	} else {
		flags = append(flags, "ready")
	}
	if be.ZoneHints.Len() > 0 {
		flags = append(flags, "zones "+strings.Join(be.ZoneHints.List(), ","))
	}
	return strings.TrimRight(s+" "+strings.Join(flags, ", "), " ")
}

// writeWrapped writes text after first, wrapped at vppcli.Width with
// continuation lines starting with cont.
func writeWrapped(b *strings.Builder, first, cont, text string) {
	for _, l := range vppcli.Wrap(first, cont, text, vppcli.Width) {
		b.WriteString(l + "\n")
	}
}

func joinPrefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// trafficPolicyOf returns the policy that governs a frontend kind.
func trafficPolicyOf(s Service, k renderer.FrontendKind) model.TrafficPolicy {
	if k.External() {
		return s.ExternalTrafficPolicy
	}
	return s.InternalTrafficPolicy
}
