package govppdriver

import (
	"context"
	"fmt"
	"sort"

	"go.fd.io/govpp/binapi/feature"
	"go.fd.io/govpp/binapi/interface_types"

	"github.com/vppsvc/vppsvc/vppcfg"
)

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

// dumpFeatures adds every probed feature enabled on an interface to st.
// Cost: per interface, one request per probed feature and one per arc.
func (d *Driver) dumpFeatures(ctx context.Context, st *vppcfg.State) error {
	names := make([]string, 0, len(st.Interfaces))
	for n := range st.Interfaces {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		sw := interface_types.InterfaceIndex(st.Interfaces[name])
		isEnabled := func(arc, feat string) (bool, error) {
			reply := &feature.FeatureIsEnabledReply{}
			if err := d.invoke(ctx, &feature.FeatureIsEnabled{SwIfIndex: sw, ArcName: arc, FeatureName: feat}, reply); err != nil {
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
				st.Objects = append(st.Objects, vppcfg.Observed{Item: &vppcfg.InterfaceFeature{Interface: name, Arc: f.Arc, Feature: f.Feature}})
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
