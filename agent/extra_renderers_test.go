package agent

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	vppsvc "github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/examples/frontendacl"
	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/vppcfg"
)

var frontendACL = map[string]ExtraRenderer{frontendacl.Name: {
	New: func(c vppcfg.Client, log logrus.FieldLogger) (vppsvc.ServiceRendererAPI, error) {
		return frontendacl.New(c, log)
	},
}}

// startWith runs an agent with the example renderer on vpp until the test
// ends, and feeds it snap.
func startWith(t *testing.T, vpp *fakevpp.VPP, services ...string) *Agent {
	t.Helper()
	cfg := DefaultConfig([]netip.Addr{netip.MustParseAddr("192.168.16.1")})
	a, err := New(Options{NodeName: "node-a", FrontendInterfaces: []string{"uplink0"}, Config: cfg, VPP: vpp,
		Log: logrus.New(), RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond, ExtraRenderers: frontendACL})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	stop := func() {
		cancel()
		<-a.LayerDone()
		a.Close()
	}
	t.Cleanup(stop)
	require.NoError(t, a.Start(ctx))
	snap := snapshot("10.1.2.2", "10.1.3.2")
	if len(services) == 0 {
		snap.Services, snap.EndpointSlices = nil, nil
	}
	a.Processor.Resync(snap)
	require.NoError(t, a.WaitConverged(ctx, 5*time.Second))
	return a
}

// An extra renderer runs next to the agent's own: it is registered with
// the processor, its items reach VPP through the agent's VPP layer under its
// own name, and after an agent restart the items of a service deleted in
// the meantime are removed (ACLs carry their owner's tag).
func TestExtraRendererRunsNextToTheAgentsOwn(t *testing.T) {
	vpp := fakevpp.New()
	vpp.AddInterface("uplink0", netip.MustParsePrefix("192.168.16.1/24"))
	a := startWith(t, vpp, "web")
	assert.Contains(t, a.Renderers, frontendacl.Name)
	assert.Contains(t, a.Renderers, "nat44")
	owners := map[vppcfg.Key][]string{}
	for _, st := range a.Reconciler.Statuses() {
		owners[st.Key] = st.Owners
	}
	assert.Equal(t, []string{frontendacl.Name}, owners[vppcfg.ACLKey("fe-default/web")])
	assert.Contains(t, vpp.Dump(), "vppsvc:frontendacl:fe-default/web")

	// The agent restarts while the service is deleted.
	a.Close()
	startWith(t, vpp)
	assert.NotContains(t, vpp.Dump(), "fe-default/web", "the stale ACL is removed at the first Resync")
}

// Names the VPP layer cannot own items under, and the agent's own
// renderers' names, are refused before anything connects.
func TestExtraRendererNames(t *testing.T) {
	ok := frontendACL[frontendacl.Name]
	for name, x := range map[string]ExtraRenderer{
		"nat44":                 ok,
		"ipv6":                  ok,
		"":                      ok,
		"has:colon":             ok,
		"has space":             ok,
		strings.Repeat("x", 25): ok,
		"no-constructor":        {},
	} {
		_, err := New(Options{NodeName: "n", Config: DefaultConfig([]netip.Addr{netip.MustParseAddr("192.168.16.1")}),
			VPP: fakevpp.New(), ExtraRenderers: map[string]ExtraRenderer{name: x}})
		assert.ErrorContains(t, err, "extra renderer", "%q", name)
	}
}
