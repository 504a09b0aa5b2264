// Package cnat renders Kubernetes Services of one address family into VPP's
// cnat plugin and ACLs, through the declarative VPP layer (package vppcfg).
// It is the rendering common to the IPv6 renderer (renderer/ipv6) and the
// cnat IPv4 renderer (renderer/cnat4), parameterised by Family; those
// packages are its faces, with their own name, Config type and defaults.
//
// For every frontend of the family of a TCP or UDP service port (each
// ClusterIP, external IP and LoadBalancer ingress IP with the port, and
// every node IP of the family with the node port) of a service with a
// ClusterIP of the family, the renderer puts one cnat translation that
// load-balances the frontend over the endpoints of the family its traffic
// policy allows. ClusterIPs, external IPs and LoadBalancer IPs are
// exclusive VIPs (cnat owns the address and drops what no translation
// matches); node IPs are real addresses (unmatched traffic reaches the
// host). Frontends that no endpoint may serve and that cnat would not drop
// by itself, and LoadBalancer frontends restricted by
// loadBalancerSourceRanges, are filtered by rules in one of a fixed number
// of filter ACLs (shards) bound on the frontend interfaces, composed with
// the other family's renderer's through the shared permit-all ACL.
//
// The translation is pure: RenderService and RenderNode map (family,
// service, node context, Config) to items and are table-tested through the
// faces. The incremental state, all of which Resync rebuilds, is kept by
// renderer.Core.
//
// docs/renderer-ipv6.md describes the VPP objects, an example with the
// equivalent VPP CLI, and the design decisions (source NAT and hairpin,
// filter shards, dropping, session affinity, SCTP); docs/renderer-cnat4.md
// what differs for IPv4.
package cnat
