package present_test

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/present"
)

// The presentations reach the CLI as the kind files write them (vppcfg's
// descriptor tests check every kind's; these check the bridge).
func TestPresentationsOfAKind(t *testing.T) {
	m := &vppcfg.NAT44StaticMapping{Protocol: vppcfg.ProtoTCP, External: netip.MustParseAddrPort("10.96.0.11:80"),
		Local: netip.MustParseAddrPort("10.1.1.1:80"), Out2InOnly: true, Label: "svc"}

	assert.Equal(t, []string{"nat44 add static mapping tcp local 10.1.1.1 80 external 10.96.0.11 80 vrf 0 out2in-only  # api: tag for svc"},
		present.CLICommands(m))

	data, err := json.Marshal(present.Printable(m, "nat44"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"tag":"vppsvc:nat44:svc"`)

	got, ok := present.FrontendTranslationOf(m)
	assert.True(t, ok)
	assert.Equal(t, present.FrontendTranslation{Frontend: m.External, Protocol: vppcfg.ProtoTCP,
		Backends: []netip.AddrPort{m.Local}, Name: "static-mapping", Flags: []string{"out2in-only"}}, got)
}

func TestPresentationsOfNothing(t *testing.T) {
	assert.Nil(t, present.CLICommands(nil))
	assert.Nil(t, present.Printable(nil, "nat44"))
	_, ok := present.FrontendTranslationOf(nil)
	assert.False(t, ok)
	_, ok = present.FrontendTranslationOf(&vppcfg.NAT44Global{})
	assert.False(t, ok, "a kind without a frontend")
}
