// Package healthcheck serves a service proxy's health signals the way kube-proxy does:
// /healthz and /livez for the agent itself, and one health-check server per
// healthCheckNodePort so that cloud load balancers send externalTrafficPolicy
// Local traffic only to nodes with local endpoints.
package healthcheck

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
)

// toBeDeletedTaint is the taint the cluster autoscaler puts on a node it is
// about to remove; kube-proxy then reports the node ineligible.
const toBeDeletedTaint = "ToBeDeletedByClusterAutoscaler"

// ProxyHealth tracks whether changes reach VPP in time, as kube-proxy's
// proxy health server does, and answers /healthz and /livez from it.
//
// /livez is kube-proxy's: it fails only while a change has waited longer
// than Timeout for VPP. The start counts as such a change (kube-proxy
// stamps its start and queues the informers' first sync), so an agent that
// has not synced within Timeout of starting fails it too.
//
// /healthz is what a readiness probe or a load balancer asks: /livez's
// condition, and also not before the first sync, not while items have
// waited longer than InterfaceGrace for their interfaces, and not while the
// node is being deleted (nodeEligible).
type ProxyHealth struct {
	Timeout time.Duration
	// InterfaceGrace is how long items may wait for an interface before
	// /healthz fails; zero or negative: interface waits never count.
	InterfaceGrace time.Duration
	// Log receives a line when /healthz changes; nil discards it.
	Log logrus.FieldLogger
	Now func() time.Time // nil = time.Now

	mu          sync.Mutex
	started     time.Time
	oldestQueue time.Time // zero when nothing is pending
	lastUpdated time.Time // zero before the first sync
	notEligible bool
	// waitingFor is why the agent cannot start syncing yet (the API server
	// does not answer); "" when nothing blocks it.
	waitingFor   string
	waiting      int
	waitingSince time.Time
	// reported is the last /healthz verdict logged ("" = healthy), and
	// logged whether one was.
	reported string
	logged   bool
	probes   map[string]map[int]uint64 // path → code → answers
}

func (h *ProxyHealth) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// start initialises the start time on first use. Called with mu held.
func (h *ProxyHealth) start() {
	if h.started.IsZero() {
		h.started = h.now()
		h.oldestQueue = h.started
	}
}

// Start records the agent's start: the first sync is due within Timeout.
// Every other method calls it implicitly.
func (h *ProxyHealth) Start() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.start()
}

// QueuedUpdate records that a change is waiting to be applied.
func (h *ProxyHealth) QueuedUpdate() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.start()
	if h.oldestQueue.IsZero() {
		h.oldestQueue = h.now()
	}
}

// Updated records a completed sync: nothing is pending any more.
func (h *ProxyHealth) Updated() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.start()
	h.oldestQueue = time.Time{}
	h.lastUpdated = h.now()
}

// LastUpdated is the time of the last completed sync (zero before the first).
func (h *ProxyHealth) LastUpdated() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastUpdated
}

// WaitingForInterfaces records how many items wait for an interface and
// since when the longest-waiting one does (zero when none waits).
func (h *ProxyHealth) WaitingForInterfaces(items int, since time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.start()
	h.waiting, h.waitingSince = items, since
	if items == 0 {
		h.waitingSince = time.Time{}
	}
}

// WaitingFor records what keeps the agent from starting to sync (the API
// server does not answer yet): /healthz fails with reason until it is
// called with "". /livez is not affected beyond its own timeout.
func (h *ProxyHealth) WaitingFor(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.start()
	h.waitingFor = reason
}

// SyncNode follows this node's Node object: a node being deleted, or
// tainted for deletion by the cluster autoscaler, is not eligible for load
// balancer traffic, as in kube-proxy.
func (h *ProxyHealth) SyncNode(node *corev1.Node) {
	eligible := node != nil && node.DeletionTimestamp.IsZero()
	if eligible {
		for _, t := range node.Spec.Taints {
			if t.Key == toBeDeletedTaint {
				eligible = false
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notEligible = !eligible
}

// Status is one evaluation of the agent's health.
type Status struct {
	// Live is /livez's verdict; Ready /healthz's. Reason says why the
	// stricter of the two fails ("" when both hold).
	Live, Ready  bool
	NodeEligible bool
	Reason       string
	// LastUpdated is the last sync, or the start before the first one;
	// CurrentTime is when the status was evaluated.
	LastUpdated, CurrentTime time.Time
}

// evaluate computes the status. Called with mu held.
func (h *ProxyHealth) evaluate() Status {
	h.start()
	now := h.now()
	st := Status{Live: true, Ready: true, NodeEligible: !h.notEligible, LastUpdated: h.lastUpdated, CurrentTime: now}
	if st.LastUpdated.IsZero() {
		st.LastUpdated = h.started
	}
	fail := func(live bool, why string) {
		if st.Ready {
			st.Reason = why
		}
		st.Ready = false
		st.Live = st.Live && !live
	}
	if h.waitingFor != "" {
		fail(false, h.waitingFor)
	}
	if !h.oldestQueue.IsZero() && now.Sub(h.oldestQueue) > h.Timeout {
		if h.lastUpdated.IsZero() {
			fail(true, fmt.Sprintf("no sync with VPP within %s of the start", h.Timeout))
		} else {
			fail(true, fmt.Sprintf("a change has waited %s for VPP (timeout %s)", now.Sub(h.oldestQueue).Round(time.Millisecond), h.Timeout))
		}
	}
	if h.lastUpdated.IsZero() {
		fail(false, "waiting for first sync")
	}
	if h.InterfaceGrace > 0 && h.waiting > 0 && now.Sub(h.waitingSince) > h.InterfaceGrace {
		fail(false, fmt.Sprintf("%d VPP item(s) have waited %s for their interfaces (grace %s)",
			h.waiting, now.Sub(h.waitingSince).Round(time.Second), h.InterfaceGrace))
	}
	if h.notEligible {
		fail(false, "node is being deleted")
	}
	return st
}

// Status evaluates the agent's health now, and logs when /healthz's
// verdict changes: a warning with the reason when it fails, an info line
// when it recovers. The expected waits of a starting agent (for the API
// server, for the first sync) are logged at info level.
func (h *ProxyHealth) Status() Status {
	h.mu.Lock()
	st := h.evaluate()
	changed := !h.logged || st.Reason != h.reported
	h.logged, h.reported = true, st.Reason
	h.mu.Unlock()
	if changed && h.Log != nil {
		log := h.Log.WithField("last_updated", st.LastUpdated.UTC().Format(time.RFC3339Nano))
		switch {
		case st.Ready:
			log.Info("healthy: VPP holds every change")
		case st.Reason == "waiting for first sync":
			log.Info("not ready: waiting for first sync with VPP")
		case strings.HasPrefix(st.Reason, "waiting for "):
			log.WithField("reason", st.Reason).Info("not ready")
		default:
			log.WithField("reason", st.Reason).Warning("unhealthy")
		}
	}
	return st
}

// Healthy reports whether /healthz succeeds now.
func (h *ProxyHealth) Healthy() bool { return h.Status().Ready }

// ServiceProxyHealthy is what the health-check node ports report as
// serviceProxyHealthy: /healthz's verdict without the node's eligibility,
// which, as in kube-proxy, does not affect load balancer health checks.
func (h *ProxyHealth) ServiceProxyHealthy() bool {
	st := h.Status()
	if !st.NodeEligible && st.Reason == "node is being deleted" {
		return true
	}
	return st.Ready
}

// Probes returns how often each path answered each status code; 200 and
// 503 are always present, so that rate() sees both series from the start.
func (h *ProxyHealth) Probes() map[string]map[int]uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]map[int]uint64{}
	for _, path := range []string{"healthz", "livez"} {
		out[path] = map[int]uint64{http.StatusOK: 0, http.StatusServiceUnavailable: 0}
		for code, n := range h.probes[path] {
			out[path][code] = n
		}
	}
	return out
}

func (h *ProxyHealth) count(path string, code int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.probes == nil {
		h.probes = map[string]map[int]uint64{}
	}
	if h.probes[path] == nil {
		h.probes[path] = map[int]uint64{}
	}
	h.probes[path][code]++
}

// probeBody is the JSON body of /healthz and /livez: kube-proxy's fields,
// plus reason when the probe fails.
type probeBody struct {
	LastUpdated  string `json:"lastUpdated"`
	CurrentTime  string `json:"currentTime"`
	NodeEligible *bool  `json:"nodeEligible,omitempty"`
	Reason       string `json:"reason,omitempty"`
}

// ServeHTTP answers /healthz: 200 when healthy, 503 otherwise.
func (h *ProxyHealth) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	st := h.Status()
	eligible := st.NodeEligible
	h.answer(w, "healthz", st.Ready, st, &eligible)
}

// Livez returns the /livez handler.
func (h *ProxyHealth) Livez() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		st := h.Status()
		h.answer(w, "livez", st.Live, st, nil)
	})
}

// answer writes a probe's answer as kube-proxy does: when healthy,
// lastUpdated is the current time (kube-proxy keeps the field "recent"
// while healthy for older clients); when not, the last sync (or the start).
func (h *ProxyHealth) answer(w http.ResponseWriter, path string, ok bool, st Status, eligible *bool) {
	body := probeBody{CurrentTime: st.CurrentTime.UTC().Format(time.RFC3339Nano), NodeEligible: eligible}
	code := http.StatusOK
	if ok {
		body.LastUpdated = body.CurrentTime
	} else {
		code = http.StatusServiceUnavailable
		body.LastUpdated = st.LastUpdated.UTC().Format(time.RFC3339Nano)
		// Liveness is checked first, so a failing /livez has its reason.
		body.Reason = st.Reason
	}
	h.count(path, code)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}
