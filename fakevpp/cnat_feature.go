package fakevpp

// cnat's feature-arc nodes, the third way packets meet cnat besides
// cnat-snat and the VIP path (cnat_path.go): cnat-input-ip4/ip6 on the
// ingress interface's unicast arc, before the input ACL and NAT44-ED (VPP:
// runs_before acl-plugin-in-ip4-fa), and cnat-output-ip4/ip6 on the egress
// interface's output arc, after the output ACL. Both are off until
// FeatureEnableDisable turns them on per interface. They share the engine,
// its translations and session table, but key their sessions at their own
// locations (internal/cnat/feature_path.go).

const cnatFeaturePlugin = "cnat-feature"

var (
	cnatInputKeys  = [2]featureKey{{"ip4-unicast", "cnat-input-ip4"}, {"ip6-unicast", "cnat-input-ip6"}}
	cnatOutputKeys = [2]featureKey{{"ip4-output", "cnat-output-ip4"}, {"ip6-output", "cnat-output-ip6"}}
)

func init() {
	off := func(*VPP, uint32, bool) {} // the nodes ask the feature counts
	registerPlugin(&plugin{
		name:     cnatFeaturePlugin,
		order:    51,
		newState: func(*VPP) any { return struct{}{} },
		features: []arcFeature{
			{key: cnatInputKeys[0], set: off}, {key: cnatInputKeys[1], set: off},
			{key: cnatOutputKeys[0], set: off}, {key: cnatOutputKeys[1], set: off},
		},
		input:  []node{{name: "cnat-input", order: orderCnatInput, run: cnatInputFeatureNode}},
		output: []node{{name: "cnat-output", order: orderCnatOutput, run: cnatOutputFeatureNode}},
	})
}

// featureOn tells whether the feature of the packet's family is enabled on
// ifc.
func (c *pktCtx) featureOn(keys [2]featureKey, ifc *iface) bool {
	if ifc == nil {
		return false
	}
	k := keys[0]
	if c.pkt.dst.Addr().Is6() {
		k = keys[1]
	}
	return c.v.features().count[featureBinding{k, ifc.index}] > 0
}

func cnatInputFeatureNode(c *pktCtx) {
	if !c.featureOn(cnatInputKeys, c.rx) {
		return
	}
	defer c.v.cnatViolations()
	applyCnat(c, "cnat-input-"+c.family(), c.v.cnat().InputFeature(cnatFlow(c.pkt), c.v.clock()))
}

func cnatOutputFeatureNode(c *pktCtx) {
	if !c.featureOn(cnatOutputKeys, c.tx) {
		return
	}
	defer c.v.cnatViolations()
	applyCnat(c, "cnat-output-"+c.family(), c.v.cnat().OutputFeature(cnatFlow(c.pkt), c.rx.index, c.tx.index, c.v.clock()))
}
