package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"time"

	"github.com/sirupsen/logrus"
	"go.fd.io/govpp/adapter"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/simnode"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/healthcheck"
	"github.com/vppsvc/vppsvc/processor/k8swatch"
)

// nodeConfig is what `vppsvc run` takes from flags.
type nodeConfig struct {
	Node string
	// ConfigFile is the renderer configuration (--config); empty for defaults.
	ConfigFile string
	// FrontendInterfaces are the uplink and host interfaces.
	FrontendInterfaces []string
	// ConfigFlags override fields of the config file (--nodeport-addresses,
	// --service-cluster-ip-range); empty ones keep the file's.
	ConfigFlags configFlags
	// LocalPods reports this node's pods as local pods on the interfaces
	// simnode.PodInterfaceName names (see localPodInterface).
	LocalPods bool
	// HealthzTimeout is how long a change may wait for VPP before /healthz
	// fails.
	HealthzTimeout time.Duration
	// ResyncInterval makes the VPP layer compare VPP with the desired state
	// periodically; 0 disables it.
	ResyncInterval time.Duration
	// RetryMin and RetryMax bound retries of the processor and the VPP
	// layer; zero keeps their defaults (tests shorten them).
	RetryMin, RetryMax time.Duration
	// SyncPoll is how often the sync tracker re-checks while a change is
	// outstanding; zero means one second.
	SyncPoll time.Duration
	// InterfaceGrace is how long VPP items may wait for an interface before
	// /healthz fails; zero: never.
	InterfaceGrace time.Duration
	// APIWaitMin and APIWaitMax bound the delays between attempts to reach
	// the API server at the start; zero keeps apiWaitMin and apiWaitMax
	// (tests shorten them).
	APIWaitMin, APIWaitMax time.Duration
}

// nodeDeps are what the command builds from flags; tests pass fakes.
type nodeDeps struct {
	Client kubernetes.Interface
	// VPP is the govpp adapter: socketclient for a real VPP, or Fake.
	VPP adapter.VppAPI
	// Fake, when set, is the VPP behind VPP; runNode then plays the host:
	// it creates the simulated node's uplink0 and host0 with the node's
	// addresses, and a tap per local pod.
	Fake *fakevpp.VPP
	// HTTP serves /healthz and /livez, and /metrics unless Metrics is set.
	HTTP net.Listener
	// Metrics, when set, serves /metrics (kube-proxy's two addresses).
	Metrics net.Listener
	// ListenHealthCheck opens a healthCheckNodePort; nil listens on ":port".
	ListenHealthCheck func(port uint16) (net.Listener, error)
	// Log receives the agent's logs; nil means logrus.StandardLogger().
	Log *logrus.Logger
	// Stdin is what --config - reads; nil means os.Stdin.
	Stdin io.Reader
}

// shutdownTimeout bounds the graceful stop of the HTTP servers and the VPP layer.
const shutdownTimeout = 5 * time.Second

// runNode runs the node agent until ctx ends: client-go watcher → processor →
// renderers → VPP layer → govpp, with /metrics, /healthz and the
// health-check node ports. When ctx ends it stops watching, lets the VPP
// layer finish, closes the servers and disconnects from VPP, which keeps its
// configuration: the next start resyncs without changing anything.
func runNode(ctx context.Context, cfg nodeConfig, deps nodeDeps) error {
	defer deps.HTTP.Close() // runNode owns the listeners, also when it fails early
	if deps.Metrics != nil {
		defer deps.Metrics.Close()
	}
	base := deps.Log
	if base == nil {
		base = logrus.StandardLogger()
	}
	log := base.WithField("node", cfg.Node)

	// /healthz and /metrics answer from the start: while the agent waits for
	// the API server, /healthz says so (503 with the reason).
	proxyHealth := &healthcheck.ProxyHealth{Timeout: cfg.HealthzTimeout, InterfaceGrace: cfg.InterfaceGrace, Log: log.WithField("component", "health")}
	proxyHealth.Start()
	reg := newMetricsRegistry()
	srv := newAgentHTTP(deps.HTTP, deps.Metrics, reg, proxyHealth, log)
	fatal := make(chan error, 3)
	srv.serve(fatal)
	serving := true
	defer func() {
		if serving { // an early return: the agent never ran
			shutdown(srv, nil, log)
		}
	}()

	apiWait := apiWait{Min: cfg.APIWaitMin, Max: cfg.APIWaitMax, Waiting: proxyHealth.WaitingFor, Log: log.WithField("component", "k8swatch")}
	if apiWait.Min <= 0 {
		apiWait.Min, apiWait.Max = apiWaitMin, apiWaitMax
	}
	node, err := apiWait.getNode(ctx, deps.Client, cfg.Node)
	if err != nil {
		if ctx.Err() != nil {
			log.Info("stopped before the API server answered")
			return nil
		}
		return err
	}
	plan, err := simnode.Build([]*corev1.Node{node}, nil, cfg.Node)
	if err != nil {
		return err
	}
	stdin := deps.Stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	rcfg, err := loadConfig(cfg.ConfigFile, stdin, plan.NodeIPs, cfg.ConfigFlags)
	if err != nil {
		return err
	}
	if deps.Fake != nil {
		addFakeHost(deps.Fake, plan)
	}

	servers := &healthcheck.ServiceServers{Listen: deps.ListenHealthCheck, Log: log.WithField("component", "healthcheck"), ProxyHealthy: proxyHealth.ServiceProxyHealthy}
	poll := cfg.SyncPoll
	if poll <= 0 {
		poll = time.Second
	}
	tracker := newSyncTracker(proxyHealth, servers, poll, log.WithField("component", "sync"))
	a, err := agent.New(agent.Options{
		NodeName: cfg.Node, FrontendInterfaces: cfg.FrontendInterfaces, Config: rcfg, VPP: deps.VPP, Log: log,
		RetryMin: cfg.RetryMin, RetryMax: cfg.RetryMax, ResyncInterval: cfg.ResyncInterval, Observer: tracker,
	})
	if err != nil {
		return err
	}
	tracker.agent = a

	reg.MustRegister(&metricsCollector{proc: a.Processor, rec: a.Reconciler,
		renderers: slices.Sorted(maps.Keys(a.Renderers))}, tracker)

	// Every part runs until runCtx ends; one that stops by itself before
	// reports on fatal, which stops the others.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	defer serveInspector(runCtx, a, log)()
	trackerDone := make(chan struct{})
	go func() {
		defer close(trackerDone)
		tracker.run(runCtx)
	}()
	go func() {
		if err := a.Start(runCtx); err != nil {
			if runCtx.Err() == nil {
				fatal <- err
			}
			return
		}
		<-a.LayerDone()
		if err := a.LayerErr(); err != nil {
			fatal <- fmt.Errorf("VPP layer: %w", err)
		}
	}()
	// Configured service CIDRs win over the cluster's ServiceCIDR objects:
	// the processor would ignore them, so they are not watched.
	watchOpts := k8swatch.Options{NodeName: cfg.Node, Logger: log.WithField("component", "k8swatch"),
		NoServiceCIDRs: len(rcfg.ServiceClusterIPRange) > 0}
	if cfg.LocalPods {
		watchOpts.PodInterface = localPodInterface(deps.Fake, log)
	}
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		if err := k8swatch.New(tracker.watchClient(deps.Client, cfg.Node), a.Processor, watchOpts).Run(runCtx); err != nil && runCtx.Err() == nil {
			fatal <- fmt.Errorf("watching the Kubernetes API: %w", err)
		}
	}()
	log.WithFields(logrus.Fields{"healthz": deps.HTTP.Addr().String(), "metrics": srv.metricsAddr(), "node_ips": fmt.Sprint(plan.NodeIPs),
		"local_pods": cfg.LocalPods, "fake_vpp": deps.Fake != nil}).Info("agent running")

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("stopping; VPP keeps its configuration")
	case runErr = <-fatal:
		log.WithError(runErr).Error("stopping")
	}
	stop()
	serving = false
	shutdown(srv, []<-chan struct{}{watchDone, trackerDone, a.LayerDone()}, log)
	servers.Close()
	a.Close()
	return runErr
}

// shutdown stops the HTTP server and waits, bounded, for the parts of the
// agent to return, so that the driver is not closed under a VPP call and no
// health-check server is opened after the last one was closed.
func shutdown(srv interface{ Shutdown(context.Context) error }, parts []<-chan struct{}, log logrus.FieldLogger) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.WithError(err).Warning("HTTP server did not stop in time")
	}
	for _, done := range parts {
		select {
		case <-done:
		case <-ctx.Done():
			log.Warning("agent did not stop in time; disconnecting from VPP anyway")
			return
		}
	}
}

// addFakeHost creates the simulated node's uplink0 (with the node's
// addresses) and host0 in a fake VPP, as the host would before VPP's agent
// starts. Interfaces that already exist are kept, so that a restarted agent
// finds the VPP it left.
func addFakeHost(fake *fakevpp.VPP, plan *simnode.Plan) {
	for _, ifc := range plan.Interfaces {
		if _, ok := fake.InterfaceIndex(ifc.Name); !ok {
			fake.AddInterface(ifc.Name, ifc.Addrs...)
		}
	}
	for _, r := range plan.Routes {
		fake.AddRoute(r.Dst, r.Interface)
	}
}
