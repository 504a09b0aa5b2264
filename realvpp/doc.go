// Package realvpp drives a running VPP 25.10 as a scratch test node, the
// second data plane beside fakevpp: it builds a topology out of
// packet-generator interfaces named as the test asks (addresses, routes,
// static neighbours, unnumbered interfaces), hands out API connections for
// the agent under test, sends packets in through VPP's packet generator and
// reports where they left in fakevpp's Trace shape, read from the
// interfaces' pcap captures and VPP's own packet trace.
//
// A Node refuses a VPP that holds any interface it did not create (see
// Tag), so that nobody traces into a production node by mistake, and Reset
// removes every interface, route, NAT44-ED, cnat and ACL configuration
// between tests. The VPP must run on this machine: streams and captures
// are files both sides read. docs/real-vpp.md says how to start one.
package realvpp
