// Package health serves the agent's health signals the way kube-proxy does:
// /healthz for the agent itself, and one health-check server per
// healthCheckNodePort so that cloud load balancers send externalTrafficPolicy
// Local traffic only to nodes with local endpoints.
package health

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// ProxyHealth tracks whether updates reach the data plane in time. As in
// kube-proxy, the agent is unhealthy only while an update has been waiting
// longer than Timeout; an idle agent with nothing to do is healthy.
type ProxyHealth struct {
	Timeout time.Duration
	Now     func() time.Time // nil = time.Now

	mu          sync.Mutex
	oldestQueue time.Time // zero when nothing is pending
	lastUpdated time.Time
}

func (h *ProxyHealth) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// QueuedUpdate records that a change is waiting to be applied.
func (h *ProxyHealth) QueuedUpdate() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.oldestQueue.IsZero() {
		h.oldestQueue = h.now()
	}
}

// Updated records a completed sync: nothing is pending any more.
func (h *ProxyHealth) Updated() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.oldestQueue = time.Time{}
	h.lastUpdated = h.now()
}

// LastUpdated is the time of the last completed sync (zero before the first).
func (h *ProxyHealth) LastUpdated() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastUpdated
}

// Healthy reports whether no update has waited longer than Timeout.
func (h *ProxyHealth) Healthy() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.oldestQueue.IsZero() || h.now().Sub(h.oldestQueue) <= h.Timeout
}

// ServeHTTP answers /healthz: 200 when healthy, 503 otherwise, with a JSON
// body shaped like kube-proxy's.
func (h *ProxyHealth) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	healthy := h.Healthy()
	body := struct {
		LastUpdated string `json:"lastUpdated"`
		CurrentTime string `json:"currentTime"`
		NodeHealthy bool   `json:"nodeHealthy"`
	}{h.LastUpdated().UTC().Format(time.RFC3339Nano), h.now().UTC().Format(time.RFC3339Nano), healthy}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !healthy {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(body)
}
