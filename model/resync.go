package model

import (
	"net/netip"
	"slices"
)

// ResyncEventData is the complete state a renderer must converge to on Resync.
type ResyncEventData struct {
	// NodeIPs are the addresses of this node on which NodePort services are
	// answered (kube-proxy's --nodeport-addresses; by default this node's
	// primary IP of each family). Other nodes' IPs are not among them.
	NodeIPs IPAddresses
	// Services are all rendered services, sorted by ID.
	Services []*ContivService
	// FrontendIfs are the interfaces through which clients reach services.
	FrontendIfs Interfaces
	// BackendIfs are the interfaces of local pods that serve at least one service.
	BackendIfs Interfaces
	// ServiceCIDRs are the cluster's service CIDRs, of both families, sorted
	// and masked: those configured (--service-cluster-ip-range), or else
	// those of the cluster's ServiceCIDR objects. Empty when neither is
	// known.
	ServiceCIDRs []netip.Prefix
}

// NodePortServices returns the services that expose at least one node port.
func (r *ResyncEventData) NodePortServices() []*ContivService {
	var out []*ContivService
	for _, s := range r.Services {
		if s.HasNodePort() {
			out = append(out, s)
		}
	}
	return out
}

// SortServices puts Services in ID order.
func (r *ResyncEventData) SortServices() {
	slices.SortFunc(r.Services, func(a, b *ContivService) int { return a.ID.Compare(b.ID) })
}
