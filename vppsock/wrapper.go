package vppsock

import "go.fd.io/govpp/adapter"

// Wrapper is the base of an adapter that wraps another to override some
// of its methods (count the calls, log, record): embedded, it passes the
// wrapped adapter's windows and routes on (Hold and Release with HoldOn and
// ReleaseOn, RouteReplies with RouteOn), so that the govpp driver still
// finds them, and does nothing when the wrapped adapter has none.
type Wrapper struct{ adapter.VppAPI }

// Hold holds a window on the wrapped adapter (HoldOn).
func (w Wrapper) Hold() { HoldOn(w.VppAPI) }

// Release releases a window on the wrapped adapter (ReleaseOn).
func (w Wrapper) Release() error { return ReleaseOn(w.VppAPI) }

// RouteReplies routes replies on the wrapped adapter (RouteOn): nil when
// it routes none.
func (w Wrapper) RouteReplies(lo, hi uint32, sink ReplySink) (stop func()) {
	return RouteOn(w.VppAPI, lo, hi, sink)
}
