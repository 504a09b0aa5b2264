package main

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/simnode"
	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/realvpp"
)

// flowOutcome is what a flow of testdata/sample-flows.yaml should do.
type flowOutcome struct {
	verdict   string
	endpoints []string // every endpoint the packet may reach, sorted by address
	snat      bool
	replyOK   bool
	// hairpin: the client is itself an endpoint of the service; its source
	// must be translated exactly when it is sent to itself (kube-proxy's
	// hairpin masquerade), whichever endpoint is drawn.
	hairpin bool
	// snatToLocal: the source is translated exactly when the endpoint drawn
	// runs on this node (the IPv6 renderer's hairpinSNAT).
	snatToLocal bool
	// sameEndpointAs names an earlier flow of the same client: session
	// affinity must send this one to the endpoint that one reached, and to
	// that endpoint only.
	sameEndpointAs string
	// hashedSameAs names an earlier flow of the same client whose endpoint
	// this one must reach, among the candidates of endpoints: cnat picks
	// by a hash of the source address, not by an affinity record, so the
	// trace lists every path of the translation as a candidate.
	hashedSameAs string
}

// flowExpectation is one hand-written expectation: kube-proxy's outcome, and
// where vppsvc knowingly differs, its outcome and the reason.
type flowExpectation struct {
	kubeProxy flowOutcome
	// vppsvc, when set, is vppsvc's outcome where it differs from kube-proxy;
	// deviation says why (a documented design choice, or a bug report).
	vppsvc    *flowOutcome
	deviation string
}

func forward(snat bool, endpoints ...string) flowOutcome {
	return flowOutcome{verdict: "forward", endpoints: endpoints, snat: snat, replyOK: true}
}

func dropped() flowOutcome { return flowOutcome{verdict: "drop", endpoints: []string{}} }

func hairpin(endpoints ...string) flowOutcome {
	o := forward(false, endpoints...)
	o.hairpin = true
	return o
}

func snatToLocal(endpoints ...string) flowOutcome {
	o := forward(false, endpoints...)
	o.snatToLocal = true
	return o
}

func sticky(to string) flowOutcome {
	o := forward(false)
	o.sameEndpointAs = to
	return o
}

// Endpoint sets of the sample cluster.
var (
	webV4 = []string{"10.1.1.2:8080", "10.1.2.2:8080", "10.1.3.2:8080"} // web-a1 (local), web-b1, web-c1
	webV6 = []string{"[fd00:1:1::2]:8080", "[fd00:1:2::2]:8080", "[fd00:1:3::2]:8080"}
	apiV4 = []string{"10.1.2.4:8080", "10.1.3.4:8080"} // api-b1, api-c1: none on node-a
	dnsV4 = []string{"10.1.1.3:53", "10.1.2.3:53"}     // dns-a1 (local), dns-b1
	webA1 = "10.1.1.2:8080"
)

// Recorded deviations shared by several flows.
const (
	v6HairpinSNAT = "documented (docs/renderer-ipv6.md, Hairpin): with hairpinSNAT, the default, every path to an endpoint on this node is source-NATed, not only a pod reaching itself"
	nodeNoMasq    = "documented (docs/renderer-nat44.md, Differences from kube-proxy): ClusterIP mappings are self-twice-nat only, so the node's own traffic keeps its host-link source; kube-proxy masquerades every source outside the cluster CIDR. The reply of an endpoint on another node returns only if that node routes this node's host-link address back here (simnode gives every node 172.30.255.0/24)"
)

// sampleFlowExpectations are written by hand from the sample's address plan
// and Kubernetes semantics, kube-proxy (iptables mode, cluster CIDR known) as
// the reference; they were not copied from vppsvc's output. A forward flow's
// reply_ok is true when the reply, sent back by the endpoint, is translated
// back into the service's answer; snat is true when the endpoint sees another
// source than the client's.
var sampleFlowExpectations = map[string]flowExpectation{
	// ClusterIP: any ready endpoint, client address kept; a pod reaching
	// itself is masqueraded (hairpin).
	"clusterip-from-local-pod":  {kubeProxy: forward(false, webV4...)},
	"clusterip-from-node":       {kubeProxy: forward(true, webV4...), vppsvc: ptr(forward(false, webV4...)), deviation: nodeNoMasq},
	"clusterip-from-remote-pod": {kubeProxy: forward(false, webV4...)},
	"clusterip-hairpin":         {kubeProxy: hairpin(webV4...)},

	// NodePort, externalTrafficPolicy Cluster: any endpoint, always
	// masqueraded so that the reply comes back through this node.
	"nodeport-from-external":       {kubeProxy: forward(true, webV4...)},
	"nodeport-from-other-external": {kubeProxy: forward(true, webV4...)}, // no source ranges on this service
	"nodeport-from-local-pod":      {kubeProxy: forward(true, webV4...)},
	"nodeport-from-node":           {kubeProxy: forward(true, webV4...)},
	"nodeport-from-remote-pod":     {kubeProxy: forward(true, webV4...)},
	"nodeport-service-clusterip":   {kubeProxy: forward(false, webV4...)},

	// LoadBalancer with loadBalancerSourceRanges: only the LB IP is filtered,
	// for every client (pods and the node included); node port and ClusterIP
	// are not.
	"lb-from-allowed-client":             {kubeProxy: forward(true, webV4...)},
	"lb-from-denied-client":              {kubeProxy: dropped()},
	"lb-nodeport-ignores-source-ranges":  {kubeProxy: forward(true, webV4...)},
	"lb-from-local-pod-outside-ranges":   {kubeProxy: dropped()},
	"lb-from-node-outside-ranges":        {kubeProxy: dropped()},
	"lb-clusterip-ignores-source-ranges": {kubeProxy: forward(false, webV4...)},

	// externalTrafficPolicy Local: external clients reach only local
	// endpoints with their address kept; the ClusterIP is unaffected; pods
	// are short-circuited to the cluster-wide endpoints.
	"etp-local-nodeport-from-external":     {kubeProxy: forward(false, webA1)},
	"etp-local-lb-from-external":           {kubeProxy: forward(false, webA1)},
	"etp-local-clusterip-from-local-pod":   {kubeProxy: forward(false, webV4...)},
	"etp-local-nodeport-from-local-pod":    {kubeProxy: forward(false, webV4...)},
	"etp-local-nodeport-from-its-endpoint": {kubeProxy: hairpin(webV4...)},

	"etp-local-nodeport-no-local-endpoint":        {kubeProxy: dropped()},
	"etp-local-no-local-clusterip-from-local-pod": {kubeProxy: forward(false, apiV4...)},
	"etp-local-no-local-nodeport-from-local-pod":  {kubeProxy: forward(false, apiV4...)},

	// ExternalIPs: like a node port with policy Cluster (masqueraded), for
	// every client; other ports of the address are not the service's.
	"externalip-from-external":        {kubeProxy: forward(true, webV4...)},
	"externalip-from-local-pod":       {kubeProxy: forward(true, webV4...)},
	"externalip-other-port-untouched": {kubeProxy: forward(false, "203.0.113.20:443")},

	// Dual stack: each family has its own ClusterIP and node port.
	"dual-v4-clusterip-from-local-pod":  {kubeProxy: forward(false, webV4...)},
	"dual-v6-clusterip-from-local-pod":  {kubeProxy: forward(false, webV6...), vppsvc: ptr(snatToLocal(webV6...)), deviation: v6HairpinSNAT},
	"dual-v6-clusterip-hairpin":         {kubeProxy: hairpin(webV6...)},
	"dual-v6-nodeport-from-external":    {kubeProxy: forward(true, webV6...)},
	"dual-v4-nodeport-from-external":    {kubeProxy: forward(true, webV4...)},
	"dual-v6-clusterip-from-remote-pod": {kubeProxy: forward(false, webV6...), vppsvc: ptr(snatToLocal(webV6...)), deviation: v6HairpinSNAT},

	// sessionAffinity ClientIP: the first connection is balanced, later ones
	// of the same client go to the same endpoint; another client is balanced.
	"affinity-first-connection":  {kubeProxy: forward(false, apiV4...)},
	"affinity-second-connection": {kubeProxy: sticky("affinity-first-connection")},
	"affinity-third-connection":  {kubeProxy: sticky("affinity-first-connection")},
	"affinity-other-client":      {kubeProxy: forward(false, apiV4...)},

	// internalTrafficPolicy Local without a local endpoint: dropped for
	// every internal client, the node included.
	"itp-local-from-local-pod": {kubeProxy: dropped()},
	"itp-local-from-node":      {kubeProxy: dropped()},

	// No endpoints: kube-proxy rejects, vppsvc drops (docs/renderer-nat44.md,
	// "No endpoints: drop, not reject"); either way no endpoint is reached.
	"no-endpoints-from-local-pod": {kubeProxy: dropped()},
	"no-endpoints-from-external":  {kubeProxy: dropped()},

	// DNS: both protocols of the same ClusterIP and port.
	"dns-udp-from-local-pod":  {kubeProxy: forward(false, dnsV4...)},
	"dns-tcp-from-local-pod":  {kubeProxy: forward(false, dnsV4...)},
	"dns-udp-from-node":       {kubeProxy: forward(true, dnsV4...), vppsvc: ptr(forward(false, dnsV4...)), deviation: nodeNoMasq},
	"dns-udp-from-remote-pod": {kubeProxy: forward(false, dnsV4...)},

	// Not service traffic: untouched, to the original destination.
	"pod-to-local-pod-untouched":        {kubeProxy: forward(false, "10.1.1.2:8080")},
	"pod-to-remote-pod-untouched":       {kubeProxy: forward(false, "10.1.2.2:8080")},
	"remote-pod-to-local-pod-untouched": {kubeProxy: forward(false, "10.1.1.2:8080")},
	"v6-pod-to-remote-pod-untouched":    {kubeProxy: forward(false, "[fd00:1:2::2]:8080")},
	"external-to-node-port-22-untouched": {
		kubeProxy: flowOutcome{verdict: "local", endpoints: []string{"192.168.16.1:22"}},
	},
}

func ptr[T any](v T) *T { return &v }

// traced is one flow of trace -o json: the result, or a flow's error.
type traced struct {
	traceResult
	Error string `json:"error"`
}

// reached is the endpoint a forwarded flow was sent to (from "out").
func (t traced) reached() string {
	_, dst, _ := strings.Cut(t.Out, " -> ")
	return dst
}

// check compares a traced flow with an outcome; reachedBy holds the
// endpoint each earlier flow reached. A real VPP reports only the endpoint
// it chose, which must be one of the outcome's.
func (o flowOutcome) check(t traced, reachedBy map[string]string, isLocal func(netip.Addr) bool) []string {
	var diffs []string
	differ := func(field string, got, want any) {
		diffs = append(diffs, fmt.Sprintf("%s: got %v, want %v", field, got, want))
	}
	if t.Verdict != o.verdict {
		differ("verdict", t.Verdict, o.verdict)
	}
	wantEPs, wantSNAT := o.endpoints, o.snat
	if o.sameEndpointAs != "" {
		wantEPs = []string{reachedBy[o.sameEndpointAs]}
	}
	if first := reachedBy[o.hashedSameAs]; o.hashedSameAs != "" && t.reached() != first {
		differ("endpoint reached", t.reached(), first)
	}
	if o.hairpin || o.snatToLocal {
		to, err := netip.ParseAddrPort(t.reached())
		if err != nil {
			return append(diffs, fmt.Sprintf("no endpoint reached (out %q)", t.Out))
		}
		if o.hairpin {
			wantSNAT = to.Addr() == netip.MustParseAddrPort(t.Src).Addr()
		} else {
			wantSNAT = isLocal(to.Addr())
		}
	}
	switch {
	case dataplane.OnRealVPP() && t.Verdict == "forward":
		if len(t.Endpoints) != 1 || !slices.Contains(wantEPs, t.Endpoints[0]) {
			differ("endpoint", t.Endpoints, wantEPs)
		}
	case !slices.Equal(t.Endpoints, wantEPs):
		differ("endpoints", t.Endpoints, wantEPs)
	}
	if t.SNAT != wantSNAT {
		differ("snat", t.SNAT, wantSNAT)
	}
	if t.ReplyOK != o.replyOK {
		differ("reply_ok", t.ReplyOK, o.replyOK)
	}
	return diffs
}

// TestSampleFlows traces the 40+ flows of testdata/sample-flows.yaml over the
// embedded cluster in one run and checks each against its hand-written
// expectation.
func TestSampleFlows(t *testing.T) { checkSampleFlows(t, sampleFlowExpectations) }

// checkSampleFlows traces the flows with the extra trace arguments and
// checks each against its expectation.
func checkSampleFlows(t *testing.T, expectations map[string]flowExpectation, extraArgs ...string) {
	data, err := os.ReadFile("testdata/sample-flows.yaml")
	require.NoError(t, err)
	var specs []struct {
		Name string `json:"name"`
	}
	require.NoError(t, yaml.Unmarshal(data, &specs))
	require.GreaterOrEqual(t, len(specs), 40)

	// On a real VPP (make test-realvpp) the same flows cross VPP's graph.
	args := append([]string{"trace", "--flows", "testdata/sample-flows.yaml", "-o", "json"}, extraArgs...)
	if socket := os.Getenv(dataplane.SocketEnv); socket != "" {
		args = append(args, "--vpp-socket", socket)
		t.Cleanup(func() { resetRealVPP(t, socket) })
	}
	out, _, err := runCLI(t, args...)
	require.NoError(t, err)
	var results []traced
	require.NoError(t, json.Unmarshal([]byte(out), &results))
	require.Len(t, results, len(specs))

	plan := samplePlan(t)
	isLocal := func(a netip.Addr) bool { return strings.HasPrefix(plan.IngressFor(a), "tap-") }
	reachedBy := map[string]string{}
	seen := map[string]bool{}
	for i, r := range results {
		require.Equal(t, specs[i].Name, r.Name, "results come in file order")
		require.Empty(t, r.Error, r.Name)
		seen[r.Name] = true
		exp, ok := expectations[r.Name]
		if !assert.True(t, ok, "flow %s has no expectation", r.Name) {
			continue
		}
		if r.Verdict == "forward" {
			reachedBy[r.Name] = r.reached()
			// The packet leaves where the endpoint it reached lives.
			assert.Equal(t, plan.IngressFor(netip.MustParseAddrPort(r.reached()).Addr()), r.Egress, "%s: egress", r.Name)
		}
		assert.Equal(t, plan.IngressFor(netip.MustParseAddrPort(r.Src).Addr()), r.Ingress, "%s: ingress", r.Name)

		diffs := exp.kubeProxy.check(r, reachedBy, isLocal)
		asRecorded := exp.vppsvc != nil && len(exp.vppsvc.check(r, reachedBy, isLocal)) == 0
		switch {
		case len(diffs) == 0 && exp.vppsvc != nil && !asRecorded:
			// A deviation that no longer happens would excuse it coming back.
			t.Errorf("%s: behaves as kube-proxy now, not as recorded: drop the recorded deviation (%s)", r.Name, exp.deviation)
		case len(diffs) == 0:
		case asRecorded:
			t.Logf("%s: differs from kube-proxy as recorded: %s", r.Name, exp.deviation)
		default:
			t.Errorf("%s: %s\nsteps:\n  %s", r.Name, strings.Join(diffs, "; "), strings.Join(r.Steps, "\n  "))
		}
	}
	for name := range expectations {
		assert.True(t, seen[name], "expectation %s has no flow in the file", name)
	}
}

// resetRealVPP removes the simulated node trace left in the real VPP.
func resetRealVPP(t *testing.T, socket string) {
	n, err := realvpp.Open(socket, realvpp.Options{})
	if err != nil {
		t.Errorf("resetting the real VPP: %v", err)
		return
	}
	if err := n.Close(); err != nil {
		t.Errorf("resetting the real VPP: %v", err)
	}
}

// samplePlan is the simulated node-a, to infer interfaces the way trace does.
func samplePlan(t *testing.T) *simnode.Plan {
	t.Helper()
	c, err := loadCluster("", nil)
	require.NoError(t, err)
	p, err := simnode.Build(c.Nodes, c.Pods, "")
	require.NoError(t, err)
	return p
}
