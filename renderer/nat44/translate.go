package nat44

import (
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// RenderService translates one service into the VPP items that implement
// its IPv4 frontends, sorted by key. It is a pure function of the service,
// the node context and the configuration:
//
//   - one out2in-only mapping per frontend that has a usable backend
//     (mappingFor), load-balancing over the backends its traffic policy
//     allows (ServingBackends);
//   - when some frontend has no usable backend, or LoadBalancer frontends
//     are restricted by source ranges, one ACL (serviceACL) bound on input
//     of every frontend interface.
//
// SCTP ports and IPv6 addresses yield nothing. The node-wide items the
// service relies on come from RenderNode.
func RenderService(svc *model.ContivService, node Node, cfg *Config) []vppcfg.Item {
	var items []vppcfg.Item
	var denied, served []Frontend
	for _, fe := range Frontends(svc, node.IPs) {
		backends := ServingBackends(svc.Backends[fe.PortName], localOnly(svc, fe.Kind))
		if m := mappingFor(svc, fe, backends, cfg); m != nil {
			items = append(items, m)
			served = append(served, fe)
		} else {
			denied = append(denied, fe)
		}
	}
	if acl := serviceACL(svc, denied, served); acl != nil {
		items = append(items, acl)
		items = append(items, aclBindings(acl.Name, node.FrontendIfs)...)
	}
	return sortItems(items)
}
