package processor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestParseNodePortAddresses(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
		err  string
	}{
		{in: nil, want: "primary"},
		{in: []string{""}, want: "primary"},
		{in: []string{"primary"}, want: "primary"},
		{in: []string{"192.168.0.0/16", "fd00::/8"}, want: "192.168.0.0/16,fd00::/8"},
		{in: []string{"192.168.1.7/16"}, want: "192.168.0.0/16"},
		{in: []string{"0.0.0.0/0"}, want: "0.0.0.0/0"},
		{in: []string{"primary", "10.0.0.0/8"}, err: "cannot be combined"},
		{in: []string{"10.0.0.1"}, err: "neither a CIDR"},
		{in: []string{"eth0"}, err: "neither a CIDR"},
		{in: []string{"10.0.0.0/33"}, err: `"10.0.0.0/33" is neither a CIDR nor "primary": prefix length out of range`},
	} {
		n, err := ParseNodePortAddresses(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%q", tc.in)
			continue
		}
		require.NoError(t, err, "%q", tc.in)
		assert.Equal(t, tc.want, n.String(), "%q", tc.in)
	}
}

// thisNodeWith returns this node with the given addresses, in order.
func thisNodeWith(addrs ...corev1.NodeAddress) *corev1.Node {
	return makeNode(thisNode, "", thisZone, func(n *corev1.Node) { n.Status.Addresses = addrs })
}

func internalIP(ip string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip}
}

func externalIP(ip string) corev1.NodeAddress {
	return corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: ip}
}

func TestNodePortAddressesSelectThisNodesAddresses(t *testing.T) {
	dual := thisNodeWith(externalIP("203.0.113.1"), internalIP("192.168.0.1"), internalIP("192.168.0.9"),
		corev1.NodeAddress{Type: corev1.NodeHostName, Address: "node-a"}, internalIP("fd00::1"), internalIP("fd00::9"))
	for _, tc := range []struct {
		name  string
		flag  []string
		node  *corev1.Node
		want  string
		other string
	}{
		{name: "primary: the first InternalIP of each family", node: dual, want: "{192.168.0.1,fd00::1}"},
		{name: "primary falls back to the ExternalIP", node: thisNodeWith(externalIP("203.0.113.1"), internalIP("fd00::1")), want: "{203.0.113.1,fd00::1}"},
		{name: "CIDRs select every address inside", flag: []string{"192.168.0.0/24"}, node: dual, want: "{192.168.0.1,192.168.0.9}"},
		{name: "all addresses", flag: []string{"0.0.0.0/0", "::/0"}, node: dual, want: "{192.168.0.1,192.168.0.9,203.0.113.1,fd00::1,fd00::9}"},
		{name: "a CIDR matching nothing answers nowhere", flag: []string{"10.0.0.0/8"}, node: dual, want: "{}"},
		{name: "this node unknown answers nowhere", node: makeNode("node-b", "192.168.0.2", "zone-b"), want: "{}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			npa, err := ParseNodePortAddresses(tc.flag)
			require.NoError(t, err)
			p := New(Config{NodeName: thisNode, Logger: newQuietLogger(), NodePortAddresses: npa})
			r := newRecorder()
			p.RegisterRenderer("rec", r)
			np := makeService("default", "np", withClusterIPs("10.96.0.1"), withType(corev1.ServiceTypeNodePort),
				withPorts(svcPort("http", corev1.ProtocolTCP, 80, 30080)))
			p.Resync(Snapshot{Services: []*corev1.Service{np}, Nodes: []*corev1.Node{tc.node, makeNode("node-c", "192.168.0.3", "zone-c")}})
			assert.Equal(t, tc.want, p.NodePortIPs().String())
			assert.Contains(t, p.NodeIPs().String(), "192.168.0.3", "NodeIPs still lists every node")
			r.mu.Lock()
			defer r.mu.Unlock()
			assert.Equal(t, tc.want, r.nodeIPs.String(), "the renderer's Resync gets the same addresses")
		})
	}
}

func TestNodePortAddressesFollowThisNode(t *testing.T) {
	np := makeService("default", "np", withClusterIPs("10.96.0.1"), withType(corev1.ServiceTypeNodePort),
		withPorts(svcPort("http", corev1.ProtocolTCP, 80, 30080)))
	p, r := startedProcessor(t, Snapshot{
		Services: []*corev1.Service{np},
		Nodes:    []*corev1.Node{thisNodeWith(internalIP("192.168.0.1"))},
	})
	p.UpdateNode(thisNodeWith(internalIP("192.168.0.1"), internalIP("192.168.0.5")))
	assert.Empty(t, r.takeCalls(), "a second InternalIP is not primary")
	p.UpdateNode(thisNodeWith(internalIP("192.168.0.1"), internalIP("192.168.0.5"), internalIP("fd00::1")))
	assert.Equal(t, []string{"nodeports {192.168.0.1,fd00::1} [default/np]"}, r.takeCalls(), "an IPv6 primary appears")
	p.UpdateNode(thisNodeWith(internalIP("192.168.0.5"), internalIP("fd00::1")))
	assert.Equal(t, []string{"nodeports {192.168.0.5,fd00::1} [default/np]"}, r.takeCalls(), "the primary moves")
	p.UpdateNode(makeNode("node-b", "192.168.0.2", "zone-b"))
	assert.Empty(t, r.takeCalls(), "other nodes answer their own node ports")
	requireNoViolations(t, r)
}
