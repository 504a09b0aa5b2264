package dataplane_test

import (
	"fmt"
	"testing"
	"time"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/ip_types"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// Whether cnat gives the source port of an expired source-NATed session back
// to its allocator. cnat_allocate_port hands the port out in network byte
// order, the session stores it so, and cnat_session_free passes it as is to
// cnat_free_port, which clears the bit of the byte-swapped number. Only the
// difference between two flows' ports is recorded: the absolute numbers
// depend on the flows earlier tests source-NATed on the same VPP.
func TestDiffCnatPortReuse(t *testing.T) {
	runDifferential(t, "sessions/cnat-port-reuse", func(d *diffCase) {
		cnatTopology(d)
		c := cnat.NewServiceClient(d.Conn)
		_, err := c.CnatTranslationUpdate(d.Ctx, &cnat.CnatTranslationUpdate{Translation: cnat.CnatTranslation{
			Vip: cnatEndpoint("10.96.0.10:80"), IPProto: ip_types.IP_API_PROTO_TCP, Flags: uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT),
			Paths: []cnat.CnatEndpointTuple{{DstEp: cnatEndpoint("10.1.1.2:8080"), SrcEp: cnatEndpoint("192.168.16.1:0")}}}})
		d.Retval("translation 10.96.0.10:80 → 10.1.1.2:8080 from 192.168.16.1, alloc-port", err)
		// A port whose two bytes are equal is its own byte swap, so its bit
		// is cleared: the first flow is the first one with any other port.
		// On a fresh VPP that is the first flow; on one that earlier tests
		// brought to such a port, the next.
		var first fakevpp.Packet
		var tr fakevpp.Trace
		for try := 0; try < 2; try++ {
			first = tcp("uplink0", fmt.Sprintf("198.51.100.7:%d", 1234+try), "10.96.0.10:80")
			if tr = d.Node.Trace(first); tr.Out.Src.Port()>>8 != tr.Out.Src.Port()&0xff {
				break
			}
		}
		d.Record("first flow source-NATed to 192.168.16.1 with an allocated port, reply ok",
			tr.Out.Src.Addr() == addr("192.168.16.1") && isAllocPort(tr.Out.Src.Port()) && tr.ReplyOK)
		p1 := tr.Out.Src.Port()
		rstTr := d.Node.Trace(pktFlags(first, rst))
		d.Record("RST from the client: forwarded with the same port, reply ok",
			rstTr.Verdict == fakevpp.Forward && rstTr.Out.Src.Port() == p1 && rstTr.ReplyOK)
		// 5 s RST lifetime, then the scanner (d.WaitUntil).
		gone := d.WaitUntil(8*time.Second, 30*time.Second, func() bool {
			ss, err := dumpAll[*cnat.CnatSessionDetails](d, &cnat.CnatSessionDump{})
			d.Must(err)
			for _, x := range ss {
				for _, ep := range []cnat.CnatEndpoint{x.Session.Src, x.Session.Dst, x.Session.New} {
					if ep.Port == first.Src.Port() || ep.Port == p1 {
						return false
					}
				}
			}
			return true
		})
		d.Record("the first flow's cnat sessions are gone within 30 s of the RST", gone)
		tr = d.Node.Trace(tcp("uplink0", "198.51.100.7:1240", "10.96.0.10:80"))
		d.Record("second flow's port, after the first flow's sessions are gone", portAfter(p1, tr.Out.Src.Port()))
	})
}

// portAfter describes port p2 relative to p1.
func portAfter(p1, p2 uint16) string {
	switch {
	case p2 == p1:
		return "the first flow's port again"
	case p2 == p1+1:
		return "the next port (the first is still taken)"
	}
	return fmt.Sprintf("%+d from the first flow's port", int(p2)-int(p1))
}
