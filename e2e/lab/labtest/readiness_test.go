package labtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
)

// TestReadiness: a pod whose readinessProbe fails stops being an endpoint
// (new connections go only to the ready one) and is one again once the
// probe passes; a service with publishNotReadyAddresses keeps it as an
// endpoint throughout (Kubernetes' "should create endpoints for unready
// pods"). The lab's kubelet runs the probe (nodeagent/readiness.go);
// netexec's /setreadiness makes it fail.
func TestReadiness(t *testing.T) {
	l := needLab(t)
	ns := newNamespace(t)
	a, b := l.Nodes[0].Name, l.Nodes[1].Name
	for i, node := range []string{a, b} {
		createPod(t, ns, podSpec{name: fmt.Sprintf("rdy-%d", i), node: node, app: "rdy", probed: true})
	}
	pods := waitRunning(t, ns, "rdy-0", "rdy-1")
	clients := createPods(t, ns, "client", 1, a)
	svc := createService(t, ns, webService("rdy", "rdy"))
	pub := webService("rdypub", "rdy")
	pub.Spec.PublishNotReadyAddresses = true
	pub = createService(t, ns, pub)
	dial := fromPod(clients[0])
	for _, f := range families {
		reachAll(t, dial, netexec.ProtoHTTP, hostPort(svcIP(svc, f), 80), names(pods))
		reachAll(t, dial, netexec.ProtoHTTP, hostPort(svcIP(pub, f), 80), names(pods))
	}

	unready := pods[1]
	setReadiness := func(ready bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := netexec.SetReadiness(ctx, dial, hostPort(podIP(unready, corev1.IPv4Protocol), httpPort), ready); err != nil {
			t.Fatalf("set %s's readiness to %t: %v", unready.Name, ready, err)
		}
	}
	setReadiness(false)
	for _, f := range families {
		t.Run(famName(f)+"/unready", func(t *testing.T) {
			eventually(t, 20*time.Second, unready.Name+" out of the ready endpoints", func() error {
				if n := readyEndpoints(t, ns, "rdy", f); n != 1 {
					return fmt.Errorf("%d ready endpoints, want 1", n)
				}
				return nil
			})
			addr := hostPort(svcIP(svc, f), 80)
			eventually(t, programmingAllowance, "only the ready pod answers", func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				tally, err := netexec.Hostnames(ctx, dial, netexec.ProtoHTTP, addr, 30)
				if err != nil {
					return err
				}
				if got := tally.Names(); len(got) != 1 || got[0] != pods[0].Name {
					return fmt.Errorf("30 connections reached %v, want only %s", got, pods[0].Name)
				}
				return nil
			})
			// publishNotReadyAddresses: the unready pod is still an endpoint.
			reachAll(t, dial, netexec.ProtoHTTP, hostPort(svcIP(pub, f), 80), names(pods))
		})
	}
	setReadiness(true)
	for _, f := range families {
		t.Run(famName(f)+"/ready again", func(t *testing.T) {
			eventually(t, 20*time.Second, unready.Name+" back among the ready endpoints", func() error {
				if n := readyEndpoints(t, ns, "rdy", f); n != 2 {
					return fmt.Errorf("%d ready endpoints, want 2", n)
				}
				return nil
			})
			reachAll(t, dial, netexec.ProtoHTTP, hostPort(svcIP(svc, f), 80), names(pods))
		})
	}
}
