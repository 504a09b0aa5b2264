// Package labtest holds the lab's tests (make test-lab): Kubernetes' own
// Service e2e behaviours checked with real sockets in the lab's pods, nodes
// and external client, through real VPPs programmed by vppsvc. They need
// root and VPPSVC_LAB_VPP; without them every test skips, so `make test`
// is unchanged on a machine without a VPP.
package labtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/e2e/lab"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
	"github.com/vppsvc/vppsvc/e2e/lab/vppnode"
)

// theLab is the package's lab, up for the whole run.
var theLab *lab.Lab

// skipReason says why the lab is not up (empty when it is).
var skipReason string

func TestMain(m *testing.M) {
	lab.RunChild() // the lab re-runs this test binary as node agents and containers
	kinds, kerr := topology.ParseKinds(os.Getenv(topology.EnvKinds))
	switch {
	case kerr != nil:
		fmt.Fprintln(os.Stderr, "lab:", kerr)
		os.Exit(2)
	case os.Getenv(vppnode.EnvBinary) == "" && slices.Contains(kinds, topology.KindVPP):
		skipReason = vppnode.EnvBinary + " is not set (a VPP 25.10 bin/vpp; docs/lab.md)"
	case os.Geteuid() != 0:
		skipReason = "the lab needs root"
	}
	if skipReason != "" {
		os.Exit(m.Run())
	}
	// The lab checks the tools it runs itself; ping is the tests' own.
	if _, err := exec.LookPath("ping"); err != nil {
		fmt.Fprintln(os.Stderr, "lab: ping not found (iputils-ping): the tests ping the nodes from the external client")
		os.Exit(2)
	}
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	if os.Getenv("VPPSVC_LAB_VERBOSE") != "" {
		log.SetLevel(logrus.InfoLevel)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	start := time.Now()
	l, err := lab.Up(ctx, lab.Options{Kinds: kinds, Log: log})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lab:", err)
		os.Exit(1)
	}
	fmt.Printf("lab up in %s (%s)\n", time.Since(start).Round(100*time.Millisecond), topology.FormatKinds(kinds))
	theLab = l
	// Interrupted (Ctrl-C, a timeout's SIGTERM): tear the lab down first.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		l.Close()
		os.Exit(1)
	}()
	code := m.Run()
	signal.Stop(sig)
	l.Close()
	os.Exit(code)
}

// needVPP skips a test, saying why, when node is a kernel node: what it
// checks exists only where vppsvc drives VPP.
func needVPP(t *testing.T, node topology.Node, what string) {
	t.Helper()
	if node.IsKernel() {
		t.Skipf("%s is a kernel node (kube-proxy): %s", node.Name, what)
	}
}

// needLab skips a test when the lab is not up.
func needLab(t *testing.T) *lab.Lab {
	t.Helper()
	if theLab == nil {
		t.Skip("lab not up: " + skipReason)
	}
	return theLab
}
