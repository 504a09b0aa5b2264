package renderertest

import (
	"net/netip"
	"testing"

	"github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// CIDRRenderer is a renderer that takes service CIDR changes.
type CIDRRenderer interface {
	vppsvc.ServiceRendererAPI
	vppsvc.ServiceCIDRRenderer
}

// CheckServiceCIDRUpdate resyncs a new renderer with event() and the
// service CIDRs before, moves it to after, and requires the one commit want
// (none when want is ""), and that the renderer then holds the items a new
// renderer's Resync with after renders.
func CheckServiceCIDRUpdate(t testing.TB, owner string, newRenderer func(vppcfg.Client) (CIDRRenderer, error),
	event func() *model.ResyncEventData, before, after []netip.Prefix, want string, checks ...Check) {
	t.Helper()
	resynced := func(c *Client, cidrs []netip.Prefix) CIDRRenderer {
		t.Helper()
		r, err := newRenderer(c)
		if err != nil {
			t.Fatal(err)
		}
		ev := event()
		ev.ServiceCIDRs = cidrs
		if err := r.Resync(ev); err != nil {
			t.Fatal(err)
		}
		return r
	}
	c := NewClient(owner, checks...)
	r := resynced(c, before)
	c.TakeCommits()
	if err := r.UpdateServiceCIDRs(after); err != nil {
		t.Fatal(err)
	}
	if want == "" {
		RequireCommits(t, c)
	} else {
		RequireCommits(t, c, want)
	}
	fresh := NewClient(owner)
	resynced(fresh, after)
	if got, want := ItemLines(c.Items()), ItemLines(fresh.Items()); got != want {
		t.Fatalf("after the update:\n%s\na Resync with the new CIDRs:\n%s", got, want)
	}
}
