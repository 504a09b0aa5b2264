package k8swatch

import (
	"net/netip"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/processor"
)

// localPod turns a pod into a LocalPod when it runs on this node, has not
// finished (a finished pod's IP may already belong to a new pod) and the agent
// knows its interface.
func (w *Watcher) localPod(pod *corev1.Pod) (processor.LocalPod, bool) {
	if pod.Spec.NodeName != w.opts.NodeName {
		return processor.LocalPod{}, false // the fake clientset ignores field selectors
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return processor.LocalPod{}, false
	}
	ifName, ok := w.opts.PodInterface(pod)
	if !ok {
		return processor.LocalPod{}, false
	}
	lp := processor.LocalPod{ID: processor.PodID{Namespace: pod.Namespace, Name: pod.Name}, Interface: ifName}
	addrs := make([]string, 0, len(pod.Status.PodIPs))
	for _, a := range pod.Status.PodIPs {
		addrs = append(addrs, a.IP)
	}
	if len(addrs) == 0 && pod.Status.PodIP != "" {
		addrs = append(addrs, pod.Status.PodIP) // written before dual-stack
	}
	for _, a := range addrs {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			w.log.WithFields(logrus.Fields{"pod": lp.ID.String(), "field": "status.podIPs[].ip", "value": a}).Warn("skipping invalid pod IP")
			continue
		}
		lp.IPs = append(lp.IPs, ip.Unmap())
	}
	return lp, true
}
