package main

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cnat4FlowDeviations are where the cnat IPv4 renderer (--ipv4-renderer
// cnat) differs from sampleFlowExpectations, the NAT44 renderer's: an
// entry replaces the flow's recorded vppsvc outcome and deviation (a nil
// vppsvc: the flow behaves as kube-proxy).
var cnat4FlowDeviations = map[string]flowExpectation{
	// With a local endpoint, cnat keys a translation by frontend alone, so
	// the pods get the local endpoints, as the uplink's clients do (the
	// NAT44 renderer short-circuits them to the ClusterIP, as kube-proxy).
	"etp-local-nodeport-from-local-pod": {
		vppsvc:    ptr(forward(false, webA1)),
		deviation: "documented (docs/renderer-ipv6.md, externalTrafficPolicy: Local from inside the cluster): with a local endpoint, policy Local applies to this node's pods too",
	},
	"etp-local-nodeport-from-its-endpoint": {
		vppsvc:    ptr(forward(false, webA1)),
		deviation: "limitation, documented (docs/renderer-ipv6.md, Hairpin): under policy Local no path is source-NATed, so web-a1 reaching its own node port is sent to itself from itself (hairpinSNAT hairpin-only source-NATs it)",
	},

	// cnat decides source NAT per path: with hairpinSNAT (the default) every
	// client of an endpoint on this node is source-NATed, as for IPv6.
	"clusterip-from-local-pod":           {vppsvc: ptr(snatToLocal(webV4...)), deviation: cnat4HairpinSNAT},
	"clusterip-from-remote-pod":          {vppsvc: ptr(snatToLocal(webV4...)), deviation: cnat4HairpinSNAT},
	"clusterip-from-node":                {vppsvc: ptr(snatToLocal(webV4...)), deviation: cnat4HairpinSNAT + "; kube-proxy masquerades the node to every endpoint"},
	"nodeport-service-clusterip":         {vppsvc: ptr(snatToLocal(webV4...)), deviation: cnat4HairpinSNAT},
	"lb-clusterip-ignores-source-ranges": {vppsvc: ptr(snatToLocal(webV4...)), deviation: cnat4HairpinSNAT},
	"etp-local-clusterip-from-local-pod": {vppsvc: ptr(snatToLocal(webV4...)), deviation: cnat4HairpinSNAT},
	"dual-v4-clusterip-from-local-pod":   {vppsvc: ptr(snatToLocal(webV4...)), deviation: cnat4HairpinSNAT},
	"dns-udp-from-local-pod":             {vppsvc: ptr(snatToLocal(dnsV4...)), deviation: cnat4HairpinSNAT},
	"dns-tcp-from-local-pod":             {vppsvc: ptr(snatToLocal(dnsV4...)), deviation: cnat4HairpinSNAT},
	"dns-udp-from-remote-pod":            {vppsvc: ptr(snatToLocal(dnsV4...)), deviation: cnat4HairpinSNAT},
	"dns-udp-from-node":                  {vppsvc: ptr(snatToLocal(dnsV4...)), deviation: cnat4HairpinSNAT + "; kube-proxy masquerades the node to every endpoint"},

	// An external IP is an exclusive cnat VIP: cnat drops the address's
	// ports no translation holds.
	"externalip-other-port-untouched": {vppsvc: ptr(dropped()), deviation: "documented (docs/renderer-cnat4.md, as docs/renderer-ipv6.md, What is rendered): external IPs are exclusive cnat VIPs, so their other ports are dropped, where kube-proxy leaves them alone"},

	// ClientIP affinity is a hash of the source address (maglev), not a
	// record: the same client reaches the same endpoint, and the trace
	// lists every path as a candidate of the draw.
	"affinity-second-connection": {vppsvc: ptr(hashedSticky("affinity-first-connection", apiV4...)), deviation: cnat4Affinity},
	"affinity-third-connection":  {vppsvc: ptr(hashedSticky("affinity-first-connection", apiV4...)), deviation: cnat4Affinity},
}

const (
	cnat4HairpinSNAT = "documented (docs/renderer-cnat4.md, docs/renderer-ipv6.md, Hairpin): with hairpinSNAT, the default, every path to an endpoint on this node is source-NATed, not only a pod reaching itself"
	cnat4Affinity    = "documented (docs/renderer-ipv6.md, Session affinity): ClientIP affinity is cnat's maglev over the source address, with no timeout"
)

// hashedSticky is a flow of the client of flow first that must reach the
// endpoint first reached, one of endpoints.
func hashedSticky(first string, endpoints ...string) flowOutcome {
	o := forward(false, endpoints...)
	o.hashedSameAs = first
	return o
}

// TestSampleFlowsCNAT4 traces the same flows with the cnat IPv4 renderer.
func TestSampleFlowsCNAT4(t *testing.T) {
	exp := maps.Clone(sampleFlowExpectations)
	for name, d := range cnat4FlowDeviations {
		e := exp[name]
		e.vppsvc, e.deviation = d.vppsvc, d.deviation
		exp[name] = e
	}
	checkSampleFlows(t, exp, "--ipv4-renderer", "cnat")
}

// TestRenderIPv4RendererCNAT: --ipv4-renderer cnat renders the IPv4 half as
// cnat translations of the cnat4 renderer, and no NAT44-ED.
func TestRenderIPv4RendererCNAT(t *testing.T) {
	out, _, err := runCLI(t, "render", "-o", "vppcli", "--ipv4-renderer", "cnat")
	require.NoError(t, err)
	assert.Contains(t, out, "cnat translation add proto tcp real 192.168.16.1 30080")
	assert.Contains(t, out, "cnat4-filter-")
	assert.NotContains(t, out, "nat44")
}
