package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/internal/acllists"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
	"github.com/vppsvc/vppsvc/vppcfg/vppcfgtest"
)

// fakeDriver is an in-memory Driver with VPP-like bookkeeping: handles are
// allocated, adds of existing objects and updates of missing handles fail as
// drift, NAT44 disable removes all NAT44 objects, interface-bound ops need
// the interface. Dumps drop labels and ACL names, as VPP only has tags.
type fakeDriver struct {
	mu       sync.Mutex
	ifaces   map[string]uint32
	nextIf   uint32
	objs     map[vppcfg.Key]driverapi.Observed
	aclLists map[string]acllists.Indexes
	// pid is the VPP process a dump reports (0: unknown, as if VPP may
	// have restarted since the last dump).
	pid uint32
	// snat is cnat's global SNAT settings, which VPP cannot dump.
	snat   *vppcfg.CNATSnatConfig
	handle uint32
	log    []string
	// fail decides whether an op fails (before it is applied).
	fail   func(op driverapi.Op) error
	events chan driverapi.Event
	calls  int
	// noDump makes Dump fail as over a lost connection (Apply still
	// works: a restarted VPP reachable before its connection event).
	noDump bool
}

func newFakeDriver(ifNames ...string) *fakeDriver {
	f := &fakeDriver{ifaces: map[string]uint32{}, nextIf: 1, objs: map[vppcfg.Key]driverapi.Observed{},
		aclLists: map[string]acllists.Indexes{}, events: make(chan driverapi.Event, 16)}
	for _, n := range ifNames {
		f.ifaces[n] = f.nextIf
		f.nextIf++
	}
	return f
}

func (f *fakeDriver) addInterface(name string) uint32 {
	f.mu.Lock()
	idx := f.nextIf
	f.nextIf++
	f.ifaces[name] = idx
	f.mu.Unlock()
	f.events <- driverapi.Event{Type: driverapi.EventInterfaceAdded, Interface: name, SwIfIndex: idx}
	return idx
}

// deleteInterface removes an interface and, like VPP, its NAT roles, ACL
// bindings and features.
func (f *fakeDriver) deleteInterface(name string) {
	f.mu.Lock()
	idx := f.ifaces[name]
	delete(f.ifaces, name)
	delete(f.aclLists, name)
	for k, o := range f.objs {
		if b, ok := o.Item.(vppcfg.InterfaceBound); ok && slices.Contains(b.Interfaces(), name) {
			if _, keep := o.Item.(*vppcfg.CNATSnatInterface); !keep {
				delete(f.objs, k)
			}
		}
	}
	f.mu.Unlock()
	f.events <- driverapi.Event{Type: driverapi.EventInterfaceDeleted, Interface: name, SwIfIndex: idx}
}

func (f *fakeDriver) Events() <-chan driverapi.Event { return f.events }

func (f *fakeDriver) CallStats() []driverapi.CallStat {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []driverapi.CallStat{{Msg: "fake", Calls: uint64(f.calls)}}
}

func (f *fakeDriver) Interfaces(context.Context) (map[string]uint32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]uint32{}
	for k, v := range f.ifaces {
		out[k] = v
	}
	return out, nil
}

func (f *fakeDriver) Dump(ctx context.Context) (*driverapi.State, error) {
	ifs, _ := f.Interfaces(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noDump {
		return nil, driverapi.ErrNotConnected
	}
	st := &driverapi.State{Interfaces: ifs, VPPPID: f.pid, Unobservable: map[vppcfg.Kind]bool{vppcfg.KindCNATSnatConfig: true}}
	for _, k := range core.SortedKeys(f.objs) {
		o := f.objs[k]
		o.Item = core.WithLabel(o.Item, "")
		st.Objects = append(st.Objects, o)
	}
	for _, n := range core.SortedKeys(f.aclLists) {
		l := f.aclLists[n]
		st.Objects = append(st.Objects, driverapi.Observed{Item: &driverapi.ACLAssignment{Interface: n, InputIndexes: l.Input, OutputIndexes: l.Output}})
	}
	return st, nil
}

func (f *fakeDriver) Apply(_ context.Context, ops []driverapi.Op) []driverapi.OpResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	res := make([]driverapi.OpResult, len(ops))
	for i, op := range ops {
		f.calls++
		if f.fail != nil {
			if err := f.fail(op); err != nil {
				res[i].Err = err
				f.log = append(f.log, core.OpText(op)+" FAILED")
				continue
			}
		}
		res[i] = f.apply(op)
		if res[i].Err != nil {
			f.log = append(f.log, core.OpText(op)+" FAILED")
		} else {
			f.log = append(f.log, core.OpText(op))
		}
	}
	return res
}

func (f *fakeDriver) apply(op driverapi.Op) driverapi.OpResult {
	if b, ok := op.Item.(vppcfg.InterfaceBound); ok {
		if idx, ok := f.ifaces[b.Interfaces()[0]]; !ok || idx != op.SwIfIndex {
			return driverapi.OpResult{Err: fmt.Errorf("invalid sw_if_index %d", op.SwIfIndex)}
		}
	}
	k := op.Key
	if a, ok := op.Item.(*driverapi.ACLAssignment); ok && op.Type == driverapi.OpUpdate {
		f.aclLists[a.Interface] = acllists.Indexes{Input: a.InputIndexes, Output: a.OutputIndexes}
		return driverapi.OpResult{}
	}
	if c, ok := op.Item.(*vppcfg.CNATSnatConfig); ok && op.Type == driverapi.OpUpdate {
		// One message sets every setting, as cnat_set_snat_addresses and
		// cnat_set_snat_policy do.
		f.snat = c
		return driverapi.OpResult{}
	}
	if o, exists := f.objs[k]; exists && writesTag(op.Type) && core.Taggable(k.Kind) && op.Tag != o.Tag {
		// The layer must name the object by the tag VPP holds.
		return driverapi.OpResult{Err: fmt.Errorf("%s: %s with tag %q, VPP holds %q", k, op, op.Tag, o.Tag)}
	}
	switch op.Type {
	case driverapi.OpCreate:
		if _, exists := f.objs[k]; exists {
			return driverapi.OpResult{Err: fmt.Errorf("%w: %s exists", driverapi.ErrDrift, k)}
		}
		if vppcfgtest.IsNAT44(k.Kind) && k != vppcfg.NAT44GlobalKey() {
			if _, on := f.objs[vppcfg.NAT44GlobalKey()]; !on {
				return driverapi.OpResult{Err: fmt.Errorf("%s: NAT44 disabled", k)}
			}
		}
		o := driverapi.Observed{Item: op.Item, Tag: op.Tag}
		if k.Kind == vppcfg.KindACL || k.Kind == vppcfg.KindCNATTranslation {
			o.Handle = f.handle
			f.handle++
		}
		f.objs[k] = o
		return driverapi.OpResult{Handle: o.Handle}
	case driverapi.OpUpdate:
		o, exists := f.objs[k]
		if !exists || o.Handle != op.Handle {
			return driverapi.OpResult{Err: fmt.Errorf("%w: %s handle %d unknown", driverapi.ErrDrift, k, op.Handle)}
		}
		if l, add, ok := lbLocalStep(op); ok {
			// VPP's add-local and del-local change the locals alone.
			m := *o.Item.(*vppcfg.NAT44LBMapping)
			m.Locals = slices.DeleteFunc(slices.Clone(m.Locals), func(x vppcfg.NAT44LBLocal) bool { return x.Addr == l.Addr && x.VRF == l.VRF })
			if add {
				m.Locals = append(m.Locals, l)
				vppcfg.SortLBLocals(m.Locals)
			}
			o.Item = &m
			f.objs[k] = o
			return driverapi.OpResult{}
		}
		o.Item = op.Item
		f.objs[k] = o
		return driverapi.OpResult{Handle: o.Handle}
	case driverapi.OpDelete:
		delete(f.objs, k)
		if k == vppcfg.NAT44GlobalKey() {
			for ok := range f.objs {
				if vppcfgtest.IsNAT44(ok.Kind) {
					delete(f.objs, ok)
				}
			}
		}
		return driverapi.OpResult{}
	}
	return driverapi.OpResult{Err: fmt.Errorf("unknown op %s", op)}
}

// takeLog returns and clears the op log.
func (f *fakeDriver) takeLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.log
	f.log = nil
	if l == nil {
		l = []string{}
	}
	return l
}

// dump renders the fake's state (items with tags, ACL lists by name) sorted.
func (f *fakeDriver) dump() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var lines []string
	names := map[uint32]string{}
	for k, o := range f.objs {
		lines = append(lines, fmt.Sprintf("%s tag=%q", o.Item, o.Tag))
		if k.Kind == vppcfg.KindACL {
			names[o.Handle] = k.Name
		}
	}
	for n, l := range f.aclLists {
		var in, out []string
		for _, i := range l.Input {
			in = append(in, names[i])
		}
		for _, i := range l.Output {
			out = append(out, names[i])
		}
		lines = append(lines, fmt.Sprintf("acls %s in=%v out=%v", n, in, out))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// lbLocalStep is the one local an LB mapping's update step adds or removes
// (the kind's UpdateOps change one local at a time), as VPP's add-local and
// del-local messages take it.
func lbLocalStep(op driverapi.Op) (l vppcfg.NAT44LBLocal, add, ok bool) {
	o, ok1 := op.Old.(*vppcfg.NAT44LBMapping)
	n, ok2 := op.Item.(*vppcfg.NAT44LBMapping)
	if !ok1 || !ok2 || op.Type != driverapi.OpUpdate {
		return vppcfg.NAT44LBLocal{}, false, false
	}
	switch {
	case len(n.Locals) == len(o.Locals)+1:
		for _, x := range n.Locals {
			if !slices.Contains(o.Locals, x) {
				return x, true, true
			}
		}
	case len(o.Locals) == len(n.Locals)+1:
		for _, x := range o.Locals {
			if !slices.Contains(n.Locals, x) {
				return x, false, true
			}
		}
	}
	return vppcfg.NAT44LBLocal{}, false, false
}
