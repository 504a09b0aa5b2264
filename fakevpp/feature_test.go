package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/feature"
)

// FeatureEnableDisable as feature_api.c answers it: the interface first
// (-2), then the arc/feature registration (-7 for one the fake does not
// model, with a violation); enables are counted as VPP's feature list counts
// them, and a disable of a disabled feature is 0.
func TestFeatureEnableDisable(t *testing.T) {
	e := newCnatEnv(t)
	const arc, name = "ip4-unicast", "cnat-snat-ip4"
	_, err := e.feat.FeatureEnableDisable(e.ctx, &feature.FeatureEnableDisable{SwIfIndex: 99, Enable: true, ArcName: arc, FeatureName: "no-such-feature"})
	e.expect(api.INVALID_SW_IF_INDEX, err)
	_, err = e.feat.FeatureIsEnabled(e.ctx, &feature.FeatureIsEnabled{SwIfIndex: 99, ArcName: arc, FeatureName: name})
	e.expect(api.INVALID_SW_IF_INDEX, err)

	e.expect(api.INVALID_VALUE, e.setFeature("tap0", arc, "acl-plugin-in-ip4-fa", true))
	assert.True(t, hasViolation(e.v, "unmodelled feature"))
	// cnat-snat-ip4 is registered on ip4-unicast only.
	e.expect(api.INVALID_VALUE, e.setFeature("tap0", "ip6-unicast", name, true))

	e.ok(e.setFeature("tap0", arc, name, false))
	assert.False(t, e.featureOn("tap0", arc, name))
	e.ok(e.setFeature("tap0", arc, name, true))
	assert.True(t, e.featureOn("tap0", arc, name))
	assert.False(t, e.featureOn("eth0", arc, name))
	assert.False(t, hasViolation(e.v, "feature enabled twice"))
	e.ok(e.setFeature("tap0", arc, name, true))
	assert.True(t, hasViolation(e.v, "feature enabled twice"))
	e.ok(e.setFeature("tap0", arc, name, false))
	assert.True(t, e.featureOn("tap0", arc, name), "one disable removes one of the two copies")
	e.ok(e.setFeature("tap0", arc, name, false))
	assert.False(t, e.featureOn("tap0", arc, name))
	require.Equal(t, 8, e.v.Calls()["feature_enable_disable"])
}

// FeatureIsEnabled lies as VPP 25.10 does: on an arc whose config vector does
// not reach the interface (nothing was ever enabled or disabled there for an
// index this high), every feature answers true; the unicast arcs, which VPP
// covers on every interface, answer truly.
func TestFeatureIsEnabledLiesOnAFreshArc(t *testing.T) {
	e := newCnatEnv(t)
	assert.True(t, e.featureOn("tap0", "ip4-output", "cnat-output-ip4"), "a fresh ip4-output arc")
	assert.True(t, e.featureOn("tap0", "ip4-output", "ip4-source-and-port-range-check-tx"), "the canary too")
	assert.False(t, e.featureOn("tap0", "ip4-unicast", "cnat-input-ip4"), "the unicast arc answers truly")

	e.ok(e.setFeature("tap0", "ip4-output", "cnat-output-ip4", true))
	assert.True(t, e.featureOn("tap0", "ip4-output", "cnat-output-ip4"))
	assert.False(t, e.featureOn("tap0", "ip4-output", "ip4-source-and-port-range-check-tx"), "the vector reaches tap0 now")
	assert.False(t, e.featureOn("eth0", "ip4-output", "cnat-output-ip4"), "and every lower index")
	e.ok(e.setFeature("tap0", "ip4-output", "cnat-output-ip4", false))
	assert.False(t, e.featureOn("tap0", "ip4-output", "cnat-output-ip4"), "the vector never shrinks")

	e.ok(e.setFeature("tap0", "ip4-output", "ip4-source-and-port-range-check-tx", true))
	assert.True(t, hasViolation(e.v, "unmodelled feature"), "the canary's node is not modelled")
}
