package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
)

// resyncAsync starts a.proc.Resync of c in the background; the returned
// channel closes when it returns.
func resyncAsync(a *agent, c *cluster) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.proc.Resync(c.snapshot())
	}()
	return done
}

// afterWrites waits until v has seen n more state-changing calls (or the
// cold sync ended first).
func afterWrites(v *fakevpp.VPP, n int, done <-chan struct{}) {
	base := tracetest.Writes(v)
	waitFor(convergeTimeout, func() bool {
		select {
		case <-done:
			return true
		default:
			return tracetest.Writes(v)-base >= n
		}
	})
}

// TestVPPRestartDuringColdSync: VPP restarts at a random point of a cold
// sync of many services; the agent converges to the full desired state,
// with no duplicate and no leaked object.
func TestVPPRestartDuringColdSync(t *testing.T) {
	n := sizes(1000, 5000)
	c := bulkCluster(n)
	want := reference(t, c.snapshot(), nil)
	total := strings.Count(want, "\n")
	for run := range sizes(3, 6) {
		seed := int64(run)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			v := newFake(seed)
			a := startAgent(t, v, true)
			done := resyncAsync(a, c)
			afterWrites(v, 1+rng.IntN(total), done)
			v.Restart()
			<-done
			waitDump(t, a, v, want, fmt.Sprintf("%d services, seed %d", n, seed))
			tracetest.AssertNoViolations(t, v)
		})
	}
}

// addForeign programs objects of another control plane before the agent
// starts: a NAT44 static mapping and an ACL bound to tap2, tagged
// "calico:…", and an untagged static mapping nobody desires.
func addForeign(t testing.TB, v *fakevpp.VPP) {
	t.Helper()
	d, err := govppdriver.Connect(v.NewAdapter(), govppdriver.Options{Logger: tracetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ap := netip.MustParseAddrPort
	create := func(it vppcfg.Item, tag string) driverapi.Op {
		return driverapi.Op{Type: driverapi.OpCreate, Key: it.Key(), Item: it, Tag: tag}
	}
	ops := []driverapi.Op{
		create(&vppcfg.NAT44Global{}, ""),
		create(&vppcfg.NAT44StaticMapping{External: ap("1.1.1.1:25"), Protocol: vppcfg.ProtoTCP, Local: ap("10.1.1.25:25")}, ""),
		create(&vppcfg.NAT44StaticMapping{External: ap("1.1.1.1:26"), Protocol: vppcfg.ProtoTCP, Local: ap("10.1.1.26:26")}, "calico:smtp"),
		create(&vppcfg.ACL{Name: "theirs", Rules: []vppcfg.ACLRule{{Action: vppcfg.ACLPermit,
			Src: netip.MustParsePrefix("0.0.0.0/0"), Dst: netip.MustParsePrefix("0.0.0.0/0")}}}, "calico:acl"),
	}
	var res []driverapi.OpResult
	waitFor(convergeTimeout, func() bool { // the driver connects in the background
		res = d.Apply(context.Background(), ops)
		return !errors.Is(res[0].Err, driverapi.ErrNotConnected)
	})
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("foreign %s: %v", ops[i], r.Err)
		}
	}
	tap2, _ := v.InterfaceIndex("tap2")
	lists := &driverapi.ACLAssignment{Interface: "tap2", InputIndexes: []uint32{res[3].Handle}}
	bind := driverapi.Op{Type: driverapi.OpUpdate, Key: lists.Key(), SwIfIndex: tap2, Item: lists}
	if r := d.Apply(context.Background(), []driverapi.Op{bind}); r[0].Err != nil {
		t.Fatalf("bind the foreign ACL: %v", r[0].Err)
	}
}

// foreignLines are the dump lines of addForeign's objects; the foreign ACL
// must stay first on tap2.
func foreignLines(dump string) []string {
	var out []string
	for _, l := range strings.Split(dump, "\n") {
		if strings.Contains(l, "calico") || strings.Contains(l, "10.1.1.25:25") {
			// Of an interface's ACL list only its head: ours follow it.
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "tap2 in=[calico:acl") {
				l = "tap2 in=[calico:acl, …"
			}
			out = append(out, l)
		}
	}
	return out
}

// TestAgentRestart: the agent is killed at a random point of a
// transaction and a new one starts with the same desired state (or with
// services deleted meanwhile): VPP converges to the desired state, the
// stale tagged objects go, the foreign ones stay; a restart with nothing
// changed makes no add or delete call.
func TestAgentRestart(t *testing.T) {
	full := bulkCluster(sizes(300, 2000))
	shrunk := bulkCluster(sizes(300, 2000))
	// Deleted while no agent runs: every tenth service, IPv4 and IPv6 alike.
	// NAT44 mappings and ACLs carry our tags; cnat translations carry none
	// and go because the IPv6 renderer claims them (ipv6.Claims).
	for i := 0; i < len(full.services); i += 10 {
		delete(shrunk.services, fmt.Sprintf("svc-%d", i))
	}
	prepare := func(v *fakevpp.VPP) { addForeign(t, v) }
	wantFull := reference(t, full.snapshot(), prepare)
	wantShrunk := reference(t, shrunk.snapshot(), prepare)
	for run := range sizes(4, 10) {
		seed := int64(run)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 11))
			v := newFake(seed)
			addForeign(t, v)
			foreign := foreignLines(v.Dump())
			a := startAgent(t, v, false)
			done := resyncAsync(a, full)
			afterWrites(v, 1+rng.IntN(strings.Count(wantFull, "\n")), done)
			a.stop() // killed mid-transaction
			<-done

			next, want := full, wantFull
			if seed%2 == 1 {
				next, want = shrunk, wantShrunk
			}
			b := startAgent(t, v, false)
			b.proc.Resync(next.snapshot())
			waitDump(t, b, v, want, fmt.Sprintf("seed %d: restarted agent", seed))
			b.stop()

			v.ResetCalls()
			c := startAgent(t, v, false)
			c.proc.Resync(next.snapshot())
			waitDump(t, c, v, want, fmt.Sprintf("seed %d: restart with nothing changed", seed))
			if w := addDelCalls(v); len(w) > 0 {
				t.Fatalf("seed %d: a restart with nothing changed made add/delete calls: %v", seed, w)
			}
			if got := foreignLines(v.Dump()); !slices.Equal(got, foreign) {
				t.Fatalf("seed %d: foreign objects changed:\n got %q\nwant %q", seed, got, foreign)
			}
			tracetest.AssertNoViolations(t, v)
		})
	}
}

// addDelCalls are the calls that add or delete VPP objects (re-asserted
// settings VPP cannot dump, such as cnat SNAT addresses, are neither).
func addDelCalls(v *fakevpp.VPP) map[string]int {
	out := map[string]int{}
	for msg, n := range v.Calls() {
		if strings.Contains(msg, "add") || strings.Contains(msg, "del") || strings.Contains(msg, "update") || strings.Contains(msg, "enable") {
			if !tracetest.IsReadOnly(msg) && !reasserted[msg] {
				out[msg] = n
			}
		}
	}
	return out
}

// reasserted are the messages of settings VPP cannot dump, which the layer
// re-sends (idempotently) after every (re)connect (docs/vpp-layer.md).
var reasserted = map[string]bool{"cnat_set_snat_addresses": true, "cnat_set_snat_policy": true,
	"cnat_snat_policy_add_del_exclude_pfx": true, "cnat_snat_policy_add_del_if": true, "feature_enable_disable": true}
