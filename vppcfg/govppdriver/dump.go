package govppdriver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// Dump implements driverapi.Driver: it reads VPP's process ID and interfaces,
// then every registered kind in kind order, each by the dump of its
// descriptor, and maps the objects back to items. Labels and ACL names
// stay empty (VPP has only the tag; the layer reads it). A kind without a
// dump (cnat SNAT settings and SNAT-policy interfaces: VPP has none), or
// whose dump needs a capability VPP lacks (features without cnat), is
// reported unobservable; a kind whose own capability is missing is skipped,
// since none of its objects can exist.
func (d *Driver) Dump(ctx context.Context) (*driverapi.State, error) {
	caps := d.caps.Load()
	if caps.err != nil {
		return nil, caps.err
	}
	life := d.connection.Load()
	ctx, cancel := d.withDeadline(ctx)
	defer cancel()
	pid := d.vppProcessID()
	ifaces, err := d.Interfaces(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[uint32]string, len(ifaces))
	for n, i := range ifaces {
		names[i] = n
	}
	r := &dumpRun{d: d, ctx: ctx, names: names, st: &driverapi.State{
		VPPPID:       pid,
		Interfaces:   ifaces,
		Unobservable: map[vppcfg.Kind]bool{},
	}}
	for kd := range registered() {
		switch {
		case kd.dump == nil:
			r.st.Unobservable[kd.kind] = true
		case !caps.has(kd.needs):
		case !caps.has(kd.dumpNeeds):
			r.st.Unobservable[kd.kind] = true
		case kd.dumpIfFound != 0 && r.found[kd.dumpIfFound] == 0:
		default:
			r.kind = kd.kind
			if err := kd.dump(r); err != nil {
				return nil, err
			}
		}
	}
	if life.ctx.Err() == nil {
		life.unread.Store(false) // writes may go: the layer learns this VPP's state
	}
	return r.st, nil
}

// dumpRun is one Dump in progress, handed to each kind's dump.
type dumpRun struct {
	d   *Driver
	ctx context.Context
	st  *driverapi.State
	// names are the interface names by sw_if_index.
	names map[uint32]string
	// kind is the kind being dumped; found counts the objects per kind.
	kind  vppcfg.Kind
	found [math.MaxUint8 + 1]int
}

// add records one object of the kind being dumped.
func (r *dumpRun) add(it vppcfg.Item, tag string, handle uint32) {
	r.st.Objects = append(r.st.Objects, driverapi.Observed{Item: it, Tag: tag, Handle: handle})
	r.found[r.kind]++
}

// receiver is a generated dump stream client.
type receiver[T any] interface {
	Recv() (T, error)
	Close() error
}

// drain reads a dump stream to its end.
func drain[T any](d *Driver, what string, open func() (receiver[T], error), each func(T)) error {
	s, err := open()
	d.count(what, err != nil)
	if err != nil {
		return fmt.Errorf("dump %s: %w", what, err)
	}
	for {
		m, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			// The generated client closes its stream only at the dump's
			// end; left open, the replies still coming would wait on it
			// (see ReplyHandoverTimeout).
			_ = s.Close()
			return fmt.Errorf("dump %s: %w", what, err)
		}
		each(m)
	}
}
