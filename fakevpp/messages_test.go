package fakevpp

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/feature"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/codec"
)

// TestAppendFrameIsTheCodecsFrame: the frames the fake writes in place into
// a reused buffer are byte for byte govpp's codec.EncodeMsg with the context
// (or, for events, the client index) at the offset the message's kind puts
// it, whatever the buffer held before: a reused buffer's old bytes must not
// show through the padding of fixed-length strings.
func TestAppendFrameIsTheCodecsFrame(t *testing.T) {
	const context, clientIndex = 0x01020304, 0x0a0b0c0d
	cases := []struct {
		msg api.Message
		at  int // where the context or client index goes
		val uint32
	}{
		{&nat44_ed.Nat44AddDelLbStaticMappingReply{Retval: -6}, 2, context},
		{&nat44_ed.Nat44LbStaticMappingDetails{ExternalPort: 80, Protocol: tcp, Tag: "ns/a",
			Locals: []nat44_ed.Nat44LbAddrPort{{Port: 8080, Probability: 50}, {Port: 8081, Probability: 50}}}, 2, context},
		{&acl.ACLDetails{ACLIndex: 3, Tag: "x"}, 2, context},
		{&feature.FeatureIsEnabledReply{Retval: 0, IsEnabled: true}, 6, context},
		{&interfaces.SwInterfaceEvent{PID: 7, SwIfIndex: 2, Deleted: true}, 2, clientIndex},
	}
	tbl := messages()
	dirty := bytes.Repeat([]byte{0xff}, 300) // a long frame's leftovers
	for _, c := range cases {
		t.Run(c.msg.GetMessageName(), func(t *testing.T) {
			id, ok := tbl.id(c.msg)
			require.True(t, ok)
			want, err := codec.DefaultCodec.EncodeMsg(c.msg, id)
			require.NoError(t, err)
			binary.BigEndian.PutUint32(want[c.at:c.at+4], c.val)

			buf := append([]byte(nil), dirty...)[:7]
			gotID, buf, err := tbl.appendFrame(buf, c.msg, context, clientIndex)
			require.NoError(t, err)
			require.Equal(t, id, gotID)
			require.Equal(t, dirty[:7], buf[:7], "the frames before it")
			require.Equal(t, want, buf[7:])
		})
	}
}
