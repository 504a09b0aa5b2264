package processor

// Test address plan (every test in this package keeps to it, so that an
// address says what it is at a glance):
//
//	cluster IPs           10.96.0.0/16          fd00:96::/112
//	pod (endpoint) IPs    10.244.<node>.0/24    fd00:244:<node>::/64   node a=1, b=2, c=3
//	node InternalIPs      192.168.0.<node>      fd00:192::<node>
//	node ExternalIPs      203.0.113.<node>
//	external IPs          198.51.100.0/24       2001:db8:51::/64
//	LB ingress IPs        192.0.2.0/24          2001:db8:2::/64
//	LB source ranges      198.18.0.0/15 and 10.0.0.0/8
//
// Nodes: "node-a" (this node, zone "zone-a"), "node-b" (zone-b), "node-c" (zone-c).
// Local pods are named pod-N with interface "tap-N"; the configured frontend
// interfaces are "uplink0" and "host0".

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/model"
)

const (
	thisNode = "node-a"
	thisZone = "zone-a"
)

// nodeCtx is the NodeContext of node-a with the IPs of nodes a and b.
var nodeCtx = NodeContext{
	Name:    thisNode,
	Zone:    thisZone,
	NodeIPs: model.NewIPAddresses(ip("192.168.0.1"), ip("192.168.0.2"), ip("203.0.113.1")),
}

func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

func ips(ss ...string) model.IPAddresses {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = ip(s)
	}
	return model.NewIPAddresses(out...)
}

func ptr[T any](v T) *T { return &v }

// makeService returns a ClusterIP service 10.96.0.10 with one TCP port "http"
// 80, changed by the mutators.
func makeService(ns, name string, mutators ...func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			ClusterIP:  "10.96.0.10",
			ClusterIPs: []string{"10.96.0.10"},
			Ports:      []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
		},
	}
	for _, m := range mutators {
		m(svc)
	}
	return svc
}

func withClusterIPs(addrs ...string) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Spec.ClusterIPs = addrs
		s.Spec.ClusterIP = ""
		if len(addrs) > 0 {
			s.Spec.ClusterIP = addrs[0]
		}
	}
}

func withPorts(ports ...corev1.ServicePort) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.Ports = ports }
}

func withType(t corev1.ServiceType) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.Type = t }
}

func svcPort(name string, proto corev1.Protocol, port, nodePort int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: proto, Port: port, NodePort: nodePort}
}

// makeSlice returns an IPv4 slice of service svc with one TCP port "http"
// 8080 and no endpoints, changed by the mutators.
func makeSlice(ns, name, svc string, mutators ...func(*discoveryv1.EndpointSlice)) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{slicePort("http", corev1.ProtocolTCP, 8080)},
	}
	for _, m := range mutators {
		m(s)
	}
	return s
}

func slicePort(name string, proto corev1.Protocol, port int32) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: ptr(name), Protocol: ptr(proto), Port: ptr(port)}
}

func withSlicePorts(ports ...discoveryv1.EndpointPort) func(*discoveryv1.EndpointSlice) {
	return func(s *discoveryv1.EndpointSlice) { s.Ports = ports }
}

func withEndpoints(eps ...discoveryv1.Endpoint) func(*discoveryv1.EndpointSlice) {
	return func(s *discoveryv1.EndpointSlice) { s.Endpoints = eps }
}

func withAddressType(t discoveryv1.AddressType) func(*discoveryv1.EndpointSlice) {
	return func(s *discoveryv1.EndpointSlice) { s.AddressType = t }
}

// makeEndpoint returns a ready endpoint (conditions left nil, as the API
// allows) on node-b, changed by the mutators.
func makeEndpoint(addr string, mutators ...func(*discoveryv1.Endpoint)) discoveryv1.Endpoint {
	ep := discoveryv1.Endpoint{Addresses: []string{addr}, NodeName: ptr("node-b")}
	for _, m := range mutators {
		m(&ep)
	}
	return ep
}

func onNode(name string) func(*discoveryv1.Endpoint) {
	return func(e *discoveryv1.Endpoint) { e.NodeName = ptr(name) }
}

func notReady(e *discoveryv1.Endpoint) { e.Conditions.Ready = ptr(false) }

// terminating marks an endpoint as not ready, terminating and still serving.
func terminating(e *discoveryv1.Endpoint) {
	e.Conditions = discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}
}

func hinted(zones ...string) func(*discoveryv1.Endpoint) {
	return func(e *discoveryv1.Endpoint) {
		e.Hints = &discoveryv1.EndpointHints{}
		for _, z := range zones {
			e.Hints.ForZones = append(e.Hints.ForZones, discoveryv1.ForZone{Name: z})
		}
	}
}

// makeNode returns a node with the given InternalIP and zone label.
func makeNode(name, internalIP, zone string, mutators ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if zone != "" {
		n.Labels[corev1.LabelTopologyZone] = zone
	}
	if internalIP != "" {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: internalIP})
	}
	for _, m := range mutators {
		m(n)
	}
	return n
}

func localPod(n int, addrs ...string) LocalPod {
	pod := LocalPod{ID: PodID{Namespace: "default", Name: fmt.Sprintf("pod-%d", n)}, Interface: fmt.Sprintf("tap-%d", n)}
	for _, a := range addrs {
		pod.IPs = append(pod.IPs, ip(a))
	}
	return pod
}

// be builds an expected backend; flags are "local", "hostnet", "terminating".
func be(addrPort string, flags ...string) model.ServiceBackend {
	ap := netip.MustParseAddrPort(addrPort)
	b := model.ServiceBackend{IP: ap.Addr(), Port: ap.Port()}
	for _, f := range flags {
		switch {
		case f == "local":
			b.Local = true
		case f == "hostnet":
			b.HostNetwork = true
		case f == "terminating":
			b.Terminating = true
		case strings.HasPrefix(f, "zones="):
			b.ZoneHints = model.NewZones(strings.Split(strings.TrimPrefix(f, "zones="), "+")...)
		default:
			panic("unknown backend flag " + f)
		}
	}
	return b
}

// quietLogger discards logs but lets tests count warnings.
type quietLogger struct {
	*logrus.Logger
	hook *countingHook
}

type countingHook struct {
	mu      sync.Mutex
	entries []*logrus.Entry
}

func (h *countingHook) Levels() []logrus.Level { return logrus.AllLevels }
func (h *countingHook) Fire(e *logrus.Entry) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries = append(h.entries, e)
	return nil
}

func (h *countingHook) snapshot() []*logrus.Entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.entries)
}

func newQuietLogger() quietLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	h := &countingHook{}
	l.AddHook(h)
	return quietLogger{Logger: l, hook: h}
}

// newTestProcessor returns a processor for node-a with a silent logger.
func newTestProcessor(t testing.TB) (*Processor, quietLogger) {
	t.Helper()
	log := newQuietLogger()
	p := New(Config{NodeName: thisNode, FrontendInterfaces: []string{"uplink0", "host0"}, Logger: log})
	return p, log
}

var errInjected = errors.New("injected failure")

// recorder is a renderer that logs every call as a short line and applies it
// to its own state, checking that the processor's calls are consistent with
// what it was told before (no add of a known service, old values that match,
// and so on). It is the oracle of the sequence and property tests.
type recorder struct {
	mu    sync.Mutex
	calls []string
	// violations lists calls that contradict the renderer's state.
	violations []string
	// fail, when set, decides whether a call fails (with op as in the log).
	fail func(op string) bool

	synced      bool
	services    map[model.ServiceID]*model.ContivService
	nodeIPs     model.IPAddresses
	frontendIfs model.Interfaces
	backendIfs  model.Interfaces
}

func newRecorder() *recorder {
	return &recorder{services: map[model.ServiceID]*model.ContivService{}}
}

var _ renderer = (*recorder)(nil)

func (r *recorder) call(line string) error {
	r.calls = append(r.calls, line)
	if r.fail != nil && r.fail(strings.Fields(line)[0]) {
		r.calls[len(r.calls)-1] += " FAILED"
		return errInjected
	}
	if !r.synced && !strings.HasPrefix(line, "resync") {
		r.violations = append(r.violations, "call before resync: "+line)
	}
	return nil
}

func (r *recorder) violate(format string, args ...any) {
	r.violations = append(r.violations, fmt.Sprintf(format, args...))
}

func (r *recorder) AddService(s *model.ContivService) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("add " + s.ID.String()); err != nil {
		return err
	}
	if _, ok := r.services[s.ID]; ok {
		r.violate("add of known service %s", s.ID)
	}
	r.services[s.ID] = s
	return nil
}

func (r *recorder) UpdateService(old, s *model.ContivService) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("update " + s.ID.String()); err != nil {
		return err
	}
	if !r.services[s.ID].Equal(old) {
		r.violate("update of %s: old value differs from the one held", s.ID)
	}
	if old.Equal(s) {
		r.violate("update of %s without change", s.ID)
	}
	r.services[s.ID] = s
	return nil
}

func (r *recorder) DeleteService(s *model.ContivService) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("delete " + s.ID.String()); err != nil {
		return err
	}
	if !r.services[s.ID].Equal(s) {
		r.violate("delete of %s: value differs from the one held", s.ID)
	}
	delete(r.services, s.ID)
	return nil
}

func (r *recorder) UpdateNodePortServices(nodeIPs model.IPAddresses, np []*model.ContivService) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, len(np))
	for i, s := range np {
		names[i] = s.ID.String()
	}
	if err := r.call(fmt.Sprintf("nodeports %s [%s]", nodeIPs, strings.Join(names, " "))); err != nil {
		return err
	}
	r.nodeIPs = nodeIPs
	for _, s := range np {
		if !r.services[s.ID].Equal(s) {
			r.violate("node-port service %s differs from the one held", s.ID)
		}
	}
	return nil
}

func (r *recorder) UpdateLocalFrontendIfs(old, ifs model.Interfaces) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call(fmt.Sprintf("frontends %s->%s", old, ifs)); err != nil {
		return err
	}
	if !old.Equal(r.frontendIfs) {
		r.violate("frontends: old %s, held %s", old, r.frontendIfs)
	}
	r.frontendIfs = ifs
	return nil
}

func (r *recorder) UpdateLocalBackendIfs(old, ifs model.Interfaces) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call(fmt.Sprintf("backends %s->%s", old, ifs)); err != nil {
		return err
	}
	if !old.Equal(r.backendIfs) {
		r.violate("backends: old %s, held %s", old, r.backendIfs)
	}
	r.backendIfs = ifs
	return nil
}

func (r *recorder) Resync(ev *model.ResyncEventData) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call(fmt.Sprintf("resync n=%d", len(ev.Services))); err != nil {
		return err
	}
	r.synced = true
	r.services = map[model.ServiceID]*model.ContivService{}
	for _, s := range ev.Services {
		r.services[s.ID] = s
	}
	r.nodeIPs, r.frontendIfs, r.backendIfs = ev.NodeIPs, ev.FrontendIfs, ev.BackendIfs
	return nil
}

// takeCalls returns the calls logged since the last take.
func (r *recorder) takeCalls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// state dumps what the renderer holds, one line per item, sorted.
func (r *recorder) state() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "nodeIPs %s\nfrontends %s\nbackends %s\n", r.nodeIPs, r.frontendIfs, r.backendIfs)
	ids := make([]model.ServiceID, 0, len(r.services))
	for id := range r.services {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, model.ServiceID.Compare)
	for _, id := range ids {
		fmt.Fprintln(&b, r.services[id])
	}
	return b.String()
}
