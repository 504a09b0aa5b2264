package tracetest

import (
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// IsReadOnly reports whether a VPP message only reads state (dumps, gets,
// show, event subscriptions, version and compatibility checks).
func IsReadOnly(msg string) bool {
	for _, s := range []string{"_dump", "_get", "show_", "want_", "control_ping", "get_", "_details", "memclnt_", "sockclnt_", "api_versions", "feature_is_enabled"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// Writes counts the calls that changed VPP state since the node's (or the
// fake's) calls were last reset.
func Writes(v interface{ Calls() map[string]int }) int {
	n := 0
	for msg, c := range v.Calls() {
		if !IsReadOnly(msg) {
			n += c
		}
	}
	return n
}

// AssertNoViolations fails when the fake VPP saw a request or packet that
// would crash or misbehave in VPP (an empty cnat path list, SwIfIndex 0 for
// a literal address, a mixed-family path, …).
func AssertNoViolations(tb testing.TB, v *fakevpp.VPP) {
	tb.Helper()
	for _, viol := range v.Violations() {
		tb.Errorf("fake VPP violation: %s: %s", viol.Message, viol.Detail)
	}
}
