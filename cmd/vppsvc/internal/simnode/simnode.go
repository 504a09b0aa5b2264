// Package simnode describes the node whose agent vppsvc simulates: the VPP
// interfaces it has, the routes that lead to the rest of the cluster, and the
// local pods the CNI would report. The CLI programs fakevpp from this plan.
//
// Layout of a simulated node:
//
//	uplink0  carries the node's own IPs (connected /24 and /64); pods of other
//	         nodes and external clients arrive here; default routes point here.
//	host0    the link to the node's kernel; the node itself sends from HostIPv4
//	         / HostIPv6 through it.
//	tap-…    one interface per local pod, with a host route to each pod IP,
//	         unnumbered to host0 (see Interface.UnnumberedTo).
package simnode

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/dataplane"
)

// Interface names every simulated node has.
const (
	UplinkInterface = "uplink0"
	HostInterface   = "host0"
)

// Addresses of the VPP ↔ kernel link on host0. The kernel side is the source
// of traffic the node itself sends.
var (
	hostLinkV4 = netip.MustParsePrefix("172.30.255.1/24")
	hostLinkV6 = netip.MustParsePrefix("fd00:ffff::1/64")
	// HostIPv4 and HostIPv6 are the kernel's addresses on the host link.
	HostIPv4 = netip.MustParseAddr("172.30.255.2")
	HostIPv6 = netip.MustParseAddr("fd00:ffff::2")
)

// LocalPod is a pod on the simulated node and its VPP interface.
type LocalPod struct {
	Namespace, Name string
	IPs             []netip.Addr
	Interface       string
}

// Plan is the simulated node.
type Plan struct {
	Node    string
	NodeIPs []netip.Addr // this node's InternalIP/ExternalIP addresses
	// Topology is the node's interfaces and routes. Local pods' taps are
	// unnumbered to host0: it always carries both an IPv4 and an IPv6
	// address (uplink0 has only the families of the node's IPs), it
	// exists on every simulated node, and it is VPP's link to the node's
	// own kernel, so the addresses VPP would answer from on a pod's tap
	// are the host side's, not the node's public ones.
	dataplane.Topology
	LocalPods []LocalPod
}

// Build plans the node named node; an empty name picks the first node by name.
func Build(nodes []*corev1.Node, pods []*corev1.Pod, node string) (*Plan, error) {
	self, err := pickNode(nodes, node)
	if err != nil {
		return nil, err
	}
	p := &Plan{Node: self.Name}
	for _, a := range self.Status.Addresses {
		if a.Type != corev1.NodeInternalIP && a.Type != corev1.NodeExternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(strings.TrimSpace(a.Address)); err == nil {
			p.NodeIPs = append(p.NodeIPs, ip.Unmap())
		}
	}
	slices.SortFunc(p.NodeIPs, netip.Addr.Compare)
	p.NodeIPs = slices.Compact(p.NodeIPs)

	uplink := dataplane.Interface{Name: UplinkInterface}
	for _, ip := range p.NodeIPs {
		bits := 24
		if ip.Is6() {
			bits = 64
		}
		uplink.Addrs = append(uplink.Addrs, netip.PrefixFrom(ip, bits))
	}
	p.Interfaces = append(p.Interfaces, uplink, dataplane.Interface{Name: HostInterface, Addrs: []netip.Prefix{hostLinkV4, hostLinkV6}})
	p.Routes = append(p.Routes,
		dataplane.Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Interface: UplinkInterface},
		dataplane.Route{Dst: netip.MustParsePrefix("::/0"), Interface: UplinkInterface})

	for _, pod := range pods {
		if pod == nil || pod.Spec.NodeName != self.Name || pod.Spec.HostNetwork {
			continue
		}
		lp := LocalPod{Namespace: pod.Namespace, Name: pod.Name, Interface: PodInterfaceName(pod.Namespace, pod.Name)}
		for _, s := range podIPs(pod) {
			if ip, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil {
				lp.IPs = append(lp.IPs, ip.Unmap())
			}
		}
		if len(lp.IPs) == 0 {
			continue // not yet scheduled an address: nothing to route to
		}
		p.LocalPods = append(p.LocalPods, lp)
		p.Interfaces = append(p.Interfaces, dataplane.Interface{Name: lp.Interface, UnnumberedTo: HostInterface})
		for _, ip := range lp.IPs {
			p.Routes = append(p.Routes, dataplane.Route{Dst: netip.PrefixFrom(ip, ip.BitLen()), Interface: lp.Interface})
		}
	}
	return p, nil
}

// PodInterfaceName is the VPP interface of a local pod: readable, unique per
// namespace/name, and within VPP's 63-byte name limit.
func PodInterfaceName(namespace, name string) string {
	n := "tap-" + namespace + "-" + name
	if len(n) > 63 {
		n = n[:63]
	}
	return n
}

// IngressFor infers the interface a packet from src enters VPP on: a local
// pod's tap, host0 for the node itself, uplink0 for everything else.
func (p *Plan) IngressFor(src netip.Addr) string {
	src = src.Unmap()
	for _, lp := range p.LocalPods {
		if slices.Contains(lp.IPs, src) {
			return lp.Interface
		}
	}
	if src == HostIPv4 || src == HostIPv6 || slices.Contains(p.NodeIPs, src) {
		return HostInterface
	}
	return UplinkInterface
}

// KernelSource is the address the node's kernel sends from when a packet
// is meant to come from src, one of the node's IPs: those are VPP's (on
// uplink0), and the kernel reaches VPP through host0 from its own address
// on that link, HostIPv4 or HostIPv6 by family. ok is false for any other
// source.
func (p *Plan) KernelSource(src netip.Addr) (netip.Addr, bool) {
	src = src.Unmap()
	if !slices.Contains(p.NodeIPs, src) {
		return netip.Addr{}, false
	}
	if src.Is4() {
		return HostIPv4, true
	}
	return HostIPv6, true
}

// FrontendInterfaces are the interfaces that are frontends whatever pods run.
func FrontendInterfaces() []string { return []string{UplinkInterface, HostInterface} }

func pickNode(nodes []*corev1.Node, name string) (*corev1.Node, error) {
	var names []string
	for _, n := range nodes {
		if n == nil {
			continue
		}
		names = append(names, n.Name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("the cluster has no Node objects: nothing to simulate")
	}
	if name == "" {
		name = names[0]
	}
	for _, n := range nodes {
		if n != nil && n.Name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("unknown node %q (nodes: %s)", name, strings.Join(names, ", "))
}

func podIPs(pod *corev1.Pod) []string {
	var out []string
	for _, ip := range pod.Status.PodIPs {
		out = append(out, ip.IP)
	}
	if len(out) == 0 && pod.Status.PodIP != "" {
		out = append(out, pod.Status.PodIP)
	}
	return out
}
