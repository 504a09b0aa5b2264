package netexec

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// DialTryTimeout bounds one try of the server's /dial, as agnhost's five-second client timeout
// does; MaxDialTries bounds the tries one /dial may ask for.
const (
	DialTryTimeout = 5 * time.Second
	MaxDialTries   = 100
)

// DialResult is the JSON body of /dial: the answers of the tries that got one (over HTTP, the
// body whatever the status) and the errors of those that did not, in order. Either list is
// left out when empty; agnhost also leaves the responses out when its last try failed, which
// this server does not, so a check sees every answer.
type DialResult struct {
	Responses []string `json:"responses,omitempty"`
	Errors    []string `json:"errors,omitempty"`
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "NOW: %v", time.Now())
	})
	hostname := func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, s.opts.Hostname) }
	mux.HandleFunc("/hostname", hostname)
	mux.HandleFunc("/hostName", hostname)
	mux.HandleFunc("/clientip", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.RemoteAddr) })
	mux.HandleFunc("/serverport", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, s.httpLn.Addr().(*net.TCPAddr).Port)
	})
	mux.HandleFunc("/echo", s.echo)
	mux.HandleFunc("/dial", s.dial)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case s.Terminating():
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, "shutting down")
		case s.unready.Load():
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, "set unready")
		default:
			fmt.Fprint(w, "ok")
		}
	})
	// /setreadiness?ready=false makes /readyz fail (a readiness probe on it
	// then takes the pod out of its services) while everything else keeps
	// being served; ready=true undoes it.
	mux.HandleFunc("/setreadiness", func(w http.ResponseWriter, r *http.Request) {
		ready, err := strconv.ParseBool(r.FormValue("ready"))
		if err != nil {
			http.Error(w, fmt.Sprintf("argument 'ready' must be true or false, got %q", r.FormValue("ready")), http.StatusBadRequest)
			return
		}
		s.unready.Store(!ready)
		fmt.Fprintf(w, "ready=%t", ready)
	})
	mux.HandleFunc("/shutdown", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		s.requestShutdown()
	})
	return logRequests(s.log, mux)
}

func logRequests(log logrus.FieldLogger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.WithFields(logrus.Fields{"proto": "http", "client": r.RemoteAddr, "uri": r.RequestURI}).
			Debug("netexec: request")
		h.ServeHTTP(w, r)
	})
}

// echo answers msg, with the status given by code when there is one.
func (s *Server) echo(w http.ResponseWriter, r *http.Request) {
	if c := r.FormValue("code"); c != "" {
		code, err := strconv.Atoi(c)
		if err != nil || code < 100 || code > 999 {
			http.Error(w, fmt.Sprintf("argument 'code' must be an HTTP status, got %q", c), http.StatusBadRequest)
			return
		}
		w.WriteHeader(code)
	}
	fmt.Fprint(w, r.FormValue("msg"))
}

// dial makes the server a client: tries requests to host:port over http or udp, each on a
// fresh connection, each bounded by DialTryTimeout, all bounded by the caller's connection.
func (s *Server) dial(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	host, port, request := q.Get("host"), q.Get("port"), q.Get("request")
	tries := 1
	if t := q.Get("tries"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 1 || n > MaxDialTries {
			http.Error(w, fmt.Sprintf("tries must be 1..%d, got %q", MaxDialTries, t), http.StatusBadRequest)
			return
		}
		tries = n
	}
	if request == "" {
		http.Error(w, "request parameter not specified", http.StatusBadRequest)
		return
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || host == "" {
		http.Error(w, fmt.Sprintf("host and/or port param are invalid: %q %q", host, port), http.StatusBadRequest)
		return
	}
	addr := net.JoinHostPort(host, port)
	var try func(ctx context.Context) (string, error)
	switch strings.ToLower(q.Get("protocol")) {
	case "", "http":
		path := "/" + strings.TrimPrefix(request, "/")
		try = func(ctx context.Context) (string, error) {
			// Any status is an answer, as for agnhost: its body is the response.
			body, status, err := httpGet(ctx, NetDial, addr, path)
			if status != 0 {
				return body, nil
			}
			return body, err
		}
	case "udp":
		try = func(ctx context.Context) (string, error) { return udpOnce(ctx, NetDial, addr, request) }
	default:
		http.Error(w, fmt.Sprintf("unsupported protocol %q", q.Get("protocol")), http.StatusBadRequest)
		return
	}
	var res DialResult
	for i := 0; i < tries && r.Context().Err() == nil; i++ {
		ctx, cancel := context.WithTimeout(r.Context(), DialTryTimeout)
		body, err := try(ctx)
		cancel()
		if err != nil {
			res.Errors = append(res.Errors, err.Error())
		} else {
			res.Responses = append(res.Responses, body)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(res)
}
