package renderview

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/vppcfgtest"
)

// The document names enums, hides placeholder rules and folds the
// bindings of an interface into one entry, in VPP's order, with the worst
// state of its bindings.
func TestBuildDocument(t *testing.T) {
	shards := renderer.ACLShards{Renderer: "nat44", Count: 2, Family: renderer.IPv4}
	items := []vppcfg.Item{
		&vppcfg.ACLBinding{Interface: "uplink0", Direction: vppcfg.ACLInput, ACL: "vppsvc-permit-all", Priority: 1 << 30},
		&vppcfg.ACLBinding{Interface: "uplink0", Direction: vppcfg.ACLInput, ACL: "nat44-filter-01", Priority: 1000},
		&vppcfg.ACLBinding{Interface: "uplink0", Direction: vppcfg.ACLInput, ACL: "nat44-filter-00", Priority: 1000},
		&vppcfg.ACLBinding{Interface: "tap0", Direction: vppcfg.ACLOutput, ACL: "nat44-filter-00", Priority: 1000},
		shards.ACL(0, nil),
		shards.ACL(1, []vppcfg.ACLRule{{Action: vppcfg.ACLDeny, Src: pf("0.0.0.0/0"), Dst: pf("10.96.0.18/32"),
			Protocol: vppcfg.ProtoTCP, DstPorts: vppcfg.SinglePort(80)}}),
		&vppcfg.NAT44Address{Addr: ip("192.168.16.1"), TwiceNAT: true, VRF: vppcfg.AnyVRF},
		&vppcfg.NAT44Interface{Interface: "uplink0", Role: vppcfg.NAT44Output},
		&vppcfg.CNATTranslation{VIP: ap("[fd00:96::10]:80"), Protocol: vppcfg.ProtoTCP, FlowHash: vppcfg.CNATHashSrcIP | 0x80,
			Paths: []vppcfg.CNATPath{{Src: ap("[2001:db8::1]:0"), Dst: ap("[fd00:1::2]:8080")}, {Dst: ap("[fd00:1::3]:8080")}}},
	}
	status := func(k vppcfg.Key) (ItemStatus, bool) {
		switch {
		case k == vppcfgtest.ACLBindingKey("uplink0", vppcfg.ACLInput, "nat44-filter-01"):
			return ItemStatus{Owners: []string{"nat44"}, State: "pending", Reason: `interface "uplink0" not found`}, true
		case k.Kind == vppcfg.KindACLBinding && k.Name == "uplink0/input/vppsvc-permit-all":
			return ItemStatus{Owners: []string{"ipv6", "nat44"}, State: "applied"}, true
		case k.Kind == vppcfg.KindCNATTranslation:
			return ItemStatus{}, false
		}
		return ItemStatus{Owners: []string{"nat44"}, State: "applied"}, true
	}
	doc := BuildDocument("node-a", items, status)
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	var got struct {
		Node  string `json:"node"`
		Items []struct {
			Key, Kind, State, Reason string
			Owners                   []string
			Config                   map[string]any
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal(data, &got))
	keys := []string{}
	for _, it := range got.Items {
		keys = append(keys, it.Key)
	}
	assert.Equal(t, []string{"nat44-address/twice-nat/192.168.16.1", "nat44-interface/uplink0/output",
		"cnat-translation/[fd00:96::10]:80/tcp", "acl/nat44-filter-00", "acl/nat44-filter-01",
		"acl-bindings/tap0", "acl-bindings/uplink0"}, keys)
	byKey := map[string]int{}
	for i, it := range got.Items {
		byKey[it.Key] = i
	}
	addr := got.Items[byKey["nat44-address/twice-nat/192.168.16.1"]]
	assert.Equal(t, map[string]any{"address": "192.168.16.1", "pool": "twice-nat", "vrf": "any"}, addr.Config)
	assert.Equal(t, "output-feature", got.Items[byKey["nat44-interface/uplink0/output"]].Config["role"])

	cnat := got.Items[byKey["cnat-translation/[fd00:96::10]:80/tcp"]]
	assert.Equal(t, "", cnat.State, "no status known")
	assert.Equal(t, []string{}, cnat.Owners)
	assert.Equal(t, "exclusive", cnat.Config["vipKind"])
	assert.Equal(t, []any{"src-ip", "0x80"}, cnat.Config["flowHash"], "unknown bits stay visible")
	assert.Equal(t, []any{map[string]any{"source": "[2001:db8::1]:0", "destination": "[fd00:1::2]:8080"},
		map[string]any{"destination": "[fd00:1::3]:8080"}}, cnat.Config["paths"])

	ph := got.Items[byKey["acl/nat44-filter-00"]]
	assert.Equal(t, map[string]any{"name": "nat44-filter-00", "tag": "vppsvc:nat44:nat44-filter-00", "rules": []any{}, "placeholder": true}, ph.Config)
	rules := got.Items[byKey["acl/nat44-filter-01"]].Config["rules"]
	assert.Equal(t, []any{map[string]any{"action": "deny", "source": "0.0.0.0/0", "destination": "10.96.0.18/32",
		"protocol": "tcp", "sourcePorts": "any", "destinationPorts": "80"}}, rules)

	up := got.Items[byKey["acl-bindings/uplink0"]]
	assert.Equal(t, "pending", up.State, "the worst state of the interface's bindings")
	assert.Equal(t, `interface "uplink0" not found`, up.Reason)
	assert.Equal(t, []string{"ipv6", "nat44"}, up.Owners)
	assert.Equal(t, map[string]any{"interface": "uplink0", "input": []any{"nat44-filter-00", "nat44-filter-01", "vppsvc-permit-all"},
		"output": []any{}}, up.Config)
	assert.Equal(t, map[string]any{"interface": "tap0", "input": []any{}, "output": []any{"nat44-filter-00"}},
		got.Items[byKey["acl-bindings/tap0"]].Config)
}

// vppcfg recognises the renderers' empty shards by their placeholder rule
// (renderer.ACLShards.Placeholder) without importing the renderers: both
// families' shards must print as placeholders.
func TestBuildDocumentMarksPlaceholderShardsOfBothFamilies(t *testing.T) {
	for _, f := range []renderer.Family{renderer.IPv4, renderer.IPv6} {
		shard := renderer.ACLShards{Renderer: "r", Count: 1, Family: f}.ACL(0, nil)
		doc := BuildDocument("n", []vppcfg.Item{shard}, nil)
		require.Len(t, doc.Items, 1)
		data, err := json.Marshal(doc.Items[0].Config)
		require.NoError(t, err)
		assert.JSONEq(t, `{"name": "`+shard.Name+`", "rules": [], "placeholder": true}`, string(data), "%v", f)
	}
}

func TestBuildDocumentWithoutStatus(t *testing.T) {
	doc := BuildDocument("n", nil, nil)
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	assert.JSONEq(t, `{"node": "n", "items": []}`, string(data))
}

func TestJSONToYAMLKeepsOrder(t *testing.T) {
	out, err := JSONToYAML([]byte(`{"node": "a", "items": [{"key": "k", "owners": ["nat44", "ipv6"], "config": {}, "z": "x: y", "long": ["` +
		"aaaaaaaaaaaaaaaaaaaa\", \"bbbbbbbbbbbbbbbbbbbbbbbbbb\", \"cccccccccccccccccccccc" + `"]}]}`))
	require.NoError(t, err)
	assert.Equal(t, `node: a
items:
  - key: k
    owners: [nat44, ipv6]
    config: {}
    z: 'x: y'
    long:
      - aaaaaaaaaaaaaaaaaaaa
      - bbbbbbbbbbbbbbbbbbbbbbbbbb
      - cccccccccccccccccccccc
`, string(out))
	_, err = JSONToYAML([]byte(`{"a": [`))
	assert.Error(t, err)
	assert.False(t, errors.Is(err, nil))
}
