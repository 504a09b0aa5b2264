package vppsock

import (
	"encoding/binary"
	"sync"
)

// readLoop is a connection's reader goroutine: it hands every message to
// the callback, the messages one read returned one after the other, until
// the connection ends. Any read error ends it (EOF, a closed or reset
// connection, a corrupt length: no deadline is set on reads, so none is
// passing); it breaks the session so that the next SendMsg or Release
// returns at once with the cause instead of writing to a dead peer, and it
// never spins on a broken connection.
//
// The reply to Disconnect's sockclnt_delete is taken here and not passed on;
// replies in a route's range go to its sink (RouteReplies).
func (c *Client) readLoop(s *session) {
	defer close(s.done)
	var deletedOnce sync.Once
	for {
		data, err := s.fr.next()
		if err != nil {
			broken := &brokenError{op: "read", cause: err}
			c.mu.Lock()
			c.breakLocked(s, broken)
			c.mu.Unlock()
			c.routeLost(broken)
			return
		}
		if len(data) < replyHeaderLen {
			continue // not a message: no room for its ID and context
		}
		msgID := binary.BigEndian.Uint16(data)
		if s.canDelete && msgID == s.deleteReplyID &&
			binary.BigEndian.Uint32(data[replyContextOffset:]) == deleteContext {
			deletedOnce.Do(func() { close(s.deleted) })
			continue
		}
		c.stats.received.Add(1)
		if !c.routeReply(msgID, binary.BigEndian.Uint32(data[replyContextOffset:]), data) {
			(*c.callback.Load())(msgID, data)
		}
		c.routeRead(s)
	}
}
