package fakevpp_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/fakevpp"
)

func Example() {
	v := fakevpp.New(fakevpp.WithSeed(1))
	eth0 := v.AddInterface("eth0", netip.MustParsePrefix("192.168.0.1/24"))
	tap0 := v.AddInterface("tap0", netip.MustParsePrefix("10.1.1.1/24"))
	v.AddRoute(netip.MustParsePrefix("0.0.0.0/0"), "eth0")

	conn, err := core.Connect(v)
	if err != nil {
		panic(err)
	}
	defer conn.Disconnect()
	ctx := context.Background()
	nat := nat44_ed.NewServiceClient(conn)
	must := func(_ any, err error) {
		if err != nil {
			panic(err)
		}
	}
	must(nat.Nat44EdPluginEnableDisable(ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true}))
	must(nat.Nat44InterfaceAddDelFeature(ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, SwIfIndex: interface_types.InterfaceIndex(tap0), Flags: nat_types.NAT_IS_INSIDE}))
	must(nat.Nat44InterfaceAddDelFeature(ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, SwIfIndex: interface_types.InterfaceIndex(eth0)}))
	must(nat.Nat44AddDelStaticMappingV2(ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true,
		LocalIPAddress: netip.MustParseAddr("10.1.1.5").As4(), LocalPort: 8080,
		ExternalIPAddress: netip.MustParseAddr("1.1.1.1").As4(), ExternalPort: 80, Protocol: 6,
		ExternalSwIfIndex: ^interface_types.InterfaceIndex(0), VrfID: ^uint32(0)}))

	t := v.Trace(fakevpp.Packet{Ingress: "eth0", Protocol: 6,
		Src: netip.MustParseAddrPort("8.8.8.8:5555"), Dst: netip.MustParseAddrPort("1.1.1.1:80")})
	fmt.Println(t.Verdict, t.Egress, t.Out.Dst, t.ReplyOK)
	fmt.Println(strings.Join(t.Steps, "\n"))
	// Output:
	// forward tap0 10.1.1.5:8080 true
	// ip4-input eth0: tcp 8.8.8.8:5555 → 1.1.1.1:80 [SYN]
	// nat44-ed-out2in: static 1.1.1.1:80 → 10.1.1.5:8080 (session created)
	// ip4-lookup: 10.1.1.5 via tap0 (10.1.1.0/24)
	// ip4-output tap0: tcp 8.8.8.8:5555 → 10.1.1.5:8080 [SYN]
	// reply tcp 10.1.1.5:8080 → 8.8.8.8:5555 [SYN|ACK]: back to the client as tcp 1.1.1.1:80 → 8.8.8.8:5555 [SYN|ACK] via eth0
}
