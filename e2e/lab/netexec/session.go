package netexec

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"time"
)

// A Session is the churn test's long-lived connection: one TCP connection to the server's
// TCP line port over which the client sends "echo <n>" with n counting up and expects "<n>"
// back, in order, within a bound. A raw connection is used rather than HTTP keep-alive
// because an HTTP client transport re-dials silently when its idle connection dies; here
// the connection is the check, so a reset, a close, a reply that never comes or a wrong
// reply each end the session and are reported with their time. TCP retransmits a lost
// segment, so a packet lost on the way shows as a slow exchange, reported as MaxRTT.
type Session struct {
	conn     net.Conn
	r        *bufio.Reader
	hostname string
	seq      int
	timeout  time.Duration
	failed   *SessionFailure
}

// SessionTimeout bounds one exchange of a session.
const SessionTimeout = 5 * time.Second

// MaxExchanges bounds one Run.
const MaxExchanges = 1_000_000

// OpenSession connects to the TCP line port at addr and asks which endpoint it reached.
func OpenSession(ctx context.Context, dial DialFunc, addr string) (*Session, error) {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("session dial %s: %w", addr, err)
	}
	s := &Session{conn: c, r: bufio.NewReaderSize(c, maxCommand), timeout: SessionTimeout}
	name, err := s.exchange(ctx, CmdHostname)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("session to %s: %w", addr, err)
	}
	s.hostname = name
	return s, nil
}

// Hostname is the endpoint the session is connected to.
func (s *Session) Hostname() string { return s.hostname }

// LocalAddr and RemoteAddr are the connection's addresses as the client sees them.
func (s *Session) LocalAddr() net.Addr  { return s.conn.LocalAddr() }
func (s *Session) RemoteAddr() net.Addr { return s.conn.RemoteAddr() }

// Close ends the session's connection.
func (s *Session) Close() error { return s.conn.Close() }

// exchange writes one line and reads one line within the session timeout; a context that
// ends interrupts it.
func (s *Session) exchange(ctx context.Context, line string) (string, error) {
	s.conn.SetDeadline(time.Now().Add(s.timeout))
	stop := context.AfterFunc(ctx, func() { s.conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := s.conn.Write([]byte(line + "\n")); err != nil {
		return "", fmt.Errorf("write: %w", err)
	}
	reply, err := s.r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read: %w", err)
	}
	return reply[:len(reply)-1], nil
}

// SessionReport is what a Run saw. Failure is nil when not a single exchange was lost.
type SessionReport struct {
	Hostname  string
	Start     time.Time
	End       time.Time
	Exchanges int
	// LastOK is when the last good exchange ended.
	LastOK time.Time
	// MaxRTT is the slowest good exchange and MaxRTTAt when it ended: a stall that TCP
	// recovered from still shows here.
	MaxRTT   time.Duration
	MaxRTTAt time.Time
	// Slow are the exchanges that took SlowFrom or more, the first
	// MaxSlow of them, with when each began and ended: a stall's place in
	// time, to set beside the nodes' logs.
	Slow    []SlowExchange
	Failure *SessionFailure
}

// SlowExchange is one good exchange that took SlowFrom or more.
type SlowExchange struct {
	Seq        int
	Begin, End time.Time
}

// SlowFrom is the time from which an exchange is recorded as slow; MaxSlow bounds how
// many a report keeps.
const (
	SlowFrom = 100 * time.Millisecond
	MaxSlow  = 64
)

// SessionFailure is the exchange that ended a session.
type SessionFailure struct {
	At  time.Time
	Seq int
	Err string
}

// Err is the failure as an error, nil when there was none.
func (r SessionReport) Err() error {
	if r.Failure == nil {
		return nil
	}
	return fmt.Errorf("session to %s: exchange %d failed at %s (last good %s, %d good): %s",
		r.Hostname, r.Failure.Seq, r.Failure.At.Format(time.RFC3339Nano),
		r.LastOK.Format(time.RFC3339Nano), r.Exchanges, r.Failure.Err)
}

// Run exchanges one message every interval until the context ends or max exchanges are done
// (a clean end), or an exchange fails (the end the churn test must never see). The context is
// checked between exchanges only: an exchange under way is never cut, so its reply cannot
// arrive late into the next Run, and Run returns at most SessionTimeout after the context
// ends. A session that failed stays failed: a later Run reports the same failure at once. One
// session serves one goroutine.
func (s *Session) Run(ctx context.Context, interval time.Duration, max int) SessionReport {
	rep := SessionReport{Hostname: s.hostname, Start: time.Now()}
	if s.failed != nil {
		rep.Failure, rep.End = s.failed, rep.Start
		return rep
	}
	if max < 1 || max > MaxExchanges {
		max = MaxExchanges
	}
	if interval <= 0 {
		interval = time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for rep.Exchanges < max && ctx.Err() == nil {
		s.seq++
		want := strconv.Itoa(s.seq)
		begin := time.Now()
		got, err := s.exchange(context.WithoutCancel(ctx), CmdEcho+" "+want)
		now := time.Now()
		if err == nil && got != want {
			err = fmt.Errorf("reply %q, want %q", got, want)
		}
		if err != nil {
			rep.Failure = &SessionFailure{At: now, Seq: s.seq, Err: err.Error()}
			s.failed = rep.Failure
			break
		}
		rep.Exchanges++
		rep.LastOK = now
		rtt := now.Sub(begin)
		if rtt > rep.MaxRTT {
			rep.MaxRTT, rep.MaxRTTAt = rtt, now
		}
		if rtt >= SlowFrom && len(rep.Slow) < MaxSlow {
			rep.Slow = append(rep.Slow, SlowExchange{Seq: s.seq, Begin: begin, End: now})
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	rep.End = time.Now()
	return rep
}
