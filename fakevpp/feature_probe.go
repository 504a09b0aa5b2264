package fakevpp

import "fmt"

// probeFeatures are VPP core features the fake registers only so that
// FeatureIsEnabled can be asked about them: a driver asks for one it never
// enables to learn whether VPP's answers for the arc are true (see
// featureIsEnabled). Their nodes are not modelled; enabling one records a
// violation.
var probeFeatures = []featureKey{
	{"ip4-unicast", "ip4-source-and-port-range-check-rx"},
	{"ip4-output", "ip4-source-and-port-range-check-tx"},
	{"ip6-unicast", "ip6-flow-classify"},
	{"ip6-output", "ip6-outacl"},
}

func init() {
	var fs []arcFeature
	for _, k := range probeFeatures {
		fs = append(fs, arcFeature{key: k, set: func(v *VPP, sw uint32, on bool) {
			if on {
				v.violate("unmodelled feature", fmt.Sprintf("%s on %s: registered for FeatureIsEnabled only; its node does not run in the fake", k, v.ifName(sw)))
			}
		}})
	}
	registerPlugin(&plugin{name: "feature-probes", order: 3, newState: func(*VPP) any { return struct{}{} }, features: fs})
}
