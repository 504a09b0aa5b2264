package cnat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.fd.io/govpp/binapi/cnat"
)

func TestDumpGolden(t *testing.T) {
	ifs := newIfs(podIf, upIf, 5)
	p := New(ifs)
	m := trans(vip20, tcpProto, via(snatSrcIP, backendA), cnat.CnatEndpointTuple{SrcEp: lit("0.0.0.0"), DstEp: ifEp(5, false, 8080)})
	m.Translation.Flags = uint8(cnat.CNAT_TRANSLATION_ALLOC_PORT | cnat.CNAT_TRANSLATION_NO_RETURN_SESSION)
	m.Translation.LbType = cnat.CNAT_LB_TYPE_MAGLEV
	mustUpdate(t, p, m)
	r := trans("[fd00::20]:53", udpProto, to6("[fd00:1::2]:53"))
	r.Translation.IsRealIP = 1
	r.Translation.FlowHashConfig = 3
	mustUpdate(t, p, r)
	p.SetSnatAddresses(&cnat.CnatSetSnatAddresses{SwIfIndex: upIf})
	ifs.add(upIf, "192.168.0.1")
	p.InterfaceAddressChanged(upIf, addr("192.168.0.1"), true)
	p.SetSnatPolicy(&cnat.CnatSetSnatPolicy{Policy: cnat.CNAT_POLICY_K8S})
	p.SnatPolicyAddDelIf(&cnat.CnatSnatPolicyAddDelIf{SwIfIndex: podIf, IsAdd: 1, Table: cnat.CNAT_POLICY_POD})
	p.SnatPolicyAddDelExcludePfx(&cnat.CnatSnatPolicyAddDelExcludePfx{IsAdd: 1, Prefix: prefix("10.0.0.0/8")})
	p.EnableSnatFeature(upIf, false, true)
	p.VIP(tcpFlow(clientIP+":40000", vip20, TCPSyn), at(0))
	p.VIP(udpFlow("[fd00:2::9]:5353", "[fd00::20]:53"), at(0))

	const want = `translations:
  [0] 10.96.0.20:80 TCP exclusive lb:maglev fhc:default flags:alloc-port|no-return-session
      10.0.0.1:0 -> 10.1.1.2:8080 active
      0.0.0.0:0 -> sw5/ip4 (unresolved):8080 inactive
  [1] [fd00::20]:53 UDP interposed lb:default fhc:0x3 flags:-
      [::]:0 -> [fd00:1::2]:53 active
clients:
  10.96.0.20 exclusive tr:1 sess:1
  fd00::20 interposed tr:1 sess:1
  fd00:2::9 interposed tr:0 sess:1
snat:
  ip4: 192.168.0.1 sw_if_index 2 resolved
  ip6: :: sw_if_index 2 unresolved
  policy: k8s
  include-v4: -
  include-v6: -
  pod: 1
  host: -
  exclude: 10.0.0.0/8
  cnat-snat-ip4: 2
  cnat-snat-ip6: -
sessions: 3 (2 forward, 1 return)
ports in use: tcp 1 udp 0 icmp 0 icmp6 0
`
	assert.Equal(t, want, p.Dump())
}
