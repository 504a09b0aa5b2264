package processor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseIP(t *testing.T) {
	testCases := []struct {
		in   string
		want string // "" means rejected
	}{
		{"10.96.0.10", "10.96.0.10"},
		{"fd00:96::10", "fd00:96::10"},
		{"::ffff:10.96.0.10", "10.96.0.10"},
		{"010.096.000.010", "10.96.0.10"},
		{"0.0.0.0", "0.0.0.0"},
		{"10.96.0.256", ""},
		{"10.96.0", ""},
		{"10.96.0.1.2", ""},
		{"10.96..1", ""},
		{"0010.96.0.1", ""},
		{"10.96.0.-1", ""},
		{"fe80::1%eth0", ""},
		{" 10.96.0.1", ""},
		{"", ""},
		{"example.com", ""},
	}
	for _, tc := range testCases {
		got, ok := parseIP(tc.in)
		if tc.want == "" {
			assert.False(t, ok, tc.in)
			continue
		}
		if assert.True(t, ok, tc.in) {
			assert.Equal(t, tc.want, got.String(), tc.in)
		}
	}
}

func TestValidPort(t *testing.T) {
	assert.False(t, validPort(0))
	assert.True(t, validPort(1))
	assert.True(t, validPort(65535))
	assert.False(t, validPort(65536))
	assert.False(t, validPort(-80))
}

func TestProblemLogReportsOnlyNewProblems(t *testing.T) {
	l := newProblemLog()
	owner := problemOwner{KindService, "default", "svc"}
	p1 := Problem{Kind: KindService, Object: "default/svc", Field: "spec.ports[].port", Value: "0"}
	p2 := Problem{Kind: KindService, Object: "default/svc", Field: "spec.clusterIPs[]", Value: "x"}

	assert.Equal(t, []Problem{p1}, l.record(owner, []Problem{p1}))
	assert.Empty(t, l.record(owner, []Problem{p1}), "same problem again: quiet")
	assert.Equal(t, []Problem{p2}, l.record(owner, []Problem{p1, p2}))
	assert.Empty(t, l.record(owner, nil), "fixed")
	assert.Equal(t, []Problem{p1}, l.record(owner, []Problem{p1}), "broken again: reported again")

	l.beginRound()
	assert.Empty(t, l.record(owner, []Problem{p1}), "a resync does not re-report known problems")
	l.endRound()
	l.beginRound()
	l.endRound()
	assert.Equal(t, []Problem{p1}, l.record(owner, []Problem{p1}), "an owner not seen in a resync is forgotten")

	l.forget(owner)
	assert.Equal(t, []Problem{p1}, l.record(owner, []Problem{p1}))
}
