package processor

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Kinds of objects the processor consumes. They name objects in Problem, label
// the counters in Stats and appear in log fields.
const (
	KindService       = "Service"
	KindEndpointSlice = "EndpointSlice"
	KindNode          = "Node"
	KindLocalPod      = "LocalPod"
	KindServiceCIDR   = "ServiceCIDR"
)

// Problem describes one invalid element of an input object that the processor
// skipped. Only that element is dropped: the rest of the object is still used,
// so one typo in a Service does not take down its other ports.
type Problem struct {
	Kind   string // KindService, KindEndpointSlice, KindNode, KindLocalPod or KindServiceCIDR
	Object string // "namespace/name", or "name" for cluster-scoped objects
	// Field is the path of the bad element with list indexes left out
	// ("spec.ports[].port"), so that it can label a metric without unbounded
	// cardinality. The index, if any, is in Value's context in the log.
	Field  string
	Value  string // the offending value as found; "" when it was missing
	Reason string
}

// Key returns the counter key of the problem in Stats.
func (p Problem) Key() ProblemKey { return ProblemKey{Kind: p.Kind, Field: p.Field} }

func (p Problem) String() string {
	return fmt.Sprintf("%s %s: %s %q: %s", p.Kind, p.Object, p.Field, p.Value, p.Reason)
}

// ProblemKey groups skipped elements for counting: by object kind and field,
// never by object, so that the set of keys stays small.
type ProblemKey struct {
	Kind  string
	Field string
}

func (k ProblemKey) String() string { return k.Kind + " " + k.Field }

// problemOwner names the object whose current problems are remembered; an
// empty name means an object without identity (nil), whose problems are
// reported every time.
type problemOwner struct {
	kind, namespace, name string
}

// problemLog remembers the current problems of each object so that a problem
// is logged and counted once when it appears, not again every time the object
// (or a service it feeds) is recomputed. A Service is recomputed on every
// change of its EndpointSlices; without this, one bad port would flood the log.
type problemLog struct {
	cur map[problemOwner][]Problem
	// prev holds the problems known before a Resync started; owners not yet
	// recorded in this round fall back to it, so a Resync re-reports nothing.
	prev map[problemOwner][]Problem
}

func newProblemLog() *problemLog {
	return &problemLog{cur: map[problemOwner][]Problem{}}
}

// record makes probs the current problems of owner and returns the ones that
// were not current before.
func (l *problemLog) record(owner problemOwner, probs []Problem) []Problem {
	before, ok := l.cur[owner]
	if !ok && l.prev != nil {
		before = l.prev[owner]
	}
	if len(probs) == 0 {
		delete(l.cur, owner)
		return nil
	}
	l.cur[owner] = probs
	var fresh []Problem
	for _, p := range probs {
		if !slices.Contains(before, p) {
			fresh = append(fresh, p)
		}
	}
	return fresh
}

// forget drops the problems of an object that went away.
func (l *problemLog) forget(owner problemOwner) { delete(l.cur, owner) }

// beginRound starts a Resync: every owner is recorded afresh, and owners that
// are not recorded again are forgotten by endRound.
func (l *problemLog) beginRound() {
	l.prev = l.cur
	l.cur = map[problemOwner][]Problem{}
}

func (l *problemLog) endRound() { l.prev = nil }

// parseIP parses an IP address as the API server stores it. IPv4-mapped IPv6
// addresses are unmapped, and IPv4 octets with leading zeros are read as
// decimal, as kube-proxy's sloppy parser does for objects created before the
// API server rejected them. Zoned IPv6 addresses are refused.
func parseIP(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err == nil {
		if a.Zone() != "" {
			return netip.Addr{}, false
		}
		return a.Unmap(), true
	}
	return parseIPv4LeadingZeros(s)
}

func parseIPv4LeadingZeros(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return netip.Addr{}, false
	}
	var b [4]byte
	for i, part := range parts {
		if len(part) == 0 || len(part) > 3 || strings.TrimLeft(part, "0123456789") != "" {
			return netip.Addr{}, false
		}
		v, err := strconv.Atoi(part)
		if err != nil || v > 255 {
			return netip.Addr{}, false
		}
		b[i] = byte(v)
	}
	return netip.AddrFrom4(b), true
}

// validPort reports whether p is a usable TCP/UDP/SCTP port number.
func validPort(p int32) bool { return p >= 1 && p <= 65535 }
