package nat44

import (
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestServingBackends(t *testing.T) {
	tests := []struct {
		name      string
		in        []model.ServiceBackend
		localOnly bool
		want      []string
	}{
		{"ready only", []model.ServiceBackend{be("10.1.1.2:80", "local"), be("10.1.2.2:80", "term")}, false, []string{"10.1.1.2:80"}},
		{"terminating when none ready", []model.ServiceBackend{be("10.1.1.2:80", "term"), be("10.1.2.2:80", "term")}, false, []string{"10.1.1.2:80", "10.1.2.2:80"}},
		{"local only", []model.ServiceBackend{be("10.1.1.2:80", "local"), be("10.1.2.2:80")}, true, []string{"10.1.1.2:80"}},
		{"local terminating before remote ready", []model.ServiceBackend{be("10.1.1.2:80", "local", "term"), be("10.1.2.2:80")}, true, []string{"10.1.1.2:80"}},
		{"IPv6 and port 0 ignored", []model.ServiceBackend{be("[fd00::2]:80"), {IP: ip("10.1.2.3")}, be("10.1.2.2:80")}, false, []string{"10.1.2.2:80"}},
		{"IPv4-mapped IPv6 unmapped", []model.ServiceBackend{be("[::ffff:10.1.2.2]:80")}, false, []string{"10.1.2.2:80"}},
		{"none", nil, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ServingBackends(tt.in, tt.localOnly)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i, b := range got {
				if b.AddrPort().String() != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestLBLocalsWeightsVRFsAndDuplicates(t *testing.T) {
	cfg := testConfig()
	cfg.LocalEndpointWeight, cfg.RemoteEndpointWeight, cfg.PodVRF, cfg.HostVRF = 5, 2, 1, 2
	got := lbLocals([]model.ServiceBackend{
		be("10.1.2.2:80"), be("10.1.1.2:80", "local"), be("10.1.2.2:80"), be("192.168.16.2:80", "hostnet"),
	}, &cfg)
	want := []vppcfg.NAT44LBLocal{
		{Addr: ap("10.1.1.2:80"), Probability: 5, VRF: 1},
		{Addr: ap("10.1.2.2:80"), Probability: 2, VRF: 1},
		{Addr: ap("192.168.16.2:80"), Probability: 2, VRF: 2},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
