package nodeagent

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
)

// KubeProxyHealthz is where a kernel node's kube-proxy serves /healthz,
// on the node's loopback; KubeProxyMetrics its metrics.
const (
	KubeProxyHealthz = "127.0.0.1:10256"
	KubeProxyMetrics = "127.0.0.1:10249"
)

// KubeProxyArgs are the flags a kernel node runs kube-proxy with: nftables
// mode against the lab's API server as node, its pods' CIDRs as the
// cluster's, its health and metrics servers on the node's loopback, and
// the machine-wide conntrack table size left alone (a namespace cannot
// set it).
func KubeProxyArgs(node topology.Node, kubeconfig string) []string {
	cidrs := make([]string, len(topology.ClusterCIDRs))
	for i, c := range topology.ClusterCIDRs {
		cidrs[i] = c.String()
	}
	return []string{
		"--proxy-mode=nftables",
		"--hostname-override=" + node.Name,
		"--cluster-cidr=" + strings.Join(cidrs, ","),
		"--kubeconfig=" + kubeconfig,
		"--healthz-bind-address=" + KubeProxyHealthz,
		"--metrics-bind-address=" + KubeProxyMetrics,
		"--conntrack-max-per-core=0",
		"--v=2",
	}
}

// KubeProxyPIDFile records the pid of a kernel node's kube-proxy.
func KubeProxyPIDFile(stateDir, node string) string {
	return filepath.Join(Dir(stateDir, node), "kube-proxy.pid")
}

// RunKernel runs a kernel node's agent until ctx ends: the node's
// namespace gets its pods' bridge (their gateway addresses on it), IP
// forwarding and routes to the other nodes' pods; kube-proxy runs in it
// with its real flags; and the agent acts as the node's kubelet with a
// plain bridge CNI (a veth per pod on the bridge, the pod's addresses from
// the node's pod CIDRs, its default route via the bridge). kube-proxy and
// the pods outlive the agent; a restarted agent adopts them.
func RunKernel(ctx context.Context, opts Options) error {
	log := opts.Log
	if log == nil {
		log = logrus.StandardLogger()
	}
	log = log.WithFields(logrus.Fields{"node": opts.Node.Name, "kind": topology.KindKernel})
	if opts.KubeProxy == "" {
		return fmt.Errorf("kernel node %s: no kube-proxy binary", opts.Node.Name)
	}
	linux, err := host.New(host.Options{Prefix: opts.Names.Prefix, StateDir: opts.StateDir, Log: log})
	if err != nil {
		return err
	}
	k8s, apiHost, err := apiClient(opts.Kubeconfig)
	if err != nil {
		return err
	}
	n := &nodeAgent{opts: opts, log: log, linux: linux, k8s: k8s, kernel: true}
	_ = os.Remove(ReadyFile(opts.StateDir, opts.Node.Name))
	if err := n.buildKernelNode(); err != nil {
		return err
	}
	// The API server listens on the root namespace's loopback, which
	// kube-proxy, inside the node's namespace, cannot reach: the agent
	// forwards the node's loopback port to it.
	kubeconfig, err := n.forwardAPIServer(ctx, apiHost)
	if err != nil {
		return err
	}
	if err := n.startKubeProxy(ctx, kubeconfig); err != nil {
		return err
	}
	pods := newPodController(n)
	pods.adoptExisting(ctx)
	go pods.run(ctx)
	if err := os.WriteFile(ReadyFile(opts.StateDir, opts.Node.Name), []byte(time.Now().Format(time.RFC3339Nano)), 0o644); err != nil {
		return err
	}
	log.Info("kernel node agent ready")
	<-ctx.Done()
	return nil
}

// buildKernelNode sets the node's namespace up as a bridge CNI and the
// cluster's routing would: forwarding on, bridged traffic through
// netfilter (kube-proxy's replies between pods of one bridge need it), the
// pods' bridge with their gateways, and routes to every other node's pods
// and host link over the uplink.
func (n *nodeAgent) buildKernelNode() error {
	lx, ns := n.linux, n.opts.Names.HostNS(n.opts.Node.Index)
	for _, s := range []struct{ key, value string }{
		{"net.ipv4.ip_forward", "1"},
		{"net.ipv6.conf.all.forwarding", "1"},
		{"net.bridge.bridge-nf-call-iptables", "1"},
		{"net.bridge.bridge-nf-call-ip6tables", "1"},
	} {
		if err := lx.Sysctl(ns, s.key, s.value); err != nil {
			return err
		}
	}
	if err := lx.AddBridgeIn(ns, topology.KernelBridge, n.opts.Node.PodGateways()); err != nil {
		return err
	}
	// A node has a default route (here towards the external client, the
	// segment's stand-in for a router, which forwards nothing): the
	// kernel needs a route for a ClusterIP before kube-proxy's output
	// chain translates it, or the node's own connections to Services fail
	// with "network is unreachable".
	for _, r := range []host.Route{
		{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: topology.ExternalClientV4, Dev: "eth0"},
		{Dst: netip.MustParsePrefix("::/0"), Via: topology.ExternalClientV6, Dev: "eth0"},
	} {
		if err := lx.AddRoute(ns, r); err != nil {
			return err
		}
	}
	for _, other := range n.opts.Nodes {
		if other.Index == n.opts.Node.Index {
			continue
		}
		ips, hostLinks := other.IPs(), other.HostLinks()
		for f, cidr := range other.PodCIDRs() {
			dsts := []netip.Prefix{cidr}
			if !other.IsKernel() {
				dsts = append(dsts, hostLinks[f]) // a VPP node's own kernel (topology.Node.HostLinks)
			}
			for _, dst := range dsts {
				if err := lx.AddRoute(ns, host.Route{Dst: dst, Via: ips[f], Dev: "eth0"}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// startKubeProxy starts kube-proxy in the node's namespace unless the one
// recorded runs (a restarted agent adopts it), and waits until its
// /healthz answers 200 (its first sync is done).
func (n *nodeAgent) startKubeProxy(ctx context.Context, kubeconfig string) error {
	node, ns := n.opts.Node, n.opts.Names.HostNS(n.opts.Node.Index)
	pidFile := KubeProxyPIDFile(n.opts.StateDir, node.Name)
	if !running(pidFile) {
		logf, err := os.OpenFile(filepath.Join(Dir(n.opts.StateDir, node.Name), "kube-proxy.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		cmd := host.Command(ns, n.opts.KubeProxy, KubeProxyArgs(node, kubeconfig)...)
		cmd.Stdout, cmd.Stderr = logf, logf
		err = cmd.Start()
		logf.Close()
		if err != nil {
			return fmt.Errorf("starting kube-proxy: %w", err)
		}
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
			return err
		}
		go func() { _ = cmd.Wait() }()
		n.log.WithFields(logrus.Fields{"pid": cmd.Process.Pid, "namespace": ns}).Info("kube-proxy started")
	}
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return host.DialContext(ctx, ns, network, addr)
		},
	}}
	defer hc.CloseIdleConnections()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for {
		resp, err := hc.Get("http://" + KubeProxyHealthz + "/healthz")
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
		} else {
			last = err.Error()
		}
		if !running(pidFile) {
			return fmt.Errorf("kube-proxy exited; see %s", filepath.Join(Dir(n.opts.StateDir, node.Name), "kube-proxy.log"))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-proxy not healthy after 60s (%s); see its log in %s", last, Dir(n.opts.StateDir, node.Name))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// wireKernelPod is the bridge CNI's part of wire: the pod's namespace, a
// veth from the node's bridge into it, its addresses in the node's pod
// CIDRs and its default routes via the bridge.
func (c *podController) wireKernelPod(st *podState) error {
	i, names, lx, node := c.n.opts.Node.Index, c.n.opts.Names, c.n.linux, c.n.opts.Node
	ns := names.PodNS(i, st.slot)
	if err := lx.AddNamespace(ns); err != nil {
		return err
	}
	if err := lx.AddVethIn(names.HostNS(i), topology.KernelPodLink(st.slot), topology.KernelBridge, ns, "eth0"); err != nil {
		return err
	}
	cidrs, gws := node.PodCIDRs(), node.PodGateways()
	for f, ip := range st.ips {
		if err := lx.AddAddress(ns, "eth0", netipPrefix(ip, cidrs[f].Bits())); err != nil {
			return err
		}
	}
	for _, r := range []host.Route{
		{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: gws[0].Addr(), Dev: "eth0"},
		{Dst: netip.MustParsePrefix("::/0"), Via: gws[1].Addr(), Dev: "eth0"},
	} {
		if err := lx.AddRoute(ns, r); err != nil {
			return err
		}
	}
	return nil
}

// APIServerPort is where a kernel node's agent forwards the API server on
// the node's loopback.
const APIServerPort = 6443

// forwardAPIServer listens on the node namespace's loopback, at the API
// server's own address with APIServerPort (so its certificate still
// matches), forwards every connection to the API server in the root
// namespace until ctx ends, and writes the kubeconfig that points there.
func (n *nodeAgent) forwardAPIServer(ctx context.Context, server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", fmt.Errorf("API server %q: %w", server, err)
	}
	target := u.Host
	local := net.JoinHostPort(u.Hostname(), strconv.Itoa(APIServerPort))
	ns := n.opts.Names.HostNS(n.opts.Node.Index)
	ln, err := host.Listen(ns, "tcp", local)
	if err != nil {
		return "", fmt.Errorf("forwarding the API server into %s: %w", ns, err)
	}
	go func() { <-ctx.Done(); ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				d := net.Dialer{Timeout: 5 * time.Second}
				up, err := d.DialContext(ctx, "tcp", target)
				if err != nil {
					n.log.WithError(err).Warn("API server forward: dial failed")
					return
				}
				defer up.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
				select {
				case <-done:
				case <-ctx.Done():
				}
			}()
		}
	}()
	cfg, err := clientcmd.LoadFromFile(n.opts.Kubeconfig)
	if err != nil {
		return "", err
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + local
	}
	path := filepath.Join(Dir(n.opts.StateDir, n.opts.Node.Name), "kube-proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", err
	}
	return path, nil
}

// running tells whether the process recorded in pidFile runs: alive, and
// not a zombie (a killed kube-proxy whose agent died stays one until init
// reaps it, and signal 0 still reaches it).
func running(pidFile string) bool {
	if !alive(pidFile) {
		return false
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}
