package nat44

import (
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func role(ifName string, r vppcfg.NAT44Role) *vppcfg.NAT44Interface {
	return &vppcfg.NAT44Interface{Interface: ifName, Role: r}
}

func TestRenderNode(t *testing.T) {
	global := &vppcfg.NAT44Global{Forwarding: true}
	twicePool := &vppcfg.NAT44Address{Addr: nodeIP, TwiceNAT: true, VRF: vppcfg.AnyVRF}
	roles := []vppcfg.Item{
		role("host0", vppcfg.NAT44Outside), role("tap1", vppcfg.NAT44Outside), role("tap2", vppcfg.NAT44Outside),
		role("tap1", vppcfg.NAT44Inside),
	}
	// The short-circuit of internal clients: cnat's feature nodes on every
	// frontend interface but the uplink.
	var internal []vppcfg.Item
	for _, ifName := range []string{"host0", "tap1", "tap2"} {
		internal = append(internal, shortCircuitFeatures(ifName)...)
	}
	scNode := testNode()
	scNode.ShortCircuit = true
	egress := func(c *Config) {
		c.EgressSNAT = EgressSNAT{
			Enabled: true, Interface: "uplink0", Address: nodeIP,
			IdentityPorts: []PortProtocol{{4789, "udp"}, {179, "TCP"}, {4789, "udp"}},
		}
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		node   Node
		want   []vppcfg.Item
	}{
		{
			name: "defaults: forwarding on, twice-NAT pool, outside on frontends, inside on backends",
			node: testNode(),
			want: append([]vppcfg.Item{global, twicePool, role("uplink0", vppcfg.NAT44Outside)}, roles...),
		},
		{
			name: "a service needs the short-circuit: cnat's feature nodes on the internal frontend interfaces",
			node: scNode,
			want: append(append([]vppcfg.Item{global, twicePool, role("uplink0", vppcfg.NAT44Outside)}, roles...), internal...),
		},
		{
			name:   "short-circuit off: no uplink interfaces configured",
			mutate: func(c *Config) { c.UplinkInterfaces = nil },
			node:   scNode,
			want:   append([]vppcfg.Item{global, twicePool, role("uplink0", vppcfg.NAT44Outside)}, roles...),
		},
		{
			name:   "short-circuit off: the configured uplink is not a frontend (a wrong name must not make external clients internal)",
			mutate: func(c *Config) { c.UplinkInterfaces = []string{"eth0"} },
			node:   scNode,
			want:   append([]vppcfg.Item{global, twicePool, role("uplink0", vppcfg.NAT44Outside)}, roles...),
		},
		{
			name: "VRFs, session limit and timeouts from the config",
			mutate: func(c *Config) {
				c.PodVRF, c.HostVRF, c.SessionLimit = 1, 2, 100000
				c.Timeouts = Timeouts{UDP: 30, TCPEstablished: 3600, TCPTransitory: 60, ICMP: 10}
			},
			node: Node{},
			want: []vppcfg.Item{
				&vppcfg.NAT44Global{InsideVRF: 1, OutsideVRF: 2, SessionLimit: 100000, Forwarding: true,
					Timeouts: vppcfg.NAT44Timeouts{UDP: 30, TCPEstablished: 3600, TCPTransitory: 60, ICMP: 10}},
				twicePool,
			},
		},
		{
			name:   "egress SNAT: node IP in the pool, output role instead of outside on the uplink, identity ports",
			mutate: egress,
			node:   scNode,
			want: append([]vppcfg.Item{
				global, twicePool,
				&vppcfg.NAT44Address{Addr: nodeIP, VRF: vppcfg.AnyVRF},
				role("uplink0", vppcfg.NAT44Output),
				&vppcfg.NAT44IdentityMapping{Addr: nodeIP, Port: 4789, Protocol: vppcfg.ProtoUDP, Label: egressLabel},
				&vppcfg.NAT44IdentityMapping{Addr: nodeIP, Port: 179, Protocol: vppcfg.ProtoTCP, Label: egressLabel},
			}, append(roles, internal...)...),
		},
		{
			name: "egress SNAT: its interface is an uplink even when not listed",
			mutate: func(c *Config) {
				egress(c)
				c.UplinkInterfaces = []string{"other0"}
			},
			node: Node{FrontendIfs: model.NewInterfaces("uplink0", "tap1"), ShortCircuit: true},
			want: append([]vppcfg.Item{
				global, twicePool,
				&vppcfg.NAT44Address{Addr: nodeIP, VRF: vppcfg.AnyVRF},
				role("uplink0", vppcfg.NAT44Output), role("tap1", vppcfg.NAT44Outside),
				&vppcfg.NAT44IdentityMapping{Addr: nodeIP, Port: 4789, Protocol: vppcfg.ProtoUDP, Label: egressLabel},
				&vppcfg.NAT44IdentityMapping{Addr: nodeIP, Port: 179, Protocol: vppcfg.ProtoTCP, Label: egressLabel},
			}, shortCircuitFeatures("tap1")...),
		},
		{
			name:   "egress SNAT: the uplink never gets the inside role either",
			mutate: egress,
			node:   Node{BackendIfs: model.NewInterfaces("uplink0", "tap1")},
			want: []vppcfg.Item{
				global, twicePool,
				&vppcfg.NAT44Address{Addr: nodeIP, VRF: vppcfg.AnyVRF},
				role("uplink0", vppcfg.NAT44Output),
				&vppcfg.NAT44IdentityMapping{Addr: nodeIP, Port: 4789, Protocol: vppcfg.ProtoUDP, Label: egressLabel},
				&vppcfg.NAT44IdentityMapping{Addr: nodeIP, Port: 179, Protocol: vppcfg.ProtoTCP, Label: egressLabel},
				role("tap1", vppcfg.NAT44Inside),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			if tt.mutate != nil {
				tt.mutate(&cfg)
			}
			assertItems(t, RenderNode(tt.node, &cfg), renderer.SortItems(tt.want))
		})
	}
}
