package lab

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/nodeagent"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
)

// PrintAccess tells a person how to reach everything in the lab.
func (l *Lab) PrintAccess(w io.Writer) {
	n := l.Names
	fmt.Fprintf(w, "kubeconfig:        export KUBECONFIG=%s   (kubectl get nodes,svc,endpointslices -A)\n", l.Kubeconfig())
	fmt.Fprintf(w, "external client:   ip netns exec %s curl http://<node IP>:<nodePort>/hostname   (sources %s, %s; refused-range sources %s, %s)\n",
		n.ExternalNS(), topology.ExternalClientV4, topology.ExternalClientV6, topology.RefusedClientV4, topology.RefusedClientV6)
	fmt.Fprintf(w, "LoadBalancer pool: %s, %s   externalIPs: %s, %s (routed by the external client via %s)\n",
		topology.LoadBalancerPoolV4, topology.LoadBalancerPoolV6, topology.ExternalIPsV4, topology.ExternalIPsV6, l.Nodes[0].Name)
	for _, node := range l.Nodes {
		dir := nodeagent.Dir(l.Opts.StateDir, node.Name)
		ips := node.IPs()
		cidrs := node.PodCIDRs()
		fmt.Fprintf(w, "\n%s (%s)  node IPs %s, %s   pod CIDRs %s, %s\n", node.Name, node.KindName(), ips[0], ips[1], cidrs[0], cidrs[1])
		if node.IsKernel() {
			fmt.Fprintf(w, "  the node itself:  ip netns exec %s <command>   (its kernel: uplink eth0, pods' bridge %s)\n", n.HostNS(node.Index), topology.KernelBridge)
			fmt.Fprintf(w, "  a pod:            ip netns exec %s<k> <command>\n", n.PodNS(node.Index, 1)[:len(n.PodNS(node.Index, 1))-1])
			fmt.Fprintf(w, "  kube-proxy rules: ip netns exec %s nft list table ip kube-proxy   (and ip6)\n", n.HostNS(node.Index))
			fmt.Fprintf(w, "  kube-proxy log:   %s\n", filepath.Join(dir, "kube-proxy.log"))
			fmt.Fprintf(w, "  agent log:        %s\n", filepath.Join(dir, "agent.log"))
			continue
		}
		fmt.Fprintf(w, "  the node itself:  ip netns exec %s <command>   (its kernel, behind VPP's host0)\n", n.HostNS(node.Index))
		fmt.Fprintf(w, "  a pod:            ip netns exec %s <command>   (pod in slot k: kubectl get pod -o wide shows its IP %s)\n",
			n.PodNS(node.Index, 1)[:len(n.PodNS(node.Index, 1))-1]+"<k>", node.PodIPs(1)[0].String()[:len(node.PodIPs(1)[0].String())-2]+"<10+k>")
		fmt.Fprintf(w, "  VPP CLI:          %s -s %s show nat44 static mappings\n", vppctl(l.Opts.VPPBinary), filepath.Join(dir, "vpp", "cli.sock"))
		fmt.Fprintf(w, "  vppsvc status:    go run ./cmd/vppsvc status --inspect-socket %s\n", nodeagent.InspectSocket(l.Opts.StateDir, node.Name))
		fmt.Fprintf(w, "  vppsvc's writes:  %s   (what it sent to VPP, converged or not)\n", filepath.Join(dir, "stats.json"))
		fmt.Fprintf(w, "  agent log:        %s\n", filepath.Join(dir, "agent.log"))
	}
	fmt.Fprintln(w, "\nCtrl-C tears everything down.")
}

// vppctl is the vppctl next to the lab's vpp binary.
func vppctl(vpp string) string { return filepath.Join(filepath.Dir(vpp), "vppctl") }

// lockFile records the pid of the process that runs the lab.
func lockFile(stateDir string) string { return filepath.Join(stateDir, "lab.pid") }

// runningLab is the pid of a live lab process of stateDir, or 0.
func runningLab(stateDir string) int {
	b, err := os.ReadFile(lockFile(stateDir))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || pid == os.Getpid() || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

// Down removes what a killed lab left: its VPPs, namespaces (and the
// processes in them), links and files. It refuses while a lab runs.
func Down(opts Options) error {
	if err := opts.defaults(); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("lab: must run as root")
	}
	if pid := runningLab(opts.StateDir); pid != 0 {
		return fmt.Errorf("lab: a lab is running (pid %d); interrupt it, it tears itself down", pid)
	}
	killStaleVPPs(opts.StateDir, nil, opts.Log)
	linux, err := host.New(host.Options{Prefix: opts.Prefix, StateDir: opts.StateDir, Log: opts.Log})
	if err != nil {
		return err
	}
	removed, err := linux.Cleanup()
	for _, r := range removed {
		fmt.Println("removed", r)
	}
	entries, _ := os.ReadDir(opts.StateDir)
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "node-") {
			_ = os.RemoveAll(filepath.Join(opts.StateDir, e.Name()))
		}
	}
	_ = os.Remove(filepath.Join(opts.StateDir, "kubeconfig"))
	_ = os.Remove(lockFile(opts.StateDir))
	return err
}
