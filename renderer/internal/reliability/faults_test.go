package reliability_test

import (
	"fmt"
	"testing"
	"time"

	"go.fd.io/govpp/api"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
)

// churn sends incremental events to a while faults are planned: a service
// deleted and re-added, one slice grown and restored, a pod removed and
// back. The cluster c is unchanged at the end.
func churn(a *agent, c *cluster) {
	p := a.proc
	for _, name := range []string{"svc-0", "svc-1", "svc-3"} {
		svc := c.services[name]
		p.DeleteService(svc.Namespace, svc.Name)
		p.UpdateService(svc)
	}
	for _, s := range sortedValues(c.slices)[:4] {
		grown := s.DeepCopy()
		grown.Endpoints = append(grown.Endpoints, endpointOf(s.AddressType, 11))
		p.UpdateEndpointSlice(grown)
		p.UpdateEndpointSlice(s)
	}
	pod := c.pods["pod-3"]
	p.DeleteLocalPod(pod.ID)
	p.UpdateLocalPod(pod)
}

// failures sums the VPP layer's call failures.
func failures(a *agent) (n uint64) {
	for _, f := range a.Rec.Stats().CallFailures {
		n += f
	}
	return n
}

// TestFaultsConverge: with a share of VPP calls failing (or every call of
// one message kind) during a cold sync and incremental churn, once the
// faults stop VPP holds exactly the desired state, in every seeded run,
// and the layer counted the failures.
func TestFaultsConverge(t *testing.T) {
	c := bulkCluster(sizes(40, 100))
	snap := c.snapshot()
	want := reference(t, snap, nil)
	// Errors that say nothing about VPP's state. NO_SUCH_ENTRY is not one:
	// on a delete it tells the driver the object is gone (success), so a
	// fault answering it for an object VPP keeps is a VPP that lies, which
	// the layer rightly believes (seeds 25, 37 and 81 of the long form hit
	// such a delete of an LB local and left it in the fake).
	retvals := []int32{int32(api.UNSPECIFIED), int32(api.SYSCALL_ERROR_1), int32(api.INVALID_VALUE), -1}

	type run struct {
		name  string
		seed  int64
		fault func(v *fakevpp.VPP)
		msg   string // the failing message kind, if one
	}
	var runs []run
	for seed := range int64(sizes(25, 100)) {
		runs = append(runs, run{name: fmt.Sprintf("random 10%%/seed=%d", seed), seed: seed, fault: func(v *fakevpp.VPP) {
			v.FailRandom(0.1, seed, retvals[seed%int64(len(retvals))])
		}})
	}
	for i, msg := range []string{"nat44_add_del_lb_static_mapping", "nat44_lb_static_mapping_add_del_local",
		"cnat_translation_update", "acl_add_replace", "acl_interface_set_acl_list", "nat44_interface_add_del_feature"} {
		runs = append(runs, run{name: "every " + msg, seed: int64(1000 + i), msg: msg, fault: func(v *fakevpp.VPP) {
			v.FailMessage(msg, int32(api.UNSPECIFIED))
		}})
	}
	// A message kind fails for 30 s in long mode; in short mode until the
	// layer has retried it three times.
	hold := time.Duration(sizes(0, 30)) * time.Second
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			v := newFake(r.seed)
			a := startAgent(t, v, true)
			r.fault(v)
			a.proc.Resync(snap)
			churn(a, c)
			if r.msg != "" {
				start := time.Now()
				if !waitFor(hold+convergeTimeout, func() bool {
					return a.Rec.Stats().CallFailures[r.msg] >= 3 && time.Since(start) >= hold
				}) {
					t.Fatalf("seed %d: %s failed %d times, want ≥ 3", r.seed, r.msg, a.Rec.Stats().CallFailures[r.msg])
				}
			}
			v.ClearFaults()
			waitDump(t, a, v, want, fmt.Sprintf("seed %d", r.seed))
			if failures(a) == 0 {
				t.Fatalf("seed %d: no call failure counted in the VPP layer's Stats().CallFailures", r.seed)
			}
			tracetest.AssertNoViolations(t, v)
		})
	}
}
