package agenttest

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/engine"
	"github.com/vppsvc/vppsvc/vppcfg/govppdriver"
)

// Control drives a Run's processor for scenario code that may not import
// the processor (renderer/internal/cnattrace: renderer packages never do).
type Control struct {
	*Run
	// Base holds the nodes and local pods every Resync keeps.
	Base processor.Snapshot
}

// Resync replaces the processor's state with Base plus services and slices.
func (c *Control) Resync(services []*corev1.Service, slices []*discoveryv1.EndpointSlice) {
	s := c.Base
	s.Services, s.EndpointSlices = services, slices
	c.Agent.Processor.Resync(s)
}

func (c *Control) UpdateService(s *corev1.Service) { c.Agent.Processor.UpdateService(s) }

func (c *Control) UpdateEndpointSlice(s *discoveryv1.EndpointSlice) {
	c.Agent.Processor.UpdateEndpointSlice(s)
}

func (c *Control) DeleteService(namespace, name string) {
	c.Agent.Processor.DeleteService(namespace, name)
}

// Resyncs is the VPP layer's count of full resyncs so far.
func (c *Control) Resyncs() uint64 { return c.Rec.Stats().Resyncs }

// WaitSettled waits until the run's VPP layer holds every desired item and
// has removed every stale one.
func (r *Run) WaitSettled(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := r.Rec.Stats()
		settled := s.Synced && !s.Applying && s.Pending == 0 && s.Failed == 0 && s.Applied == s.Desired &&
			!slices.ContainsFunc(r.Rec.Statuses(), func(st engine.ItemStatus) bool { return st.Deleting })
		if settled {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the VPP layer did not settle: %+v", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// EnabledFeatures lists the interface features the VPP layer's driver reads
// back from node (feature_is_enabled with the arcs' canaries), sorted; the
// driver logs to log.
func EnabledFeatures(t *testing.T, node dataplane.Node, log logrus.FieldLogger) []string {
	t.Helper()
	d, err := govppdriver.Connect(node.Adapter(), govppdriver.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	select {
	case <-govppdriver.NewConnectGate(d).Connected():
	case <-time.After(10 * time.Second):
		t.Fatal("driver did not connect")
	}
	st, err := d.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range st.Objects {
		if f, ok := o.Item.(*vppcfg.InterfaceFeature); ok {
			out = append(out, f.String())
		}
	}
	slices.Sort(out)
	return out
}

// LocalPods are the processor's local pods of a test node: pod n of pods is
// default/pod-<n> on interface tap<n>, with the addresses ips(n).
func LocalPods(pods []int, ips func(n int) []netip.Addr) []processor.LocalPod {
	var out []processor.LocalPod
	for _, n := range pods {
		out = append(out, processor.LocalPod{
			ID:        processor.PodID{Namespace: "default", Name: fmt.Sprintf("pod-%d", n)},
			IPs:       ips(n),
			Interface: fmt.Sprintf("tap%d", n),
		})
	}
	return out
}
