package vppcfg

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// oneOfEachKind is a valid item of every kind, in kind order.
func oneOfEachKind() []Item {
	return []Item{
		&NAT44Global{},
		&NAT44Address{Addr: addr("1.1.1.1"), VRF: AnyVRF},
		&NAT44Interface{Interface: "tap0", Role: NAT44Inside},
		static("10.96.0.11:80", "10.1.1.1:80"),
		&NAT44IdentityMapping{Addr: addr("10.96.0.12"), Port: 22, Protocol: ProtoTCP, Label: "ssh"},
		lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80"),
		&CNATSnatConfig{SnatIP4: addr("1.1.1.1"), Policy: CNATSnatPolicyK8s},
		&CNATSnatInterface{Interface: "tap0", Table: CNATSnatPod},
		&InterfaceFeature{Interface: "tap0", Arc: "ip6-unicast", Feature: "cnat-snat-ip6"},
		cnat("10.96.0.20:80", CNATLBDefault, "10.1.1.1:8080"),
		&ACL{Name: "x", Rules: []ACLRule{{Action: ACLPermit, Src: pfx("0.0.0.0/0"), Dst: pfx("0.0.0.0/0")}}},
		&ACLBinding{Interface: "tap0", Direction: ACLInput, ACL: "x"},
		&DropRoute{Prefix: pfx("10.96.0.0/16")},
	}
}

func TestDescriptorsCoverEveryKind(t *testing.T) {
	items := oneOfEachKind()
	require.Len(t, items, int(kindLimit)-1, "a sample item per kind")
	names := map[string]Kind{}
	for i, it := range items {
		k := Kind(i + 1)
		d := core.Describe(k)
		require.NotSame(t, core.Unknown, d, "kind %d has no descriptor (its file registers another Kind?)", k)
		assert.Equal(t, k, d.Kind)
		assert.NotEmpty(t, d.Name, "kind %d", k)
		if other, dup := names[d.Name]; dup {
			t.Errorf("kinds %d and %d share the name %q", other, k, d.Name)
		}
		names[d.Name] = k
		assert.Equal(t, k, it.Key().Kind, "%T", it)
		assert.Same(t, d, core.Of(it), "%T names its own kind", it)
		assert.NoError(t, core.Validate(it))
		assert.NotEmpty(t, cliCommands(it), "%T", it)
		assert.True(t, core.EqualApplied(it, it), "%T", it)
	}
	assert.Equal(t, "kind-99", Kind(99).String())
	assert.Equal(t, "kind-0", Kind(0).String())
}

func TestValidateRejectsWhatCommitRejects(t *testing.T) {
	assert.ErrorIs(t, core.Validate(nil), ErrInvalid)
	assert.ErrorIs(t, core.Validate(struct{ Item }{&ACL{Name: "x"}}), ErrInvalid, "a type of another package")
	assert.ErrorContains(t, core.Validate(lb("10.96.0.10:80")), "nat44-lb-mapping/10.96.0.10:80/tcp: Locals")
}

func TestExternalKeySharedByMappingKinds(t *testing.T) {
	lbm := lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")
	st := static("10.96.0.10:80", "10.1.1.1:80")
	id := &NAT44IdentityMapping{Addr: addr("10.96.0.10"), Port: 80, Protocol: ProtoTCP, VRF: 3}
	addrOnlyStatic := &NAT44StaticMapping{External: ap("10.96.0.10:0"), Local: ap("10.1.1.1:0"), AddrOnly: true}
	addrOnlyID := &NAT44IdentityMapping{Addr: addr("10.96.0.10"), AddrOnly: true}
	for _, pair := range [][2]Item{{lbm, st}, {lbm, id}, {addrOnlyStatic, addrOnlyID}} {
		a, okA := ExternalKey(pair[0])
		b, okB := ExternalKey(pair[1])
		assert.True(t, okA && okB)
		assert.Equal(t, a, b, "%s and %s", pair[0], pair[1])
	}
	a, _ := ExternalKey(st)
	b, _ := ExternalKey(addrOnlyStatic)
	assert.NotEqual(t, a, b, "an address-only mapping has its own external key")
	for _, it := range oneOfEachKind() {
		ext, ok := ExternalKey(it)
		extK, okK := core.ExternalKeyOf(it.Key(), it)
		assert.Equal(t, ext, extK, "%T: with and without its key", it)
		assert.Equal(t, ok, okK)
		assert.Equal(t, ok, core.Describe(it.Key().Kind).Gate == KindNAT44Global && it.Key().Kind >= KindNAT44StaticMapping, "%T", it)
	}
	_, ok := ExternalKey(nil)
	assert.False(t, ok)
}

func TestValidateSet(t *testing.T) {
	inside := &NAT44Interface{Interface: "tap0", Role: NAT44Inside}
	output := &NAT44Interface{Interface: "tap0", Role: NAT44Output}
	idIn := func(vrf uint32) *NAT44IdentityMapping {
		return &NAT44IdentityMapping{Addr: addr("10.96.0.10"), Port: 80, Protocol: ProtoTCP, VRF: vrf}
	}
	tests := []struct {
		name  string
		owner string
		items []Item
		err   error
		msg   string
	}{
		{"one of each kind", "r", oneOfEachKind(), nil, ""},
		{"output feature and inside", "r", []Item{inside, output}, ErrConflict, "output-feature"},
		{"static and LB on one external key", "r",
			[]Item{static("10.96.0.10:80", "10.1.1.1:80"), lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")}, ErrConflict, "same external 10.96.0.10:80/tcp"},
		{"identity mappings in two VRFs", "r", []Item{idIn(1), idIn(2)}, nil, ""},
		{"identity and LB mapping", "r", []Item{idIn(1), lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")}, ErrConflict, "same external"},
		{"a key put twice: the last counts", "r", []Item{lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.3:80"),
			static("10.96.0.11:80", "10.1.1.1:80"), lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")}, nil, ""},
		{"an invalid put, even when put again", "r", []Item{lb("10.96.0.10:80"), lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")}, ErrInvalid, "Locals"},
		{"invalid item", "r", []Item{&ACL{}}, ErrInvalid, "Name"},
		{"nil item", "r", []Item{nil}, ErrInvalid, "nil"},
		{"owner name with a colon", "a:b", []Item{&NAT44Global{}}, ErrInvalid, "owner"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := core.ValidateSet(tt.owner, tt.items)
			if tt.err == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.err)
			assert.ErrorContains(t, err, tt.msg)
		})
	}
}

func TestCLICommandsOfEveryKind(t *testing.T) {
	want := []string{
		"nat44 plugin enable inside-vrf 0 outside-vrf 0",
		"nat44 add address 1.1.1.1",
		"set interface nat44 in tap0",
		"nat44 add static mapping tcp local 10.1.1.1 80 external 10.96.0.11 80 vrf 0 out2in-only  # api: tag for svc",
		"nat44 add identity mapping 10.96.0.12 tcp 22 vrf 0",
		"nat44 add load-balancing static mapping protocol tcp external 10.96.0.10:80 local 10.1.1.1:80 vrf 0 probability 10 local 10.1.1.2:80 vrf 0 probability 10 out2in-only  # api: tag for svc",
		"set cnat snat-policy addr 1.1.1.1",
		"set cnat snat-policy k8s",
		"set cnat snat-policy if table k8s tap0",
		"set interface feature tap0 cnat-snat-ip6 arc ip6-unicast",
		"cnat translation add proto tcp vip 10.96.0.20 80 to ->10.1.1.1 8080",
		"set acl-plugin acl permit src 0.0.0.0/0 dst 0.0.0.0/0 tag x",
		"# no CLI equivalent: acl binding tap0 input x priority 0",
		"ip route add 10.96.0.0/16 table 0 via drop  # api: path preference 0x76 marks it as vppsvc's",
	}
	var got []string
	for _, it := range oneOfEachKind() {
		got = append(got, cliCommands(it)...)
	}
	assert.Equal(t, want, got)
	assert.Nil(t, cliCommands(nil))
}

// The render document's config of each kind (docs/cli.md, "The render JSON
// contract"): field names are part of the contract. The owner completes
// the tag; an ACL binding has no form of its own (the document folds an
// interface's bindings).
func TestPrintableOfEveryKind(t *testing.T) {
	want := []string{
		`{"insideVRF":"0","outsideVRF":"0","forwarding":false,"timeouts":{}}`,
		`{"address":"1.1.1.1","pool":"normal","vrf":"any"}`,
		`{"interface":"tap0","role":"inside"}`,
		`{"protocol":"tcp","external":"10.96.0.11:80","local":"10.1.1.1:80","vrf":"0","out2inOnly":true,"twiceNAT":"no-twice-nat","label":"svc","tag":"vppsvc:nat44:svc"}`,
		`{"protocol":"tcp","address":"10.96.0.12","port":22,"vrf":"0","label":"ssh","tag":"vppsvc:nat44:ssh"}`,
		`{"protocol":"tcp","external":"10.96.0.10:80","locals":[{"address":"10.1.1.1:80","probability":10,"vrf":"0"},{"address":"10.1.1.2:80","probability":10,"vrf":"0"}],"out2inOnly":true,"twiceNAT":"no-twice-nat","label":"svc","tag":"vppsvc:nat44:svc"}`,
		`{"snatIPv4":"1.1.1.1","policy":"k8s","excludePrefixes":[]}`,
		`{"interface":"tap0","table":"pod"}`,
		`{"interface":"tap0","arc":"ip6-unicast","feature":"cnat-snat-ip6"}`,
		`{"protocol":"tcp","vip":"10.96.0.20:80","vipKind":"exclusive","loadBalancing":"default","allocPort":false,"paths":[{"destination":"10.1.1.1:8080"}]}`,
		`{"name":"x","tag":"vppsvc:nat44:x","rules":[{"action":"permit","source":"0.0.0.0/0","destination":"0.0.0.0/0","protocol":"any"}]}`,
		`"acl binding tap0 input x priority 0"`,
		`{"prefix":"10.96.0.0/16","table":0}`,
	}
	var got []string
	for _, it := range oneOfEachKind() {
		data, err := json.Marshal(printableOf(it, "nat44"))
		require.NoError(t, err)
		got = append(got, string(data))
	}
	assert.Equal(t, want, got)
	assert.Nil(t, printableOf(nil, "nat44"))

	data, err := json.Marshal(printableOf(static("10.96.0.11:80", "10.1.1.1:80"), ""))
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"tag"`, "no owner, no tag")
}

// An empty filter shard holds the renderers' placeholder rule (permit TCP
// from and to the unspecified address): the document says so instead of
// listing a rule that matches nothing.
func TestPrintableMarksPlaceholderACLs(t *testing.T) {
	for _, none := range []netip.Addr{netip.IPv4Unspecified(), netip.IPv6Unspecified()} {
		p := netip.PrefixFrom(none, none.BitLen())
		rule := ACLRule{Action: ACLPermit, Src: p, Dst: p, Protocol: ProtoTCP, SrcPorts: AnyPort, DstPorts: AnyPort}
		got := printableOf(&ACL{Name: "f-00", Rules: []ACLRule{rule}}, "nat44").(printableACL)
		assert.True(t, got.Placeholder, "%s", none)
		assert.Empty(t, got.Rules)
		assert.False(t, printableOf(&ACL{Name: "f-00", Rules: []ACLRule{rule, rule}}, "").(printableACL).Placeholder, "two rules")
		rule.Protocol = ProtoUDP
		assert.False(t, printableOf(&ACL{Name: "f-00", Rules: []ACLRule{rule}}, "").(printableACL).Placeholder, "another rule")
	}
}

// The kinds that implement a service frontend say which, where they send
// and how; the others implement none.
func TestFrontendTranslationOfEveryKind(t *testing.T) {
	want := map[Kind]frontendTranslation{
		KindNAT44StaticMapping: {Frontend: ap("10.96.0.11:80"), Protocol: ProtoTCP, Backends: []netip.AddrPort{ap("10.1.1.1:80")},
			Name: "static-mapping", Flags: []string{"out2in-only"}},
		KindNAT44LBMapping: {Frontend: ap("10.96.0.10:80"), Protocol: ProtoTCP, Backends: []netip.AddrPort{ap("10.1.1.1:80"), ap("10.1.1.2:80")},
			Name: "lb-mapping", Flags: []string{"out2in-only"}},
		KindCNATTranslation: {Frontend: ap("10.96.0.20:80"), Protocol: ProtoTCP, Backends: []netip.AddrPort{ap("10.1.1.1:8080")},
			Name: "cnat-translation", Flags: []string{"exclusive"}},
	}
	for _, it := range oneOfEachKind() {
		got, ok := translationOf(it)
		w, implements := want[it.Key().Kind]
		assert.Equal(t, implements, ok, "%T", it)
		assert.Equal(t, w, got, "%T", it)
	}
	_, ok := translationOf(nil)
	assert.False(t, ok)

	lbm := lb("10.96.0.10:80", "10.1.1.1:80", "10.1.1.2:80")
	lbm.TwiceNAT, lbm.Affinity = TwiceNATSelf, 30
	got, _ := translationOf(lbm)
	assert.Equal(t, []string{"self-twice-nat", "out2in-only", "affinity 30s"}, got.Flags)
	ct := &CNATTranslation{VIP: ap("10.96.0.20:80"), Protocol: ProtoTCP, IsRealIP: true, LBType: CNATLBMaglev,
		Paths: []CNATPath{{Src: ap("192.168.16.1:0"), Dst: ap("10.1.1.1:8080")}, {Src: ap("0.0.0.0:0"), Dst: ap("10.1.1.2:8080")}}}
	got, _ = translationOf(ct)
	assert.Equal(t, []string{"interposed", "maglev", "snat 1/2"}, got.Flags)
}

// TestSharedSetting: cnat translations of one VIP address share its
// real-IP flag whatever their ports; other kinds share nothing.
func TestSharedSetting(t *testing.T) {
	tr := func(vip string, real bool) *CNATTranslation {
		return &CNATTranslation{VIP: ap(vip), Protocol: ProtoTCP, IsRealIP: real}
	}
	g1, v1, ok1 := core.SharedSetting(tr("10.96.0.1:80", false))
	g2, v2, ok2 := core.SharedSetting(tr("10.96.0.1:443", true))
	g3, _, _ := core.SharedSetting(tr("10.96.0.2:80", false))
	require.True(t, ok1 && ok2)
	assert.Equal(t, g1, g2, "one group per address, whatever the port")
	assert.NotEqual(t, v1, v2)
	assert.NotEqual(t, g1, g3)
	_, _, ok := core.SharedSetting(lb("10.96.0.1:80", "10.1.1.1:80", "10.1.1.2:80"))
	assert.False(t, ok)
	_, _, ok = core.SharedSetting(nil)
	assert.False(t, ok)
}

// TestCoreConstantsAgree: the values vppcfg documents and its internal
// package (vppcfg/internal/core) applies are the same.
func TestCoreConstantsAgree(t *testing.T) {
	assert.Equal(t, MaxOwnerLen, core.MaxOwnerLen)
	assert.NoError(t, core.ValidateOwner(strings.Repeat("o", MaxOwnerLen)))
	assert.Error(t, core.ValidateOwner(strings.Repeat("o", MaxOwnerLen+1)))
	want := NAT44Timeouts{UDP: DefaultNAT44UDPTimeout, TCPEstablished: DefaultNAT44TCPEstablished,
		TCPTransitory: DefaultNAT44TCPTransitory, ICMP: DefaultNAT44ICMPTimeout}
	assert.Equal(t, want, NAT44Timeouts(core.EffectiveTimeouts(core.NAT44Timeouts{})))
	set := NAT44Timeouts{UDP: 1, TCPEstablished: 2, TCPTransitory: 3, ICMP: 4}
	assert.Equal(t, set, NAT44Timeouts(core.EffectiveTimeouts(core.NAT44Timeouts(set))), "set timeouts are kept")
}
