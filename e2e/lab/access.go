package lab

import (
	"fmt"
	"io"
	"path/filepath"

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
