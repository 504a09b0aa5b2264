package fakevpp

import (
	"encoding/binary"
	"fmt"
	"path"
	"reflect"
	"slices"
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
// starting at 1, so they are stable for a given test binary. Every request
// and reply goes through it, so what they need is indexed by ID in a slice.
type msgTable struct {
	byKey  map[string]uint16 // "name_crc" → ID (GetMsgID)
	byName map[string]uint16 // VPP message name → ID
	goName map[string]string // Go type name (Nat44AddDelAddressRange) → VPP name
	byID   []msgInfo         // ID → the message; byID[0] is no message
}

// msgInfo is one message of the table.
type msgInfo struct {
	id    uint16       // its own ID
	typ   reflect.Type // the message struct, for decoding requests into
	name  string       // VPP name
	crc   string
	dump  bool   // a dump, answered with details and the control-ping reply
	reply uint16 // ID of the reply the API defines for the request, or 0
}

// binapiPath is the registration path of govpp's generated bindings
// ("go.fd.io/govpp/binapi").
var binapiPath = path.Dir(reflect.TypeOf(memclnt.ControlPing{}).PkgPath())

var messages = sync.OnceValue(func() *msgTable {
	reg := api.GetRegisteredMessages()[binapiPath]
	keys := make([]string, 0, len(reg))
	for k := range reg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t := &msgTable{
		byKey:  make(map[string]uint16, len(keys)),
		byName: make(map[string]uint16, len(keys)),
		goName: make(map[string]string, len(keys)),
		byID:   make([]msgInfo, len(keys)+1),
	}
	for i, k := range keys {
		id := uint16(i + 1)
		m := reg[k]
		name := m.GetMessageName()
		typ := reflect.TypeOf(m).Elem()
		t.byKey[k] = id
		t.byName[name] = id
		t.byID[id] = msgInfo{id: id, typ: typ, name: name, crc: m.GetCrcString(), dump: isDump(name)}
		t.goName[typ.Name()] = name
	}
	for id := 1; id < len(t.byID); id++ {
		t.byID[id].reply = t.byName[t.byID[id].name+"_reply"]
	}
	return t
})

// info returns the message of an ID, or nil for an unknown ID.
func (t *msgTable) info(id uint16) *msgInfo {
	if id == 0 || int(id) >= len(t.byID) {
		return nil
	}
	return &t.byID[id]
}

// id returns the message ID of m (by name and CRC).
func (t *msgTable) id(m api.Message) (uint16, bool) {
	name, crc := m.GetMessageName(), m.GetCrcString()
	if id, ok := t.byName[name]; ok && t.byID[id].crc == crc {
		return id, true
	}
	id, ok := t.byKey[name+"_"+crc] // another message of the same name
	return id, ok
}

// lookup implements adapter.VppAPI.GetMsgID.
func (t *msgTable) lookup(name, crc string) (uint16, error) {
	if id, ok := t.byKey[name+"_"+crc]; ok {
		return id, nil
	}
	return 0, &adapter.UnknownMsgError{MsgName: name, MsgCrc: crc}
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
	if id, ok := t.byName[name]; ok {
		return t.newReply(&t.byID[id])
	}
	return nil
}

// newReply returns a new reply message for the request, or nil when the API
// defines none.
func (t *msgTable) newReply(req *msgInfo) api.Message {
	if req.reply == 0 {
		return nil
	}
	return t.byID[req.reply].newMsg()
}

// newMsg returns a fresh message of the type.
func (m *msgInfo) newMsg() api.Message {
	return reflect.New(m.typ).Interface().(api.Message)
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
// header (msg ID, client index, context) followed by the message. The message
// is decoded into reqs[ID], the one request message of its type, created the
// first time: as VPP handles a request in its receive buffer, a handler sees
// it only during the call (see handlerFunc). The generated decoders make
// every slice anew, so whatever a handler copied out of an earlier request
// stays its own.
func (t *msgTable) decodeRequest(data []byte, reqs []api.Message) (*msgInfo, api.Message, error) {
	if len(data) < 10 {
		return nil, nil, fmt.Errorf("fakevpp: short message (%d bytes)", len(data))
	}
	id := binary.BigEndian.Uint16(data[0:2])
	info := t.info(id)
	if info == nil {
		return nil, nil, fmt.Errorf("fakevpp: unknown message ID %d", id)
	}
	msg := reqs[id]
	if r, ok := msg.(resetter); ok {
		r.Reset()
	} else {
		msg = info.newMsg()
		if _, ok := msg.(resetter); ok {
			reqs[id] = msg
		}
	}
	if err := codec.DefaultCodec.DecodeMsg(data, msg); err != nil {
		return nil, nil, fmt.Errorf("fakevpp: decoding %s: %w", info.name, err)
	}
	return info, msg, nil
}

// resetter is a message that can be zeroed for reuse (every generated
// message can).
type resetter interface {
	api.Message
	Reset()
}

// appendFrame encodes a message VPP sends onto buf and returns its ID and
// the longer buf: replies and details carry the request's context right after
// the ID (govpp routes them by it, including the multipart bit it set), or
// after the client index for the odd reply the API declares with one; events
// carry the client index right after the ID and no context, so govpp treats
// them as notifications. The frame is what govpp's codec.EncodeMsg makes,
// written in place.
func (t *msgTable) appendFrame(buf []byte, m api.Message, context, clientIndex uint32) (id uint16, out []byte, err error) {
	id, ok := t.id(m)
	if !ok {
		return 0, buf, fmt.Errorf("fakevpp: no ID for %s", m.GetMessageName())
	}
	marshaler, ok := m.(codec.Marshaler)
	if !ok {
		marshaler = codec.Wrapper{Message: m}
	}
	offset := 2 // the ID
	switch m.GetMessageType() {
	case api.ReplyMessage, api.EventMessage:
		offset = 6
	case api.RequestMessage:
		offset = 10
	}
	start := len(buf)
	end := start + offset + marshaler.Size()
	buf = slices.Grow(buf, end-start)[:end]
	frame := buf[start:end]
	clear(frame) // fixed-length strings are copied, not padded
	defer func() {
		// The generated marshalers index the buffer and panic when a
		// message disagrees with its own size, as EncodeMsg recovers.
		if r := recover(); r != nil {
			id, out, err = 0, buf[:start], fmt.Errorf("fakevpp: encoding %s: %v", m.GetMessageName(), r)
		}
	}()
	binary.BigEndian.PutUint16(frame[0:2], id)
	if _, err := marshaler.Marshal(frame[offset:]); err != nil {
		return 0, buf[:start], fmt.Errorf("fakevpp: encoding %s: %w", m.GetMessageName(), err)
	}
	switch m.GetMessageType() {
	case api.ReplyMessage:
		binary.BigEndian.PutUint32(frame[2:6], context)
	case api.RequestMessage:
		// A reply declared with client_index before context, as
		// feature_is_enabled_reply is in VPP 25.10: VPP fills the context
		// at its offset, and govpp reads it there.
		binary.BigEndian.PutUint32(frame[6:10], context)
	case api.EventMessage:
		binary.BigEndian.PutUint32(frame[2:6], clientIndex)
	}
	return id, buf, nil
}
