package govppdriver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"go.fd.io/govpp/api"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// Interfaces implements driverapi.Driver: every interface by exact name (VPP's
// name filter is a case-insensitive substring match, so names are compared
// here, on the client side).
func (d *Driver) Interfaces(ctx context.Context) (map[string]uint32, error) {
	ctx, cancel := d.withDeadline(ctx)
	defer cancel()
	byIndex, err := d.dumpInterfaces(ctx, ^uint32(0))
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint32, len(byIndex))
	for idx, name := range byIndex {
		out[name] = idx
	}
	d.mu.Lock()
	d.ifNames = byIndex
	d.mu.Unlock()
	return out, nil
}

// dumpInterfaces lists one interface, or all with ^uint32(0).
func (d *Driver) dumpInterfaces(ctx context.Context, swIfIndex uint32) (map[uint32]string, error) {
	stream, err := interfaces.NewServiceClient(d.conn).SwInterfaceDump(ctx, &interfaces.SwInterfaceDump{
		SwIfIndex: interface_types.InterfaceIndex(swIfIndex),
	})
	d.count((&interfaces.SwInterfaceDump{}).GetMessageName(), err != nil)
	if err != nil {
		return nil, fmt.Errorf("dump interfaces: %w", err)
	}
	out := map[uint32]string{}
	for {
		det, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			_ = stream.Close() // closed by the client only at the end
			return nil, fmt.Errorf("dump interfaces: %w", err)
		}
		if swIfIndex != ^uint32(0) && uint32(det.SwIfIndex) != swIfIndex {
			continue
		}
		out[uint32(det.SwIfIndex)] = det.InterfaceName
	}
}

// startInterfaceEvents subscribes to SwInterfaceEvent. It is redone after
// every reconnect: the subscription and the message IDs die with VPP.
func (d *Driver) startInterfaceEvents() {
	d.stopInterfaceEvents()
	ctx, cancel := d.withDeadline(d.ctx)
	defer cancel()
	if _, err := d.Interfaces(ctx); err != nil {
		d.log.WithError(err).Warn("listing interfaces failed")
	}
	w, err := d.conn.WatchEvent(d.ctx, &interfaces.SwInterfaceEvent{})
	if err != nil {
		d.log.WithError(err).Warn("cannot watch interface events; relying on polling")
		return
	}
	err = d.invoke(ctx, &interfaces.WantInterfaceEvents{EnableDisable: 1, PID: uint32(os.Getpid())},
		&interfaces.WantInterfaceEventsReply{})
	if err != nil && !errors.Is(err, api.INVALID_REGISTRATION) { // already subscribed
		d.log.WithError(err).Warn("subscribing to interface events failed; relying on polling")
	}
	d.mu.Lock()
	d.watch = w
	d.mu.Unlock()
	d.wg.Add(1)
	go d.interfaceEvents(w)
}

func (d *Driver) stopInterfaceEvents() {
	d.mu.Lock()
	w := d.watch
	d.watch = nil
	d.mu.Unlock()
	if w != nil {
		w.Close()
	}
}

// interfaceEvents turns SwInterfaceEvent into named layer events. Events
// carry only the index: a new interface's name is dumped, a deleted one's
// comes from the cache.
func (d *Driver) interfaceEvents(w api.Watcher) {
	defer d.wg.Done()
	for msg := range w.Events() {
		ev, ok := msg.(*interfaces.SwInterfaceEvent)
		if !ok {
			continue
		}
		idx := uint32(ev.SwIfIndex)
		if ev.Deleted {
			d.mu.Lock()
			name := d.ifNames[idx]
			delete(d.ifNames, idx)
			d.mu.Unlock()
			d.emit(driverapi.Event{Type: driverapi.EventInterfaceDeleted, Interface: name, SwIfIndex: idx})
			continue
		}
		ctx, cancel := d.withDeadline(d.ctx)
		names, err := d.dumpInterfaces(ctx, idx)
		cancel()
		if err != nil {
			d.log.WithError(err).WithField("sw_if_index", idx).Warn("cannot name a new interface")
			continue
		}
		name, found := names[idx]
		d.mu.Lock()
		known := d.ifNames[idx] == name
		if found {
			d.ifNames[idx] = name
		}
		d.mu.Unlock()
		if found && !known {
			d.emit(driverapi.Event{Type: driverapi.EventInterfaceAdded, Interface: name, SwIfIndex: idx})
		}
	}
}
