package nodeagent

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vppsvc/vppsvc/e2e/lab/vppnode"
)

// CallLogFile is where a VPP node's agent appends one line per renderer call
// vppsvc makes (agent.Observer): when it began and ended, in Unix
// nanoseconds. The figures split network programming latency with it: a
// call begins when vppsvc has an event from its watch, and ends once VPP has
// taken the change.
func CallLogFile(stateDir, node string) string {
	return filepath.Join(Dir(stateDir, node), "renderer-calls.log")
}

// VPPCallLogFile is where a VPP node's agent appends one line per
// request-reply call it makes to VPP itself (its pods' and the node's
// interfaces, routes and neighbours, not vppsvc's), in the format of
// CallLogFile with the API message's name (vppnode.Client.LogCalls).
func VPPCallLogFile(stateDir, node string) string {
	return filepath.Join(Dir(stateDir, node), "vpp-calls.log")
}

// callLog is the node agent's agent.Observer: it writes CallLogFile.
type callLog struct {
	mu    sync.Mutex
	f     *os.File
	begin map[string]time.Time
}

func openCallLog(path string) (*callLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &callLog{f: f, begin: map[string]time.Time{}}, nil
}

// Begin and End are called with the processor's lock held: one line, no
// more, is written per call, at its end.
func (c *callLog) Begin(renderer string) {
	c.mu.Lock()
	c.begin[renderer] = time.Now()
	c.mu.Unlock()
}

func (c *callLog) BeginFullSync(renderer string) { c.Begin(renderer) }

func (c *callLog) End(renderer string, err error) {
	end := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	begin, ok := c.begin[renderer]
	if !ok {
		begin = end
	}
	vppnode.WriteCall(c.f, begin, end, renderer, err == nil)
}

func (c *callLog) Close() error { return c.f.Close() }

// RendererCall is one line of CallLogFile.
type RendererCall struct {
	Begin, End time.Time
	Renderer   string
	OK         bool
}

// ReadCallLog reads node's CallLogFile; a line it cannot read is skipped.
func ReadCallLog(stateDir, node string) ([]RendererCall, error) {
	f, err := os.Open(CallLogFile(stateDir, node))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseCallLog(bufio.NewScanner(f)), nil
}

func parseCallLog(s *bufio.Scanner) []RendererCall {
	var out []RendererCall
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) != 4 {
			continue
		}
		b, err1 := strconv.ParseInt(f[0], 10, 64)
		e, err2 := strconv.ParseInt(f[1], 10, 64)
		ok, err3 := strconv.ParseBool(f[3])
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		out = append(out, RendererCall{Begin: time.Unix(0, b), End: time.Unix(0, e), Renderer: f[2], OK: ok})
	}
	return out
}
