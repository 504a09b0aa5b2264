package realvpp

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// Trace sends p into VPP on p.Ingress and reports what happened in
// fakevpp's Trace shape: the verdict, the packet as it left and by which
// interface, whether its source was translated and, for a forwarded
// packet, whether the reply (sent back in from the egress interface) comes
// back to the client as from the address it called. Endpoints holds the
// one destination VPP chose: a real VPP does not tell the others.
// Steps are the nodes of VPP's own packet trace.
func (n *Node) Trace(p fakevpp.Packet) fakevpp.Trace {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.trace(p)
	if !t.HasReply() {
		return t
	}
	r := n.trace(t.Reply())
	return t.WithReply(r)
}

// TraceReply sends the reply of t.Out back from t.Egress (see
// fakevpp.VPP.TraceReply).
func (n *Node) TraceReply(t fakevpp.Trace) fakevpp.Trace {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !t.HasReply() {
		return fakevpp.Trace{In: t.Reply(), Verdict: fakevpp.Drop, Reason: "trace: the original packet was not forwarded, or is an ICMP error or a message without reply"}
	}
	return n.trace(t.Reply())
}

// trace sends one packet and classifies it: forwarded when a pg interface
// captured it, local when VPP's trace shows ip4-local/ip6-local, dropped
// otherwise (the reason is the drop node's error).
func (n *Node) trace(p fakevpp.Packet) (t fakevpp.Trace) {
	in := p.Normalized()
	t.In = in
	t.Out = in
	drop := func(format string, args ...any) fakevpp.Trace {
		t.Verdict, t.Reason = fakevpp.Drop, fmt.Sprintf(format, args...)
		t.Steps = append(t.Steps, t.Reason)
		return t
	}
	if why := in.Malformed(); why != "" {
		return drop("trace: malformed packet: %s", why)
	}
	rx := n.iface(in.Ingress)
	if rx == nil {
		return drop("trace: unknown ingress interface %q", in.Ingress)
	}
	if err := n.learnNeighbour(rx, in.Src.Addr()); err != nil {
		return drop("trace: %v", err)
	}
	sent := packetOf(in)
	vppTrace, err := n.inject(rx, encodeFrame(sent, rx.mac, rx.peerMAC()))
	t.Steps = summarise(vppTrace)
	if err != nil {
		return drop("trace: %v", err)
	}
	tx, out, gen, err := n.collect(sent)
	if gen != nil {
		// VPP's own ICMP error about the packet (a time exceeded).
		t.ICMP = &fakevpp.SentICMP{Verdict: fakevpp.Forward, Out: gen.pkt.public(in.Ingress), Egress: gen.iface.name}
	}
	switch {
	case err != nil:
		return drop("trace: %v", err)
	case localDelivery(vppTrace):
		// Delivered to VPP itself; a frame that left is VPP's own answer
		// (an echo reply), not the traced packet.
		t.Verdict = fakevpp.Local
		t.Endpoints = []netip.AddrPort{in.Dst}
		return t
	case tx != nil:
		t.Verdict, t.Egress = fakevpp.Forward, tx.name
		t.Out = out.public(in.Ingress)
		t.SNAT = t.Out.Src != in.Src
		t.Endpoints = []netip.AddrPort{t.Out.Dst}
		return t
	}
	t.Verdict, t.Reason = fakevpp.Drop, dropReason(vppTrace)
	if why := icmpErrorReason(vppTrace); why != "" {
		t.Reason = why
	}
	return t
}

// icmpErrorReason names where VPP turned the packet into its own ICMP
// error ("vpp ip4-rewrite → ip4-icmp-error"): the packet's trace goes on
// with the error's path, whose end is not the packet's. "" when VPP sent
// none.
func icmpErrorReason(vppTrace string) string {
	prev := ""
	for _, line := range strings.Split(vppTrace, "\n") {
		m := traceNode.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		if m[1] == "ip4-icmp-error" || m[1] == "ip6-icmp-error" {
			return fmt.Sprintf("vpp %s → %s (VPP answered with an ICMP error)", prev, m[1])
		}
		prev = m[1]
	}
	return ""
}

// localNodes are the graph nodes of delivery to VPP itself (VPP 25.10
// names IPv6's ip6-receive; older releases ip6-local).
var localNodes = []string{"ip4-local", "ip4-receive", "ip6-local", "ip6-receive"}

// localDelivery tells whether VPP's trace passed a local-delivery node.
func localDelivery(vppTrace string) bool {
	for _, line := range strings.Split(vppTrace, "\n") {
		if m := traceNode.FindStringSubmatch(strings.TrimSpace(line)); m != nil && slices.Contains(localNodes, m[1]) {
			return true
		}
	}
	return false
}

// inject sends frame into VPP as received on rx and returns VPP's packet
// trace of it.
func (n *Node) inject(rx *pgIface, frame []byte) (string, error) {
	n.seq++
	name := fmt.Sprintf("vppsvc%d", n.seq)
	file := filepath.Join(n.dir, name+".pcap")
	if err := writePcap(file, frame); err != nil {
		return "", err
	}
	defer os.Remove(file)
	if err := n.sendStream(rx, name, file, 1, true); err != nil {
		return "", err
	}
	return n.CLI("show trace max 10")
}

// generated is an ICMP error VPP sent about a traced packet, and the
// interface it left by.
type generated struct {
	iface *pgIface
	pkt   packet
}

// collect reads what the interfaces captured since the last call and
// returns the frame of the traced flow, if one left: an IP packet of the
// same protocol (an ICMP message of the type sent, an ICMP error for an
// error: not neighbour discovery or a router advertisement VPP sent on its
// own, nor VPP's echo reply to an echo request); and
// an ICMP error VPP sent about a packet that is not one itself.
func (n *Node) collect(sent packet) (*pgIface, packet, *generated, error) {
	var tx *pgIface
	var out packet
	var gen *generated
	for _, ifc := range n.ifaces {
		frames, err := readPcap(ifc.capture)
		if err != nil {
			return nil, packet{}, nil, err
		}
		fresh := frames[min(ifc.seen, len(frames)):]
		ifc.seen = len(frames)
		for _, f := range fresh {
			p, err := decodeFrame(f)
			if err == nil && gen == nil && !sent.isErr && p.isICMP() && p.isErr {
				gen = &generated{ifc, p}
				continue
			}
			if err != nil || p.proto != sent.proto || p.isICMP() && (p.isErr != sent.isErr || !p.isErr && p.icmpType != sent.icmpType) {
				continue
			}
			if tx == nil {
				tx, out = ifc, p
			}
		}
	}
	return tx, out, gen, nil
}

// traceNode matches the header of one node's entry in "show trace":
// "00:00:01:234567: nat44-ed-in2out".
var traceNode = regexp.MustCompile(`^\d+:\d+:\d+:\d+: (\S+)`)

// summarise turns VPP's packet trace into steps: one line per graph node,
// with the node's first detail line.
func summarise(vppTrace string) []string {
	var steps []string
	lines := strings.Split(vppTrace, "\n")
	for i, line := range lines {
		m := traceNode.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		step := "vpp " + m[1]
		if i+1 < len(lines) && traceNode.FindString(strings.TrimSpace(lines[i+1])) == "" {
			if d := strings.TrimSpace(lines[i+1]); d != "" {
				step += ": " + d
			}
		}
		steps = append(steps, step)
	}
	return steps
}

// dropReason names where VPP dropped the packet: the node that handed it to
// the drop (and the one before that when it is a generic drop node such as
// ip6-drop), then the error counter VPP's drop node charged, e.g.
// "vpp ip6-cnat-tx → ip6-drop (acl-plugin-in-ip6-fa: ACL permit packets)".
// The counter alone can mislead: it is the last error a node set on the
// buffer, which the generic drop nodes do not overwrite.
func dropReason(vppTrace string) string {
	var nodes []string
	counter := ""
	lines := strings.Split(vppTrace, "\n")
	for i, line := range lines {
		m := traceNode.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		switch m[1] {
		case "error-drop", "error-punt":
		case "drop", "punt":
			for _, d := range lines[i+1:] {
				d = strings.TrimSpace(d)
				if d == "" || traceNode.MatchString(d) {
					break
				}
				if !strings.HasPrefix(d, "rx:") && counter == "" {
					counter = d
				}
			}
		default:
			nodes = append(nodes, m[1])
		}
	}
	if len(nodes) == 0 {
		return "vpp: no packet trace"
	}
	where := nodes[len(nodes)-1]
	if len(nodes) > 1 && (strings.HasSuffix(where, "-drop") || strings.HasSuffix(where, "-punt")) {
		where = nodes[len(nodes)-2] + " → " + where
	}
	if counter == "" {
		return "vpp " + where
	}
	return "vpp " + where + " (" + counter + ")"
}
