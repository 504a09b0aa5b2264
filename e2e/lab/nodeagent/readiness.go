package nodeagent

import (
	"context"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vppsvc/vppsvc/e2e/lab/host"
	"github.com/vppsvc/vppsvc/e2e/lab/netexec"
)

// readiness is the kubelet's readiness prober for the lab's pods: each pod
// whose first container has a readinessProbe is probed every periodSeconds
// from inside its namespace, and is ready after successThreshold successes
// in a row and unready after failureThreshold failures in a row, starting
// unready, as the kubelet's prober does. HTTP GET (a status 200–399 is a
// success) and TCP socket probes are run; other kinds are not, and count
// as success (logged once per pod).
type readiness struct {
	mu    sync.Mutex
	state map[types.UID]*probeState
}

// probeState is one pod's readiness and its current run of results.
type probeState struct {
	ready            bool
	successes, fails int
	next             time.Time // when the probe is due
	warned           bool
}

func newReadiness() *readiness { return &readiness{state: map[types.UID]*probeState{}} }

// readinessProbe is the probe of the pod's first container, nil without.
func readinessProbe(pod *corev1.Pod) *corev1.Probe {
	if len(pod.Spec.Containers) == 0 {
		return nil
	}
	return pod.Spec.Containers[0].ReadinessProbe
}

// probePeriod is how long until the pod is probed again (periodSeconds,
// Kubernetes' default 10 s).
func probePeriod(p *corev1.Probe) time.Duration {
	if p.PeriodSeconds > 0 {
		return time.Duration(p.PeriodSeconds) * time.Second
	}
	return 10 * time.Second
}

// run probes, every tick until ctx ends, each wired pod whose probe is
// due, and re-syncs a pod whose readiness changed, so that its status is
// written (sync reads current, it does not probe).
func (r *readiness) run(ctx context.Context, c *podController) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.mu.Lock()
		wired := make(map[string]*podState, len(c.wired))
		for k, st := range c.wired {
			wired[k] = st
		}
		c.mu.Unlock()
		for key, st := range wired {
			obj, exists, err := c.lister.GetByKey(key)
			if err != nil || !exists {
				continue
			}
			pod := obj.(*corev1.Pod)
			if pod.UID != st.uid || pod.DeletionTimestamp != nil || readinessProbe(pod) == nil {
				continue
			}
			ns := c.n.opts.Names.PodNS(c.n.opts.Node.Index, st.slot)
			if changed := r.probeIfDue(ctx, c, pod, ns); changed {
				c.queue.Add(key)
			}
		}
	}
}

// current is the pod's readiness as last probed: true without a probe,
// false before the probe first succeeded.
func (r *readiness) current(pod *corev1.Pod) bool {
	if readinessProbe(pod) == nil {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state[pod.UID]
	return st != nil && st.ready
}

// probeIfDue runs the pod's probe inside ns when its period has passed
// (initialDelaySeconds after the first look) and reports whether its
// readiness changed.
func (r *readiness) probeIfDue(ctx context.Context, c *podController, pod *corev1.Pod, ns string) bool {
	p := readinessProbe(pod)
	now := time.Now()
	r.mu.Lock()
	st := r.state[pod.UID]
	if st == nil {
		st = &probeState{next: now.Add(time.Duration(p.InitialDelaySeconds) * time.Second)}
		r.state[pod.UID] = st
	}
	due := !now.Before(st.next)
	r.mu.Unlock()
	if !due {
		return false
	}
	ok, supported := runProbe(ctx, pod, p, ns)
	r.mu.Lock()
	defer r.mu.Unlock()
	st.next = time.Now().Add(probePeriod(p))
	if !supported && !st.warned {
		st.warned = true
		c.n.log.WithField("pod", pod.Namespace+"/"+pod.Name).Warn("readinessProbe of a kind the lab's kubelet does not run (only httpGet and tcpSocket): taken as succeeding")
	}
	changed := st.record(ok, p)
	if changed {
		c.n.log.WithFields(map[string]any{"pod": pod.Namespace + "/" + pod.Name, "ready": st.ready}).Info("readiness probe: readiness changed")
	}
	return changed
}

// record counts one result of p and reports whether readiness changed:
// successThreshold successes in a row make the pod ready,
// failureThreshold failures in a row (default 3) unready.
func (st *probeState) record(ok bool, p *corev1.Probe) bool {
	was := st.ready
	if ok {
		st.successes, st.fails = st.successes+1, 0
		if st.successes >= threshold(p.SuccessThreshold) {
			st.ready = true
		}
	} else {
		st.successes, st.fails = 0, st.fails+1
		if st.fails >= threshold(p.FailureThreshold, 3) {
			st.ready = false
		}
	}
	return st.ready != was
}

// forget drops the state of a pod that is gone.
func (r *readiness) forget(uid types.UID) {
	r.mu.Lock()
	delete(r.state, uid)
	r.mu.Unlock()
}

// threshold is v, or def (1 when not given) when v is not set.
func threshold(v int32, def ...int32) int {
	if v > 0 {
		return int(v)
	}
	if len(def) > 0 {
		return int(def[0])
	}
	return 1
}

// runProbe runs p once from inside ns against the pod's loopback, where
// its container listens as on its IPs. It reports the result and whether
// the probe's kind is one the lab runs.
func runProbe(ctx context.Context, pod *corev1.Pod, p *corev1.Probe, ns string) (ok, supported bool) {
	timeout := time.Second
	if p.TimeoutSeconds > 0 {
		timeout = time.Duration(p.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return host.DialContext(ctx, ns, network, addr)
	}
	switch {
	case p.HTTPGet != nil:
		port, found := probePort(pod, p.HTTPGet.Port)
		if !found {
			return false, true
		}
		path := p.HTTPGet.Path
		if path == "" || path[0] != '/' {
			path = "/" + path
		}
		status, err := netexec.Status(ctx, dial, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), path)
		return err == nil && status >= 200 && status < 400, true
	case p.TCPSocket != nil:
		port, found := probePort(pod, p.TCPSocket.Port)
		if !found {
			return false, true
		}
		conn, err := dial(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return false, true
		}
		conn.Close()
		return true, true
	}
	return true, false
}

// probePort resolves a probe's port: a number, or the name of one of the
// first container's ports.
func probePort(pod *corev1.Pod, port intstr.IntOrString) (int, bool) {
	if port.Type == intstr.Int {
		return port.IntValue(), port.IntValue() > 0 && port.IntValue() < 65536
	}
	for _, cp := range pod.Spec.Containers[0].Ports {
		if cp.Name == port.StrVal {
			return int(cp.ContainerPort), true
		}
	}
	return 0, false
}
