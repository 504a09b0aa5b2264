package renderer

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type testConfig struct {
	Addr    netip.Addr `json:"addr" yaml:"addr"`
	Weight  int        `json:"weight" yaml:"weight"`
	Enabled bool       `json:"enabled" yaml:"enabled"`
}

func TestDecodeConfigKeepsDefaults(t *testing.T) {
	cfg := testConfig{Weight: 7}
	if err := DecodeConfig([]byte("addr: 10.0.0.1\n"), &cfg); err != nil {
		t.Fatal(err)
	}
	want := testConfig{Addr: netip.MustParseAddr("10.0.0.1"), Weight: 7}
	if cfg != want {
		t.Fatalf("got %+v, want %+v", cfg, want)
	}
}

func TestDecodeConfigIsStrict(t *testing.T) {
	var cfg testConfig
	err := DecodeConfig([]byte("wieght: 3\n"), &cfg)
	if err == nil || !strings.Contains(err.Error(), "wieght") {
		t.Fatalf("want an error naming the unknown field, got %v", err)
	}
}

func TestLoadConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg.yaml")
	if err := os.WriteFile(path, []byte("enabled: true\nweight: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg testConfig
	if err := LoadConfigFile(path, &cfg); err != nil {
		t.Fatal(err)
	}
	if !cfg.Enabled || cfg.Weight != 2 {
		t.Fatalf("got %+v", cfg)
	}
	if err := LoadConfigFile(filepath.Join(t.TempDir(), "missing.yaml"), &cfg); err == nil {
		t.Fatal("want an error for a missing file")
	}
}

func TestJoinFieldErrors(t *testing.T) {
	if err := JoinFieldErrors("nat44", nil, nil); err != nil {
		t.Fatalf("want nil, got %v", err)
	}
	err := JoinFieldErrors("nat44", FieldErrorf("a.b", "must be %d", 1), nil, FieldErrorf("c", "required"))
	if err == nil {
		t.Fatal("want an error")
	}
	msg := err.Error()
	for _, want := range []string{"invalid nat44 renderer config", "a.b: must be 1", "c: required"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("%q does not contain %q", msg, want)
		}
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "a.b" {
		t.Fatalf("errors.As did not find the first FieldError: %v", fe)
	}
}
