package vppsock

import (
	"sync/atomic"
	"testing"
	"time"

	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/adapter/socketclient"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/codec"
)

// sender is what the benchmark drives: a Client, or govpp's socketclient
// for the baseline.
type sender interface {
	adapter.VppAPI
	Hold()
	Release() error
}

// socketclientSender is govpp's socketclient with no window.
type socketclientSender struct{ *socketclient.Client }

func (socketclientSender) Hold()          {}
func (socketclientSender) Release() error { return nil }

// BenchmarkSendWindow sends windows of 256 NAT44 static mappings to the
// fake VPP and waits for each window's replies: with every request written
// at once (nohold), with the window held and written by Release (hold),
// and, for reference, through govpp's socketclient. It reports the time
// per message and (for this package's client) its write and read calls per
// message.
func BenchmarkSendWindow(b *testing.B) {
	const window = 256
	for _, name := range []string{"nohold", "hold", "socketclient"} {
		hold := name == "hold"
		b.Run(name, func(b *testing.B) {
			path := sockPath(b)
			f := newFakeVPP(b, path, 100)
			f.set(func(f *fakeVPP) { f.record = false })
			var c sender
			var vc *Client
			if name == "socketclient" {
				c = socketclientSender{socketclient.NewVppClient(path)}
			} else {
				vc = New(path)
				c = vc
			}
			var got, target atomic.Int64
			done := make(chan struct{}, 1)
			c.SetMsgCallback(func(uint16, []byte) {
				if got.Add(1) == target.Load() {
					done <- struct{}{}
				}
			})
			if err := c.Connect(); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = c.Disconnect() }()
			id, err := c.GetMsgID((&nat44_ed.Nat44AddDelStaticMappingV2{}).GetMessageName(),
				(&nat44_ed.Nat44AddDelStaticMappingV2{}).GetCrcString())
			if err != nil {
				b.Fatal(err)
			}
			data, err := codec.DefaultCodec.EncodeMsg(&nat44_ed.Nat44AddDelStaticMappingV2{
				IsAdd:             true,
				LocalIPAddress:    ip_types.IP4Address{10, 0, 0, 1},
				ExternalIPAddress: ip_types.IP4Address{192, 168, 0, 1},
				Protocol:          6,
				LocalPort:         8080,
				ExternalPort:      80,
				ExternalSwIfIndex: ^interface_types.InterfaceIndex(0),
				Tag:               "svc",
			}, id)
			if err != nil {
				b.Fatal(err)
			}
			var s0 Stats
			if vc != nil {
				s0 = vc.Stats()
			}
			n := 0
			for b.Loop() {
				target.Add(window)
				if hold {
					c.Hold()
				}
				for j := range window {
					if err := c.SendMsg(uint32(j+1), data); err != nil {
						b.Fatal(err)
					}
				}
				if hold {
					if err := c.Release(); err != nil {
						b.Fatal(err)
					}
				}
				select {
				case <-done:
				case <-time.After(waitTimeout):
					b.Fatalf("timeout waiting for a window's replies (%d of %d)", got.Load(), target.Load())
				}
				n++
			}
			msgs := float64(n * window)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/msgs, "ns/msg")
			if vc != nil {
				s := vc.Stats()
				b.ReportMetric(float64(s.Writes-s0.Writes)/msgs, "writes/msg")
				b.ReportMetric(float64(s.Reads-s0.Reads)/msgs, "reads/msg")
			}
		})
	}
}
