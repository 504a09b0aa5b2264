package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.fd.io/govpp/binapi/cnat"
)

const goldenCnatDump = `interfaces:
  eth0 up 192.168.0.1/24,2001:db8::1/64 startup
  local0 down
  tap0 up 10.1.1.1/24,fd00::1/64 startup
  tap1 up 10.9.9.1/24
routes:
  0.0.0.0/0 via eth0
  ::/0 via eth0
nat44-ed:
  disabled
cnat translations:
  10.96.0.20:80 TCP exclusive lb:default fhc:default flags:alloc-port
    tap1/ip4 (10.9.9.1):0 -> 10.1.1.2:8080 active
    tap1/ip4 (10.9.9.1):0 -> 10.1.1.3:8080 active
  192.168.0.1:30080 TCP interposed lb:default fhc:default flags:-
    0.0.0.0:0 -> 10.1.1.4:8080 active
  [fd00:96::20]:80 TCP exclusive lb:default fhc:default flags:-
    [::]:0 -> [fd00::2]:8080 active
cnat clients:
  10.9.9.1 interposed tr:0 sess:1
  10.96.0.20 exclusive tr:1 sess:1
  192.168.0.1 interposed tr:1 sess:0
  fd00:96::20 exclusive tr:1 sess:0
cnat snat:
  cnat-snat-ip4: tap0
  exclude: 10.0.0.0/8
  include-v4: tap1
  ip4: 10.0.0.1 sw_if_index ~0 resolved
  ip6: fd00:ff::1 sw_if_index ~0 resolved
  pod: tap0
  policy: k8s
cnat sessions:
  ports in use: tcp 1 udp 0 icmp 0 icmp6 0
  sessions: 2 (1 forward, 1 return)
`

// configureCnat builds the same cnat state in two orders: reversed, the
// translation IDs and tap1's sw_if_index differ.
func configureCnat(t *testing.T, reversed bool) string {
	e := newCnatEnv(t)
	if reversed {
		e.v.AddInterface("scratch")
	}
	e.v.AddInterface("tap1", pfx("10.9.9.1/24"))
	if reversed {
		e.v.DeleteInterface("scratch")
	}
	viaTap1 := cnatTCP(cnatVIP, cnatPath("", backendA), cnatPath("", backendB))
	for i := range viaTap1.Paths {
		viaTap1.Paths[i].SrcEp = ifEndpoint(e.sw("tap1"), 0)
	}
	viaTap1.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT)
	nodePort := cnatTCP("192.168.0.1:30080", cnatPath("", backendC))
	nodePort.IsRealIP = 1
	ipv6 := cnatTCP("[fd00:96::20]:80", cnatPath("", "[fd00::2]:8080"))
	all := []cnat.CnatTranslation{viaTap1, nodePort, ipv6}
	if reversed {
		e.ok(e.del(e.mustUpdate(cnatTCP("10.96.0.99:80", cnatPath("", backendA)))))
		all = []cnat.CnatTranslation{ipv6, nodePort, viaTap1}
	}
	for _, tr := range all {
		e.mustUpdate(tr)
	}
	e.setSnat(snatAddr4, snatAddr6, cnat.CNAT_POLICY_K8S)
	e.snatPolicyIf("tap0", cnat.CNAT_POLICY_POD)
	e.snatPolicyIf("tap1", cnat.CNAT_POLICY_INCLUDE_V4)
	_, err := e.cnat.CnatSnatPolicyAddDelExcludePfx(e.ctx, &cnat.CnatSnatPolicyAddDelExcludePfx{IsAdd: 1, Prefix: prefix("10.0.0.0/8")})
	e.ok(err)
	e.ok(e.setFeature("tap0", "ip4-unicast", "cnat-snat-ip4", true))
	requireCnatForward(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:5555", cnatVIP)), "tap0", "10.9.9.1:49152", backendB)
	return e.v.Dump()
}

func TestCnatDumpGoldenAndStable(t *testing.T) {
	a := configureCnat(t, false)
	b := configureCnat(t, true)
	assert.Equal(t, goldenCnatDump, a)
	assert.Equal(t, a, b, "the dump does not depend on creation order or indices")
}
