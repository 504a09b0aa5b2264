package model

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// ep builds a backend from "ip:port" and flags "local", "term".
func ep(addr string, flags ...string) ServiceBackend {
	a := netip.MustParseAddrPort(addr)
	b := ServiceBackend{IP: a.Addr(), Port: a.Port()}
	for _, f := range flags {
		switch f {
		case "local":
			b.Local = true
		case "term":
			b.Terminating = true
		default:
			panic("unknown flag " + f)
		}
	}
	return b
}

func addrs(list []ServiceBackend) string {
	s := make([]string, len(list))
	for i, b := range list {
		s[i] = b.AddrPort().String()
	}
	return strings.Join(s, " ")
}

func TestClusterAndLocalBackends(t *testing.T) {
	tests := []struct {
		name     string
		backends []ServiceBackend
		cluster  string
		local    string
	}{
		{
			name:     "ready endpoints only",
			backends: []ServiceBackend{ep("10.1.1.2:80", "local"), ep("10.1.2.2:80")},
			cluster:  "10.1.1.2:80 10.1.2.2:80",
			local:    "10.1.1.2:80",
		},
		{
			name:     "terminating endpoints are not used while one is ready",
			backends: []ServiceBackend{ep("10.1.1.2:80", "local", "term"), ep("10.1.1.3:80", "local"), ep("10.1.2.2:80", "term")},
			cluster:  "10.1.1.3:80",
			local:    "10.1.1.3:80",
		},
		{
			name:     "nothing ready anywhere: the cluster and local sets fall back to terminating endpoints",
			backends: []ServiceBackend{ep("10.1.1.2:80", "local", "term"), ep("10.1.2.2:80", "term")},
			cluster:  "10.1.1.2:80 10.1.2.2:80",
			local:    "10.1.1.2:80",
		},
		{
			name:     "Local policy: one local terminating and one remote ready endpoint (KEP-1669 per category)",
			backends: []ServiceBackend{ep("10.1.1.2:80", "local", "term"), ep("10.1.2.2:80")},
			cluster:  "10.1.2.2:80",
			local:    "10.1.1.2:80",
		},
		{
			name:     "no local endpoint at all: the local set is empty, whatever the cluster has",
			backends: []ServiceBackend{ep("10.1.2.2:80"), ep("10.1.2.3:80", "term")},
			cluster:  "10.1.2.2:80",
			local:    "",
		},
		{
			name: "the fallback is per family: IPv6 falls back while IPv4 is ready",
			backends: []ServiceBackend{
				ep("10.1.1.2:80", "local"), ep("10.1.2.2:80", "term"),
				ep("[fd00:1:1::2]:80", "local", "term"), ep("[fd00:1:2::2]:80", "term"),
			},
			cluster: "10.1.1.2:80 [fd00:1:1::2]:80 [fd00:1:2::2]:80",
			local:   "10.1.1.2:80 [fd00:1:1::2]:80",
		},
		{
			name:     "no backends",
			backends: nil,
			cluster:  "",
			local:    "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &ContivService{Ports: []NamedPort{{Name: "http", Backends: tt.backends}}}
			before := slices.Clone(tt.backends)
			if got := addrs(svc.ClusterBackends("http")); got != tt.cluster {
				t.Errorf("ClusterBackends = [%s], want [%s]", got, tt.cluster)
			}
			if got := addrs(svc.LocalBackends("http")); got != tt.local {
				t.Errorf("LocalBackends = [%s], want [%s]", got, tt.local)
			}
			if !slices.EqualFunc(before, svc.Backends("http"), ServiceBackend.Equal) {
				t.Error("the helpers changed Backends")
			}
			if got := svc.ClusterBackends("other"); got != nil {
				t.Errorf("an unknown port has backends %v", got)
			}
		})
	}
}

func TestBackendSetsKeepFlags(t *testing.T) {
	svc := &ContivService{Ports: []NamedPort{{Backends: []ServiceBackend{ep("10.1.1.2:80", "local", "term")}}}}
	got := svc.LocalBackends("")
	if len(got) != 1 || !got[0].Terminating || !got[0].Local {
		t.Fatalf("LocalBackends = %v, want the local terminating endpoint with its flags", got)
	}
}
