package controlplane

import (
	"context"
	"net/netip"
	"slices"
	"sync"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/vppsvc/vppsvc/e2e/lab/topology"
)

// loadBalancerAllocator gives every Service of type LoadBalancer one address
// per IP family of the service from the lab's pools and writes it to
// status.loadBalancer.ingress, as MetalLB's controller does. Addresses are
// released when the service goes or stops being a LoadBalancer; an address a
// service already holds is kept across a restart of the lab's control plane.
type loadBalancerAllocator struct {
	client   kubernetes.Interface
	services coreinformers.ServiceInformer
	queue    workqueue.TypedRateLimitingInterface[string]

	mu   sync.Mutex
	used map[netip.Addr]string // address → namespace/name
}

func newLoadBalancerAllocator(client kubernetes.Interface, services coreinformers.ServiceInformer) *loadBalancerAllocator {
	a := &loadBalancerAllocator{
		client: client, services: services, used: map[netip.Addr]string{},
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			a.queue.Add(key)
		}
	}
	_, _ = services.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue,
	})
	return a
}

func (a *loadBalancerAllocator) run(ctx context.Context) {
	go func() { <-ctx.Done(); a.queue.ShutDown() }()
	if !cache.WaitForCacheSync(ctx.Done(), a.services.Informer().HasSynced) {
		return
	}
	for {
		key, quit := a.queue.Get()
		if quit {
			return
		}
		if err := a.sync(ctx, key); err != nil {
			logrus.WithError(err).WithField("service", key).Warn("lab LoadBalancer allocator: retrying")
			a.queue.AddRateLimited(key)
		} else {
			a.queue.Forget(key)
		}
		a.queue.Done(key)
	}
}

func (a *loadBalancerAllocator) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := a.services.Lister().Services(ns).Get(name)
	if err != nil {
		a.release(key)
		return nil
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		a.release(key)
		if len(svc.Status.LoadBalancer.Ingress) == 0 {
			return nil
		}
		upd := svc.DeepCopy()
		upd.Status.LoadBalancer.Ingress = nil
		_, err := a.client.CoreV1().Services(ns).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
		return err
	}
	want := a.assign(key, svc)
	var have []string
	for _, in := range svc.Status.LoadBalancer.Ingress {
		have = append(have, in.IP)
	}
	var wantS []string
	for _, ip := range want {
		wantS = append(wantS, ip.String())
	}
	if slices.Equal(have, wantS) {
		return nil
	}
	upd := svc.DeepCopy()
	upd.Status.LoadBalancer.Ingress = nil
	for _, ip := range wantS {
		upd.Status.LoadBalancer.Ingress = append(upd.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip, IPMode: ptr(corev1.LoadBalancerIPModeVIP)})
	}
	_, err = a.client.CoreV1().Services(ns).UpdateStatus(ctx, upd, metav1.UpdateOptions{})
	return err
}

// assign returns the service's addresses in the order of its IP families,
// keeping those it holds and taking the lowest free one of a missing family.
func (a *loadBalancerAllocator) assign(key string, svc *corev1.Service) []netip.Addr {
	a.mu.Lock()
	defer a.mu.Unlock()
	held := map[bool]netip.Addr{} // is4 → address
	for _, in := range svc.Status.LoadBalancer.Ingress {
		ip, err := netip.ParseAddr(in.IP)
		if err != nil || !(topology.LoadBalancerPoolV4.Contains(ip) || topology.LoadBalancerPoolV6.Contains(ip)) {
			continue
		}
		if owner, taken := a.used[ip]; taken && owner != key {
			continue
		}
		a.used[ip] = key
		held[ip.Is4()] = ip
	}
	var out []netip.Addr
	for _, fam := range svc.Spec.IPFamilies {
		is4 := fam == corev1.IPv4Protocol
		ip, ok := held[is4]
		if !ok {
			pool := topology.LoadBalancerPoolV6
			if is4 {
				pool = topology.LoadBalancerPoolV4
			}
			for n := 10; n < 250; n++ {
				if c := topology.Nth(pool, n); a.used[c] == "" {
					ip, ok = c, true
					a.used[c] = key
					break
				}
			}
		}
		if ok {
			out = append(out, ip)
		}
	}
	return out
}

func (a *loadBalancerAllocator) release(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for ip, owner := range a.used {
		if owner == key {
			delete(a.used, ip)
		}
	}
}

func ptr[T any](v T) *T { return &v }
