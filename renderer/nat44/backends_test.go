package nat44

import (
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

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
