package engine

import (
	"context"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// handleEvent reacts to interface and connection events.
func (r *Reconciler) handleEvent(ctx context.Context, ev driverapi.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	log := r.log.WithFields(logrus.Fields{"event": ev.Type.String(), "interface": ev.Interface, "sw_if_index": ev.SwIfIndex})
	switch ev.Type {
	case driverapi.EventConnected:
		// What the layer knows beyond a dump was learnt from the VPP
		// process of its last dump. A connection to the same process (the
		// first event, arriving after the layer has used the connection,
		// or a reconnection after a missed health check) keeps it.
		restarted := ev.VPPPID == 0 || r.vppPID != ev.VPPPID
		if restarted {
			log.WithField("vpp_pid", ev.VPPPID).Info("connected to VPP: full resync (VPP may have restarted)")
		} else {
			log.WithField("vpp_pid", ev.VPPPID).Info("connected to the same VPP process: full resync")
		}
		r.requestResync(restarted)
		r.resyncAt = time.Now() // not after a backoff from failures while disconnected
		return
	case driverapi.EventDisconnected:
		log.Warn("disconnected from VPP: nothing is applied until the next connection's resync")
		// VPP may come back as a new process before the connection's
		// event reaches this loop; a pass from the applied view of the old
		// process (a retry, a commit) would then write to the new one
		// beside the resync's writes, or fail there for a plugin not yet
		// enabled.
		r.disconnected = true
		r.requestResync(false)
		return
	}
	if !r.synced {
		return // the first resync reads the interfaces anyway
	}
	switch ev.Type {
	case driverapi.EventInterfaceAdded:
		if ev.Interface == "" {
			return
		}
		if idx, known := r.ifaces[ev.Interface]; known && idx == ev.SwIfIndex {
			return
		} else if known {
			r.interfaceGone(ev.Interface)
		}
		log.Info("interface appeared")
		r.ifaces[ev.Interface] = ev.SwIfIndex
		r.cleanStale(ctx, ev.Interface, ev.SwIfIndex)
	case driverapi.EventInterfaceDeleted:
		name := ev.Interface
		if name == "" {
			for n, idx := range r.ifaces {
				if idx == ev.SwIfIndex {
					name = n
				}
			}
		}
		if _, known := r.ifaces[name]; !known {
			return
		}
		log.Info("interface deleted: its items are pending again")
		r.interfaceGone(name)
	}
	r.full = true
	r.pass(ctx)
}

// interfaceGone forgets what VPP removed together with an interface: its
// NAT44 roles, ACL bindings and features. What VPP keeps by index (cnat's
// SNAT-policy entries, vppcfg's kindSpec.Rebind) is remembered so that it can be
// cleaned if the index is reused.
func (r *Reconciler) interfaceGone(name string) {
	idx := r.ifaces[name]
	delete(r.ifaces, name)
	for k, a := range r.applied {
		b, ok := a.Item.(vppcfg.InterfaceBound)
		if !ok || !slices.Contains(b.Interfaces(), name) {
			continue
		}
		if core.Describe(k.Kind).Rebind != nil {
			r.stale[idx] = append(r.stale[idx], a.Item)
		}
		r.deleteApplied(k)
		r.retry.succeeded(k)
		delete(r.lastErr, k)
	}
	r.merged.forgetInterface(name)
}

// cleanStale removes the objects a deleted interface left at an index that
// now belongs to ifName, unless ifName wants them.
func (r *Reconciler) cleanStale(ctx context.Context, ifName string, idx uint32) {
	left := r.stale[idx]
	delete(r.stale, idx)
	var ops []driverapi.Op
	r.storeMu.RLock()
	for _, it := range left {
		now := core.Describe(it.Key().Kind).Rebind(it, ifName)
		if now == nil {
			continue
		}
		k := now.Key()
		if _, wanted := r.store.Items[k]; !wanted {
			ops = append(ops, driverapi.Op{Type: driverapi.OpDelete, Key: k, Item: now, SwIfIndex: idx})
		}
	}
	r.storeMu.RUnlock()
	if len(ops) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, r.opts.OpTimeout)
	defer cancel()
	for i, res := range r.d.Apply(cctx, ops) {
		if res.Err != nil {
			r.log.WithError(res.Err).WithField("op", ops[i].String()).Warn("cleaning an object a deleted interface left behind failed")
		}
	}
}

// pollInterfaces re-lists interfaces in case an event was missed.
func (r *Reconciler) pollInterfaces(ctx context.Context) {
	r.lastPoll = time.Now()
	pctx, cancel := context.WithTimeout(ctx, r.opts.OpTimeout)
	ifaces, err := r.d.Interfaces(pctx)
	cancel()
	if err != nil {
		r.log.WithError(err).Warn("listing interfaces failed")
		return
	}
	changed := false
	for name := range r.ifaces {
		if _, ok := ifaces[name]; !ok {
			r.interfaceGone(name)
			changed = true
		}
	}
	for name, idx := range ifaces {
		if old, ok := r.ifaces[name]; !ok || old != idx {
			if ok {
				r.interfaceGone(name)
			}
			r.ifaces[name] = idx
			r.cleanStale(ctx, name, idx)
			changed = true
		}
	}
	if changed {
		r.log.Info("interfaces changed without an event")
		r.full = true
		r.pass(ctx)
	}
}
