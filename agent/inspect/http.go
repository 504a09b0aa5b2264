package inspect

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/sirupsen/logrus"
)

// ListedItem is one row of /v1/items: an item with the service (empty for
// node items) and renderer it is listed under.
type ListedItem struct {
	Service  string `json:"service,omitempty"`
	Renderer string `json:"renderer"`
	ItemView
}

// Handler serves the state inspector's API, which `vppsvc status` reads
// (from `vppsvc run --inspect-socket`, or from any embedder that serves it
// on a listener of its own, with the agent's Inspect as snapshot):
//
//	GET /v1/services                    the whole snapshot (Snapshot)
//	GET /v1/services/{namespace}/{name} one service (ServiceState)
//	GET /v1/items?renderer=&status=&service=   items, filtered
//
// Each request takes one snapshot; encoding happens after every lock is
// released.
func Handler(snapshot func() *Snapshot, log logrus.FieldLogger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/services", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, snapshot(), log)
	})
	mux.HandleFunc("GET /v1/services/{namespace}/{name}", func(w http.ResponseWriter, r *http.Request) {
		ns, name := r.PathValue("namespace"), r.PathValue("name")
		if s, ok := snapshot().Service(ns, name); ok {
			writeJSON(w, http.StatusOK, s, log)
			return
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("service %s/%s is not rendered on this node (unknown, or without a frontend)", ns, name)}, log)
	})
	mux.HandleFunc("GET /v1/items", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		status := q.Get("status")
		if status != "" && status != "applied" && status != "pending" && status != "failed" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "status: want applied, pending or failed"}, log)
			return
		}
		writeJSON(w, http.StatusOK, filterItems(snapshot(), q.Get("renderer"), status, q.Get("service")), log)
	})
	return mux
}

// filterItems flattens a snapshot's items; empty filters match everything,
// and service "-" selects the node items.
func filterItems(s *Snapshot, renderer, status, service string) []ListedItem {
	out := []ListedItem{}
	add := func(svc string, rs []RendererItems) {
		if service != "" && service != svc && (service != "-" || svc != "") {
			return
		}
		for _, r := range rs {
			if renderer != "" && r.Renderer != renderer {
				continue
			}
			for _, it := range r.Items {
				if status == "" || it.Status == status {
					out = append(out, ListedItem{Service: svc, Renderer: r.Renderer, ItemView: it})
				}
			}
		}
	}
	for _, svc := range s.Services {
		add(svc.ID(), svc.Renderers)
	}
	add("", s.NodeItems)
	return out
}

func writeJSON(w http.ResponseWriter, code int, v any, log logrus.FieldLogger) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		log.WithError(err).Debug("inspector client went away")
	}
}
