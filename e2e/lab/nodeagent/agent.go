package nodeagent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/agent/inspect"
	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
	"github.com/vppsvc/vppsvc/e2e/lab/vppnode"
	"github.com/vppsvc/vppsvc/processor/k8swatch"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
	"github.com/vppsvc/vppsvc/vppsock"
)

// Options configure one node's agent.
type Options struct {
	Node topology.Node
	// Nodes are every node of the lab (routes to their pod CIDRs).
	Nodes    []topology.Node
	Names    topology.Names
	StateDir string
	// Kubeconfig reaches the lab's API server.
	Kubeconfig string
	// Executable is re-run inside a pod's namespace as its container
	// (role netexec, see ContainerEnv).
	Executable string
	// KubeProxy is the kube-proxy binary a kernel node runs (RunKernel).
	KubeProxy string
	// IO is how VPP attaches to the node's veths: uplink, host link and
	// pods alike (vppnode.DefaultIO when zero).
	IO vppnode.IO
	// IPv4Renderer is the agent's IPv4 renderer (agent.Config.IPv4Renderer;
	// NAT44 when empty).
	IPv4Renderer string
	Log          logrus.FieldLogger
}

// ContainerEnv is set on a pod container's process; its value is the role
// the lab's binary takes (the netexec server).
const ContainerEnv = "VPPSVC_LAB_ROLE"

// Dir is a node's own directory under the lab's state directory.
func Dir(stateDir, node string) string { return filepath.Join(stateDir, node) }

// ReadyFile exists once the node agent has built its node and vppsvc has
// compared VPP with the desired state for the first time.
func ReadyFile(stateDir, node string) string { return filepath.Join(Dir(stateDir, node), "ready") }

// nodeAgent is one running agent.
type nodeAgent struct {
	opts  Options
	log   logrus.FieldLogger
	linux *host.Lab
	vpp   *vppnode.VPP
	k8s   kubernetes.Interface
	svc   *agent.Agent // nil on a kernel node
	// kernel is a kube-proxy node (RunKernel): pods on a Linux bridge,
	// no VPP.
	kernel bool

	mu sync.Mutex
	vc *vppnode.Client // replaced after a VPP restart
	// vppCalls is VPPCallLogFile, open for every client vc has been.
	vppCalls *os.File
}

// Run runs the node agent until ctx ends. VPP, the pods' namespaces and
// their servers outlive it: a restarted agent adopts them.
func Run(ctx context.Context, opts Options) error {
	log := opts.Log
	if log == nil {
		log = logrus.StandardLogger()
	}
	log = log.WithField("node", opts.Node.Name)
	linux, err := host.New(host.Options{Prefix: opts.Names.Prefix, StateDir: opts.StateDir, Log: log})
	if err != nil {
		return err
	}
	vpp, err := vppnode.New(vppnode.Options{Dir: filepath.Join(Dir(opts.StateDir, opts.Node.Name), "vpp"), Log: log})
	if err != nil {
		return err
	}
	k8s, _, err := apiClient(opts.Kubeconfig)
	if err != nil {
		return err
	}
	n := &nodeAgent{opts: opts, log: log, linux: linux, vpp: vpp, k8s: k8s}
	_ = os.Remove(ReadyFile(opts.StateDir, opts.Node.Name))
	if err := n.connectVPP(ctx); err != nil {
		return err
	}
	defer func() {
		n.client().Close()
		n.vppCalls.Close()
	}()
	if err := n.buildNode(ctx); err != nil {
		return err
	}

	cfg, err := agent.LoadConfig("", opts.Node.IPs())
	if err != nil {
		return err
	}
	// Source-NAT only a pod that reaches itself (docs/renderer-ipv6.md,
	// hairpinSNAT): the default source-NATs every IPv6 flow to a local
	// endpoint, so servers would see the node's address instead of the
	// client pod's, unlike kube-proxy, and cnat would spend (and, VPP 25.10
	// bug, never give back) a source port per flow.
	cfg.IPv6.HairpinSNAT = ipv6.HairpinSNATOnly
	// The cnat IPv4 renderer, when chosen, is configured as the IPv6 one.
	cfg.CNAT4.HairpinSNAT = ipv6.HairpinSNATOnly
	// The node's kernel sends from its host-link addresses (the node IPs
	// are VPP's): its own traffic, for loadBalancerSourceRanges that hold
	// the node.
	// Its pods are its own clients too (localClients): an
	// externalTrafficPolicy: Local service without an endpoint here still
	// serves them from every endpoint, as kube-proxy does.
	for _, c := range opts.Node.PodCIDRs() {
		if c.Addr().Is6() {
			cfg.IPv6.LocalClients = append(cfg.IPv6.LocalClients, c)
		} else {
			cfg.CNAT4.LocalClients = append(cfg.CNAT4.LocalClients, c)
		}
	}
	for _, ip := range opts.Node.HostIPs() {
		if ip.Is4() {
			cfg.NAT44.NodeSources = append(cfg.NAT44.NodeSources, netip.PrefixFrom(ip, 32))
			cfg.CNAT4.NodeSources = append(cfg.CNAT4.NodeSources, netip.PrefixFrom(ip, 32))
		} else {
			cfg.IPv6.NodeSources = append(cfg.IPv6.NodeSources, netip.PrefixFrom(ip, 128))
		}
	}
	if opts.IPv4Renderer != "" {
		cfg.SelectIPv4Renderer(opts.IPv4Renderer)
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("--ipv4-renderer: %w", err)
		}
	}
	calls, err := openCallLog(CallLogFile(opts.StateDir, opts.Node.Name))
	if err != nil {
		return err
	}
	defer calls.Close()
	n.svc, err = agent.New(agent.Options{
		NodeName:           opts.Node.Name,
		Observer:           calls,
		FrontendInterfaces: []string{topology.UplinkInterface, topology.HostInterface, topology.PodsInterface},
		Config:             cfg,
		VPP:                vppsock.New(vpp.APISocket()),
		Log:                log.WithField("component", "vppsvc"),
	})
	if err != nil {
		return fmt.Errorf("vppsvc: %w", err)
	}
	defer n.svc.Close()
	pods := newPodController(n)
	pods.adoptExisting(ctx)
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- k8swatch.New(k8s, n.svc.Processor, k8swatch.Options{NodeName: opts.Node.Name, Logger: log}).Run(ctx)
	}()
	if err := n.svc.Start(ctx); err != nil {
		return fmt.Errorf("vppsvc: %w", err)
	}
	go pods.run(ctx)
	if err := n.serveInspector(ctx); err != nil {
		return err
	}
	go n.watchVPP(ctx, pods)
	go n.writeStats(ctx)
	go n.serveHealthChecks(ctx)
	if err := os.WriteFile(ReadyFile(opts.StateDir, opts.Node.Name), []byte(time.Now().Format(time.RFC3339Nano)), 0o644); err != nil {
		return err
	}
	log.Info("node agent ready")
	select {
	case <-ctx.Done():
		return nil
	case err := <-watchErr:
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("k8swatch: %w", err)
		}
		return nil
	case <-n.svc.LayerDone():
		if err := n.svc.LayerErr(); err != nil {
			return err
		}
		return nil
	}
}

func (n *nodeAgent) client() *vppnode.Client {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.vc
}

// connectVPP adopts the node's running VPP or starts it, and connects.
func (n *nodeAgent) connectVPP(ctx context.Context) error {
	if pid, ok := n.vpp.Running(); ok {
		n.log.WithField("pid", pid).Info("adopting the running VPP")
	} else if err := n.vpp.Start(ctx); err != nil {
		return fmt.Errorf("starting VPP: %w", err)
	}
	vc, err := vppnode.Connect(ctx, n.vpp.APISocket())
	if err != nil {
		return err
	}
	if n.vppCalls == nil {
		if n.vppCalls, err = os.OpenFile(VPPCallLogFile(n.opts.StateDir, n.opts.Node.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			vc.Close()
			return err
		}
	}
	vc.LogCalls(n.vppCalls)
	n.mu.Lock()
	old := n.vc
	n.vc = vc
	n.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// podsMAC is VPP's MAC on the pods' BVI, every pod's gateway: stable, so
// that the pods' static gateway neighbour stays right across VPP restarts.
var podsMAC = vppnode.HostMAC(topology.PodsInterface)

// buildNode creates (or adopts) uplink0 and host0 with their addresses, the
// pods' bridge and its BVI pods0, and the routes to the other nodes' pods.
func (n *nodeAgent) buildNode(ctx context.Context) error {
	vc, i, names := n.client(), n.opts.Node.Index, n.opts.Names
	if _, err := vc.EnsureAfPacket(ctx, vppnode.AfPacket{HostIf: names.Uplink(i), Name: topology.UplinkInterface, IO: n.opts.IO}); err != nil {
		return fmt.Errorf("uplink: %w", err)
	}
	for _, ip := range n.opts.Node.IPs() {
		p := topology.UplinkV4
		if ip.Is6() {
			p = topology.UplinkV6
		}
		if err := vc.AddAddress(ctx, topology.UplinkInterface, netipPrefix(ip, p.Bits())); err != nil {
			return err
		}
	}
	if err := vc.EnableIP6(ctx, topology.UplinkInterface); err != nil {
		return err
	}
	if _, err := vc.EnsureAfPacket(ctx, vppnode.AfPacket{HostIf: names.HostLink(i), Name: topology.HostInterface, IO: n.opts.IO}); err != nil {
		return fmt.Errorf("host link: %w", err)
	}
	for _, p := range n.opts.Node.VPPHostLinkPrefixes() {
		if err := vc.AddAddress(ctx, topology.HostInterface, p); err != nil {
			return err
		}
	}
	if err := vc.EnableIP6(ctx, topology.HostInterface); err != nil {
		return err
	}
	// The pods' one L3 interface, made before vppsvc starts: vppsvc gives
	// it NAT44-ED's roles in its first sync, interfaces before mappings,
	// and a new pod is then an L2 member of its bridge, which costs VPP no
	// walk over the mappings (docs/renderer-nat44.md, "Pods behind one
	// bridge").
	if _, err := vc.EnsureBridge(ctx, topology.PodBridge, topology.PodsInterface, podsMAC); err != nil {
		return fmt.Errorf("pods' bridge: %w", err)
	}
	if err := vc.SetUnnumbered(ctx, topology.PodsInterface, topology.HostInterface); err != nil {
		return err
	}
	if err := vc.EnableIP6(ctx, topology.PodsInterface); err != nil {
		return err
	}
	// Traffic to the node's IPs that VPP punts (no VPP feature takes it,
	// such as a health-check port) goes to the node's kernel, as a VPP CNI
	// hands the node's own traffic to the host.
	for _, hostIP := range n.opts.Node.HostIPs() {
		if err := vc.AddPuntRedirect(ctx, topology.UplinkInterface, topology.HostInterface, hostIP); err != nil {
			return err
		}
	}
	for _, other := range n.opts.Nodes {
		if other.Index == i {
			continue
		}
		ips, hostLinks := other.IPs(), other.HostLinks()
		for f, cidr := range other.PodCIDRs() {
			// The other node's pods, and its own kernel's host link (see
			// topology.Node.HostLinks).
			for _, dst := range []netip.Prefix{cidr, hostLinks[f]} {
				if err := vc.AddRoute(ctx, vppnode.Route{Dst: dst, Via: ips[f], Dev: topology.UplinkInterface}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// watchVPP restarts a VPP that died and rebuilds the node in it: uplink,
// host link and every pod's interface. vppsvc's own connection notices the
// new VPP and re-applies the services once the interfaces exist.
func (n *nodeAgent) watchVPP(ctx context.Context, pods *podController) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, ok := n.vpp.Running(); ok {
			continue
		}
		start := time.Now()
		n.log.Warn("VPP is gone; restarting it and re-creating the node's interfaces")
		err := n.connectVPP(ctx)
		if err == nil {
			err = n.buildNode(ctx)
		}
		if err == nil {
			err = pods.rewireAll(ctx)
		}
		if err != nil {
			if ctx.Err() == nil {
				n.log.WithError(err).Error("rebuilding the node after a VPP restart failed; retrying")
			}
			continue
		}
		n.log.WithField("took", time.Since(start).Round(time.Millisecond)).Info("node rebuilt in the restarted VPP")
		_ = os.WriteFile(filepath.Join(Dir(n.opts.StateDir, n.opts.Node.Name), "vpp-rebuilt"), []byte(time.Now().Format(time.RFC3339Nano)), 0o644)
	}
}

// InspectSocket is where node's agent serves vppsvc's state inspector, the
// API `vppsvc status --inspect-socket` reads.
func InspectSocket(stateDir, node string) string {
	return filepath.Join(Dir(stateDir, node), "inspect.sock")
}

// serveInspector serves vppsvc's inspector on the node's socket until ctx
// ends, as `vppsvc run --inspect-socket` does.
func (n *nodeAgent) serveInspector(ctx context.Context) error {
	path := InspectSocket(n.opts.StateDir, n.opts.Node.Name)
	_ = os.Remove(path) // a killed agent's socket
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("inspector: %w", err)
	}
	srv := &http.Server{Handler: inspect.Handler(n.svc.Inspect, n.log), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return nil
}

// apiClient is a client of the lab's API server, from its kubeconfig, with
// room for a node agent's bursts, and the server's address.
func apiClient(kubeconfig string) (*kubernetes.Clientset, string, error) {
	restCfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	restCfg.QPS, restCfg.Burst = 100, 200
	k8s, err := kubernetes.NewForConfig(restCfg)
	return k8s, restCfg.Host, err
}
