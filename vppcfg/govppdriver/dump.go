package govppdriver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"

	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// Dump implements vppcfg.Driver: it reads interfaces, NAT44, ACLs and cnat
// translations, and maps them back to items. Labels and ACL names stay
// empty (VPP has only the tag; the layer reads it). cnat SNAT settings and
// SNAT-policy interfaces have no dump in VPP. Interface features have none
// either, and their per-feature query cannot be used: govpp v0.13.0
// generates feature_is_enabled_reply as a request message, so its reply is
// decoded at the wrong offsets and never reaches the caller. All three are
// reported unobservable.
func (d *Driver) Dump(ctx context.Context) (*vppcfg.State, error) {
	caps := d.caps.Load()
	if caps.err != nil {
		return nil, caps.err
	}
	ctx, cancel := d.withDeadline(ctx)
	defer cancel()
	pid := d.vppProcessID()
	ifaces, err := d.Interfaces(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[uint32]string, len(ifaces))
	for n, i := range ifaces {
		names[i] = n
	}
	st := &vppcfg.State{
		VPPPID:     pid,
		Interfaces: ifaces,
		ACLLists:   map[string]vppcfg.InterfaceACLIndexes{},
		Unobservable: map[vppcfg.Kind]bool{
			vppcfg.KindCNATSnatConfig:    true,
			vppcfg.KindCNATSnatInterface: true,
			vppcfg.KindInterfaceFeature:  true,
		},
	}
	if err := d.dumpNAT44(ctx, st, names); err != nil {
		return nil, err
	}
	if err := d.dumpACLs(ctx, st, names); err != nil {
		return nil, err
	}
	if caps.routes {
		if err := d.dumpDropRoutes(ctx, st); err != nil {
			return nil, err
		}
	}
	if caps.cnat {
		if err := d.dumpCNAT(ctx, st); err != nil {
			return nil, err
		}
		if err := d.dumpFeatures(ctx, st); err != nil {
			return nil, err
		}
		delete(st.Unobservable, vppcfg.KindInterfaceFeature)
	}
	return st, nil
}

// receiver is a generated dump stream client.
type receiver[T any] interface {
	Recv() (T, error)
}

// drain reads a dump stream to its end.
func drain[T any](d *Driver, what string, open func() (receiver[T], error), each func(T)) error {
	s, err := open()
	d.count(what, err != nil)
	if err != nil {
		return fmt.Errorf("dump %s: %w", what, err)
	}
	for {
		m, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dump %s: %w", what, err)
		}
		each(m)
	}
}

func (d *Driver) dumpNAT44(ctx context.Context, st *vppcfg.State, names map[uint32]string) error {
	rpc := nat44_ed.NewServiceClient(d.conn)
	cfg := &nat44_ed.Nat44ShowRunningConfigReply{}
	if err := d.invoke(ctx, &nat44_ed.Nat44ShowRunningConfig{}, cfg); err != nil {
		return fmt.Errorf("dump NAT44 running config: %w", err)
	}
	if cfg.Sessions == 0 {
		return nil // disabled: no NAT44 object can exist
	}
	add := func(it vppcfg.Item, tag string) {
		st.Objects = append(st.Objects, vppcfg.Observed{Item: it, Tag: tag})
	}
	add(&vppcfg.NAT44Global{InsideVRF: cfg.InsideVrf, OutsideVRF: cfg.OutsideVrf, SessionLimit: cfg.Sessions,
		Forwarding: cfg.ForwardingEnabled, Timeouts: vppcfg.NAT44Timeouts{UDP: cfg.Timeouts.UDP,
			TCPEstablished: cfg.Timeouts.TCPEstablished, TCPTransitory: cfg.Timeouts.TCPTransitory, ICMP: cfg.Timeouts.ICMP}}, "")

	err := drain(d, "nat44_address_dump", func() (receiver[*nat44_ed.Nat44AddressDetails], error) {
		return rpc.Nat44AddressDump(ctx, &nat44_ed.Nat44AddressDump{})
	}, func(m *nat44_ed.Nat44AddressDetails) {
		add(&vppcfg.NAT44Address{Addr: fromIP4(m.IPAddress), TwiceNAT: m.Flags&nat_types.NAT_IS_TWICE_NAT != 0, VRF: m.VrfID}, "")
	})
	if err != nil {
		return err
	}
	err = drain(d, "nat44_interface_dump", func() (receiver[*nat44_ed.Nat44InterfaceDetails], error) {
		return rpc.Nat44InterfaceDump(ctx, &nat44_ed.Nat44InterfaceDump{})
	}, func(m *nat44_ed.Nat44InterfaceDetails) {
		name, ok := names[uint32(m.SwIfIndex)]
		if !ok {
			return
		}
		if m.Flags&nat_types.NAT_IS_INSIDE != 0 {
			add(&vppcfg.NAT44Interface{Interface: name, Role: vppcfg.NAT44Inside}, "")
		}
		if m.Flags&nat_types.NAT_IS_OUTSIDE != 0 {
			add(&vppcfg.NAT44Interface{Interface: name, Role: vppcfg.NAT44Outside}, "")
		}
	})
	if err != nil {
		return err
	}
	if err := d.dumpOutputInterfaces(ctx, rpc, names, add); err != nil {
		return err
	}
	err = drain(d, "nat44_static_mapping_dump", func() (receiver[*nat44_ed.Nat44StaticMappingDetails], error) {
		return rpc.Nat44StaticMappingDump(ctx, &nat44_ed.Nat44StaticMappingDump{})
	}, func(m *nat44_ed.Nat44StaticMappingDetails) {
		if m.ExternalSwIfIndex != anyInterface {
			return // interface-bound: never ours, and listed twice once resolved
		}
		add(&vppcfg.NAT44StaticMapping{
			External:   netip.AddrPortFrom(fromIP4(m.ExternalIPAddress), m.ExternalPort),
			Protocol:   vppcfg.Protocol(m.Protocol),
			Local:      netip.AddrPortFrom(fromIP4(m.LocalIPAddress), m.LocalPort),
			VRF:        m.VrfID,
			AddrOnly:   m.Flags&nat_types.NAT_IS_ADDR_ONLY != 0,
			Out2InOnly: m.Flags&nat_types.NAT_IS_OUT2IN_ONLY != 0,
			TwiceNAT:   fromTwiceNATFlags(m.Flags),
		}, m.Tag)
	})
	if err != nil {
		return err
	}
	err = drain(d, "nat44_identity_mapping_dump", func() (receiver[*nat44_ed.Nat44IdentityMappingDetails], error) {
		return rpc.Nat44IdentityMappingDump(ctx, &nat44_ed.Nat44IdentityMappingDump{})
	}, func(m *nat44_ed.Nat44IdentityMappingDetails) {
		if m.SwIfIndex != anyInterface {
			return
		}
		add(&vppcfg.NAT44IdentityMapping{Addr: fromIP4(m.IPAddress), Port: m.Port, Protocol: vppcfg.Protocol(m.Protocol),
			AddrOnly: m.Flags&nat_types.NAT_IS_ADDR_ONLY != 0, VRF: m.VrfID}, m.Tag)
	})
	if err != nil {
		return err
	}
	return drain(d, "nat44_lb_static_mapping_dump", func() (receiver[*nat44_ed.Nat44LbStaticMappingDetails], error) {
		return rpc.Nat44LbStaticMappingDump(ctx, &nat44_ed.Nat44LbStaticMappingDump{})
	}, func(m *nat44_ed.Nat44LbStaticMappingDetails) {
		it := &vppcfg.NAT44LBMapping{
			External:   netip.AddrPortFrom(fromIP4(m.ExternalAddr), m.ExternalPort),
			Protocol:   vppcfg.Protocol(m.Protocol),
			Affinity:   m.Affinity,
			Out2InOnly: m.Flags&nat_types.NAT_IS_OUT2IN_ONLY != 0,
			TwiceNAT:   fromTwiceNATFlags(m.Flags),
			Locals:     make([]vppcfg.NAT44LBLocal, len(m.Locals)),
		}
		for i, l := range m.Locals {
			it.Locals[i] = vppcfg.NAT44LBLocal{Addr: netip.AddrPortFrom(fromIP4(l.Addr), l.Port), Probability: l.Probability, VRF: l.VrfID}
		}
		vppcfg.SortLBLocals(it.Locals)
		add(it, m.Tag)
	})
}

// dumpOutputInterfaces walks Nat44EdOutputInterfaceGet by cursor. The
// reply's cursor is ~0 at the end; with no output interface at all VPP
// leaves it unset, so a round without details also ends the walk.
func (d *Driver) dumpOutputInterfaces(ctx context.Context, rpc nat44_ed.RPCService, names map[uint32]string,
	add func(vppcfg.Item, string)) error {
	cursor := uint32(0)
	for round := 0; round < 1<<16; round++ {
		s, err := rpc.Nat44EdOutputInterfaceGet(ctx, &nat44_ed.Nat44EdOutputInterfaceGet{Cursor: cursor})
		d.count("nat44_ed_output_interface_get", err != nil)
		if err != nil {
			return fmt.Errorf("dump NAT44 output interfaces: %w", err)
		}
		got := 0
		for {
			det, reply, err := s.Recv()
			if errors.Is(err, io.EOF) {
				if got == 0 || reply == nil || reply.Cursor == ^uint32(0) {
					return nil
				}
				cursor = reply.Cursor
				break
			}
			if err != nil {
				return fmt.Errorf("dump NAT44 output interfaces: %w", err)
			}
			got++
			if name, ok := names[uint32(det.SwIfIndex)]; ok {
				add(&vppcfg.NAT44Interface{Interface: name, Role: vppcfg.NAT44Output}, "")
			}
		}
	}
	return nil
}

func fromTwiceNATFlags(f nat_types.NatConfigFlags) vppcfg.TwiceNATMode {
	switch {
	case f&nat_types.NAT_IS_TWICE_NAT != 0:
		return vppcfg.TwiceNATAlways
	case f&nat_types.NAT_IS_SELF_TWICE_NAT != 0:
		return vppcfg.TwiceNATSelf
	}
	return vppcfg.TwiceNATOff
}

func (d *Driver) dumpACLs(ctx context.Context, st *vppcfg.State, names map[uint32]string) error {
	rpc := acl.NewServiceClient(d.conn)
	err := drain(d, "acl_dump", func() (receiver[*acl.ACLDetails], error) {
		return rpc.ACLDump(ctx, &acl.ACLDump{ACLIndex: ^uint32(0)}) // 0 would dump ACL 0 only
	}, func(m *acl.ACLDetails) {
		a := &vppcfg.ACL{Rules: make([]vppcfg.ACLRule, len(m.R))}
		for i, r := range m.R {
			a.Rules[i] = fromACLRule(r)
		}
		st.Objects = append(st.Objects, vppcfg.Observed{Item: a, Tag: m.Tag, Handle: m.ACLIndex})
	})
	if err != nil {
		return err
	}
	return drain(d, "acl_interface_list_dump", func() (receiver[*acl.ACLInterfaceListDetails], error) {
		return rpc.ACLInterfaceListDump(ctx, &acl.ACLInterfaceListDump{SwIfIndex: anyInterface})
	}, func(m *acl.ACLInterfaceListDetails) {
		name, ok := names[uint32(m.SwIfIndex)]
		if !ok || len(m.Acls) == 0 {
			return
		}
		n := min(int(m.NInput), len(m.Acls))
		st.ACLLists[name] = vppcfg.InterfaceACLIndexes{
			Input:  append([]uint32(nil), m.Acls[:n]...),
			Output: append([]uint32(nil), m.Acls[n:]...),
		}
	})
}

func (d *Driver) dumpCNAT(ctx context.Context, st *vppcfg.State) error {
	rpc := cnat.NewServiceClient(d.conn)
	return drain(d, "cnat_translation_dump", func() (receiver[*cnat.CnatTranslationDetails], error) {
		return rpc.CnatTranslationDump(ctx, &cnat.CnatTranslationDump{})
	}, func(m *cnat.CnatTranslationDetails) {
		if m.Translation.Vip.SwIfIndex != anyInterface {
			return // interface-based VIP: never ours
		}
		st.Objects = append(st.Objects, vppcfg.Observed{Item: fromTranslation(m.Translation), Handle: m.Translation.ID})
	})
}
