package netexec

import (
	"strings"
)

// Command words of the datagram protocol, shared by the UDP port and the TCP line port. The
// server matches them case-insensitively after trimming spaces, as agnhost does.
const (
	CmdHostname   = "hostname"
	CmdClientIP   = "clientip"
	CmdServerPort = "serverport"
	CmdEcho       = "echo"
)

// maxCommand bounds one datagram or line; agnhost reads 2048-byte datagrams.
const maxCommand = 2048

// answer is the reply to one command from client, and false for an empty or unknown command
// (an "echo" without a message is one), which gets no reply: agnhost only logs those. Unlike agnhost, the echoed message keeps its
// case: agnhost lowercases the whole datagram first, which a check comparing a mixed-case
// message would see as corruption.
func (s *Server) answer(raw, client, serverPort string) (string, bool) {
	text := strings.TrimSpace(raw)
	word, rest, _ := strings.Cut(text, " ")
	switch strings.ToLower(word) {
	case CmdHostname:
		if rest == "" {
			return s.opts.Hostname, true
		}
	case CmdClientIP:
		if rest == "" {
			return client, true
		}
	case CmdServerPort:
		if rest == "" {
			return serverPort, true
		}
	case CmdEcho:
		if rest != "" {
			return rest, true
		}
	}
	return "", false
}
