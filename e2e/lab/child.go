package lab

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
	"github.com/vppsvc/vppsvc/e2e/lab/nodeagent"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
	"github.com/vppsvc/vppsvc/e2e/lab/vppnode"
)

// RoleEnv tells a re-run of the lab's program which part of the lab it is.
// It is nodeagent.ContainerEnv, so a node agent's containers inherit the
// mechanism.
const RoleEnv = nodeagent.ContainerEnv

const (
	roleNode    = "node"
	roleNetexec = "netexec"
)

// RunChild makes this process the part of the lab its environment names —
// a node agent, or a pod's netexec container — and exits when that part
// ends. It returns at once in any other process. Every program that starts
// a lab (the lab command, the lab's tests) calls it first thing, because
// the lab re-runs that program for its children.
func RunChild() {
	role := os.Getenv(RoleEnv)
	if role == "" {
		return
	}
	log := logrus.New()
	log.SetFormatter(&logrus.TextFormatter{FullTimestamp: true})
	var err error
	switch role {
	case roleNode:
		QuietKubernetesLogs(os.Getenv("VPPSVC_LAB_VERBOSE") != "")
		err = runNodeAgent(os.Args[1:], log)
	case roleNetexec:
		ctx := context.Background()
		args := os.Args[1:]
		err = netexec.Main(ctx, args, log)
	default:
		err = fmt.Errorf("unknown %s %q", RoleEnv, role)
	}
	if err != nil {
		log.WithError(err).Error(role + " failed")
		os.Exit(1)
	}
	os.Exit(0)
}

// runNodeAgent is a node agent's process: it stops on SIGTERM or when the
// lab that started it is gone (its parent changes), so that a killed lab
// leaves no agent restarting VPPs behind.
func runNodeAgent(args []string, log *logrus.Logger) error {
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	node := fs.String("node", "", "node name")
	nodes := fs.Int("nodes", 2, "nodes in the lab")
	kinds := fs.String("kinds", "", "each node's kind, in order (vpp,kernel); empty: all vpp")
	kubeProxy := fs.String("kube-proxy", "", "the kube-proxy binary of a kernel node")
	ioName := fs.String("io", "", "how VPP attaches to the node's veths (vppnode.KnownIO; vppnode.DefaultIO when empty)")
	ipv4Renderer := fs.String("ipv4-renderer", "", "the VPP node's IPv4 renderer: nat44 (when empty) or cnat")
	prefix := fs.String("prefix", topology.DefaultPrefix, "prefix of the lab's names")
	stateDir := fs.String("state-dir", "", "the lab's state directory")
	kubeconfig := fs.String("kubeconfig", "", "the lab's kubeconfig")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ks, err := topology.ParseKinds(*kinds)
	if err != nil {
		return err
	}
	for len(ks) < *nodes {
		ks = append(ks, topology.KindVPP)
	}
	var self topology.Node
	var all []topology.Node
	for i := 1; i <= *nodes; i++ {
		n := topology.Node{Name: topology.NodeName(i), Index: i, Kind: ks[i-1]}
		all = append(all, n)
		if n.Name == *node {
			self = n
		}
	}
	if self.Index == 0 {
		return fmt.Errorf("node %q is not one of the lab's %d", *node, *nodes)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	parent := os.Getppid()
	go func() {
		for ctx.Err() == nil {
			if os.Getppid() != parent {
				log.Warn("the lab that started this node agent is gone; stopping")
				cancel()
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
	}()
	io, err := vppnode.ParseIO(*ioName)
	if err != nil {
		return err
	}
	opts := nodeagent.Options{
		Node: self, Nodes: all, Names: topology.Names{Prefix: *prefix}, StateDir: *stateDir,
		Kubeconfig: *kubeconfig, Executable: exe, KubeProxy: *kubeProxy, IO: io, IPv4Renderer: *ipv4Renderer, Log: log,
	}
	if self.IsKernel() {
		return nodeagent.RunKernel(ctx, opts)
	}
	return nodeagent.Run(ctx, opts)
}
