package main

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	discoveryv1client "k8s.io/client-go/kubernetes/typed/discovery/v1"

	"github.com/vppsvc/vppsvc/processor"
)

// trigger is the trigger time of one change seen on a watch stream: the
// endpoints.kubernetes.io/last-change-trigger-time annotation the
// EndpointSlice controller sets (and a Service's, if it has one), which
// kube-proxy's network programming latency starts from.
type trigger struct {
	at     time.Time // the annotation
	family string    // IPv4 or IPv6
	kind   string    // processor.KindService or KindEndpointSlice
	seen   time.Time
	// events and resyncs are the processor's counts when the change was
	// seen: it has been handled once either has grown.
	events, resyncs uint64
}

// triggerPatience bounds the wait for the processor to handle a change: a
// change the watcher never forwards (it arrived before the informers' first
// snapshot, which holds it) is taken as handled after it.
const triggerPatience = 10 * time.Second

// maxTriggers bounds the changes waiting to be observed; more are dropped.
const maxTriggers = 10000

func (tr trigger) handled(ps processor.Stats, now time.Time) bool {
	return ps.Events[tr.kind] > tr.events || ps.Resyncs > tr.resyncs || now.Sub(tr.seen) > triggerPatience
}

// watchClient wraps client so that the tracker sees the informers' own watch
// streams — no second watch on the API server: the trigger times of
// EndpointSlices and Services, and this node's Node (for nodeEligible).
func (t *syncTracker) watchClient(client kubernetes.Interface, node string) kubernetes.Interface {
	return triggerClient{Interface: client, t: t, node: node}
}

type triggerClient struct {
	kubernetes.Interface
	t    *syncTracker
	node string
}

func (c triggerClient) DiscoveryV1() discoveryv1client.DiscoveryV1Interface {
	return triggerDiscovery{DiscoveryV1Interface: c.Interface.DiscoveryV1(), t: c.t}
}

func (c triggerClient) CoreV1() corev1client.CoreV1Interface {
	return triggerCore{CoreV1Interface: c.Interface.CoreV1(), c: c}
}

type triggerDiscovery struct {
	discoveryv1client.DiscoveryV1Interface
	t *syncTracker
}

func (d triggerDiscovery) EndpointSlices(ns string) discoveryv1client.EndpointSliceInterface {
	return triggerSlices{EndpointSliceInterface: d.DiscoveryV1Interface.EndpointSlices(ns), t: d.t}
}

type triggerSlices struct {
	discoveryv1client.EndpointSliceInterface
	t *syncTracker
}

func (s triggerSlices) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := s.EndpointSliceInterface.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if sl, ok := ev.Object.(*discoveryv1.EndpointSlice); ok && ev.Type != watch.Deleted {
			s.t.seeTrigger(processor.KindEndpointSlice, sl.Annotations, []string{string(sl.AddressType)})
		}
		return ev, true
	}), nil
}

type triggerCore struct {
	corev1client.CoreV1Interface
	c triggerClient
}

func (c triggerCore) Services(ns string) corev1client.ServiceInterface {
	return triggerServices{ServiceInterface: c.CoreV1Interface.Services(ns), t: c.c.t}
}

func (c triggerCore) Nodes() corev1client.NodeInterface {
	return triggerNodes{NodeInterface: c.CoreV1Interface.Nodes(), c: c.c}
}

type triggerServices struct {
	corev1client.ServiceInterface
	t *syncTracker
}

func (s triggerServices) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := s.ServiceInterface.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if svc, ok := ev.Object.(*corev1.Service); ok && ev.Type != watch.Deleted {
			fams := make([]string, 0, len(svc.Spec.IPFamilies))
			for _, f := range svc.Spec.IPFamilies {
				fams = append(fams, string(f))
			}
			s.t.seeTrigger(processor.KindService, svc.Annotations, fams)
		}
		return ev, true
	}), nil
}

// triggerNodes hands this node's Node to ProxyHealth from the node
// informer's list and watch.
type triggerNodes struct {
	corev1client.NodeInterface
	c triggerClient
}

func (n triggerNodes) List(ctx context.Context, opts metav1.ListOptions) (*corev1.NodeList, error) {
	l, err := n.NodeInterface.List(ctx, opts)
	if err == nil {
		for i := range l.Items {
			if l.Items[i].Name == n.c.node {
				n.c.t.health.SyncNode(&l.Items[i])
			}
		}
	}
	return l, err
}

func (n triggerNodes) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := n.NodeInterface.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if node, ok := ev.Object.(*corev1.Node); ok && node.Name == n.c.node {
			if ev.Type == watch.Deleted {
				n.c.t.health.SyncNode(nil)
			} else {
				n.c.t.health.SyncNode(node)
			}
		}
		return ev, true
	}), nil
}

// seeTrigger records the trigger time of a change about to reach the
// processor. As in kube-proxy, trigger times from before the agent started
// are ignored: those changes were programmed by someone else, or long ago.
// A malformed annotation is skipped with a debug line.
func (t *syncTracker) seeTrigger(kind string, annotations map[string]string, families []string) {
	v, ok := annotations[corev1.EndpointsLastChangeTriggerTime]
	if !ok {
		return
	}
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		t.log.WithFields(logrus.Fields{"kind": kind, "value": v}).WithError(err).Debug("ignoring a malformed trigger time")
		return
	}
	if at.Before(t.started.Truncate(time.Second)) || t.agent == nil {
		return
	}
	ps := t.agent.Processor.Stats()
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, fam := range families {
		if fam != string(corev1.IPv4Protocol) && fam != string(corev1.IPv6Protocol) {
			continue // an FQDN slice
		}
		if len(t.triggers) >= maxTriggers {
			t.metrics.droppedTriggers++
			continue
		}
		t.triggers = append(t.triggers, trigger{at: at, family: fam, kind: kind, seen: now,
			events: ps.Events[kind], resyncs: ps.Resyncs})
	}
}
