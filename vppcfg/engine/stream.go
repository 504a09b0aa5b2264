package engine

import (
	"context"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// chunkOps is how many ops the engine hands a driverapi.Streamer at a
// time: few enough that VPP hears the first ones as soon as they are
// prepared, enough that a chunk's own cost (a channel send, the driver's
// setup of a call) is noise next to its ops.
const chunkOps = 1024

// chunksInFlight is how many chunks the driver holds before the engine
// waits for the results of the first: with two, the driver has the next
// chunk at hand while the engine records the one before.
const chunksInFlight = 2

// applyBatch prepares, applies and records one batch of execute and
// returns the error of its last op (nil when that op succeeded).
//
// A Streamer driver gets the batch in chunks (see chunkEnd): it sends one
// while the engine prepares the next and records the one before, so that
// VPP's time overlaps the layer's; the chunks are one driver call, in
// order, on one connection. Another driver, or a batch of one chunk, gets
// one Apply. Either way the batch ends before applyBatch returns: the
// driver's goroutine has returned and every op is recorded.
func (r *Reconciler) applyBatch(ctx context.Context, batch []task) error {
	bctx, cancel := context.WithTimeout(ctx, r.opts.OpTimeout)
	defer cancel()
	s, streams := r.d.(driverapi.Streamer)
	if !streams || len(batch) <= r.chunk {
		prepared, send := r.prepare(batch)
		results := r.d.Apply(bctx, send)
		r.record(prepared, results)
		r.settleEarly(prepared, results)
		return lastErr(results, len(send))
	}
	chunks := make(chan []driverapi.Op, chunksInFlight)
	results := make(chan []driverapi.OpResult, chunksInFlight)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ApplyStream(bctx, chunks, results)
	}()
	var handed [][]task // chunks handed over whose results are not recorded yet
	var err error
	recordFirst := func() {
		var res []driverapi.OpResult
		select {
		case res = <-results:
		case <-done:
			// A driver that broke the contract: what it did not answer
			// fails (record's errNoResult) instead of being waited for.
			select {
			case res = <-results:
			default:
			}
		}
		r.record(handed[0], res)
		r.settleEarly(handed[0], res)
		err = lastErr(res, len(handed[0]))
		handed = handed[1:]
	}
	for rest := batch; len(rest) > 0; {
		n := chunkEnd(rest, r.chunk)
		prepared, send := r.prepare(rest[:n])
		rest = rest[n:]
		if len(handed) == chunksInFlight {
			recordFirst()
		}
		select {
		case chunks <- send: // room: at most chunksInFlight are handed over
		case <-done: // the driver returned early: recorded as unanswered
		}
		handed = append(handed, prepared)
	}
	close(chunks)
	for len(handed) > 0 {
		recordFirst()
	}
	<-done
	return err
}

// chunkEnd is the length of the next chunk of ops: at most size ops (more
// only to keep one key's ops together), cut only between two ops of
// different keys, neither merged. record folds a key's results per chunk,
// and a key's failure in one chunk must not be cleared by its success in
// the next (an LB mapping's local updates), nor a merged op's covered keys
// split so.
func chunkEnd(ops []task, size int) int {
	if len(ops) <= size {
		return len(ops)
	}
	n := size
	for n < len(ops) && (ops[n].Key == ops[n-1].Key || ops[n].covers != nil || ops[n-1].covers != nil) {
		n++
	}
	return n
}

// lastErr is the error of the last of n ops (record's errNoResult when the
// driver returned fewer results).
func lastErr(results []driverapi.OpResult, n int) error {
	if n == 0 {
		return nil
	}
	if n > len(results) {
		return errNoResult
	}
	return results[n-1].Err
}
