// Package nat44 renders Kubernetes Services for IPv4 into VPP's NAT44-ED
// plugin and ACLs, through the declarative VPP layer (package vppcfg).
//
// For every IPv4 frontend of a service port (each ClusterIP, external IP and
// LoadBalancer ingress IP with the port, and every node IP with the node
// port) of a service with an IPv4 ClusterIP, the renderer puts one
// out2in-only load-balancing NAT mapping, whatever the number of endpoints
// (one endpoint too, so that scaling keeps open connections). Frontends that no
// endpoint may serve, and LoadBalancer frontends restricted by
// loadBalancerSourceRanges, are filtered by rules in one of a fixed number
// of filter ACLs (shards) bound on the frontend interfaces. Node-wide items
// (the NAT44-ED plugin with forwarding on, the twice-NAT pool, interface
// roles, optional egress SNAT, the filter bindings) are put alongside.
//
// The translation is pure: RenderService and RenderNode map (service, node
// context, Config) to items and are table-tested. The incremental state,
// all of which Resync rebuilds, is kept by renderer.Core, the node's
// short-circuit switch included (shortCircuitDemand); this package keeps
// none.
//
// docs/renderer-nat44.md describes the VPP objects, an example with the
// equivalent VPP CLI, and the design decisions (filter shards, dropping
// instead of rejecting, session affinity on backend removal, the
// one-backend mapping, terminating endpoints, SCTP).
package nat44

// Name is the renderer's name in logs and the prefix of the ACL names it owns.
const Name = "nat44"
