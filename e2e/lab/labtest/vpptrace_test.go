package labtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.fd.io/govpp/binapi/vlib"

	"github.com/vppsvc/vppsvc/e2e/lab"
	"github.com/vppsvc/vppsvc/e2e/lab/nodeagent"
	"github.com/vppsvc/vppsvc/e2e/lab/vppnode"
)

// EnvTrace, when set, makes a test that calls traceVPPs record what each
// VPP node did meanwhile (a diagnosis, off by default: the event log costs
// a little on every API message).
const EnvTrace = "VPPSVC_LAB_TRACE"

// traceVPPs, when EnvTrace is set, clears each VPP node's runtime counters
// and starts its event log of API messages (each handler's begin and end
// in VPP's main thread); at the test's end it saves, per node, into
// <node dir>/trace-<name>.txt: the VPP main thread's time on a CPU and
// waiting for one meanwhile (schedstat), `show clock verbose` (VPP's time
// beside Unix time, to place the events), `show runtime max` and `show
// event-logger all`.
func traceVPPs(t *testing.T, l *lab.Lab, name string) {
	t.Helper()
	if os.Getenv(EnvTrace) == "" {
		return
	}
	for _, n := range l.Nodes {
		if n.IsKernel() {
			continue
		}
		v, err := l.VPP(n.Name)
		if err != nil {
			t.Logf("trace %s: %v", n.Name, err)
			continue
		}
		pid, _ := v.Running()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := vppnode.Connect(ctx, v.APISocket())
		cancel()
		if err != nil {
			t.Logf("trace %s: %v", n.Name, err)
			continue
		}
		cli := func(cmd string) string {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r, err := vlib.NewServiceClient(c.Conn()).CliInband(ctx, &vlib.CliInband{Cmd: cmd})
			if err != nil {
				return fmt.Sprintf("%s: %v\n", cmd, err)
			}
			return r.Reply
		}
		cli("event-logger resize 400000")
		cli("event-logger trace api")
		cli("clear runtime")
		runBefore, waitBefore := schedStat(pid)
		start := time.Now()
		node := n.Name
		t.Cleanup(func() {
			defer c.Close()
			var b strings.Builder
			run, wait := schedStat(pid)
			fmt.Fprintf(&b, "wall %s to %s; VPP pid %d ran %s and waited for a CPU %s of it\n\n", start.UTC().Format(time.RFC3339Nano),
				time.Now().UTC().Format(time.RFC3339Nano), pid, run-runBefore, wait-waitBefore)
			fmt.Fprintf(&b, "wall %d\n", time.Now().UnixNano())
			for _, cmd := range []string{"show clock verbose", "show runtime max", "show event-logger all"} {
				fmt.Fprintf(&b, "### %s\n%s\n", cmd, cli(cmd))
			}
			cli("event-logger trace api disable")
			path := filepath.Join(nodeagent.Dir(l.Opts.StateDir, node), "trace-"+name+".txt")
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Logf("trace %s: %v", node, err)
			}
		})
	}
}

// schedStat is the time the main thread of pid has run on a CPU and
// waited on a run queue (/proc/<pid>/schedstat), zeros when unknown.
func schedStat(pid int) (run, wait time.Duration) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if err != nil {
		return 0, 0
	}
	var r, w int64
	if _, err := fmt.Sscan(string(b), &r, &w); err != nil {
		return 0, 0
	}
	return time.Duration(r), time.Duration(w)
}
