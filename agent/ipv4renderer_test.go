package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/renderer/cnat"
	"github.com/vppsvc/vppsvc/renderer/cnat4"
	"github.com/vppsvc/vppsvc/renderer/nat44"
)

// TestIPv4RendererSelection: NAT44 by default; "cnat" runs the cnat IPv4
// renderer instead, with the node's first IPv4 address as its SNAT
// address and its own section; another name is refused by name.
func TestIPv4RendererSelection(t *testing.T) {
	c, err := LoadConfig("", dualNode)
	require.NoError(t, err)
	assert.Equal(t, IPv4RendererNAT44, c.IPv4Renderer)
	pc := pipelineConfig(Options{Config: c}, c, nil)
	assert.NotNil(t, pc.NAT44)
	assert.Nil(t, pc.CNAT4)

	c, err = LoadConfig(configFile(t, "ipv4Renderer: cnat\ncnat4:\n  hairpinSNAT: hairpin-only\n  localClients: [10.1.1.0/24]\n"), dualNode)
	require.NoError(t, err)
	assert.True(t, c.UseCNAT4())
	assert.Equal(t, "192.168.16.1", c.CNAT4.SNATAddress.String())
	assert.Equal(t, cnat.HairpinSNATOnly, c.CNAT4.HairpinSNAT)
	pc = pipelineConfig(Options{Config: c}, c, nil)
	assert.Nil(t, pc.NAT44, "never both IPv4 renderers")
	require.NotNil(t, pc.CNAT4)
	assert.Equal(t, []string{"10.1.1.0/24"}, []string{pc.CNAT4.LocalClients[0].String()})

	// The cnat section is validated only when it runs.
	_, err = LoadConfig(configFile(t, "ipv4Renderer: cnat\ncnat4: {snatAddress: 2001:db8:16::1}\n"), dualNode)
	assert.ErrorContains(t, err, "invalid cnat4 renderer config: snatAddress")
	_, err = LoadConfig(configFile(t, "cnat4: {snatAddress: 2001:db8:16::1}\n"), dualNode)
	assert.NoError(t, err)

	_, err = LoadConfig(configFile(t, "ipv4Renderer: vpp\n"), dualNode)
	assert.ErrorContains(t, err, `ipv4Renderer: "vpp" is not "nat44" or "cnat"`)

	// A flag's override of the file.
	c, err = LoadConfig("", dualNode)
	require.NoError(t, err)
	c.SelectIPv4Renderer(IPv4RendererCNAT)
	require.NoError(t, c.Validate())
	assert.False(t, c.DisableIPv4)
	c.SelectIPv4Renderer("ipvs")
	assert.ErrorContains(t, c.Validate(), `"ipvs"`)
}

// TestExtraRendererCannotTakeCNAT4sName: the cnat IPv4 renderer's name is
// the agent's own, as NAT44's and IPv6's are.
func TestExtraRendererCannotTakeCNAT4sName(t *testing.T) {
	for _, name := range []string{nat44.Name, cnat4.Name} {
		assert.ErrorContains(t, checkExtraRenderers(map[string]ExtraRenderer{name: {}}), "the agent's own renderer")
	}
}
