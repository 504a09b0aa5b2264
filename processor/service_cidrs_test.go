package processor

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/model"
)

// cidrRecorder is a recorder that also takes service CIDR changes.
type cidrRecorder struct {
	*recorder
	cidrs []netip.Prefix
}

func (r *cidrRecorder) UpdateServiceCIDRs(cidrs []netip.Prefix) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cidrs = cidrs
	return r.call(fmt.Sprintf("cidrs %v", cidrs))
}

func (r *cidrRecorder) Resync(ev *model.ResyncEventData) error {
	if err := r.recorder.Resync(ev); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cidrs = ev.ServiceCIDRs
	return nil
}

func serviceCIDR(name string, cidrs ...string) *networkingv1.ServiceCIDR {
	return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
}

func deleting(sc *networkingv1.ServiceCIDR) *networkingv1.ServiceCIDR {
	now := metav1.NewTime(time.Unix(1, 0))
	sc.DeletionTimestamp = &now
	return sc
}

func readyCondition(status metav1.ConditionStatus) func(*networkingv1.ServiceCIDR) *networkingv1.ServiceCIDR {
	return func(sc *networkingv1.ServiceCIDR) *networkingv1.ServiceCIDR {
		sc.Status.Conditions = []metav1.Condition{{Type: networkingv1.ServiceCIDRConditionReady, Status: status}}
		return sc
	}
}

// cidrStep is an event on ServiceCIDR objects: an update of obj, or the
// deletion of del.
type cidrStep struct {
	obj *networkingv1.ServiceCIDR
	del string
	// want is the renderer's call ("" for none) and cidrs the set after it.
	want  string
	cidrs string
}

// TestServiceCIDREvents: the service CIDRs renderers get follow the
// ServiceCIDR objects event by event; a call is made only when the set
// changes; an object being deleted or not Ready counts for nothing; the
// configured CIDRs win over all objects; and a Resync of the final objects
// yields the same set.
func TestServiceCIDREvents(t *testing.T) {
	tests := []struct {
		name       string
		configured []netip.Prefix
		initial    []*networkingv1.ServiceCIDR
		steps      []cidrStep
	}{
		{name: "default range, a second one, both families",
			initial: []*networkingv1.ServiceCIDR{serviceCIDR("kubernetes", "10.96.0.0/16")},
			steps: []cidrStep{
				{obj: serviceCIDR("extra", "10.100.0.0/16", "fd00:96::/112"), want: "cidrs [10.96.0.0/16 10.100.0.0/16 fd00:96::/112]", cidrs: "[10.96.0.0/16 10.100.0.0/16 fd00:96::/112]"},
				{obj: serviceCIDR("extra", "10.100.0.0/16"), want: "cidrs [10.96.0.0/16 10.100.0.0/16]", cidrs: "[10.96.0.0/16 10.100.0.0/16]"},
				{del: "extra", want: "cidrs [10.96.0.0/16]", cidrs: "[10.96.0.0/16]"},
				{del: "kubernetes", want: "cidrs []", cidrs: "[]"},
			}},
		{name: "an object re-delivered unchanged, or repeating another's CIDR, makes no call",
			initial: []*networkingv1.ServiceCIDR{serviceCIDR("kubernetes", "10.96.0.0/16")},
			steps: []cidrStep{
				{obj: serviceCIDR("kubernetes", "10.96.0.0/16"), cidrs: "[10.96.0.0/16]"},
				{obj: serviceCIDR("copy", "10.96.0.0/16"), cidrs: "[10.96.0.0/16]"},
				{del: "kubernetes", cidrs: "[10.96.0.0/16]"},
				{del: "never-seen", cidrs: "[10.96.0.0/16]"},
			}},
		{name: "terminating and not Ready objects count for nothing; Ready and unknown-state ones do",
			steps: []cidrStep{
				{obj: readyCondition(metav1.ConditionFalse)(serviceCIDR("new", "10.100.0.0/16")), cidrs: "[]"},
				{obj: readyCondition(metav1.ConditionTrue)(serviceCIDR("new", "10.100.0.0/16")), want: "cidrs [10.100.0.0/16]", cidrs: "[10.100.0.0/16]"},
				{obj: deleting(readyCondition(metav1.ConditionTrue)(serviceCIDR("new", "10.100.0.0/16"))), want: "cidrs []", cidrs: "[]"},
				{obj: serviceCIDR("plain", "10.96.0.0/16"), want: "cidrs [10.96.0.0/16]", cidrs: "[10.96.0.0/16]"},
				{obj: readyCondition(metav1.ConditionUnknown)(serviceCIDR("plain", "10.96.0.0/16")), want: "cidrs []", cidrs: "[]"},
			}},
		{name: "bad elements are skipped, the rest of the object counts",
			steps: []cidrStep{
				{obj: serviceCIDR("bad", "10.96.0.0/16", "10.97.0.1/16", "banana", "0.0.0.0/0", "::ffff:10.0.0.0/104", "fd00:96::/112"),
					want: "cidrs [10.96.0.0/16 fd00:96::/112]", cidrs: "[10.96.0.0/16 fd00:96::/112]"},
			}},
		{name: "configured CIDRs win over every object",
			configured: []netip.Prefix{netip.MustParsePrefix("172.30.0.0/16")},
			initial:    []*networkingv1.ServiceCIDR{serviceCIDR("kubernetes", "10.96.0.0/16")},
			steps: []cidrStep{
				{obj: serviceCIDR("extra", "10.100.0.0/16"), cidrs: "[172.30.0.0/16]"},
				{del: "kubernetes", cidrs: "[172.30.0.0/16]"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := newQuietLogger()
			p := New(Config{NodeName: thisNode, Logger: log, ServiceCIDRs: tt.configured})
			r := &cidrRecorder{recorder: newRecorder()}
			p.RegisterRenderer("r", r)
			p.Resync(Snapshot{ServiceCIDRs: tt.initial})
			r.takeCalls()
			objs := map[string]*networkingv1.ServiceCIDR{}
			for _, sc := range tt.initial {
				objs[sc.Name] = sc
			}
			for i, st := range tt.steps {
				if st.obj != nil {
					p.UpdateServiceCIDR(st.obj)
					objs[st.obj.Name] = st.obj
				} else {
					p.DeleteServiceCIDR(st.del)
					delete(objs, st.del)
				}
				var want []string
				if st.want != "" {
					want = []string{st.want}
				}
				if got := r.takeCalls(); !slices.Equal(got, want) {
					t.Fatalf("step %d: calls %q, want %q", i, got, want)
				}
				if got := fmt.Sprint(p.ServiceCIDRs()); got != st.cidrs {
					t.Fatalf("step %d: service CIDRs %s, want %s", i, got, st.cidrs)
				}
				if got := fmt.Sprint(r.cidrs); got != st.cidrs {
					t.Fatalf("step %d: the renderer holds %s, want %s", i, got, st.cidrs)
				}
			}
			final := fmt.Sprint(p.ServiceCIDRs())
			var snap Snapshot
			for _, sc := range objs {
				snap.ServiceCIDRs = append(snap.ServiceCIDRs, sc)
			}
			p.Resync(snap)
			if got := fmt.Sprint(r.cidrs); got != final {
				t.Fatalf("a Resync of the final objects gives %s, the events gave %s", got, final)
			}
			if len(r.violations) > 0 {
				t.Fatalf("violations: %v", r.violations)
			}
		})
	}
}

// TestServiceCIDRBadInput: an unparsable element is skipped, logged with
// its object and field, and counted once however often the object comes
// again; a nil or unnamed object is ignored. Nothing panics.
func TestServiceCIDRBadInput(t *testing.T) {
	p, log := newTestProcessor(t)
	p.Resync(Snapshot{ServiceCIDRs: []*networkingv1.ServiceCIDR{nil, serviceCIDR("", "10.96.0.0/16")}})
	bad := serviceCIDR("bad", "10.96.0.0/16", "banana")
	p.UpdateServiceCIDR(bad)
	p.UpdateServiceCIDR(bad)
	p.UpdateServiceCIDR(nil)

	stats := p.Stats()
	if got := stats.InvalidSkipped[ProblemKey{Kind: KindServiceCIDR, Field: "spec.cidrs[]"}]; got != 1 {
		t.Errorf("bad spec.cidrs[] counted %d times, want once", got)
	}
	if got := stats.InvalidSkipped[ProblemKey{Kind: KindServiceCIDR, Field: "metadata.name"}]; got != 3 {
		t.Errorf("nil or unnamed objects counted %d times, want 3", got)
	}
	if got := stats.Events[KindServiceCIDR]; got != 3 {
		t.Errorf("%d ServiceCIDR events counted, want 3", got)
	}
	found := false
	for _, e := range log.hook.snapshot() {
		if e.Data["kind"] == KindServiceCIDR && e.Data["key"] == "bad" && e.Data["field"] == "spec.cidrs[]" && e.Data["value"] == "banana" {
			found = true
		}
	}
	if !found {
		t.Error("the bad element was not logged with its object, field and value")
	}
	if got := fmt.Sprint(p.ServiceCIDRs()); got != "[10.96.0.0/16]" {
		t.Errorf("service CIDRs %s, want the valid element only", got)
	}
}
