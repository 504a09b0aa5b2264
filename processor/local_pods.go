package processor

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/model"
)

// PodID identifies a pod by namespace and name.
type PodID struct{ Namespace, Name string }

func (id PodID) String() string { return id.Namespace + "/" + id.Name }

// LocalPod is a pod running on this node, as the CNI agent reports it: its IPs
// and the VPP interface that connects it. Clients in local pods reach services
// through that interface (a frontend), and a local pod that backs a service is
// reached through it (a backend).
type LocalPod struct {
	ID        PodID
	IPs       []netip.Addr
	Interface string
}

// validateLocalPod drops invalid IPs; a pod without name or interface cannot
// be used at all.
func validateLocalPod(pod LocalPod) (LocalPod, []Problem, bool) {
	obj := pod.ID.String()
	var probs []Problem
	if pod.ID.Name == "" {
		probs = append(probs, Problem{Kind: KindLocalPod, Object: obj, Field: "ID.Name", Reason: "pod without name; ignored"})
		return LocalPod{}, probs, false
	}
	if pod.Interface == "" {
		probs = append(probs, Problem{Kind: KindLocalPod, Object: obj, Field: "Interface", Reason: "pod without interface; ignored"})
		return LocalPod{}, probs, false
	}
	ips := make([]netip.Addr, 0, len(pod.IPs))
	for _, ip := range pod.IPs {
		if !ip.IsValid() {
			probs = append(probs, Problem{Kind: KindLocalPod, Object: obj, Field: "IPs[]", Value: ip.String(), Reason: "invalid IP; skipped"})
			continue
		}
		ips = append(ips, ip)
	}
	pod.IPs = model.NewIPAddresses(ips...)
	return pod, probs, true
}

// localPodCache holds the local pods and the reverse index from pod IP that
// tells whether a change of the backend IP set concerns a local pod at all.
type localPodCache struct {
	pods   map[PodID]LocalPod
	ipRefs map[netip.Addr]int
}

func newLocalPodCache() *localPodCache {
	return &localPodCache{pods: map[PodID]LocalPod{}, ipRefs: map[netip.Addr]int{}}
}

func (c *localPodCache) set(pod LocalPod) {
	c.remove(pod.ID)
	c.pods[pod.ID] = pod
	for _, ip := range pod.IPs {
		c.ipRefs[ip]++
	}
}

func (c *localPodCache) remove(id PodID) {
	old, ok := c.pods[id]
	if !ok {
		return
	}
	delete(c.pods, id)
	for _, ip := range old.IPs {
		if c.ipRefs[ip]--; c.ipRefs[ip] == 0 {
			delete(c.ipRefs, ip)
		}
	}
}

// hasIP reports whether ip belongs to a local pod.
func (c *localPodCache) hasIP(ip netip.Addr) bool { return c.ipRefs[ip] > 0 }

// frontendIfs returns every local pod interface plus the configured ones.
func (c *localPodCache) frontendIfs(configured []string) model.Interfaces {
	names := make([]string, 0, len(c.pods)+len(configured))
	names = append(names, configured...)
	for _, p := range c.pods {
		names = append(names, p.Interface)
	}
	return model.NewInterfaces(names...)
}

// backendIfs returns the interfaces of local pods with an IP that backs at
// least one rendered service.
func (c *localPodCache) backendIfs(isBackend func(netip.Addr) bool) model.Interfaces {
	var names []string
	for _, p := range c.pods {
		for _, ip := range p.IPs {
			if isBackend(ip) {
				names = append(names, p.Interface)
				break
			}
		}
	}
	return model.NewInterfaces(names...)
}
