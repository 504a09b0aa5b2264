package realvpp

import (
	"encoding/binary"
	"sync"

	"github.com/vppsvc/vppsvc/vppsock"
)

// callCounts counts requests by message name, the real VPP's equivalent of
// fakevpp's Calls: what an agent sent, read off its own connection.
type callCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func newCallCounts() *callCounts { return &callCounts{n: map[string]int{}} }

func (c *callCounts) add(msg string) {
	c.mu.Lock()
	c.n[msg]++
	c.mu.Unlock()
}

func (c *callCounts) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

func (c *callCounts) reset() {
	c.mu.Lock()
	c.n = map[string]int{}
	c.mu.Unlock()
}

// countingAdapter is a socket client that counts the requests sent through
// it. govpp asks the adapter for every message's ID before it sends one,
// so the IDs it learns name every message it may send.
type countingAdapter struct {
	vppsock.Wrapper // passes the windows and routes on
	counts          *callCounts

	mu    sync.Mutex
	names map[uint16]string
}

func (a *countingAdapter) GetMsgID(msgName, msgCrc string) (uint16, error) {
	id, err := a.VppAPI.GetMsgID(msgName, msgCrc)
	if err == nil {
		a.mu.Lock()
		if a.names == nil {
			a.names = map[uint16]string{}
		}
		if a.names[id] != msgName { // govpp asks for every request
			a.names[id] = msgName
		}
		a.mu.Unlock()
	}
	return id, err
}

func (a *countingAdapter) SendMsg(context uint32, data []byte) error {
	// Counted once written to VPP's socket: a send into the socket of a
	// VPP that died is no call VPP received.
	if err := a.VppAPI.SendMsg(context, data); err != nil {
		return err
	}
	if len(data) >= 2 {
		a.mu.Lock()
		name, ok := a.names[binary.BigEndian.Uint16(data)]
		a.mu.Unlock()
		if ok {
			a.counts.add(name)
		}
	}
	return nil
}
