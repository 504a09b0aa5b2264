package labtest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.fd.io/govpp/binapi/vlib"
	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
	"github.com/vppsvc/vppsvc/e2e/lab/vppnode"
	"github.com/vppsvc/vppsvc/realvpp"
)

// clockFigures measures vppsvc's own share of the VPP side's per-packet
// cost in VPP's clocks: the graph clocks (show runtime, Clocks × Vectors
// summed over every node of both VPPs of the path) per packet of 2,000
// requests over one connection, through the ClusterIP, through the
// NodePort, and to the pod directly (pod-to-pod traffic that is no
// service's), and each ÷ the direct path. The I/O nodes are reported
// apart (ioNode): their clocks are wall time in system calls, the kernel's
// copy into the ring and its wake-up of the receiver, the same on every
// path and no configuration of vppsvc's.
func clockFigures(t *testing.T, sides []*side, f corev1.IPFamily) {
	var s *side
	for _, c := range sides {
		if c.name == "vppsvc" {
			s = c
		}
	}
	if s == nil {
		t.Skip("no vppsvc side")
	}
	clis := map[string]func(string) (string, error){}
	for _, n := range []string{s.client.Name, s.server.Name} {
		v, err := theLab.VPP(n)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := vppnode.Connect(ctx, v.APISocket())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		clis[n] = func(cmd string) (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r, err := vlib.NewServiceClient(c.Conn()).CliInband(ctx, &vlib.CliInband{Cmd: cmd})
			if err != nil {
				return "", fmt.Errorf("%s: %w", cmd, err)
			}
			return r.Reply, nil
		}
	}
	paths := []struct {
		name   string
		client *corev1.Pod
		addr   string
	}{{"ClusterIP", s.viaSvc, s.clusterIP(f)}, {"NodePort", s.viaNodePort, s.nodePort(f)}, {"pod directly", s.direct, s.podAddr(f)}}
	graph, input := map[string][]float64{}, map[string][]float64{}
	for round := range rounds {
		for _, p := range paths {
			for _, cli := range clis {
				if _, err := cli("clear runtime"); err != nil {
					t.Fatal(err)
				}
			}
			ns := podNS(p.client)
			before := packets(t, ns)
			if _, err := netexec.RTT(context.Background(), fromPod(p.client), p.addr, 2000); err != nil {
				t.Fatal(err)
			}
			pkts := int(packets(t, ns) - before)
			var g, in float64
			var top []realvpp.RuntimeNode
			for _, cli := range clis {
				out, err := cli("show runtime")
				if err != nil {
					t.Fatal(err)
				}
				nodes, err := realvpp.ParseRuntime(out)
				if err != nil {
					t.Fatal(err)
				}
				in += realvpp.ClocksPerPacket(nodes, pkts, func(n string) bool { return !ioNode(n) })
				g += realvpp.ClocksPerPacket(nodes, pkts, ioNode)
				top = append(top, nodes...)
			}
			graph[p.name], input[p.name] = append(graph[p.name], g), append(input[p.name], in)
			t.Logf("round %d %s: %d packets, graph %.0f clocks/packet (both VPPs; I/O nodes apart: %.0f); top: %s",
				round, p.name, pkts, g, in, topNodes(top, pkts, 8))
		}
	}
	fam := famName(f)
	direct := median(slices.Clone(graph["pod directly"]))
	for _, p := range paths {
		g := median(slices.Clone(graph[p.name]))
		t.Logf("FIGURE %s VPP graph clocks per packet over two VPP nodes, %s (I/O nodes apart): %.0f, %.2f× the pod directly; I/O nodes %.0f",
			fam, p.name, g, g/direct, median(slices.Clone(input[p.name])))
	}
}

// ioNode tells VPP's af_packet I/O nodes: af-packet-input and the
// interfaces' tx nodes (<interface>-tx).
func ioNode(name string) bool { return name == "af-packet-input" || strings.HasSuffix(name, "-tx") }

// topNodes names the n nodes that spent the most clocks per packet.
func topNodes(nodes []realvpp.RuntimeNode, pkts, n int) string {
	sum := map[string]float64{}
	for _, r := range nodes {
		sum[r.Name] += r.TotalClocks() / float64(max(pkts, 1))
	}
	names := make([]string, 0, len(sum))
	for k, v := range sum {
		if v > 0 {
			names = append(names, k)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(sum[b], sum[a]) })
	var parts []string
	for _, k := range names[:min(n, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, sum[k]))
	}
	return strings.Join(parts, ", ")
}
