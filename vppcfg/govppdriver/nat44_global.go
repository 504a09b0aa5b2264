package govppdriver

import (
	"fmt"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/nat44_ed"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

func init() {
	register(&kindDriver{
		kind: vppcfg.KindNAT44Global,
		messages: []api.Message{&nat44_ed.Nat44EdPluginEnableDisable{}, &nat44_ed.Nat44ShowRunningConfig{},
			&nat44_ed.Nat44ForwardingEnableDisable{}, &nat44_ed.NatSetTimeouts{}},
		ops: forItem(func(op *driverapi.Op, g *vppcfg.NAT44Global, _ *driverapi.OpResult) []*call {
			return natGlobalCalls(op, g)
		}),
		dump: dumpNAT44Global,
	})
}

// natGlobalCalls enables, updates or disables the NAT44-ED plugin. Enable
// resets forwarding and timeouts, so they are sent after it; zero timeouts
// are sent as VPP's defaults (VPP takes 0 literally: sessions would expire
// at once). Disabling deletes every NAT44 object in VPP.
func natGlobalCalls(op *driverapi.Op, g *vppcfg.NAT44Global) []*call {
	switch op.Type {
	case driverapi.OpDelete:
		return []*call{{
			req:   &nat44_ed.Nat44EdPluginEnableDisable{Enable: false},
			reply: &nat44_ed.Nat44EdPluginEnableDisableReply{},
			check: accept("disable NAT44", api.FEATURE_ALREADY_DISABLED),
		}}
	case driverapi.OpUpdate:
		old := op.Old.(*vppcfg.NAT44Global)
		var calls []*call
		if old.Forwarding != g.Forwarding {
			calls = append(calls, forwarding(g.Forwarding))
		}
		if effectiveTimeouts(old.Timeouts) != effectiveTimeouts(g.Timeouts) {
			calls = append(calls, timeouts(g.Timeouts))
		}
		return calls
	}
	calls := []*call{{
		req: &nat44_ed.Nat44EdPluginEnableDisable{Enable: true, InsideVrf: g.InsideVRF, OutsideVrf: g.OutsideVRF,
			Sessions: g.SessionLimit},
		reply: &nat44_ed.Nat44EdPluginEnableDisableReply{},
		check: accept("enable NAT44"),
	}}
	if g.Forwarding {
		calls = append(calls, forwarding(true))
	}
	if effectiveTimeouts(g.Timeouts) != effectiveTimeouts(vppcfg.NAT44Timeouts{}) {
		calls = append(calls, timeouts(g.Timeouts))
	}
	return calls
}

func forwarding(on bool) *call {
	return &call{
		req:   &nat44_ed.Nat44ForwardingEnableDisable{Enable: on},
		reply: &nat44_ed.Nat44ForwardingEnableDisableReply{},
		check: accept(fmt.Sprintf("set NAT44 forwarding %t", on)),
	}
}

// effectiveTimeouts are the timeouts VPP applies: zero ones are its defaults.
func effectiveTimeouts(t vppcfg.NAT44Timeouts) core.NAT44Timeouts {
	return core.EffectiveTimeouts(core.NAT44Timeouts(t))
}

func timeouts(nt vppcfg.NAT44Timeouts) *call {
	t := effectiveTimeouts(nt)
	return &call{
		req: &nat44_ed.NatSetTimeouts{UDP: t.UDP, TCPEstablished: t.TCPEstablished,
			TCPTransitory: t.TCPTransitory, ICMP: t.ICMP},
		reply: &nat44_ed.NatSetTimeoutsReply{},
		check: accept("set NAT44 timeouts"),
	}
}

// dumpNAT44Global reads the running config. VPP answers it also with NAT44
// disabled, with a session limit of 0: then no NAT44 object can exist, and
// the other NAT44 kinds (dumpIfFound) are not dumped.
func dumpNAT44Global(r *dumpRun) error {
	cfg := &nat44_ed.Nat44ShowRunningConfigReply{}
	if err := r.d.invoke(r.ctx, &nat44_ed.Nat44ShowRunningConfig{}, cfg); err != nil {
		return fmt.Errorf("dump NAT44 running config: %w", err)
	}
	if cfg.Sessions == 0 {
		return nil
	}
	r.add(&vppcfg.NAT44Global{InsideVRF: cfg.InsideVrf, OutsideVRF: cfg.OutsideVrf, SessionLimit: cfg.Sessions,
		Forwarding: cfg.ForwardingEnabled, Timeouts: vppcfg.NAT44Timeouts{UDP: cfg.Timeouts.UDP,
			TCPEstablished: cfg.Timeouts.TCPEstablished, TCPTransitory: cfg.Timeouts.TCPTransitory, ICMP: cfg.Timeouts.ICMP}}, "", 0)
	return nil
}
