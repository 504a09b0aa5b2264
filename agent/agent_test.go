package agent

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/processor"
)

// calls records renderer calls as an Observer sees them.
type calls struct {
	mu    sync.Mutex
	begun map[string]int
	ended map[string]int
}

func (c *calls) Begin(r string) { c.mu.Lock(); c.begun[r]++; c.mu.Unlock() }
func (c *calls) End(r string, _ error) {
	c.mu.Lock()
	c.ended[r]++
	c.mu.Unlock()
}

func newAgent(t *testing.T, obs Observer) (*Agent, *fakevpp.VPP, *test.Hook) {
	t.Helper()
	a, vpp, hook := newAgentConfigured(t, obs, nil)
	return a, vpp, hook
}

// newAgentWith is newAgent with the service CIDRs configured.
func newAgentWith(t *testing.T, obs Observer, serviceCIDRs []string) (*Agent, *fakevpp.VPP) {
	t.Helper()
	a, vpp, _ := newAgentConfigured(t, obs, serviceCIDRs)
	return a, vpp
}

func newAgentConfigured(t *testing.T, obs Observer, serviceCIDRs []string) (*Agent, *fakevpp.VPP, *test.Hook) {
	t.Helper()
	log, hook := test.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	vpp := fakevpp.New()
	vpp.AddInterface("uplink0", netip.MustParsePrefix("192.168.16.1/24"))
	cfg := DefaultConfig([]netip.Addr{netip.MustParseAddr("192.168.16.1")})
	cfg.ServiceClusterIPRange = serviceCIDRs
	a, err := New(Options{NodeName: "node-a", FrontendInterfaces: []string{"uplink0"}, Config: cfg, VPP: vpp, Log: log,
		RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond, Observer: obs})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		<-a.LayerDone()
		a.Close()
	})
	require.NoError(t, a.Start(ctx))
	return a, vpp, hook
}

func snapshot(endpoints ...string) processor.Snapshot {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}}}}
	name, proto, port := "http", corev1.ProtocolTCP, int32(8080)
	sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1",
		Labels: map[string]string{discoveryv1.LabelServiceName: "web"}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: &name, Protocol: &proto, Port: &port}}}
	for _, ep := range endpoints {
		sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{ep}})
	}
	return processor.Snapshot{Services: []*corev1.Service{svc}, EndpointSlices: []*discoveryv1.EndpointSlice{sl}}
}

// The VPP layer starts once govpp is connected: no spurious "resync failed"
// warning, one dump of VPP.
func TestStartWaitsForTheConnection(t *testing.T) {
	a, vpp, hook := newAgent(t, nil)
	assert.True(t, a.Converged())
	for _, e := range hook.AllEntries() {
		assert.Greater(t, e.Level, logrus.WarnLevel, "%s: %s %v", e.Level, e.Message, e.Data)
	}
	assert.Equal(t, 1, vpp.Calls()["acl_dump"], "one resync at start")
}

func TestObserverSeesEveryRendererCall(t *testing.T) {
	obs := &calls{begun: map[string]int{}, ended: map[string]int{}}
	a, _, _ := newAgent(t, obs)
	a.Processor.Resync(snapshot("10.1.2.2", "10.1.3.2"))
	a.Processor.UpdateEndpointSlice(snapshot("10.1.2.2").EndpointSlices[0])
	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Equal(t, map[string]int{"nat44": 2}, obs.begun, "a Resync and an UpdateService; no IPv6 renderer without an IPv6 node address")
	assert.Equal(t, obs.begun, obs.ended)
}

// A VPP that refuses an item keeps the agent from converging, and says which.
func TestConvergedAndDivergence(t *testing.T) {
	a, vpp, _ := newAgent(t, nil)
	vpp.FailMessage("nat44_add_del_lb_static_mapping", -1)
	a.Processor.Resync(snapshot("10.1.2.2", "10.1.3.2"))
	assert.False(t, a.Converged())
	err := a.WaitConverged(context.Background(), 20*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nat44-lb-mapping/10.96.0.10:80/tcp failed")
	vpp.ClearFaults()
	require.NoError(t, a.WaitConverged(context.Background(), 5*time.Second))
	assert.Equal(t, "converged", a.Divergence())
	assert.Empty(t, a.Pending())
}
