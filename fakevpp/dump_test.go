package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/nat_types"
)

const goldenDump = `interfaces:
  eth0 up 192.168.0.1/24 startup
  local0 down
  tap0 up 10.1.1.1/24 startup
routes:
  0.0.0.0/0 via eth0
nat44-ed:
  enabled inside-vrf=0 outside-vrf=0 sessions=64512 forwarding=off
  timeouts udp=300 tcp-established=7440 tcp-transitory=240 icmp=60
nat44-ed interfaces:
  eth0 outside
  tap0 inside+outside
nat44-ed addresses:
  1.1.1.1 vrf=any
  10.1.1.254 twice-nat vrf=any
nat44-ed mappings:
  lb tcp 10.96.0.10:80 flags=out2in-only affinity=0 tag="svc-a"
    local 10.1.1.2:8080 probability=50 vrf=0
    local 10.1.1.3:8080 probability=50 vrf=0
  static tcp 10.1.1.5:8080 ↔ 1.1.1.1:80 vrf=0 flags=twice-nat tag=""
nat44-ed sessions:
  total=1 dynamic=0 static=0 lb=1 bypass=0 twice-nat=0 hairpin=0 expired=0 affinity-records=0
acl:
  acl "deny-all" (1 rules)
    0: deny any 0.0.0.0/0 → 0.0.0.0/0
  acl "pods" (2 rules)
    0: deny tcp 0.0.0.0/0 → 10.1.1.2/32 sport=0-65535 dport=22-22
    1: permit any 0.0.0.0/0 → 0.0.0.0/0
acl interfaces:
  tap0 in=[deny-all] out=[pods]
`

// configure builds the same state; aclsFirst changes the order of creation
// (and so every ACL index and mapping slot).
func configure(t *testing.T, aclsFirst bool) string {
	e := newEnv(t)
	acls := func() (uint32, uint32) {
		if aclsFirst {
			d := e.addACL("deny-all", rule(deny, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
			p := e.addACL("pods", rule(deny, "0.0.0.0/0", "10.1.1.2/32", tcp, 22), rule(permit, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
			return d, p
		}
		e.addACL("scratch")
		p := e.addACL("pods", rule(deny, "0.0.0.0/0", "10.1.1.2/32", tcp, 22), rule(permit, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
		d := e.addACL("deny-all", rule(deny, "0.0.0.0/0", "0.0.0.0/0", 0, 0))
		_, err := e.acl.ACLDel(e.ctx, &acl.ACLDel{ACLIndex: 0})
		e.ok(err)
		return d, p
	}
	var d, p uint32
	if aclsFirst {
		d, p = acls()
	}
	e.standardNAT()
	e.pool("10.1.1.254", nat_types.NAT_IS_TWICE_NAT)
	if aclsFirst {
		e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, nat_types.NAT_IS_TWICE_NAT))
		e.ok(e.lbTagged("svc-a"))
	} else {
		e.ok(e.lbTagged("svc-a"))
		e.ok(e.static(true, "10.1.1.5:8080", "1.1.1.1:80", tcp, nat_types.NAT_IS_TWICE_NAT))
		d, p = acls()
	}
	e.ok(e.setACLs("tap0", []uint32{d}, []uint32{p}))
	e.v.Trace(tcpSyn("eth0", "8.8.8.8:1", vip))
	return e.v.Dump()
}

func TestDumpGoldenAndStable(t *testing.T) {
	a := configure(t, true)
	b := configure(t, false)
	assert.Equal(t, goldenDump, a)
	assert.Equal(t, a, b, "the dump does not depend on creation order or indices")
}

func TestDumpAfterNew(t *testing.T) {
	assert.Equal(t, "interfaces:\n  local0 down\nnat44-ed:\n  disabled\n", New().Dump())
}

func (e *env) lbTagged(tag string) error {
	x := ap(vip)
	_, err := e.nat.Nat44AddDelLbStaticMapping(e.ctx, &nat44_ed.Nat44AddDelLbStaticMapping{IsAdd: true,
		Flags: nat_types.NAT_IS_OUT2IN_ONLY, ExternalAddr: x.Addr().As4(), ExternalPort: x.Port(), Protocol: tcp, Tag: tag,
		Locals: []nat44_ed.Nat44LbAddrPort{local("10.1.1.2:8080", 50), local("10.1.1.3:8080", 50)}})
	return err
}
