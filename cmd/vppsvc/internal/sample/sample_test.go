package sample

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/clusterfile"
)

// The sample must stay decodable and complete: the CLI's golden tests and
// hand-written flow expectations are written against exactly these objects.
func TestSampleClusterDecodes(t *testing.T) {
	c, err := clusterfile.Parse("sample", bytes.NewReader(ClusterYAML))
	require.NoError(t, err)
	assert.Len(t, c.Nodes, 3)
	assert.Len(t, c.Pods, 8)
	assert.Len(t, c.Services, 13)
	assert.Len(t, c.EndpointSlices, 11)
	assert.Empty(t, c.Ignored)
}
