package processor

import "net/netip"

// LocalPodInterfaces returns, per local pod IP, the VPP interface that
// connects the pod: what an inspector needs to tell which service's local
// backends wait for an interface. A copy, taken under the processor's lock.
func (p *Processor) LocalPodInterfaces() map[netip.Addr]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[netip.Addr]string, len(p.pods.ipRefs))
	for _, pod := range p.pods.pods {
		for _, ip := range pod.IPs {
			out[ip] = pod.Interface
		}
	}
	return out
}
