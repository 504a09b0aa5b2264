package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/flows"
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
the node itself (or its node IP), uplink0 for remote pods and external clients.
Flows of one run share the fake VPP, so sessions and affinity carry over.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTrace(cmd, f, log)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&f.src, "src", "", "source IP[:PORT] (port defaults to 40000)")
	cmd.Flags().StringVar(&f.dst, "dst", "", "destination IP:PORT, [IPv6]:PORT for IPv6")
	cmd.Flags().StringVar(&f.proto, "proto", "TCP", "TCP or UDP")
	cmd.Flags().StringVar(&f.ingress, "ingress", "", "interface the packet enters on (default: inferred from --src)")
	cmd.Flags().StringVar(&f.flowsFile, "flows", "", "YAML list of {name, src, dst, proto, ingress} to trace in one run")
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
		return fmt.Errorf("-o: want text or json, got %q", f.output)
	}
	parsed, batch, err := f.flows()
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
		return errors.New(results[0].Error)
	}
	w := cmd.OutOrStdout()
	if f.output == "json" {
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

// flows returns the flows to trace: the --flows file, or one from flags.
func (f *traceFlags) flows() ([]flows.Parsed, bool, error) {
	if f.flowsFile != "" {
		if f.src != "" || f.dst != "" {
			return nil, false, fmt.Errorf("--flows and --src/--dst are exclusive")
		}
		data, err := os.ReadFile(f.flowsFile)
		if err != nil {
			return nil, false, err
		}
		parsed, err := flows.ParseFile(data)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", f.flowsFile, err)
		}
		return parsed, true, nil
	}
	if f.src == "" || f.dst == "" {
		return nil, false, fmt.Errorf("need --src and --dst, or --flows FILE")
	}
	fl, err := flows.Spec{Name: "flow", Src: f.src, Dst: f.dst, Proto: f.proto, Ingress: f.ingress}.Parse()
	if err != nil {
		return nil, false, err // a single malformed flow is a usage error
	}
	return []flows.Parsed{{Name: fl.Name, Flow: fl}}, false, nil
}

func (s *simulation) trace(p flows.Parsed) traceResult {
	r := traceResult{Name: p.Name, Endpoints: []string{}, Steps: []string{}}
	if p.Err != nil {
		r.Error = p.Err.Error()
		return r
	}
	fl := p.Flow
	ingress := fl.Ingress
	if ingress == "" {
		ingress = s.plan.IngressFor(fl.Src.Addr())
	} else if _, ok := s.node.InterfaceIndex(ingress); !ok {
		r.Error = fmt.Sprintf("ingress: no interface %q on node %s", ingress, s.plan.Node)
		return r
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
	return r
}

func protoName(p uint8) string {
	if p == 17 {
		return "UDP"
	}
	return "TCP"
}

func writeTraceText(w io.Writer, r traceResult) {
	if r.Error != "" {
		fmt.Fprintf(w, "%s: error: %s\n", r.Name, r.Error)
		return
	}
	fmt.Fprintf(w, "%s: %s %s -> %s, ingress %s\n", r.Name, r.Proto, r.Src, r.Dst, r.Ingress)
	switch r.Verdict {
	case string(fakevpp.Drop):
		fmt.Fprintf(w, "  verdict:   drop (%s)\n", r.Reason)
	case string(fakevpp.Local):
		fmt.Fprintf(w, "  verdict:   local: addressed to VPP itself as %s\n", r.Out)
		fmt.Fprintf(w, "  snat:      %t\n", r.SNAT)
	default:
		fmt.Fprintf(w, "  verdict:   %s via %s as %s\n", r.Verdict, r.Egress, r.Out)
		fmt.Fprintf(w, "  endpoints: %s\n", strings.Join(r.Endpoints, " "))
		fmt.Fprintf(w, "  snat:      %t\n", r.SNAT)
		fmt.Fprintf(w, "  reply ok:  %t\n", r.ReplyOK)
	}
	fmt.Fprintln(w, "  steps:")
	for _, s := range r.Steps {
		fmt.Fprintf(w, "    %s\n", s)
	}
}
