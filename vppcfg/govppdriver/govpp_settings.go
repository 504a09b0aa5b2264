package govppdriver

import (
	"time"

	"go.fd.io/govpp/core"
)

// govpp's settings are process globals, read when a connection or channel
// is made. This package raises those that do not suit a VPP holding tens of
// thousands of objects, at init so before any connection exists, and only
// where they still hold govpp's defaults: a program that sets its own
// (tests do) keeps them.

// ReplyHandoverTimeout is how long govpp's socket reader waits for a
// channel's reader to take a reply before it drops the reply. govpp's own
// default is 100 ms, with a buffer of 100 replies a channel: a dump of
// thousands of objects read by a goroutine that pauses that long (a GC, a
// busy node) then silently loses objects, and the layer takes present
// objects for missing and stale ones for absent. Every channel of this
// package is read to its end or closed (a closed channel's replies are
// dropped at once), so waiting longer only makes VPP wait on the socket.
const ReplyHandoverTimeout = 30 * time.Second

// HealthCheckReplyTimeout and HealthCheckThreshold make govpp take VPP for
// dead after about 9 s without an answer, not 0.75 s (3 probes of 250 ms).
// VPP's main thread legitimately stalls for seconds: enabling NAT44 on an
// interface walks every mapping (over 3 s at 50,000), and a busy 2-core
// node delays probes past 250 ms. A killed VPP is still seen at once: the
// probe's send fails on the closed socket, which govpp reports without
// counting.
const (
	HealthCheckReplyTimeout = time.Second
	HealthCheckThreshold    = 8
)

func init() {
	if core.ReplyChannelTimeout == 100*time.Millisecond {
		core.ReplyChannelTimeout = ReplyHandoverTimeout
	}
	if core.HealthCheckReplyTimeout == 250*time.Millisecond {
		core.HealthCheckReplyTimeout = HealthCheckReplyTimeout
	}
	if core.HealthCheckThreshold == 2 {
		core.HealthCheckThreshold = HealthCheckThreshold
	}
}
