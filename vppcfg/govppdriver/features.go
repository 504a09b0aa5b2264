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

// dumpFeatures adds every probed feature enabled on an interface to st.
// Cost: one request per interface and probed feature.
func (d *Driver) dumpFeatures(ctx context.Context, st *vppcfg.State) error {
	names := make([]string, 0, len(st.Interfaces))
	for n := range st.Interfaces {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, f := range probedFeatures {
			reply := &feature.FeatureIsEnabledReply{}
			req := &feature.FeatureIsEnabled{SwIfIndex: interface_types.InterfaceIndex(st.Interfaces[name]), ArcName: f.Arc, FeatureName: f.Feature}
			if err := d.invoke(ctx, req, reply); err != nil {
				return fmt.Errorf("feature %s %s on %s: %w", f.Arc, f.Feature, name, err)
			}
			if reply.IsEnabled {
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
