package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// latencyDriver is the fake driver with VPP's own time: each call waits
// perOp for each of its ops before it is answered, as a VPP working on
// another core would, without taking this process's CPU.
type latencyDriver struct {
	*fakeDriver
	perOp time.Duration
}

func (l *latencyDriver) Apply(ctx context.Context, ops []driverapi.Op) []driverapi.OpResult {
	time.Sleep(l.perOp * time.Duration(len(ops)))
	return l.fakeDriver.Apply(ctx, ops)
}

// streamingLatencyDriver takes the ops in chunks, each one Apply of the
// latency driver.
type streamingLatencyDriver struct{ *latencyDriver }

func (s streamingLatencyDriver) ApplyStream(ctx context.Context, chunks <-chan []driverapi.Op, results chan<- []driverapi.OpResult) {
	for ops := range chunks {
		results <- s.Apply(ctx, ops)
	}
}

// BenchmarkColdPassOverVPPTime is the first resync of 20,000 one-backend
// LB mappings into a driver that takes 6 µs of VPP's time per op (about
// VPP 25.10's ceiling on the project's VM), handed each batch in one call
// (streamed=false) or in chunks as they are prepared (streamed=true): how
// much of the layer's own work the chunks hide behind VPP's. Same-run
// ratio: go test -run '^$' -bench ColdPassOverVPPTime -count 5 ./vppcfg/engine/
func BenchmarkColdPassOverVPPTime(b *testing.B) {
	const services, perOp = 20000, 6 * time.Microsecond
	for _, streamed := range []bool{false, true} {
		b.Run(fmt.Sprintf("streamed=%t", streamed), func(b *testing.B) {
			benchColdPass(b, services, perOp, streamed)
			b.ReportMetric(float64(services*perOp)/1e6, "vpp-ms/op")
		})
	}
}

// BenchmarkColdPassCPU is BenchmarkColdPassOverVPPTime's pass into a
// driver that answers at once: the layer's own CPU for a cold pass of
// 20,000 LB mappings (the fake driver's bookkeeping included), streamed
// as govppdriver's ops are.
func BenchmarkColdPassCPU(b *testing.B) {
	benchColdPass(b, 20000, 0, true)
}

// benchColdPass times the first resync of services one-backend LB
// mappings into a fake driver that waits perOp of VPP's time per op.
func benchColdPass(b *testing.B, services int, perOp time.Duration, streamed bool) {
	its := append(lbs(services, 80), global)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l := &latencyDriver{fakeDriver: newFakeDriver(), perOp: perOp}
		var d driverapi.Driver = l
		if streamed {
			d = streamingLatencyDriver{l}
		}
		r := NewReconciler(d, testOptions())
		if err := r.Client("svc").ResyncTxn().Put(its...).Commit(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := r.Resync(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if st := r.Stats(); st.Applied != services+1 {
			b.Fatalf("%d applied, want %d", st.Applied, services+1)
		}
	}
}
