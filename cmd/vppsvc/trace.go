package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/flows"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/simnode"
	"github.com/vppsvc/vppsvc/fakevpp"
)

func init() { extraCommands = append(extraCommands, newTraceCommand) }

type traceFlags struct {
	clusterFlags
	src, dst, proto, ingress, flowsFile, output string
	icmpType, icmpCode, ttl                     int
	about                                       string
	sendAbout                                   bool
}

func newTraceCommand(log *logrus.Logger) *cobra.Command {
	f := &traceFlags{}
	cmd := &cobra.Command{
		Use:   "trace --src IP[:PORT] --dst IP:PORT [--proto TCP|UDP|SCTP|ICMP] [--ttl N] [--icmp-type T --icmp-code C --about 'PROTO SRC -> DST' [--send-about]] [--ingress IF] | --flows FILE",
		Short: "Show where a packet to a service goes on one node",
		Long: `trace programs a fake VPP as render does, then sends packets through it and
reports the verdict (forward, drop, local), every endpoint the packet may reach,
whether its source was translated, and whether the reply comes back translated.
With --vpp-socket the node is built in a scratch real VPP 25.10 and every packet
crosses VPP's graph; endpoints then name the one VPP chose.

The ingress interface is inferred from the source: a local pod's tap, host0 for
the node itself, uplink0 for remote pods and external clients. A packet from
one of the node's IPs is sent as the node's kernel sends it: through host0,
from the kernel's address on that link (the node IPs are VPP's, on uplink0).
Flows of one run share the fake VPP, so sessions and affinity carry over.

--proto ICMP (ICMPv6 for IPv6 addresses) sends an echo request from --src
to --dst (addresses without ports), or the message of --icmp-type and
--icmp-code, any of 0-255 (a message that is not an error carries the
identifier 40000). An error type quotes the packet of --about, written
'PROTO SRC:PORT -> DST:PORT' as the error's sender saw it; --dst defaults to
its source. With --send-about, trace first sends that packet from its source
and the error comes back from the endpoint it reached (or from --src, a
router on the way), quoting it as it arrived there.

--ttl 1 sends a packet VPP would forward with TTL 1: VPP drops it and
answers with a time exceeded, shown as "vpp sent".

--flows FILE traces a YAML list of flows ("-" reads it from stdin); a bad
entry is reported by position and name, the others are traced, and the exit
status is 1 if any entry could not be traced.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTrace(cmd, f, log)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&f.src, "src", "", "source IP[:PORT] (port defaults to 40000)")
	cmd.Flags().StringVar(&f.dst, "dst", "", "destination IP:PORT, [IPv6]:PORT for IPv6")
	cmd.Flags().StringVar(&f.proto, "proto", "TCP", "TCP, UDP, SCTP or ICMP (ICMPv6 for IPv6 addresses; only --ipv4-renderer cnat renders SCTP ports: other flows show where they are dropped)")
	cmd.Flags().IntVar(&f.icmpType, "icmp-type", 0, "ICMP type 0-255 (default: echo request, 8; 128 for ICMPv6); error types need --about")
	cmd.Flags().IntVar(&f.icmpCode, "icmp-code", 0, "ICMP code")
	cmd.Flags().IntVar(&f.ttl, "ttl", 64, "IPv4 TTL or IPv6 hop limit (1-255); with 1, VPP answers a packet it would forward with a time exceeded")
	cmd.Flags().StringVar(&f.about, "about", "", "the packet an ICMP error quotes, as its sender saw it: 'PROTO SRC:PORT -> DST:PORT'")
	cmd.Flags().BoolVar(&f.sendAbout, "send-about", false, "send the --about packet first; the error comes from the endpoint it reached, quoting it as it arrived")
	cmd.Flags().StringVar(&f.ingress, "ingress", "", "interface the packet enters on (default: inferred from --src)")
	cmd.Flags().StringVar(&f.flowsFile, "flows", "", "YAML list of {name, src, dst, proto, ingress, ttl, icmp-type, icmp-code, about, send-about} to trace in one run, - for stdin")
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	return cmd
}

// traceResult is one flow in JSON output: a contract other tools parse
// (docs/cli.md). name, verdict, endpoints, snat, ingress, egress, reply_ok and
// steps are always present for a traced flow; src, dst, proto, out and reason
// are extras for people. A flow that could not be traced carries only name
// and error (see jsonValue).
type traceResult struct {
	Name      string   `json:"name"`
	Verdict   string   `json:"verdict"`
	Src       string   `json:"src"`
	Dst       string   `json:"dst"`
	Proto     string   `json:"proto"`
	Out       string   `json:"out,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	Endpoints []string `json:"endpoints"`
	SNAT      bool     `json:"snat"`
	Ingress   string   `json:"ingress"`
	Egress    string   `json:"egress"`
	ReplyOK   bool     `json:"reply_ok"`
	Steps     []string `json:"steps"`
	// ICMP describes an ICMP or ICMPv6 flow: its type, the echo
	// identifier, or the header an error quotes before and after VPP.
	ICMP *icmpResult `json:"icmp,omitempty"`
	// VPPSent is the ICMP error VPP itself sent about the packet, when
	// one left (a time exceeded for a TTL that ran out).
	VPPSent *vppSent `json:"vpp_sent,omitempty"`
	// Error is set, and every other field but Name left empty, when the flow
	// could not be traced.
	Error string `json:"-"`
}

// icmpResult is the ICMP part of a traced ICMP or ICMPv6 flow.
type icmpResult struct {
	Type uint8  `json:"type"`
	Code uint8  `json:"code"`
	Name string `json:"name"`
	// ID and IDOut are an echo's identifier as sent and as it left.
	ID    uint16 `json:"id,omitempty"`
	IDOut uint16 `json:"id_out,omitempty"`
	// Quoted and QuotedOut are the header an error quotes as sent and as
	// it left ("PROTO SRC -> DST", as --about takes it).
	Quoted    string `json:"quoted,omitempty"`
	QuotedOut string `json:"quoted_out,omitempty"`
}

// vppSent is an ICMP error VPP sent about a traced packet.
type vppSent struct {
	Name   string `json:"name"`
	Out    string `json:"out"`    // "src -> dst" as it left
	Egress string `json:"egress"` // the interface it left by
	Quoted string `json:"quoted"` // the header it quotes, "PROTO SRC -> DST"
}

// traceError is the JSON of a flow that could not be traced.
type traceError struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}

// jsonValue is what -o json writes for the flow: {"name", "error"} for a flow
// that could not be traced, so that consumers tell the two shapes apart by
// the presence of "error".
func (r traceResult) jsonValue() any {
	if r.Error != "" {
		return traceError{r.Name, r.Error}
	}
	return r
}

func runTrace(cmd *cobra.Command, f *traceFlags, log *logrus.Logger) error {
	if !slices.Contains([]string{"text", "json"}, f.output) {
		return usagef("-o: want text or json, got %q", f.output)
	}
	if err := oneStdin("-f", f.file, "--flows", f.flowsFile, "--config", f.config); err != nil {
		return usageError{err}
	}
	parsed, batch, err := f.flows(cmd)
	if err != nil {
		return err
	}
	sim, err := simulate(cmd.Context(), &f.clusterFlags, cmd.InOrStdin(), log)
	if err != nil {
		return err
	}
	defer sim.close()
	results := make([]traceResult, len(parsed))
	for i, p := range parsed {
		results[i] = sim.trace(p)
	}
	if !batch && results[0].Error != "" {
		// One flow from flags: a bad --ingress is a usage error like a bad --src.
		return usageError{errors.New(results[0].Error)}
	}
	if err := writeTrace(cmd.OutOrStdout(), f.output, results, batch); err != nil {
		return err
	}
	return untraced(results, log)
}

// untraced logs each flow that could not be traced and fails the run when
// there is one, after the others were written: a script sees from the exit
// status alone that its file needs fixing.
func untraced(results []traceResult, log logrus.FieldLogger) error {
	failed := 0
	for i, r := range results {
		if r.Error == "" {
			continue
		}
		failed++
		log.WithFields(logrus.Fields{"entry": i + 1, "name": r.Name, "error": r.Error}).Warning("flow not traced")
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d flows could not be traced (their errors are in the output)", failed, len(results))
	}
	return nil
}

// writeTrace writes the results as text or JSON: one object for a flow
// from flags, an array for a flows file.
func writeTrace(w io.Writer, output string, results []traceResult, batch bool) error {
	if output == "json" {
		values := make([]any, len(results))
		for i, r := range results {
			values[i] = r.jsonValue()
		}
		var v any = values
		if !batch {
			v = values[0]
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	}
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		writeTraceText(w, r)
	}
	return nil
}

// flows returns the flows to trace: the --flows file (stdin for "-"), or
// one from flags.
func (f *traceFlags) flows(cmd *cobra.Command) ([]flows.Parsed, bool, error) {
	stdin := cmd.InOrStdin()
	single := []string{"proto", "ingress", "ttl", "icmp-type", "icmp-code", "about", "send-about"}
	if f.flowsFile != "" {
		if f.src != "" || f.dst != "" {
			return nil, false, usagef("--flows and --src/--dst are exclusive")
		}
		for _, name := range single {
			if cmd.Flags().Changed(name) {
				return nil, false, usagef("--flows and --%s are exclusive (a flows file gives each flow's fields)", name)
			}
		}
		data, source, err := readInput(f.flowsFile, stdin, flows.MaxFileSize)
		if err != nil {
			return nil, false, err
		}
		parsed, err := flows.ParseFile(data)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", source, err)
		}
		return parsed, true, nil
	}
	if (f.src == "" || f.dst == "") && !(f.sendAbout && f.about != "") {
		return nil, false, usagef("need --src and --dst, or --flows FILE")
	}
	spec := flows.Spec{Name: "flow", Src: f.src, Dst: f.dst, Proto: f.proto, Ingress: f.ingress, About: f.about, SendAbout: f.sendAbout}
	if cmd.Flags().Changed("icmp-type") {
		spec.ICMPType = &f.icmpType
	}
	if cmd.Flags().Changed("icmp-code") {
		spec.ICMPCode = &f.icmpCode
	}
	if cmd.Flags().Changed("ttl") {
		spec.TTL = &f.ttl
	}
	fl, err := spec.Parse()
	if err != nil {
		return nil, false, usageError{err} // a single malformed flow is a usage error
	}
	return []flows.Parsed{{Name: fl.Name, Flow: fl}}, false, nil
}

func (s *simulation) trace(p flows.Parsed) traceResult {
	r := traceResult{Name: p.Name, Endpoints: []string{}, Steps: []string{}}
	fail := func(err error) traceResult {
		r.Error = err.Error()
		if p.Index > 0 {
			r.Error = fmt.Sprintf("entry %d: %s", p.Index, r.Error)
		}
		return r
	}
	if p.Err != nil {
		return fail(p.Err)
	}
	fl := p.Flow
	var quoted *fakevpp.Header
	if fl.ICMP.IsError() {
		a := fl.ICMP.About
		quoted = &fakevpp.Header{Protocol: a.Protocol, Src: a.Src, Dst: a.Dst}
		if fl.ICMP.SendAbout {
			var err error
			if fl, quoted, err = s.sendAbout(fl, &r); err != nil {
				return fail(err)
			}
		}
	}
	if fl.Dst.Addr().Unmap().IsLoopback() {
		return loopbackResult(r, fl)
	}
	ingress := fl.Ingress
	if ingress == "" {
		ingress = s.plan.IngressFor(fl.Src.Addr())
	} else if _, ok := s.node.InterfaceIndex(ingress); !ok {
		return fail(fmt.Errorf("ingress: no interface %q on node %s", ingress, s.plan.Node))
	}
	fl.Src = s.kernelSource(fl.Src, ingress, &r)
	in := fakevpp.Packet{Ingress: ingress, Protocol: fl.Protocol, Src: fl.Src, Dst: fl.Dst, TTL: fl.TTL}
	if fl.ICMP != nil {
		r.ICMP = &icmpResult{Type: fl.ICMP.Type, Code: fl.ICMP.Code, Name: flows.ICMPTypeName(fl.Src.Addr().Is6(), fl.ICMP.Type, fl.ICMP.Code)}
		if quoted != nil {
			// The error quotes the whole packet, as Linux does (up to 576
			// bytes for IPv4, 1280 for IPv6): NAT44-ED translates a quoted
			// TCP header only when it is whole.
			in.Error = &fakevpp.ICMPError{Type: fl.ICMP.Type, Code: fl.ICMP.Code, Inner: *quoted, Full: true}
			r.ICMP.Quoted = formatHeader(*quoted)
		} else {
			in.SetICMP(fl.ICMP.Type, fl.ICMP.Code)
			r.ICMP.ID = fl.Src.Port()
		}
	}
	t := s.node.Trace(in)
	r.Verdict = string(t.Verdict)
	r.Src, r.Dst, r.Proto = formatEndpoint(fl.Protocol, fl.Src), formatEndpoint(fl.Protocol, fl.Dst), flows.ProtoName(fl.Protocol)
	r.Ingress, r.Egress, r.SNAT, r.ReplyOK, r.Reason = ingress, t.Egress, t.SNAT, t.ReplyOK, t.Reason
	if t.Verdict != fakevpp.Drop {
		r.Out = formatEndpoint(fl.Protocol, t.Out.Src) + " -> " + formatEndpoint(fl.Protocol, t.Out.Dst)
		switch {
		case r.ICMP == nil:
		case t.Out.Error != nil:
			r.ICMP.QuotedOut = formatHeader(t.Out.Error.Inner)
		case quoted == nil:
			r.ICMP.IDOut = t.Out.Src.Port()
		}
	}
	// A dropped packet reaches no endpoint; an untranslated one reaches its
	// original destination (the fake reports it as the single endpoint).
	eps := slices.Clone(t.Endpoints)
	if len(eps) == 0 && t.Verdict != fakevpp.Drop {
		eps = []netip.AddrPort{t.Out.Dst}
	}
	slices.SortFunc(eps, netip.AddrPort.Compare)
	for _, ep := range slices.Compact(eps) {
		r.Endpoints = append(r.Endpoints, formatEndpoint(fl.Protocol, ep))
	}
	r.Endpoints = slices.Compact(r.Endpoints)
	r.Steps = append(r.Steps, t.Steps...)
	if e := t.ICMP; e != nil && e.Verdict == fakevpp.Forward && e.Out.Error != nil {
		out := e.Out.Error
		r.VPPSent = &vppSent{Name: flows.ICMPTypeName(e.Out.Src.Addr().Is6(), out.Type, out.Code),
			Out: e.Out.Src.Addr().String() + " -> " + e.Out.Dst.Addr().String(), Egress: e.Egress, Quoted: formatHeader(out.Inner)}
	}
	if t.Verdict == fakevpp.Forward && !t.ReplyOK && t.HasReply() {
		s.explainLocalReply(r.Steps, t.Out.Src.Addr())
	}
	return r
}

// kernelSource is the source a packet from src entering on ingress is sent
// from: a packet "from one of the node's IPs" through host0 is sent as the
// node's kernel sends it (a step says so).
func (s *simulation) kernelSource(src netip.AddrPort, ingress string, r *traceResult) netip.AddrPort {
	kernel, ok := s.plan.KernelSource(src.Addr())
	if !ok || ingress != simnode.HostInterface {
		return src
	}
	// The node IPs are VPP's (uplink0): the node's own traffic reaches VPP
	// through host0 from the kernel's address on that link, and a reply to
	// the node IP would stay in VPP.
	r.Steps = append(r.Steps, fmt.Sprintf("host: %s is node %s's IP, held by VPP on %s; the node's kernel sends through %s from %s",
		src.Addr(), s.plan.Node, simnode.UplinkInterface, simnode.HostInterface, kernel))
	return netip.AddrPortFrom(kernel, src.Port())
}

// sendAbout sends the packet an ICMP error is about (send-about) and
// returns the error flow built from what became of it, and the header the
// error quotes: the packet as it left VPP towards the endpoint. The error
// comes from that endpoint (unless the flow names a source: a router on
// the way), through the interface the packet left by, and goes back to
// the packet's source as the endpoint saw it. Its steps come first in r,
// prefixed "about".
func (s *simulation) sendAbout(fl flows.Flow, r *traceResult) (flows.Flow, *fakevpp.Header, error) {
	a := fl.ICMP.About
	ingress := s.plan.IngressFor(a.Src.Addr())
	var steps traceResult
	src := s.kernelSource(a.Src, ingress, &steps)
	t := s.node.Trace(fakevpp.Packet{Ingress: ingress, Protocol: a.Protocol, Src: src, Dst: a.Dst})
	in := flows.Header{Protocol: a.Protocol, Src: src, Dst: a.Dst}
	for _, st := range append(steps.Steps, t.Steps...) {
		r.Steps = append(r.Steps, "about: "+st)
	}
	if t.Verdict != fakevpp.Forward {
		return fl, nil, fmt.Errorf("send-about: %s, sent first on %s, was not forwarded (%s %s): no endpoint to send the error", in, ingress, t.Verdict, t.Reason)
	}
	out := fakevpp.Header{Protocol: t.Out.Protocol, Src: t.Out.Src, Dst: t.Out.Dst, TCPFlags: t.Out.TCPFlags}
	r.Steps = append(r.Steps, fmt.Sprintf("about: %s sent first on %s: left via %s as %s; the error quotes it so",
		in, ingress, t.Egress, formatHeader(out)))
	if !fl.Src.Addr().IsValid() {
		fl.Src = netip.AddrPortFrom(t.Out.Dst.Addr(), 0)
	}
	if !fl.Dst.Addr().IsValid() {
		fl.Dst = netip.AddrPortFrom(t.Out.Src.Addr(), 0)
	}
	if fl.Src.Addr().Is6() {
		fl.Protocol = flows.ProtoICMP6
	}
	if fl.Ingress == "" {
		fl.Ingress = t.Egress
	}
	return fl, &out, nil
}

// formatEndpoint writes an endpoint as trace's output does: ip:port
// ([IPv6]:port), the bare address for ICMP (which has no ports).
func formatEndpoint(proto uint8, ap netip.AddrPort) string {
	if proto == flows.ProtoICMP || proto == flows.ProtoICMP6 {
		return ap.Addr().String()
	}
	return flows.FormatEndpoint(ap)
}

// formatHeader writes a quoted header as --about takes it.
func formatHeader(h fakevpp.Header) string {
	return flows.Header{Protocol: h.Protocol, Src: h.Src, Dst: h.Dst}.String()
}

// verdictHost is the verdict of a flow that never reaches VPP: the node's
// kernel keeps it.
const verdictHost = "host"

// loopbackResult is the answer for a loopback destination, such as
// 127.0.0.1:<nodePort>: the node's kernel delivers it itself, so it never
// reaches VPP and no service translation applies. kube-proxy's iptables
// mode serves localhost NodePorts (with route_localnet); its nftables mode
// does not, and neither can a VPP data plane.
func loopbackResult(r traceResult, fl flows.Flow) traceResult {
	r.Verdict = verdictHost
	r.Src, r.Dst, r.Proto = formatEndpoint(fl.Protocol, fl.Src), formatEndpoint(fl.Protocol, fl.Dst), flows.ProtoName(fl.Protocol)
	r.Reason = "loopback destination: not intercepted"
	r.Steps = append(r.Steps, fmt.Sprintf("host: %s is a loopback address: the node's kernel delivers it itself and it never reaches VPP, so no service translation applies (kube-proxy's nftables mode does not serve localhost NodePorts either)", fl.Dst.Addr()))
	return r
}

// explainLocalReply fills in the reply step of a reply delivered to VPP
// itself, which both data planes report without a reason ("local ()"): the
// address the reply goes to (the packet's source as it left VPP) is one of
// VPP's own, so the reply never reaches the client.
func (s *simulation) explainLocalReply(steps []string, replyDst netip.Addr) {
	i := len(steps) - 1
	if i < 0 || !strings.HasPrefix(steps[i], "reply ") || !strings.HasSuffix(steps[i], ": local ()") {
		return
	}
	owner := "VPP"
	for _, ifc := range s.plan.Interfaces {
		if slices.ContainsFunc(ifc.Addrs, func(p netip.Prefix) bool { return p.Addr() == replyDst }) {
			owner = "VPP's " + ifc.Name
		}
	}
	steps[i] = strings.TrimSuffix(steps[i], "()") + fmt.Sprintf("(%s is an address of %s: the reply is delivered to VPP and never reaches the client)", replyDst, owner)
}

// replyStep is what became of a forwarded flow's reply: the text after the
// reply packet in its step ("local (…)", "drop (…)", "leaves as …").
func replyStep(steps []string) string {
	for i := len(steps) - 1; i >= 0; i-- {
		if rest, ok := strings.CutPrefix(steps[i], "reply "); ok {
			if _, what, ok := strings.Cut(rest, ": "); ok {
				return what
			}
		}
	}
	return ""
}

func writeTraceText(w io.Writer, r traceResult) {
	if r.Error != "" {
		fmt.Fprintf(w, "%s: error: %s\n", r.Name, r.Error)
		return
	}
	if r.Verdict == verdictHost {
		fmt.Fprintf(w, "%s: %s %s -> %s\n", r.Name, r.Proto, r.Src, r.Dst)
		fmt.Fprintf(w, "  verdict:   host (%s)\n", r.Reason)
	} else {
		fmt.Fprintf(w, "%s: %s %s -> %s%s, ingress %s\n", r.Name, r.Proto, r.Src, r.Dst, r.ICMP.text(), r.Ingress)
	}
	if r.ICMP != nil && r.ICMP.Quoted != "" {
		fmt.Fprintf(w, "  quoted:    %s\n", r.ICMP.Quoted)
		if r.ICMP.QuotedOut != "" {
			fmt.Fprintf(w, "  quoted as: %s (as it left)\n", r.ICMP.QuotedOut)
		}
	}
	switch r.Verdict {
	case verdictHost:
	case string(fakevpp.Drop):
		fmt.Fprintf(w, "  verdict:   drop (%s)\n", r.Reason)
		if e := r.VPPSent; e != nil {
			fmt.Fprintf(w, "  vpp sent:  %s %s via %s, quoting %s\n", e.Name, e.Out, e.Egress, e.Quoted)
		}
	case string(fakevpp.Local):
		fmt.Fprintf(w, "  verdict:   local: addressed to VPP itself as %s\n", r.Out)
		fmt.Fprintf(w, "  snat:      %t\n", r.SNAT)
	default:
		fmt.Fprintf(w, "  verdict:   %s via %s as %s\n", r.Verdict, r.Egress, r.Out)
		fmt.Fprintf(w, "  endpoints: %s\n", strings.Join(r.Endpoints, " "))
		fmt.Fprintf(w, "  snat:      %t\n", r.SNAT)
		switch {
		case r.ICMP != nil && r.ICMP.Quoted != "":
			fmt.Fprintf(w, "  reply:     none (nobody answers an ICMP error)\n")
		case r.ReplyOK:
			fmt.Fprintf(w, "  reply ok:  true\n")
		default:
			fmt.Fprintf(w, "  reply ok:  false: %s\n", replyStep(r.Steps))
		}
	}
	fmt.Fprintln(w, "  steps:")
	for _, s := range r.Steps {
		fmt.Fprintf(w, "    %s\n", s)
	}
}

// text is the ICMP part of a flow's first line: " echo-request id 40000",
// " destination-unreachable/4 (fragmentation-needed)"; "" for other
// protocols.
func (i *icmpResult) text() string {
	switch {
	case i == nil:
		return ""
	case i.Quoted != "":
		return fmt.Sprintf(" %s (type %d code %d)", i.Name, i.Type, i.Code)
	case i.IDOut != 0 && i.IDOut != i.ID:
		return fmt.Sprintf(" %s id %d (left with id %d)", i.Name, i.ID, i.IDOut)
	}
	return fmt.Sprintf(" %s id %d", i.Name, i.ID)
}
