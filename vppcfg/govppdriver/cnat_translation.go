package govppdriver

import (
	"fmt"
	"net/netip"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/internal/govppnode"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// The reply prototypes of the calls below, shared (call.reply).
var translationUpdateReply api.Message = &cnat.CnatTranslationUpdateReply{}

func init() {
	register(&kindDriver{
		kind:     vppcfg.KindCNATTranslation,
		needs:    capCNAT,
		messages: []api.Message{&cnat.CnatTranslationUpdate{}, &cnat.CnatTranslationDel{}, &cnat.CnatTranslationDump{}},
		ops: forItem(func(op *driverapi.Op, t *vppcfg.CNATTranslation, res *driverapi.OpResult) []*call {
			if op.Type == driverapi.OpDelete {
				return []*call{delTranslation(op.Handle)}
			}
			return []*call{updateTranslation(t, &res.Handle)}
		}),
		dump: dumpTranslations,
	})
}

// translation builds the binapi translation of an item.
func translation(t *vppcfg.CNATTranslation) cnat.CnatTranslation {
	var flags uint8
	if t.AllocPort {
		flags |= uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
	}
	if t.NoReturnSession {
		flags |= uint8(cnat.CNAT_TRANSLATION_NO_RETURN_SESSION)
	}
	var realIP uint8
	if t.IsRealIP {
		realIP = 1
	}
	out := cnat.CnatTranslation{
		Vip:            endpoint(t.VIP, t.VIP.Addr()),
		ID:             ^uint32(0),
		IPProto:        ip_types.IPProto(t.Protocol),
		IsRealIP:       realIP,
		Flags:          flags,
		LbType:         cnat.CnatLbType(t.LBType),
		FlowHashConfig: ip.IPFlowHashConfigV2(t.FlowHash),
		Paths:          make([]cnat.CnatEndpointTuple, len(t.Paths)),
	}
	for i, p := range t.Paths {
		out.Paths[i] = cnat.CnatEndpointTuple{DstEp: endpoint(p.Dst, t.VIP.Addr()), SrcEp: endpoint(p.Src, t.VIP.Addr())}
	}
	return out
}

// updateTranslation creates a translation or updates it in place: cnat
// keys it by VIP, port and protocol and keeps its ID (and the sessions
// already made). The ID is written to handle.
func updateTranslation(t *vppcfg.CNATTranslation, handle *uint32) *call {
	return &call{
		req:   &cnat.CnatTranslationUpdate{Translation: translation(t)},
		reply: translationUpdateReply,
		lazy:  acceptOf(true, t, describeTranslationUpdate),
		done:  func(m api.Message) { *handle = m.(*cnat.CnatTranslationUpdateReply).ID },
	}
}

// describeTranslationUpdate names a translation update in errors.
var describeTranslationUpdate = describeAs(func(_ bool, t *vppcfg.CNATTranslation) string {
	return fmt.Sprintf("update cnat translation %s/%s", t.VIP, t.Protocol)
})

// delTranslation removes a translation by ID; one already gone is fine.
func delTranslation(id uint32) *call {
	return &call{req: &cnat.CnatTranslationDel{ID: id}, reply: &cnat.CnatTranslationDelReply{},
		check: accept(fmt.Sprintf("delete cnat translation %d", id), api.NO_SUCH_ENTRY)}
}

// fromTranslation reads a dumped translation back. The dump reports no
// IsRealIP, flags or flow hash (always 0); the layer fills them from the
// desired value.
func fromTranslation(t cnat.CnatTranslation) *vppcfg.CNATTranslation {
	vip := govppnode.FromAddress(t.Vip.Addr)
	out := &vppcfg.CNATTranslation{
		VIP:      netip.AddrPortFrom(vip, t.Vip.Port),
		Protocol: vppcfg.Protocol(t.IPProto),
		LBType:   vppcfg.CNATLBType(t.LbType),
	}
	for _, p := range t.Paths {
		src := netip.AddrPortFrom(govppnode.FromAddress(p.SrcEp.Addr), p.SrcEp.Port)
		if src.Addr().IsUnspecified() && src.Port() == 0 {
			src = netip.AddrPort{}
		}
		out.Paths = append(out.Paths, vppcfg.CNATPath{Src: src, Dst: netip.AddrPortFrom(govppnode.FromAddress(p.DstEp.Addr), p.DstEp.Port)})
	}
	vppcfg.SortCNATPaths(out.Paths)
	return out
}

func dumpTranslations(r *dumpRun) error {
	rpc := cnat.NewServiceClient(r.d.conn)
	return drain(r.d, "cnat_translation_dump", func() (receiver[*cnat.CnatTranslationDetails], error) {
		return rpc.CnatTranslationDump(r.ctx, &cnat.CnatTranslationDump{})
	}, func(m *cnat.CnatTranslationDetails) {
		if m.Translation.Vip.SwIfIndex != anyInterface {
			return // interface-based VIP: never ours
		}
		r.add(fromTranslation(m.Translation), "", m.Translation.ID)
	})
}
