package main

import (
	"net/netip"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/simnode"
	"github.com/vppsvc/vppsvc/fakevpp"
)

// localPodInterface is the standalone agent's answer to the question only a
// CNI can really answer: which VPP interface connects this pod?
//
// An agent embedded in a VPP-based CNI calls Processor.UpdateLocalPod with
// the interface it created for the pod, or passes its own
// k8swatch.Options.PodInterface. The standalone `vppsvc run --local-pods`
// assumes the naming of the simulated node, simnode.PodInterfaceName
// ("tap-<namespace>-<name>", cut to 63 bytes); a deployment whose CNI names
// interfaces otherwise must leave --local-pods off (pods are then not
// frontends or backends of their own: service traffic from and to them is
// still translated on the uplink and host interfaces, but hairpin and
// pod-to-service traffic entering through their taps is not). Host-network
// pods have no interface of their own.
//
// With a fake VPP the agent also plays the CNI: it creates the tap (and a
// host route to each pod IP) the first time a pod is reported, and keeps it
// after the pod is gone, as the fake has no CNI to clean up.
func localPodInterface(fake *fakevpp.VPP, log logrus.FieldLogger) func(*corev1.Pod) (string, bool) {
	return func(pod *corev1.Pod) (string, bool) {
		if pod.Spec.HostNetwork {
			return "", false
		}
		name := simnode.PodInterfaceName(pod.Namespace, pod.Name)
		if fake == nil {
			return name, true
		}
		if _, ok := fake.InterfaceIndex(name); !ok {
			// Unnumbered to host0, as a CNI makes a pod interface: VPP
			// drops what arrives on an interface with IP disabled.
			fake.AddInterface(name)
			fake.SetUnnumbered(name, simnode.HostInterface)
			log.WithFields(logrus.Fields{"pod": pod.Namespace + "/" + pod.Name, "interface": name}).Debug("fake VPP: pod interface created")
		}
		addrs := []string{pod.Status.PodIP}
		for _, s := range pod.Status.PodIPs {
			addrs = append(addrs, s.IP)
		}
		for _, s := range addrs {
			if ip, err := netip.ParseAddr(s); err == nil {
				ip = ip.Unmap()
				fake.AddRoute(netip.PrefixFrom(ip, ip.BitLen()), name)
			}
		}
		return name, true
	}
}
