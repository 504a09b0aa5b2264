package tracetest

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
)

// Client is where a traced flow starts: a source address behind an
// ingress interface of the node.
type Client struct {
	Name    string
	Ingress string
	Addr    netip.Addr
}

// Env traces flows through a data plane (fakevpp, or a real VPP when the
// tests run against one) programmed by a control plane. T is the test that
// reports failures; subtests set it to themselves.
type Env struct {
	T    *testing.T
	Node dataplane.Node
	// SNATAddr is the address source-NATed flows must come from.
	SNATAddr netip.Addr

	mu    sync.Mutex
	sport uint16
}

// NewEnv returns an environment over node; flows use source ports from
// firstPort+1 on, so no two flows of an environment share a session. A
// fake must have seen no violation when the test ends.
func NewEnv(t *testing.T, node dataplane.Node, snatAddr netip.Addr, firstPort uint16) *Env {
	if f, ok := node.(*dataplane.Fake); ok {
		t.Cleanup(func() { AssertNoViolations(t, f.VPP) })
	}
	return &Env{T: t, Node: node, SNATAddr: snatAddr, sport: firstPort}
}

// Trace sends the first packet (TCP SYN, or UDP) of a new flow from cl to
// dst, from a source port no earlier flow of the environment used.
func (e *Env) Trace(cl Client, proto uint8, dst string) fakevpp.Trace {
	e.mu.Lock()
	e.sport++
	sport := e.sport
	e.mu.Unlock()
	return e.Node.Trace(fakevpp.Packet{
		Ingress: cl.Ingress, Protocol: proto,
		Src: netip.AddrPortFrom(cl.Addr, sport), Dst: netip.MustParseAddrPort(dst),
	})
}

// Expect is what a flow must do.
type Expect struct {
	Verdict   fakevpp.Verdict
	Endpoints []string // every endpoint the flow may reach (forward only)
	// SNATted are the endpoints whose flows must arrive from SNATAddr;
	// flows to the other endpoints keep the client address.
	SNATted []string
	// Reason, for a drop, is what fakevpp's reason must contain.
	Reason string
}

// Dropped expects the flow to be dropped.
var Dropped = Expect{Verdict: fakevpp.Drop}

// DroppedBecause expects the flow to be dropped for the reason named: on
// fakevpp the trace's Reason must contain reason (a real VPP words its
// reasons otherwise), so that a drop for another cause does not pass.
func DroppedBecause(reason string) Expect { return Expect{Verdict: fakevpp.Drop, Reason: reason} }

// Reaches expects a flow to one of endpoints, keeping the client address.
func Reaches(endpoints ...string) Expect {
	return Expect{Verdict: fakevpp.Forward, Endpoints: endpoints}
}

// SNATTo expects the flows to eps to be source-NATed.
func (x Expect) SNATTo(eps ...string) Expect { x.SNATted = eps; return x }

// SNATAll expects every flow to be source-NATed.
func (x Expect) SNATAll() Expect { x.SNATted = x.Endpoints; return x }

// Check traces a new flow and compares it with want; a forwarded flow must
// also get its reply back as coming from dst. On fakevpp the set of
// endpoints the flow may reach must equal want's; a real VPP reports only
// the one it chose, which must be among them.
func (e *Env) Check(cl Client, proto uint8, dst string, want Expect) fakevpp.Trace {
	e.T.Helper()
	tr := e.Trace(cl, proto, dst)
	fail := func(format string, args ...any) {
		e.T.Helper()
		e.T.Fatalf("%s → %s: %s\nsteps:\n  %s", cl.Name, dst, fmt.Sprintf(format, args...), strings.Join(tr.Steps, "\n  "))
	}
	if tr.Verdict != want.Verdict {
		fail("verdict %s (%s), want %s", tr.Verdict, tr.Reason, want.Verdict)
	}
	if want.Reason != "" && !e.Node.Real() && !strings.Contains(tr.Reason, want.Reason) {
		fail("dropped because %q, want a drop because %q", tr.Reason, want.Reason)
	}
	if want.Verdict != fakevpp.Forward {
		return tr
	}
	got := make([]string, len(tr.Endpoints))
	for i, ep := range tr.Endpoints {
		got[i] = ep.String()
	}
	slices.Sort(got)
	wantEps := slices.Sorted(slices.Values(want.Endpoints))
	if !e.Node.Real() && !slices.Equal(got, wantEps) {
		fail("endpoints %v, want %v", got, wantEps)
	}
	if !slices.Contains(wantEps, tr.Out.Dst.String()) {
		fail("left for %s, not one of %v", tr.Out.Dst, wantEps)
	}
	snat := slices.Contains(want.SNATted, tr.Out.Dst.String())
	if tr.SNAT != snat {
		fail("SNAT %t (source %s), want %t", tr.SNAT, tr.Out.Src, snat)
	}
	if snat && tr.Out.Src.Addr() != e.SNATAddr {
		fail("source NATed to %s, want %s", tr.Out.Src.Addr(), e.SNATAddr)
	}
	if !tr.ReplyOK {
		fail("the reply does not come back from %s", dst)
	}
	return tr
}

// CheckPasses checks that a flow that is no service's passes through
// untouched: forwarded to dst itself, not source-NATed, and answered.
func (e *Env) CheckPasses(cl Client, proto uint8, dst string) {
	e.T.Helper()
	tr := e.Trace(cl, proto, dst)
	if tr.Verdict != fakevpp.Forward || tr.Out.Dst.String() != dst || tr.SNAT || !tr.ReplyOK {
		e.T.Fatalf("%s → %s: %s to %s (%s) snat=%t replyOK=%t\nsteps:\n  %s", cl.Name, dst, tr.Verdict, tr.Out.Dst, tr.Reason,
			tr.SNAT, tr.ReplyOK, strings.Join(tr.Steps, "\n  "))
	}
}

// CheckLocal checks that a flow reaches VPP itself (one of its own
// addresses), not dropped by a filter rule nor translated.
func (e *Env) CheckLocal(cl Client, proto uint8, dst string) {
	e.T.Helper()
	if tr := e.Trace(cl, proto, dst); tr.Verdict != fakevpp.Local {
		e.T.Fatalf("%s → %s: %s (%s), want it delivered to VPP itself\nsteps:\n  %s", cl.Name, dst, tr.Verdict, tr.Reason, strings.Join(tr.Steps, "\n  "))
	}
}

// CheckFilterShards checks whether VPP holds the filter ACLs
// "<renderer>-filter-00" … of a renderer with the given number of shards
// (want) or none of them.
func (e *Env) CheckFilterShards(renderer string, shards int, want bool) {
	e.T.Helper()
	dump := e.Node.Dump()
	for _, name := range []string{fmt.Sprintf("%s-filter-%02d", renderer, 0), fmt.Sprintf("%s-filter-%02d", renderer, shards-1)} {
		if strings.Contains(dump, name) != want {
			e.T.Fatalf("%s in VPP: %t, want %t:\n%s", name, !want, want, dump)
		}
	}
}

// Flow is a flow to trace: from a client to dst over an L4 protocol.
type Flow struct {
	Client Client
	Proto  uint8
	Dst    string
}

// FlowOf returns the flow from cl to dst over proto.
func FlowOf(cl Client, proto uint8, dst string) Flow { return Flow{Client: cl, Proto: proto, Dst: dst} }

// CheckFilterShardsPassUnrelated is the scenario of a renderer's filter
// ACLs (renderer.ACLShards) on a node that starts without services: no
// filter ACL is bound; addFiltered then adds a service whose frontend
// filtered has no endpoint, which binds every shard (all but one holding
// only the placeholder) before the permit-all ACL. In both states the
// unrelated flows pass untouched and the node's own address, node, stays
// reachable over TCP from the client of the first flow; the filtered
// frontend is dropped.
func (e *Env) CheckFilterShardsPassUnrelated(t *testing.T, renderer string, shards int, unrelated []Flow, node string, addFiltered func(), filtered Flow) {
	check := func(t *testing.T, bound bool) {
		e.T = t
		e.CheckFilterShards(renderer, shards, bound)
		for _, f := range unrelated {
			e.CheckPasses(f.Client, f.Proto, f.Dst)
		}
		e.CheckLocal(unrelated[0].Client, TCP, node)
	}
	t.Run("no filtered service: no filter ACL", func(t *testing.T) { check(t, false) })
	addFiltered()
	t.Run("one filtered service: every shard bound", func(t *testing.T) {
		check(t, true)
		e.Check(filtered.Client, filtered.Proto, filtered.Dst, Dropped)
	})
	e.T = t
}

// ForEachClient runs check for every client as a subtest of t.
func (e *Env) ForEachClient(t *testing.T, clients []Client, check func(cl Client)) {
	for _, cl := range clients {
		t.Run(cl.Name, func(t *testing.T) {
			e.T = t
			check(cl)
		})
	}
	e.T = t
}
