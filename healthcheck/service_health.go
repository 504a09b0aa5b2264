package healthcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/model"
)

// ServiceServers runs one HTTP server per healthCheckNodePort of the
// externalTrafficPolicy Local services. Each answers any path with 200 and
// the number of local ready endpoints when there is at least one, 503
// otherwise — the contract cloud load balancers rely on with kube-proxy.
type ServiceServers struct {
	// Listen opens the listener of a health-check port; nil listens on every
	// address of the node (":port").
	Listen func(port uint16) (net.Listener, error)
	Log    logrus.FieldLogger
	// ProxyHealthy, when set, makes every answer 503 while the agent itself is
	// unhealthy (kube-proxy's serviceProxyHealthy).
	ProxyHealthy func() bool

	mu      sync.Mutex
	servers map[uint16]*serviceServer
}

type serviceServer struct {
	id model.ServiceID
	// localEndpoints is read by the HTTP handler without s.mu, so that Sync
	// can shut a server down while holding s.mu without waiting on a handler.
	// localEndpoints counts IPv4 ([0]) and IPv6 ([1]) endpoints apart.
	localEndpoints [2]atomic.Int64
	srv            *http.Server
	addr           net.Addr
}

// Ports are the health-check node ports the services want served (those
// of externalTrafficPolicy Local services), each with its service.
func Ports(services []*model.ContivService) map[uint16]*model.ContivService {
	want := map[uint16]*model.ContivService{}
	for _, svc := range services {
		if svc.ExternalTrafficPolicy == model.TrafficPolicyLocal && svc.HealthCheckNodePort != 0 {
			want[svc.HealthCheckNodePort] = svc
		}
	}
	return want
}

// Sync makes the running servers match the given services: it opens servers
// for new health-check ports, closes those no longer wanted and updates the
// endpoint counts. A port that cannot be opened is logged and retried on the
// next Sync; the others keep working.
func (s *ServiceServers) Sync(services []*model.ContivService) {
	want := Ports(services)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.servers == nil {
		s.servers = map[uint16]*serviceServer{}
	}
	for port, srv := range s.servers {
		if svc, ok := want[port]; !ok || svc.ID != srv.id {
			_ = srv.srv.Shutdown(context.Background())
			delete(s.servers, port)
		}
	}
	for port, svc := range want {
		if srv, ok := s.servers[port]; ok {
			srv.store(svc)
			continue
		}
		srv, err := s.start(port, svc)
		if err != nil {
			s.log().WithFields(logrus.Fields{"service": svc.ID.String(), "port": port}).WithError(err).
				Warning("cannot open health-check node port")
			continue
		}
		s.servers[port] = srv
	}
}

// Addr returns the address a health-check port listens on (for tests).
func (s *ServiceServers) Addr(port uint16) (net.Addr, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, ok := s.servers[port]
	if !ok {
		return nil, false
	}
	return srv.addr, true
}

// Close shuts every server down.
func (s *ServiceServers) Close() {
	s.Sync(nil)
}

func (s *ServiceServers) start(port uint16, svc *model.ContivService) (*serviceServer, error) {
	listen := s.Listen
	if listen == nil {
		listen = func(p uint16) (net.Listener, error) { return net.Listen("tcp", ":"+strconv.Itoa(int(p))) }
	}
	ln, err := listen(port)
	if err != nil {
		return nil, err
	}
	srv := &serviceServer{id: svc.ID, addr: ln.Addr()}
	srv.store(svc)
	srv.srv = &http.Server{
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.answer(w, srv.id, int(srv.localEndpoints[familyOf(r)].Load()))
		}),
	}
	go func() {
		if err := srv.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log().WithField("port", port).WithError(err).Warning("health-check server stopped")
		}
	}()
	return srv, nil
}

func (s *ServiceServers) answer(w http.ResponseWriter, id model.ServiceID, count int) {
	proxyHealthy := s.ProxyHealthy == nil || s.ProxyHealthy()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Load-Balancing-Endpoint-Weight", fmt.Sprint(count))
	if count == 0 || !proxyHealthy {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	body := struct {
		Service struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"service"`
		LocalEndpoints      int  `json:"localEndpoints"`
		ServiceProxyHealthy bool `json:"serviceProxyHealthy"`
	}{LocalEndpoints: count, ServiceProxyHealthy: proxyHealthy}
	body.Service.Namespace, body.Service.Name = id.Namespace, id.Name
	_ = json.NewEncoder(w).Encode(body)
}

func (s *ServiceServers) log() logrus.FieldLogger {
	if s.Log != nil {
		return s.Log
	}
	return logrus.StandardLogger()
}

func (srv *serviceServer) store(svc *model.ContivService) {
	v4, v6 := LocalReadyEndpoints(svc)
	srv.localEndpoints[0].Store(int64(v4))
	srv.localEndpoints[1].Store(int64(v6))
}

// familyOf is 1 for a request that reached the server on an IPv6 address,
// 0 otherwise.
func familyOf(r *http.Request) int {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok && a.IP.To4() == nil && a.IP.To16() != nil {
		return 1
	}
	return 0
}

// LocalReadyEndpoints counts, per IP family, the distinct IPs of the
// service's local backends that are ready (not terminating), across all
// ports, as kube-proxy does: a pod serving two ports is one endpoint, and a
// node with only terminating endpoints must fail the check so that load
// balancers drain it. kube-proxy answers each family from its own proxier,
// so a dual-stack pod counts once in each family, not twice: a probe to an
// IPv4 node address gets v4, one to an IPv6 address v6.
func LocalReadyEndpoints(svc *model.ContivService) (v4, v6 int) {
	ips := map[netip.Addr]bool{}
	for _, p := range svc.Ports {
		for _, b := range p.Backends {
			if !b.Local || b.Terminating || ips[b.IP] {
				continue
			}
			ips[b.IP] = true
			if b.IP.Unmap().Is4() {
				v4++
			} else {
				v6++
			}
		}
	}
	return v4, v6
}
