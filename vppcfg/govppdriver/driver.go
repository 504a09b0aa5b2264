// Package govppdriver implements vppcfg.Driver over go.fd.io/govpp v0.13.0
// and the VPP 25.10 binary API: items become nat44_ed, acl, cnat, interface
// and feature messages, dumps become items again, and govpp connection
// events become the layer's interface and reconnect events.
//
// Every request goes through an api.Connection with a context deadline.
// Operations are pipelined on one stream (pipeline.go), so a cold sync does
// not pay one round trip per message. Each Add/Del pair of messages is built
// by one private addDel function per object (nat44.go, acl.go, cnat.go,
// interfaces.go), and VPP's error codes are branched explicitly: a delete
// that finds nothing is success, an add that finds the object is drift.
package govppdriver

import (
	"context"
	"errors"
	"fmt"
	"go.fd.io/govpp/binapi/memclnt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"go.fd.io/govpp/adapter"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/feature"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// Options configure a Driver. Zero values take the defaults noted.
type Options struct {
	// Logger receives the driver's logs; default logrus.StandardLogger().
	Logger logrus.FieldLogger
	// PipelineDepth is how many requests are in flight on one stream; default 256.
	PipelineDepth int
	// ReplyTimeout bounds the wait for one reply; default 10s.
	ReplyTimeout time.Duration
	// CallTimeout is the deadline put on calls whose context has none; default 30s.
	CallTimeout time.Duration
	// ReconnectAttempts and ReconnectInterval are govpp's reconnect loop
	// used by Connect; defaults 1000 and 1s (a VPP restart outlasts govpp's
	// default of 3 × 0.5s).
	ReconnectAttempts int
	ReconnectInterval time.Duration
}

func (o *Options) setDefaults() {
	if o.Logger == nil {
		o.Logger = logrus.StandardLogger()
	}
	if o.PipelineDepth <= 0 {
		o.PipelineDepth = 256
	}
	if o.ReplyTimeout <= 0 {
		o.ReplyTimeout = 10 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.ReconnectAttempts <= 0 {
		o.ReconnectAttempts = 1000
	}
	if o.ReconnectInterval <= 0 {
		o.ReconnectInterval = time.Second
	}
}

// Driver talks to one VPP through govpp. It implements vppcfg.Driver.
type Driver struct {
	conn api.Connection
	opts Options
	log  logrus.FieldLogger

	events chan vppcfg.Event
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// disconnect closes a connection the driver opened itself (Connect).
	disconnect func()

	isConnected atomic.Bool
	// connection ends when the connection it stands for is reported lost;
	// calls are bound to it (withDeadline), so that requests in flight to
	// a VPP that died fail at once instead of after ReplyTimeout each.
	connection atomic.Pointer[connectionLife]
	// caps are the optional capabilities the connected VPP offers.
	caps atomic.Pointer[capabilities]

	mu      sync.Mutex
	stats   map[string]*vppcfg.CallStat
	ifNames map[uint32]string
	watch   api.Watcher
}

// connectionLife is the lifetime of one connection to VPP.
type connectionLife struct {
	ctx  context.Context
	lost context.CancelFunc
}

func newConnectionLife(parent context.Context) *connectionLife {
	ctx, lost := context.WithCancel(parent)
	return &connectionLife{ctx: ctx, lost: lost}
}

// connectionLost ends the current connection's life: its calls in flight
// return now; later calls belong to the next connection.
func (d *Driver) connectionLost() {
	d.connection.Swap(newConnectionLife(d.ctx)).lost()
}

// capabilities record what the compatibility check found.
type capabilities struct {
	// err is set when a message the driver cannot do without is missing.
	err error
	// cnat is false when the cnat plugin (or one of its messages) is missing.
	cnat bool
	// routes is false when a message DropRoute items need is missing.
	routes bool
}

var _ vppcfg.Driver = (*Driver)(nil)

// New returns a driver over conn. events are govpp's connection events
// (from core.AsyncConnect); every Connected among them is passed on as a
// vppcfg.EventConnected, after the driver has checked message compatibility
// and re-subscribed to interface events. With nil events conn must already
// be connected.
func New(conn api.Connection, events <-chan core.ConnectionEvent, opts Options) *Driver {
	opts.setDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	d := &Driver{
		conn:    conn,
		opts:    opts,
		log:     opts.Logger.WithField("component", "govppdriver"),
		events:  make(chan vppcfg.Event, 1024),
		ctx:     ctx,
		cancel:  cancel,
		stats:   map[string]*vppcfg.CallStat{},
		ifNames: map[uint32]string{},
	}
	d.caps.Store(&capabilities{err: fmt.Errorf("%w: %w", vppcfg.ErrDrift, vppcfg.ErrNotConnected)})
	d.connection.Store(newConnectionLife(ctx))
	d.wg.Add(1)
	go d.watchConnection(events)
	return d
}

// Connect connects to VPP through adapter a (for example
// socketclient.NewVppClient(path), or fakevpp.New()) and returns a driver
// over the connection. govpp reconnects by itself, with far more attempts
// than its default three (see Options), because a VPP restart takes longer.
func Connect(a adapter.VppAPI, opts Options) (*Driver, error) {
	opts.setDefaults()
	conn, events, err := core.AsyncConnect(a, opts.ReconnectAttempts, opts.ReconnectInterval)
	if err != nil {
		return nil, fmt.Errorf("connect to VPP: %w", err)
	}
	d := New(conn, events, opts)
	d.disconnect = conn.Disconnect
	return d, nil
}

// Close stops the driver's goroutines and closes a connection opened by Connect.
func (d *Driver) Close() {
	d.cancel()
	if d.disconnect != nil {
		d.disconnect()
	}
	d.wg.Wait()
}

// Events implements vppcfg.Driver.
func (d *Driver) Events() <-chan vppcfg.Event { return d.events }

// CallStats implements vppcfg.Driver.
func (d *Driver) CallStats() []vppcfg.CallStat {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]vppcfg.CallStat, 0, len(d.stats))
	for _, s := range d.stats {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Msg < out[j].Msg })
	return out
}

func (d *Driver) count(msg string, failed bool) {
	d.mu.Lock()
	s := d.stats[msg]
	if s == nil {
		s = &vppcfg.CallStat{Msg: msg}
		d.stats[msg] = s
	}
	s.Calls++
	if failed {
		s.Failures++
	}
	d.mu.Unlock()
}

// withDeadline puts CallTimeout on a context that has no deadline, and
// ends it when the current connection is reported lost: a reply that a
// dead VPP will never send is not waited for (a VPP killed in the middle
// of a cold sync cost ReplyTimeout, 10 s, before the layer re-read VPP).
func (d *Driver) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	var cancel context.CancelFunc
	if _, ok := ctx.Deadline(); ok {
		ctx, cancel = context.WithCancel(ctx)
	} else {
		ctx, cancel = context.WithTimeout(ctx, d.opts.CallTimeout)
	}
	stop := context.AfterFunc(d.connection.Load().ctx, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

// Apply implements vppcfg.Driver: it turns each op into its requests and
// sends all of them through one pipeline.
func (d *Driver) Apply(ctx context.Context, ops []vppcfg.Op) []vppcfg.OpResult {
	ctx, cancel := d.withDeadline(ctx)
	defer cancel()
	res := make([]vppcfg.OpResult, len(ops))
	caps := d.caps.Load()
	var all []*call
	for i := range ops {
		calls, err := d.buildOp(caps, &ops[i], &res[i])
		if err != nil {
			res[i].Err = err
			continue
		}
		for _, c := range calls {
			c.op = i
		}
		all = append(all, calls...)
	}
	d.pipeline(ctx, all)
	for _, c := range all {
		if c.err != nil && res[c.op].Err == nil {
			res[c.op].Err = fmt.Errorf("%s: %w", ops[c.op], c.err)
		}
	}
	return res
}

// buildOp returns the requests of one op; their done callbacks write the
// handle VPP returns into res.
func (d *Driver) buildOp(caps *capabilities, op *vppcfg.Op, res *vppcfg.OpResult) ([]*call, error) {
	if caps.err != nil {
		return nil, caps.err
	}
	isAdd := op.Type != vppcfg.OpDelete
	switch it := op.Item.(type) {
	case nil:
		if op.Type == vppcfg.OpSetACLs {
			return []*call{setACLList(op.SwIfIndex, op.ACLs)}, nil
		}
	case *vppcfg.NAT44Global:
		return natGlobalCalls(op, it), nil
	case *vppcfg.NAT44Address:
		return []*call{addDelAddress(isAdd, it)}, nil
	case *vppcfg.NAT44Interface:
		return []*call{addDelInterfaceRole(isAdd, it, op.SwIfIndex)}, nil
	case *vppcfg.NAT44StaticMapping:
		return []*call{addDelStaticMapping(isAdd, it, op.Tag)}, nil
	case *vppcfg.NAT44IdentityMapping:
		return []*call{addDelIdentityMapping(isAdd, it, op.Tag)}, nil
	case *vppcfg.NAT44LBMapping:
		switch op.Type {
		case vppcfg.OpAddLocal, vppcfg.OpDelLocal:
			return []*call{addDelLBLocal(op.Type == vppcfg.OpAddLocal, it, op.Local)}, nil
		}
		return []*call{addDelLBMapping(isAdd, it, op.Tag)}, nil
	case *vppcfg.ACL:
		if op.Type == vppcfg.OpDelete {
			return []*call{delACL(op.Handle)}, nil
		}
		index := ^uint32(0)
		if op.Type == vppcfg.OpUpdate {
			index = op.Handle
		}
		return []*call{addReplaceACL(index, it, op.Tag, &res.Handle)}, nil
	case *vppcfg.CNATTranslation:
		if !caps.cnat {
			return nil, fmt.Errorf("%s: cnat plugin: %w", op, vppcfg.ErrUnsupported)
		}
		if op.Type == vppcfg.OpDelete {
			return []*call{delTranslation(op.Handle)}, nil
		}
		return []*call{updateTranslation(it, &res.Handle)}, nil
	case *vppcfg.CNATSnatConfig:
		if !caps.cnat {
			return nil, fmt.Errorf("%s: cnat plugin: %w", op, vppcfg.ErrUnsupported)
		}
		old, _ := op.Old.(*vppcfg.CNATSnatConfig)
		return snatConfigCalls(op.Type, it, old), nil
	case *vppcfg.CNATSnatInterface:
		if !caps.cnat {
			return nil, fmt.Errorf("%s: cnat plugin: %w", op, vppcfg.ErrUnsupported)
		}
		return []*call{addDelSnatInterface(isAdd, it, op.SwIfIndex)}, nil
	case *vppcfg.InterfaceFeature:
		return featureCalls(isAdd, it, op.SwIfIndex), nil
	case *vppcfg.DropRoute:
		if !caps.routes {
			return nil, fmt.Errorf("%s: ip route messages: %w", op, vppcfg.ErrUnsupported)
		}
		return []*call{addDelDropRoute(isAdd, it)}, nil
	}
	return nil, fmt.Errorf("%s: item type %T: %w", op, op.Item, vppcfg.ErrUnsupported)
}

// usedMessages are the requests the driver sends; each must be known to
// VPP, except the optional ones (cnat, the feature query).
func usedMessages() (required, optionalCNAT []api.Message) {
	required = []api.Message{
		&interfaces.SwInterfaceDump{}, &interfaces.WantInterfaceEvents{}, &interfaces.SwInterfaceEvent{},
		&nat44_ed.Nat44EdPluginEnableDisable{}, &nat44_ed.Nat44ShowRunningConfig{},
		&nat44_ed.Nat44ForwardingEnableDisable{}, &nat44_ed.NatSetTimeouts{},
		&nat44_ed.Nat44InterfaceAddDelFeature{}, &nat44_ed.Nat44InterfaceDump{},
		&nat44_ed.Nat44EdAddDelOutputInterface{}, &nat44_ed.Nat44EdOutputInterfaceGet{},
		&nat44_ed.Nat44AddDelAddressRange{}, &nat44_ed.Nat44AddressDump{},
		&nat44_ed.Nat44AddDelStaticMappingV2{}, &nat44_ed.Nat44StaticMappingDump{},
		&nat44_ed.Nat44AddDelIdentityMapping{}, &nat44_ed.Nat44IdentityMappingDump{},
		&nat44_ed.Nat44AddDelLbStaticMapping{}, &nat44_ed.Nat44LbStaticMappingAddDelLocal{},
		&nat44_ed.Nat44LbStaticMappingDump{},
		&acl.ACLAddReplace{}, &acl.ACLDel{}, &acl.ACLDump{}, &acl.ACLInterfaceSetACLList{}, &acl.ACLInterfaceListDump{},
		&feature.FeatureEnableDisable{},
	}
	optionalCNAT = []api.Message{
		&cnat.CnatTranslationUpdate{}, &cnat.CnatTranslationDel{}, &cnat.CnatTranslationDump{},
		&cnat.CnatSetSnatAddresses{}, &cnat.CnatGetSnatAddresses{}, &cnat.CnatSnatPolicyAddDelIf{},
		&cnat.CnatSnatPolicyAddDelExcludePfx{}, &cnat.CnatSetSnatPolicy{},
	}
	return required, optionalCNAT
}

// checkCompatibility looks every message of the binapi packages the driver
// uses up in the connected VPP (as govpp's examples do with AllMessages).
// Missing optional messages switch a capability off; a missing required one
// makes the driver refuse to work (vppcfg.ErrIncompatible).
func (d *Driver) checkCompatibility() *capabilities {
	lookup, ok := d.conn.(interface {
		GetMessageID(api.Message) (uint16, error)
	})
	if !ok {
		d.log.Warn("connection cannot look message IDs up; skipping the compatibility check")
		return &capabilities{cnat: true, routes: true}
	}
	missing := map[string]bool{}
	for _, pkg := range [][]api.Message{interfaces.AllMessages(), nat44_ed.AllMessages(), acl.AllMessages(),
		cnat.AllMessages(), feature.AllMessages(), routeMessages()} {
		for _, m := range pkg {
			if _, err := lookup.GetMessageID(m); err != nil {
				missing[m.GetMessageName()] = true
			}
		}
	}
	required, optCNAT := usedMessages()
	anyMissing := func(ms []api.Message) []string {
		var out []string
		for _, m := range ms {
			if missing[m.GetMessageName()] {
				out = append(out, m.GetMessageName())
			}
		}
		return out
	}
	caps := &capabilities{cnat: true, routes: len(anyMissing(routeMessages())) == 0}
	if !caps.routes {
		d.log.WithField("missing", anyMissing(routeMessages())).Warn("ip route messages missing: drop routes will fail as unsupported")
	}
	if m := anyMissing(required); len(m) > 0 {
		caps.err = fmt.Errorf("%w: missing messages %v", vppcfg.ErrIncompatible, m)
	}
	if m := anyMissing(optCNAT); len(m) > 0 {
		caps.cnat = false
		d.log.WithField("missing", m).Warn("cnat plugin not usable: cnat items will fail as unsupported")
	} else if !d.cnatAnswers() {
		caps.cnat = false
		d.log.Warn("cnat plugin answers UNIMPLEMENTED: cnat items will fail as unsupported")
	}
	if len(missing) > 0 {
		names := make([]string, 0, len(missing))
		for n := range missing {
			names = append(names, n)
		}
		slices.Sort(names)
		d.log.WithField("messages", names).Debug("messages unknown to the connected VPP")
	}
	return caps
}

// cnatAnswers probes the cnat plugin: its message IDs may exist while the
// plugin is not loaded (or not emulated), and then it answers UNIMPLEMENTED.
func (d *Driver) cnatAnswers() bool {
	ctx, cancel := d.withDeadline(d.ctx)
	defer cancel()
	err := d.invoke(ctx, &cnat.CnatGetSnatAddresses{}, &cnat.CnatGetSnatAddressesReply{})
	return !errors.Is(err, api.UNIMPLEMENTED)
}

// watchConnection turns govpp connection events into layer events.
func (d *Driver) watchConnection(events <-chan core.ConnectionEvent) {
	defer d.wg.Done()
	if events == nil {
		d.onConnected()
		<-d.ctx.Done()
		d.stopInterfaceEvents()
		return
	}
	for {
		select {
		case <-d.ctx.Done():
			d.stopInterfaceEvents()
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev.State {
			case core.Connected:
				d.onConnected()
			case core.Disconnected, core.NotResponding:
				d.isConnected.Store(false)
				d.connectionLost()
				d.stopInterfaceEvents()
				d.log.WithError(ev.Error).WithField("state", ev.State.String()).Warn("VPP connection lost")
				d.emit(vppcfg.Event{Type: vppcfg.EventDisconnected})
			case core.Failed:
				d.isConnected.Store(false)
				d.connectionLost()
				d.log.WithError(ev.Error).Error("reconnecting to VPP failed for good; a new connection is needed")
				d.emit(vppcfg.Event{Type: vppcfg.EventDisconnected})
			}
		}
	}
}

// onConnected runs on every (re)connection: VPP may be a new process with
// other message IDs, interfaces and no event subscription.
func (d *Driver) onConnected() {
	caps := d.checkCompatibility()
	d.caps.Store(caps)
	d.isConnected.Store(true)
	if caps.err != nil {
		d.log.WithError(caps.err).Error("VPP is not compatible with this driver")
	} else {
		d.startInterfaceEvents()
	}
	pid := d.vppProcessID()
	d.log.WithField("vpp_pid", pid).Info("connected to VPP")
	d.emit(vppcfg.Event{Type: vppcfg.EventConnected, VPPPID: pid})
}

// vppProcessID asks VPP for its process ID (0 if it does not answer); see
// vppcfg.Event.VPPPID.
func (d *Driver) vppProcessID() uint32 {
	ctx, cancel := d.withDeadline(d.ctx)
	defer cancel()
	reply := &memclnt.ControlPingReply{}
	if err := d.conn.Invoke(ctx, &memclnt.ControlPing{}, reply); err != nil || reply.Retval != 0 {
		d.log.WithError(err).Warn("control ping failed: VPP's process ID is unknown")
		return 0
	}
	return reply.VpePID
}

// emit delivers an event; connection events wait for room, interface events
// are dropped when nobody reads (the reconciler also polls interfaces).
func (d *Driver) emit(ev vppcfg.Event) {
	if ev.Type == vppcfg.EventInterfaceAdded || ev.Type == vppcfg.EventInterfaceDeleted {
		select {
		case d.events <- ev:
		default:
			d.log.WithField("event", ev.Type.String()).Warn("event queue full; dropping interface event")
		}
		return
	}
	select {
	case d.events <- ev:
	case <-d.ctx.Done():
	}
}
