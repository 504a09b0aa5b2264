package nodeagent

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
	"github.com/vppsvc/vppsvc/healthcheck"
	"github.com/vppsvc/vppsvc/model"
)

// serveHealthChecks runs vppsvc's health-check servers in the node's own
// kernel, one per healthCheckNodePort of the externalTrafficPolicy Local
// services, each answering with this node's ready local endpoints as
// kube-proxy's do. A load balancer's probe of <node IP>:<port> reaches them
// through VPP's punt redirect (buildNode). They follow the processor's
// services every half second until ctx ends.
func (n *nodeAgent) serveHealthChecks(ctx context.Context) {
	ns := n.opts.Names.HostNS(n.opts.Node.Index)
	servers := &healthcheck.ServiceServers{
		Listen: func(port uint16) (net.Listener, error) { return host.Listen(ns, "tcp", fmt.Sprintf(":%d", port)) },
		Log:    n.log.WithField("component", "healthcheck"),
	}
	defer servers.Close()
	exempt := n.newHealthCheckExemptions(ns)
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		services := n.svc.Processor.Services()
		servers.Sync(services)
		exempt.sync(services)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// healthCheckExemptions keeps the node's own traffic to its health-check
// node ports in its kernel: the lab sends what the node sends to its node
// IPs on a node port to VPP (lab.nodePortsThroughVPP), and a rule per
// health-check port, before that one, takes those back to the local table,
// where the servers above answer, as kube-proxy's node answers them.
type healthCheckExemptions struct {
	n     *nodeAgent
	ns    string
	ports map[uint16]bool
}

// newHealthCheckExemptions starts from none: the rules an earlier agent
// left are removed (their ports may be gone).
func (n *nodeAgent) newHealthCheckExemptions(ns string) *healthCheckExemptions {
	for _, v6 := range []bool{false, true} {
		if err := n.linux.DelRulesAt(ns, v6, topology.HealthCheckRulePref); err != nil {
			n.log.WithError(err).Warn("health-check exemptions: removing old rules")
		}
	}
	return &healthCheckExemptions{n: n, ns: ns, ports: map[uint16]bool{}}
}

// sync puts a rule per node IP for each health-check port the services
// have, and removes those of ports they no longer have. A failed rule is
// logged and tried again at the next sync.
func (e *healthCheckExemptions) sync(services []*model.ContivService) {
	want := healthcheck.Ports(services)
	rule := func(ip netip.Addr, port uint16) host.Rule {
		return host.Rule{Pref: topology.HealthCheckRulePref, To: ip, Proto: "tcp", Ports: strconv.Itoa(int(port)), Table: "local"}
	}
	for port := range e.ports {
		if want[port] != nil {
			continue
		}
		ok := true
		for _, ip := range e.n.opts.Node.IPs() {
			if err := e.n.linux.DelRule(e.ns, rule(ip, port)); err != nil {
				e.n.log.WithError(err).WithField("port", port).Warn("health-check exemption not removed")
				ok = false
			}
		}
		if ok {
			delete(e.ports, port)
		}
	}
	for port := range want {
		if e.ports[port] {
			continue
		}
		ok := true
		for _, ip := range e.n.opts.Node.IPs() {
			if err := e.n.linux.AddRule(e.ns, rule(ip, port)); err != nil {
				e.n.log.WithError(err).WithField("port", port).Warn("health-check exemption not added")
				ok = false
			}
		}
		if ok {
			e.ports[port] = true
		}
	}
}
