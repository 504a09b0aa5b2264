// Package fakevpp is an in-memory VPP 25.10 for tests and for renderer
// authors: a govpp adapter (adapter.VppAPI) that keeps VPP's tables, answers
// the binary API with VPP's retvals and quirks, and traces packets through
// the graph (ACL, NAT44-ED, cnat, FIB) the way VPP would translate
// them. It is the independent oracle of vppsvc's tests, so it imports nothing
// from vppsvc; govpp's generated RPC clients run against it unchanged.
//
// Usage:
//
//	v := fakevpp.New(fakevpp.WithSeed(1))
//	v.AddInterface("eth0", netip.MustParsePrefix("192.168.0.1/24"))
//	v.AddInterface("tap0", netip.MustParsePrefix("10.1.1.1/24"))
//	v.AddRoute(netip.MustParsePrefix("0.0.0.0/0"), "eth0")
//
//	conn, err := core.Connect(v) // or core.AsyncConnect(v, attempts, interval)
//	if err != nil {
//		return err
//	}
//	defer conn.Disconnect()
//	nat := nat44_ed.NewServiceClient(conn)
//	_, err = nat.Nat44EdPluginEnableDisable(ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
//	// … interface roles, pool 1.1.1.1, static mapping 10.1.1.5:8080 ↔ 1.1.1.1:80 …
//
//	t := v.Trace(fakevpp.Packet{Ingress: "eth0", Protocol: 6,
//		Src: netip.MustParseAddrPort("8.8.8.8:5555"), Dst: netip.MustParseAddrPort("1.1.1.1:80")})
//	// t.Verdict == fakevpp.Forward, t.Egress == "tap0", t.Out.Dst == 10.1.1.5:8080, t.ReplyOK
//	fmt.Println(strings.Join(t.Steps, "\n"))
//	if len(v.Violations()) > 0 { /* the configuration would crash or misbehave in VPP */ }
//
// As in VPP, a packet received on an interface without an address of its
// family is dropped (ip4-not-enabled / ip6-not-enabled) unless the interface
// is unnumbered: build a pod's tap as a CNI does, with SetUnnumbered(tap,
// donor) and a host route to the pod.
//
// Test helpers: FailNth, FailMessage and FailRandom inject retvals; Calls
// counts requests; Dump prints the whole state as stable text; Advance moves
// the fake clock; Restart drops everything and resets the connection like a
// VPP restart. docs/fakevpp.md lists what is modelled, what is not, the VPP
// code behind each uncertain point, and how to add a plugin.
package fakevpp
