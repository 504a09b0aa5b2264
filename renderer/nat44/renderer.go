package nat44

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

// Renderer implements vppsvc.ServiceRendererAPI for IPv4 with NAT44-ED. It
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
	cfg.EgressSNAT.IdentityPorts = slices.Clone(cfg.EgressSNAT.IdentityPorts)
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
// converges.
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

// UpdateNodePortServices re-renders the node-port frontends for new node
// IPs. Services with node ports the processor did not list are re-rendered
// from their last value; listed services the renderer does not know (their
// add has not succeeded yet) are left to that add.
func (r *Renderer) UpdateNodePortServices(nodeIPs model.IPAddresses, npServices []*model.ContivService) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	node := r.node
	node.IPs = nodeIPs
	latest := make(map[model.ServiceID]*model.ContivService, len(npServices))
	for _, s := range npServices {
		latest[s.ID] = s
	}
	var changes []serviceChange
	for id, e := range r.state.services {
		if s, ok := latest[id]; ok {
			changes = append(changes, serviceChange{id, s})
		} else if e.svc.HasNodePort() {
			changes = append(changes, serviceChange{id, e.svc})
		}
	}
	return r.apply("update node IPs", node, changes)
}

// UpdateLocalFrontendIfs moves the outside role and the ACL bindings to the
// new set of frontend interfaces.
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
	return r.apply("update frontend interfaces", node, changes)
}

// UpdateLocalBackendIfs moves the inside role to the new set of backend
// interfaces.
func (r *Renderer) UpdateLocalBackendIfs(_, newIfNames model.Interfaces) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	node := r.node
	node.BackendIfs = newIfNames
	return r.apply("update backend interfaces", node, nil)
}

// Resync renders the whole state from scratch and replaces everything the
// renderer's client owns with it, through one ResyncTxn.
func (r *Renderer) Resync(ev *model.ResyncEventData) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	node := Node{IPs: ev.NodeIPs, FrontendIfs: ev.FrontendIfs, BackendIfs: ev.BackendIfs}
	st := newDesiredState()
	for _, svc := range ev.Services {
		st.setService(svc.ID, newServiceEntry(svc, RenderService(svc, node, &r.cfg)))
	}
	st.node = claimMap(RenderNode(node, &r.cfg, st.filtering > 0))
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
		r.warnService(prev, svc)
	}
	for c, ids := range st.owners {
		if _, byNode := st.node[c]; len(ids) > 1 || byNode {
			r.warnConflict(c, old.ownership(c))
		}
	}
	r.log.WithFields(logrus.Fields{"services": len(st.services), "items": len(items)}).Info("resynced")
	return nil
}

// apply re-renders the changed services for node, commits the difference
// and, on success, remembers the new state.
func (r *Renderer) apply(what string, node Node, changes []serviceChange) error {
	st := r.state
	touched := map[vppcfg.Key]bool{}
	entries := make([]*serviceEntry, len(changes))
	for i, ch := range changes {
		if old := st.services[ch.id]; old != nil {
			for c := range old.items {
				touched[c] = true
			}
		}
		if ch.svc != nil {
			entries[i] = newServiceEntry(ch.svc, RenderService(ch.svc, node, &r.cfg))
			for c := range entries[i].items {
				touched[c] = true
			}
		}
	}
	claims := sortedKeys(touched)
	before := make([]vppcfg.Item, len(claims))
	owned := make([]ownership, len(claims))
	for i, c := range claims {
		before[i] = st.effective(c)
		owned[i] = st.ownership(c)
	}
	wasFiltering := st.filtering > 0
	prev := make([]*serviceEntry, len(changes))
	for i, ch := range changes {
		prev[i] = st.setService(ch.id, entries[i])
	}
	oldNode := st.node
	if !r.node.equal(node) || wasFiltering != (st.filtering > 0) || len(oldNode) == 0 {
		st.node = claimMap(RenderNode(node, &r.cfg, st.filtering > 0))
	}

	var d diff
	for i, c := range claims {
		owner := owned[i].winner
		if now := st.ownership(c); now.n > 0 {
			owner = now.winner
		}
		d.add(before[i], st.effective(c), owner)
	}
	if !sameMap(oldNode, st.node) {
		for _, k := range sortedKeys(unionKeys(oldNode, st.node)) {
			d.add(oldNode[k], st.node[k], model.ServiceID{})
		}
	}

	if err := r.commit(what, d); err != nil {
		for i := len(changes) - 1; i >= 0; i-- {
			st.setService(changes[i].id, prev[i])
		}
		st.node = oldNode
		return err
	}
	r.node = node
	for i, c := range claims {
		r.warnConflict(c, owned[i])
	}
	for i, ch := range changes {
		if ch.svc != nil {
			var old *model.ContivService
			if prev[i] != nil {
				old = prev[i].svc
			}
			r.warnService(old, ch.svc)
		}
		r.log.WithField("service", ch.id.String()).Debug(what)
	}
	return nil
}

// commit writes a diff: first, in a transaction of their own, the deletes of
// LB mappings that must be re-created (see diff.recreate), then everything
// else in one transaction.
func (r *Renderer) commit(what string, d diff) error {
	ctx := context.Background()
	if len(d.recreate) > 0 {
		if err := r.client.Txn().Delete(d.recreate...).Commit(ctx); err != nil {
			return fmt.Errorf("%s renderer: %s: delete mappings to re-create: %w", Name, what, err)
		}
		for _, k := range d.recreate {
			r.opLog(d, k).Info("re-creating LB mapping to drop session affinity to a removed endpoint")
		}
	}
	if len(d.puts)+len(d.deletes) == 0 {
		return nil
	}
	if err := r.client.Txn().Delete(d.deletes...).Put(d.puts...).Commit(ctx); err != nil {
		return fmt.Errorf("%s renderer: %s (%d puts, %d deletes): %w", Name, what, len(d.puts), len(d.deletes), err)
	}
	for _, k := range d.deletes {
		r.opLog(d, k).Debug("deleted")
	}
	for _, it := range d.puts {
		r.opLog(d, it.Key()).Debug("put")
	}
	return nil
}

// opLog is the logger of one written key, with the service it is for.
func (r *Renderer) opLog(d diff, k vppcfg.Key) logrus.FieldLogger {
	f := logrus.Fields{"key": k.String()}
	if id, ok := d.owners[k]; ok {
		f["service"] = id.String()
	}
	return r.log.WithFields(f)
}

// warnService logs, once per change of the set, the SCTP ports of a
// service: NAT44-ED cannot translate SCTP, so they are skipped.
func (r *Renderer) warnService(old, svc *model.ContivService) {
	sctp := SCTPPorts(svc)
	if len(sctp) > 0 && (old == nil || !slices.Equal(SCTPPorts(old), sctp)) {
		r.log.WithFields(logrus.Fields{"service": svc.ID.String(), "ports": sctp}).
			Warn("SCTP service ports are not supported by NAT44-ED; skipping them")
	}
}

// warnConflict logs a claim that several services want, or that a service
// wants but a node item holds, when that conflict is new or changed: only
// the service with the smallest ID gets a contested frontend, and none gets
// one that is an egress SNAT identity port.
func (r *Renderer) warnConflict(c vppcfg.Key, before ownership) {
	ids := r.state.owners[c]
	_, byNode := r.state.node[c]
	if len(ids) == 0 || (!byNode && len(ids) < 2) || (ownership{ids[0], len(ids)}) == before {
		return
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = id.String()
	}
	log := r.log.WithFields(logrus.Fields{"key": c.String(), "services": names})
	if byNode {
		log.Warn("frontend is an egress SNAT identity port of the node; not rendered")
		return
	}
	log.Warn("frontend wanted by several services; only the first (smallest ID) gets it")
}

func (n Node) equal(o Node) bool {
	return n.IPs.Equal(o.IPs) && n.FrontendIfs.Equal(o.FrontendIfs) && n.BackendIfs.Equal(o.BackendIfs)
}
