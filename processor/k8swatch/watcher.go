// Package k8swatch feeds a processor.Processor from the Kubernetes API: it
// runs shared informers for Services, EndpointSlices, this node's Node and
// the cluster's ServiceCIDRs (where the API server has them), and
// optionally for the pods of this node, hands the processor one
// Resync of everything once the caches have synced, and forwards every later
// change as an incremental event.
package k8swatch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/vppsvc/vppsvc/processor"
)

// Options configures a Watcher.
type Options struct {
	// NodeName is this node. It is required unless AllNodes is set: only
	// this node's Node object is watched, and only the pods scheduled to it.
	NodeName string
	// AllNodes watches every Node of the cluster instead of NodeName's
	// only. The processor then marks an endpoint whose IP is any node's
	// InternalIP or ExternalIP as host-network; without it only this
	// node's addresses are known, so a host-network endpoint on another
	// node counts as a pod. That flag matters only to the NAT44 renderer
	// when its hostVRF differs from its podVRF. The price is every Node
	// status update of the cluster at every agent, which kube-proxy never
	// pays: keep it off unless such a deployment serves host-network pods
	// of other nodes.
	AllNodes bool
	// PodInterface, when set, makes the watcher report the pods of this node
	// as local pods. It returns the VPP interface of a pod, or ok=false for a
	// pod the agent has not connected (host-network, not yet wired). When
	// it is nil the embedding CNI reports its pods with UpdateLocalPod, and
	// the watcher's Resyncs keep what it reported.
	PodInterface func(*corev1.Pod) (ifName string, ok bool)
	// NoServiceCIDRs leaves ServiceCIDR objects unwatched: service CIDRs
	// are configured (--service-cluster-ip-range), and the processor would
	// ignore the objects anyway.
	NoServiceCIDRs bool
	// ResyncPeriod is the informers' resync period; 0 disables it. The
	// processor ignores re-delivered objects that did not change.
	ResyncPeriod time.Duration
	// Logger receives warnings about unexpected objects; nil means
	// logrus.StandardLogger().
	Logger logrus.FieldLogger
}

// Watcher connects the informers to a processor.
type Watcher struct {
	client kubernetes.Interface
	p      *processor.Processor
	opts   Options
	log    logrus.FieldLogger

	// mu orders event forwarding against the initial snapshot: events are
	// dropped until the snapshot is taken and the Resync handed over, and
	// forwarded after it. An informer updates its store before notifying
	// handlers, so an event dropped here is already in the snapshot.
	mu     sync.Mutex
	synced bool
	stores map[string]cache.Store
}

// New returns a Watcher that feeds p from client (any kubernetes.Interface,
// including the fake clientset).
func New(client kubernetes.Interface, p *processor.Processor, opts Options) *Watcher {
	log := opts.Logger
	if log == nil {
		log = logrus.StandardLogger()
	}
	return &Watcher{client: client, p: p, opts: opts, log: log}
}

// Run starts the informers, waits for their caches to sync, hands the
// processor one Resync with everything the caches hold, then forwards changes
// until ctx is done. It returns an error if the caches cannot sync (for
// example because ctx ended first) or the options are inconsistent.
func (w *Watcher) Run(ctx context.Context) error {
	if w.opts.PodInterface != nil && w.opts.NodeName == "" {
		return errors.New("k8swatch: Options.NodeName is required to watch local pods")
	}
	if !w.opts.AllNodes && w.opts.NodeName == "" {
		return errors.New("k8swatch: Options.NodeName is required to watch this node's Node (or set AllNodes)")
	}
	factory := informers.NewSharedInformerFactory(w.client, w.opts.ResyncPeriod)
	services := factory.Core().V1().Services()
	slices := factory.Discovery().V1().EndpointSlices()
	nodeFactory := nodeFactory(w.client, w.opts, w.opts.ResyncPeriod)
	nodes := nodeFactory.Core().V1().Nodes()
	if err := nodes.Informer().SetTransform(slimNode); err != nil {
		return fmt.Errorf("k8swatch: node transform: %w", err)
	}
	handlers := []registration{
		{services.Informer(), w.handler(w.updateService, w.p.DeleteService)},
		{slices.Informer(), w.handler(w.updateSlice, w.p.DeleteEndpointSlice)},
		{nodes.Informer(), w.handler(w.updateNode, func(_, name string) { w.p.DeleteNode(name) })},
	}

	var podFactory informers.SharedInformerFactory
	if w.opts.PodInterface != nil {
		// Pods are many; list only this node's.
		podFactory = informers.NewSharedInformerFactoryWithOptions(w.client, w.opts.ResyncPeriod,
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", w.opts.NodeName).String()
			}))
		handlers = append(handlers, registration{podFactory.Core().V1().Pods().Informer(), w.handler(w.updatePod, func(ns, name string) {
			w.p.DeleteLocalPod(processor.PodID{Namespace: ns, Name: name})
		})})
	}
	var listCIDRs func(labels.Selector) ([]*networkingv1.ServiceCIDR, error)
	if !w.opts.NoServiceCIDRs && w.serviceCIDRsServed(ctx) {
		cidrs := factory.Networking().V1().ServiceCIDRs()
		listCIDRs = cidrs.Lister().List
		handlers = append(handlers, registration{cidrs.Informer(), w.handler(w.updateServiceCIDR, func(_, name string) { w.p.DeleteServiceCIDR(name) })})
	}
	w.mu.Lock()
	w.stores = map[string]cache.Store{"services": services.Informer().GetStore(),
		"endpointslices": slices.Informer().GetStore(), "nodes": nodes.Informer().GetStore()}
	if listCIDRs != nil {
		w.stores["servicecidrs"] = factory.Networking().V1().ServiceCIDRs().Informer().GetStore()
	}
	if podFactory != nil {
		w.stores["pods"] = podFactory.Core().V1().Pods().Informer().GetStore()
	}
	w.mu.Unlock()
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.handler); err != nil {
			return fmt.Errorf("k8swatch: adding event handler: %w", err)
		}
	}

	factories := []informers.SharedInformerFactory{factory, nodeFactory}
	if podFactory != nil {
		factories = append(factories, podFactory)
	}
	for _, f := range factories {
		f.Start(ctx.Done())
		defer f.Shutdown()
	}
	for _, f := range factories {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("k8swatch: cache of %v did not sync: %w", typ, context.Cause(ctx))
			}
		}
	}

	w.mu.Lock()
	snap, err := w.snapshot(services.Lister().List, slices.Lister().List, nodes.Lister().List, listCIDRs, podFactory)
	if err != nil {
		w.mu.Unlock()
		return err
	}
	w.p.Resync(snap)
	w.synced = true
	w.mu.Unlock()
	w.log.WithFields(logrus.Fields{"services": len(snap.Services), "endpointslices": len(snap.EndpointSlices),
		"nodes": len(snap.Nodes), "localpods": len(snap.LocalPods), "servicecidrs": len(snap.ServiceCIDRs)}).Info("initial sync done")

	<-ctx.Done()
	return nil
}

// Stores returns the informers' stores by resource ("services",
// "endpointslices", "nodes", "pods", "servicecidrs") once Run has created them, nil before:
// what the watcher keeps in memory, for measurements.
func (w *Watcher) Stores() map[string]cache.Store {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.stores)
}

// snapshot reads everything from the synced listers.
func (w *Watcher) snapshot(
	listServices func(labels.Selector) ([]*corev1.Service, error),
	listSlices func(labels.Selector) ([]*discoveryv1.EndpointSlice, error),
	listNodes func(labels.Selector) ([]*corev1.Node, error),
	listCIDRs func(labels.Selector) ([]*networkingv1.ServiceCIDR, error),
	podFactory informers.SharedInformerFactory,
) (processor.Snapshot, error) {
	var snap processor.Snapshot
	var err error
	if snap.Services, err = listServices(labels.Everything()); err != nil {
		return snap, fmt.Errorf("k8swatch: listing services: %w", err)
	}
	if snap.EndpointSlices, err = listSlices(labels.Everything()); err != nil {
		return snap, fmt.Errorf("k8swatch: listing endpointslices: %w", err)
	}
	if snap.Nodes, err = listNodes(labels.Everything()); err != nil {
		return snap, fmt.Errorf("k8swatch: listing nodes: %w", err)
	}
	if listCIDRs != nil {
		if snap.ServiceCIDRs, err = listCIDRs(labels.Everything()); err != nil {
			return snap, fmt.Errorf("k8swatch: listing servicecidrs: %w", err)
		}
	}
	// Without a pod watch the CNI reports local pods itself (UpdateLocalPod),
	// possibly before this snapshot: keep them.
	snap.KeepLocalPods = podFactory == nil
	if podFactory != nil {
		pods, err := podFactory.Core().V1().Pods().Lister().List(labels.Everything())
		if err != nil {
			return snap, fmt.Errorf("k8swatch: listing pods: %w", err)
		}
		for _, pod := range pods {
			if lp, ok := w.localPod(pod); ok {
				snap.LocalPods = append(snap.LocalPods, lp)
			}
		}
	}
	return snap, nil
}

// registration pairs an informer with the handler that feeds the processor.
type registration struct {
	informer cache.SharedIndexInformer
	handler  cache.ResourceEventHandler
}

// handler adapts typed update and delete functions to informer callbacks.
func (w *Watcher) handler(update func(obj any), del func(namespace, name string)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.forward(func() { update(obj) }) },
		UpdateFunc: func(_, obj any) { w.forward(func() { update(obj) }) },
		DeleteFunc: func(obj any) { w.forward(func() { w.delete(obj, del) }) },
	}
}

// forward runs an event once the initial Resync has been handed over.
func (w *Watcher) forward(event func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.synced {
		event()
	}
}

// delete handles both live objects and the tombstones an informer hands over
// when it missed the final state of a deleted object.
func (w *Watcher) delete(obj any, del func(namespace, name string)) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		w.log.WithError(err).WithField("object", fmt.Sprintf("%T", obj)).Warn("cannot tell which object was deleted; ignored")
		return
	}
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		w.log.WithError(err).WithField("key", key).Warn("malformed key of deleted object; ignored")
		return
	}
	del(ns, name)
}

func (w *Watcher) unexpected(kind string, obj any) {
	w.log.WithFields(logrus.Fields{"kind": kind, "object": fmt.Sprintf("%T", obj)}).Warn("informer delivered an unexpected type; ignored")
}

func (w *Watcher) updateService(obj any) {
	if svc, ok := obj.(*corev1.Service); ok {
		w.p.UpdateService(svc)
	} else {
		w.unexpected("Service", obj)
	}
}

func (w *Watcher) updateSlice(obj any) {
	if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
		w.p.UpdateEndpointSlice(s)
	} else {
		w.unexpected("EndpointSlice", obj)
	}
}

func (w *Watcher) updateNode(obj any) {
	if n, ok := obj.(*corev1.Node); ok {
		w.p.UpdateNode(n)
	} else {
		w.unexpected("Node", obj)
	}
}

// updatePod reports a pod as local, or withdraws it when it no longer
// qualifies (moved off the node, finished, or disconnected by the agent).
func (w *Watcher) updatePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		w.unexpected("Pod", obj)
		return
	}
	if lp, ok := w.localPod(pod); ok {
		w.p.UpdateLocalPod(lp)
	} else {
		w.p.DeleteLocalPod(processor.PodID{Namespace: pod.Namespace, Name: pod.Name})
	}
}
