package fakevpp

import (
	"fmt"
	"sort"
	"strings"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/feature"
)

// arcFeature is a graph node a plugin offers on a feature arc (cnat-snat-ip4 on
// ip4-unicast, for example). It is off until FeatureEnableDisable turns it on
// for an interface; VPP has no plugin message for that. The node itself runs
// from the plugin's input or output list and asks its own state whether it is
// on, so set only has to tell the plugin.
type arcFeature struct {
	key featureKey
	set func(v *VPP, sw uint32, on bool)
}

// featureKey names a feature as FeatureEnableDisable does: arc and node.
type featureKey struct{ arc, name string }

func (k featureKey) String() string { return k.arc + "/" + k.name }

const featurePlugin = "feature"

// featureState counts how often each feature was enabled on each interface.
// A count, not a flag: vnet_config_add_feature (vnet/config.c) appends the
// node to the interface's feature list without looking for it, so a second
// enable makes VPP run it twice per packet, and one disable removes one copy.
type featureState struct {
	count map[featureBinding]int
	// arcLen is, per arc, the length of VPP's per-interface config vector
	// (config_index_by_sw_if_index): one more than the highest interface
	// index FeatureEnableDisable named on the arc, enable or disable. It
	// never shrinks. FeatureIsEnabled lies for an interface beyond it
	// (see featureIsEnabled).
	arcLen map[string]uint32
}

type featureBinding struct {
	featureKey
	sw uint32
}

func init() {
	registerPlugin(&plugin{
		name:             featurePlugin,
		order:            2,
		newState:         func(*VPP) any { return &featureState{count: map[featureBinding]int{}, arcLen: map[string]uint32{}} },
		handlers:         handlers(handle(featureEnableDisable), handle(featureIsEnabled)),
		interfaceDeleted: featureInterfaceDeleted,
	})
}

var featuresSlot = stateOf[featureState](featurePlugin)

func (v *VPP) features() *featureState { return featuresSlot.of(v) }

// lookupFeature finds a modelled feature; for any other arc/feature pair it
// records a violation, since the fake cannot tell a feature VPP has but the
// fake does not model from one VPP does not know.
func (v *VPP) lookupFeature(msg, arc, name string, sw uint32) (arcFeature, bool) {
	key := featureKey{arc, name}
	f, ok := pipeline().features[key]
	if !ok {
		v.violate("unmodelled feature", fmt.Sprintf("%s %s on %s: the fake models only %s and answers as VPP does for an arc/feature pair it has not registered",
			msg, key, v.ifName(sw), modelledFeatures()))
	}
	return f, ok
}

func modelledFeatures() string {
	var names []string
	for k := range pipeline().features {
		names = append(names, k.String())
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// resolveFeature is what both feature handlers do first: validate the
// interface (INVALID_SW_IF_INDEX), then find the arc/feature registration
// (INVALID_VALUE, see lookupFeature).
func (v *VPP) resolveFeature(msg string, sw uint32, arc, name string) (arcFeature, api.VPPApiError) {
	if v.iface(sw) == nil {
		return arcFeature{}, api.INVALID_SW_IF_INDEX
	}
	if f, ok := v.lookupFeature(msg, arc, name, sw); ok {
		return f, 0
	}
	return arcFeature{}, api.INVALID_VALUE
}

// featureEnableDisable is vl_api_feature_enable_disable_t_handler
// (vnet/feature/feature_api.c): -2 for an unknown interface, -7 for an
// arc/feature pair without registration, anything else 0 — disabling a
// feature that is not enabled included.
func featureEnableDisable(c *call, req *feature.FeatureEnableDisable) []api.Message {
	v := c.v
	sw := uint32(req.SwIfIndex)
	f, rv := v.resolveFeature("FeatureEnableDisable", sw, req.ArcName, req.FeatureName)
	if rv != 0 {
		return c.reply(&feature.FeatureEnableDisableReply{Retval: int32(rv)})
	}
	s := v.features()
	s.arcLen[f.key.arc] = max(s.arcLen[f.key.arc], sw+1) // vec_validate, even for a disable
	b := featureBinding{f.key, sw}
	n := s.count[b]
	switch {
	case req.Enable && n > 0:
		v.violate("feature enabled twice", fmt.Sprintf("%s on %s: VPP adds the node to the interface's feature list again and runs it %d times per packet; the fake runs it once",
			f.key, v.ifName(sw), n+1))
		s.count[b]++
	case req.Enable:
		s.count[b] = 1
		f.set(v, sw, true)
	case n > 1:
		s.count[b]--
	case n == 1:
		delete(s.count, b)
		f.set(v, sw, false)
	}
	return c.reply(&feature.FeatureEnableDisableReply{})
}

// featureIsEnabled is vl_api_feature_is_enabled_t_handler: -2 for an unknown
// interface, otherwise 0 with the state (false for a pair VPP does not know).
//
// VPP 25.10 answers IsEnabled true, retval 0, for any feature of an arc whose
// per-interface config vector does not reach the interface (no feature was
// ever enabled or disabled on the arc for an interface index this high):
// vnet_feature_is_enabled returns VNET_API_ERROR_INVALID_SW_IF_INDEX (-2)
// there, which the handler stores in a bool. The unicast arcs never lie:
// VPP enables ip4-not-enabled and ip6-not-enabled there on every interface
// it creates. The fake lies the same way on other arcs, counting only
// FeatureEnableDisable (VPP's ip4-output vector also grows with NAT44-ED's
// output role and ACL output bindings, which the fake does not count, so
// the fake may lie where VPP would not). A real VPP showed it: a fresh
// interface reported cnat-output-ip4 enabled on ip4-output
// (dataplane case interfaces/feature-is-enabled).
func featureIsEnabled(c *call, req *feature.FeatureIsEnabled) []api.Message {
	v := c.v
	sw := uint32(req.SwIfIndex)
	f, rv := v.resolveFeature("FeatureIsEnabled", sw, req.ArcName, req.FeatureName)
	switch rv {
	case api.INVALID_SW_IF_INDEX:
		return c.reply(&feature.FeatureIsEnabledReply{Retval: int32(rv)})
	case api.INVALID_VALUE:
		return c.reply(&feature.FeatureIsEnabledReply{})
	}
	s := v.features()
	if unicast := f.key.arc == "ip4-unicast" || f.key.arc == "ip6-unicast"; !unicast && sw >= s.arcLen[f.key.arc] {
		return c.reply(&feature.FeatureIsEnabledReply{IsEnabled: true})
	}
	return c.reply(&feature.FeatureIsEnabledReply{IsEnabled: s.count[featureBinding{f.key, sw}] > 0})
}

// featureInterfaceDeleted is vnet_feature_add_del_sw_interface: a deleted
// interface loses every enabled feature, so an interface that later reuses
// its index starts with none.
func featureInterfaceDeleted(v *VPP, ifc *iface) {
	s := v.features()
	for b := range s.count {
		if b.sw == ifc.index {
			delete(s.count, b)
			pipeline().features[b.featureKey].set(v, b.sw, false)
		}
	}
}
