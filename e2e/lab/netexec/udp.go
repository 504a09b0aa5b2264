package netexec

import (
	"errors"
	"net"
	"strconv"

	"github.com/sirupsen/logrus"
)

// serveUDP answers each datagram with one datagram. A failed write is logged and the loop goes
// on: one client's unreachable address must not stop the server, where agnhost exits.
func (s *Server) serveUDP() error {
	port := strconv.Itoa(s.udp.LocalAddr().(*net.UDPAddr).Port)
	buf := make([]byte, maxCommand)
	for {
		n, from, err := s.udp.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		reply, ok := s.answer(string(buf[:n]), from.String(), port)
		log := s.log.WithFields(logrus.Fields{"proto": "udp", "client": from.String()})
		if !ok {
			log.WithField("command", string(buf[:n])).Debug("netexec: unknown command, no reply")
			continue
		}
		if _, err := s.udp.WriteTo([]byte(reply), from); err != nil {
			log.WithError(err).Warn("netexec: udp reply failed")
		}
	}
}
