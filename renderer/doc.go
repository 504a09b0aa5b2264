// Package renderer holds what the service renderers share: deterministic,
// length-bounded names for the VPP objects they own (names.go), the
// permit-all ACL that every renderer filtering on an interface relies on
// (acl.go), and the helpers that load and validate renderer configuration
// (config.go).
//
// Each renderer lives in a sub-package (renderer/nat44 for IPv4 over
// NAT44-ED, renderer/ipv6 for IPv6) and implements vppsvc.ServiceRendererAPI
// on top of a vppcfg.Client. Renderers import model, vppsvc and vppcfg only;
// they never import the processor.
package renderer
