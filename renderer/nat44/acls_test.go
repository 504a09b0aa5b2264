package nat44

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestServiceACLNoneWithoutReason(t *testing.T) {
	svc := service("open", "10.96.0.1")
	fe := []Frontend{{Kind: ClusterIPFrontend, Addr: ap("10.96.0.1:80"), Protocol: vppcfg.ProtoTCP}}
	if acl := serviceACL(svc, nil, fe); acl != nil {
		t.Fatalf("ACL without dropped frontends or source ranges: %s", acl)
	}
}

func TestServiceACLSourceRangesAreMaskedIPv4(t *testing.T) {
	svc := service("lb", "10.96.0.1", func(s *model.ContivService) {
		s.LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix("::ffff:100.64.1.0/120")}
	})
	fe := []Frontend{{Kind: LoadBalancerFrontend, Addr: ap("198.51.100.1:80"), Protocol: vppcfg.ProtoTCP}}
	acl := serviceACL(svc, nil, fe)
	if acl == nil || len(acl.Rules) != 2 || acl.Rules[0].Src != pfx("100.64.1.0/24") {
		t.Fatalf("ACL %v", acl)
	}
}

func TestACLNameIsBoundedAndRecognisable(t *testing.T) {
	id := model.ServiceID{Namespace: strings.Repeat("n", 63), Name: strings.Repeat("s", 63)}
	name := ACLName(id)
	if len(name) > renderer.MaxTagLen || !strings.HasPrefix(name, Name+"-") {
		t.Fatalf("ACLName = %q (%d bytes)", name, len(name))
	}
}
