// Package nat44 renders Kubernetes Services for IPv4 into VPP's NAT44-ED
// plugin and ACLs, through the declarative VPP layer (package vppcfg).
//
// For every IPv4 frontend of a service port (each ClusterIP, external IP and
// LoadBalancer ingress IP with the port, and every node IP with the node
// port) the renderer puts one out2in-only NAT mapping: a static mapping when
// one endpoint may serve the frontend, a load-balancing mapping when several
// may. Frontends that no endpoint may serve, and LoadBalancer frontends
// restricted by loadBalancerSourceRanges, are filtered by one input ACL per
// service on the frontend interfaces. Node-wide items (the NAT44-ED plugin
// with forwarding on, the twice-NAT pool, interface roles, optional egress
// SNAT) are put alongside.
//
// The translation is pure: RenderService and RenderNode map (service, node
// context, Config) to items and are table-tested. Renderer adds the little
// state an incremental renderer needs, all of which Resync rebuilds.
//
// docs/renderer-nat44.md describes the VPP objects, an example with the
// equivalent VPP CLI, and the design decisions (dropping instead of
// rejecting, session affinity on backend removal, the one-backend static
// mapping, SCTP).
package nat44

// Name is the renderer's name in logs and the prefix of the ACL names it owns.
const Name = "nat44"
