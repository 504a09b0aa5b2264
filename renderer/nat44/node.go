package nat44

import (
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
)

// Node is the node-wide context a translation depends on, as the processor
// last reported it.
type Node struct {
	// IPs are the IP addresses of every node of the cluster; NodePort
	// frontends exist on each IPv4 one.
	IPs model.IPAddresses
	// FrontendIfs are the interfaces through which clients reach services:
	// they get the NAT44 outside role and carry the filter ACLs.
	FrontendIfs model.Interfaces
	// BackendIfs are the interfaces of local pods serving a service: they
	// get the NAT44 inside role.
	BackendIfs model.Interfaces
	// ShortCircuit is set while some service needs internal clients
	// short-circuited (needsShortCircuit; the core keeps it, see
	// shortCircuitDemand): cnat's feature nodes run on the internal
	// frontend interfaces only then, so pod traffic pays for them only in
	// clusters that use externalTrafficPolicy Local.
	ShortCircuit bool
	// ServiceCIDRs are the IPv4 service CIDRs the processor reported
	// (renderer.FamilyCIDRs); Config.ServiceCIDRs wins over them.
	ServiceCIDRs []netip.Prefix
}

// Equal reports whether both contexts are the same.
func (n Node) Equal(o Node) bool {
	return n.IPs.Equal(o.IPs) && n.FrontendIfs.Equal(o.FrontendIfs) && n.BackendIfs.Equal(o.BackendIfs) &&
		n.ShortCircuit == o.ShortCircuit && slices.Equal(n.ServiceCIDRs, o.ServiceCIDRs)
}

// FrontendInterfaces returns the frontend interfaces (renderer.NodeContext).
func (n Node) FrontendInterfaces() model.Interfaces { return n.FrontendIfs }

// WithFrontendInterfaces returns n with other frontend interfaces
// (renderer.NodeContext).
func (n Node) WithFrontendInterfaces(ifs model.Interfaces) Node {
	n.FrontendIfs = ifs
	return n
}

// nodeOf is the node context of a Resync event; ShortCircuit follows the
// services (shortCircuitDemand).
func nodeOf(ev *model.ResyncEventData) Node {
	return Node{IPs: ev.NodeIPs, FrontendIfs: ev.FrontendIfs, BackendIfs: ev.BackendIfs,
		ServiceCIDRs: renderer.FamilyCIDRs(ev.ServiceCIDRs, renderer.IPv4)}
}
