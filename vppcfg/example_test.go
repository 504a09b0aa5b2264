package vppcfg_test

import (
	"context"
	"fmt"
	"io"
	"net/netip"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
)

// A renderer describes the VPP configuration it wants as items and commits
// them through its Client; the layer works out the VPP calls. Here the
// layer runs over fakevpp (an in-memory VPP) instead of a VPP socket.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)

	vpp := fakevpp.New()
	d, err := govppdriver.Connect(vpp, govppdriver.Options{Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer d.Close()
	layer := engine.NewReconciler(d, engine.Options{Logger: quiet})
	go func() { _ = layer.Start(ctx) }()
	<-layer.Synced() // commits apply once the first resync has compared VPP with the desired state

	client := layer.Client("example") // one per renderer: it owns and tags what it puts
	vip := netip.MustParseAddrPort("10.96.0.10:80")
	err = client.Txn().Put(
		&vppcfg.NAT44Global{}, // NAT44 mappings wait for the plugin to be enabled
		&vppcfg.NAT44LBMapping{External: vip, Protocol: vppcfg.ProtoTCP, Label: "default/web",
			Out2InOnly: true, // a service VIP is no pool address: VPP refuses it otherwise
			Locals: []vppcfg.NAT44LBLocal{
				{Addr: netip.MustParseAddrPort("10.1.1.2:8080"), Probability: 1},
				{Addr: netip.MustParseAddrPort("10.1.1.3:8080"), Probability: 1},
			}},
	).Commit(ctx)
	if err != nil {
		panic(err) // an invalid item or a conflict with another owner
	}
	key := vppcfg.NAT44MappingKey(vppcfg.KindNAT44LBMapping, vip, vppcfg.ProtoTCP)
	st, _ := layer.Status(key)
	fmt.Println(st)

	// Deleting by key removes the mapping from VPP before Commit returns.
	if err := client.Txn().Delete(key).Commit(ctx); err != nil {
		panic(err)
	}
	_, desired := layer.Status(key)
	fmt.Println("still desired:", desired)
	// Output:
	// nat44-lb-mapping/10.96.0.10:80/tcp applied
	// still desired: false
}
