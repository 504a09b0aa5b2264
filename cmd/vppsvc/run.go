package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"go.fd.io/govpp/adapter"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/simnode"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/healthcheck"
	"github.com/vppsvc/vppsvc/vppsock"
)

func init() { extraCommands = append(extraCommands, newRunCommand) }

// runFlags are the flags of `vppsvc run`.
type runFlags struct {
	node, kubeconfig, vppSocket, config string
	metricsAddr, healthzAddr            string
	fakeVPP, localPods                  bool
	frontends                           []string
	configFlags
	healthzTimeout, resyncInterval time.Duration
	interfaceGrace                 time.Duration
}

// defaultVPPSocket is where VPP's api-socket lives in a default installation.
const defaultVPPSocket = "/run/vpp/api.sock"

func newRunCommand(log *logrus.Logger) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run --node NODE [--kubeconfig PATH] (--vpp-socket PATH | --fake-vpp)",
		Short: "Run the node agent: program VPP from the Kubernetes API until stopped",
		Long: `run watches Services, EndpointSlices and Nodes (and, with --local-pods, the
pods of this node) and keeps VPP configured for them. As kube-proxy, it serves
/metrics (Prometheus, kube-proxy's metric names plus vppsvc_*) on
--metrics-bind-address, /healthz and /livez on --healthz-bind-address, and a
health-check server on the healthCheckNodePort of every LoadBalancer service
with externalTrafficPolicy Local.

Without --kubeconfig it uses the in-cluster configuration (the pod's service
account). It logs at info level unless --log-level says otherwise: every wait
for VPP's socket, every connection and loss of it, every change of /healthz's
verdict. SIGTERM or SIGINT stops it; VPP keeps its configuration, and the
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
	fl.StringVar(&f.metricsAddr, "metrics-bind-address", "127.0.0.1:10249", "address of the /metrics server (kube-proxy's flag and default); the same as --healthz-bind-address serves everything on one port")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "127.0.0.1:10249", "")
	_ = fl.MarkDeprecated("metrics-addr", "use --metrics-bind-address (and --healthz-bind-address for /healthz)")
	fl.StringVar(&f.healthzAddr, "healthz-bind-address", "0.0.0.0:10256", "address of the /healthz and /livez server (kube-proxy's flag and default)")
	fl.DurationVar(&f.healthzTimeout, "healthz-timeout", 60*time.Second, "/healthz and /livez fail while a change has waited longer than this for VPP")
	fl.DurationVar(&f.interfaceGrace, "interface-grace-period", 30*time.Second, "/healthz fails once VPP items have waited longer than this for their interfaces (0: never)")
	f.configFlags.register(fl)
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
		return usagef("--node is required (or set NODE_NAME)")
	}
	if f.fakeVPP && cmd.Flags().Changed("vpp-socket") {
		return usagef("--vpp-socket and --fake-vpp are exclusive")
	}
	if err := f.configFlags.validate(); err != nil {
		return err
	}
	var notSocket *notSocketError
	if err := checkSocket(f.vppSocket); !f.fakeVPP && errors.As(err, &notSocket) {
		// A missing socket is waited for (VPP may start later); a file
		// that is no socket never becomes one.
		return usageError{err}
	}
	if !cmd.Flags().Changed("log-level") && log.GetLevel() < logrus.InfoLevel {
		// A daemon says what it waits for: the agent logs at info level
		// unless told otherwise (render and trace keep warning).
		log.SetLevel(logrus.InfoLevel)
	}
	client, err := kubeClient(f.kubeconfig)
	if err != nil {
		return err
	}
	healthz, metrics, err := listenHTTP(f.healthzAddr, f.metricsAddr)
	if err != nil {
		return err
	}
	deps := nodeDeps{Client: client, HTTP: healthz, Metrics: metrics, Log: log}
	if f.fakeVPP {
		deps.Fake = fakevpp.New()
		deps.VPP = deps.Fake
	} else {
		deps.VPP = newSocketWaitLogger(vppsock.New(f.vppSocket), f.vppSocket, log.WithField("node", f.node))
	}
	sigCtx, cancel := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	ctx, fail := context.WithCancelCause(sigCtx)
	defer fail(nil)
	if w, ok := deps.VPP.(*socketWaitLogger); ok {
		w.fatal = fail
	}
	err = runNode(ctx, nodeConfig{
		Node: f.node, ConfigFile: f.config, FrontendInterfaces: f.frontends, LocalPods: f.localPods,
		ConfigFlags:    f.configFlags,
		HealthzTimeout: f.healthzTimeout, ResyncInterval: f.resyncInterval, InterfaceGrace: f.interfaceGrace,
	}, deps)
	if cause := context.Cause(ctx); errors.As(cause, &notSocket) {
		return cause
	}
	return err
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

// listenHTTP opens the healthz and metrics listeners; metrics is nil when
// both addresses are the same, and then the healthz listener serves both.
func listenHTTP(healthzAddr, metricsAddr string) (healthz, metrics net.Listener, err error) {
	healthz, err = net.Listen("tcp", healthzAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("--healthz-bind-address: %w", err)
	}
	if metricsAddr == healthzAddr {
		return healthz, nil, nil
	}
	metrics, err = net.Listen("tcp", metricsAddr)
	if err != nil {
		healthz.Close()
		return nil, nil, fmt.Errorf("--metrics-bind-address: %w", err)
	}
	return healthz, metrics, nil
}

// agentHTTP serves /healthz and /livez on one listener and /metrics on
// another, or everything on one when there is no metrics listener.
type agentHTTP struct {
	servers   []*http.Server
	listeners []net.Listener
}

func newAgentHTTP(healthz, metrics net.Listener, reg *prometheus.Registry, h *healthcheck.ProxyHealth, log logrus.FieldLogger) *agentHTTP {
	hmux := http.NewServeMux()
	hmux.Handle("/healthz", h)
	hmux.Handle("/livez", h.Livez())
	mmux := hmux
	s := &agentHTTP{listeners: []net.Listener{healthz}}
	if metrics != nil {
		mmux = http.NewServeMux()
		s.listeners = append(s.listeners, metrics)
	}
	mmux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: log.WithField("component", "metrics")}))
	s.servers = append(s.servers, &http.Server{Handler: hmux, ReadHeaderTimeout: 5 * time.Second})
	if metrics != nil {
		s.servers = append(s.servers, &http.Server{Handler: mmux, ReadHeaderTimeout: 5 * time.Second})
	}
	return s
}

// serve starts the servers; one that stops by itself reports on fatal
// (without blocking: the first fatal error stops the agent).
func (s *agentHTTP) serve(fatal chan<- error) {
	for i, srv := range s.servers {
		ln := s.listeners[i]
		go func() {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				select {
				case fatal <- fmt.Errorf("serving %s: %w", ln.Addr(), err):
				default:
				}
			}
		}()
	}
}

// metricsAddr is where /metrics is served.
func (s *agentHTTP) metricsAddr() string { return s.listeners[len(s.listeners)-1].Addr().String() }

// Shutdown stops every server gracefully.
func (s *agentHTTP) Shutdown(ctx context.Context) error {
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// socketWaitLogger wraps the VPP adapter so that waiting for VPP is never
// silent: govpp's connect loop waits up to 3 s for the socket file
// (WaitReady), tries Connect, sleeps a second and starts again, logging
// nothing. This logs, at info level, the first attempt, then every failed
// one with the socket and how long the agent has waited, throttled (after
// doubling intervals, then every 30 s), and the end of the wait. The driver
// logs the connection itself and every loss of it.
type socketWaitLogger struct {
	vppsock.Wrapper // passes the windows and routes on
	socket          string
	log             logrus.FieldLogger
	now             func() time.Time
	// fatal, when set, is told that the socket path became something no
	// wait turns into a socket (a regular file, a directory): the agent
	// stops instead of retrying it forever.
	fatal func(error)

	mu       sync.Mutex
	tried    bool
	since    time.Time // start of the current wait; zero while connected
	next     time.Time // when a failure is logged again
	attempts int
}

func newSocketWaitLogger(a adapter.VppAPI, socket string, log logrus.FieldLogger) *socketWaitLogger {
	return &socketWaitLogger{Wrapper: vppsock.Wrapper{VppAPI: a}, socket: socket, log: log.WithField("vpp_socket", socket), now: time.Now}
}

// maxWaitLogInterval is the longest silence while waiting for VPP.
const maxWaitLogInterval = 30 * time.Second

// begin marks the start of an attempt. Called with mu held.
func (a *socketWaitLogger) begin(now time.Time) {
	if !a.tried {
		a.tried = true
		a.log.Info("connecting to VPP's API socket")
	}
	if a.since.IsZero() {
		a.since, a.next = now, now
	}
}

// WaitReady implements adapter.VppAPI.
func (a *socketWaitLogger) WaitReady() error {
	a.mu.Lock()
	a.begin(a.now())
	a.mu.Unlock()
	return a.VppAPI.WaitReady()
}

// Connect implements adapter.VppAPI.
func (a *socketWaitLogger) Connect() error {
	err := a.VppAPI.Connect()
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.begin(now)
	if err == nil {
		if a.attempts > 0 {
			a.log.WithFields(logrus.Fields{"waited": now.Sub(a.since).Round(time.Millisecond).String(), "attempts": a.attempts + 1}).
				Info("VPP's API socket answers")
		}
		a.since, a.attempts = time.Time{}, 0
		return nil
	}
	a.attempts++
	var notSocket *notSocketError
	logErr := err
	switch pathErr := checkSocket(a.socket); {
	case errors.As(pathErr, &notSocket) && a.fatal != nil:
		a.log.WithError(pathErr).Error("VPP's API socket path is not a socket: stopping")
		a.fatal(pathErr)
		return pathErr
	case errors.Is(pathErr, errNoSocket):
		logErr = fmt.Errorf("%s does not exist (yet)", a.socket)
	}
	if !now.Before(a.next) {
		waited := now.Sub(a.since)
		a.log.WithFields(logrus.Fields{"waited": waited.Round(time.Second).String(), "attempts": a.attempts}).WithError(logErr).
			Info("waiting for VPP's API socket")
		a.next = now.Add(min(max(waited, time.Second), maxWaitLogInterval))
	}
	return err
}
