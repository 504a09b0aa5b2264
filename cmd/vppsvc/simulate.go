package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/clusterfile"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/sample"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/simnode"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/processor"
)

// clusterFlags select the cluster state and the simulated node.
type clusterFlags struct {
	file   string
	node   string
	config string
}

func (f *clusterFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.file, "file", "f", "", "cluster state: Kubernetes YAML/JSON (as kubectl get -o yaml writes it), - for stdin; default: the embedded sample cluster")
	cmd.Flags().StringVar(&f.node, "node", "", "the node whose agent is simulated (default: the first node by name)")
	cmd.Flags().StringVar(&f.config, "config", "", "renderer configuration (YAML; see docs/cli.md)")
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

// simulation is one node's agent programming a fake VPP from a cluster file.
type simulation struct {
	cluster *clusterfile.Cluster
	plan    *simnode.Plan
	fake    *fakevpp.VPP
	agent   *agent.Agent
}

// simulate builds the node's fake VPP (uplink0, host0, a tap per local
// pod), runs the agent against it and feeds it the cluster as one snapshot.
// Bad fields of objects are logged as warnings by the processor and skipped.
func simulate(ctx context.Context, f *clusterFlags, stdin io.Reader, log *logrus.Logger) (*simulation, error) {
	c, err := loadCluster(f.file, stdin)
	if err != nil {
		return nil, err
	}
	plan, err := simnode.Build(c.Nodes, c.Pods, f.node)
	if err != nil {
		return nil, err
	}
	cfg, err := agent.LoadConfig(f.config, plan.NodeIPs)
	if err != nil {
		return nil, err
	}
	// Reported once the input is known to be usable, so that an error is the
	// only line a failed run prints.
	for _, kind := range slices.Sorted(maps.Keys(c.Ignored)) {
		log.WithFields(logrus.Fields{"kind": kind, "count": c.Ignored[kind]}).Warning("ignoring objects of a kind vppsvc does not use")
	}
	fake := fakevpp.New(fakevpp.WithSeed(1))
	for _, ifc := range plan.Interfaces {
		fake.AddInterface(ifc.Name, ifc.Addrs...)
	}
	for _, r := range plan.Routes {
		fake.AddRoute(r.Dst, r.Interface)
	}
	a, err := agent.New(agent.Options{
		NodeName:           plan.Node,
		FrontendInterfaces: simnode.FrontendInterfaces(),
		Config:             cfg,
		VPP:                fake,
		Log:                log,
		RetryMin:           time.Millisecond,
		RetryMax:           10 * time.Millisecond,
	})
	if err != nil {
		return nil, err
	}
	if err := a.Start(ctx); err != nil {
		a.Close()
		return nil, err
	}
	snap := processor.Snapshot{Services: c.Services, EndpointSlices: c.EndpointSlices, Nodes: c.Nodes}
	for _, lp := range plan.LocalPods {
		snap.LocalPods = append(snap.LocalPods, processor.LocalPod{
			ID: processor.PodID{Namespace: lp.Namespace, Name: lp.Name}, IPs: lp.IPs, Interface: lp.Interface})
	}
	a.Processor.Resync(snap)
	if err := a.WaitConverged(ctx, convergeTimeout); err != nil {
		a.Close()
		return nil, err
	}
	reportPending(a, log)
	return &simulation{cluster: c, plan: plan, fake: fake, agent: a}, nil
}

// convergeTimeout bounds the wait for the fake VPP to hold the configuration.
// The fake answers at once; only a renderer or VPP-layer bug that keeps an
// item failing makes the wait run out.
const convergeTimeout = 10 * time.Second

// reportPending warns about items the simulated VPP could not take although
// the simulated node has every interface the plan names: they are missing
// from the output, and the reason says why.
func reportPending(a *agent.Agent, log logrus.FieldLogger) {
	for _, st := range a.Pending() {
		log.WithFields(logrus.Fields{"key": st.Key.String(), "owners": strings.Join(st.Owners, ","), "reason": st.Reason}).
			Warning("item not applied to the simulated VPP")
	}
}

func (s *simulation) close() { s.agent.Close() }
