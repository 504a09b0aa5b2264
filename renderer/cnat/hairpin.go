package cnat

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// HairpinSNAT is the configuration's choice of how a pod that reaches itself
// through a service gets its reply (the renderer's document, "Hairpin"). In
// YAML it is true, false or "hairpin-only".
type HairpinSNAT string

const (
	// HairpinSNATLocalPaths source-NATs every path to an endpoint on this
	// node, except under externalTrafficPolicy Local: cnat decides source NAT
	// per path, so every client of a local endpoint is source-NATed.
	HairpinSNATLocalPaths HairpinSNAT = "true"
	// HairpinSNATOff source-NATs no path for hairpin: client addresses are
	// kept, and a pod reaching itself through a service gets no reply.
	HairpinSNATOff HairpinSNAT = "false"
	// HairpinSNATOnly source-NATs exactly the flows of a pod that reaches
	// itself: cnat-input and cnat-output of the family on every frontend interface
	// but the uplinks, with cnat's K8S policy, whose rule "src == dst" sees
	// the packet after cnat-input rewrote the frontend to the endpoint
	// (dataplane case cnat/k8s-policy-hairpin). Its price: cnat-input
	// rewrites before the input ACL, so the filter rules of
	// loadBalancerSourceRanges no longer see those clients.
	HairpinSNATOnly HairpinSNAT = "hairpin-only"
)

// UnmarshalJSON accepts a boolean (the field's original form) or a mode name.
func (h *HairpinSNAT) UnmarshalJSON(b []byte) error {
	var on bool
	if err := json.Unmarshal(b, &on); err == nil {
		*h = HairpinSNATOff
		if on {
			*h = HairpinSNATLocalPaths
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("hairpinSNAT: want true, false or %q, got %s", HairpinSNATOnly, b)
	}
	*h = HairpinSNAT(s)
	return nil
}

// MarshalJSON writes true and false as booleans, other modes as strings.
func (h HairpinSNAT) MarshalJSON() ([]byte, error) {
	switch h {
	case HairpinSNATLocalPaths:
		return []byte("true"), nil
	case HairpinSNATOff:
		return []byte("false"), nil
	}
	return json.Marshal(string(h))
}

// internalFrontendIfs are the frontend interfaces of clients inside the
// node (pods, the host): every frontend interface but the uplinks. None
// while no uplink is among the frontends, so that a misspelt uplink name
// cannot turn external clients into pods.
func internalFrontendIfs(node Node, cfg *Config) []string {
	isUplink := func(ifName string) bool { return slices.Contains(cfg.UplinkInterfaces, ifName) }
	if !slices.ContainsFunc(node.FrontendIfs, isUplink) {
		return nil
	}
	var out []string
	for _, ifName := range node.FrontendIfs {
		if !isUplink(ifName) {
			out = append(out, ifName)
		}
	}
	return out
}

// HairpinOnlyItems are the node-wide items of HairpinSNATOnly: cnat's K8S
// SNAT policy with SNATAddress as its address of family f (the VPP layer
// merges it with the other family's renderer's half: vppcfg.CNATSnatConfig),
// and on each internal frontend interface the POD-table entry and both
// feature nodes of the family. cnat-input rewrites a frontend to the endpoint its
// translation picks, without source NAT (it ignores path sources);
// cnat-output then source-NATs the packets whose source and destination are
// equal and turns every reply back into one from the frontend. Nothing in
// any other mode.
func HairpinOnlyItems(f Family, node Node, cfg *Config) []vppcfg.Item {
	if cfg.HairpinSNAT != HairpinSNATOnly {
		return nil
	}
	ifs := internalFrontendIfs(node, cfg)
	if len(ifs) == 0 {
		return nil
	}
	items := []vppcfg.Item{snatConfig(f, cfg.SNATAddress)}
	for _, ifName := range ifs {
		items = append(items,
			&vppcfg.CNATSnatInterface{Interface: ifName, Table: vppcfg.CNATSnatPod},
			&vppcfg.InterfaceFeature{Interface: ifName, Arc: f.inputArc(), Feature: f.InputFeature()},
			&vppcfg.InterfaceFeature{Interface: ifName, Arc: f.outputArc(), Feature: f.OutputFeature()})
	}
	return items
}

// snatConfig is the family's part of cnat's global SNAT settings: the K8S
// policy with addr as the family's address. The VPP layer merges it with
// the other family's renderer's part (vppcfg.CNATSnatConfig).
func snatConfig(f Family, addr netip.Addr) *vppcfg.CNATSnatConfig {
	if f.is6() {
		return &vppcfg.CNATSnatConfig{Part: vppcfg.CNATSnatIPv6, SnatIP6: addr, Policy: vppcfg.CNATSnatPolicyK8s}
	}
	return &vppcfg.CNATSnatConfig{Part: vppcfg.CNATSnatIPv4, SnatIP4: addr, Policy: vppcfg.CNATSnatPolicyK8s}
}
