package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/agent"
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
	for kind, n := range c.Ignored {
		log.WithFields(logrus.Fields{"kind": kind, "count": n}).Warning("ignoring objects of a kind vppsvc does not use")
	}
	plan, err := simnode.Build(c.Nodes, c.Pods, f.node)
	if err != nil {
		return nil, err
	}
	cfg, err := agent.LoadConfig(f.config, plan.NodeIPs)
	if err != nil {
		return nil, err
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
	if err := waitApplied(ctx, a); err != nil {
		a.Close()
		return nil, err
	}
	return &simulation{cluster: c, plan: plan, fake: fake, agent: a}, nil
}

// waitApplied waits until no item is pending for a retry. Items waiting for
// an interface that does not exist stay pending by design and are reported.
func waitApplied(ctx context.Context, a *agent.Agent) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := a.Reconciler.Stats()
		if st.Failed == 0 && a.Processor.Stats().DirtyRenderers == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var failed []string
			for _, s := range a.Reconciler.Statuses() {
				if s.Err != nil {
					failed = append(failed, s.String())
				}
			}
			return fmt.Errorf("VPP configuration did not converge: %s", strings.Join(failed, "; "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (s *simulation) close() { s.agent.Close() }
