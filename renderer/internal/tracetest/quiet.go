package tracetest

import (
	"io"
	"os"
	"time"

	"github.com/sirupsen/logrus"
	"go.fd.io/govpp/core"
)

func init() {
	// govpp probes connections every second by default; keep test
	// connections cheap and quiet.
	core.HealthCheckProbeInterval = 50 * time.Millisecond
	core.HealthCheckReplyTimeout = 200 * time.Millisecond
	core.SetLogger(QuietLogger())
}

// DebugOutput, when set, receives the debug logs of every logger
// QuietLogger makes from then on (a test that keeps logs to show on
// failure).
var DebugOutput io.Writer

// QuietLogger returns a logger that discards everything.
func QuietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	if DebugOutput != nil {
		l.SetOutput(DebugOutput)
		l.SetLevel(logrus.DebugLevel)
		return l
	}
	if path := os.Getenv("VPPSVC_TEST_LOG"); path != "" {
		// Debugging a test: every log at debug level, appended to path.
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			l.SetOutput(f)
			l.SetLevel(logrus.DebugLevel)
		}
	}
	return l
}
