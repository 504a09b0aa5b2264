package vppsock

import (
	"context"
	"encoding/binary"
	"testing"

	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/internal/leakcheck"
)

// govpp core on top: a stream sends 1,000 NAT44 static mappings in windows
// of 256 between Hold and Release, and reads every window's replies; each
// window is one write.
func TestGovppCoreStreamWindows(t *testing.T) {
	path := sockPath(t)
	f := newFakeVPP(t, path, 100)
	before := leakcheck.Goroutines()
	client := New(path)
	conn, err := core.Connect(client)
	if err != nil {
		t.Fatal(err)
	}
	const total, window = 1000, 256
	stream, err := conn.NewStream(context.Background(),
		core.WithRequestSize(window), core.WithReplySize(window), core.WithReplyTimeout(waitTimeout))
	if err != nil {
		t.Fatal(err)
	}
	w0 := client.Stats().Writes
	for sent := 0; sent < total; {
		n := min(window, total-sent)
		client.Hold()
		for i := range n {
			k := sent + i
			req := &nat44_ed.Nat44AddDelStaticMappingV2{
				IsAdd:             true,
				LocalIPAddress:    ip_types.IP4Address{10, 0, byte(k >> 8), byte(k)},
				ExternalIPAddress: ip_types.IP4Address{192, 168, byte(k >> 8), byte(k)},
				Protocol:          6,
				LocalPort:         8080,
				ExternalPort:      uint16(k),
				ExternalSwIfIndex: ^interface_types.InterfaceIndex(0),
				Tag:               "svc",
			}
			if err := stream.SendMsg(req); err != nil {
				t.Fatalf("request %d: %v", k, err)
			}
		}
		if err := client.Release(); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			msg, err := stream.RecvMsg()
			if err != nil {
				t.Fatalf("reply %d: %v", sent+i, err)
			}
			reply, ok := msg.(*nat44_ed.Nat44AddDelStaticMappingV2Reply)
			if !ok || reply.Retval != 0 {
				t.Fatalf("reply %d: %T %+v", sent+i, msg, msg)
			}
		}
		sent += n
	}
	if w, windows := client.Stats().Writes-w0, uint64((total+window-1)/window); w != windows {
		t.Errorf("%d writes for %d windows", w, windows)
	}
	f.set(func(f *fakeVPP) {
		if f.nrequests != total || f.badIndex != 0 {
			t.Errorf("the server got %d requests (%d with a wrong client index), want %d", f.nrequests, f.badIndex, total)
		}
		for i, r := range f.requests {
			// external_port, before external_sw_if_index, vrf_id and the tag
			at := len(r) - 64 - 4 - 4 - 2
			if port := binary.BigEndian.Uint16(r[at:]); port != uint16(i) {
				t.Fatalf("request %d carries external port %d", i, port)
			}
		}
	})
	if err := stream.Close(); err != nil {
		t.Error(err)
	}
	conn.Disconnect()
	if left := leakcheck.WaitGoroutinesGone(before, waitTimeout); left != "" {
		t.Errorf("goroutines left:\n%s", left)
	}
}
