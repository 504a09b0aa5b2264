// Package lab is a Kubernetes cluster in a box on real VPPs: Kubernetes' own
// control plane in process, one VPP per node driven by the lab's reference
// CNI node agent (package nodeagent, which embeds vppsvc), pods as Linux
// network namespaces running agnhost's netexec protocol, and an external
// client, all joined by one Linux bridge (docs/lab.md). This package puts
// them together and holds the one-lab-at-a-time lock; each part has a
// package of its own: controlplane, nodeagent (with vppnode and host),
// netexec, kubeproxy for the kernel nodes, cpumeter for the figures.
//
// It runs as root and touches only what it created: every name starts with
// its prefix, a name taken by anything else is refused before anything is
// changed, and Close (or the next Up, after a killed run) removes all of it.
package lab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/e2e/lab/controlplane"
	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/kubeproxy"
	"github.com/vppsvc/vppsvc/e2e/lab/nodeagent"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
	"github.com/vppsvc/vppsvc/e2e/lab/vppnode"
)

// Options configure a lab.
type Options struct {
	// Nodes is how many VPP nodes (2 by default); Kinds, when given, sets
	// both the count and each node's kind.
	Nodes int
	// Kinds is each node's kind, in order (topology.KindVPP or
	// topology.KindKernel); empty, Nodes VPP nodes.
	Kinds []topology.Kind
	// KubeProxy is the kernel nodes' kube-proxy binary (kubeproxy.Binary
	// by default); unused without a kernel node.
	KubeProxy string
	// Prefix starts every Linux name the lab creates (topology.DefaultPrefix).
	Prefix string
	// StateDir holds the lab's records, the VPPs' directories, the logs and
	// the kubeconfig (host.DefaultStateDir).
	StateDir string
	// VPPBinary is VPP 25.10's bin/vpp (VPPSVC_LAB_VPP by default).
	VPPBinary string
	// IO is how the VPP nodes attach to their veths (vppnode.DefaultIO,
	// or VPPSVC_LAB_IO's setting, by default).
	IO vppnode.IO
	// IPv4Renderer is the IPv4 renderer of the VPP nodes' agents
	// (agent.IPv4RendererNAT44 or agent.IPv4RendererCNAT;
	// VPPSVC_LAB_IPV4_RENDERER's setting, or NAT44, by default).
	IPv4Renderer string
	// Executable is this program, re-run as node agents and pod containers
	// (os.Executable() by default); it must call RunChild first thing.
	Executable string
	// Verbose sends the API server's and etcd's logs to stderr.
	Verbose bool
	Log     logrus.FieldLogger
}

// EnvIPv4Renderer names the VPP nodes' IPv4 renderer (Options.IPv4Renderer)
// when the options do not: "nat44" (the default) or "cnat".
const EnvIPv4Renderer = "VPPSVC_LAB_IPV4_RENDERER"

// Lab is a running lab.
type Lab struct {
	Opts   Options
	Names  topology.Names
	Nodes  []topology.Node
	CP     *controlplane.ControlPlane
	Linux  *host.Lab
	agents map[string]*exec.Cmd
	log    logrus.FieldLogger
}

// Kubeconfig is where Up writes the lab's kubeconfig.
func (l *Lab) Kubeconfig() string { return filepath.Join(l.Opts.StateDir, "kubeconfig") }

func (o *Options) defaults() error {
	if len(o.Kinds) > 0 {
		if o.Nodes != 0 && o.Nodes != len(o.Kinds) {
			return fmt.Errorf("lab: %d nodes but %d kinds (%s)", o.Nodes, len(o.Kinds), topology.FormatKinds(o.Kinds))
		}
		o.Nodes = len(o.Kinds)
	}
	if o.Nodes == 0 {
		o.Nodes = 2
	}
	for len(o.Kinds) < o.Nodes {
		o.Kinds = append(o.Kinds, topology.KindVPP)
	}
	if o.Nodes < 1 || o.Nodes > 9 {
		return fmt.Errorf("lab: %d nodes: 1 to 9 fit the address plan", o.Nodes)
	}
	if o.Prefix == "" {
		o.Prefix = topology.DefaultPrefix
	}
	if o.StateDir == "" {
		o.StateDir = host.DefaultStateDir
	}
	if o.VPPBinary == "" {
		o.VPPBinary = os.Getenv(vppnode.EnvBinary)
	}
	if o.IO.Name == "" {
		io, err := vppnode.ParseIO(os.Getenv(vppnode.EnvIO))
		if err != nil {
			return fmt.Errorf("lab: %s: %w", vppnode.EnvIO, err)
		}
		o.IO = io
	}
	if o.IPv4Renderer == "" {
		o.IPv4Renderer = os.Getenv(EnvIPv4Renderer)
	}
	switch o.IPv4Renderer {
	case "":
		o.IPv4Renderer = agent.IPv4RendererNAT44
	case agent.IPv4RendererNAT44, agent.IPv4RendererCNAT:
	default:
		return fmt.Errorf("lab: IPv4 renderer %q (%s) is neither %q nor %q", o.IPv4Renderer, EnvIPv4Renderer, agent.IPv4RendererNAT44, agent.IPv4RendererCNAT)
	}
	if o.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		o.Executable = exe
	}
	if o.Log == nil {
		o.Log = logrus.StandardLogger()
	}
	return nil
}

// Preflight refuses, without changing anything on the machine, a lab that
// cannot run here: not root, no VPP 25.10 binary, or a name it needs taken
// by something it did not create.
func Preflight(opts Options) error {
	if err := opts.defaults(); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("lab: must run as root (it creates network namespaces, veths and a bridge)")
	}
	if pid := runningLab(opts.StateDir); pid != 0 {
		return fmt.Errorf("lab: a lab is running already (pid %d, %s)", pid, lockFile(opts.StateDir))
	}
	if opts.hasKind(topology.KindVPP) {
		if opts.VPPBinary == "" {
			return fmt.Errorf("lab: set %s to a VPP 25.10 binary (a build directory's bin/vpp; docs/lab.md)", vppnode.EnvBinary)
		}
		if err := vppnode.CheckBinary(opts.VPPBinary); err != nil {
			return fmt.Errorf("lab: %w", err)
		}
	}
	tools := map[string]string{"ip": "iproute2"}
	if opts.hasKind(topology.KindKernel) {
		tools["nft"] = "nftables, which kube-proxy's nftables mode runs"
	}
	for tool, pkg := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("lab: %s not found (%s)", tool, pkg)
		}
	}
	linux, err := host.New(host.Options{Prefix: opts.Prefix, StateDir: opts.StateDir, Log: opts.Log})
	if err != nil {
		return err
	}
	links, nss := machineNames(topology.Names{Prefix: opts.Prefix}, opts.Nodes)
	return linux.CheckFree(links, nss)
}

// machineNames are the links and namespaces the lab's machine has before
// any pod: the bridge, the external client, each node's uplink and host.
func machineNames(n topology.Names, nodes int) (links, namespaces []string) {
	links = []string{n.Bridge(), n.ExternalLink()}
	namespaces = []string{n.ExternalNS()}
	for i := 1; i <= nodes; i++ {
		links = append(links, n.Uplink(i), n.UplinkPort(i), n.HostLink(i))
		namespaces = append(namespaces, n.HostNS(i))
	}
	return links, namespaces
}

// Up checks the machine (Preflight), removes what a killed earlier lab
// left, builds the machine (bridge, external client, each node's uplink and
// host), starts the control plane and one node agent per node, and returns
// once every node agent is ready.
func Up(ctx context.Context, opts Options) (*Lab, error) {
	if err := Preflight(opts); err != nil {
		return nil, err
	}
	_ = opts.defaults()
	QuietKubernetesLogs(opts.Verbose)
	if err := os.Setenv(vppnode.EnvBinary, opts.VPPBinary); err != nil {
		return nil, err
	}
	linux, err := host.New(host.Options{Prefix: opts.Prefix, StateDir: opts.StateDir, Log: opts.Log})
	if err != nil {
		return nil, err
	}
	l := &Lab{Opts: opts, Names: topology.Names{Prefix: opts.Prefix}, Linux: linux, agents: map[string]*exec.Cmd{}, log: opts.Log}
	for i := 1; i <= opts.Nodes; i++ {
		l.Nodes = append(l.Nodes, topology.Node{Name: topology.NodeName(i), Index: i, Kind: opts.Kinds[i-1]})
	}
	if opts.hasKind(topology.KindKernel) && l.Opts.KubeProxy == "" {
		if l.Opts.KubeProxy, err = kubeproxy.Binary(ctx, opts.Log); err != nil {
			return nil, fmt.Errorf("lab: %w", err)
		}
	}
	killStaleVPPs(opts.StateDir, l.Nodes, opts.Log)
	removeNodeDirs(opts.StateDir)
	if removed, err := linux.Cleanup(); err != nil {
		return nil, fmt.Errorf("lab: removing what an earlier run left: %w", err)
	} else if len(removed) > 0 {
		opts.Log.WithField("removed", strings.Join(removed, ", ")).Info("removed what an earlier lab left")
	}
	if err := os.MkdirAll(opts.StateDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(lockFile(opts.StateDir), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	if err := l.buildMachine(); err != nil {
		l.Close()
		return nil, err
	}
	if l.CP, err = controlplane.Start(l.Nodes, opts.Verbose); err != nil {
		l.Close()
		return nil, err
	}
	if err := l.CP.WriteKubeconfig(l.Kubeconfig()); err != nil {
		l.Close()
		return nil, err
	}
	for _, n := range l.Nodes {
		if err := l.StartAgent(n.Name); err != nil {
			l.Close()
			return nil, err
		}
	}
	for _, n := range l.Nodes {
		if err := l.WaitAgentReady(ctx, n.Name, 60*time.Second); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// buildMachine creates what exists before any CNI runs: the bridge, the
// external client, and per node the uplink veth (VPP's end and the bridge
// port) and the node's own kernel (a namespace linked to VPP's host0).
func (l *Lab) buildMachine() error {
	n, lx := l.Names, l.Linux
	if err := lx.AddBridge(n.Bridge()); err != nil {
		return err
	}
	if err := lx.AddNamespace(n.ExternalNS()); err != nil {
		return err
	}
	if err := lx.AddVeth(n.ExternalLink(), n.ExternalNS(), "eth0"); err != nil {
		return err
	}
	if err := lx.SetMaster(n.ExternalLink(), n.Bridge()); err != nil {
		return err
	}
	for _, a := range []netip.Prefix{
		netip.PrefixFrom(topology.ExternalClientV4, topology.UplinkV4.Bits()),
		netip.PrefixFrom(topology.RefusedClientV4, topology.UplinkV4.Bits()),
		netip.PrefixFrom(topology.ExternalClientV6, topology.UplinkV6.Bits()),
		netip.PrefixFrom(topology.RefusedClientV6, topology.UplinkV6.Bits()),
	} {
		if err := lx.AddAddress(n.ExternalNS(), "eth0", a); err != nil {
			return err
		}
	}
	// The external client reaches LoadBalancer IPs and externalIPs through
	// the first node, as a router fed by MetalLB's announcements would.
	first := l.Nodes[0].IPs()
	for _, r := range []host.Route{
		{Dst: topology.LoadBalancerPoolV4, Via: first[0], Dev: "eth0"},
		{Dst: topology.ExternalIPsV4, Via: first[0], Dev: "eth0"},
		{Dst: topology.LoadBalancerPoolV6, Via: first[1], Dev: "eth0"},
		{Dst: topology.ExternalIPsV6, Via: first[1], Dev: "eth0"},
	} {
		if err := lx.AddRoute(n.ExternalNS(), r); err != nil {
			return err
		}
	}
	for _, node := range l.Nodes {
		if node.IsKernel() {
			if err := l.buildKernelNode(node); err != nil {
				return err
			}
			continue
		}
		i := node.Index
		hostIPs, vppHost := node.HostIPs(), node.VPPHostLinkPrefixes()
		if err := lx.AddVeth(n.Uplink(i), "", n.UplinkPort(i)); err != nil {
			return err
		}
		if err := lx.SetMaster(n.UplinkPort(i), n.Bridge()); err != nil {
			return err
		}
		hns := n.HostNS(i)
		if err := lx.AddNamespace(hns); err != nil {
			return err
		}
		if err := lx.AddVeth(n.HostLink(i), hns, "eth0"); err != nil {
			return err
		}
		for f, ip := range hostIPs {
			if err := lx.AddAddress(hns, "eth0", netip.PrefixFrom(ip, vppHost[f].Bits())); err != nil {
				return err
			}
		}
		routes := []host.Route{
			{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: vppHost[0].Addr(), Dev: "eth0"},
			{Dst: netip.MustParsePrefix("::/0"), Via: vppHost[1].Addr(), Dev: "eth0"},
		}
		// The node's IPs live on VPP's uplink; what VPP punts to them (a
		// health-check port, say) it redirects here (the node agent's punt
		// redirect), so the kernel takes them as its own, without choosing
		// them as a source.
		for _, ip := range node.IPs() {
			routes = append(routes, host.Route{Dst: netip.PrefixFrom(ip, ip.BitLen()), Dev: "eth0", Local: true})
		}
		for _, r := range routes {
			if err := lx.AddRoute(hns, r); err != nil {
				return err
			}
		}
		if err := nodePortsThroughVPP(lx, hns, node); err != nil {
			return err
		}
	}
	return nil
}

// nodePortsThroughVPP makes a VPP node's kernel reach its own NodePorts as
// kube-proxy's node does: what it sends to one of its node IPs on a node
// port goes to VPP over the host link (which translates it as any
// client's), not to its own local route; VPP's answer, from the node IP,
// is accepted on the host link although that address is the kernel's own
// (accept_local). The node agent exempts the health-check node ports
// (nodeagent/healthcheck.go), which the kernel serves itself.
func nodePortsThroughVPP(lx *host.Lab, hns string, node topology.Node) error {
	if err := lx.MoveLocalRule(hns, topology.LocalRulePref); err != nil {
		return err
	}
	for _, gw := range node.VPPHostLinkPrefixes() {
		dflt := netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		if gw.Addr().Is6() {
			dflt = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		}
		if err := lx.AddRoute(hns, host.Route{Dst: dflt, Via: gw.Addr(), Dev: "eth0", Table: topology.NodePortTable}); err != nil {
			return err
		}
	}
	for _, ip := range node.IPs() {
		for _, proto := range []string{"tcp", "udp"} {
			r := host.Rule{Pref: topology.NodePortRulePref, To: ip, Proto: proto, Ports: topology.NodePortRange, Table: strconv.Itoa(topology.NodePortTable)}
			if err := lx.AddRule(hns, r); err != nil {
				return err
			}
		}
	}
	return lx.Sysctl(hns, "net.ipv4.conf.eth0.accept_local", "1")
}

// childArgs are the arguments a re-run of the lab's program gets to act as
// node agent for node.
func (l *Lab) childArgs(node string) []string {
	return []string{"--node", node, "--nodes", strconv.Itoa(l.Opts.Nodes), "--kinds", topology.FormatKinds(l.Opts.Kinds),
		"--prefix", l.Opts.Prefix, "--state-dir", l.Opts.StateDir, "--kubeconfig", l.Kubeconfig(), "--kube-proxy", l.Opts.KubeProxy, "--io", l.Opts.IO.Name,
		"--ipv4-renderer", l.Opts.IPv4Renderer}
}

// StartAgent starts node's agent as a process of its own (it runs, or
// adopts, the node's VPP). Its log is agent.log in the node's directory.
func (l *Lab) StartAgent(node string) error {
	dir := nodeagent.Dir(l.Opts.StateDir, node)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "agent.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	_ = os.Remove(nodeagent.ReadyFile(l.Opts.StateDir, node))
	cmd := exec.Command(l.Opts.Executable, l.childArgs(node)...)
	cmd.Env = append(os.Environ(), RoleEnv+"="+roleNode)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the node agent of %s: %w", node, err)
	}
	l.agents[node] = cmd
	go func() { _ = cmd.Wait() }()
	return nil
}

// WaitAgentReady waits until node's agent has built its node and vppsvc
// has synced.
func (l *Lab) WaitAgentReady(ctx context.Context, node string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(nodeagent.ReadyFile(l.Opts.StateDir, node)); err == nil {
			return nil
		}
		if cmd := l.agents[node]; cmd != nil && cmd.ProcessState != nil {
			return fmt.Errorf("the node agent of %s exited (%s); see %s", node, cmd.ProcessState, filepath.Join(nodeagent.Dir(l.Opts.StateDir, node), "agent.log"))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the node agent of %s not ready after %s; see %s", node, timeout, filepath.Join(nodeagent.Dir(l.Opts.StateDir, node), "agent.log"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// KillAgent SIGKILLs node's agent, as a crash would: VPP, the pods and
// their containers keep running.
func (l *Lab) KillAgent(node string) error {
	cmd := l.agents[node]
	if cmd == nil || cmd.Process == nil {
		return fmt.Errorf("no agent of %s", node)
	}
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	for range 100 {
		if syscall.Kill(cmd.Process.Pid, 0) != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	delete(l.agents, node)
	return nil
}

// KillKubeProxy SIGKILLs a kernel node's kube-proxy, as a crash would
// (its nft tables and the kernel's conntrack entries stay), and waits
// until it is gone. Its agent starts a new one when it starts again.
func (l *Lab) KillKubeProxy(node string) error {
	pidFile := nodeagent.KubeProxyPIDFile(l.Opts.StateDir, node)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return fmt.Errorf("kube-proxy of %s: %w", node, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return fmt.Errorf("kube-proxy of %s: bad pid file %s", node, pidFile)
	}
	// Only the process running the lab's kube-proxy binary is signalled.
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || filepath.Base(exe) != filepath.Base(l.Opts.KubeProxy) {
		return fmt.Errorf("kube-proxy of %s: pid %d is not running %s (%v)", node, pid, l.Opts.KubeProxy, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	for range 250 {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid)); err != nil {
			return nil
		}
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe == "" {
			return nil // a zombie: gone for the network
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("kube-proxy of %s (pid %d) still running 5s after SIGKILL", node, pid)
}

// Node is the lab's node named name (the zero Node if there is none).
func (l *Lab) Node(name string) topology.Node {
	for _, n := range l.Nodes {
		if n.Name == name {
			return n
		}
	}
	return topology.Node{}
}

// VPP is node's VPP process, for tests that kill it.
func (l *Lab) VPP(node string) (*vppnode.VPP, error) {
	return vppnode.New(vppnode.Options{Dir: filepath.Join(nodeagent.Dir(l.Opts.StateDir, node), "vpp"), Binary: l.Opts.VPPBinary})
}

// Close stops the node agents, the VPPs and the control plane and removes
// everything the lab created on the machine.
func (l *Lab) Close() {
	for node, cmd := range l.agents {
		if cmd.Process != nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
		done := make(chan struct{})
		go func() {
			for syscall.Kill(cmd.Process.Pid, 0) == nil {
				time.Sleep(20 * time.Millisecond)
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
		}
		delete(l.agents, node)
	}
	killStaleVPPs(l.Opts.StateDir, l.Nodes, l.log)
	if l.CP != nil {
		l.CP.Close()
		l.CP = nil
	}
	if removed, err := l.Linux.Cleanup(); err != nil {
		l.log.WithError(err).Error("lab: cleanup incomplete")
	} else {
		l.log.WithField("removed", len(removed)).Info("lab torn down")
	}
	// The node directories keep their logs (agent.log, vpp/vpp.log, the
	// pods' container logs) for a look after the run; the next Up removes
	// them.
	_ = os.Remove(l.Kubeconfig())
	_ = os.Remove(lockFile(l.Opts.StateDir))
}

// killStaleVPPs kills the VPPs of the lab's node directories (those a
// killed earlier run left, or this run's at teardown). Only a process that
// runs that directory's startup.conf is signalled (vppnode.VPP.Kill).
func killStaleVPPs(stateDir string, nodes []topology.Node, log logrus.FieldLogger) {
	entries, _ := os.ReadDir(stateDir)
	seen := map[string]bool{}
	for _, n := range nodes {
		seen[n.Name] = true
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "node-") {
			seen[e.Name()] = true
		}
	}
	for name := range seen {
		dir := filepath.Join(nodeagent.Dir(stateDir, name), "vpp")
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		v, err := vppnode.New(vppnode.Options{Dir: dir})
		if err != nil {
			continue
		}
		if pid, ok := v.Running(); ok {
			log.WithFields(logrus.Fields{"node": name, "pid": pid}).Info("stopping VPP")
			_ = v.Kill()
		}
	}
}

func (o *Options) hasKind(k topology.Kind) bool {
	for _, x := range o.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// buildKernelNode creates what a kernel node has before its agent runs:
// its namespace (the node itself) with its uplink on the lab's bridge as
// eth0, holding the node IPs. The agent adds the pods' bridge, the routes
// and kube-proxy (nodeagent.RunKernel).
func (l *Lab) buildKernelNode(node topology.Node) error {
	n, lx, i := l.Names, l.Linux, node.Index
	ns := n.HostNS(i)
	if err := lx.AddNamespace(ns); err != nil {
		return err
	}
	if err := lx.AddVeth(n.UplinkPort(i), ns, "eth0"); err != nil {
		return err
	}
	if err := lx.SetMaster(n.UplinkPort(i), n.Bridge()); err != nil {
		return err
	}
	for _, ip := range node.IPs() {
		p := topology.UplinkV4
		if ip.Is6() {
			p = topology.UplinkV6
		}
		if err := lx.AddAddress(ns, "eth0", netip.PrefixFrom(ip, p.Bits())); err != nil {
			return err
		}
	}
	return nil
}
