package govppdriver

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/adapter"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// fakeAdapter is the fake VPP the pipeline tests drive, directly or
// through a wrapper.
type fakeAdapter interface {
	adapter.VppAPI
	FailNth(n int, retval int32)
	Calls() map[string]int
}

// holdingFake is a WindowWriter over the fake VPP: what is sent between
// Hold and Release reaches VPP only on Release, as a window written at
// once reaches a real VPP. A driver that waited for a reply inside a held
// window would wait for good (bounded by the reply timeout, and failed).
type holdingFake struct {
	*fakevpp.VPP

	mu        sync.Mutex
	holds     int
	held      []heldMsg
	windows   []int // messages in each window written
	failAfter int   // Release fails once this many windows were written (0: never)
}

type heldMsg struct {
	context uint32
	data    []byte
}

func (h *holdingFake) Hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holds++
}

func (h *holdingFake) SendMsg(context uint32, data []byte) error {
	h.mu.Lock()
	if h.holds > 0 {
		h.held = append(h.held, heldMsg{context, append([]byte(nil), data...)})
		h.mu.Unlock()
		return nil
	}
	h.mu.Unlock()
	return h.VPP.SendMsg(context, data)
}

func (h *holdingFake) Release() error {
	h.mu.Lock()
	if h.holds == 0 {
		h.mu.Unlock()
		return nil
	}
	h.holds--
	if h.holds > 0 {
		h.mu.Unlock()
		return nil
	}
	held := h.held
	h.held = nil
	if h.failAfter > 0 && len(h.windows) == h.failAfter {
		h.mu.Unlock()
		return fmt.Errorf("write: %w", net.ErrClosed)
	}
	h.windows = append(h.windows, len(held))
	h.mu.Unlock()
	for _, m := range held {
		if err := h.VPP.SendMsg(m.context, m.data); err != nil {
			return err
		}
	}
	return nil
}

var _ WindowWriter = (*holdingFake)(nil)

// Over an adapter that holds windows the pipeline keeps the order and each
// op's own failure, and writes each window whole, never waiting for a reply
// inside one.
func TestPipelineWindowsHeld(t *testing.T) {
	for _, chunk := range []int{0, 3} {
		for _, depth := range []int{1, 7, 256} {
			for _, failAt := range [][]int{nil, {1}, {7, 8, 14}, {40}} {
				t.Run(fmt.Sprintf("chunk=%d/depth=%d/fail=%v", chunk, depth, failAt), func(t *testing.T) {
					h := &holdingFake{VPP: newFake()}
					pipelineOrderAndFailures(t, h, chunk, depth, failAt)
					h.mu.Lock()
					defer h.mu.Unlock()
					assert.Zero(t, h.holds, "every hold released")
					assert.NotEmpty(t, h.windows)
					for _, n := range h.windows {
						assert.LessOrEqual(t, n, depth, "a window holds at most depth requests")
					}
				})
			}
		}
	}
}

// A window that fails to go out fails its ops and every later one as
// drift, unanswered and unsent alike, and none before it.
func TestPipelineWindowWriteFails(t *testing.T) {
	const depth = 4
	h := &holdingFake{VPP: newFake()}
	d, err := Connect(h, Options{Logger: quietLogger(), PipelineDepth: depth, ReconnectInterval: 20 * time.Millisecond, ReplyTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	waitEvent(t, d, driverapi.EventConnected)
	mustApply(t, d, create(&vppcfg.NAT44Global{}, ""))
	ops := createUDPMappings(20)
	h.mu.Lock()
	h.failAfter = len(h.windows) + 2 // the third window of the apply fails
	h.mu.Unlock()
	res := apply(t, d, ops...)
	for i, r := range res {
		if i < 2*depth {
			assert.NoError(t, r.Err, "op %d", i)
			continue
		}
		assert.ErrorIs(t, r.Err, driverapi.ErrDrift, "op %d", i)
		assert.True(t, errors.Is(r.Err, net.ErrClosed) || i >= 3*depth, "op %d: %v", i, r.Err)
	}
	assert.Equal(t, 2*depth, h.Calls()["nat44_add_del_static_mapping_v2"], "nothing after the failed window reaches VPP")
}
