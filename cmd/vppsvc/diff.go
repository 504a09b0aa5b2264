package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"go.fd.io/govpp/adapter"

	"github.com/vppsvc/vppsvc/renderer/cnat4"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
	"github.com/vppsvc/vppsvc/vppsock"
)

func init() { extraCommands = append(extraCommands, newDiffCommand) }

// diffFlags are the flags of `vppsvc diff`.
type diffFlags struct {
	cluster   clusterFlags
	vppSocket string
	output    string
	timeout   time.Duration
}

// Exit statuses of diff, as diff(1) has them.
const (
	diffInSync = 0
	diffDrift  = 1
	diffError  = 2
)

func newDiffCommand(log *logrus.Logger) *cobra.Command {
	f := &diffFlags{}
	cmd := &cobra.Command{
		Use:   "diff --vpp-socket PATH [-f FILE] [--node NODE] [--config FILE]",
		Short: "Compare what vppsvc would program for a cluster with what a live VPP holds; change nothing",
		Long: `diff renders the cluster for the node as 'vppsvc render' does (in a fake VPP),
reads the live VPP at --vpp-socket (dumps only: no request that changes VPP
is sent) and prints the drift:

  missing   items the agent would program that VPP does not hold
  extra     objects in VPP made by vppsvc (tagged vppsvc:<renderer>:…, or
            claimed untagged cnat translations) that the agent would delete
  changed   items VPP holds with other values, field by field

Objects of other control planes are never reported as extra. Items VPP cannot
dump (cnat SNAT settings, interface features) are counted as unverifiable.
Give the cluster (-f/--file, as kubectl get -o yaml writes it; default the
embedded sample), --node and --config the agent on that VPP runs with.

Exit status: 0 in sync, 1 drift, 2 error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return diffOutcome(runDiffCommand(cmd, f, log))
		},
	}
	fl := cmd.Flags()
	f.cluster.registerFile(fl)
	// --cluster was diff's name for -f before render and trace's --file
	// became the one name; scripts that use it keep working.
	fl.StringVar(&f.cluster.file, "cluster", "", "")
	_ = fl.MarkDeprecated("cluster", "use -f/--file")
	fl.StringVar(&f.cluster.node, "node", "", "the node whose VPP this is (default: the first node by name)")
	fl.StringVar(&f.cluster.config, "config", "", "renderer configuration of the agent on that node (YAML; see docs/cli.md)")
	fl.StringVar(&f.vppSocket, "vpp-socket", "", "API socket of the live VPP to compare, read only (required)")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "how long to wait for the connection to VPP")
	return cmd
}

// runDiffCommand checks diff's flags, compares and reports whether there is
// drift.
func runDiffCommand(cmd *cobra.Command, f *diffFlags, log *logrus.Logger) (bool, error) {
	if f.vppSocket == "" {
		return false, usagef("%s", "--vpp-socket is required: the API socket of the VPP to compare (default installation: "+defaultVPPSocket+")")
	}
	if f.output != "text" && f.output != "json" {
		return false, usagef("-o: want text or json, got %q", f.output)
	}
	if err := f.cluster.configFlags.validate(); err != nil {
		return false, err
	}
	if err := checkSocket(f.vppSocket); err != nil {
		return false, err
	}
	return runDiff(cmd.Context(), f, vppsock.New(f.vppSocket), cmd.InOrStdin(), cmd.OutOrStdout(), log)
}

// diffOutcome turns a diff's outcome into what the command returns: diff's
// exit status, with the error to print (none for drift: the output is the
// report).
func diffOutcome(drift bool, err error) error {
	code := diffStatus(drift, err)
	if code == diffInSync {
		return nil
	}
	return statusError{code: code, err: err}
}

// diffStatus maps a diff's outcome to its exit status.
func diffStatus(drift bool, err error) int {
	switch {
	case err != nil:
		return diffError
	case drift:
		return diffDrift
	}
	return diffInSync
}

// runDiff computes what the agent would program for the cluster, dumps the
// VPP behind live and writes the drift to w. It reports whether there is
// drift. Nothing is written to live: the driver is used for its dump only.
func runDiff(ctx context.Context, f *diffFlags, live adapter.VppAPI, stdin io.Reader, w io.Writer, log *logrus.Logger) (bool, error) {
	sim, err := simulate(ctx, &f.cluster, stdin, log)
	if err != nil {
		return false, err
	}
	desired := sim.agent.Reconciler.DesiredOwned()
	claims := map[string]vppcfg.UntaggedClaimFunc{}
	if _, ok := sim.agent.Renderers[ipv6.Name]; ok {
		maps.Copy(claims, ipv6.Claims())
	}
	if _, ok := sim.agent.Renderers[cnat4.Name]; ok {
		maps.Copy(claims, cnat4.Claims())
	}
	node := sim.plan.Node
	sim.close()

	st, err := dumpLive(ctx, live, f.timeout, log)
	if err != nil {
		return false, err
	}
	d := engine.CompareWithVPP(desired, st, claims)
	if f.output == "json" {
		return !d.Empty(), writeDiffJSON(w, node, len(desired), d)
	}
	writeDiffText(w, node, len(desired), d)
	return !d.Empty(), nil
}

// dumpLive connects a driver to the VPP behind a, waits for the connection
// (the driver checks message compatibility on it) and dumps VPP once.
func dumpLive(ctx context.Context, a adapter.VppAPI, timeout time.Duration, log logrus.FieldLogger) (*driverapi.State, error) {
	drv, err := govppdriver.Connect(a, govppdriver.Options{Logger: log, ReconnectAttempts: 3, ReconnectInterval: 200 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	defer drv.Close()
	wait := time.NewTimer(timeout)
	defer wait.Stop()
	for connected := false; !connected; {
		select {
		case ev := <-drv.Events():
			switch ev.Type {
			case driverapi.EventConnected:
				connected = true
			case driverapi.EventDisconnected:
				return nil, errors.New("connect to VPP: refused or lost (is VPP running, and is the socket its api-socket?)")
			}
		case <-wait.C:
			return nil, fmt.Errorf("connect to VPP: no answer within %s", timeout)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return drv.Dump(ctx)
}

func writeDiffText(w io.Writer, node string, desired int, d engine.Drift) {
	fmt.Fprintf(w, "# node %s: %d items desired, %d in sync, %d unverifiable (VPP cannot dump them)\n", node, desired, d.InSync, d.Unverifiable)
	if d.Empty() {
		fmt.Fprintln(w, "in sync: VPP holds everything the agent would program, and nothing of vppsvc's more")
		return
	}
	if len(d.Missing) > 0 {
		fmt.Fprintf(w, "\nmissing (the agent would create them):\n")
		for _, m := range d.Missing {
			fmt.Fprintf(w, "  - %s  [%s]\n      %s\n", m.Key, m.Owner, m.Item)
			if m.Reason != "" {
				fmt.Fprintf(w, "      because %s\n", m.Reason)
			}
		}
	}
	if len(d.Extra) > 0 {
		fmt.Fprintf(w, "\nextra (made by vppsvc, not desired: the agent would delete them):\n")
		for _, e := range d.Extra {
			fmt.Fprintf(w, "  + %s  [%s]\n      %s\n", e.Key, e.Owner, e.Item)
		}
	}
	if len(d.Changed) > 0 {
		fmt.Fprintf(w, "\nchanged (the agent would update them):\n")
		for _, c := range d.Changed {
			fmt.Fprintf(w, "  ~ %s  [%s]\n", c.Key, c.Owner)
			if len(c.Fields) == 0 {
				fmt.Fprintf(w, "      agent: %s\n      VPP:   %s\n", c.Desired, c.Observed)
			}
			for _, fd := range c.Fields {
				fmt.Fprintf(w, "      %s: %s\n", fd.Field, fieldDrift(fd))
			}
		}
	}
	fmt.Fprintf(w, "\ndrift: %d missing, %d extra, %d changed\n", len(d.Missing), len(d.Extra), len(d.Changed))
}

// fieldDrift says how one field differs. A list field names the elements
// one side lacks (engine.FieldDiff).
func fieldDrift(fd engine.FieldDiff) string {
	isList := strings.HasPrefix(fd.Desired, "[")
	switch {
	case fd.Reordered:
		return fmt.Sprintf("order differs: agent %s, VPP %s", fd.Desired, fd.Observed)
	case !isList:
		return fmt.Sprintf("agent %s, VPP %s", fd.Desired, fd.Observed)
	}
	var parts []string
	if fd.Desired != "[]" {
		parts = append(parts, "missing in VPP "+fd.Desired)
	}
	if fd.Observed != "[]" {
		parts = append(parts, "extra in VPP "+fd.Observed)
	}
	return strings.Join(parts, "; ")
}

// diffJSON is the -o json form of a drift (docs/cli.md: the diff contract).
type diffJSON struct {
	Node         string           `json:"node"`
	Desired      int              `json:"desired"`
	InSync       int              `json:"inSync"`
	Unverifiable int              `json:"unverifiable"`
	Missing      []diffItemJSON   `json:"missing"`
	Extra        []diffItemJSON   `json:"extra"`
	Changed      []diffChangeJSON `json:"changed"`
}

type diffItemJSON struct {
	Key    string `json:"key"`
	Owner  string `json:"owner"`
	Config string `json:"config"`
	Reason string `json:"reason,omitempty"`
}

type diffChangeJSON struct {
	Key      string          `json:"key"`
	Owner    string          `json:"owner"`
	Desired  string          `json:"desired"`
	Observed string          `json:"observed"`
	Fields   []diffFieldJSON `json:"fields"`
}

type diffFieldJSON struct {
	Field     string `json:"field"`
	Desired   string `json:"desired"`
	Observed  string `json:"observed"`
	Reordered bool   `json:"reordered,omitempty"`
}

func writeDiffJSON(w io.Writer, node string, desired int, d engine.Drift) error {
	out := diffJSON{Node: node, Desired: desired, InSync: d.InSync, Unverifiable: d.Unverifiable,
		Missing: []diffItemJSON{}, Extra: []diffItemJSON{}, Changed: []diffChangeJSON{}}
	for _, m := range d.Missing {
		out.Missing = append(out.Missing, diffItemJSON{Key: m.Key.String(), Owner: m.Owner, Config: m.Item.String(), Reason: m.Reason})
	}
	for _, e := range d.Extra {
		out.Extra = append(out.Extra, diffItemJSON{Key: e.Key.String(), Owner: e.Owner, Config: e.Item.String()})
	}
	for _, c := range d.Changed {
		ch := diffChangeJSON{Key: c.Key.String(), Owner: c.Owner, Desired: c.Desired.String(), Observed: c.Observed.String(), Fields: []diffFieldJSON{}}
		for _, fd := range c.Fields {
			ch.Fields = append(ch.Fields, diffFieldJSON{Field: fd.Field, Desired: fd.Desired, Observed: fd.Observed, Reordered: fd.Reordered})
		}
		out.Changed = append(out.Changed, ch)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
