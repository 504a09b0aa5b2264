package nodeagent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
	"github.com/vppsvc/vppsvc/e2e/lab/vppnode"
	"github.com/vppsvc/vppsvc/processor"
)

// podController is the node's kubelet for the lab's pods: it wires each pod
// bound to the node, runs its container, reports its status, and tears it
// down at the end of its grace period.
type podController struct {
	n       *nodeAgent
	factory informers.SharedInformerFactory
	lister  cache.Indexer
	queue   workqueue.TypedRateLimitingInterface[string]

	mu    sync.Mutex
	wired map[string]*podState // namespace/name → state

	ready *readiness // readinessProbe results (readiness.go)
}

// podState is what the agent knows of a pod it wired.
type podState struct {
	uid   types.UID
	slot  int
	ips   []netip.Addr
	iface string // VPP's name of the pod's interface
}

func newPodController(n *nodeAgent) *podController {
	f := informers.NewSharedInformerFactoryWithOptions(n.k8s, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", n.opts.Node.Name).String()
		}))
	inf := f.Core().V1().Pods().Informer()
	c := &podController{n: n, factory: f, lister: inf.GetIndexer(), wired: map[string]*podState{}, ready: newReadiness(),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 5*time.Second))}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue})
	return c
}

// adoptExisting wires (adopts) every pod the node already runs, once,
// before vppsvc starts: a restarted agent then reports its local pods to
// vppsvc before vppsvc's first resync, which therefore finds VPP's
// configuration as it should be and changes nothing. Reporting them after
// it made vppsvc first remove the pods' ACL bindings, then put them back.
func (c *podController) adoptExisting(ctx context.Context) {
	c.factory.Start(ctx.Done())
	c.factory.WaitForCacheSync(ctx.Done())
	for _, key := range c.lister.ListKeys() {
		c.queue.Add(key) // errors are retried by run
		if err := c.sync(ctx, key); err == nil {
			c.queue.Forget(key)
		}
	}
}

func (c *podController) run(ctx context.Context) {
	go func() { <-ctx.Done(); c.queue.ShutDown() }()
	go c.ready.run(ctx, c)
	for {
		key, quit := c.queue.Get()
		if quit {
			return
		}
		err := c.sync(ctx, key)
		if err != nil && ctx.Err() == nil {
			c.n.log.WithError(err).WithField("pod", key).Warn("pod not ready yet; retrying")
			c.queue.AddRateLimited(key)
		} else {
			c.queue.Forget(key)
		}
		c.queue.Done(key)
	}
}

func (c *podController) sync(ctx context.Context, key string) error {
	obj, exists, err := c.lister.GetByKey(key)
	if err != nil {
		return err
	}
	if !exists {
		return c.teardown(ctx, key)
	}
	pod := obj.(*corev1.Pod)
	if pod.Spec.HostNetwork {
		return nil // the node's own namespace: nothing to wire
	}
	if pod.DeletionTimestamp != nil {
		if wait := time.Until(pod.DeletionTimestamp.Time); wait > 0 {
			// Still in its grace period: it keeps serving (a terminating
			// endpoint), as a container that ignores SIGTERM does.
			c.queue.AddAfter(key, wait)
			return nil
		}
		if err := c.teardown(ctx, key); err != nil {
			return err
		}
		err := c.n.k8s.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr(int64(0)), Preconditions: &metav1.Preconditions{UID: &pod.UID}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	st, err := c.wire(ctx, pod)
	if err != nil {
		return err
	}
	return c.reportRunning(ctx, pod, st)
}

// slotOf keeps a pod's slot (its IPs) across agent restarts: from its
// status once written, else the lowest free one.
func (c *podController) slotOf(pod *corev1.Pod) (int, error) {
	key := pod.Namespace + "/" + pod.Name
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.wired[key]; st != nil && st.uid == pod.UID {
		return st.slot, nil
	}
	for _, s := range pod.Status.PodIPs {
		if ip, err := netip.ParseAddr(s.IP); err == nil {
			if k := c.n.opts.Node.PodSlot(ip); k > 0 {
				return k, nil
			}
		}
	}
	used := map[int]bool{}
	for _, st := range c.wired {
		used[st.slot] = true
	}
	for _, o := range c.lister.List() {
		p := o.(*corev1.Pod)
		for _, s := range p.Status.PodIPs {
			if ip, err := netip.ParseAddr(s.IP); err == nil {
				used[c.n.opts.Node.PodSlot(ip)] = true
			}
		}
	}
	for k := 1; k <= topology.MaxPodsPerNode; k++ {
		if !used[k] {
			return k, nil
		}
	}
	return 0, fmt.Errorf("no free pod slot on %s", c.n.opts.Node.Name)
}

// wire builds (or adopts) the pod's namespace, its VPP interface, routes and
// neighbours on both sides, and starts its container unless it runs.
func (c *podController) wire(ctx context.Context, pod *corev1.Pod) (*podState, error) {
	k, err := c.slotOf(pod)
	if err != nil {
		return nil, err
	}
	i, names, node := c.n.opts.Node.Index, c.n.opts.Names, c.n.opts.Node
	st := &podState{uid: pod.UID, slot: k, ips: node.PodIPs(k), iface: topology.PodInterface(pod.Namespace, pod.Name)}
	key := pod.Namespace + "/" + pod.Name
	c.mu.Lock()
	c.wired[key] = st
	c.mu.Unlock()
	wire := func() error { return c.wireInterfaces(ctx, st) }
	if c.n.kernel {
		wire = func() error { return c.wireKernelPod(st) }
	}
	if err := wire(); err != nil {
		return st, err
	}
	ns := names.PodNS(i, k)
	if err := c.startContainer(ctx, pod, ns); err != nil {
		return st, err
	}
	return st, nil
}

// wireInterfaces is the network part of wire; after a VPP restart it runs
// again for every pod (rewireAll).
func (c *podController) wireInterfaces(ctx context.Context, st *podState) error {
	i, names, lx, vc := c.n.opts.Node.Index, c.n.opts.Names, c.n.linux, c.n.client()
	ns, link := names.PodNS(i, st.slot), names.PodLink(i, st.slot)
	if err := lx.AddNamespace(ns); err != nil {
		return err
	}
	if err := lx.AddVeth(link, ns, "eth0"); err != nil {
		return err
	}
	podMAC, err := lx.MAC(ns, "eth0")
	if err != nil {
		return err
	}
	// The pod's interface is an L2 member of the pods' bridge; its L3
	// interface is the bridge's BVI, pods0, shared by every pod, whose MAC
	// is stable (podsMAC), so the pod's static gateway neighbour stays
	// right across VPP restarts.
	if _, err := vc.EnsureAfPacket(ctx, vppnode.AfPacket{HostIf: link, Name: st.iface, IO: c.n.opts.IO}); err != nil {
		return err
	}
	if err := vc.AddBridgeMember(ctx, topology.PodBridge, st.iface, podMAC); err != nil {
		return err
	}
	for _, ip := range st.ips {
		// The route first: a static neighbour on an unnumbered interface
		// makes VPP add an attached /32 (or /128) of its own, which has no
		// connected cover and stays unresolved; once that entry exists the
		// route looks present (same prefix, interface and next hop) and would
		// not be added.
		if err := vc.AddRoute(ctx, vppnode.Route{Dst: netipPrefix(ip, ip.BitLen()), Via: ip, Dev: topology.PodsInterface}); err != nil {
			return err
		}
		if err := vc.AddNeighbour(ctx, topology.PodsInterface, ip, podMAC); err != nil {
			return err
		}
		if err := lx.AddAddress(ns, "eth0", netipPrefix(ip, ip.BitLen())); err != nil {
			return err
		}
	}
	for _, gw := range []netip.Addr{topology.PodGatewayV4, topology.PodGatewayV6} {
		if err := lx.AddNeighbour(ns, "eth0", gw, podsMAC); err != nil {
			return err
		}
	}
	routes := []host.Route{
		{Dst: netipPrefix(topology.PodGatewayV4, 32), Dev: "eth0"},
		{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: topology.PodGatewayV4, Dev: "eth0", OnLink: true},
		{Dst: netip.MustParsePrefix("::/0"), Via: topology.PodGatewayV6, Dev: "eth0"},
	}
	for _, r := range routes {
		if err := lx.AddRoute(ns, r); err != nil {
			return err
		}
	}
	return nil
}

// rewireAll re-creates every wired pod's interfaces (after a VPP restart).
func (c *podController) rewireAll(ctx context.Context) error {
	c.mu.Lock()
	all := make([]*podState, 0, len(c.wired))
	for _, st := range c.wired {
		all = append(all, st)
	}
	c.mu.Unlock()
	for _, st := range all {
		if err := c.wireInterfaces(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// containerArgs are the netexec arguments of the pod's first container: its
// args (agnhost's "netexec --http-port=…"), or flags made from its
// containerPorts (first TCP port serves HTTP, first UDP port UDP).
func containerArgs(pod *corev1.Pod) []string {
	if len(pod.Spec.Containers) == 0 {
		return []string{"netexec"}
	}
	ctr := pod.Spec.Containers[0]
	if len(ctr.Args) > 0 {
		return append([]string(nil), ctr.Args...)
	}
	args := []string{"netexec"}
	var tcp, udp bool
	for _, p := range ctr.Ports {
		switch {
		case (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) && !tcp:
			args, tcp = append(args, "--http-port="+strconv.Itoa(int(p.ContainerPort))), true
		case p.Protocol == corev1.ProtocolUDP && !udp:
			args, udp = append(args, "--udp-port="+strconv.Itoa(int(p.ContainerPort))), true
		}
	}
	return args
}

// httpPort is where the agent checks that the container serves.
func httpPort(args []string) int {
	o, err := netexec.ParseArgs(args)
	if err != nil || o.HTTPPort == 0 {
		return netexec.DefaultHTTPPort
	}
	return o.HTTPPort
}

// pidFile records the pid of the container of the pod with uid.
func (c *podController) pidFile(uid types.UID) string {
	return filepath.Join(Dir(c.n.opts.StateDir, c.n.opts.Node.Name), "pods", string(uid)+".pid")
}

// startContainer runs the pod's netexec in its namespace unless the process
// recorded for this pod still runs (an agent restart adopts it), and waits
// until it serves.
func (c *podController) startContainer(ctx context.Context, pod *corev1.Pod, ns string) error {
	args := containerArgs(pod)
	pidFile := c.pidFile(pod.UID)
	if !alive(pidFile) {
		if err := os.MkdirAll(filepath.Dir(pidFile), 0o755); err != nil {
			return err
		}
		logf, err := os.OpenFile(strings.TrimSuffix(pidFile, ".pid")+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		cmd := host.Command(ns, c.n.opts.Executable, append(args, "--hostname="+pod.Name)...)
		cmd.Env = append(os.Environ(), ContainerEnv+"=netexec", netexec.HostnameEnv+"="+pod.Name)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			logf.Close()
			return fmt.Errorf("starting the container: %w", err)
		}
		logf.Close()
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
			return err
		}
		go func() { _ = cmd.Wait() }() // reap it when it ends
		c.n.log.WithFields(logrus.Fields{"pod": pod.Namespace + "/" + pod.Name, "namespace": ns, "pid": cmd.Process.Pid}).Info("container started")
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return host.DialContext(ctx, ns, network, addr)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort(args)))
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Serving, not ready: readiness is the readinessProbe's to say
		// (readiness.go), and an unready container must not hold up its
		// pod's status.
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		status, err := netexec.Status(rctx, dial, addr, "/healthz")
		cancel()
		if err == nil && status == http.StatusOK {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("container not serving on %s: %v", addr, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// alive tells whether the process recorded in pidFile runs.
func alive(pidFile string) bool {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil
}

// reportRunning writes the pod's status as a kubelet does once its
// container serves (Ready as its readinessProbe last said, readiness.go),
// and tells vppsvc about the pod (the embedding API).
func (c *podController) reportRunning(ctx context.Context, pod *corev1.Pod, st *podState) error {
	ready := c.ready.current(pod)
	want := pod.DeepCopy()
	s := &want.Status
	s.Phase = corev1.PodRunning
	s.PodIP = st.ips[0].String()
	s.PodIPs = nil
	for _, ip := range st.ips {
		s.PodIPs = append(s.PodIPs, corev1.PodIP{IP: ip.String()})
	}
	nodeIPs := c.n.opts.Node.IPs()
	s.HostIP = nodeIPs[0].String()
	s.HostIPs = nil
	for _, ip := range nodeIPs {
		s.HostIPs = append(s.HostIPs, corev1.HostIP{IP: ip.String()})
	}
	if s.StartTime == nil {
		now := metav1.Now()
		s.StartTime = &now
	}
	setCondition(s, corev1.PodScheduled, true)
	setCondition(s, corev1.PodInitialized, true)
	setCondition(s, corev1.ContainersReady, ready)
	setCondition(s, corev1.PodReady, ready)
	if len(pod.Spec.Containers) > 0 && len(s.ContainerStatuses) == 0 {
		ctr := pod.Spec.Containers[0]
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: ctr.Name, Image: ctr.Image, Started: ptr(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: *s.StartTime}}}}
	}
	if len(s.ContainerStatuses) > 0 {
		s.ContainerStatuses[0].Ready = ready
	}
	if !statusEqual(pod.Status, want.Status) {
		if _, err := c.n.k8s.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, want, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if c.n.svc != nil {
		c.n.svc.Processor.UpdateLocalPod(processor.LocalPod{
			ID: processor.PodID{Namespace: pod.Namespace, Name: pod.Name}, IPs: st.ips, Interface: topology.PodsInterface})
	}
	return nil
}

func setCondition(s *corev1.PodStatus, t corev1.PodConditionType, isTrue bool) {
	status := corev1.ConditionFalse
	if isTrue {
		status = corev1.ConditionTrue
	}
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			if s.Conditions[i].Status != status {
				s.Conditions[i].Status = status
				s.Conditions[i].LastTransitionTime = metav1.Now()
			}
			return
		}
	}
	s.Conditions = append(s.Conditions, corev1.PodCondition{Type: t, Status: status, LastTransitionTime: metav1.Now()})
}

func statusEqual(a, b corev1.PodStatus) bool {
	if a.Phase != b.Phase || a.PodIP != b.PodIP || len(a.PodIPs) != len(b.PodIPs) || len(a.Conditions) != len(b.Conditions) || len(a.ContainerStatuses) != len(b.ContainerStatuses) {
		return false
	}
	for i := range a.Conditions {
		if a.Conditions[i].Type != b.Conditions[i].Type || a.Conditions[i].Status != b.Conditions[i].Status {
			return false
		}
	}
	return slices.Equal(a.PodIPs, b.PodIPs)
}

// teardown ends a pod the agent wired: its container, vppsvc's knowledge of
// it, its VPP interface and routes, and its namespace.
func (c *podController) teardown(ctx context.Context, key string) error {
	c.mu.Lock()
	st := c.wired[key]
	c.mu.Unlock()
	if st == nil {
		return nil
	}
	ns, name, _ := strings.Cut(key, "/")
	if c.n.svc != nil {
		c.n.svc.Processor.DeleteLocalPod(processor.PodID{Namespace: ns, Name: name})
	}
	pidFile := c.pidFile(st.uid)
	if b, err := os.ReadFile(pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 && alive(pidFile) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if !c.n.kernel {
		vc := c.n.client()
		for _, ip := range st.ips {
			if err := vc.DelRoute(ctx, vppnode.Route{Dst: netipPrefix(ip, ip.BitLen()), Via: ip, Dev: topology.PodsInterface}); err != nil {
				return err
			}
			if err := vc.DelNeighbour(ctx, topology.PodsInterface, ip); err != nil {
				return err
			}
		}
		if err := vc.DelBridgeMember(ctx, topology.PodBridge, st.iface); err != nil {
			return err
		}
		if err := vc.DeleteInterface(ctx, st.iface); err != nil {
			return err
		}
	}
	// A kernel node's veth goes with the pod's namespace.
	i := c.n.opts.Node.Index
	if err := c.n.linux.DelNamespace(c.n.opts.Names.PodNS(i, st.slot)); err != nil {
		return err
	}
	_ = os.Remove(pidFile)
	c.ready.forget(st.uid)
	c.mu.Lock()
	delete(c.wired, key)
	c.mu.Unlock()
	c.n.log.WithField("pod", key).Info("pod torn down")
	return nil
}

func netipPrefix(ip netip.Addr, bits int) netip.Prefix { return netip.PrefixFrom(ip, bits) }

func ptr[T any](v T) *T { return &v }
