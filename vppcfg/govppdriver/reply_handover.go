package govppdriver

import (
	"time"

	"go.fd.io/govpp/core"
)

// ReplyHandoverTimeout is how long govpp's socket reader waits for a
// channel's reader to take a reply before it drops the reply. govpp's own
// default is 100 ms, with a buffer of 100 replies a channel: a dump of
// thousands of objects read by a goroutine that pauses that long (a GC, a
// busy node) then silently loses objects, and the layer takes present
// objects for missing and stale ones for absent. Every channel of this
// package is read to its end or closed (a closed channel's replies are
// dropped at once), so waiting longer only makes VPP wait on the socket.
const ReplyHandoverTimeout = 30 * time.Second

// govpp reads the setting when it allocates a channel, and it is one value
// for the whole process: set before any connection exists, never lowered.
func init() {
	if core.ReplyChannelTimeout < ReplyHandoverTimeout {
		core.ReplyChannelTimeout = ReplyHandoverTimeout
	}
}
