package realvpp

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"go.fd.io/govpp/adapter"

	"github.com/vppsvc/vppsvc/vppsock"
)

// callCounts counts requests by message name, the real VPP's equivalent of
// fakevpp's Calls: what an agent sent, read off its own connection.
//
// The adapters count by message ID, one atomic add a request, because they
// sit in the send path of the benchmarks' timed syncs: a lock and a map by
// name there cost the product's cold sync of 50,000 services about 5 ms of
// its single sending goroutine. The names are put to the IDs when counts
// are read.
type callCounts struct {
	mu       sync.Mutex
	adapters []*countingAdapter
	// folded are counts under a name an ID no longer has (VPP restarted
	// with other IDs), and of IDs too large for an adapter's table.
	folded map[string]int
}

func newCallCounts() *callCounts { return &callCounts{folded: map[string]int{}} }

// register adds a's counts to those read. Called once per adapter.
func (c *callCounts) register(a *countingAdapter) {
	c.mu.Lock()
	c.adapters = append(c.adapters, a)
	c.mu.Unlock()
}

// name records that id is msg on a's connection, folding what id counted
// under an earlier name into that name.
func (c *callCounts) name(a *countingAdapter, id uint16, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, known := a.names[id]
	if known && old == msg {
		return
	}
	if a.names == nil {
		a.names = map[uint16]string{}
	}
	if int(id) < len(a.sent) {
		// Before the ID had a name, its sends were no message this
		// connection asked for: they count for nobody.
		if n := a.sent[id].Swap(0); n != 0 && known {
			c.folded[old] += int(n)
		}
	}
	a.names[id] = msg
}

// addSlow counts a request whose ID is beyond a's table.
func (c *callCounts) addSlow(a *countingAdapter, id uint16) {
	c.mu.Lock()
	if msg, ok := a.names[id]; ok {
		c.folded[msg]++
	}
	c.mu.Unlock()
}

func (c *callCounts) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.folded))
	for k, v := range c.folded {
		out[k] = v
	}
	for _, a := range c.adapters {
		for id, msg := range a.names {
			if int(id) < len(a.sent) {
				if n := a.sent[id].Load(); n != 0 {
					out[msg] += int(n)
				}
			}
		}
	}
	return out
}

func (c *callCounts) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.folded = map[string]int{}
	for _, a := range c.adapters {
		for id := range a.names {
			if int(id) < len(a.sent) {
				a.sent[id].Store(0)
			}
		}
	}
}

// countedIDs is the size of an adapter's table of counts: VPP 25.10 with
// every plugin numbers its messages well below it. A larger ID is counted
// under callCounts' lock.
const countedIDs = 4096

// countingAdapter is a socket client that counts the requests sent through
// it. govpp asks the adapter for every message's ID before it sends one,
// so the IDs it learns name every message it may send.
type countingAdapter struct {
	vppsock.Wrapper // passes the windows and routes on
	counts          *callCounts

	// names are the message names of IDs on this connection, guarded by
	// counts.mu; sent counts the requests by ID.
	names map[uint16]string
	sent  [countedIDs]atomic.Int64
}

func newCountingAdapter(a adapter.VppAPI, counts *callCounts) *countingAdapter {
	ca := &countingAdapter{Wrapper: vppsock.Wrapper{VppAPI: a}, counts: counts}
	counts.register(ca)
	return ca
}

func (a *countingAdapter) GetMsgID(msgName, msgCrc string) (uint16, error) {
	id, err := a.VppAPI.GetMsgID(msgName, msgCrc)
	if err == nil {
		a.counts.name(a, id, msgName)
	}
	return id, err
}

func (a *countingAdapter) SendMsg(context uint32, data []byte) error {
	// Counted once written to VPP's socket: a send into the socket of a
	// VPP that died is no call VPP received. A request whose ID nobody
	// asked for is counted, but under no name: Calls leaves it out.
	if err := a.VppAPI.SendMsg(context, data); err != nil {
		return err
	}
	if len(data) >= 2 {
		if id := binary.BigEndian.Uint16(data); int(id) < len(a.sent) {
			a.sent[id].Add(1)
		} else {
			a.counts.addSlow(a, id)
		}
	}
	return nil
}
