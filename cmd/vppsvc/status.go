package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/vppsvc/vppsvc/agent/inspect"
)

func init() { extraCommands = append(extraCommands, newStatusCommand, newServiceCommand) }

// statusFlags are the flags of `vppsvc status` and `vppsvc service list`.
type statusFlags struct {
	socket string
	output string
}

func newStatusCommand(_ *logrus.Logger) *cobra.Command {
	f := &statusFlags{}
	cmd := &cobra.Command{
		Use:   "status [namespace/name]",
		Short: "Show the services a running agent serves and the state of their VPP items",
		Long: `status asks the agent started by 'vppsvc run' on this node, through its state
inspector (--inspect-socket of run), what it serves: per service its frontends
and backends as the processor sees them, and per renderer how many of the
service's VPP items are applied, pending or failed. Items that failed (with
VPP's error, return value and next retry) or wait for an interface are listed
below the table. With a service, only that service is shown.

  -o table   one row per frontend, the problems below (default)
  -o json    the inspector's answer as it is (docs/cli.md: the status contract)

'vppsvc service list' is the same command.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd.Context(), f, args, cmd.OutOrStdout())
		},
	}
	f.register(cmd)
	return cmd
}

// newServiceCommand is `vppsvc service list`, named after cilium-dbg's.
func newServiceCommand(_ *logrus.Logger) *cobra.Command {
	f := &statusFlags{}
	list := &cobra.Command{
		Use:   "list [namespace/name]",
		Short: "Same as vppsvc status",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd.Context(), f, args, cmd.OutOrStdout())
		},
	}
	f.register(list)
	// RunE makes the group runnable, so that an unknown subcommand is an
	// error (exit 2) rather than help.
	svc := &cobra.Command{Use: "service", Short: "Services of the running agent (service list = status)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	svc.AddCommand(list)
	return svc
}

func (f *statusFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.socket, "inspect-socket", defaultInspectSocket, "where the agent serves its state inspector: a unix socket or a loopback host:port (run's --inspect-socket)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "table", "output format: table or json")
}

// runStatus fetches the snapshot (or one service) and prints it.
func runStatus(ctx context.Context, f *statusFlags, args []string, w io.Writer) error {
	if f.output != "table" && f.output != "json" {
		return usagef("-o: want table or json, got %q", f.output)
	}
	path := "/v1/services"
	if len(args) == 1 {
		ns, name, ok := strings.Cut(args[0], "/")
		if !ok {
			ns, name = "default", args[0]
		}
		if ns == "" || name == "" || strings.Contains(name, "/") {
			return usagef("service %q: want namespace/name", args[0])
		}
		path += "/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
	}
	body, err := inspectorGet(ctx, f.socket, path)
	if err != nil {
		return err
	}
	if f.output == "json" {
		_, err := w.Write(body)
		return err
	}
	var snap inspect.Snapshot
	if len(args) == 1 {
		var s inspect.ServiceState
		if err := json.Unmarshal(body, &s); err != nil {
			return fmt.Errorf("inspector answer: %w", err)
		}
		snap.Services = []inspect.ServiceState{s}
		// Taken is not part of a service's answer; retry times are then
		// shown relative to now.
		snap.Taken = time.Now()
	} else if err := json.Unmarshal(body, &snap); err != nil {
		return fmt.Errorf("inspector answer: %w", err)
	}
	writeStatus(w, &snap, len(args) == 0)
	return nil
}

// inspectorGet GETs path from the inspector at addr (a unix socket or a
// loopback host:port) and returns the body of a 200 answer.
func inspectorGet(ctx context.Context, addr, path string) ([]byte, error) {
	network := "tcp"
	if strings.Contains(addr, "/") || !strings.Contains(addr, ":") {
		network = "unix"
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://inspector"+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("no state inspector at %s (%v): is 'vppsvc run' running on this node? It serves one at %s unless started with another --inspect-socket (or with an empty one); point --inspect-socket here at the same address",
			addr, unwrapURLError(err), defaultInspectSocket)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the inspector's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("%s", e.Error)
		}
		return nil, fmt.Errorf("inspector answered %s", resp.Status)
	}
	return body, nil
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// writeStatus prints the table, one row per frontend, and below it every
// item that failed or waits, with the reason. withNode adds the node-wide
// items' counts and problems.
func writeStatus(w io.Writer, s *inspect.Snapshot, withNode bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tFRONTEND\tTYPE\tVPP ITEMS\tBACKENDS")
	for _, svc := range s.Services {
		backends := map[string]string{}
		for _, b := range svc.Backends {
			backends[b.PortName+" "+b.Address] = backendString(b)
		}
		items := rendererCounts(svc.Renderers)
		if len(svc.Frontends) == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\t%s\t-\n", svc.ID(), items)
			continue
		}
		var prev []string
		for i, fe := range svc.Frontends {
			name := ""
			if i == 0 {
				name = svc.ID()
			} else {
				items = ""
			}
			bs := make([]string, len(fe.Backends))
			for j, addr := range fe.Backends {
				if bs[j] = backends[fe.PortName+" "+addr]; bs[j] == "" {
					bs[j] = addr
				}
			}
			first := "(none: traffic is dropped)"
			switch {
			case i > 0 && len(bs) > 0 && slices.Equal(bs, prev):
				first, bs = "(as above)", nil
			case len(bs) > 0:
				first = "1) " + bs[0]
			}
			fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\n", name, fe.Address, fe.Protocol, fe.Type, items, first)
			for j, b := range bs[min(1, len(bs)):] {
				fmt.Fprintf(tw, "\t\t\t\t%d) %s\n", j+2, b)
			}
			if bs != nil {
				prev = bs
			}
		}
	}
	if withNode {
		fmt.Fprintf(tw, "(node)\t\t\t%s\n", rendererCounts(s.NodeItems))
	}
	tw.Flush()

	var problems problemList
	for _, svc := range s.Services {
		for _, r := range svc.Renderers {
			problems.add(svc.ID(), r.Items, s.Taken, "")
		}
		problems.add(svc.ID(), svc.BlockedBy, s.Taken, "node items for a local backend")
	}
	if withNode {
		for _, r := range s.NodeItems {
			problems.add("(node)", r.Items, s.Taken, "node items")
		}
	}
	problems.write(w)
	if withNode && !s.Synced {
		fmt.Fprintln(w, "\nThe agent has not compared VPP with its desired state yet (is VPP up?).")
	}
}

func backendString(b inspect.Backend) string {
	flags := []string{b.State}
	if b.Local {
		local := "local"
		if b.Interface != "" {
			local += " on " + b.Interface
		}
		flags = append(flags, local)
	}
	if b.HostNetwork {
		flags = append(flags, "host network")
	}
	if len(b.Zones) > 0 {
		flags = append(flags, "zones "+strings.Join(b.Zones, ","))
	}
	return b.Address + " (" + strings.Join(flags, ", ") + ")"
}

// rendererCounts summarises items per renderer: "nat44: 2 applied, 1 failed".
func rendererCounts(rs []inspect.RendererItems) string {
	if len(rs) == 0 {
		return "-"
	}
	var parts []string
	for _, r := range rs {
		n := map[string]int{}
		for _, it := range r.Items {
			n[it.Status]++
		}
		var c []string
		for _, st := range []string{"applied", "pending", "failed"} {
			if n[st] > 0 {
				c = append(c, fmt.Sprintf("%d %s", n[st], st))
			}
		}
		parts = append(parts, r.Renderer+": "+strings.Join(c, ", "))
	}
	return strings.Join(parts, "; ")
}

// problem describes a failed or waiting item, or returns "" for an applied one.
func problem(it inspect.ItemView, now time.Time) string {
	var p string
	switch {
	case it.Status == "failed":
		p = "failed: " + it.Error
		if it.Retval != 0 {
			p += fmt.Sprintf(" (retval %d)", it.Retval)
		}
		if it.Failures > 1 {
			p += fmt.Sprintf(", %d failures", it.Failures)
		}
		if it.NextRetry != nil {
			p += ", next retry in " + max(it.NextRetry.Sub(now), 0).Round(time.Millisecond).String()
		}
	case it.Status == "pending" && it.WaitingFor != "":
		p = "pending: waiting for interface " + it.WaitingFor
	case it.Status == "pending":
		p = "pending: " + it.Reason
	default:
		return ""
	}
	if it.Deleting {
		p += " (deleting)"
	}
	return p
}

// problemList collects the lines below the table: one per failed item, and
// one per owner and missing interface for the items that wait for it (an
// interface carries dozens of ACL bindings; a line each would bury the rest).
type problemList struct {
	lines []string
	count int
}

func (p *problemList) add(owner string, items []inspect.ItemView, now time.Time, waitingWhat string) {
	type waiting struct {
		n     int
		kinds map[string]int
	}
	byIf := map[string]*waiting{}
	var ifs []string
	for _, it := range items {
		if it.Status == "pending" && it.WaitingFor != "" {
			wt := byIf[it.WaitingFor]
			if wt == nil {
				wt = &waiting{kinds: map[string]int{}}
				byIf[it.WaitingFor] = wt
				ifs = append(ifs, it.WaitingFor)
			}
			wt.n++
			kind, _, _ := strings.Cut(it.Key, "/")
			wt.kinds[kind]++
			p.count++
			continue
		}
		if d := problem(it, now); d != "" {
			p.lines = append(p.lines, fmt.Sprintf("%s\t%s\t%s", owner, it.Key, d))
			p.count++
		}
	}
	if waitingWhat == "" {
		waitingWhat = "items"
	}
	for _, ifName := range ifs {
		wt := byIf[ifName]
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(wt.kinds)) {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, wt.kinds[k]))
		}
		p.lines = append(p.lines, fmt.Sprintf("%s\tinterface %s\tpending: %d %s wait for it (%s)", owner, ifName, wt.n, waitingWhat, strings.Join(kinds, ", ")))
	}
}

func (p *problemList) write(w io.Writer) {
	if p.count == 0 {
		return
	}
	fmt.Fprintln(w, "\nVPP items not applied:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, l := range p.lines {
		fmt.Fprintln(tw, "  "+l)
	}
	tw.Flush()
}
