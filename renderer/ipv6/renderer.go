package ipv6

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

var _ vppsvc.ServiceRendererAPI = (*Renderer)(nil)

// Renderer implements vppsvc.ServiceRendererAPI for IPv6 with cnat. It
// writes only through its vppcfg.Client. Its state (the last value of every
// service, the node context and the items they produced) is exactly what a
// Resync rebuilds, so a Resync after any failure converges.
//
// Every method renders what changed, diffs it against the remembered items
// and commits one transaction; if the commit fails, the remembered state is
// rolled back, so the processor's retry with the same arguments repeats the
// same diff.
type Renderer struct {
	mu     sync.Mutex
	client vppcfg.Client
	cfg    Config
	log    logrus.FieldLogger

	node  Node
	state *desiredState
}

// New returns a renderer writing through client. cfg must pass Validate;
// start from DefaultConfig. Nothing is written before the first Resync.
func New(client vppcfg.Client, cfg Config, log logrus.FieldLogger) (*Renderer, error) {
	if client == nil {
		return nil, fmt.Errorf("%s renderer: nil vppcfg client", Name)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = logrus.StandardLogger()
	}
	return &Renderer{
		client: client,
		cfg:    cfg,
		log:    log.WithField("renderer", Name),
		state:  newDesiredState(),
	}, nil
}

// serviceChange is one service to re-render (svc set) or to remove (svc nil).
type serviceChange struct {
	id  model.ServiceID
	svc *model.ContivService
}

// AddService renders a service that became renderable.
func (r *Renderer) AddService(svc *model.ContivService) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.apply("add service", r.node, []serviceChange{{svc.ID, svc}})
}

// UpdateService re-renders a changed service. The diff is taken against
// what the renderer remembers for the service, not against oldService, so a
// retry after a failure (or an update of a service whose add failed) still
// converges. Only translations whose frontend, paths or flags changed are
// put; cnat updates them in place and keeps their sessions.
func (r *Renderer) UpdateService(oldService, newService *model.ContivService) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	changes := []serviceChange{{newService.ID, newService}}
	if oldService != nil && oldService.ID != newService.ID {
		changes = append(changes, serviceChange{oldService.ID, nil})
	}
	return r.apply("update service", r.node, changes)
}

// DeleteService removes everything the renderer configured for a service.
func (r *Renderer) DeleteService(svc *model.ContivService) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.apply("delete service", r.node, []serviceChange{{svc.ID, nil}})
}

// UpdateNodePortServices re-renders, for new node IPs, the services whose
// translations depend on them: those with node ports (a translation per
// IPv6 node IP) and those with a ClusterIP, external IP or LoadBalancer IP
// that became or stopped being a node IP (real instead of exclusive VIP).
// Listed services use the processor's value; services the processor did
// not list are re-rendered from their last value; listed services the
// renderer does not know (their add has not succeeded yet) are left to that
// add. A change of IPv4 node IPs only is a no-op.
func (r *Renderer) UpdateNodePortServices(nodeIPs model.IPAddresses, npServices []*model.ContivService) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	node := r.node
	node.IPs = nodeIPs
	if nodeIPs.IPv6().Equal(r.node.IPs.IPv6()) {
		r.node = node
		return nil
	}
	moved := symmetricDifference(r.node.IPs.IPv6(), nodeIPs.IPv6())
	latest := make(map[model.ServiceID]*model.ContivService, len(npServices))
	for _, s := range npServices {
		latest[s.ID] = s
	}
	var changes []serviceChange
	for id, e := range r.state.services {
		svc := e.svc
		if s, ok := latest[id]; ok {
			svc = s
		}
		if svc.HasNodePort() || e.svc.HasNodePort() || hasAnyAddress(svc, moved) {
			changes = append(changes, serviceChange{id, svc})
		}
	}
	slices.SortFunc(changes, func(a, b serviceChange) int { return a.id.Compare(b.id) })
	return r.apply("update node IPs", node, changes)
}

// UpdateLocalFrontendIfs moves the ACL bindings to the new set of frontend
// interfaces.
func (r *Renderer) UpdateLocalFrontendIfs(_, newIfNames model.Interfaces) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	node := r.node
	node.FrontendIfs = newIfNames
	var changes []serviceChange
	for id, e := range r.state.services {
		if e.filtering { // only service ACL bindings depend on frontend interfaces
			changes = append(changes, serviceChange{id, e.svc})
		}
	}
	slices.SortFunc(changes, func(a, b serviceChange) int { return a.id.Compare(b.id) })
	return r.apply("update frontend interfaces", node, changes)
}

// UpdateLocalBackendIfs changes nothing: cnat translates on the FIB path of
// the VIP, whatever the interfaces, and the renderer source-NATs per path
// (by the Local flag of each backend) rather than with cnat's per-interface
// SNAT features, so no item depends on the backend interfaces.
func (r *Renderer) UpdateLocalBackendIfs(_, newIfNames model.Interfaces) error {
	r.log.WithField("interfaces", newIfNames.String()).Debug("backend interfaces changed; nothing to render")
	return nil
}

// Resync renders the whole state from scratch and replaces everything the
// renderer's client owns with it, through one ResyncTxn.
func (r *Renderer) Resync(ev *model.ResyncEventData) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	node := Node{IPs: ev.NodeIPs, FrontendIfs: ev.FrontendIfs}
	st := newDesiredState()
	for _, svc := range ev.Services {
		st.setService(svc.ID, newServiceEntry(svc, RenderService(svc, node, &r.cfg)))
	}
	st.node = itemMap(RenderNode(node, st.filtering > 0))
	items := st.all()
	if err := r.client.ResyncTxn().Put(items...).Commit(context.Background()); err != nil {
		return fmt.Errorf("%s renderer: resync (%d services, %d items): %w", Name, len(ev.Services), len(items), err)
	}
	old := r.state
	r.state, r.node = st, node
	for _, svc := range ev.Services {
		var prev *model.ContivService
		if e := old.services[svc.ID]; e != nil {
			prev = e.svc
		}
		r.warnSCTP(prev, svc)
	}
	for _, k := range sortedKeys(st.owners) {
		w, n := old.winner(k)
		r.warnConflict(k, w, n)
	}
	r.log.WithFields(logrus.Fields{"services": len(st.services), "items": len(items)}).Info("resynced")
	return nil
}

// apply re-renders the changed services for node, commits the difference
// and, on success, remembers the new state.
func (r *Renderer) apply(what string, node Node, changes []serviceChange) error {
	st := r.state
	entries := make([]*serviceEntry, len(changes))
	touchedMaps := make([]map[vppcfg.Key]vppcfg.Item, 0, 2*len(changes))
	for i, ch := range changes {
		if old := st.services[ch.id]; old != nil {
			touchedMaps = append(touchedMaps, old.items)
		}
		if ch.svc != nil {
			entries[i] = newServiceEntry(ch.svc, RenderService(ch.svc, node, &r.cfg))
			touchedMaps = append(touchedMaps, entries[i].items)
		}
	}
	keys := sortedKeys(touchedMaps...)
	type owner struct {
		id model.ServiceID
		n  int
	}
	before := make([]vppcfg.Item, len(keys))
	owned := make([]owner, len(keys))
	for i, k := range keys {
		before[i] = st.effective(k)
		owned[i].id, owned[i].n = st.winner(k)
	}
	prev := make([]*serviceEntry, len(changes))
	for i, ch := range changes {
		prev[i] = st.setService(ch.id, entries[i])
	}
	oldNode := st.node
	st.node = itemMap(RenderNode(node, st.filtering > 0))

	var d diff
	for i, k := range keys {
		d.add(before[i], st.effective(k))
	}
	for _, k := range sortedKeys(oldNode, st.node) {
		d.add(oldNode[k], st.node[k])
	}
	if err := r.commit(what, d); err != nil {
		for i := len(changes) - 1; i >= 0; i-- {
			st.setService(changes[i].id, prev[i])
		}
		st.node = oldNode
		return err
	}
	r.node = node
	for i, k := range keys {
		r.warnConflict(k, owned[i].id, owned[i].n)
	}
	for i, ch := range changes {
		log := r.log.WithField("service", ch.id.String())
		if ch.svc != nil {
			var old *model.ContivService
			if prev[i] != nil {
				old = prev[i].svc
			}
			r.warnSCTP(old, ch.svc)
			log = log.WithField("items", len(entries[i].items))
		}
		log.Debug(what)
	}
	return nil
}

// commit writes a diff in one transaction; an empty diff writes nothing.
func (r *Renderer) commit(what string, d diff) error {
	if d.empty() {
		return nil
	}
	if err := r.client.Txn().Delete(d.deletes...).Put(d.puts...).Commit(context.Background()); err != nil {
		return fmt.Errorf("%s renderer: %s (%d puts, %d deletes): %w", Name, what, len(d.puts), len(d.deletes), err)
	}
	for _, k := range d.deletes {
		r.log.WithField("key", k.String()).Debug("deleted")
	}
	for _, it := range d.puts {
		r.log.WithField("key", it.Key().String()).Debug("put")
	}
	return nil
}

// warnSCTP logs, once per change of the set, the SCTP ports of a service:
// cnat does not translate SCTP over IPv6, so they are skipped.
func (r *Renderer) warnSCTP(old, svc *model.ContivService) {
	sctp := SCTPPorts(svc)
	if len(sctp) > 0 && HasIPv6ClusterIP(svc) && (old == nil || !slices.Equal(SCTPPorts(old), sctp)) {
		r.log.WithFields(logrus.Fields{"service": svc.ID.String(), "ports": sctp}).
			Warn("SCTP service ports are not translated by cnat over IPv6; skipping them")
	}
}

// warnConflict logs a key that several services want, when who wins it or
// how many want it changed from (wasWinner, wasN): only the service with the
// smallest ID gets a contested frontend.
func (r *Renderer) warnConflict(k vppcfg.Key, wasWinner model.ServiceID, wasN int) {
	w, n := r.state.winner(k)
	if n < 2 || (w == wasWinner && n == wasN) {
		return
	}
	names := make([]string, 0, n)
	for _, id := range r.state.owners[k] {
		names = append(names, id.String())
	}
	r.log.WithFields(logrus.Fields{"key": k.String(), "services": names}).
		Warn("frontend wanted by several services; only the first (smallest ID) gets it")
}

// symmetricDifference returns the addresses in exactly one of a and b.
func symmetricDifference(a, b model.IPAddresses) model.IPAddresses {
	var out model.IPAddresses
	for _, ip := range a.Union(b) {
		if a.Has(ip) != b.Has(ip) {
			out = append(out, ip)
		}
	}
	return out
}

// hasAnyAddress reports whether a ClusterIP, external IP or LoadBalancer IP
// of svc is in ips.
func hasAnyAddress(svc *model.ContivService, ips model.IPAddresses) bool {
	for _, set := range []model.IPAddresses{svc.ClusterIPs, svc.ExternalIPs, svc.LoadBalancerIPs} {
		for _, ip := range set {
			if ips.Has(ip) {
				return true
			}
		}
	}
	return false
}
