package agent

import (
	"net/netip"

	vppsvc "github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/model"
)

// Observer learns about every call the processor makes on a renderer.
//
// The processor calls renderers synchronously while it handles an event, and
// a renderer commits to the VPP layer, which applies the change before the
// commit returns. A call is thus the moment a change starts to be applied,
// and its return the moment it has been tried on VPP; the run command uses
// this to time syncs and feed /healthz without any hook in the processor.
//
// Begin and End are called with the processor's lock held: they must return
// quickly and must not call back into the processor.
type Observer interface {
	Begin(renderer string)
	End(renderer string, err error)
}

// FullSyncObserver is an Observer that also tells full resyncs from
// incremental calls: a renderer's Resync starts with BeginFullSync instead
// of Begin (kube-proxy's full and partial syncs).
type FullSyncObserver interface {
	Observer
	BeginFullSync(renderer string)
}

// observedRenderer wraps a renderer and reports its calls to an Observer.
type observedRenderer struct {
	name string
	r    vppsvc.ServiceRendererAPI
	obs  Observer
}

var (
	_ vppsvc.ServiceRendererAPI  = (*observedRenderer)(nil)
	_ vppsvc.ServiceCIDRRenderer = (*observedRenderer)(nil)
)

func (o *observedRenderer) call(f func() error) error {
	o.obs.Begin(o.name)
	return o.end(f)
}

func (o *observedRenderer) end(f func() error) error {
	err := f()
	o.obs.End(o.name, err)
	return err
}

func (o *observedRenderer) AddService(s *model.ContivService) error {
	return o.call(func() error { return o.r.AddService(s) })
}

func (o *observedRenderer) UpdateService(old, s *model.ContivService) error {
	return o.call(func() error { return o.r.UpdateService(old, s) })
}

func (o *observedRenderer) DeleteService(s *model.ContivService) error {
	return o.call(func() error { return o.r.DeleteService(s) })
}

func (o *observedRenderer) UpdateNodePortServices(ips model.IPAddresses, svcs []*model.ContivService) error {
	return o.call(func() error { return o.r.UpdateNodePortServices(ips, svcs) })
}

func (o *observedRenderer) UpdateLocalFrontendIfs(old, ifs model.Interfaces) error {
	return o.call(func() error { return o.r.UpdateLocalFrontendIfs(old, ifs) })
}

func (o *observedRenderer) UpdateLocalBackendIfs(old, ifs model.Interfaces) error {
	return o.call(func() error { return o.r.UpdateLocalBackendIfs(old, ifs) })
}

// UpdateServiceCIDRs passes the call on to a renderer that takes it; for
// another it is no call at all, and the observer hears nothing.
func (o *observedRenderer) UpdateServiceCIDRs(cidrs []netip.Prefix) error {
	u, ok := o.r.(vppsvc.ServiceCIDRRenderer)
	if !ok {
		return nil
	}
	return o.call(func() error { return u.UpdateServiceCIDRs(cidrs) })
}

func (o *observedRenderer) Resync(ev *model.ResyncEventData) error {
	if full, ok := o.obs.(FullSyncObserver); ok {
		full.BeginFullSync(o.name)
		return o.end(func() error { return o.r.Resync(ev) })
	}
	return o.call(func() error { return o.r.Resync(ev) })
}
