package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"go.fd.io/govpp/adapter/socketclient"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/simnode"
	"github.com/vppsvc/vppsvc/fakevpp"
)

func init() { extraCommands = append(extraCommands, newRunCommand) }

// runFlags are the flags of `vppsvc run`.
type runFlags struct {
	node, kubeconfig, vppSocket, config, metricsAddr string
	fakeVPP, localPods                               bool
	frontends                                        []string
	healthzTimeout, resyncInterval                   time.Duration
}

// defaultVPPSocket is where VPP's api-socket lives in a default installation.
const defaultVPPSocket = "/run/vpp/api.sock"

func newRunCommand(log *logrus.Logger) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run --node NODE [--kubeconfig PATH] (--vpp-socket PATH | --fake-vpp)",
		Short: "Run the node agent: program VPP from the Kubernetes API until stopped",
		Long: `run watches Services, EndpointSlices and Nodes (and, with --local-pods, the
pods of this node) and keeps VPP configured for them. It serves /metrics
(Prometheus) and /healthz on --metrics-addr, and a kube-proxy compatible
health-check server on the healthCheckNodePort of every LoadBalancer service
with externalTrafficPolicy Local.

Without --kubeconfig it uses the in-cluster configuration (the pod's service
account). SIGTERM or SIGINT stops it; VPP keeps its configuration, and the
next start compares it with the cluster and changes only what differs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgentCommand(cmd, f, log)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.node, "node", os.Getenv("NODE_NAME"), "this node's name (default $NODE_NAME)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster configuration)")
	fl.StringVar(&f.vppSocket, "vpp-socket", defaultVPPSocket, "VPP binary API socket")
	fl.BoolVar(&f.fakeVPP, "fake-vpp", false, "program an in-memory fake VPP instead (uplink0 and host0 are created for it)")
	fl.StringVar(&f.config, "config", "", "renderer configuration (YAML; see docs/cli.md)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", ":9101", "address of the /metrics and /healthz server")
	fl.DurationVar(&f.healthzTimeout, "healthz-timeout", 60*time.Second, "/healthz fails while a change has waited longer than this for VPP")
	fl.StringSliceVar(&f.frontends, "frontend-interfaces", simnode.FrontendInterfaces(), "VPP interfaces through which clients outside the node's pods arrive (uplink, host)")
	fl.BoolVar(&f.localPods, "local-pods", false, "report this node's pods as local pods on VPP interfaces named tap-<namespace>-<name> (only if your CNI names them so; see docs/cli.md)")
	fl.DurationVar(&f.resyncInterval, "vpp-resync-interval", 0, "compare VPP with the desired state this often, repairing changes made behind vppsvc's back (0: only after a VPP restart)")
	withInspector(cmd)
	return cmd
}

// runAgentCommand builds the dependencies of runNode from flags and runs it
// until SIGTERM or SIGINT.
func runAgentCommand(cmd *cobra.Command, f *runFlags, log *logrus.Logger) error {
	if f.node == "" {
		return errors.New("--node is required (or set NODE_NAME)")
	}
	if f.fakeVPP && cmd.Flags().Changed("vpp-socket") {
		return errors.New("--vpp-socket and --fake-vpp are exclusive")
	}
	client, err := kubeClient(f.kubeconfig)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.metricsAddr)
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	deps := nodeDeps{Client: client, HTTP: ln, Log: log}
	if f.fakeVPP {
		deps.Fake = fakevpp.New()
		deps.VPP = deps.Fake
	} else {
		deps.VPP = socketclient.NewVppClient(f.vppSocket)
	}
	ctx, cancel := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	return runNode(ctx, nodeConfig{
		Node: f.node, ConfigFile: f.config, FrontendInterfaces: f.frontends, LocalPods: f.localPods,
		HealthzTimeout: f.healthzTimeout, ResyncInterval: f.resyncInterval,
	}, deps)
}

// kubeClient connects with a kubeconfig file, or in-cluster without one.
func kubeClient(kubeconfig string) (kubernetes.Interface, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
		}
	} else if cfg, err = rest.InClusterConfig(); err != nil {
		return nil, fmt.Errorf("no --kubeconfig and not running in a cluster: %w", err)
	}
	cfg.UserAgent = "vppsvc/" + versionString()
	return kubernetes.NewForConfig(cfg)
}
