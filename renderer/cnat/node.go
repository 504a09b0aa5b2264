package cnat

import (
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
)

// Node is the node-wide context a translation depends on, as the processor
// last reported it. Backend interfaces are not part of it: cnat needs no
// per-interface configuration for backends (see Renderer.UpdateLocalBackendIfs).
type Node struct {
	// IPs are the IP addresses of every node of the cluster; NodePort
	// frontends exist on each one of the family, and a frontend address that is a
	// node IP is never made an exclusive VIP.
	IPs model.IPAddresses
	// FrontendIfs are the interfaces through which clients reach services:
	// they carry the filter ACLs.
	FrontendIfs model.Interfaces
	// ServiceCIDRs are the family's service CIDRs the processor reported
	// (renderer.FamilyCIDRs); Config.ServiceCIDRs wins over them.
	ServiceCIDRs []netip.Prefix
}

// Equal reports whether both contexts are the same.
func (n Node) Equal(o Node) bool {
	return n.IPs.Equal(o.IPs) && n.FrontendIfs.Equal(o.FrontendIfs) && slices.Equal(n.ServiceCIDRs, o.ServiceCIDRs)
}

// FrontendInterfaces returns the frontend interfaces (renderer.NodeContext).
func (n Node) FrontendInterfaces() model.Interfaces { return n.FrontendIfs }

// WithFrontendInterfaces returns n with other frontend interfaces
// (renderer.NodeContext).
func (n Node) WithFrontendInterfaces(ifs model.Interfaces) Node {
	n.FrontendIfs = ifs
	return n
}

// nodeOf returns the node context of family f of a Resync event.
func nodeOf(f Family) func(ev *model.ResyncEventData) Node {
	return func(ev *model.ResyncEventData) Node {
		return Node{IPs: ev.NodeIPs, FrontendIfs: ev.FrontendIfs, ServiceCIDRs: renderer.FamilyCIDRs(ev.ServiceCIDRs, f.IP)}
	}
}
