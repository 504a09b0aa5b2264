package fakevpp

import (
	"encoding/binary"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"
	"sync"

	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/codec"
)

// msgTable is the fake's message-ID table. VPP 25.10 knows exactly the
// messages that govpp v0.13.0 generated from it, so the table is every message
// registered under govpp's own binapi path; a name with another CRC (bindings
// of another VPP version) is unknown, as it would be to the real VPP, and
// govpp's GetMsgID then fails for it. IDs are assigned in sorted name_crc order
// starting at 1, so they are stable for a given test binary.
type msgTable struct {
	byKey  map[string]uint16      // "name_crc" → ID
	byID   map[uint16]api.Message // ID → prototype
	byName map[string]api.Message // VPP message name → prototype
	goName map[string]string      // Go type name (Nat44AddDelAddressRange) → VPP name
}

// binapiPath is the registration path of govpp's generated bindings
// ("go.fd.io/govpp/binapi").
var binapiPath = path.Dir(reflect.TypeOf(memclnt.ControlPing{}).PkgPath())

var messages = sync.OnceValue(func() *msgTable {
	t := &msgTable{
		byKey:  map[string]uint16{},
		byID:   map[uint16]api.Message{},
		byName: map[string]api.Message{},
		goName: map[string]string{},
	}
	reg := api.GetRegisteredMessages()[binapiPath]
	keys := make([]string, 0, len(reg))
	for k := range reg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		id := uint16(i + 1)
		m := reg[k]
		t.byKey[k] = id
		t.byID[id] = m
		t.byName[m.GetMessageName()] = m
		t.goName[reflect.TypeOf(m).Elem().Name()] = m.GetMessageName()
	}
	return t
})

// id returns the message ID of m (by name and CRC).
func (t *msgTable) id(m api.Message) (uint16, bool) {
	id, ok := t.byKey[m.GetMessageName()+"_"+m.GetCrcString()]
	return id, ok
}

// lookup implements adapter.VppAPI.GetMsgID.
func (t *msgTable) lookup(name, crc string) (uint16, error) {
	if id, ok := t.byKey[name+"_"+crc]; ok {
		return id, nil
	}
	return 0, &adapter.UnknownMsgError{MsgName: name, MsgCrc: crc}
}

// newMsg returns a fresh instance of the message type of proto.
func newMsg(proto api.Message) api.Message {
	return reflect.New(reflect.TypeOf(proto).Elem()).Interface().(api.Message)
}

// canonicalName accepts a VPP message name ("nat44_add_del_address_range") or
// a Go type name ("Nat44AddDelAddressRange") and returns the VPP name.
func (t *msgTable) canonicalName(name string) string {
	if _, ok := t.byName[name]; ok {
		return name
	}
	if n, ok := t.goName[name]; ok {
		return n
	}
	return name
}

// replyFor returns a new reply message for the request name, or nil when the
// API defines none (dumps answer with details only).
func (t *msgTable) replyFor(name string) api.Message {
	if p, ok := t.byName[name+"_reply"]; ok {
		return newMsg(p)
	}
	return nil
}

// isDump tells whether a request is answered by a details stream ended with
// the control-ping reply, rather than by one reply carrying a retval.
func isDump(name string) bool {
	return strings.HasSuffix(name, "_dump")
}

// setRetval sets the Retval field of a reply message.
func setRetval(m api.Message, retval int32) {
	f := reflect.ValueOf(m).Elem().FieldByName("Retval")
	if f.IsValid() && f.CanSet() && f.Kind() == reflect.Int32 {
		f.SetInt(int64(retval))
	}
}

// decodeRequest decodes a request frame as sent by govpp's core: a 10-byte
// header (msg ID, client index, context) followed by the message.
func (t *msgTable) decodeRequest(data []byte) (api.Message, error) {
	if len(data) < 10 {
		return nil, fmt.Errorf("fakevpp: short message (%d bytes)", len(data))
	}
	id := binary.BigEndian.Uint16(data[0:2])
	proto, ok := t.byID[id]
	if !ok {
		return nil, fmt.Errorf("fakevpp: unknown message ID %d", id)
	}
	msg := newMsg(proto)
	if err := codec.DefaultCodec.DecodeMsg(data, msg); err != nil {
		return nil, fmt.Errorf("fakevpp: decoding %s: %w", proto.GetMessageName(), err)
	}
	return msg, nil
}

// encode encodes a message VPP sends: replies and details carry the request's
// context right after the ID (govpp routes them by it, including the
// multipart bit it set), or after the client index for the odd reply the API
// declares with one; events carry the client index right after the ID and no
// context, so govpp treats them as notifications.
func (t *msgTable) encode(m api.Message, context, clientIndex uint32) (uint16, []byte, error) {
	id, ok := t.id(m)
	if !ok {
		return 0, nil, fmt.Errorf("fakevpp: no ID for %s", m.GetMessageName())
	}
	data, err := codec.DefaultCodec.EncodeMsg(m, id)
	if err != nil {
		return 0, nil, err
	}
	switch m.GetMessageType() {
	case api.ReplyMessage:
		binary.BigEndian.PutUint32(data[2:6], context)
	case api.RequestMessage:
		// A reply declared with client_index before context, as
		// feature_is_enabled_reply is in VPP 25.10: VPP fills the context
		// at its offset, and govpp reads it there.
		binary.BigEndian.PutUint32(data[6:10], context)
	case api.EventMessage:
		binary.BigEndian.PutUint32(data[2:6], clientIndex)
	}
	return id, data, nil
}
