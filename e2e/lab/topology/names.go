package topology

import "fmt"

// Names of the Linux objects the lab creates. Every one starts with the
// lab's prefix, and links are at most 15 bytes (IFNAMSIZ-1).
type Names struct{ Prefix string }

// DefaultPrefix is the prefix of everything the lab creates.
const DefaultPrefix = "vsl"

// Bridge is the Linux bridge of the uplink segment (root namespace, no IP).
func (n Names) Bridge() string { return n.Prefix + "-br" }

// ExternalNS is the external client's namespace; ExternalLink its bridge port.
func (n Names) ExternalNS() string   { return n.Prefix + "-ext" }
func (n Names) ExternalLink() string { return n.Prefix + "-ext" }

// Uplink is node i's uplink veth end VPP attaches to; UplinkPort the peer on
// the bridge.
func (n Names) Uplink(i int) string     { return fmt.Sprintf("%s%d-up", n.Prefix, i) }
func (n Names) UplinkPort(i int) string { return fmt.Sprintf("%s%d-upb", n.Prefix, i) }

// HostNS is node i's own kernel ("the node"); HostLink the veth end VPP
// attaches to as host0 (the other end is eth0 inside HostNS).
func (n Names) HostNS(i int) string   { return fmt.Sprintf("%s%d-host", n.Prefix, i) }
func (n Names) HostLink(i int) string { return fmt.Sprintf("%s%d-h", n.Prefix, i) }

// PodNS is the namespace of the pod in slot k of node i; PodLink the veth
// end VPP attaches to (eth0 inside PodNS).
func (n Names) PodNS(i, k int) string   { return fmt.Sprintf("%s%d-p%d", n.Prefix, i, k) }
func (n Names) PodLink(i, k int) string { return fmt.Sprintf("%s%dp%d", n.Prefix, i, k) }

// PodInterface is the VPP name of a pod's interface, as the embedding API
// is told (processor.LocalPod.Interface): readable, unique per
// namespace/name, within VPP's 63-byte limit.
func PodInterface(namespace, name string) string {
	s := "tap-" + namespace + "-" + name
	if len(s) > 63 {
		s = s[:63]
	}
	return s
}

// VPP interface names every lab node has, as vppsvc's agent is told.
// PodsInterface is every pod's L3 interface: the BVI of the pods' bridge
// domain PodBridge, of which each pod's own interface is an L2 member
// (docs/lab.md, the embedding contract).
const (
	UplinkInterface = "uplink0"
	HostInterface   = "host0"
	PodsInterface   = "pods0"
	PodBridge       = 10
)
