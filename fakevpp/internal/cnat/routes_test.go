package cnat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.fd.io/govpp/binapi/cnat"
)

// README.md#backend-routes: an open flow survives an update of its
// translation exactly while something else holds its backend's host entry.
func TestOpenFlowFollowsItsBackendRoute(t *testing.T) {
	const other = "10.96.0.21:80"
	tests := []struct {
		name    string
		prepare func(p *Plugin, ifs *fakeIfs)
		kept    bool
	}{
		{"the updated translation alone tracks the backend", func(*Plugin, *fakeIfs) {}, false},
		{"another translation tracks it too", func(p *Plugin, _ *fakeIfs) {
			mustUpdate(t, p, trans(other, tcpProto, to(backendA)))
		}, true},
		{"a host route holds it", func(_ *Plugin, ifs *fakeIfs) { ifs.hosts[ap(backendA).Addr()] = true }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ifs := newIfs()
			p := New(ifs)
			tt.prepare(p, ifs)
			mustUpdate(t, p, trans(vip20, tcpProto, to(backendA)))
			open := tcpFlow(clientIP+":40000", vip20, TCPSyn)
			require.Equal(t, Forward, p.VIP(open, at(0)).Verdict)

			mustUpdate(t, p, trans(vip20, tcpProto, to(backendA), to(backendB)))
			open.TCPFlags = TCPAck
			r := p.VIP(open, at(1))
			if tt.kept {
				assert.Equal(t, Forward, r.Verdict, r.Steps)
				assert.Equal(t, ap(backendA), r.Flow.Dst)
			} else {
				assert.Equal(t, Drop, r.Verdict)
				assert.Contains(t, r.DropReason, "blackholed")
			}
		})
	}
}

// Deleting the translation releases its trackers like an update; a route
// that goes later takes the entry with it once no tracker holds it.
func TestDeleteAndRouteRemovalReleaseTheBackendRoute(t *testing.T) {
	ifs := newIfs()
	p := New(ifs)
	ifs.hosts[ap(backendA).Addr()] = true
	id := mustUpdate(t, p, trans(vip20, tcpProto, to(backendA)))
	open := tcpFlow(clientIP+":40000", vip20, TCPSyn)
	require.Equal(t, Forward, p.VIP(open, at(0)).Verdict)
	open.TCPFlags = TCPAck

	require.Equal(t, int32(0), p.TranslationDel(&cnat.CnatTranslationDel{ID: id}).Retval)
	assert.Equal(t, Forward, p.VIP(open, at(1)).Verdict, "the host route keeps the entry")

	delete(ifs.hosts, ap(backendA).Addr())
	r := p.VIP(open, at(2))
	assert.Equal(t, Drop, r.Verdict, "without the route nothing holds the entry")
	assert.Contains(t, r.DropReason, "blackholed")
}
