package topology

import (
	"slices"
	"testing"
)

func TestParseKinds(t *testing.T) {
	cases := []struct {
		in      string
		want    []Kind
		wantErr bool
	}{
		{in: "", want: DefaultKinds},
		{in: "vpp,kernel", want: []Kind{KindVPP, KindKernel}},
		{in: " Kernel , VPP ,kernel", want: []Kind{KindKernel, KindVPP, KindKernel}},
		{in: "kernel", want: []Kind{KindKernel}},
		{in: "vpp,iptables", wantErr: true},
		{in: "vpp,", wantErr: true},
	}
	for _, c := range cases {
		got, err := ParseKinds(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("ParseKinds(%q) error %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if !c.wantErr && !slices.Equal(got, c.want) {
			t.Errorf("ParseKinds(%q) = %v, want %v", c.in, got, c.want)
		}
		if !c.wantErr {
			if back, _ := ParseKinds(FormatKinds(got)); !slices.Equal(back, got) {
				t.Errorf("FormatKinds(%v) = %q does not parse back", got, FormatKinds(got))
			}
		}
	}
}

func TestKernelNodeAddresses(t *testing.T) {
	for i := 1; i <= 3; i++ {
		n := Node{Name: NodeName(i), Index: i, Kind: KindKernel}
		gws, cidrs := n.PodGateways(), n.PodCIDRs()
		for f := range cidrs {
			if !cidrs[f].Contains(gws[f].Addr()) || gws[f].Bits() != cidrs[f].Bits() {
				t.Errorf("%s: gateway %s not in its pod CIDR %s", n.Name, gws[f], cidrs[f])
			}
			if !ClusterCIDRs[f].Contains(cidrs[f].Addr()) {
				t.Errorf("%s: pod CIDR %s outside the cluster CIDR %s", n.Name, cidrs[f], ClusterCIDRs[f])
			}
			for k := 1; k <= 3; k++ {
				if n.PodIPs(k)[f] == gws[f].Addr() {
					t.Errorf("%s: pod slot %d has the gateway's address %s", n.Name, k, gws[f].Addr())
				}
			}
		}
	}
}
