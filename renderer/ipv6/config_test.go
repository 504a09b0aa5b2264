package ipv6

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/renderer"
)

func TestDefaultConfigNeedsOnlyTheSNATAddress(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.LoadBalancing != LBDefault || cfg.HairpinSNAT != HairpinSNATLocalPaths || cfg.ACLShards != renderer.DefaultACLShards ||
		!slices.Equal(cfg.UplinkInterfaces, []string{"uplink0"}) {
		t.Fatalf("DefaultConfig() = %+v, want loadBalancing default, hairpinSNAT true and uplink0", cfg)
	}
	var fe *renderer.FieldError
	if err := cfg.Validate(); !errors.As(err, &fe) || fe.Field != "snatAddress" {
		t.Fatalf("DefaultConfig().Validate() = %v, want a snatAddress error", err)
	}
	cfg.SNATAddress = nodeIP6
	must(t, cfg.Validate())
}

func TestValidateNamesBadFields(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		fields []string
	}{
		{"IPv4 SNAT address", func(c *Config) { c.SNATAddress = ip("192.168.16.1") }, []string{"snatAddress"}},
		{"IPv4-mapped SNAT address", func(c *Config) { c.SNATAddress = ip("::ffff:192.168.16.1") }, []string{"snatAddress"}},
		{"unspecified SNAT address", func(c *Config) { c.SNATAddress = ip("::") }, []string{"snatAddress"}},
		{"link-local SNAT address", func(c *Config) { c.SNATAddress = ip("fe80::1") }, []string{"snatAddress"}},
		{"unknown LB algorithm", func(c *Config) { c.LoadBalancing = "random" }, []string{"loadBalancing"}},
		{"too many filter shards", func(c *Config) { c.ACLShards = renderer.MaxACLShards + 1 }, []string{"aclShards"}},
		{"unknown hairpin mode", func(c *Config) { c.HairpinSNAT = "sometimes" }, []string{"hairpinSNAT"}},
		{"hairpin-only without uplinks", func(c *Config) { c.HairpinSNAT, c.UplinkInterfaces = HairpinSNATOnly, nil }, []string{"uplinkInterfaces"}},
		{"everything wrong at once", func(c *Config) { c.SNATAddress, c.LoadBalancing = ip("::1"), "" },
			[]string{"snatAddress", "loadBalancing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			tt.mutate(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatal("Validate accepted the config")
			}
			if !strings.Contains(err.Error(), "invalid ipv6 renderer config") {
				t.Fatalf("error %q does not name the renderer", err)
			}
			var got []string
			collectFields(err, &got)
			if !slices.Equal(got, tt.fields) {
				t.Fatalf("bad fields = %v, want %v (error: %v)", got, tt.fields, err)
			}
		})
	}
}

// collectFields appends the Field of every FieldError in err's tree.
func collectFields(err error, out *[]string) {
	var fe *renderer.FieldError
	if errors.As(err, &fe) && err == error(fe) {
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

func TestDecodeConfigYAML(t *testing.T) {
	cfg := DefaultConfig()
	doc := "snatAddress: fd00:16::1\nloadBalancing: maglev\nhairpinSNAT: false\naclShards: 16\n"
	must(t, renderer.DecodeConfig([]byte(doc), &cfg))
	want := Config{SNATAddress: nodeIP6, LoadBalancing: LBMaglev, HairpinSNAT: HairpinSNATOff, ACLShards: 16, UplinkInterfaces: []string{"uplink0"}}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("decoded %+v, want %+v", cfg, want)
	}
	must(t, cfg.Validate())

	cfg = DefaultConfig()
	must(t, renderer.DecodeConfig([]byte("snatAddress: fd00:16::1\n"), &cfg))
	if cfg.LoadBalancing != LBDefault || cfg.HairpinSNAT != HairpinSNATLocalPaths || cfg.ACLShards != renderer.DefaultACLShards {
		t.Fatalf("absent fields lost their defaults: %+v", cfg)
	}
	if err := renderer.DecodeConfig([]byte("snatAdress: fd00:16::1\n"), &cfg); err == nil {
		t.Fatal("a misspelt field was accepted")
	}
}

// hairpinSNAT keeps its boolean form and takes "hairpin-only"; it is written
// back the way it is read.
func TestDecodeHairpinSNAT(t *testing.T) {
	for doc, want := range map[string]HairpinSNAT{
		"hairpinSNAT: true":               HairpinSNATLocalPaths,
		"hairpinSNAT: false":              HairpinSNATOff,
		"hairpinSNAT: hairpin-only":       HairpinSNATOnly,
		`{"hairpinSNAT": "hairpin-only"}`: HairpinSNATOnly,
	} {
		cfg := DefaultConfig()
		must(t, renderer.DecodeConfig([]byte(doc), &cfg))
		if cfg.HairpinSNAT != want {
			t.Errorf("%s: decoded %q, want %q", doc, cfg.HairpinSNAT, want)
		}
		out, err := json.Marshal(cfg.HairpinSNAT)
		must(t, err)
		var back HairpinSNAT
		must(t, json.Unmarshal(out, &back))
		if back != want {
			t.Errorf("%s: written as %s, read back as %q", doc, out, back)
		}
	}
	cfg := DefaultConfig()
	if err := renderer.DecodeConfig([]byte("hairpinSNAT: 3\n"), &cfg); err == nil {
		t.Error("hairpinSNAT: 3 was accepted")
	}
	cfg = DefaultConfig()
	must(t, renderer.DecodeConfig([]byte("snatAddress: fd00:16::1\nhairpinSNAT: sometimes\n"), &cfg))
	var fe *renderer.FieldError
	if err := cfg.Validate(); !errors.As(err, &fe) || fe.Field != "hairpinSNAT" {
		t.Errorf("hairpinSNAT: sometimes: Validate = %v, want a hairpinSNAT error", err)
	}
}
