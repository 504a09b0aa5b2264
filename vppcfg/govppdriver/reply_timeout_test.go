package govppdriver

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// muteAdapter swallows the next replies of one message while the
// connection stays up, as a VPP that never answers one request.
type muteAdapter struct {
	adapter.VppAPI
	replyID uint16
	mute    atomic.Int32
}

func (m *muteAdapter) SetMsgCallback(cb adapter.MsgCallback) {
	m.VppAPI.SetMsgCallback(func(id uint16, data []byte) {
		if id == m.replyID && m.mute.Add(-1) >= 0 {
			return
		}
		cb(id, data)
	})
}

// TestReplyTimeoutBoundsEachReply: a reply that never comes, on a
// connection that stays up, fails its op as drift with govpp's
// ErrReplyTimeout after ReplyTimeout (the pipe's watchdog), not after the
// call's deadline, and the next call on the connection works.
func TestReplyTimeoutBoundsEachReply(t *testing.T) {
	v := newFake()
	reply := &nat44_ed.Nat44AddDelLbStaticMappingReply{}
	id, err := v.GetMsgID(reply.GetMessageName(), reply.GetCrcString())
	require.NoError(t, err)
	m := &muteAdapter{VppAPI: v, replyID: id}
	d, err := Connect(m, Options{Logger: quietLogger(), ReconnectInterval: 20 * time.Millisecond, ReplyTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(d.Close)
	waitEvent(t, d, driverapi.EventConnected)
	mustApply(t, d, create(&vppcfg.NAT44Global{}, ""))

	m.mute.Store(1)
	start := time.Now()
	res := apply(t, d, create(lbMapping(1, 2), "t"))
	require.Error(t, res[0].Err)
	assert.ErrorIs(t, res[0].Err, driverapi.ErrDrift)
	assert.ErrorIs(t, res[0].Err, core.ErrReplyTimeout)
	assert.Less(t, time.Since(start), 5*time.Second, "bounded by the reply timeout")

	res = apply(t, d, create(lbMapping(2, 2), "t"))
	assert.NoError(t, res[0].Err, "the next call is answered")
}
