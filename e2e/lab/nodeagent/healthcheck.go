package nodeagent

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/healthcheck"
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
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		servers.Sync(n.svc.Processor.Services())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
