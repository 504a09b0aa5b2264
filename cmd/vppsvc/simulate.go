package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/clusterfile"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/sample"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/simnode"
	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/realvpp"
)

// clusterFlags select the cluster state and the simulated node.
type clusterFlags struct {
	file      string
	node      string
	config    string
	vppSocket string
	configFlags
}

func (f *clusterFlags) register(cmd *cobra.Command) {
	f.registerFile(cmd.Flags())
	cmd.Flags().StringVar(&f.node, "node", "", "the node whose agent is simulated (default: the first node by name)")
	cmd.Flags().StringVar(&f.config, "config", "", "renderer configuration (YAML; see docs/cli.md), - for stdin")
	f.configFlags.register(cmd.Flags())
	cmd.Flags().StringVar(&f.vppSocket, "vpp-socket", "", "build the simulated node in the scratch VPP 25.10 at this API socket instead of a fake VPP; packets then cross VPP's graph (docs/real-vpp.md)")
}

// registerFile adds -f/--file, the cluster file of render, trace and diff.
func (f *clusterFlags) registerFile(fl *pflag.FlagSet) {
	fl.StringVarP(&f.file, "file", "f", "", "cluster state: Kubernetes YAML/JSON (as kubectl get -o yaml writes it), - for stdin; default: the embedded sample cluster")
}

// loadCluster reads the -f file, stdin for "-", or the embedded sample.
func loadCluster(path string, stdin io.Reader) (*clusterfile.Cluster, error) {
	switch path {
	case "":
		return clusterfile.Parse("sample cluster", bytes.NewReader(sample.ClusterYAML))
	case "-":
		return clusterfile.Parse("stdin", stdin)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return clusterfile.Parse(path, fh)
}

// simulation is one node's agent programming a data plane (a fake VPP, or
// a scratch real VPP) from a cluster file.
type simulation struct {
	cluster *clusterfile.Cluster
	plan    *simnode.Plan
	node    dataplane.Node
	agent   *agent.Agent
}

// simulate builds the node (uplink0, host0, a tap per local pod, unnumbered
// to host0 as a CNI makes it) in a fake VPP, or in the real VPP of
// --vpp-socket, runs the agent against it and feeds it the cluster as one
// snapshot. Bad fields of objects are logged as warnings by the processor
// and skipped.
func simulate(ctx context.Context, f *clusterFlags, stdin io.Reader, log *logrus.Logger) (*simulation, error) {
	if err := oneStdin("-f", f.file, "--config", f.config); err != nil {
		return nil, usageError{err}
	}
	if err := f.configFlags.validate(); err != nil {
		return nil, err
	}
	c, err := loadCluster(f.file, stdin)
	if err != nil {
		return nil, err
	}
	plan, err := simnode.Build(c.Nodes, c.Pods, f.node)
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfig(f.config, stdin, plan.NodeIPs, f.configFlags)
	if err != nil {
		return nil, err
	}
	// The simulated node's kernel sends from its host-link addresses: its
	// own traffic, unless the configuration says otherwise.
	if len(cfg.NAT44.NodeSources) == 0 {
		cfg.NAT44.NodeSources = []netip.Prefix{netip.PrefixFrom(simnode.HostIPv4, 32)}
	}
	if len(cfg.CNAT4.NodeSources) == 0 {
		cfg.CNAT4.NodeSources = []netip.Prefix{netip.PrefixFrom(simnode.HostIPv4, 32)}
	}
	if len(cfg.IPv6.NodeSources) == 0 {
		cfg.IPv6.NodeSources = []netip.Prefix{netip.PrefixFrom(simnode.HostIPv6, 128)}
	}
	// Its pods are its own clients too: each local pod's address, for the
	// cnat renderers (NAT44 needs none).
	localClients := func(is func(netip.Addr) bool) []netip.Prefix {
		var out []netip.Prefix
		for _, lp := range plan.LocalPods {
			for _, ip := range lp.IPs {
				if is(ip) {
					out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
				}
			}
		}
		return out
	}
	if len(cfg.CNAT4.LocalClients) == 0 {
		cfg.CNAT4.LocalClients = localClients(netip.Addr.Is4)
	}
	if len(cfg.IPv6.LocalClients) == 0 {
		cfg.IPv6.LocalClients = localClients(netip.Addr.Is6)
	}
	// Reported once the input is known to be usable, so that an error is the
	// only line a failed run prints.
	for _, kind := range slices.Sorted(maps.Keys(c.Ignored)) {
		log.WithFields(logrus.Fields{"kind": kind, "count": c.Ignored[kind]}).Warning("ignoring objects of a kind vppsvc does not use")
	}
	warnMissingLocalPods(c, plan, log)
	node, err := openNode(f.vppSocket, log)
	if err != nil {
		return nil, err
	}
	if err := buildNode(node, plan); err != nil {
		node.Close()
		return nil, err
	}
	a, err := agent.New(agent.Options{
		NodeName:           plan.Node,
		FrontendInterfaces: simnode.FrontendInterfaces(),
		Config:             cfg,
		VPP:                node.Adapter(),
		Log:                log,
		RetryMin:           time.Millisecond,
		RetryMax:           10 * time.Millisecond,
	})
	if err != nil {
		node.Close()
		return nil, err
	}
	if err := a.Start(ctx); err != nil {
		a.Close()
		node.Close()
		return nil, err
	}
	snap := processor.Snapshot{Services: c.Services, EndpointSlices: c.EndpointSlices, Nodes: c.Nodes, ServiceCIDRs: c.ServiceCIDRs}
	for _, lp := range plan.LocalPods {
		snap.LocalPods = append(snap.LocalPods, processor.LocalPod{
			ID: processor.PodID{Namespace: lp.Namespace, Name: lp.Name}, IPs: lp.IPs, Interface: lp.Interface})
	}
	a.Processor.Resync(snap)
	if err := a.WaitConverged(ctx, convergeTimeout); err != nil {
		a.Close()
		node.Close()
		return nil, err
	}
	reportPending(a, log)
	return &simulation{cluster: c, plan: plan, node: node, agent: a}, nil
}

// openNode returns the data plane of a simulation: a fake VPP, or the
// scratch VPP at socket (refused if it holds interfaces vppsvc did not
// create: see realvpp.Open).
func openNode(socket string, log logrus.FieldLogger) (dataplane.Node, error) {
	if socket == "" {
		return dataplane.NewFake(1), nil
	}
	if err := checkSocket(socket); err != nil {
		var notSocket *notSocketError
		if errors.As(err, &notSocket) {
			return nil, usageError{err}
		}
		return nil, err
	}
	n, err := realvpp.Open(socket, realvpp.Options{})
	if err != nil {
		return nil, fmt.Errorf("--vpp-socket: %w", err)
	}
	log.WithField("socket", socket).Info("simulating the node in a real VPP")
	return dataplane.Real{Node: n}, nil
}

// buildNode creates the plan's interfaces, unnumbered links and routes in
// node, before the agent connects (VPP's startup configuration).
func buildNode(node dataplane.Node, plan *simnode.Plan) error {
	if err := plan.BuildIn(node); err != nil {
		return fmt.Errorf("simulated node: %w", err)
	}
	return nil
}

// convergeTimeout bounds the wait for the VPP to hold the configuration.
// The fake answers at once and a real VPP within a second for the sample;
// only a renderer or VPP-layer bug that keeps an item failing makes the
// wait run out.
const convergeTimeout = 30 * time.Second

// reportPending warns about items the simulated VPP could not take although
// the simulated node has every interface the plan names: they are missing
// from the output, and the reason says why.
func reportPending(a *agent.Agent, log logrus.FieldLogger) {
	for _, st := range a.Pending() {
		log.WithFields(logrus.Fields{"key": st.Key.String(), "owners": strings.Join(st.Owners, ","), "reason": st.Reason}).
			Warning("item not applied to the simulated VPP")
	}
}

// close stops the agent. A real VPP keeps the simulated node and its
// configuration, to be inspected with vppctl; the next run resets it.
func (s *simulation) close() {
	s.agent.Close()
	if r, ok := s.node.(dataplane.Real); ok {
		r.Disconnect()
	}
}
