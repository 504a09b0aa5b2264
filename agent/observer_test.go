package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
