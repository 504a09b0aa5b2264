package inspect

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.fd.io/govpp/api"

	vppsvc "github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
)

// Snapshot is a read-only copy of what a running agent knows: the services
// as the processor converted them and, per renderer, the VPP items it
// desires for each service with each item's status in the VPP layer. It is
// the inspector's answer (`vppsvc status`); its JSON form is a contract.
type Snapshot struct {
	Taken time.Time `json:"taken"`
	// Synced is true once the VPP layer has compared VPP with the desired
	// state at least once.
	Synced bool `json:"synced"`
	// Counts are the VPP layer's items by status (applied, pending, failed).
	Counts map[string]int `json:"counts"`
	// Services are sorted by namespace/name.
	Services []ServiceState `json:"services"`
	// NodeItems are the items of no single service, per renderer: node-wide
	// items, filter-shard ACLs and their bindings, and items still in VPP
	// that nobody desires any more.
	NodeItems []RendererItems `json:"nodeItems"`
}

// ServiceState is one service as the renderers receive it, with its items.
type ServiceState struct {
	Namespace             string         `json:"namespace"`
	Name                  string         `json:"name"`
	ExternalTrafficPolicy string         `json:"externalTrafficPolicy"`
	InternalTrafficPolicy string         `json:"internalTrafficPolicy"`
	SessionAffinity       uint32         `json:"sessionAffinityTimeoutSeconds,omitempty"`
	SourceRanges          []string       `json:"loadBalancerSourceRanges,omitempty"`
	Frontends             []FrontendView `json:"frontends"`
	Backends              []Backend      `json:"backends"`
	// Renderers hold the items per renderer, sorted by renderer name.
	Renderers []RendererItems `json:"renderers"`
	// BlockedBy are node-wide items not applied (pending or failed) on the
	// interface of one of the service's local backends: its interface
	// roles, features and ACL bindings, without which those backends are
	// not reached as rendered.
	BlockedBy []ItemView `json:"blockedBy,omitempty"`
	// Service is the processor's value; shared, never to be modified.
	Service *model.ContivService `json:"-"`
}

// ID returns "namespace/name".
func (s ServiceState) ID() string { return s.Namespace + "/" + s.Name }

// FrontendView is one address a service is reached at.
type FrontendView struct {
	// Type is ClusterIP, ExternalIP, LoadBalancer or NodePort.
	Type string `json:"type"`
	// Address is ip:port; a NodePort frontend is *:nodePort (every node IP).
	Address  string `json:"address"`
	Protocol string `json:"protocol"`
	// PortName is the service port's name ("" for a single unnamed port).
	PortName string `json:"portName"`
	// Backends are the addresses (ip:port) new connections to this frontend
	// go to: of its address family (both for a NodePort), picked by the
	// traffic policy that applies to it, as the renderers pick them.
	Backends []string `json:"backends"`
}

// Backend is one endpoint of one service port.
type Backend struct {
	PortName string `json:"portName"`
	Address  string `json:"address"`
	// State is active (ready and serving) or terminating (serving).
	State string `json:"state"`
	Local bool   `json:"local,omitempty"`
	// Interface is the VPP interface of a local pod backend.
	Interface   string   `json:"interface,omitempty"`
	HostNetwork bool     `json:"hostNetwork,omitempty"`
	Zones       []string `json:"zoneHints,omitempty"`
}

// RendererItems are the items of one renderer.
type RendererItems struct {
	Renderer string     `json:"renderer"`
	Items    []ItemView `json:"items"`
}

// ItemView is one desired (or still applied) VPP item and its status.
type ItemView struct {
	Key string `json:"key"`
	// Status is applied, pending or failed.
	Status string `json:"status"`
	// Deleting marks an item nobody desires any more that is still in VPP.
	Deleting bool `json:"deleting,omitempty"`
	// Reason says why a pending item waits.
	Reason string `json:"reason,omitempty"`
	// WaitingFor is the missing interface a pending item waits for.
	WaitingFor string `json:"waitingForInterface,omitempty"`
	// Error is the last error of a failed item; Retval VPP's return value
	// when VPP refused the request.
	Error     string     `json:"error,omitempty"`
	Retval    int32      `json:"retval,omitempty"`
	Failures  int        `json:"failures,omitempty"`
	NextRetry *time.Time `json:"nextRetry,omitempty"`
	Since     *time.Time `json:"since,omitempty"`
	// Owners are the renderers that desire the item (shared items have several).
	Owners []string `json:"owners"`
	// Config is the item as the VPP layer holds it (one line).
	Config string `json:"config,omitempty"`
}

// serviceKeyer is implemented by renderers built on renderer.Core.
type serviceKeyer interface {
	ServiceKeys() map[model.ServiceID][]vppcfg.Key
}

// Take takes a snapshot of a running pipeline: its processor, its
// renderers by name and its VPP layer (an agent's Inspect). Each part
// (processor, renderer indexes, VPP-layer store, statuses) is copied under
// its own lock and released before the next is taken, so the snapshot never
// holds back the reconciler beyond a copy; the parts may be a few events
// apart. A renderer that is not built on renderer.Core lists all its items
// as node items.
func Take(p *processor.Processor, renderers map[string]vppsvc.ServiceRendererAPI, rec *engine.Reconciler) *Snapshot {
	services := p.Services()
	podIfs := p.LocalPodInterfaces()
	owners := map[string]map[vppcfg.Key]model.ServiceID{}
	for name, r := range renderers {
		m := map[vppcfg.Key]model.ServiceID{}
		if sk, ok := r.(serviceKeyer); ok {
			for id, keys := range sk.ServiceKeys() {
				for _, k := range keys {
					m[k] = id
				}
			}
		}
		owners[name] = m
	}
	desired := rec.DesiredOwned()
	statuses := rec.Statuses()
	stats := rec.Stats()
	byKey := make(map[vppcfg.Key]engine.ItemStatus, len(statuses))
	for _, st := range statuses {
		byKey[st.Key] = st
	}

	snap := &Snapshot{Taken: time.Now(), Synced: stats.Synced, Counts: map[string]int{
		engine.StateApplied.String(): stats.Applied, engine.StatePending.String(): stats.Pending, engine.StateFailed.String(): stats.Failed,
	}}
	perService := map[model.ServiceID]map[string][]ItemView{}
	node := map[string][]ItemView{}
	// notApplied are node items that are pending or failed, by interface.
	notApplied := map[string][]ItemView{}
	for _, d := range desired {
		st, ok := byKey[d.Key]
		if !ok {
			st = engine.ItemStatus{Key: d.Key, Owners: d.Owners, State: engine.StatePending, Reason: "not reconciled yet"}
		}
		it := itemOf(st, d.Item)
		it.Owners = d.Owners
		for _, o := range d.Owners {
			if id, ok := owners[o][d.Key]; ok {
				if perService[id] == nil {
					perService[id] = map[string][]ItemView{}
				}
				perService[id][o] = append(perService[id][o], it)
			} else {
				node[o] = append(node[o], it)
			}
		}
		if b, ok := d.Item.(vppcfg.InterfaceBound); ok && st.State != engine.StateApplied {
			for _, ifName := range b.Interfaces() {
				notApplied[ifName] = append(notApplied[ifName], it)
			}
		}
		delete(byKey, d.Key)
	}
	// What is left are keys still in VPP that nobody desires.
	for _, st := range statuses {
		if _, left := byKey[st.Key]; left {
			for _, o := range st.Owners {
				node[o] = append(node[o], itemOf(st, nil))
			}
		}
	}
	for _, svc := range services {
		s := serviceState(svc, podIfs)
		s.Renderers = rendererItems(perService[svc.ID])
		seen := map[string]bool{}
		for _, b := range s.Backends {
			if b.Interface != "" && !seen[b.Interface] {
				seen[b.Interface] = true
				s.BlockedBy = append(s.BlockedBy, notApplied[b.Interface]...)
			}
		}
		snap.Services = append(snap.Services, s)
	}
	snap.NodeItems = rendererItems(node)
	return snap
}

func rendererItems(m map[string][]ItemView) []RendererItems {
	out := make([]RendererItems, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, RendererItems{Renderer: name, Items: m[name]})
	}
	return out
}

// itemOf converts a status; cfg is the desired value (nil for a deleting item).
func itemOf(st engine.ItemStatus, cfg vppcfg.Item) ItemView {
	it := ItemView{Key: st.Key.String(), Status: st.State.String(), Deleting: st.Deleting, Reason: st.Reason,
		Failures: st.Failures, Owners: st.Owners}
	if cfg != nil {
		it.Config = cfg.String()
	}
	it.WaitingFor = waitingInterface(st.Reason)
	if st.Err != nil {
		it.Error = st.Err.Error()
		var ve api.VPPApiError
		if errors.As(st.Err, &ve) {
			it.Retval = int32(ve)
		}
	}
	if !st.NextRetry.IsZero() {
		t := st.NextRetry
		it.NextRetry = &t
	}
	if !st.Since.IsZero() {
		t := st.Since
		it.Since = &t
	}
	return it
}

// waitingInterface extracts the interface name from the VPP layer's pending
// reason `interface "NAME" not found`.
func waitingInterface(reason string) string {
	rest, ok := strings.CutPrefix(reason, "interface ")
	if !ok {
		return ""
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return ""
	}
	name, err := strconv.Unquote(q)
	if err != nil {
		return ""
	}
	return name
}

// serviceState flattens a service's frontends and backends, in port-name order.
func serviceState(svc *model.ContivService, podIfs map[netip.Addr]string) ServiceState {
	s := ServiceState{
		Namespace: svc.ID.Namespace, Name: svc.ID.Name, Service: svc,
		ExternalTrafficPolicy: svc.ExternalTrafficPolicy.String(), InternalTrafficPolicy: svc.InternalTrafficPolicy.String(),
		SessionAffinity: svc.SessionAffinityTimeout,
		Frontends:       []FrontendView{}, Backends: []Backend{},
	}
	for _, p := range svc.LoadBalancerSourceRanges {
		s.SourceRanges = append(s.SourceRanges, p.String())
	}
	for _, name := range svc.PortNames() {
		p, _ := svc.Port(name)
		serving := func(policy model.TrafficPolicy, family func(netip.Addr) bool) []string {
			bs := svc.ClusterBackends(name)
			if policy == model.TrafficPolicyLocal {
				bs = svc.LocalBackends(name)
			}
			out := []string{}
			for _, b := range bs {
				if family == nil || family(b.IP.Unmap()) {
					out = append(out, b.AddrPort().String())
				}
			}
			return out
		}
		add := func(typ string, ips model.IPAddresses, policy model.TrafficPolicy) {
			for _, ip := range ips {
				s.Frontends = append(s.Frontends, FrontendView{Type: typ, Address: netip.AddrPortFrom(ip, p.Port).String(),
					Protocol: p.Protocol.String(), PortName: name, Backends: serving(policy, sameFamily(ip))})
			}
		}
		add("ClusterIP", svc.ClusterIPs, svc.InternalTrafficPolicy)
		add("ExternalIP", svc.ExternalIPs, svc.ExternalTrafficPolicy)
		add("LoadBalancer", svc.LoadBalancerIPs, svc.ExternalTrafficPolicy)
		if p.NodePort != 0 {
			s.Frontends = append(s.Frontends, FrontendView{Type: "NodePort", Address: fmt.Sprintf("*:%d", p.NodePort),
				Protocol: p.Protocol.String(), PortName: name, Backends: serving(svc.ExternalTrafficPolicy, nil)})
		}
		for _, b := range svc.Backends(name) {
			state := "active"
			if b.Terminating {
				state = "terminating"
			}
			be := Backend{PortName: name, Address: b.AddrPort().String(), State: state,
				Local: b.Local, HostNetwork: b.HostNetwork, Zones: b.ZoneHints.List()}
			if b.Local {
				be.Interface = podIfs[b.IP]
			}
			s.Backends = append(s.Backends, be)
		}
	}
	return s
}

// Service returns the state of one service, or false.
func (s *Snapshot) Service(namespace, name string) (ServiceState, bool) {
	for _, svc := range s.Services {
		if svc.Namespace == namespace && svc.Name == name {
			return svc, true
		}
	}
	return ServiceState{}, false
}

// sameFamily returns a filter for addresses of ip's family.
func sameFamily(ip netip.Addr) func(netip.Addr) bool {
	if ip.Unmap().Is4() {
		return netip.Addr.Is4
	}
	return netip.Addr.Is6
}
