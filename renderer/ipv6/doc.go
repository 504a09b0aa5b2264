// Package ipv6 renders Kubernetes Services for IPv6 into VPP's cnat plugin
// and ACLs, through the declarative VPP layer (package vppcfg).
//
// For every IPv6 frontend of a TCP or UDP service port (each ClusterIP,
// external IP and LoadBalancer ingress IP with the port, and every IPv6 node
// IP with the node port) the renderer puts one cnat translation that
// load-balances the frontend over the IPv6 endpoints its traffic policy
// allows. ClusterIPs, external IPs and LoadBalancer IPs are exclusive VIPs
// (cnat owns the address and drops what no translation matches); node IPs
// are real addresses (unmatched traffic reaches the host). Frontends that no
// endpoint may serve and that cnat would not drop by itself, and
// LoadBalancer frontends restricted by loadBalancerSourceRanges, are filtered
// by one input ACL per service on the frontend interfaces, composed with the
// NAT44 renderer's ACLs through the shared permit-all ACL.
//
// The translation is pure: RenderService and RenderNode map (service, node
// context, Config) to items and are table-tested. Renderer adds the little
// state an incremental renderer needs, all of which Resync rebuilds.
//
// docs/renderer-ipv6.md describes the VPP objects, an example with the
// equivalent VPP CLI, and the design decisions (source NAT and hairpin,
// dropping, session affinity, SCTP).
package ipv6

// Name is the renderer's name in logs and the prefix of the ACL names it owns.
const Name = "ipv6"
