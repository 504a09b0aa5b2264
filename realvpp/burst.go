package realvpp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// SendBurst sends pkts into VPP as one packet-generator stream received on
// their ingress interface (every packet must name the same one), and
// returns once the stream has sent them all: a pcap stream sends a frame
// (up to 256 packets) per dispatch and the graph runs each frame to
// completion, so every packet has then crossed VPP. Packets follow
// fakevpp.Packet's conventions (TCP flags 0 mean SYN).
//
// It is for measuring, not tracing: VPP's packet trace is cleared and not
// armed, and the interfaces' captures are paused for the burst (so that
// writing them does not count in the interfaces' output nodes) and
// restarted into new files after it; what the burst sent out is not
// reported by a later Trace.
func (n *Node) SendBurst(pkts []fakevpp.Packet) error {
	if len(pkts) == 0 {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	ingress := pkts[0].Ingress
	rx := n.iface(ingress)
	if rx == nil {
		return fmt.Errorf("burst: unknown ingress interface %q", ingress)
	}
	frames := make([][]byte, len(pkts))
	for i, p := range pkts {
		if p.Ingress != ingress {
			return fmt.Errorf("burst: packet %d enters on %s, the burst on %s: one stream has one source", i, p.Ingress, ingress)
		}
		in := p.Normalized()
		if !in.Src.Addr().IsValid() || !in.Dst.Addr().IsValid() || in.Src.Addr().Is4() != in.Dst.Addr().Is4() {
			return fmt.Errorf("burst: packet %d: source and destination must be addresses of one family", i)
		}
		if err := n.learnNeighbour(rx, in.Src.Addr()); err != nil {
			return err
		}
		frames[i] = encodeFrame(packetOf(in), rx.mac, rx.peerMAC())
	}
	n.seq++
	name := fmt.Sprintf("vppsvcburst%d", n.seq)
	file := filepath.Join(n.dir, name+".pcap")
	if err := writePcap(file, frames...); err != nil {
		return err
	}
	defer os.Remove(file)

	if err := n.pauseCaptures(); err != nil {
		return err
	}
	sendErr := n.sendStream(rx, name, file, len(pkts), false)
	return errors.Join(sendErr, n.resumeCaptures())
}

// pauseCaptures stops every interface's capture. Called with mu held.
func (n *Node) pauseCaptures() error {
	for _, ifc := range n.ifaces {
		if out, err := n.CLI(fmt.Sprintf("packet-generator capture %s disable", ifc.name)); err != nil || strings.TrimSpace(out) != "" {
			return fmt.Errorf("pause capture on %s: %v %s", ifc.name, err, strings.TrimSpace(out))
		}
	}
	return nil
}

// resumeCaptures starts every interface's capture again, into new files.
// Called with mu held.
func (n *Node) resumeCaptures() error {
	var errs []error
	for _, ifc := range n.ifaces {
		errs = append(errs, n.startCapture(ifc))
	}
	return errors.Join(errs...)
}

// RuntimeNode is one graph node's line of VPP's "show runtime": the calls
// of its function, the vectors (packets) it handled, and Clocks, the CPU
// clocks it spent per vector (per call, or per suspend, when it handled
// none: VPP divides by the first of vectors, calls, suspends that is not
// zero).
type RuntimeNode struct {
	Name           string
	State          string
	Calls          uint64
	Vectors        uint64
	Suspends       uint64
	Clocks         float64
	VectorsPerCall float64
}

// TotalClocks is the clocks the node spent on packets: Clocks × Vectors
// (0 for a node that handled no packet, such as a process).
func (r RuntimeNode) TotalClocks() float64 { return r.Clocks * float64(r.Vectors) }

// ClearRuntime zeroes VPP's per-node runtime statistics ("clear runtime").
func (n *Node) ClearRuntime() error {
	out, err := n.CLI("clear runtime")
	if err == nil && strings.TrimSpace(out) != "" {
		err = errors.New("clear runtime: " + strings.TrimSpace(out))
	}
	return err
}

// Runtime returns VPP's "show runtime" parsed, one entry per node and
// thread, in VPP's order.
func (n *Node) Runtime() ([]RuntimeNode, error) {
	out, err := n.CLI("show runtime")
	if err != nil {
		return nil, err
	}
	return ParseRuntime(out)
}

// ParseRuntime parses the output of VPP's "show runtime". Each node line
// is the name, the state (one or two words, possibly quoted, even cut
// short as in `"not started`), then five numbers: calls, vectors,
// suspends, clocks and vectors/call. Header lines (Thread, Time, vector
// rates, the column titles) are skipped.
func ParseRuntime(out string) ([]RuntimeNode, error) {
	var nodes []RuntimeNode
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 7 || f[0] == "Name" || f[0] == "Thread" || f[0] == "Time" || f[0] == "vector" {
			continue
		}
		nums := f[len(f)-5:]
		var v [5]float64
		ok := true
		for i, s := range nums {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				ok = false
				break
			}
			v[i] = x
		}
		if !ok {
			continue
		}
		state := strings.Trim(strings.Join(f[1:len(f)-5], " "), `"`)
		nodes = append(nodes, RuntimeNode{
			Name: f[0], State: state,
			Calls: uint64(v[0]), Vectors: uint64(v[1]), Suspends: uint64(v[2]),
			Clocks: v[3], VectorsPerCall: v[4],
		})
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("show runtime: no node lines in %q", truncate(out, 200))
	}
	return nodes, nil
}

// ClocksPerPacket sums TotalClocks over nodes and divides by packets: the
// CPU clocks the graph spent per packet sent. Nodes for which skip returns
// true are left out (nil skips none).
func ClocksPerPacket(nodes []RuntimeNode, packets int, skip func(name string) bool) float64 {
	if packets == 0 {
		return 0
	}
	var sum float64
	for _, r := range nodes {
		if skip != nil && skip(r.Name) {
			continue
		}
		sum += r.TotalClocks()
	}
	return sum / float64(packets)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
