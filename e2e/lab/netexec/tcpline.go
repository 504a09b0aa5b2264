package netexec

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
)

// The TCP line port answers the UDP commands over one TCP connection, one command per line
// and one reply line per command, for as long as the client keeps the connection. An unknown
// command gets an empty line, so a client always reads exactly one line per line it wrote and
// can tell a lost reply from a slow one.
//
// lineIdle closes a connection that sent nothing for this long, so a client that vanished
// without a FIN does not hold a goroutine forever; the long-lived check talks every second.
const lineIdle = 10 * time.Minute

// lineConns tracks open line connections so a stop can close them all.
type lineConns struct {
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func (l *lineConns) add(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	if l.conns == nil {
		l.conns = map[net.Conn]struct{}{}
	}
	l.conns[c] = struct{}{}
	l.wg.Add(1)
	return true
}

func (l *lineConns) remove(c net.Conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	l.wg.Done()
}

// closeAll closes every open connection, refuses new ones and waits for their goroutines.
func (l *lineConns) closeAll() {
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

func (s *Server) serveLines() error {
	port := strconv.Itoa(s.lineLn.Addr().(*net.TCPAddr).Port)
	for {
		c, err := s.lineLn.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if !s.lines.add(c) {
			c.Close()
			return nil
		}
		go s.serveLine(c, port)
	}
}

func (s *Server) serveLine(c net.Conn, port string) {
	defer s.lines.remove(c)
	defer c.Close()
	log := s.log.WithFields(logrus.Fields{"proto": "tcp-line", "client": c.RemoteAddr().String()})
	log.Debug("netexec: line connection opened")
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 256), maxCommand)
	w := bufio.NewWriter(c)
	for {
		c.SetReadDeadline(time.Now().Add(lineIdle))
		if !sc.Scan() {
			log.WithError(sc.Err()).Debug("netexec: line connection closed")
			return
		}
		reply, _ := s.answer(sc.Text(), c.RemoteAddr().String(), port)
		w.WriteString(reply)
		w.WriteByte('\n')
		if err := w.Flush(); err != nil {
			log.WithError(err).Debug("netexec: line reply failed")
			return
		}
	}
}
