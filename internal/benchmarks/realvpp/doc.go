// Package realvpp holds the benchmarks of vppsvc on a real VPP 25.10:
// the control plane's cost in VPP (cold syncs
// of kube-proxy-shaped clusters through the product's agent, an agent
// restart over the programmed VPP, the per-item cost of NAT44-ED's two
// mapping shapes) and the data plane's cost per packet (CPU clocks per
// packet summed over VPP's graph from "show runtime", first packets and
// established flows, against plain IPv4 forwarding), and how long VPP's
// main thread stops when a pod is added on a node with 50,000 services
// (TestRealPodAddStall: pods behind one bridge, and on an interface each).
//
// They run only when VPPSVC_TEST_VPP_SOCKET names the API socket of a
// scratch VPP (docs/real-vpp.md) and skip otherwise; `make bench-realvpp`
// runs them. The figures are in docs/performance.md, "Real VPP 25.10".
package realvpp
