package labtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
)

// TestFigures measures the lab's data and control planes for
// docs/performance.md ("The lab"): a pod's new connections per second and
// request round trip through a ClusterIP against the same server pod's IP
// directly, one TCP stream's throughput both ways, and network
// programming latency (a write to the API server until the first
// connection that sees it). Run with VPPSVC_LAB_FIGURES=1 (make
// lab-figures); the figures are logged, nothing is asserted but that they
// were measured.
func TestFigures(t *testing.T) {
	if os.Getenv("VPPSVC_LAB_FIGURES") == "" {
		t.Skip("figures only with VPPSVC_LAB_FIGURES=1 (make lab-figures)")
	}
	l := needLab(t)
	ns := newNamespace(t)
	a, b := l.Nodes[0].Name, l.Nodes[1].Name
	server := createPods(t, ns, "srv", 1, b)
	// Two clients on the same node: one through the ClusterIP, one to the
	// pod directly. One client doing both re-uses its source ports across
	// the two, and NAT44-ED's entries of closed ClusterIP connections then
	// catch direct SYNs with the same ports (direct fell to 1 conn/s).
	clients := createPods(t, ns, "client", 2, a)
	svc := webService("srv", "srv")
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "iperf", Port: 5201, TargetPort: intstr.FromInt32(5201), Protocol: corev1.ProtocolTCP})
	svc = createService(t, ns, svc)
	dial, dialDirect := fromPod(clients[0]), fromPod(clients[1])
	for _, f := range families {
		viaSvc, direct := hostPort(svcIP(svc, f), 80), hostPort(podIP(server[0], f), httpPort)
		reachAll(t, dial, netexec.ProtoHTTP, viaSvc, names(server))
		t.Run(famName(f)+"/connections", func(t *testing.T) {
			var ratios []float64
			for round := range 3 {
				s, err := netexec.ConnRate(context.Background(), dial, viaSvc, 3*time.Second, netexec.MaxConns)
				if err != nil {
					t.Fatal(err)
				}
				d, err := netexec.ConnRate(context.Background(), dialDirect, direct, 3*time.Second, netexec.MaxConns)
				if err != nil {
					t.Fatal(err)
				}
				ratios = append(ratios, s.PerSecond/d.PerSecond)
				t.Logf("round %d: ClusterIP %.0f conn/s, direct %.0f conn/s, ratio %.2f", round, s.PerSecond, d.PerSecond, s.PerSecond/d.PerSecond)
			}
			slices.Sort(ratios)
			t.Logf("FIGURE %s new TCP connections/s, ClusterIP / direct: median %.2f (min %.2f, max %.2f)", famName(f), ratios[1], ratios[0], ratios[2])
		})
		t.Run(famName(f)+"/rtt", func(t *testing.T) {
			s, err := netexec.RTT(context.Background(), dial, viaSvc, 2000)
			if err != nil {
				t.Fatal(err)
			}
			d, err := netexec.RTT(context.Background(), dialDirect, direct, 2000)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("FIGURE %s request round trip p50 ClusterIP %s direct %s (ratio %.2f); p99 ClusterIP %s direct %s (ratio %.2f)", famName(f),
				s.P50, d.P50, float64(s.P50)/float64(d.P50), s.P99, d.P99, float64(s.P99)/float64(d.P99))
		})
		t.Run(famName(f)+"/throughput", func(t *testing.T) {
			srvNS := l.Names.PodNS(nodeOf(server[0]).Index, nodeOf(server[0]).PodSlot(podIP(server[0], corev1.IPv4Protocol)))
			cliNS := l.Names.PodNS(nodeOf(clients[1]).Index, nodeOf(clients[1]).PodSlot(podIP(clients[1], corev1.IPv4Protocol)))
			in := func(ns string) netexec.CommandFunc {
				return func(ctx context.Context, name string, args ...string) *exec.Cmd {
					cmd := host.Command(ns, name, args...)
					return exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
				}
			}
			var got [2]float64
			for i, ip := range []string{svcIP(svc, f).String(), podIP(server[0], f).String()} {
				r, err := netexec.Iperf3(context.Background(), in(srvNS), in(cliNS), ip, 5201, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				got[i] = r.ReceivedBitsPerSecond
			}
			t.Logf("FIGURE %s one TCP stream: ClusterIP %.2f Gbit/s, direct %.2f Gbit/s, ratio %.2f", famName(f), got[0]/1e9, got[1]/1e9, got[0]/got[1])
		})
	}
	for _, f := range families {
		t.Run(famName(f)+"/programming-latency", func(t *testing.T) { programmingLatency(t, ns, dial, b, f) })
	}
}

// programmingLatency writes 100 changes to the API server — 50 new
// Services over a running pod, 50 endpoint changes (a pod joining a
// service by its label) — and times each until the first connection from
// a client pod that sees it through family f, polling every 5 ms, each
// bounded to 30 s.
func programmingLatency(t *testing.T, ns string, dial netexec.DialFunc, node string, f corev1.IPFamily) {
	fam := famName(f)[2:] // "v4", "v6"
	pods := createPods(t, ns, "prog-"+fam, 1, node)
	var lat []time.Duration
	probe := func(addr, want string) time.Duration {
		start := time.Now()
		for time.Since(start) < 30*time.Second {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			name, err := netexec.Hostname(ctx, dial, addr)
			cancel()
			if err == nil && name == want {
				return time.Since(start)
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("%s never answered %s within 30 s", addr, want)
		return 0
	}
	for i := range 50 {
		svc := webService(fmt.Sprintf("prog-%s-%d", fam, i), "prog-"+fam)
		start := time.Now()
		got, err := client().CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		probe(hostPort(svcIP(got, f), 80), pods[0].Name)
		lat = append(lat, time.Since(start))
	}
	// Endpoint changes: a service over label app=late-<fam>; pod
	// late-<fam>-i gets the label and must answer.
	late := createService(t, ns, webService("late-"+fam, "late-"+fam))
	for i := range 50 {
		name := fmt.Sprintf("late-%s-%d", fam, i)
		createPod(t, ns, podSpec{name: name, node: node, app: "waiting"})
		waitRunning(t, ns, name)
		if i > 0 {
			_ = client().CoreV1().Pods(ns).Delete(context.Background(), fmt.Sprintf("late-%s-%d", fam, i-1), deleteNow())
		}
		start := time.Now()
		patch := []byte(`{"metadata":{"labels":{"app":"late-` + fam + `"}}}`)
		if _, err := client().CoreV1().Pods(ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		probe(hostPort(svcIP(late, f), 80), name)
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	t.Logf("FIGURE %s network programming latency over %d changes: p50 %s, p99 %s, max %s",
		famName(f), len(lat), netexec.Percentile(lat, 50).Round(time.Millisecond), netexec.Percentile(lat, 99).Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
}
