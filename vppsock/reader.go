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
// The reply to Disconnect's sockclnt_delete is taken here and not passed on.
func (c *Client) readLoop(s *session) {
	defer close(s.done)
	var deletedOnce sync.Once
	for {
		data, err := s.fr.next()
		if err != nil {
			c.mu.Lock()
			c.breakLocked(s, &brokenError{op: "read", cause: err})
			c.mu.Unlock()
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
		(*c.callback.Load())(msgID, data)
	}
}
