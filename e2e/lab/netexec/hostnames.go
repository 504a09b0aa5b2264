package netexec

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Protocols the hostname checks speak.
const (
	ProtoHTTP = "http"
	ProtoUDP  = "udp"
)

// MaxRequests bounds one hostname check; maxKeptErrors bounds the errors a tally keeps (it
// still counts them all).
const (
	MaxRequests   = 10000
	maxKeptErrors = 16
)

// HostnameTally is what a run of hostname requests saw: how often each endpoint answered and
// how many requests failed.
type HostnameTally struct {
	Requests int
	Counts   map[string]int
	Failures int
	// Errors are the first failures' messages.
	Errors []string
}

// Names are the distinct hostnames seen, sorted.
func (t HostnameTally) Names() []string {
	names := make([]string, 0, len(t.Counts))
	for n := range t.Counts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (t *HostnameTally) add(name string, err error) {
	t.Requests++
	if err != nil {
		t.Failures++
		if len(t.Errors) < maxKeptErrors {
			t.Errors = append(t.Errors, err.Error())
		}
		return
	}
	if t.Counts == nil {
		t.Counts = map[string]int{}
	}
	t.Counts[name]++
}

// hostnameFunc is the one-request client for proto.
func hostnameFunc(proto string) (func(context.Context, DialFunc, string) (string, error), error) {
	switch proto {
	case ProtoHTTP, "tcp", "":
		return Hostname, nil
	case ProtoUDP:
		return UDPHostname, nil
	}
	return nil, fmt.Errorf("netexec: unknown protocol %q", proto)
}

// Hostnames makes n hostname requests to addr over proto ("http" or "udp"), each on a fresh
// connection or socket, and tallies who answered: Kubernetes' e2e "every endpoint answers"
// check counts distinct hostnames the same way. It stops early only when the context ends.
func Hostnames(ctx context.Context, dial DialFunc, proto, addr string, n int) (HostnameTally, error) {
	return hostnames(ctx, dial, proto, addr, n, nil)
}

// ReachAll makes up to max hostname requests to addr over proto and stops as soon as every
// name in want has answered; the error names those that never did. Names outside want are
// tallied too, so a caller can also check that only wanted endpoints answered.
func ReachAll(ctx context.Context, dial DialFunc, proto, addr string, want []string, max int) (HostnameTally, error) {
	t, err := hostnames(ctx, dial, proto, addr, max, want)
	if err != nil {
		return t, err
	}
	var missing []string
	for _, w := range want {
		if t.Counts[w] == 0 {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		first := ""
		if len(t.Errors) > 0 {
			first = "; first: " + t.Errors[0]
		}
		return t, fmt.Errorf("%s %s: %s never answered in %d requests (seen %v, %d failures%s)",
			proto, addr, strings.Join(missing, ","), t.Requests, t.Names(), t.Failures, first)
	}
	return t, nil
}

func hostnames(ctx context.Context, dial DialFunc, proto, addr string, n int, want []string) (HostnameTally, error) {
	var t HostnameTally
	get, err := hostnameFunc(proto)
	if err != nil {
		return t, err
	}
	if n < 1 || n > MaxRequests {
		return t, fmt.Errorf("netexec: %d requests, want 1..%d", n, MaxRequests)
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		name, err := get(ctx, dial, addr)
		t.add(name, err)
		if want != nil && !slices.ContainsFunc(want, func(w string) bool { return t.Counts[w] == 0 }) {
			break
		}
	}
	return t, nil
}
