// Package processor turns Kubernetes Services, EndpointSlices, Nodes and the
// local pods reported by the CNI agent into one model.ContivService per
// Service, and drives every registered renderer through
// vppsvc.ServiceRendererAPI.
//
// Events update per-object caches and recompute only the services they touch;
// a renderer sees a call only when a value really changed. Resync replaces
// every cache with a snapshot and hands each renderer the whole state. A
// renderer that fails is marked dirty, skipped by incremental calls and
// brought back with a full resync retried with backoff by Run. See
// docs/processor.md for the data flow and the design.
package processor

import (
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/vppsvc/vppsvc/internal/parallel"
	"github.com/vppsvc/vppsvc/model"
)

// Config configures a Processor.
type Config struct {
	// NodeName is this node: endpoints on it are Local, and its zone label
	// drives topology hints.
	NodeName string
	// FrontendInterfaces are uplink or host interfaces that are always
	// frontends (e.g. "uplink0", "host0").
	FrontendInterfaces []string
	// Logger receives warnings about bad input and renderer failures; nil
	// means logrus.StandardLogger().
	Logger logrus.FieldLogger
	// RetryMin and RetryMax bound the exponential backoff of renderer
	// retries; zero means 100ms and 30s.
	RetryMin, RetryMax time.Duration
	// NodePortAddresses selects this node's addresses that answer NodePorts
	// (kube-proxy's --nodeport-addresses); the zero value is "primary".
	NodePortAddresses NodePortAddresses
	// ServiceCIDRs are the cluster's service CIDRs as configured
	// (kube-proxy's --service-cluster-ip-range). When set, they are the
	// service CIDRs renderers get and ServiceCIDR objects are ignored:
	// explicit configuration beats discovery.
	ServiceCIDRs []netip.Prefix
}

const (
	defaultRetryMin = 100 * time.Millisecond
	defaultRetryMax = 30 * time.Second
)

// Snapshot is the whole input state, as handed to Resync.
type Snapshot struct {
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	Nodes          []*corev1.Node
	LocalPods      []LocalPod
	// ServiceCIDRs are the cluster's ServiceCIDR objects
	// (networking.k8s.io/v1); none on an API server without them.
	ServiceCIDRs []*networkingv1.ServiceCIDR
	// KeepLocalPods leaves the local pods as they are (LocalPods is then
	// ignored): the CNI reports them with UpdateLocalPod and DeleteLocalPod,
	// and a Resync from the Kubernetes side, which does not know them, must
	// not forget the pods the CNI reported before it.
	KeepLocalPods bool
}

// Processor keeps the caches and the rendered state. All methods are safe for
// concurrent use: one mutex serialises them, including the renderer calls they
// make, so a renderer is never called concurrently and sees changes in the
// order they happened.
type Processor struct {
	cfg Config
	log logrus.FieldLogger
	now func() time.Time // replaced by tests

	mu sync.Mutex
	// synced is set by the first Resync; before it nothing reaches renderers.
	synced   bool
	services *serviceCache
	nodes    *nodeCache
	pods     *localPodCache
	cidrs    *serviceCIDRCache

	frontendIfs model.Interfaces
	backendIfs  model.Interfaces
	// ifsStale is set when local pods changed or an IP of a local pod started
	// or stopped backing a service: the interface sets must be recomputed.
	ifsStale bool

	renderers []*rendererState
	// wake tells Run that a renderer became dirty.
	wake     chan struct{}
	problems *problemLog
	stats    Stats
}

// New returns a Processor. It renders nothing until the first Resync.
func New(cfg Config) *Processor {
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = defaultRetryMin
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = defaultRetryMax
	}
	if cfg.RetryMax < cfg.RetryMin {
		cfg.RetryMax = cfg.RetryMin
	}
	cfg.FrontendInterfaces = slices.Clone(cfg.FrontendInterfaces)
	cfg.ServiceCIDRs = slices.Clone(cfg.ServiceCIDRs)
	log := cfg.Logger
	if log == nil {
		log = logrus.StandardLogger()
	}
	p := &Processor{
		cfg:      cfg,
		log:      log,
		now:      time.Now,
		services: newServiceCache(),
		nodes:    newNodeCache(cfg.NodeName),
		pods:     newLocalPodCache(),
		cidrs:    newServiceCIDRCache(cfg.ServiceCIDRs),
		wake:     make(chan struct{}, 1),
		problems: newProblemLog(),
		stats:    newStats(),
	}
	p.frontendIfs = p.pods.frontendIfs(cfg.FrontendInterfaces)
	return p
}

// UpdateService handles a created or changed Service.
func (p *Processor) UpdateService(svc *corev1.Service) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Events[KindService]++
	if svc == nil {
		p.report(problemOwner{kind: KindService}, []Problem{{Kind: KindService, Reason: "nil Service ignored"}})
		return
	}
	p.refresh(p.services.setService(svc))
	p.syncInterfaces()
}

// DeleteService handles a deleted Service.
func (p *Processor) DeleteService(namespace, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Events[KindService]++
	id := model.ServiceID{Namespace: namespace, Name: name}
	p.services.deleteService(id)
	p.refresh(id)
	p.syncInterfaces()
}

// UpdateEndpointSlice handles a created or changed EndpointSlice. A slice
// whose service-name label changed leaves its old service.
func (p *Processor) UpdateEndpointSlice(s *discoveryv1.EndpointSlice) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Events[KindEndpointSlice]++
	if s == nil {
		p.report(problemOwner{kind: KindEndpointSlice}, []Problem{{Kind: KindEndpointSlice, Reason: "nil EndpointSlice ignored"}})
		return
	}
	p.applySlice(s)
	p.syncInterfaces()
}

// applySlice stores a slice and recomputes the services it left and joined.
func (p *Processor) applySlice(s *discoveryv1.EndpointSlice) {
	key, id, ok := p.sliceOwner(s)
	if !ok {
		if old, had := p.services.deleteSlice(key); had {
			p.refresh(old)
		}
		return
	}
	if previous, moved := p.services.setSlice(key, id, s); moved {
		p.refresh(previous)
	}
	p.refresh(id)
}

// sliceOwner returns the key of a slice and the service it belongs to, and
// reports slices that name no service: they cannot be joined to anything.
func (p *Processor) sliceOwner(s *discoveryv1.EndpointSlice) (sliceKey, model.ServiceID, bool) {
	key := sliceKey{Namespace: s.Namespace, Name: s.Name}
	owner := problemOwner{KindEndpointSlice, key.Namespace, key.Name}
	svcName := s.Labels[discoveryv1.LabelServiceName]
	if s.Name == "" || s.Namespace == "" || svcName == "" {
		p.report(owner, []Problem{{Kind: KindEndpointSlice, Object: key.String(),
			Field: "metadata.labels[" + discoveryv1.LabelServiceName + "]", Value: svcName,
			Reason: "slice without namespace, name or service-name label; ignored"}})
		return key, model.ServiceID{}, false
	}
	p.report(owner, nil)
	return key, model.ServiceID{Namespace: s.Namespace, Name: svcName}, true
}

// DeleteEndpointSlice handles a deleted EndpointSlice.
func (p *Processor) DeleteEndpointSlice(namespace, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Events[KindEndpointSlice]++
	key := sliceKey{Namespace: namespace, Name: name}
	p.problems.forget(problemOwner{KindEndpointSlice, key.Namespace, key.Name})
	if id, had := p.services.deleteSlice(key); had {
		p.refresh(id)
		p.syncInterfaces()
	}
}

// UpdateNode handles a created or changed Node. Node status changes that leave
// its addresses and zone alone cost one comparison.
func (p *Processor) UpdateNode(n *corev1.Node) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Events[KindNode]++
	if n == nil || n.Name == "" {
		p.report(problemOwner{kind: KindNode}, []Problem{{Kind: KindNode, Field: "metadata.name", Reason: "nil or unnamed Node ignored"}})
		return
	}
	info, probs := parseNode(n)
	p.report(problemOwner{kind: KindNode, name: n.Name}, probs)
	oldNodePort := p.nodePortIPs()
	p.applyNodeChange(p.nodes.set(n.Name, info), oldNodePort)
}

// DeleteNode handles a deleted Node.
func (p *Processor) DeleteNode(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Events[KindNode]++
	p.problems.forget(problemOwner{kind: KindNode, name: name})
	oldNodePort := p.nodePortIPs()
	p.applyNodeChange(p.nodes.remove(name), oldNodePort)
}

// applyNodeChange recomputes the services whose backends sit on a node IP
// that came or went (their HostNetwork flag changed) and, on a zone change of
// this node, the services with zone hints; then tells renderers about the new
// NodePort addresses of this node, if they changed.
func (p *Processor) applyNodeChange(ch nodeChange, oldNodePort model.IPAddresses) {
	affected := map[model.ServiceID]struct{}{}
	for _, ip := range ch.changedIPs {
		for _, id := range p.services.byBackendIP.ids(ip) {
			affected[id] = struct{}{}
		}
	}
	if ch.zoneChanged {
		for id := range p.services.hinted {
			affected[id] = struct{}{}
		}
	}
	for _, id := range sortedIDs(affected) {
		p.refresh(id)
	}
	if nodeIPs := p.nodePortIPs(); p.synced && !oldNodePort.Equal(nodeIPs) {
		np := p.nodePortServices()
		p.fanOut("UpdateNodePortServices", "", func(r renderer) error { return r.UpdateNodePortServices(nodeIPs, np) })
	}
	p.syncInterfaces()
}

// UpdateLocalPod handles a pod on this node reported (or changed) by the CNI
// agent.
func (p *Processor) UpdateLocalPod(pod LocalPod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Events[KindLocalPod]++
	valid, probs, ok := validateLocalPod(pod)
	p.report(problemOwner{KindLocalPod, pod.ID.Namespace, pod.ID.Name}, probs)
	if ok {
		p.pods.set(valid)
	} else {
		p.pods.remove(pod.ID)
	}
	p.ifsStale = true
	p.syncInterfaces()
}

// DeleteLocalPod handles a pod that left this node.
func (p *Processor) DeleteLocalPod(id PodID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Events[KindLocalPod]++
	p.problems.forget(problemOwner{KindLocalPod, id.Namespace, id.Name})
	p.pods.remove(id)
	p.ifsStale = true
	p.syncInterfaces()
}

// resetLocalPods replaces the local pods with pods.
func (p *Processor) resetLocalPods(pods []LocalPod) {
	p.pods = newLocalPodCache()
	for _, pod := range pods {
		valid, probs, ok := validateLocalPod(pod)
		p.report(problemOwner{KindLocalPod, pod.ID.Namespace, pod.ID.Name}, probs)
		if ok {
			p.pods.set(valid)
		}
	}
}

// Resync replaces every cache with the snapshot, recomputes every service and
// sends each renderer one Resync with the whole state. The first call enables
// rendering; later calls may come at any time and yield exactly the state the
// equivalent incremental events would have produced.
func (p *Processor) Resync(s Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Resyncs++
	p.problems.beginRound()
	defer p.problems.endRound()
	// Compute without rendering: the renderers get the result as one Resync.
	p.synced = false

	p.nodes = newNodeCache(p.cfg.NodeName)
	for _, n := range s.Nodes {
		if n == nil || n.Name == "" {
			p.report(problemOwner{kind: KindNode}, []Problem{{Kind: KindNode, Field: "metadata.name", Reason: "nil or unnamed Node ignored"}})
			continue
		}
		info, probs := parseNode(n)
		p.report(problemOwner{kind: KindNode, name: n.Name}, probs)
		p.nodes.set(n.Name, info)
	}
	if !s.KeepLocalPods {
		p.resetLocalPods(s.LocalPods)
	}
	p.resetServiceCIDRs(s.ServiceCIDRs)
	var endpoints [2]int // IPv4, IPv6
	for _, sl := range s.EndpointSlices {
		switch {
		case sl == nil:
		case sl.AddressType == discoveryv1.AddressTypeIPv6:
			endpoints[1] += len(sl.Endpoints)
		default:
			endpoints[0] += len(sl.Endpoints)
		}
	}
	p.services = newServiceCacheSized(len(s.Services), endpoints)
	for _, svc := range s.Services {
		if svc == nil {
			p.report(problemOwner{kind: KindService}, []Problem{{Kind: KindService, Reason: "nil Service ignored"}})
			continue
		}
		p.services.setService(svc)
	}
	for _, sl := range s.EndpointSlices {
		if sl == nil {
			p.report(problemOwner{kind: KindEndpointSlice}, []Problem{{Kind: KindEndpointSlice, Reason: "nil EndpointSlice ignored"}})
			continue
		}
		if key, id, ok := p.sliceOwner(sl); ok {
			p.services.setSlice(key, id, sl)
		}
	}
	// Entries first, then refreshed: a refresh may drop its entry.
	entries := make([]*serviceEntry, 0, p.services.entries.Len())
	for e := range p.services.entries.All() {
		entries = append(entries, e)
	}
	// Conversion is pure and the bulk of the work: it runs on every core,
	// and only the caches' updates stay in this goroutine. Each entry's ID
	// is read there too, while its Service is in that core's cache: read
	// again here, every Service cost this goroutine a cache miss.
	conversions := make([]conversion, len(entries))
	ids := make([]model.ServiceID, len(entries))
	node := p.nodeContext()
	parallel.For(len(entries), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			conversions[i] = convertEntry(entries[i], node)
			ids[i] = entries[i].id()
		}
	})
	for i, e := range entries {
		p.refreshEntryWith(ids[i], e, conversions[i])
	}

	p.frontendIfs = p.pods.frontendIfs(p.cfg.FrontendInterfaces)
	p.backendIfs = p.pods.backendIfs(p.services.isBackend)
	p.ifsStale = false
	p.synced = true

	data := p.resyncData()
	for _, rs := range p.renderers {
		p.resyncRenderer(rs, data)
	}
}

// refresh recomputes one service from the caches and tells the renderers if
// its value changed.
func (p *Processor) refresh(id model.ServiceID) { p.refreshEntry(id, p.services.entries.Get(id)) }

// refreshEntry is refresh of e, the entry of id (nil when there is none).
func (p *Processor) refreshEntry(id model.ServiceID, e *serviceEntry) {
	p.refreshEntryWith(id, e, convertEntry(e, p.nodeContext()))
}

// conversion is ConvertService's answer for one entry.
type conversion struct {
	value    *model.ContivService
	problems []Problem
	// converted: the entry has a Service (its problems replace the old).
	converted bool
}

// convertEntry converts e's Service with its slices; it only reads e, so
// entries convert concurrently.
func convertEntry(e *serviceEntry, node NodeContext) conversion {
	if e == nil || e.svc == nil {
		return conversion{}
	}
	var buf [1]*discoveryv1.EndpointSlice
	v, probs := convertService(e.svc, e.slices.list(&buf), node, true)
	return conversion{value: v, problems: probs, converted: true}
}

// refreshEntryWith is refreshEntry with e's conversion made already.
func (p *Processor) refreshEntryWith(id model.ServiceID, e *serviceEntry, c conversion) {
	owner := problemOwner{KindService, id.Namespace, id.Name}
	v := c.value
	if c.converted {
		p.report(owner, c.problems)
	} else {
		p.problems.forget(owner)
	}
	old := p.services.setEntryValue(id, e, v, func(ip netip.Addr) {
		if p.pods.hasIP(ip) {
			p.ifsStale = true
		}
	})
	if old.Equal(v) || !p.synced {
		return
	}
	switch {
	case old == nil:
		p.fanOut("AddService", id.String(), func(r renderer) error { return r.AddService(v) })
	case v == nil:
		p.fanOut("DeleteService", id.String(), func(r renderer) error { return r.DeleteService(old) })
	default:
		p.fanOut("UpdateService", id.String(), func(r renderer) error { return r.UpdateService(old, v) })
	}
}

func (p *Processor) nodeContext() NodeContext {
	return NodeContext{Name: p.cfg.NodeName, Zone: p.nodes.zone(), NodeIPs: p.nodes.ips}
}

// syncInterfaces recomputes the frontend and backend interface sets when
// ifsStale says they may have changed, and tells the renderers about any
// change. Both are O(local pods), which is bounded by the node's pod limit.
func (p *Processor) syncInterfaces() {
	if !p.ifsStale {
		return
	}
	p.ifsStale = false
	front := p.pods.frontendIfs(p.cfg.FrontendInterfaces)
	back := p.pods.backendIfs(p.services.isBackend)
	if oldFront := p.frontendIfs; !oldFront.Equal(front) {
		p.frontendIfs = front
		if p.synced {
			p.fanOut("UpdateLocalFrontendIfs", "", func(r renderer) error { return r.UpdateLocalFrontendIfs(oldFront, front) })
		}
	}
	if oldBack := p.backendIfs; !oldBack.Equal(back) {
		p.backendIfs = back
		if p.synced {
			p.fanOut("UpdateLocalBackendIfs", "", func(r renderer) error { return r.UpdateLocalBackendIfs(oldBack, back) })
		}
	}
}

// report logs and counts the problems of owner that were not known before.
func (p *Processor) report(owner problemOwner, probs []Problem) {
	if owner.name == "" {
		// Objects without identity cannot be tracked; report every time.
		for _, pr := range probs {
			p.logProblem(pr)
		}
		return
	}
	for _, pr := range p.problems.record(owner, probs) {
		p.logProblem(pr)
	}
}

func (p *Processor) logProblem(pr Problem) {
	p.stats.InvalidSkipped[pr.Key()]++
	p.log.WithFields(logrus.Fields{
		"kind":   pr.Kind,
		"key":    pr.Object,
		"field":  pr.Field,
		"value":  pr.Value,
		"reason": pr.Reason,
	}).Warn("skipping invalid input element")
}

// Services returns the rendered values sorted by ID. They are shared with
// the renderers and must not be modified.
func (p *Processor) Services() []*model.ContivService {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.renderedServices()
}

func (p *Processor) renderedServices() []*model.ContivService {
	out := make([]*model.ContivService, 0, p.services.rendered)
	for e := range p.services.entries.All() {
		if e.value != nil {
			out = append(out, e.value)
		}
	}
	sortByID(out)
	return out
}

// compareIDs is model.ServiceID.Compare with one string comparison per
// field instead of cmp.Compare's two: sorting a cold sync's services by ID
// was a few percent of the processor's time.
func compareIDs(a, b model.ServiceID) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// nodePortServices returns the rendered services with a node port, by ID.
func (p *Processor) nodePortServices() []*model.ContivService {
	out := make([]*model.ContivService, 0, len(p.services.nodePort))
	for _, id := range sortedIDs(p.services.nodePort) {
		out = append(out, p.services.entries.Get(id).value)
	}
	return out
}

// NodeIPs returns the InternalIP and ExternalIP addresses of every node the
// processor knows: this node's only, unless it is fed every Node.
func (p *Processor) NodeIPs() model.IPAddresses {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.nodes.ips)
}

// NodePortIPs returns the addresses of this node that answer NodePorts.
func (p *Processor) NodePortIPs() model.IPAddresses {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nodePortIPs()
}

// nodePortIPs is what renderers get as node IPs: this node's addresses
// selected by Config.NodePortAddresses. O(this node's addresses).
func (p *Processor) nodePortIPs() model.IPAddresses {
	return p.cfg.NodePortAddresses.selectFrom(p.nodes.nodes[p.cfg.NodeName])
}

// Stats returns a copy of the counters.
func (p *Processor) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats.clone()
	s.Services = p.services.rendered
	for _, rs := range p.renderers {
		if rs.dirty {
			s.DirtyRenderers++
		}
	}
	return s
}

// resyncData is the whole rendered state.
func (p *Processor) resyncData() *model.ResyncEventData {
	return &model.ResyncEventData{
		NodeIPs:      p.nodePortIPs(),
		Services:     p.renderedServices(),
		FrontendIfs:  p.frontendIfs,
		BackendIfs:   p.backendIfs,
		ServiceCIDRs: slices.Clone(p.cidrs.current),
	}
}

func sortedIDs(set map[model.ServiceID]struct{}) []model.ServiceID {
	out := make([]model.ServiceID, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.SortFunc(out, compareIDs)
	return out
}
