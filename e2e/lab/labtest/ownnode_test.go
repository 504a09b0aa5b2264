package labtest

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
)

// TestServicesFromTheirOwnNode: a node's own kernel reaches, on its own node
// IPs, a NodePort (TCP and UDP), and a LoadBalancer IP and an externalIP of
// the service, every endpoint answering (kube-proxy's nodes do: "should be
// able to connect to pods over TCP/UDP from pods and nodes" through a
// NodePort); and it still gets its own health-check node ports answered
// (200 where the eTP Local service has an endpoint, 503 where not).
func TestServicesFromTheirOwnNode(t *testing.T) {
	l := needLab(t)
	ns := newNamespace(t)
	a := l.Nodes[0]
	backends := createPods(t, ns, "own", 2, a.Name, l.Nodes[1].Name)
	onlyA := createPods(t, ns, "ownlocal", 1, a.Name)
	svc := webService("own", "own")
	svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	ext4, ext6 := netip.MustParseAddr("192.168.79.20"), netip.MustParseAddr("fd00:79::20")
	svc.Spec.ExternalIPs = []string{ext4.String(), ext6.String()}
	svc = createService(t, ns, svc)
	local := webService("ownlocal", "ownlocal")
	local.Spec.Type = corev1.ServiceTypeLoadBalancer
	local.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	local = createService(t, ns, local)
	for _, f := range families {
		extIP := ext4
		if f == corev1.IPv6Protocol {
			extIP = ext6
		}
		for _, n := range l.Nodes {
			t.Run(famName(f)+"/"+n.Name+" ("+n.KindName()+")", func(t *testing.T) {
				node := fromHost(n)
				reachAll(t, node, netexec.ProtoHTTP, hostPort(nodeIP(n, f), svc.Spec.Ports[0].NodePort), names(backends))
				reachAll(t, node, netexec.ProtoUDP, hostPort(nodeIP(n, f), svc.Spec.Ports[1].NodePort), names(backends))
				reachAll(t, node, netexec.ProtoHTTP, hostPort(lbIP(svc, f), 80), names(backends))
				reachAll(t, node, netexec.ProtoHTTP, hostPort(extIP, 80), names(backends))
				code, count := http.StatusServiceUnavailable, 0
				if n.Name == a.Name {
					code, count = http.StatusOK, len(onlyA)
				}
				url := "http://" + hostPort(nodeIP(n, f), local.Spec.HealthCheckNodePort) + "/healthz"
				eventually(t, 10*time.Second, "the node's own health check", func() error {
					gotCode, gotCount, err := healthCheck(node, url)
					if err != nil {
						return err
					}
					if gotCode != code || gotCount != count {
						return fmt.Errorf("%s: %d with %d local endpoints, want %d with %d", url, gotCode, gotCount, code, count)
					}
					return nil
				})
			})
		}
	}
}
