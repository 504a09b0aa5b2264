package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// An agent started while the API server does not answer waits for it with
// doubling delays, says so at info level with the attempt, the time waited
// and the next delay, and answers /healthz 503 with the reason meanwhile;
// once the API server answers, it syncs and /healthz turns 200.
func TestRunWaitsForTheAPIServer(t *testing.T) {
	client, _ := sampleClientset(t)
	var down atomic.Bool
	down.Store(true)
	refused := errors.New(`Get "https://10.0.0.1:6443/api/v1/nodes/node-a": dial tcp 10.0.0.1:6443: connect: connection refused`)
	// Every request fails while down, as with an API server not yet up.
	client.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		if down.Load() {
			return true, nil, refused
		}
		return false, nil, nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	log := logrus.New()
	log.SetOutput(&strings.Builder{})
	hook := logtest.NewLocal(log)
	vpp := fakevpp.New()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runNode(ctx, nodeConfig{Node: "node-a", FrontendInterfaces: []string{"uplink0", "host0"}, HealthzTimeout: time.Minute,
			RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond, SyncPoll: 5 * time.Millisecond,
			APIWaitMin: 2 * time.Millisecond, APIWaitMax: 16 * time.Millisecond},
			nodeDeps{Client: client, VPP: vpp, Fake: vpp, HTTP: ln, Log: log})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	healthz := "http://" + ln.Addr().String() + "/healthz"

	waits := func() []*logrus.Entry {
		var out []*logrus.Entry
		for _, e := range hook.AllEntries() {
			if e.Message == "waiting for the API server" {
				out = append(out, e)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(waits()) >= 6 }, wait, tick, "the agent keeps trying")
	code, body := get(t, healthz)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	var probe struct{ Reason string }
	require.NoError(t, json.Unmarshal([]byte(body), &probe))
	assert.Equal(t, `waiting for the API server: reading node "node-a": `+refused.Error(), probe.Reason)
	code, _ = get(t, "http://"+ln.Addr().String()+"/livez")
	assert.Equal(t, http.StatusOK, code, "waiting for the API server is no reason to restart the agent")

	var delays []string
	for i, e := range waits()[:6] {
		assert.Equal(t, logrus.InfoLevel, e.Level)
		assert.Equal(t, i+1, e.Data["attempt"])
		assert.Equal(t, "node-a", e.Data["node"])
		assert.Equal(t, refused, e.Data[logrus.ErrorKey])
		assert.Contains(t, e.Data, "waited")
		delays = append(delays, e.Data["retry_in"].(string))
	}
	// Doubling from 2ms up to the 16ms cap, each within 10% jitter.
	for i, base := range []time.Duration{2, 4, 8, 16, 16, 16} {
		d, err := time.ParseDuration(delays[i])
		require.NoError(t, err)
		base *= time.Millisecond
		assert.True(t, d >= base && d <= base+base/10+time.Millisecond, "delay %d: %s, want %s+10%%", i+1, d, base)
	}

	down.Store(false)
	require.Eventually(t, func() bool { code, _ := get(t, healthz); return code == http.StatusOK }, wait, tick, "synced once the API server answers")
	assert.True(t, slicesContainsMessage(hook.AllEntries(), "the API server answers"))
	_, ok := vpp.InterfaceIndex("uplink0")
	assert.True(t, ok, "the node was built from its Node object")
	cancel()
	assert.NoError(t, <-done)
	done <- nil
}

// Stopped while it waits, the agent returns without an error.
func TestRunStopsWhileWaitingForTheAPIServer(t *testing.T) {
	client, _ := sampleClientset(t)
	client.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	vpp := fakevpp.New()
	err = runNode(ctx, nodeConfig{Node: "node-a", HealthzTimeout: time.Minute, APIWaitMin: time.Millisecond, APIWaitMax: 5 * time.Millisecond},
		nodeDeps{Client: client, VPP: vpp, Fake: vpp, HTTP: ln, Log: quietLogger()})
	assert.NoError(t, err)
	_, err = net.Dial("tcp", ln.Addr().String())
	assert.Error(t, err, "the /healthz server is closed")
}

func slicesContainsMessage(entries []*logrus.Entry, msg string) bool {
	for _, e := range entries {
		if e.Message == msg {
			return true
		}
	}
	return false
}
