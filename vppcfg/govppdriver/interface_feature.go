package govppdriver

import (
	"fmt"
	"sort"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/feature"
	"go.fd.io/govpp/binapi/interface_types"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

func init() {
	register(&kindDriver{
		kind: vppcfg.KindInterfaceFeature,
		// feature_is_enabled, which only the dump sends, is not required
		// (VPP 25.10 has it); a VPP without it fails the dump.
		messages: []api.Message{&feature.FeatureEnableDisable{}},
		ops: forItem(func(op *driverapi.Op, f *vppcfg.InterfaceFeature, _ *driverapi.OpResult) []*call {
			return featureCalls(adds(op), f, op.SwIfIndex)
		}),
		dump: dumpFeatures,
		// The probed features are cnat's: without the plugin VPP does not
		// know them, and features are not observed.
		dumpNeeds: capCNAT,
	})
}

// probedFeatures are the graph features vppsvc's renderers enable. VPP has
// no dump of an interface's features but answers feature_is_enabled for one
// arc/feature pair, so Dump asks for each of these on each interface: an
// agent that restarts then finds them in place and re-asserts nothing (a
// re-assert is a disable and an enable, between which packets would skip
// the feature). A feature outside this list is not observed: the layer
// re-asserts it after every (re)connect, as it did for all of them before.
var probedFeatures = []vppcfg.InterfaceFeature{
	{Arc: "ip4-unicast", Feature: "cnat-input-ip4"},
	{Arc: "ip4-output", Feature: "cnat-output-ip4"},
	{Arc: "ip4-unicast", Feature: "cnat-snat-ip4"},
	{Arc: "ip6-unicast", Feature: "cnat-snat-ip6"},
	{Arc: "ip6-unicast", Feature: "cnat-input-ip6"},
	{Arc: "ip6-output", Feature: "cnat-output-ip6"},
}

// arcCanaries are VPP core features of each probed arc that vppsvc never
// enables. VPP 25.10's feature_is_enabled answers true for every feature of
// an arc whose per-interface config vector does not reach the interface
// (vnet_feature_is_enabled returns VNET_API_ERROR_INVALID_SW_IF_INDEX, which
// the handler stores in a bool): a fresh interface reports cnat-output-ip4
// enabled. A canary that answers true shows the lie; nothing can be enabled
// on the arc of that interface then, since any enable grows the vector.
var arcCanaries = map[string]string{
	"ip4-unicast": "ip4-source-and-port-range-check-rx",
	"ip4-output":  "ip4-source-and-port-range-check-tx",
	"ip6-unicast": "ip6-flow-classify",
	"ip6-output":  "ip6-outacl",
}

// dumpFeatures adds every probed feature enabled on an interface to the
// dump. Cost: per interface, one request per probed feature and one per arc.
func dumpFeatures(r *dumpRun) error {
	names := make([]string, 0, len(r.st.Interfaces))
	for n := range r.st.Interfaces {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		sw := interface_types.InterfaceIndex(r.st.Interfaces[name])
		isEnabled := func(arc, feat string) (bool, error) {
			reply := &feature.FeatureIsEnabledReply{}
			if err := r.d.invoke(r.ctx, &feature.FeatureIsEnabled{SwIfIndex: sw, ArcName: arc, FeatureName: feat}, reply); err != nil {
				return false, fmt.Errorf("feature %s %s on %s: %w", arc, feat, name, err)
			}
			return reply.IsEnabled, nil
		}
		lies := map[string]bool{}
		for arc, canary := range arcCanaries {
			v, err := isEnabled(arc, canary)
			if err != nil {
				return err
			}
			lies[arc] = v
		}
		for _, f := range probedFeatures {
			if lies[f.Arc] {
				continue
			}
			on, err := isEnabled(f.Arc, f.Feature)
			if err != nil {
				return err
			}
			if on {
				r.add(&vppcfg.InterfaceFeature{Interface: name, Arc: f.Arc, Feature: f.Feature}, "", 0)
			}
		}
	}
	return nil
}

// isProbed tells whether Dump reads f back.
func isProbed(f *vppcfg.InterfaceFeature) bool {
	for _, p := range probedFeatures {
		if p.Arc == f.Arc && p.Feature == f.Feature {
			return true
		}
	}
	return false
}

// featureCalls enables or disables a feature. VPP counts enables (a second
// one runs the node twice per packet). A probed feature (probedFeatures) is
// read back by Dump, so the layer creates it only when VPP does not hold
// it: one enable. Any other feature cannot be read back and is re-asserted
// after a reconnect, so its enable is sent as disable + enable, "enabled
// once" whatever VPP held. (That pair is not atomic: a disable that fails
// while the enable succeeds leaves a second copy, which is why the features
// vppsvc uses are probed.) Disabling a feature that is off is accepted by VPP.
func featureCalls(enable bool, f *vppcfg.InterfaceFeature, swIfIndex uint32) []*call {
	if !enable || isProbed(f) {
		return []*call{enableDisableFeature(enable, f, swIfIndex)}
	}
	return []*call{enableDisableFeature(false, f, swIfIndex), enableDisableFeature(true, f, swIfIndex)}
}

// enableDisableFeature switches a graph feature on an interface's arc.
func enableDisableFeature(enable bool, f *vppcfg.InterfaceFeature, swIfIndex uint32) *call {
	what := "disable feature"
	if enable {
		what = "enable feature"
	}
	return &call{
		req: &feature.FeatureEnableDisable{SwIfIndex: interface_types.InterfaceIndex(swIfIndex), Enable: enable,
			ArcName: f.Arc, FeatureName: f.Feature},
		reply: &feature.FeatureEnableDisableReply{},
		check: accept(fmt.Sprintf("%s %s %s on %s", what, f.Arc, f.Feature, f.Interface)),
	}
}
