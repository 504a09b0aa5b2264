package dataplane_test

import (
	"testing"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// An open cnat flow across an update and a delete of its translation: the
// reply direction (a return session, which stores no route) and the
// forward direction (which forwards through the load balance of its
// backend's host entry, here held by the translation alone: the pods are
// routed by a /24) — with a /32 route to a backend added, that backend's
// flows survive.
func TestDiffCnatFlowAcrossUpdate(t *testing.T) {
	runDifferential(t, "cnat/flow-across-update", func(d *diffCase) {
		cnatTopology(d)
		c := cnat.NewServiceClient(d.Conn)
		update := func(label string, backends ...string) uint32 {
			tr := cnat.CnatTranslation{Vip: cnatEndpoint("10.96.0.60:80"), IPProto: ip_types.IP_API_PROTO_TCP}
			for _, b := range backends {
				tr.Paths = append(tr.Paths, cnat.CnatEndpointTuple{DstEp: cnatEndpoint(b), SrcEp: cnatEndpoint("0.0.0.0:0")})
			}
			r, err := c.CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: tr})
			d.Retval(label, err)
			if r == nil {
				return 0
			}
			return r.ID
		}
		id := update("translation 10.96.0.60:80 → 10.1.1.2:8080", "10.1.1.2:8080")
		open := tcp("uplink0", "198.51.100.7:2000", "10.96.0.60:80")
		d.Trace("open a flow", open)
		reply := fakevpp.Packet{Ingress: "tap2", Protocol: 6, Src: ap("10.1.1.2:8080"), Dst: ap("198.51.100.7:2000"), TCPFlags: ack}

		update("add 10.1.1.3:8080", "10.1.1.2:8080", "10.1.1.3:8080")
		d.Trace("the backend's reply after the update", reply)
		d.Trace("the client's next packet after the update", pktFlags(open, ack))

		d.Must(d.Node.AddRoute(pfx("10.1.1.2/32"), "tap2"))
		open2 := tcp("uplink0", "198.51.100.7:2001", "10.96.0.60:80")
		update("back to 10.1.1.2:8080 alone", "10.1.1.2:8080")
		d.Trace("a flow opened with a /32 route to the backend", open2)
		update("10.1.1.2:8080 and 10.1.1.4:8080", "10.1.1.2:8080", "10.1.1.4:8080")
		d.Trace("its next packet after an update", pktFlags(open2, ack))

		_, err := c.CnatTranslationDel(d.Ctx, &cnat.CnatTranslationDel{ID: id})
		d.Retval("delete the translation", err)
		d.Trace("its next packet after the delete", pktFlags(open2, ack))
		d.Trace("the backend's reply after the delete", fakevpp.Packet{Ingress: "tap2", Protocol: 6, Src: ap("10.1.1.2:8080"), Dst: ap("198.51.100.7:2001"), TCPFlags: ack})
	})
}
