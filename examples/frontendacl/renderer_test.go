package frontendacl_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/examples/frontendacl"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer/renderertest"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// The conformance suite every renderer runs: random call sequences of
// both families, injected commit failures, idempotent Resync, deletes that
// leave nothing. A failure prints the command that replays its seed.
func TestConformance(t *testing.T) {
	renderertest.Run(t, func(c vppcfg.Client) (vppsvc.ServiceRendererAPI, error) {
		return frontendacl.New(c, nil)
	}, renderertest.WithOwner(frontendacl.Name))
}

// One dual-stack service with a node port: a rule per frontend address and
// port, node ports on every node IP, SCTP skipped.
func TestRules(t *testing.T) {
	ip := netip.MustParseAddr
	svc := &model.ContivService{
		ID:          model.ServiceID{Namespace: "default", Name: "web"},
		ClusterIPs:  model.IPAddresses{ip("10.96.0.15"), ip("fd00:96::15")},
		ExternalIPs: model.IPAddresses{ip("203.0.113.20")},
		Ports: []model.NamedPort{
			{Name: "http", ServicePort: model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: 30085}},
			{Name: "sctp", ServicePort: model.ServicePort{Protocol: model.ProtocolSCTP, Port: 9}},
		},
	}
	var got []string
	for _, r := range frontendacl.Rules(svc, model.IPAddresses{ip("192.168.16.1")}) {
		got = append(got, r.String())
	}
	assert.Equal(t, []string{
		"permit src 0.0.0.0/0 dst 10.96.0.15/32 proto tcp sport any dport 80",
		"permit src ::/0 dst fd00:96::15/128 proto tcp sport any dport 80",
		"permit src 0.0.0.0/0 dst 203.0.113.20/32 proto tcp sport any dport 80",
		"permit src 0.0.0.0/0 dst 192.168.16.1/32 proto tcp sport any dport 30085",
	}, got)

	c := renderertest.NewClient(frontendacl.Name)
	r, err := frontendacl.New(c, nil)
	require.NoError(t, err)
	require.NoError(t, r.Resync(&model.ResyncEventData{Services: []*model.ContivService{svc}}))
	require.Len(t, c.Items(), 1)
	assert.Equal(t, vppcfg.ACLKey("fe-default/web"), c.Items()[0].Key())
	require.NoError(t, r.DeleteService(svc))
	assert.Empty(t, c.Items())
}
