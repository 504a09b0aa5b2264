package agent

import (
	"context"
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/agent/inspect"
	"github.com/vppsvc/vppsvc/processor"
)

// itemsOf returns the items of one renderer of a service.
func itemsOf(s inspect.ServiceState, renderer string) []inspect.ItemView {
	for _, r := range s.Renderers {
		if r.Renderer == renderer {
			return r.Items
		}
	}
	return nil
}

// TestInspectGroupsItemsByServiceWithTheirStatus: a local backend whose
// interface does not exist yet shows the node items that wait for it under
// the service; a mapping VPP refuses shows VPP's error, retval and retry.
func TestInspectGroupsItemsByServiceWithTheirStatus(t *testing.T) {
	a, vpp, _ := newAgent(t, nil)
	vpp.FailMessage("nat44_add_del_lb_static_mapping", -1)
	snap := snapshot("10.1.2.2", "10.1.3.2")
	nodeA := "node-a"
	snap.EndpointSlices[0].Endpoints[0].NodeName = &nodeA
	snap.LocalPods = []processor.LocalPod{{ID: processor.PodID{Namespace: "default", Name: "web-a"},
		IPs: []netip.Addr{netip.MustParseAddr("10.1.2.2")}, Interface: "tap-web-a"}}
	a.Processor.Resync(snap)
	require.Eventually(t, func() bool {
		s, ok := a.Inspect().Service("default", "web")
		return ok && len(itemsOf(s, "nat44")) > 0 && itemsOf(s, "nat44")[0].NextRetry != nil
	}, 5*time.Second, time.Millisecond)

	got := a.Inspect()
	require.Len(t, got.Services, 1)
	web := got.Services[0]
	assert.Equal(t, "default/web", web.ID())
	assert.Equal(t, []inspect.FrontendView{{Type: "ClusterIP", Address: "10.96.0.10:80", Protocol: "TCP", PortName: "http",
		Backends: []string{"10.1.2.2:8080", "10.1.3.2:8080"}}}, web.Frontends)
	assert.Equal(t, []inspect.Backend{
		{PortName: "http", Address: "10.1.2.2:8080", State: "active", Local: true, Interface: "tap-web-a"},
		{PortName: "http", Address: "10.1.3.2:8080", State: "active"},
	}, web.Backends)

	items := itemsOf(web, "nat44")
	require.Len(t, items, 2, "one LB mapping and the ClusterIP's drop route; the filter shards and interface roles are the node's")
	assert.Equal(t, "drop-route/vrf0/10.96.0.10/32", items[1].Key)
	assert.Equal(t, "applied", items[1].Status)
	lb := items[0]
	assert.Equal(t, "nat44-lb-mapping/10.96.0.10:80/tcp", lb.Key)
	assert.Equal(t, "failed", lb.Status)
	assert.Equal(t, int32(-1), lb.Retval)
	assert.Contains(t, lb.Error, "VPPApiError")
	assert.GreaterOrEqual(t, lb.Failures, 1)
	assert.Equal(t, []string{"nat44"}, lb.Owners)

	require.NotEmpty(t, web.BlockedBy, "the local backend's interface is missing")
	for _, it := range web.BlockedBy {
		assert.Equal(t, "pending", it.Status, it.Key)
		assert.Equal(t, "tap-web-a", it.WaitingFor, it.Key)
	}
	var nodeKeys []string
	for _, r := range got.NodeItems {
		for _, it := range r.Items {
			nodeKeys = append(nodeKeys, it.Key)
		}
	}
	assert.Contains(t, nodeKeys, "nat44-global/global")
	assert.Contains(t, nodeKeys, web.BlockedBy[0].Key, "blocking items are node items too")
	assert.Positive(t, got.Counts["failed"])

	// The CNI creates the interface and VPP stops refusing: all applied.
	vpp.ClearFaults()
	vpp.AddInterface("tap-web-a")
	require.NoError(t, a.WaitConverged(context.Background(), 5*time.Second))
	web, _ = a.Inspect().Service("default", "web")
	assert.Equal(t, "applied", itemsOf(web, "nat44")[0].Status)
	assert.Nil(t, itemsOf(web, "nat44")[0].NextRetry)
	assert.Empty(t, web.BlockedBy)

	// The JSON form carries names, not Go types.
	data, err := json.Marshal(a.Inspect())
	require.NoError(t, err)
	assert.Contains(t, string(data), `"frontends":[{"type":"ClusterIP","address":"10.96.0.10:80","protocol":"TCP","portName":"http","backends":["10.1.2.2:8080","10.1.3.2:8080"]}]`)
}
