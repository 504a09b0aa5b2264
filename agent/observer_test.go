package agent

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// fullCalls is an Observer that also tells full resyncs apart.
type fullCalls struct {
	calls
	full map[string]int
}

func (c *fullCalls) BeginFullSync(r string) {
	c.mu.Lock()
	c.full[r]++
	c.mu.Unlock()
}

// A FullSyncObserver sees a renderer's Resync as BeginFullSync, every other
// call as Begin, and the end of both as End.
func TestFullSyncObserverTellsResyncsApart(t *testing.T) {
	obs := &fullCalls{calls: calls{begun: map[string]int{}, ended: map[string]int{}}, full: map[string]int{}}
	a, _, _ := newAgent(t, obs)
	a.Processor.Resync(snapshot("10.1.2.2", "10.1.3.2"))
	a.Processor.UpdateEndpointSlice(snapshot("10.1.2.2").EndpointSlices[0])
	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Equal(t, map[string]int{"nat44": 1}, obs.full, "the Resync")
	assert.Equal(t, map[string]int{"nat44": 1}, obs.begun, "the UpdateService")
	assert.Equal(t, map[string]int{"nat44": 2}, obs.ended, "both")
}

// A ServiceCIDR change reaches the NAT44 renderer through the observed
// wrapper (the observer sees it as one call) and VPP gets the CIDR's route
// in place of the ClusterIP's; with a configured range the objects change
// nothing, and the observer hears of no call.
func TestServiceCIDRChangeThroughTheAgent(t *testing.T) {
	sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/16"}}}
	tests := []struct {
		name       string
		configured []string
		calls      int
		route      string
	}{
		{name: "discovered", calls: 1, route: "10.96.0.0/16"},
		{name: "configured wins", configured: []string{"10.96.0.0/24"}, route: "10.96.0.0/24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := &calls{begun: map[string]int{}, ended: map[string]int{}}
			a, vpp := newAgentWith(t, obs, tt.configured)
			a.Processor.Resync(snapshot("10.1.2.2"))
			obs.mu.Lock()
			before := obs.begun["nat44"]
			obs.mu.Unlock()
			a.Processor.UpdateServiceCIDR(sc)
			obs.mu.Lock()
			assert.Equal(t, tt.calls, obs.begun["nat44"]-before, "calls observed")
			obs.mu.Unlock()
			require.NoError(t, a.WaitConverged(context.Background(), 10*time.Second))
			tr := vpp.Trace(fakevpp.Packet{Ingress: "uplink0", Protocol: 6,
				Src: netip.MustParseAddrPort("198.51.100.7:20000"), Dst: netip.MustParseAddrPort("10.96.0.10:443")})
			assert.Contains(t, tr.Reason, "matches drop route "+tt.route)
		})
	}
}
