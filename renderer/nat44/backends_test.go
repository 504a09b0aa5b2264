package nat44

import (
	"fmt"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestLBLocalsWeightsVRFsAndDuplicates(t *testing.T) {
	cfg := testConfig()
	cfg.LocalEndpointWeight, cfg.RemoteEndpointWeight, cfg.PodVRF, cfg.HostVRF = 5, 2, 1, 2
	got, left := lbLocals([]model.ServiceBackend{
		be("10.1.2.2:80"), be("10.1.1.2:80", "local"), be("10.1.2.2:80"), be("192.168.16.2:80", "hostnet"),
	}, &cfg, nil)
	// Weights 5, 2, 2 sum to 9: spread by 3 (weightSpread).
	want := []vppcfg.NAT44LBLocal{
		{Addr: ap("10.1.1.2:80"), Probability: 15, VRF: 1},
		{Addr: ap("10.1.2.2:80"), Probability: 6, VRF: 1},
		{Addr: ap("192.168.16.2:80"), Probability: 6, VRF: 2},
	}
	if left != 0 {
		t.Fatalf("%d endpoints left out", left)
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

// VPP sums an LB mapping's probabilities in 8 bits: the weights are spread
// only while the sum stays within 255, and endpoints past 255 are left out.
func TestLBLocalsStayWithinVPPs8BitSum(t *testing.T) {
	cfg := testConfig()
	backends := func(n int) []model.ServiceBackend {
		var bs []model.ServiceBackend
		for i := range n {
			bs = append(bs, be(fmt.Sprintf("10.2.%d.%d:80", i/250, i%250+1)))
		}
		return bs
	}
	for _, c := range []struct {
		n, want, weight, left int
	}{
		{2, 2, 3, 0}, {85, 85, 3, 0}, {86, 86, 1, 0}, {255, 255, 1, 0}, {256, 255, 1, 1}, {300, 255, 1, 45},
	} {
		got, left := lbLocals(backends(c.n), &cfg, nil)
		sum := 0
		for _, l := range got {
			sum += int(l.Probability)
		}
		if len(got) != c.want || int(got[0].Probability) != c.weight || left != c.left || sum > vppcfg.MaxLBProbabilitySum {
			t.Errorf("%d endpoints: %d locals of weight %d (sum %d), %d left out; want %d of weight %d, %d left out",
				c.n, len(got), got[0].Probability, sum, left, c.want, c.weight, c.left)
		}
	}
}
