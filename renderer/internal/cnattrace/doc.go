// Package cnattrace is the packet-trace suite both faces of renderer/cnat
// share: every scenario that means the same for IPv6 (renderer/ipv6) and
// IPv4 (renderer/cnat4), written once and run by thin tests of the same
// names in each face's package, on fakevpp or the real VPP of
// dataplane.SocketEnv. Scenarios that are one family's (dual stack with
// NAT44, SCTP, ICMP...) stay in their package.
//
// The scenarios are written in the IPv6 address plan of renderer/ipv6's
// harness_test.go; Face.A maps each address of that plan to the face's
// family (the IPv4 plan of renderer/cnat4's harness_test.go), and fails
// on an address outside the plan. Like tracetest, it is imported only by
// test packages; it cannot import the processor or the agent (renderer
// packages never do), so each face adapts its control plane as an Agent.
package cnattrace
