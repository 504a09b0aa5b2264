package nat44

import "github.com/vppsvc/vppsvc/model"

// Node is the node-wide context a translation depends on, as the processor
// last reported it.
type Node struct {
	// IPs are the IP addresses of every node of the cluster; NodePort
	// frontends exist on each IPv4 one.
	IPs model.IPAddresses
	// FrontendIfs are the interfaces through which clients reach services:
	// they get the NAT44 outside role and carry the service ACLs.
	FrontendIfs model.Interfaces
	// BackendIfs are the interfaces of local pods serving a service: they
	// get the NAT44 inside role.
	BackendIfs model.Interfaces
}
