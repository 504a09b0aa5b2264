package driverapi

import (
	"context"
	"errors"
)

// Driver is the seam between the layer and VPP. The reconciler decides what
// to do; the driver only translates operations into VPP API messages and VPP
// dumps back into items. It is implemented by package govppdriver over govpp;
// tests use an in-memory fake.
type Driver interface {
	// Dump reads everything of the kinds the layer manages and maps it back
	// to items. Kinds the driver cannot read back (VPP offers no dump for
	// them) are listed in State.Unobservable instead.
	Dump(ctx context.Context) (*State, error)
	// Interfaces returns the current interface name → sw_if_index map. It is
	// cheaper than Dump and used to resolve pending items.
	Interfaces(ctx context.Context) (map[string]uint32, error)
	// Apply executes ops in order and returns one result per op. The ops of
	// one call never depend on handles returned by another op of the same
	// call, so the driver may pipeline them; VPP processes them in order.
	Apply(ctx context.Context, ops []Op) []OpResult
	// Events delivers interface and connection events until the driver is closed.
	Events() <-chan Event
	// CallStats returns the number of VPP calls and failed calls per message name.
	CallStats() []CallStat
}

// Streamer is a Driver that takes the ops of one Apply call in chunks, as
// the layer prepares them, so that VPP works on the first chunks while the
// layer still prepares (and records) the others. The chunks of one
// ApplyStream are one call in Apply's sense: executed in order, pipelined,
// on one connection to VPP; once that connection is lost (or ctx ends)
// nothing more is sent, and the ops of the later chunks fail with ErrDrift,
// as the rest of an Apply call does. ApplyStream sends one result slice per
// chunk, in chunk order, one result per op, and returns once chunks is
// closed and every result is sent; results must have room for the chunks
// the caller has handed over and not yet read the result of.
type Streamer interface {
	ApplyStream(ctx context.Context, chunks <-chan []Op, results chan<- []OpResult)
}

// State is what a dump found in VPP.
type State struct {
	// Interfaces maps every interface name to its sw_if_index.
	Interfaces map[string]uint32
	// Objects are the VPP objects of the managed kinds, as items. A kind
	// whose items VPP holds merged (ACL bindings: one list per interface)
	// reports one object per merged list.
	Objects []Observed
	// Unobservable lists the kinds the dump cannot read back; desired items
	// of these kinds are re-asserted after a (re)connect, so their create
	// must be idempotent in the driver.
	Unobservable map[Kind]bool
	// VPPPID is the process ID of the VPP dumped (0 if unknown): what the
	// layer learns from its own writes holds as long as the process does.
	VPPPID uint32
}

// Observed is one object read from VPP.
type Observed struct {
	Item Item
	// Tag is the VPP tag of kinds that carry one; the item's label (or an
	// ACL's Name) is filled in by the reconciler from the tag.
	Tag string
	// Handle is the index VPP assigned (ACL index, cnat translation ID).
	Handle uint32
}

// OpType is what one VPP operation does to its object.
type OpType uint8

const (
	// OpCreate adds an object.
	OpCreate OpType = iota + 1
	// OpDelete removes an object.
	OpDelete
	// OpUpdate changes an object in place, from Old to Item. A kind whose
	// VPP messages change one part at a time gets one update per part,
	// each Old the Item of the one before (an LB mapping's locals); a kind
	// VPP holds merged gets the whole merged value (an interface's ACL
	// lists).
	OpUpdate
)

func (t OpType) String() string {
	switch t {
	case OpCreate:
		return "create"
	case OpDelete:
		return "delete"
	case OpUpdate:
		return "update"
	}
	return "op?"
}

// Op is one operation on VPP, planned by the reconciler.
type Op struct {
	Type OpType
	// Key is the item the op acts on (for a merged value, the key of the
	// merge: the interface of an ACL list).
	Key Key
	// Item is the new value (create, update) or the value being removed
	// (delete).
	Item Item
	// Old is the value an update changes.
	Old Item
	// Handle is the VPP index of the object (delete and update of ACLs and
	// cnat translations), filled in by the reconciler.
	Handle uint32
	// Tag is the VPP tag to write (create and update of taggable kinds)
	// or of the object a delete removes, filled in by the reconciler.
	Tag string
	// SwIfIndex is the resolved interface of interface-bound items, filled
	// in by the reconciler.
	SwIfIndex uint32
}

// String renders an op for logs, for example
// "create nat44-lb-mapping/10.96.0.10:80/tcp".
func (o Op) String() string { return o.Type.String() + " " + o.Key.String() }

// OpResult is the outcome of one op.
type OpResult struct {
	Err error
	// Handle is the index VPP returned for a create (ACL index, cnat ID),
	// or for an update that replaces the object (a cnat translation).
	Handle uint32
}

// EventType is the kind of a driver event.
type EventType uint8

const (
	// EventInterfaceAdded reports a new interface (or a known name at a new index).
	EventInterfaceAdded EventType = iota + 1
	// EventInterfaceDeleted reports an interface that is gone; VPP has
	// already removed its NAT roles and ACL bindings.
	EventInterfaceDeleted
	// EventConnected reports a (re)established connection: VPP may have
	// restarted, so every index-based handle may be invalid.
	EventConnected
	// EventDisconnected reports a lost connection.
	EventDisconnected
)

func (t EventType) String() string {
	switch t {
	case EventInterfaceAdded:
		return "interface-added"
	case EventInterfaceDeleted:
		return "interface-deleted"
	case EventConnected:
		return "connected"
	case EventDisconnected:
		return "disconnected"
	}
	return "event?"
}

// Event is an interface or connection event.
type Event struct {
	Type      EventType
	Interface string
	SwIfIndex uint32
	// VPPPID, on EventConnected, is the process ID of the VPP connected to
	// (0 if unknown). VPP gets a new one when it restarts, and then has lost
	// its configuration; a reconnection to the same process (say after a
	// health check missed replies under load) has not. Compared with
	// State.VPPPID of the last dump.
	VPPPID uint32
}

// CallStat counts the VPP calls of one message.
type CallStat struct {
	Msg      string
	Calls    uint64
	Failures uint64
}

var (
	// ErrDrift marks a failure that shows VPP does not hold what the layer
	// believes (an add that finds the object present, an update of an index
	// that does not exist, a lost reply). The reconciler answers it with a
	// full resync rather than blind retries.
	ErrDrift = errors.New("VPP state differs from the applied state")
	// ErrUnsupported marks an op the connected VPP cannot execute (its
	// plugin or message is missing); it is retried only after a reconnect.
	ErrUnsupported = errors.New("not supported by the connected VPP")
	// ErrNotConnected marks a call made before the driver's first connection
	// to VPP; the reconciler waits for the connection without alarm.
	ErrNotConnected = errors.New("not connected to VPP yet")
)

// ErrIncompatible marks a VPP whose API does not match the driver's
// bindings; the reconciler's Start gives up on it instead of retrying.
var ErrIncompatible = errors.New("VPP API is incompatible")
