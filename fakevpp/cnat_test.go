package fakevpp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/feature"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/core"
)

// fakevpp/internal/cnat/README.md#endpoints: a literal address sent with SwIfIndex 0 is ignored (the
// endpoint waits for local0's address forever), so the path is inactive and
// takes no traffic; CnatSessionPurge removes every translation.
func TestCnatPitfalls(t *testing.T) {
	e := newCnatEnv(t)
	bad := cnatPath("", "10.1.1.5:8080")
	bad.DstEp.SwIfIndex = 0
	e.mustUpdate(cnatTCP(cnatVIP, bad))
	assert.True(t, hasViolation(e.v, "cnat endpoint uses SwIfIndex 0 (local0)"), "the engine's violations reach the VPP's")

	d := e.translations()
	require.Len(t, d, 1)
	p := d[0].Translation.Paths[0]
	assert.Equal(t, uint8(0), p.Flags, "inactive")
	assert.True(t, fromAPIAddr(p.DstEp.Addr).IsUnspecified(), "no address until resolved")
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", cnatVIP)), "translation 0 has no active path")

	e.mustUpdate(cnatTCP("10.96.0.21:80", cnatPath("", backendA)))
	requireCnatForward(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", "10.96.0.21:80")), "tap0", "8.8.8.8:1000", backendA)
	_, err := e.cnat.CnatSessionPurge(e.ctx, &cnat.CnatSessionPurge{})
	e.ok(err)
	assert.Empty(t, e.translations())
	assert.Empty(t, e.cnatSessions())
}

// The engine's violations are copied after every call and cleared there, so
// the VPP's deduplication is the only one: after ClearViolations a repeat is
// reported again.
func TestCnatViolationsMerged(t *testing.T) {
	e := newCnatEnv(t)
	empty := cnatTCP(cnatVIP)
	_, err := e.update(empty)
	e.expect(api.INVALID_VALUE, err)
	require.True(t, hasViolation(e.v, "cnat translation with no paths"))
	e.v.ClearViolations()
	_, err = e.update(empty)
	e.expect(api.INVALID_VALUE, err)
	assert.True(t, hasViolation(e.v, "cnat translation with no paths"))
}

// A planned fault answers the reply type with the retval and changes
// nothing: no translation, no ID consumed. Calls counts the request.
func TestCnatFaultLeavesStateUntouched(t *testing.T) {
	e := newCnatEnv(t)
	before := e.v.Dump()
	e.v.FailMessage("CnatTranslationUpdate", int32(api.EAGAIN))
	_, err := e.update(cnatTCP(cnatVIP, cnatPath("", backendA)))
	e.expect(api.EAGAIN, err)
	assert.Empty(t, e.translations())
	assert.Equal(t, before, e.v.Dump())
	assert.Equal(t, 1, e.v.Calls()["cnat_translation_update"])
	e.v.ClearFaults()
	assert.Equal(t, uint32(0), e.mustUpdate(cnatTCP(cnatVIP, cnatPath("", backendA))))
}

// Restart (docs/fakevpp.md#restart) drops every cnat table and feature binding; translation IDs
// start at 0 again (a free-list ID would be 1 here).
func TestCnatRestart(t *testing.T) {
	e := newCnatEnv(t)
	e.mustUpdate(cnatTCP(cnatVIP, cnatPath("", backendA)))
	id := e.mustUpdate(cnatTCP("10.96.0.21:80", cnatPath("", backendA)))
	e.mustUpdate(cnatTCP("10.96.0.22:80", cnatPath("", backendA)))
	e.ok(e.del(id))
	e.setSnat(snatAddr4, snatAddr6, cnat.CNAT_POLICY_K8S)
	e.ok(e.setFeature("tap0", "ip4-unicast", "cnat-snat-ip4", true))
	requireCnatForward(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", cnatVIP)), "tap0", "8.8.8.8:1000", backendA)

	e.v.Restart()
	conn, err := core.Connect(e.v.NewAdapter())
	require.NoError(t, err)
	t.Cleanup(conn.Disconnect)
	e.conn, e.cnat, e.feat = conn, cnat.NewServiceClient(conn), feature.NewServiceClient(conn)

	assert.Empty(t, e.translations())
	assert.Empty(t, e.cnatSessions())
	snat, err := e.cnat.CnatGetSnatAddresses(e.ctx, &cnat.CnatGetSnatAddresses{})
	e.ok(err)
	assert.Equal(t, &cnat.CnatGetSnatAddressesReply{}, snat)
	assert.False(t, e.featureOn("tap0", "ip4-unicast", "cnat-snat-ip4"), "the unicast arc answers truly")
	assert.NotContains(t, e.v.Dump(), "cnat")
	tr := e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", cnatVIP))
	requireForward(t, tr, "eth0", "8.8.8.8:1000", cnatVIP)
	assert.Equal(t, uint32(0), e.mustUpdate(cnatTCP(cnatVIP, cnatPath("", backendA))))
}

// Interface endpoints follow the interface's addresses: a source endpoint on
// an interface that does not exist yet keeps its path inactive until the
// interface appears with an address, and again once it is deleted. A
// deleted interface also loses its features, so the next interface on its
// index starts without them.
func TestCnatInterfaceEndpoints(t *testing.T) {
	e := newCnatEnv(t)
	const next = interface_types.InterfaceIndex(3) // local0, eth0, tap0, then the next one
	p := cnatPath("", backendA)
	p.SrcEp = ifEndpoint(next, 0)
	e.mustUpdate(cnatTCP(cnatVIP, p))
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1000", cnatVIP)), "has no active path")

	require.Equal(t, uint32(next), e.v.AddInterface("tap9", pfx("10.9.9.1/24")))
	assert.Equal(t, uint8(1), e.translations()[0].Translation.Paths[0].Flags, "active once tap9 has an address")
	assert.Contains(t, e.v.Dump(), "tap9/ip4 (10.9.9.1):0 -> 10.1.1.2:8080 active")
	out := e.v.Trace(tcpSyn("eth0", "8.8.8.8:1001", cnatVIP))
	requireCnatForward(t, out, "tap0", "10.9.9.1:1001", backendA)
	assert.True(t, out.SNAT)

	e.ok(e.setFeature("tap9", "ip4-unicast", "cnat-snat-ip4", true))
	require.True(t, e.v.DeleteInterface("tap9"))
	assert.Equal(t, uint8(0), e.translations()[0].Translation.Paths[0].Flags)
	assert.Contains(t, e.v.Dump(), "#3(absent)/ip4 (unresolved):0 -> 10.1.1.2:8080 inactive")
	requireDrop(t, e.v.Trace(tcpSyn("eth0", "8.8.8.8:1002", cnatVIP)), "has no active path")
	require.Equal(t, uint32(next), e.v.AddInterface("tap10"))
	assert.False(t, e.featureOn("tap10", "ip4-unicast", "cnat-snat-ip4"))
}
