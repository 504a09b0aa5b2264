package nat44

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
)

func TestDefaultConfigNeedsOnlyTheTwiceNATAddress(t *testing.T) {
	cfg := DefaultConfig()
	err := cfg.Validate()
	var fe *renderer.FieldError
	if !errors.As(err, &fe) || fe.Field != "twiceNATAddress" {
		t.Fatalf("DefaultConfig().Validate() = %v, want a twiceNATAddress error", err)
	}
	cfg.TwiceNATAddress = nodeIP
	if err := cfg.Validate(); err != nil {
		t.Fatalf("DefaultConfig with twiceNATAddress is invalid: %v", err)
	}
}

func TestValidateNamesBadFields(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		fields []string
	}{
		{"IPv6 twice-NAT address", func(c *Config) { c.TwiceNATAddress = nodeIP6 }, []string{"twiceNATAddress"}},
		{"zero weights", func(c *Config) { c.LocalEndpointWeight, c.RemoteEndpointWeight = 0, 0 },
			[]string{"localEndpointWeight", "remoteEndpointWeight"}},
		{"weight above 255", func(c *Config) { c.RemoteEndpointWeight = 256 }, []string{"remoteEndpointWeight"}},
		{"no filter shard", func(c *Config) { c.ACLShards = 0 }, []string{"aclShards"}},
		{"any-VRF marker", func(c *Config) { c.PodVRF, c.HostVRF = ^uint32(0), ^uint32(0) }, []string{"podVRF", "hostVRF"}},
		{"egress SNAT without interface and address", func(c *Config) { c.EgressSNAT.Enabled = true },
			[]string{"egressSNAT.interface", "egressSNAT.address"}},
		{"egress SNAT with bad identity ports", func(c *Config) {
			c.EgressSNAT = EgressSNAT{Enabled: true, Interface: "uplink0", Address: netip.MustParseAddr("fd00::1"),
				IdentityPorts: []PortProtocol{{0, "udp"}, {53, "sctp"}}}
		}, []string{"egressSNAT.address", "egressSNAT.identityPorts[0].port", "egressSNAT.identityPorts[1].protocol"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			tt.mutate(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatal("Validate accepted the config")
			}
			var got []string
			collectFields(err, &got)
			if strings.Join(got, ",") != strings.Join(tt.fields, ",") {
				t.Fatalf("bad fields = %v, want %v (error: %v)", got, tt.fields, err)
			}
		})
	}
}

func collectFields(err error, out *[]string) {
	if fe, ok := err.(*renderer.FieldError); ok {
		*out = append(*out, fe.Field)
		return
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			collectFields(e, out)
		}
	case interface{ Unwrap() error }:
		collectFields(u.Unwrap(), out)
	}
}

func TestConfigFromYAML(t *testing.T) {
	cfg := DefaultConfig()
	doc := `
twiceNATAddress: 192.168.16.1
localEndpointWeight: 4
hostVRF: 2
timeouts:
  udp: 30
egressSNAT:
  enabled: true
  interface: uplink0
  address: 192.168.16.1
`
	if err := renderer.DecodeConfig([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.TwiceNATAddress != nodeIP || cfg.LocalEndpointWeight != 4 || cfg.RemoteEndpointWeight != 1 ||
		cfg.HostVRF != 2 || cfg.Timeouts.UDP != 30 || !cfg.EgressSNAT.Enabled ||
		len(cfg.EgressSNAT.IdentityPorts) != 1 || cfg.EgressSNAT.IdentityPorts[0] != (PortProtocol{4789, "udp"}) {
		t.Fatalf("decoded %+v", cfg)
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	if _, err := New(renderertest.NewClient(Name), DefaultConfig(), nil); err == nil {
		t.Fatal("New accepted a config without twiceNATAddress")
	}
	if _, err := New(nil, testConfig(), nil); err == nil {
		t.Fatal("New accepted a nil client")
	}
}
