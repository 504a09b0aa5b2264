package agent

import (
	"sync"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
)

// connectGate sits between the govpp driver and the VPP layer and holds the
// layer back until the driver has connected for the first time.
//
// govppdriver.Connect returns before govpp has finished connecting, and the
// layer's Start asks the driver for a dump at once; the dump fails with "not
// connected yet" and the layer logs a "resync failed" warning on every start
// of every command, although nothing is wrong. Start therefore waits for the
// driver's first EventConnected and swallows it: the layer's own Start
// performs the resync that event would have asked for. Later connection
// events (VPP restarts) are passed through unchanged.
type connectGate struct {
	*govppdriver.Driver
	events    chan vppcfg.Event
	connected chan struct{}
	stop      chan struct{}
	stopOnce  sync.Once
}

var _ vppcfg.Driver = (*connectGate)(nil)

func newConnectGate(d *govppdriver.Driver) *connectGate {
	g := &connectGate{
		Driver:    d,
		events:    make(chan vppcfg.Event, cap(d.Events())),
		connected: make(chan struct{}),
		stop:      make(chan struct{}),
	}
	go g.forward()
	return g
}

// Events implements vppcfg.Driver: the driver's events minus the first
// EventConnected.
func (g *connectGate) Events() <-chan vppcfg.Event { return g.events }

// Connected is closed once the driver has connected for the first time.
func (g *connectGate) Connected() <-chan struct{} { return g.connected }

func (g *connectGate) forward() {
	first := true
	in := g.Driver.Events()
	for {
		select {
		case <-g.stop:
			return
		case ev := <-in:
			if first && ev.Type == vppcfg.EventConnected {
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
func (g *connectGate) Close() {
	g.stopOnce.Do(func() { close(g.stop) })
	g.Driver.Close()
}
