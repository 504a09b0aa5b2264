// Package ipv6 renders Kubernetes Services for IPv6 into VPP's cnat plugin
// and ACLs, through the declarative VPP layer (package vppcfg).
//
// For every IPv6 frontend of a TCP or UDP service port (each ClusterIP,
// external IP and LoadBalancer ingress IP with the port, and every IPv6 node
// IP with the node port) of a service with an IPv6 ClusterIP, the renderer
// puts one cnat translation that load-balances the frontend over the IPv6
// endpoints its traffic policy allows. ClusterIPs, external IPs and
// LoadBalancer IPs are exclusive VIPs (cnat owns the address and drops what
// no translation matches); node IPs are real addresses (unmatched traffic
// reaches the host). Frontends that no endpoint may serve and that cnat
// would not drop by itself, and LoadBalancer frontends restricted by
// loadBalancerSourceRanges, are filtered by rules in one of a fixed number
// of filter ACLs (shards) bound on the frontend interfaces, composed with
// the NAT44 renderer's through the shared permit-all ACL.
//
// The translation is pure: RenderService and RenderNode map (service, node
// context, Config) to items and are table-tested. The incremental state,
// all of which Resync rebuilds, is kept by renderer.Core.
//
// docs/renderer-ipv6.md describes the VPP objects, an example with the
// equivalent VPP CLI, and the design decisions (source NAT and hairpin,
// filter shards, dropping, session affinity, SCTP).
package ipv6

// Name is the renderer's name in logs and the prefix of the ACL names it owns.
const Name = "ipv6"
