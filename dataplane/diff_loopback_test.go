package dataplane_test

// Differential cases of interfaces made and removed through the binary
// API: create_loopback(_instance) and delete_loopback, the admin state,
// interface events, and what a deleted interface takes with it (NAT44-ED
// roles and output feature, addresses and what NAT44-ED resolved from
// them, ACL bindings) and what it leaves behind for the next interface at
// its index.

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/ethernet_types"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

// loopbacks creates and deletes loopbacks for a case, and deletes what is
// left when the case ends: the real VPP's test node refuses a VPP with
// interfaces it did not create.
type loopbacks struct {
	d  *diffCase
	ic interfaces.RPCService
}

func newLoopbacks(d *diffCase) *loopbacks {
	return &loopbacks{d: d, ic: interfaces.NewServiceClient(d.Conn)}
}

// create sends create_loopback (instance < 0) or create_loopback_instance
// and records the retval and the reply; it returns the new index.
func (l *loopbacks) create(label string, mac ethernet_types.MacAddress, instance int) interface_types.InterfaceIndex {
	d := l.d
	d.t.Helper()
	var sw interface_types.InterfaceIndex
	var err error
	if instance < 0 {
		var r *interfaces.CreateLoopbackReply
		r, err = l.ic.CreateLoopback(d.Ctx, &interfaces.CreateLoopback{MacAddress: mac})
		if r != nil {
			sw = r.SwIfIndex
		}
	} else {
		var r *interfaces.CreateLoopbackInstanceReply
		r, err = l.ic.CreateLoopbackInstance(d.Ctx, &interfaces.CreateLoopbackInstance{MacAddress: mac, IsSpecified: true, UserInstance: uint32(instance)})
		if r != nil {
			sw = r.SwIfIndex
		}
	}
	d.Retval(label, err)
	if err != nil {
		return sw
	}
	d.learnInterface(uint32(sw))
	d.Record(label+" index", sw)
	return sw
}

// del sends delete_loopback and records its retval; a deleted index then
// renders as "<name> (deleted)".
func (l *loopbacks) del(label string, sw interface_types.InterfaceIndex) {
	d := l.d
	d.t.Helper()
	name := d.ifName(uint32(sw))
	_, err := l.ic.DeleteLoopback(d.Ctx, &interfaces.DeleteLoopback{SwIfIndex: sw})
	d.Retval(label, err)
	if err == nil && !strings.HasSuffix(name, "?") {
		d.forgetInterface(uint32(sw))
	}
}

// cleanup deletes every loopback left (by name, loop…).
func (l *loopbacks) cleanup() {
	d := l.d
	ifs, err := dumpAll[*interfaces.SwInterfaceDetails](d, &interfaces.SwInterfaceDump{SwIfIndex: noIf})
	if err != nil {
		d.t.Errorf("cleanup: %v", err)
		return
	}
	for _, i := range ifs {
		if strings.HasPrefix(i.InterfaceName, "loop") {
			if _, err := l.ic.DeleteLoopback(d.Ctx, &interfaces.DeleteLoopback{SwIfIndex: i.SwIfIndex}); err != nil {
				d.t.Errorf("cleanup: delete %s: %v", i.InterfaceName, err)
			}
		}
	}
}

func (l *loopbacks) setUp(label string, sw interface_types.InterfaceIndex, up bool) {
	d := l.d
	d.t.Helper()
	var f interface_types.IfStatusFlags
	if up {
		f = interface_types.IF_STATUS_API_FLAG_ADMIN_UP
	}
	_, err := l.ic.SwInterfaceSetFlags(d.Ctx, &interfaces.SwInterfaceSetFlags{SwIfIndex: sw, Flags: f})
	d.Retval(label, err)
}

func (l *loopbacks) address(label string, sw interface_types.InterfaceIndex, p string, add bool) {
	d := l.d
	d.t.Helper()
	_, err := l.ic.SwInterfaceAddDelAddress(d.Ctx, &interfaces.SwInterfaceAddDelAddress{SwIfIndex: sw, IsAdd: add, Prefix: addrWithPrefix(p)})
	d.Retval(label, err)
}

func addrWithPrefix(s string) ip_types.AddressWithPrefix {
	p, err := ip_types.ParseAddressWithPrefix(s)
	if err != nil {
		panic(err)
	}
	return p
}

// loopbackDump records the loopbacks (name filter "loop"); the link speed
// and the test node's tag are left out (none is set on either).
func loopbackDump(d *diffCase, label string) {
	d.t.Helper()
	Dump[*interfaces.SwInterfaceDetails](d, label, &interfaces.SwInterfaceDump{SwIfIndex: noIf, NameFilterValid: true, NameFilter: "loop"})
}

func TestDiffLoopbacks(t *testing.T) {
	// Instances, names, MACs, the admin state and the retvals of
	// create_loopback, create_loopback_instance and delete_loopback.
	runDifferential(t, "interfaces/loopback-create-delete", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
		l := newLoopbacks(d)
		defer l.cleanup()
		lo0 := l.create("create_loopback, zero MAC", ethernet_types.MacAddress{}, -1)
		lo1 := l.create("create_loopback, MAC 02:00:00:00:00:aa", ethernet_types.MacAddress{2, 0, 0, 0, 0, 0xaa}, -1)
		l.create("create_loopback_instance 7", ethernet_types.MacAddress{}, 7)
		l.create("create_loopback_instance 7 again", ethernet_types.MacAddress{}, 7)
		l.create("create_loopback_instance 16384 (out of range)", ethernet_types.MacAddress{}, 16384)
		l.create("create_loopback after instance 7", ethernet_types.MacAddress{}, -1)
		loopbackDump(d, "loopbacks")
		l.setUp("set loop0 up", lo0, true)
		l.setUp("set loop0 up again", lo0, true)
		l.setUp("set an unknown index up", noIf-1, true)
		loopbackDump(d, "loop0 up")
		l.setUp("set loop0 down", lo0, false)
		loopbackDump(d, "loop0 down")
		l.del("delete loop1", lo1)
		l.del("delete loop1 again", lo1)
		l.del("delete local0", 0)
		l.del("delete uplink0 (not a loopback)", d.Sw("uplink0"))
		l.del("delete ~0", noIf)
		again := l.create("create_loopback after deleting loop1", ethernet_types.MacAddress{}, -1)
		d.Record("it takes loop1's index", again == lo1)
		loopbackDump(d, "loopbacks at the end")
	})

	// Nothing leaves by an admin-down interface. (Whether one receives is
	// its device's business: the packet generator sets its interface up
	// again to send, so the case cannot ask VPP.)
	runDifferential(t, "interfaces/admin-down", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
		d.Must(d.Node.AddInterface("tap2", pfx("10.1.1.1/24")))
		d.Must(d.Node.AddNeighbour("tap2", netip.MustParseAddr("10.1.1.2")))
		d.Must(d.Node.AddNeighbour("uplink0", netip.MustParseAddr("192.168.16.7")))
		l := newLoopbacks(d)
		p := udp("uplink0", "192.168.16.7:5000", "10.1.1.2:53")
		d.Trace("both up", p)
		l.setUp("tap2 down", d.Sw("tap2"), false)
		Dump[*interfaces.SwInterfaceDetails](d, "tap2", &interfaces.SwInterfaceDump{SwIfIndex: d.Sw("tap2")}, "L2Address", "InterfaceDevType", "Tag", "LinkDuplex")
		d.Trace("to tap2 while it is down", p)
		l.setUp("tap2 up", d.Sw("tap2"), true)
		d.Trace("tap2 up again", p)
	})

	// Interface events: one per request that changes an interface, with
	// the registration's PID, the admin and link flags, and Deleted.
	runDifferential(t, "interfaces/events", func(d *diffCase) {
		l := newLoopbacks(d)
		defer l.cleanup()
		w, err := d.Conn.WatchEvent(d.Ctx, &interfaces.SwInterfaceEvent{})
		d.Must(err)
		defer w.Close()
		want := func(label string, on uint32) {
			_, err := l.ic.WantInterfaceEvents(d.Ctx, &interfaces.WantInterfaceEvents{EnableDisable: on, PID: 4711})
			d.Retval(label, err)
		}
		events := func(label string) {
			d.t.Helper()
			d.RecordExcept(label, collectEvents(d, w))
		}
		want("want_interface_events enable", 1)
		want("want_interface_events enable again", 1)
		lo := l.create("create_loopback", ethernet_types.MacAddress{}, -1)
		events("events after create_loopback")
		l.setUp("set it up", lo, true)
		events("events after set up")
		l.setUp("set it up again", lo, true)
		events("events after set up again")
		l.setUp("set it down", lo, false)
		events("events after set down")
		l.setUp("set it up", lo, true)
		l.del("delete it (up)", lo)
		events("events after delete")
		want("want_interface_events disable", 0)
		want("want_interface_events disable again", 0)
		l.create("create_loopback, not registered", ethernet_types.MacAddress{}, -1)
		events("events when not registered")
	})

	// What deleting an interface takes with it and what it leaves: NAT44-ED
	// roles and the output feature go, its addresses go (and with them
	// the pool address and the mapping NAT44-ED resolved from them), ACL
	// bindings go; NAT44-ED's interface-address records and the mapping's
	// interface stay, keyed by the index, and the next interface made at
	// that index inherits them.
	runDifferential(t, "interfaces/loopback-delete-takes-with-it", func(d *diffCase) {
		d.Must(d.Node.AddInterface("uplink0", pfx("192.168.16.1/24")))
		l := newLoopbacks(d)
		defer l.cleanup()
		lo0 := l.create("create loop0", ethernet_types.MacAddress{}, -1)
		lo1 := l.create("create loop1", ethernet_types.MacAddress{}, -1)
		l.address("loop0 192.168.50.1/24", lo0, "192.168.50.1/24", true)
		l.address("loop0 2001:db8:50::1/64", lo0, "2001:db8:50::1/64", true)
		l.address("loop1 192.168.51.1/24", lo1, "192.168.51.1/24", true)
		l.address("loop1 192.168.51.1/24 again", lo1, "192.168.51.1/24", true)
		l.address("loop1 192.168.51.2/24 (a second of its subnet)", lo1, "192.168.51.2/24", true)
		l.address("loop1 192.168.50.7/24 (loop0's subnet)", lo1, "192.168.50.7/24", true)
		l.address("loop0 2001:db8:50::1/64 again", lo0, "2001:db8:50::1/64", true)
		l.address("loop1 2001:db8:50::2/64 (loop0's subnet)", lo1, "2001:db8:50::2/64", true)
		l.address("loop1 192.168.51.2/24 removed", lo1, "192.168.51.2/24", false)
		l.address("loop1 192.168.51.2/24 removed again", lo1, "192.168.51.2/24", false)
		l.address("an unknown index", noIf-1, "192.168.52.1/24", true)
		l.setUp("loop0 up", lo0, true)
		l.setUp("loop1 up", lo1, true)

		nat := nat44_ed.NewServiceClient(d.Conn)
		_, err := nat.Nat44EdPluginEnableDisable(d.Ctx, &nat44_ed.Nat44EdPluginEnableDisable{Enable: true})
		d.Retval("nat44 enable", err)
		for _, f := range []nat_types.NatConfigFlags{nat_types.NAT_IS_INSIDE, 0} {
			_, err := nat.Nat44InterfaceAddDelFeature(d.Ctx, &nat44_ed.Nat44InterfaceAddDelFeature{IsAdd: true, Flags: f, SwIfIndex: lo0})
			d.Retval("loop0 nat role "+f.String(), err)
		}
		_, err = nat.Nat44EdAddDelOutputInterface(d.Ctx, &nat44_ed.Nat44EdAddDelOutputInterface{IsAdd: true, SwIfIndex: lo1})
		d.Retval("loop1 nat output feature", err)
		_, err = nat.Nat44AddDelInterfaceAddr(d.Ctx, &nat44_ed.Nat44AddDelInterfaceAddr{IsAdd: true, SwIfIndex: lo0})
		d.Retval("pool address from loop0", err)
		_, err = nat.Nat44AddDelStaticMappingV2(d.Ctx, &nat44_ed.Nat44AddDelStaticMappingV2{IsAdd: true, Flags: nat_types.NAT_IS_OUT2IN_ONLY,
			LocalIPAddress: ip4a("10.1.1.2"), Protocol: 6, LocalPort: 8080, ExternalPort: 30080, ExternalSwIfIndex: lo1, Tag: "from-loop1"})
		d.Retval("mapping on loop1's address", err)

		ac := acl.NewServiceClient(d.Conn)
		a := addACL(d, "all", anyRules(permit)...)
		for _, b := range []struct {
			label string
			sw    interface_types.InterfaceIndex
			input bool
		}{{"acl in on loop0", lo0, true}, {"acl out on loop1", lo1, false}, {"acl in on loop1", lo1, true}} {
			_, err := ac.ACLInterfaceAddDel(d.Ctx, &acl.ACLInterfaceAddDel{IsAdd: true, IsInput: b.input, SwIfIndex: b.sw, ACLIndex: a})
			d.Retval(b.label, err)
		}
		_, err = ac.ACLInterfaceAddDel(d.Ctx, &acl.ACLInterfaceAddDel{IsAdd: true, IsInput: true, SwIfIndex: lo0, ACLIndex: a})
		d.Retval("acl in on loop0 again", err)
		_, err = ac.ACLDel(d.Ctx, &acl.ACLDel{ACLIndex: a})
		d.Retval("acl_del while bound", err)

		state := func(label string) {
			d.t.Helper()
			Dump[*nat44_ed.Nat44InterfaceDetails](d, label+": nat44 interfaces", &nat44_ed.Nat44InterfaceDump{})
			d.Record(label+": nat44 output interfaces", outputInterfaces(d, nat))
			Dump[*nat44_ed.Nat44AddressDetails](d, label+": nat44 pool", &nat44_ed.Nat44AddressDump{})
			Dump[*nat44_ed.Nat44InterfaceAddrDetails](d, label+": nat44 interface-address records", &nat44_ed.Nat44InterfaceAddrDump{})
			Dump[*nat44_ed.Nat44StaticMappingDetails](d, label+": nat44 static mappings", &nat44_ed.Nat44StaticMappingDump{})
			// ACL indexes depend on what the ACL pool freed before the
			// case: each list is recorded as whether it holds only "all".
			lists := Dump[*acl.ACLInterfaceListDetails](d, label+": acl interface lists", &acl.ACLInterfaceListDump{SwIfIndex: noIf}, "Acls")
			var only []string
			for _, li := range lists {
				only = append(only, fmt.Sprintf("%s: %t", d.ifName(uint32(li.SwIfIndex)), !slices.ContainsFunc(li.Acls, func(x uint32) bool { return x != a })))
			}
			d.Record(label+": acl lists hold only the ACL all", only)
		}
		addrs := func(label string, sw interface_types.InterfaceIndex) {
			d.t.Helper()
			Dump[*ip.IPAddressDetails](d, label+" ip4", &ip.IPAddressDump{SwIfIndex: sw})
			Dump[*ip.IPAddressDetails](d, label+" ip6", &ip.IPAddressDump{SwIfIndex: sw, IsIPv6: true})
		}
		state("before")
		addrs("loop0 addresses before", lo0)

		l.del("delete loop0", lo0)
		l.del("delete loop1", lo1)
		state("after deleting both")
		addrs("addresses of loop0's index", lo0)
		_, err = ac.ACLDel(d.Ctx, &acl.ACLDel{ACLIndex: a})
		d.Retval("acl_del after the deletes", err)

		// Last freed, first reused: the next loopback (instance 0) takes
		// loop1's index, the one after (instance 1) loop0's.
		n0 := l.create("create a loopback", ethernet_types.MacAddress{}, -1)
		n1 := l.create("create another", ethernet_types.MacAddress{}, -1)
		d.Record("they take loop1's and loop0's indexes", []bool{n0 == lo1, n1 == lo0})
		l.address("address on the first new loopback", n0, "192.168.60.1/24", true)
		l.address("address on the second", n1, "192.168.61.1/24", true)
		state("new loopbacks at the old indexes, with addresses")
	})
}

// outputInterfaces reads nat44_ed_output_interface_get to its end.
func outputInterfaces(d *diffCase, nat nat44_ed.RPCService) []*nat44_ed.Nat44EdOutputInterfaceDetails {
	d.t.Helper()
	s, err := nat.Nat44EdOutputInterfaceGet(d.Ctx, &nat44_ed.Nat44EdOutputInterfaceGet{})
	d.Must(err)
	var outs []*nat44_ed.Nat44EdOutputInterfaceDetails
	for {
		det, r, err := s.Recv()
		if errors.Is(err, io.EOF) || r != nil {
			return outs
		}
		d.Must(err)
		outs = append(outs, det)
	}
}

// collectEvents returns the interface events that arrive until none has
// for a while (VPP's link-state process sends them after the reply).
func collectEvents(d *diffCase, w api.Watcher) []*interfaces.SwInterfaceEvent {
	quiet := 300 * time.Millisecond
	if !d.Node.Real() {
		quiet = 20 * time.Millisecond
	}
	var out []*interfaces.SwInterfaceEvent
	for {
		select {
		case m, ok := <-w.Events():
			if !ok {
				return out
			}
			if e, ok := m.(*interfaces.SwInterfaceEvent); ok {
				out = append(out, e)
			}
		case <-time.After(quiet):
			return out
		}
	}
}
