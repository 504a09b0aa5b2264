// Package ipv6 renders Kubernetes Services for IPv6 into VPP's cnat plugin
// and ACLs, through the declarative VPP layer (package vppcfg). It is the
// IPv6 face of renderer/cnat, which holds the rendering it shares with the
// cnat IPv4 renderer (renderer/cnat4); this package gives it its name,
// Config type and defaults.
//
// For every IPv6 frontend of a TCP or UDP service port (each ClusterIP,
// external IP and LoadBalancer ingress IP with the port, and every IPv6 node
// IP with the node port) of a service with an IPv6 ClusterIP, the renderer
// puts one cnat translation that load-balances the frontend over the IPv6
// endpoints its traffic policy allows (cnat.RenderService).
//
// docs/renderer-ipv6.md describes the VPP objects, an example with the
// equivalent VPP CLI, and the design decisions (source NAT and hairpin,
// filter shards, dropping, session affinity, SCTP).
package ipv6

import "github.com/vppsvc/vppsvc/renderer/cnat"

// Name is the renderer's name in logs and the prefix of the ACL names it owns.
const Name = "ipv6"

// family is the IPv6 face of renderer/cnat.
var family = cnat.IPv6
