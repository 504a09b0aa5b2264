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
}

func newTraceCommand(log *logrus.Logger) *cobra.Command {
	f := &traceFlags{}
	cmd := &cobra.Command{
		Use:   "trace --src IP[:PORT] --dst IP:PORT [--proto TCP|UDP] [--ingress IF] | --flows FILE",
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
	cmd.Flags().StringVar(&f.proto, "proto", "TCP", "TCP, UDP or SCTP (vppsvc renders no SCTP port: such flows show where they are dropped)")
	cmd.Flags().StringVar(&f.ingress, "ingress", "", "interface the packet enters on (default: inferred from --src)")
	cmd.Flags().StringVar(&f.flowsFile, "flows", "", "YAML list of {name, src, dst, proto, ingress} to trace in one run, - for stdin")
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
	// Error is set, and every other field but Name left empty, when the flow
	// could not be traced.
	Error string `json:"-"`
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
	parsed, batch, err := f.flows(cmd.InOrStdin())
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
func (f *traceFlags) flows(stdin io.Reader) ([]flows.Parsed, bool, error) {
	if f.flowsFile != "" {
		if f.src != "" || f.dst != "" {
			return nil, false, usagef("--flows and --src/--dst are exclusive")
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
	if f.src == "" || f.dst == "" {
		return nil, false, usagef("need --src and --dst, or --flows FILE")
	}
	fl, err := flows.Spec{Name: "flow", Src: f.src, Dst: f.dst, Proto: f.proto, Ingress: f.ingress}.Parse()
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
	if fl.Dst.Addr().Unmap().IsLoopback() {
		return loopbackResult(r, fl)
	}
	ingress := fl.Ingress
	if ingress == "" {
		ingress = s.plan.IngressFor(fl.Src.Addr())
	} else if _, ok := s.node.InterfaceIndex(ingress); !ok {
		return fail(fmt.Errorf("ingress: no interface %q on node %s", ingress, s.plan.Node))
	}
	if kernel, ok := s.plan.KernelSource(fl.Src.Addr()); ok && ingress == simnode.HostInterface {
		// The node IPs are VPP's (uplink0): the node's own traffic reaches
		// VPP through host0 from the kernel's address on that link, and a
		// reply to the node IP would stay in VPP.
		r.Steps = append(r.Steps, fmt.Sprintf("host: %s is node %s's IP, held by VPP on %s; the node's kernel sends through %s from %s",
			fl.Src.Addr(), s.plan.Node, simnode.UplinkInterface, simnode.HostInterface, kernel))
		fl.Src = netip.AddrPortFrom(kernel, fl.Src.Port())
	}
	t := s.node.Trace(fakevpp.Packet{Ingress: ingress, Protocol: fl.Protocol, Src: fl.Src, Dst: fl.Dst})
	r.Verdict = string(t.Verdict)
	r.Src, r.Dst, r.Proto = fl.Src.String(), fl.Dst.String(), protoName(fl.Protocol)
	r.Ingress, r.Egress, r.SNAT, r.ReplyOK, r.Reason = ingress, t.Egress, t.SNAT, t.ReplyOK, t.Reason
	if t.Verdict != fakevpp.Drop {
		r.Out = t.Out.Src.String() + " -> " + t.Out.Dst.String()
	}
	// A dropped packet reaches no endpoint; an untranslated one reaches its
	// original destination (the fake reports it as the single endpoint).
	eps := slices.Clone(t.Endpoints)
	if len(eps) == 0 && t.Verdict != fakevpp.Drop {
		eps = []netip.AddrPort{t.Out.Dst}
	}
	slices.SortFunc(eps, netip.AddrPort.Compare)
	for _, ep := range slices.Compact(eps) {
		r.Endpoints = append(r.Endpoints, flows.FormatEndpoint(ep))
	}
	r.Steps = append(r.Steps, t.Steps...)
	if t.Verdict == fakevpp.Forward && !t.ReplyOK {
		s.explainLocalReply(r.Steps, t.Out.Src.Addr())
	}
	return r
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
	r.Src, r.Dst, r.Proto = fl.Src.String(), fl.Dst.String(), protoName(fl.Protocol)
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

func protoName(p uint8) string {
	switch p {
	case 17:
		return "UDP"
	case 132:
		return "SCTP"
	}
	return "TCP"
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
		fmt.Fprintf(w, "%s: %s %s -> %s, ingress %s\n", r.Name, r.Proto, r.Src, r.Dst, r.Ingress)
	}
	switch r.Verdict {
	case verdictHost:
	case string(fakevpp.Drop):
		fmt.Fprintf(w, "  verdict:   drop (%s)\n", r.Reason)
	case string(fakevpp.Local):
		fmt.Fprintf(w, "  verdict:   local: addressed to VPP itself as %s\n", r.Out)
		fmt.Fprintf(w, "  snat:      %t\n", r.SNAT)
	default:
		fmt.Fprintf(w, "  verdict:   %s via %s as %s\n", r.Verdict, r.Egress, r.Out)
		fmt.Fprintf(w, "  endpoints: %s\n", strings.Join(r.Endpoints, " "))
		fmt.Fprintf(w, "  snat:      %t\n", r.SNAT)
		if r.ReplyOK {
			fmt.Fprintf(w, "  reply ok:  true\n")
		} else {
			fmt.Fprintf(w, "  reply ok:  false: %s\n", replyStep(r.Steps))
		}
	}
	fmt.Fprintln(w, "  steps:")
	for _, s := range r.Steps {
		fmt.Fprintf(w, "    %s\n", s)
	}
}
