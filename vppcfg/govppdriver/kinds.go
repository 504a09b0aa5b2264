package govppdriver

import (
	"fmt"
	"iter"
	"math"
	"reflect"

	"go.fd.io/govpp/api"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// kindDriver is everything the driver knows about one item kind: the
// messages it sends for the kind, the capability of VPP they need, how an
// op becomes requests and how a dump becomes items. Each kind registers its
// descriptor from a file of its own (nat44_address.go, acl.go, …); Apply
// and Dump look kinds up here and know none of them.
type kindDriver struct {
	kind vppcfg.Kind
	// needs is the optional capability the kind's messages belong to;
	// without it the kind's ops fail as driverapi.ErrUnsupported and Dump
	// skips the kind (none of its objects can exist).
	needs capability
	// messages are the requests the kind's ops and dump send. The
	// compatibility check requires them, or switches needs off.
	messages []api.Message
	// ops turns an op of the kind into requests.
	ops opBuilder
	// dump appends VPP's objects of the kind to the dump; nil when VPP
	// cannot report them back, and then the kind is unobservable.
	dump func(r *dumpRun) error
	// dumpNeeds is a capability the dump needs beyond needs; without it the
	// kind is unobservable.
	dumpNeeds capability
	// dumpIfFound, when set, is a kind whose objects this kind's objects
	// cannot exist without (NAT44 items without NAT44 enabled): the dump is
	// skipped when that kind's dump, which runs earlier, found none.
	dumpIfFound vppcfg.Kind
}

// opBuilder turns one op into its requests. An op belongs to a kind by the
// Go type of its item.
type opBuilder struct {
	// item is the Go type of the kind's items.
	item reflect.Type
	// build returns the requests; their done callbacks write the handle VPP
	// returns into res.
	build func(op *driverapi.Op, res *driverapi.OpResult) ([]*call, error)
}

// forItem builds the ops whose item is a T.
func forItem[T vppcfg.Item](build func(op *driverapi.Op, it T, res *driverapi.OpResult) []*call) opBuilder {
	return opBuilder{
		item: reflect.TypeFor[T](),
		build: func(op *driverapi.Op, res *driverapi.OpResult) ([]*call, error) {
			it, ok := op.Item.(T)
			if !ok {
				return nil, unsupportedItem(op)
			}
			return build(op, it, res), nil
		},
	}
}

// adds tells whether op creates or changes its object, rather than deleting it.
func adds(op *driverapi.Op) bool { return op.Type != driverapi.OpDelete }

func unsupportedItem(op *driverapi.Op) error {
	return fmt.Errorf("%s: item type %T: %w", op, op.Item, driverapi.ErrUnsupported)
}

// kindDrivers holds the descriptor of every registered kind, indexed by
// kind; its size covers every value of vppcfg.Kind, so no index is out of
// range.
var kindDrivers [math.MaxUint8 + 1]*kindDriver

// kindOfItem maps an op to its kind by its item's type (see opBuilder).
var kindOfItem = map[reflect.Type]vppcfg.Kind{}

// register adds the descriptor of one kind. It runs from the init function
// of the kind's file; registering a kind twice is a programming error.
func register(kd *kindDriver) {
	if kd.kind == 0 || kindDrivers[kd.kind] != nil {
		panic(fmt.Sprintf("govppdriver: kind %s registered twice or without a kind", kd.kind))
	}
	kindDrivers[kd.kind] = kd
	if kd.ops.item != nil {
		kindOfItem[kd.ops.item] = kd.kind
	}
}

// driverOf returns the descriptor of the kind op acts on, or nil.
func driverOf(op *driverapi.Op) *kindDriver {
	if op.Item == nil {
		return nil
	}
	return kindDrivers[kindOfItem[reflect.TypeOf(op.Item)]]
}

// registered yields each registered descriptor in kind order, which is the
// order of creation: a kind's dependencies come first.
func registered() iter.Seq[*kindDriver] {
	return func(yield func(*kindDriver) bool) {
		for _, kd := range kindDrivers {
			if kd != nil && !yield(kd) {
				return
			}
		}
	}
}
