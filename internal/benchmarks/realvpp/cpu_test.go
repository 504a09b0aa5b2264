package realvpp

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	rv "github.com/vppsvc/vppsvc/realvpp"
)

// The CPU a cold sync costs each side (processCPU, podstall_test.go, for
// the product), beside its wall time: on two cores
// the product's CPU during the writes is CPU that VPP's core may lack, and
// unlike wall time it hardly moves with the machine's other load.

var currentPID = regexp.MustCompile(`Current PID:\s+(\d+)`)

// vppCPU is the CPU time VPP's process has used (user and system, to the
// kernel's clock tick, 10 ms), read from /proc; 0 if VPP is not a process
// of this machine's /proc.
func vppCPU(b *testing.B, n *rv.Node) time.Duration {
	b.Helper()
	out, err := n.CLI("show version verbose")
	if err != nil {
		return 0
	}
	m := currentPID.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%s/stat", m[1]))
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis; utime and stime
	// are the 12th and 13th of them, in clock ticks (100 a second).
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}
