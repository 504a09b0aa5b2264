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
// sit in the send path of the benchmarks' timed syncs, where a lock and a
// map by name took a share of the product's sending goroutine. The names
// are put to the IDs when counts are read.
type callCounts struct {
	mu sync.Mutex
	// tables are the adapters' counts: kept without their adapters, so
	// that a node holds no connection it handed out once it is closed.
	tables []*idCounts
	// folded are counts under a name an ID no longer has (VPP restarted
	// with other IDs), and of IDs too large for an adapter's table.
	folded map[string]int
}

func newCallCounts() *callCounts { return &callCounts{folded: map[string]int{}} }

// idCounts are one connection's requests by message ID and the names of
// the IDs on it (names guarded by callCounts.mu).
type idCounts struct {
	names map[uint16]string
	sent  [countedIDs]atomic.Int64
}

// newTable returns a table whose counts are read with the others.
func (c *callCounts) newTable() *idCounts {
	t := &idCounts{names: map[uint16]string{}}
	c.mu.Lock()
	c.tables = append(c.tables, t)
	c.mu.Unlock()
	return t
}

// name records that id is msg on a's connection, folding what id counted
// under an earlier name into that name.
func (c *callCounts) name(a *idCounts, id uint16, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, known := a.names[id]
	if known && old == msg {
		return
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
func (c *callCounts) addSlow(a *idCounts, id uint16) {
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
	for _, a := range c.tables {
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
	for _, a := range c.tables {
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
	table           *idCounts
}

func newCountingAdapter(a adapter.VppAPI, counts *callCounts) *countingAdapter {
	return &countingAdapter{Wrapper: vppsock.Wrapper{VppAPI: a}, counts: counts, table: counts.newTable()}
}

func (a *countingAdapter) GetMsgID(msgName, msgCrc string) (uint16, error) {
	id, err := a.VppAPI.GetMsgID(msgName, msgCrc)
	if err == nil {
		a.counts.name(a.table, id, msgName)
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
		if id := binary.BigEndian.Uint16(data); int(id) < len(a.table.sent) {
			a.table.sent[id].Add(1)
		} else {
			a.counts.addSlow(a.table, id)
		}
	}
	return nil
}
