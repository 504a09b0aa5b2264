package inspect

import (
	"strings"
	"time"

	"github.com/vppsvc/vppsvc/vppcfg/engine"
)

// InterfaceWait summarises the items waiting for an interface.
type InterfaceWait struct {
	// Items is how many wait; Since is when the longest-waiting one started
	// to wait (zero when none does); Example is one of them, for messages.
	Items   int
	Since   time.Time
	Example string
}

// InterfaceWaits returns the items of a VPP layer waiting for an interface.
// It walks every status only when the layer counts some.
func InterfaceWaits(rec *engine.Reconciler) InterfaceWait {
	var w InterfaceWait
	if rec.Stats().WaitingForInterface == 0 {
		return w
	}
	for _, s := range rec.Statuses() {
		if s.State != engine.StatePending || !strings.HasPrefix(s.Reason, "interface ") {
			continue
		}
		w.Items++
		if w.Since.IsZero() || s.Since.Before(w.Since) {
			w.Since = s.Since
			w.Example = s.String()
		}
	}
	return w
}
