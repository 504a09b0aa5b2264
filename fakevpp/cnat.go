package fakevpp

import (
	"net/netip"

	"go.fd.io/govpp/api"
	cnatapi "go.fd.io/govpp/binapi/cnat"

	"github.com/vppsvc/vppsvc/fakevpp/internal/cnat"
)

// This file wires the cnat engine (internal/cnat; its README.md is the
// contract) into the core: the binary API, the cnat-snat features, the
// interface and clock hooks and the violations. The graph nodes are in
// cnat_path.go, the Dump section in cnat_dump.go.

const cnatPlugin = "cnat"

// cnatState is the engine of one VPP. newState runs at New and at Restart, so
// a restart gets a fresh engine: the same as the engine's Reset (every
// translation, session, client, SNAT setting and port gone, IDs from 0), and
// the engine's violations have already been copied to the VPP's.
type cnatState struct{ eng *cnat.Plugin }

func newCnatState(v *VPP) any { return &cnatState{eng: cnat.New(cnatInterfaces{v})} }

var cnatSlot = stateOf[cnatState](cnatPlugin)

func (v *VPP) cnat() *cnat.Plugin { return cnatSlot.of(v).eng }

// cnatInterfaces answers the engine's questions about interfaces from the
// core's table. The engine only asks while the core is calling it, that is
// with the VPP lock held.
type cnatInterfaces struct{ v *VPP }

func (a cnatInterfaces) Exists(sw uint32) bool { return a.v.iface(sw) != nil }

func (a cnatInterfaces) Address(sw uint32, ip6 bool) (netip.Addr, bool) {
	if ifc := a.v.iface(sw); ifc != nil {
		return a.v.firstAddr(ifc, ip6)
	}
	return netip.Addr{}, false
}

// HostEntry is a lookup of a's host prefix in table 0: an interface's own
// address, a route for exactly that prefix or a neighbour's entry.
func (a cnatInterfaces) HostEntry(addr netip.Addr) bool {
	r, via := a.v.bestIn(0, addr)
	return via == nil && (r.found() || r.drop) && r.prefix.Bits() == addr.BitLen()
}

func init() {
	registerPlugin(&plugin{
		name:     cnatPlugin,
		order:    50,
		newState: newCnatState,
		handlers: handlers(
			handle(cnatRequest((*cnat.Plugin).TranslationUpdate)),
			handle(cnatRequest((*cnat.Plugin).TranslationDel)),
			handle(cnatDetails[*cnatapi.CnatTranslationDump]((*cnat.Plugin).TranslationDump)),
			handle(cnatDetails[*cnatapi.CnatSessionDump]((*cnat.Plugin).SessionDump)),
			handle(cnatRequest((*cnat.Plugin).SessionPurge)),
			handle(cnatRequest((*cnat.Plugin).SetSnatAddresses)),
			handle(cnatRequest((*cnat.Plugin).GetSnatAddresses)),
			handle(cnatRequest((*cnat.Plugin).SnatPolicyAddDelIf)),
			handle(cnatRequest((*cnat.Plugin).SnatPolicyAddDelExcludePfx)),
			handle(cnatRequest((*cnat.Plugin).SetSnatPolicy)),
		),
		features: []arcFeature{
			{key: featureKey{"ip4-unicast", "cnat-snat-ip4"}, set: cnatSnatFeature(false)},
			{key: featureKey{"ip6-unicast", "cnat-snat-ip6"}, set: cnatSnatFeature(true)},
		},
		input:            []node{{name: "cnat-snat", order: orderCnatSnat, run: cnatSnatNode}},
		lookup:           []node{{name: "cnat-tx", order: 10, run: cnatVIPNode}},
		interfaceAdded:   func(v *VPP, ifc *iface) { cnatAddressesChanged(v, ifc, true) },
		interfaceDeleted: func(v *VPP, ifc *iface) { cnatAddressesChanged(v, ifc, false) },
		clockAdvanced:    cnatScan,
		dump:             cnatDumpState,
	})
}

// cnatRequest serves a request with the engine method that handles it. The
// engine answers with its reply type; the core sets the context.
func cnatRequest[Req, Rep api.Message](method func(*cnat.Plugin, Req) Rep) func(*call, Req) []api.Message {
	return func(c *call, req Req) []api.Message {
		defer c.v.cnatViolations()
		return c.reply(method(c.v.cnat(), req))
	}
}

// cnatDetails serves a dump with the engine method that lists its details; the
// core answers the control ping that ends the stream.
func cnatDetails[Req api.Message, D api.Message](method func(*cnat.Plugin) []D) func(*call, Req) []api.Message {
	return func(c *call, _ Req) []api.Message {
		details := method(c.v.cnat())
		out := make([]api.Message, len(details))
		for i, d := range details {
			out[i] = d
		}
		return out
	}
}

// cnatViolations moves what the engine recorded into the VPP's violations.
// Clearing the engine's list each time keeps one deduplication, the VPP's:
// after VPP.ClearViolations a repeat is reported again.
func (v *VPP) cnatViolations() {
	eng := v.cnat()
	for _, x := range eng.Violations() {
		v.violate(x.Message, x.Detail)
	}
	eng.ClearViolations()
}

// cnatSnatFeature tells the engine that FeatureEnableDisable switched
// cnat-snat-ip4 (ip6 false) or cnat-snat-ip6 on an interface.
func cnatSnatFeature(ip6 bool) func(v *VPP, sw uint32, on bool) {
	return func(v *VPP, sw uint32, on bool) { v.cnat().EnableSnatFeature(sw, ip6, on) }
}

// cnatAddressesChanged replays an interface's addresses to the engine one at
// a time, as VPP runs its address callbacks after each single change (and
// removes every address of an interface it deletes). While address i is
// announced, ifc.addrs is what the interface has at that moment — the first
// i+1 when it is created, those after i when it is deleted — so an endpoint
// that loses its address re-resolves to the next one, as in VPP.
func cnatAddressesChanged(v *VPP, ifc *iface, added bool) {
	all := ifc.addrs
	defer func() { ifc.addrs = all }()
	for i, p := range all {
		if added {
			ifc.addrs = all[:i+1]
		} else {
			ifc.addrs = all[i+1:]
		}
		v.cnat().InterfaceAddressChanged(ifc.index, p.Addr(), added)
	}
	v.cnatViolations()
}

// cnatScan is one pass of VPP's cnat session scanner after the clock moved.
// VPP scans about every second; between two Advance calls no packet is
// traced, so one pass at the new time deletes exactly what the per-second
// passes would have deleted by then.
func cnatScan(v *VPP) {
	v.cnat().Expire(v.clock())
	v.cnatViolations()
}
