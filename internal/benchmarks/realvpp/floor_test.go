package realvpp

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.fd.io/govpp/binapi/ip_types"
	"go.fd.io/govpp/binapi/nat44_ed"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/processor"
	rv "github.com/vppsvc/vppsvc/realvpp"
	"github.com/vppsvc/vppsvc/vppsock"
)

// The floor: the least any control plane can do for a NAT44 cold sync,
// timed from the Kubernetes objects to VPP's last reply. It keeps no
// state, diffs nothing and reports no status: it joins each Service to its
// EndpointSlice by the service-name label, parses the ClusterIP and the
// ready endpoints' addresses, fills one LB mapping request a service port
// (everything the objects do not decide, such as flags and affinity, taken
// from the product's first recorded mapping), encodes it into vppsock's
// held window and reads the replies as the held ceiling does. The recorded
// writes that are not LB mappings go first, as recorded: with a
// ServiceCIDR the node's few, without one also a drop route a ClusterIP,
// which the floor then does not build (it is lower still there).
//
// The product must do at least this, so the floor's time over the held
// ceiling's is about the least factor any agent of this shape could show
// on this machine (one run is one sample: both swing by a third), and the
// product's time over the floor's is what the product's state (the
// hitless diff, its indexes and statuses) costs.

// floorTemplate is what the floor takes from the recording: the first LB
// mapping (its flags, affinity and locals' probabilities), how many LB
// mappings the product wrote, and the other writes.
type floorTemplate struct {
	mapping  *nat44_ed.Nat44AddDelLbStaticMapping
	mappings int
	others   [][]byte // raw recorded writes that are not LB mappings
}

func newFloorTemplate(b *testing.B, rec recording) (t floorTemplate, ok bool) {
	b.Helper()
	msgs := rec.decode(b, rec.sync)
	for i, m := range msgs {
		lb, isLB := m.(*nat44_ed.Nat44AddDelLbStaticMapping)
		if !isLB {
			t.others = append(t.others, rec.sync[i])
			continue
		}
		if t.mapping == nil {
			t.mapping = lb
		}
		t.mappings++
	}
	return t, t.mapping != nil
}

// floorSync programs snap into n's VPP (fresh, with the node's topology
// and the agent's start-up writes in place) the floor's way, windows of
// depth requests, and returns the time from the start to the last reply,
// the process's CPU and VPP's during it. Sequential, one goroutine builds
// and sends; pipelined, a second goroutine builds the next windows while
// the first sends and reads (the floor's work spread over both cores, as
// the product spreads its own). It fails the benchmark if any request
// fails or the mappings differ from the product's.
func floorSync(b *testing.B, n *rv.Node, snap processor.Snapshot, t floorTemplate, names map[uint16]string, depth int, pipelined bool) (took, cpu, vpp time.Duration) {
	b.Helper()
	c := vppsock.New(n.Socket())
	if err := c.Connect(); err != nil {
		b.Fatal(err)
	}
	disconnect := sync.OnceFunc(func() { _ = c.Disconnect() })
	defer disconnect()
	defer time.AfterFunc(replayTimeout, disconnect).Stop()

	lbID, err := c.GetMsgID(t.mapping.GetMessageName(), t.mapping.GetCrcString())
	if err != nil {
		b.Fatal(err)
	}
	others := remapped(b, c, names, t.others)
	s := newWindowSender(b, c, depth, true)
	fb := newFloorBuilder(t.mapping, lbID)

	cpu0, vpp0 := processCPU(), vppCPU(b, n)
	start := time.Now()
	for _, data := range others {
		s.send(data)
	}
	var built floorBuilt
	if !pipelined {
		built = fb.build(snap, func(data []byte) bool { s.send(data); return true })
	} else {
		built = pipeFloor(fb, snap, depth, s.send)
	}
	s.finish()
	took = time.Since(start)
	cpu, vpp = processCPU()-cpu0, vppCPU(b, n)-vpp0
	if built.err != nil {
		b.Errorf("floor: %v", built.err)
	}
	if built.mappings != t.mappings {
		b.Errorf("floor: %d LB mappings, the product wrote %d", built.mappings, t.mappings)
	}
	if s.failed > 0 {
		b.Errorf("floor: %d of %d requests failed", s.failed, s.sent)
	}
	return took, cpu, vpp
}

// pipeFloor builds on a second goroutine, windows of depth requests each
// in a buffer of its own (the sender's held window copies them), while
// send writes the windows already built. The builder is stopped if send
// does not return (a failed benchmark ends its goroutine with Fatal).
func pipeFloor(fb *floorBuilder, snap processor.Snapshot, depth int, send func([]byte)) floorBuilt {
	windows := make(chan [][]byte, 2)
	stop := make(chan struct{})
	defer close(stop)
	done := make(chan floorBuilt, 1)
	go func() {
		var w [][]byte
		var arena []byte
		push := func() bool {
			select {
			case windows <- w:
				w, arena = nil, nil
				return true
			case <-stop:
				return false
			}
		}
		r := fb.build(snap, func(data []byte) bool {
			if cap(arena)-len(arena) < len(data) {
				arena = make([]byte, 0, depth*len(data))
			}
			arena = append(arena, data...)
			w = append(w, arena[len(arena)-len(data):])
			return len(w) < depth || push()
		})
		if len(w) > 0 {
			push()
		}
		close(windows)
		done <- r
	}()
	for w := range windows {
		for _, data := range w {
			send(data)
		}
	}
	return <-done
}

// floorBuilder turns Services and EndpointSlices into encoded LB mapping
// requests, taking what the objects do not decide from the product's
// first mapping.
type floorBuilder struct {
	tmpl                 *nat44_ed.Nat44AddDelLbStaticMapping
	id                   uint16
	realProb, holderProb uint8
	tagPrefix            string
}

func newFloorBuilder(tmpl *nat44_ed.Nat44AddDelLbStaticMapping, id uint16) *floorBuilder {
	fb := &floorBuilder{tmpl: tmpl, id: id, tagPrefix: tmpl.Tag[:strings.LastIndexByte(tmpl.Tag, ':')+1]}
	for _, l := range tmpl.Locals {
		if l.Addr == (ip_types.IP4Address{}) {
			fb.holderProb = l.Probability
		} else {
			fb.realProb = l.Probability
		}
	}
	return fb
}

// floorBuilt is what a build made: the mappings emitted, and the first
// error (a request that could not be encoded, or the recorded service's
// mapping unlike the product's).
type floorBuilt struct {
	mappings int
	err      error
}

// build emits one encoded request a service port with ready endpoints
// (the bytes valid until emit returns); emit returning false stops it.
func (fb *floorBuilder) build(snap processor.Snapshot, emit func([]byte) bool) (r floorBuilt) {
	type svcKey struct{ ns, name string }
	slicesOf := make(map[svcKey][]*discoveryv1.EndpointSlice, len(snap.Services))
	for _, sl := range snap.EndpointSlices {
		k := svcKey{sl.Namespace, sl.Labels[discoveryv1.LabelServiceName]}
		slicesOf[k] = append(slicesOf[k], sl)
	}
	tmpl := fb.tmpl
	req := nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true, Flags: tmpl.Flags, Affinity: tmpl.Affinity}
	enc := make([]byte, 0, 1024)
	for _, svc := range snap.Services {
		ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
		if err != nil || !ip.Is4() {
			continue
		}
		for _, p := range svc.Spec.Ports {
			req.Locals = req.Locals[:0]
			for _, sl := range slicesOf[svcKey{svc.Namespace, svc.Name}] {
				port, ok := slicePort(sl, p)
				if !ok {
					continue
				}
				for _, ep := range sl.Endpoints {
					if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
						continue
					}
					a, err := netip.ParseAddr(ep.Addresses[0])
					if err != nil {
						continue
					}
					req.Locals = append(req.Locals, nat44_ed.Nat44LbAddrPort{Addr: a.As4(), Port: uint16(port), Probability: fb.realProb})
				}
			}
			if len(req.Locals) == 0 {
				continue
			}
			if len(req.Locals) == 1 {
				req.Locals = append(req.Locals, nat44_ed.Nat44LbAddrPort{Port: uint16(p.Port), Probability: fb.holderProb})
			}
			req.ExternalAddr = ip.As4()
			req.ExternalPort = uint16(p.Port)
			req.Protocol = uint8(protoNumber(p.Protocol))
			req.LocalNum = uint32(len(req.Locals))
			req.Tag = fb.tagPrefix + svc.Namespace + "/" + svc.Name
			if r.err == nil && req.ExternalAddr == tmpl.ExternalAddr && req.ExternalPort == tmpl.ExternalPort && !sameMapping(&req, tmpl) {
				r.err = fmt.Errorf("the mapping of %s/%s differs from the product's: %+v, the product's %+v", svc.Namespace, svc.Name, req, *tmpl)
			}
			if enc, err = encodeRequest(enc, fb.id, &req); err != nil {
				r.err = err
				return r
			}
			if !emit(enc) {
				return r
			}
			r.mappings++
		}
	}
	return r
}

// sameMapping reports whether the floor's request a asks VPP for the same
// mapping as the product's b: the same fields, the locals in any order.
func sameMapping(a, b *nat44_ed.Nat44AddDelLbStaticMapping) bool {
	ac, bc := *a, *b
	ac.Locals, bc.Locals = nil, nil
	return reflect.DeepEqual(ac, bc) && len(a.Locals) == len(b.Locals) &&
		!slices.ContainsFunc(a.Locals, func(l nat44_ed.Nat44LbAddrPort) bool { return !slices.Contains(b.Locals, l) })
}

// slicePort is the port of sl that serves the service port p (by name).
func slicePort(sl *discoveryv1.EndpointSlice, p corev1.ServicePort) (int32, bool) {
	for _, sp := range sl.Ports {
		if sp.Port != nil && (sp.Name == nil && p.Name == "" || sp.Name != nil && *sp.Name == p.Name) {
			return *sp.Port, true
		}
	}
	return 0, false
}

// encodeRequest encodes m with its ID and an empty request header (the
// adapter fills the client index and context) into buf's storage.
func encodeRequest(buf []byte, id uint16, m *nat44_ed.Nat44AddDelLbStaticMapping) ([]byte, error) {
	const header = 10
	n := header + m.Size()
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	clear(buf)
	binary.BigEndian.PutUint16(buf, id)
	if _, err := m.Marshal(buf[header:]); err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.GetMessageName(), err)
	}
	return buf, nil
}

// floor is the floor's best time over ceilingDepths, with the CPU of that run.
type floor struct {
	took, cpu, vpp time.Duration
	depth          int
	pipelined      bool
}

// measureFloor runs floorSync for the NAT44 renderer's syncs, once per
// depth and way (sequential, pipelined), each into a freshly restarted VPP with the node's topology and
// the agent's start-up writes replayed first, and keeps the best.
func measureFloor(b *testing.B, n *rv.Node, fam family, sz size, rec recording) (f floor, ok bool) {
	b.Helper()
	if fam != ipv4 {
		return f, false
	}
	t, ok := newFloorTemplate(b, rec)
	if !ok {
		return f, false
	}
	snap := snapshot(sz.services, sz.endpoints, false, false)
	if sz.cidr {
		snap.ServiceCIDRs = append(snap.ServiceCIDRs, serviceCIDR())
	}
	setup := rec.decode(b, rec.setup)
	for _, depth := range ceilingDepths {
		for _, pipelined := range []bool{false, true} {
			freshNode(b, n)
			replayStream(b, n.Socket(), setup, 1)
			took, cpu, vpp := floorSync(b, n, snap, t, rec.names, depth, pipelined)
			b.Logf("%s: the floor, depth %d, pipelined %v: %s, CPU %s, VPP %s", sz, depth, pipelined,
				took.Round(time.Millisecond), cpu.Round(time.Millisecond), vpp.Round(10*time.Millisecond))
			if f.took == 0 || took < f.took {
				f = floor{took: took, cpu: cpu, vpp: vpp, depth: depth, pipelined: pipelined}
			}
		}
	}
	return f, true
}
