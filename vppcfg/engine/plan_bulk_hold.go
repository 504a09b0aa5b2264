package engine

import (
	"fmt"
	"time"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// The bulk hold. Some items are applied by one API call that visits every
// object of other kinds VPP holds (a kind's Walks: enabling NAT44 on an
// outside interface registers each static mapping's external address with
// it). After a VPP restart the layer may reconnect before the interfaces
// are back; it then creates tens of thousands of mappings first, and the
// interface's call, once it comes, holds VPP's API for seconds (over 15 s
// at 65,000 mappings on a loaded 2-core node), past the reply timeout and
// govpp's health check, which reconnects and resyncs again. So after a
// resync with a restarted VPP (another process than the one the layer had
// programmed), while such an item waits for its interface, within
// Options.BulkHold of that resync, and VPP holds no object of the kinds it
// visits, the creates of those kinds wait too: the interface's call then
// finds none, and each create registers its own. VPP's work is the same;
// no call holds its API. (A pod's interface is an outside interface too:
// one whose pod is gone holds the mappings for the whole BulkHold, once.)

// walkers notes, for each kind, an interface whose item would visit it once
// the interface exists; nil until readiness finds one.
type walkers map[vppcfg.Kind]string

// note records that item it waits for interface missing, when a bulk hold
// is armed.
func (w *walkers) note(it vppcfg.Item, missing string, armed bool) {
	if !armed {
		return
	}
	f := core.Of(it).Walks
	if f == nil {
		return
	}
	for _, k := range f(it) {
		if *w == nil {
			*w = walkers{}
		}
		if _, ok := (*w)[k]; !ok {
			(*w)[k] = missing
		}
	}
}

// bulkHoldArmed tells whether in's pass is within its bulk hold.
func (in *diffInput) bulkHoldArmed() bool {
	return !in.BulkHoldUntil.IsZero() && in.Now.Before(in.BulkHoldUntil)
}

// holdBulk holds back the desired items of the kinds w visits, unless VPP
// already holds one of them (then the interface's call visits those
// anyway, and holding the rest would only delay them).
func (p *opPlan) holdBulk(sc *scope, in diffInput, ready *readySet, w walkers) {
	for k := range in.Applied {
		if _, walked := w[k.Kind]; walked {
			return
		}
	}
	sc.eachDesired(func(k vppcfg.Key, _ core.DesiredEntry) {
		iface, walked := w[k.Kind]
		if !walked || ready.held(k) {
			return
		}
		ready.hold(k)
		p.Pending[k] = fmt.Sprintf("waits for interface %q (at most until %s): the item VPP applies on it visits every object of this kind, so it goes first", iface, in.BulkHoldUntil.Format(time.TimeOnly))
		p.BulkHeld = true
	})
}
