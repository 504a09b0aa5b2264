package netexec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
)

// Options configure one server. A port of 0 asks the kernel for a free one (tests read it back
// with the Server's Addr methods); a negative UDP or TCP line port turns that listener off.
type Options struct {
	// Hostname is what /hostname and "hostname" answer: the pod's name, as a container's
	// hostname is in Kubernetes.
	Hostname string
	// ListenIP restricts the listeners to one address; empty listens on every address of the
	// namespace, both families.
	ListenIP string
	// HTTPPort serves the HTTP endpoints; it cannot be turned off.
	HTTPPort int
	// UDPPort serves the UDP commands.
	UDPPort int
	// TCPLinePort serves the UDP commands over TCP, one per line (the long-lived check's port).
	TCPLinePort int
	// DelayShutdown is how long the server keeps serving, existing and new connections alike,
	// after Terminate (agnhost's --delay-shutdown): 0 stops at once as agnhost does, a negative
	// value serves until the context ends, which is the kubelet's SIGKILL after the grace period.
	DelayShutdown time.Duration
	// Log receives one entry per listener start and stop, requests at debug level; nil is the
	// standard logger.
	Log logrus.FieldLogger
}

// Server is one bound netexec server. New binds every listener before returning, so a caller
// that got a Server may dial it at once; Serve answers until stopped.
type Server struct {
	opts Options
	log  logrus.FieldLogger

	httpLn net.Listener
	udp    net.PacketConn
	lineLn net.Listener
	http   *http.Server

	terminating atomic.Bool
	unready     atomic.Bool // set by /setreadiness: /readyz fails on request
	terminate   chan struct{}
	termOnce    sync.Once
	shutdown    chan struct{}
	shutOnce    sync.Once
	served      atomic.Bool
	stopped     chan struct{}

	lines lineConns
}

// New validates opts and binds the listeners. It fails, leaving nothing bound, when a port is
// out of range or taken.
func New(opts Options) (*Server, error) {
	if opts.Hostname == "" {
		return nil, errors.New("netexec: empty hostname")
	}
	if opts.HTTPPort < 0 || opts.HTTPPort > 65535 || opts.UDPPort > 65535 || opts.TCPLinePort > 65535 {
		return nil, fmt.Errorf("netexec: port out of range (http %d, udp %d, tcp line %d)",
			opts.HTTPPort, opts.UDPPort, opts.TCPLinePort)
	}
	s := &Server{
		opts:      opts,
		log:       opts.Log,
		terminate: make(chan struct{}),
		shutdown:  make(chan struct{}),
		stopped:   make(chan struct{}),
	}
	if s.log == nil {
		s.log = logrus.StandardLogger()
	}
	s.log = s.log.WithField("hostname", opts.Hostname)
	var err error
	if s.httpLn, err = net.Listen("tcp", s.hostPort(opts.HTTPPort)); err != nil {
		return nil, fmt.Errorf("netexec: http listener: %w", err)
	}
	if opts.UDPPort >= 0 {
		if s.udp, err = net.ListenPacket("udp", s.hostPort(opts.UDPPort)); err != nil {
			s.closeListeners()
			return nil, fmt.Errorf("netexec: udp listener: %w", err)
		}
	}
	if opts.TCPLinePort >= 0 {
		if s.lineLn, err = net.Listen("tcp", s.hostPort(opts.TCPLinePort)); err != nil {
			s.closeListeners()
			return nil, fmt.Errorf("netexec: tcp line listener: %w", err)
		}
	}
	s.http = &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

// Serve runs New and then Serve until the context ends, /shutdown is called, or the delay
// after Terminate elapses.
func Serve(ctx context.Context, opts Options) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}

func (s *Server) hostPort(port int) string {
	return net.JoinHostPort(s.opts.ListenIP, strconv.Itoa(port))
}

// HTTPAddr is the bound HTTP address.
func (s *Server) HTTPAddr() net.Addr { return s.httpLn.Addr() }

// UDPAddr is the bound UDP address, nil when UDP is off.
func (s *Server) UDPAddr() net.Addr {
	if s.udp == nil {
		return nil
	}
	return s.udp.LocalAddr()
}

// TCPLineAddr is the bound TCP line address, nil when it is off.
func (s *Server) TCPLineAddr() net.Addr {
	if s.lineLn == nil {
		return nil
	}
	return s.lineLn.Addr()
}

// Terminate is what SIGTERM does to agnhost: /readyz turns 503 while everything keeps being
// served, existing and new connections alike, for Options.DelayShutdown. Calling it again does
// nothing.
func (s *Server) Terminate() {
	s.termOnce.Do(func() {
		s.terminating.Store(true)
		close(s.terminate)
	})
}

// Terminating tells whether Terminate was called.
func (s *Server) Terminating() bool { return s.terminating.Load() }

func (s *Server) requestShutdown() {
	s.shutOnce.Do(func() { close(s.shutdown) })
}

// Serve answers on every listener until the context ends (a kill: every connection is closed
// at once), /shutdown is called, or Options.DelayShutdown has passed after Terminate. It
// returns nil on those stops and the first listener error otherwise; a Server serves once.
func (s *Server) Serve(ctx context.Context) error {
	if s.served.Swap(true) {
		return errors.New("netexec: server already served")
	}
	log := s.log.WithFields(logrus.Fields{"http": s.HTTPAddr().String()})
	if a := s.UDPAddr(); a != nil {
		log = log.WithField("udp", a.String())
	}
	if a := s.TCPLineAddr(); a != nil {
		log = log.WithField("tcpLine", a.String())
	}
	log.Info("netexec serving")

	defer close(s.stopped)
	errc := make(chan error, 3)
	var wg sync.WaitGroup
	run := func(name string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				errc <- fmt.Errorf("netexec: %s: %w", name, err)
			}
		}()
	}
	run("http", func() error {
		if err := s.http.Serve(s.httpLn); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	if s.udp != nil {
		run("udp", s.serveUDP)
	}
	if s.lineLn != nil {
		run("tcp line", s.serveLines)
	}

	var err error
	select {
	case <-ctx.Done():
		log.Info("netexec killed")
	case <-s.shutdown:
		log.Info("netexec shut down by /shutdown")
		// The /shutdown request's own answer is still being written: an
		// http.Server.Close now could cut it (the client saw "unexpected
		// EOF"). A graceful stop lets it finish, bounded.
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = s.http.Shutdown(sctx)
		cancel()
	case <-s.afterTerminate(ctx):
		log.Info("netexec stopped after its shutdown delay")
	case err = <-errc:
		log.WithError(err).Error("netexec listener failed")
	}
	s.http.Close()
	s.closeListeners()
	s.lines.closeAll()
	wg.Wait()
	return err
}

// afterTerminate fires DelayShutdown after Terminate; a negative delay never fires.
func (s *Server) afterTerminate(ctx context.Context) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		select {
		case <-s.stopped:
			return
		case <-ctx.Done():
			return
		case <-s.shutdown:
			return
		case <-s.terminate:
		}
		d := s.opts.DelayShutdown
		if d < 0 {
			return
		}
		s.log.WithField("delay", d).Info("netexec terminating, still serving")
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-s.stopped:
		case <-ctx.Done():
		case <-s.shutdown:
		case <-t.C:
			close(out)
		}
	}()
	return out
}

func (s *Server) closeListeners() {
	if s.httpLn != nil {
		s.httpLn.Close()
	}
	if s.udp != nil {
		s.udp.Close()
	}
	if s.lineLn != nil {
		s.lineLn.Close()
	}
}
