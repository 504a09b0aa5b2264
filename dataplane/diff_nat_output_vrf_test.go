package dataplane_test

import (
	"testing"

	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
)

// NAT44-ED's output feature (how the driver source-NATs pod egress) for
// pods in another VRF: the pod's table sends the internet back to table 0,
// out of the uplink that carries the output feature. Whether the flow is
// source-NATed depends on the pool address's VRF: any (~0), the pods'
// table, or table 0.
func TestDiffNATOutputFeatureFromAVRF(t *testing.T) {
	for _, tc := range []struct {
		name string
		vrf  uint32
	}{{"any", ^uint32(0)}, {"pod-table", 10}, {"table-0", 0}} {
		runDifferential(t, "vrf/nat44-output-feature-pool-"+tc.name, func(d *diffCase) {
			podVRF(d, true)
			nat := nat44_ed.NewServiceClient(d.Conn)
			_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
			d.Must(err)
			_, err = nat.Nat44EdAddDelOutputInterface(d.Ctx, &nat44_ed.Nat44EdAddDelOutputInterface{IsAdd: true, SwIfIndex: d.Sw("uplink0")})
			d.Retval("output feature on uplink0", err)
			_, err = nat.Nat44AddDelAddressRange(d.Ctx, &nat44_ed.Nat44AddDelAddressRange{IsAdd: true, VrfID: tc.vrf,
				FirstIPAddress: ip_types.IP4Address{192, 168, 16, 1}, LastIPAddress: ip_types.IP4Address{192, 168, 16, 1}})
			d.Retval("pool address 192.168.16.1", err)
			d.Trace("pod in table 10 to the internet", tcp("tap5", "10.10.0.5:40000", "8.8.8.8:443"))
			d.Trace("the internet to the pod directly", tcp("uplink0", "8.8.8.8:443", "10.10.0.5:40001"))
		})
	}
}
