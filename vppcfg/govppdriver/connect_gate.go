package govppdriver

import (
	"sync"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// ConnectGate sits between a Driver and the VPP layer and holds the layer
// back until the driver has connected for the first time.
//
// Connect returns before govpp has finished connecting, and the layer's
// Start asks the driver for a dump at once; the dump fails with "not
// connected yet" and the layer logs a "resync failed" warning on every
// start, although nothing is wrong. A caller therefore waits for Connected
// before it starts the layer, and the gate swallows the driver's first
// EventConnected: the layer's own Start performs the resync that event
// would have asked for. Later connection events (VPP restarts) are passed
// through unchanged.
type ConnectGate struct {
	*Driver
	events    chan driverapi.Event
	connected chan struct{}
	stop      chan struct{}
	stopOnce  sync.Once
}

var _ driverapi.Driver = (*ConnectGate)(nil)

// NewConnectGate puts a gate in front of d; it forwards d's events until
// Close.
func NewConnectGate(d *Driver) *ConnectGate {
	g := &ConnectGate{
		Driver:    d,
		events:    make(chan driverapi.Event, cap(d.Events())),
		connected: make(chan struct{}),
		stop:      make(chan struct{}),
	}
	go g.forward()
	return g
}

// Events implements driverapi.Driver: the driver's events minus the first
// EventConnected.
func (g *ConnectGate) Events() <-chan driverapi.Event { return g.events }

// Connected is closed once the driver has connected for the first time.
func (g *ConnectGate) Connected() <-chan struct{} { return g.connected }

func (g *ConnectGate) forward() {
	first := true
	in := g.Driver.Events()
	for {
		select {
		case <-g.stop:
			return
		case ev := <-in:
			if first && ev.Type == driverapi.EventConnected {
				first = false
				close(g.connected)
				continue
			}
			select {
			case g.events <- ev:
			case <-g.stop:
				return
			}
		}
	}
}

// Close stops forwarding and closes the driver.
func (g *ConnectGate) Close() {
	g.stopOnce.Do(func() { close(g.stop) })
	g.Driver.Close()
}
