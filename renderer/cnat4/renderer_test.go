package cnat4_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/renderer/cnat"
	"github.com/vppsvc/vppsvc/renderer/cnat4"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestNameIsTheFamilys(t *testing.T) {
	assert.Equal(t, cnat4.Name, cnat4.Family.Name)
}

// checkIPv4 adds the renderer's own invariants to renderertest.CheckVPP:
// only IPv4 cnat translations (paths in canonical order, AllocPort exactly
// when some path is source-NATed, but never for SCTP), ACL items whose rules each match one
// IPv4 frontend, cnat's IPv4 hairpin-only items and IPv4 service CIDR drop
// routes.
func checkIPv4(items map[vppcfg.Key]vppcfg.Item) []string {
	var errs []string
	fail := func(k vppcfg.Key, what string) { errs = append(errs, k.String()+": "+what) }
	for k, it := range items {
		switch v := it.(type) {
		case *vppcfg.CNATTranslation:
			snat := false
			for i, p := range v.Paths {
				if i > 0 && v.Paths[i-1].Dst.Compare(p.Dst) >= 0 {
					fail(k, "paths not sorted or repeated")
				}
				if !p.Dst.Addr().Is4() || (p.Src.IsValid() && !p.Src.Addr().Is4()) {
					fail(k, "a path of another family")
				}
				snat = snat || p.Src.IsValid()
			}
			if !v.VIP.Addr().Is4() {
				fail(k, "not an IPv4 VIP")
			}
			if wantAlloc := snat && v.Protocol != vppcfg.ProtoSCTP; v.AllocPort != wantAlloc {
				fail(k, "AllocPort does not follow the paths' source NAT (never for SCTP: cnat has no SCTP port allocator)")
			}
		case *vppcfg.ACL:
			for _, r := range v.Rules {
				if v.Name != renderer.PermitAllACLName && (r.Protocol == vppcfg.ProtoAny || r.Dst.Bits() != 32) {
					fail(k, "rule "+r.String()+" matches more than one IPv4 frontend")
				}
			}
		case *vppcfg.ACLBinding, *vppcfg.CNATSnatInterface:
		case *vppcfg.CNATSnatConfig: // hairpin-only
			if v.Policy != vppcfg.CNATSnatPolicyK8s || v.Part != vppcfg.CNATSnatIPv4 || !v.SnatIP4.Is4() || len(v.ExcludePrefixes) > 0 {
				fail(k, "not the IPv4 part with the K8S policy")
			}
		case *vppcfg.InterfaceFeature:
			if v.Feature != "cnat-input-ip4" && v.Feature != "cnat-output-ip4" {
				fail(k, "not cnat's IPv4 feature node")
			}
		case *vppcfg.DropRoute:
			if !v.Prefix.Addr().Is4() || v.Prefix.Bits() == 32 {
				fail(k, "not an IPv4 service CIDR's route")
			}
		default:
			fail(k, "unexpected item kind")
		}
	}
	return errs
}

// TestConformance runs the shared renderer conformance suite, with few
// shards so that services share them, in every hairpinSNAT mode.
func TestConformance(t *testing.T) {
	for name, mutate := range map[string]func(*cnat4.Config){
		"default config, 3 shards": func(c *cnat4.Config) { c.ACLShards = 3 },
		"maglev, no hairpin, 1 shard": func(c *cnat4.Config) {
			c.ACLShards, c.LoadBalancing, c.HairpinSNAT = 1, cnat.LBMaglev, cnat.HairpinSNATOff
		},
		"hairpin-only, 2 shards": func(c *cnat4.Config) { c.ACLShards, c.HairpinSNAT = 2, cnat.HairpinSNATOnly },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig()
			mutate(&cfg)
			renderertest.Run(t, func(c vppcfg.Client) (vppsvc.ServiceRendererAPI, error) {
				return cnat4.New(c, cfg, nil)
			}, renderertest.WithOwner(cnat4.Name), renderertest.WithChecks(checkIPv4))
		})
	}
}

// TestValidateWantsIPv4 names snatAddress when it is not a routable IPv4
// address.
func TestValidateWantsIPv4(t *testing.T) {
	for _, a := range []string{"", "fd00:16::1", "0.0.0.0", "127.0.0.1", "::ffff:192.168.16.1"} {
		cfg := cnat4.DefaultConfig()
		if a != "" {
			cfg.SNATAddress = netip.MustParseAddr(a)
		}
		err := cnat4.Validate(&cfg)
		var fe *renderer.FieldError
		if !errors.As(err, &fe) || fe.Field != "snatAddress" || !strings.Contains(err.Error(), cnat4.Name) {
			t.Errorf("snatAddress %q: %v, want a snatAddress error of %s", a, err, cnat4.Name)
		}
	}
	cfg := testConfig()
	assert.NoError(t, cnat4.Validate(&cfg))
}

// TestRendersOnlyIPv4 renders a dual-stack service: only its IPv4 half, on
// the IPv4 node IPs.
func TestRendersOnlyIPv4(t *testing.T) {
	svc := renderertest.Service("dual", "10.96.0.28", renderertest.WithBackends("", renderertest.Backend("10.1.2.2:8080"), renderertest.Backend("[fd00:1:2::2]:8080")))
	svc.ClusterIPs = append(svc.ClusterIPs, netip.MustParseAddr("fd00:96::28"))
	svc.SetPort("", model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: 30080})
	cfg := testConfig()
	node := cnat.Node{IPs: renderertest.IPs("192.168.16.1", "fd00:16::1"), FrontendIfs: model.NewInterfaces("uplink0")}
	r := cnat.RenderService(cnat4.Family, svc, node, &cfg)
	var vips []string
	for _, it := range r.Items {
		tr := it.(*vppcfg.CNATTranslation)
		if tr.Protocol != cnat.KeeperProtocol {
			vips = append(vips, tr.VIP.String())
		}
		for _, p := range tr.Paths {
			assert.True(t, p.Dst.Addr().Is4(), "%s", tr)
		}
	}
	assert.ElementsMatch(t, []string{"10.96.0.28:80", "192.168.16.1:30080"}, vips)
}

func TestClaimsOnlyIPv4Translations(t *testing.T) {
	claim := cnat4.Claims()[cnat4.Name]
	assert.True(t, claim(&vppcfg.CNATTranslation{VIP: netip.MustParseAddrPort("10.96.0.1:80")}))
	assert.False(t, claim(&vppcfg.CNATTranslation{VIP: netip.MustParseAddrPort("[fd00:96::1]:80")}), "IPv6 cnat is not ours")
	assert.True(t, claim(&vppcfg.InterfaceFeature{Interface: "tap1", Arc: "ip4-unicast", Feature: "cnat-input-ip4"}))
	assert.False(t, claim(&vppcfg.InterfaceFeature{Interface: "tap1", Arc: "ip6-unicast", Feature: "cnat-input-ip6"}))
}
