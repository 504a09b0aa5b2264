package netexec

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestSessionExchanges checks a healthy session: it reaches the endpoint it names, and every
// exchange comes back, in order, until its bound.
func TestSessionExchanges(t *testing.T) {
	s := serve(t, "pod-l")
	ctx := testCtx(t, 5*time.Second)
	sess, err := OpenSession(ctx, NetDial, s.TCPLineAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if sess.Hostname() != "pod-l" || sess.RemoteAddr().String() != s.TCPLineAddr().String() {
		t.Errorf("session to %q at %s", sess.Hostname(), sess.RemoteAddr())
	}
	rep := sess.Run(ctx, time.Millisecond, 50)
	if rep.Err() != nil || rep.Exchanges != 50 || rep.Hostname != "pod-l" || rep.MaxRTT <= 0 || rep.LastOK.IsZero() {
		t.Errorf("report %+v, err %v", rep, rep.Err())
	}
	// A context that ends is a clean end, not a loss.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if rep := sess.Run(short, 10*time.Millisecond, 0); rep.Failure != nil || rep.Exchanges == 0 {
		t.Errorf("report %+v after the context ended", rep)
	}
}

// TestSessionDetectsLoss checks each way a long-lived connection can break: the server killed
// mid-session, an endpoint that stops answering, and a wrong reply. Each must end the run
// with a failure stamped after the break, within the exchange bound.
func TestSessionDetectsLoss(t *testing.T) {
	t.Run("server killed", func(t *testing.T) {
		s := serve(t, "pod-l")
		sess, err := OpenSession(testCtx(t, time.Second), NetDial, s.TCPLineAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		done := make(chan SessionReport, 1)
		go func() { done <- sess.Run(testCtx(t, 10*time.Second), 5*time.Millisecond, 0) }()
		time.Sleep(100 * time.Millisecond)
		killed := time.Now()
		s.stop(t)
		select {
		case rep := <-done:
			// An exchange under way at the kill may still be answered: only the failure's time
			// is bound to the kill.
			if rep.Failure == nil || rep.Failure.At.Before(killed) || rep.Exchanges == 0 || !rep.LastOK.Before(rep.Failure.At) {
				t.Errorf("report %+v, killed at %s", rep, killed)
			}
			if rep.Err() == nil || !strings.Contains(rep.Err().Error(), "pod-l") {
				t.Errorf("Err = %v", rep.Err())
			}
			if again := sess.Run(testCtx(t, time.Second), time.Millisecond, 1); again.Failure != rep.Failure || again.Exchanges != 0 {
				t.Errorf("a failed session ran again: %+v", again)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("session did not notice the server's end within 2s")
		}
	})
	t.Run("endpoint stops answering", func(t *testing.T) {
		addr := fakeLineServer(t, func(line string, n int) (string, bool) {
			if n > 3 {
				return "", false
			}
			return strings.TrimPrefix(strings.Replace(line, "hostname", "fake", 1), "echo "), true
		})
		sess, err := OpenSession(testCtx(t, time.Second), NetDial, addr)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		sess.timeout = 200 * time.Millisecond
		start := time.Now()
		rep := sess.Run(testCtx(t, 5*time.Second), time.Millisecond, 0)
		if rep.Failure == nil || rep.Exchanges != 2 || rep.Failure.Seq != 3 || !strings.Contains(rep.Failure.Err, "timeout") {
			t.Errorf("report %+v", rep)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("took %s with a 200ms exchange bound", el)
		}
	})
	t.Run("wrong reply", func(t *testing.T) {
		addr := fakeLineServer(t, func(line string, n int) (string, bool) {
			if n == 5 {
				return "999", true
			}
			return strings.TrimPrefix(strings.Replace(line, "hostname", "fake", 1), "echo "), true
		})
		sess, err := OpenSession(testCtx(t, time.Second), NetDial, addr)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		rep := sess.Run(testCtx(t, 5*time.Second), time.Millisecond, 0)
		if rep.Failure == nil || rep.Exchanges != 3 || !strings.Contains(rep.Failure.Err, `reply "999", want "4"`) {
			t.Errorf("report %+v", rep)
		}
	})
}

// TestSessionRecordsSlowExchanges checks that an exchange held past SlowFrom is reported
// with its sequence number and times, and that only slow ones are.
func TestSessionRecordsSlowExchanges(t *testing.T) {
	addr := fakeLineServer(t, func(line string, n int) (string, bool) {
		if n == 4 { // the session's third echo
			time.Sleep(SlowFrom + 30*time.Millisecond)
		}
		return strings.TrimPrefix(strings.Replace(line, "hostname", "fake", 1), "echo "), true
	})
	sess, err := OpenSession(testCtx(t, time.Second), NetDial, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	rep := sess.Run(testCtx(t, 5*time.Second), time.Millisecond, 6)
	if rep.Err() != nil || rep.Exchanges != 6 {
		t.Fatalf("report %+v, err %v", rep, rep.Err())
	}
	var held bool
	for _, s := range rep.Slow {
		if d := s.End.Sub(s.Begin); d < SlowFrom || s.Begin.Before(rep.Start) || s.End.After(rep.End) {
			t.Errorf("slow exchange %+v (%s) in a run from %s to %s", s, d, rep.Start, rep.End)
		}
		held = held || s.Seq == 3
	}
	if !held || rep.MaxRTT < SlowFrom {
		t.Errorf("the held exchange 3 is not among the slow ones: %+v (slowest %s)", rep.Slow, rep.MaxRTT)
	}
}

// fakeLineServer answers each line of one connection through reply (n counts lines from 1);
// false means no answer.
func fakeLineServer(t *testing.T, reply func(line string, n int) (string, bool)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); close(done) })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		go func() { <-done; c.Close() }()
		sc := bufio.NewScanner(c)
		for n := 1; sc.Scan(); n++ {
			if r, ok := reply(sc.Text(), n); ok {
				c.Write([]byte(r + "\n"))
			}
		}
	}()
	return ln.Addr().String()
}
