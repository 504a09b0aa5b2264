package ipv6

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// memClient is an in-memory vppcfg.Client double: it keeps the desired items
// of one owner with the layer's transaction semantics (a resync replaces
// everything), logs every commit as sorted key lists, and checks after each
// commit the invariants cnat and the ACL plugin impose on the whole state,
// so that a random call sequence that breaks one fails at the step that
// broke it.
type memClient struct {
	mu      sync.Mutex
	items   map[vppcfg.Key]vppcfg.Item
	commits []string
	// failNext, when set, makes the next Commit fail with it (and change nothing).
	failNext error
}

func newMemClient() *memClient { return &memClient{items: map[vppcfg.Key]vppcfg.Item{}} }

func (c *memClient) Owner() string         { return Name }
func (c *memClient) Txn() vppcfg.Txn       { return &memTxn{c: c} }
func (c *memClient) ResyncTxn() vppcfg.Txn { return &memTxn{c: c, resync: true} }

// takeCommits returns the commits since the last call, each as
// "txn|resync put=[keys] del=[keys]".
func (c *memClient) takeCommits() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.commits
	c.commits = nil
	return out
}

// snapshot returns the stored items, sorted by key.
func (c *memClient) snapshot() []vppcfg.Item {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sortItems(slices.Collect(maps.Values(c.items)))
}

type memTxn struct {
	c      *memClient
	resync bool
	puts   []vppcfg.Item
	dels   []vppcfg.Key
}

func (t *memTxn) Put(items ...vppcfg.Item) vppcfg.Txn { t.puts = append(t.puts, items...); return t }
func (t *memTxn) Delete(keys ...vppcfg.Key) vppcfg.Txn {
	t.dels = append(t.dels, keys...)
	return t
}

func (t *memTxn) Commit(context.Context) error {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.failNext; err != nil {
		c.failNext = nil
		return err
	}
	next := map[vppcfg.Key]vppcfg.Item{}
	if !t.resync {
		maps.Copy(next, c.items)
	}
	put := map[vppcfg.Key]bool{}
	for _, it := range t.puts {
		k := it.Key()
		if put[k] {
			return fmt.Errorf("mem client: %s put twice in one transaction", k)
		}
		put[k] = true
		next[k] = it
	}
	for _, k := range t.dels {
		if put[k] {
			return fmt.Errorf("mem client: %s both put and deleted in one transaction", k)
		}
		delete(next, k)
	}
	if err := checkState(next); err != nil {
		return fmt.Errorf("mem client: commit would break an invariant: %w", err)
	}
	c.items = next
	kind := "txn"
	if t.resync {
		kind = "resync"
	}
	c.commits = append(c.commits, fmt.Sprintf("%s put=%s del=%s", kind, keyList(itemKeys(t.puts)...), keyList(t.dels...)))
	return nil
}

func itemKeys(items []vppcfg.Item) []vppcfg.Key {
	keys := make([]vppcfg.Key, len(items))
	for i, it := range items {
		keys[i] = it.Key()
	}
	return keys
}

// keyList renders keys sorted, as the mem client logs them.
func keyList(keys ...vppcfg.Key) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k.String()
	}
	slices.Sort(s)
	return "[" + strings.Join(s, " ") + "]"
}

// checkState checks what cnat, the ACL plugin and the VPP layer require of
// the renderer's whole desired state.
func checkState(items map[vppcfg.Key]vppcfg.Item) error {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	realIP := map[netip.Addr]bool{}
	permitAll, filtered := map[string]bool{}, map[string]bool{}
	for k, it := range items {
		switch v := it.(type) {
		case *vppcfg.CNATTranslation:
			checkTranslation(k, v, fail)
			if was, seen := realIP[v.VIP.Addr()]; seen && was != v.IsRealIP {
				fail("%s: translations of %s disagree on IsRealIP (cnat keeps the first)", k, v.VIP.Addr())
			}
			realIP[v.VIP.Addr()] = v.IsRealIP
		case *vppcfg.ACL:
			if len(v.Name) > renderer.MaxTagLen || len(v.Rules) == 0 {
				fail("%s: bad name length or no rules", k)
			}
			for _, r := range v.Rules {
				if v.Name != renderer.PermitAllACLName && (r.Protocol == vppcfg.ProtoAny || r.Dst.Bits() != 128) {
					fail("%s: rule %s matches more than one frontend (would also hit ICMPv6 or other hosts)", k, r)
				}
			}
		case *vppcfg.ACLBinding:
			if items[vppcfg.ACLKey(v.ACL)] == nil {
				fail("%s: ACL %q not desired", k, v.ACL)
			}
			if v.ACL == renderer.PermitAllACLName {
				permitAll[v.Interface] = true
			} else {
				filtered[v.Interface] = true
			}
		default:
			fail("%s: unexpected item kind", k)
		}
	}
	for ifName := range filtered {
		if !permitAll[ifName] {
			fail("interface %s has service ACLs but no permit-all ACL", ifName)
		}
	}
	for ifName := range permitAll {
		if !filtered[ifName] {
			fail("interface %s has the permit-all ACL but no service ACL (needless filtering)", ifName)
		}
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// checkTranslation checks one translation: never without paths (VPP 25.10
// aborts), IPv6 only, canonical path order, one path per backend, no
// destination port 0, ports allocated exactly when some path source-NATs.
func checkTranslation(k vppcfg.Key, t *vppcfg.CNATTranslation, fail func(string, ...any)) {
	if len(t.Paths) == 0 {
		fail("%s: empty path list", k)
	}
	if !t.VIP.Addr().Is6() {
		fail("%s: not an IPv6 VIP", k)
	}
	snat := false
	for i, p := range t.Paths {
		if !p.Dst.Addr().Is6() || p.Dst.Port() == 0 {
			fail("%s: bad path destination %s", k, p.Dst)
		}
		if i > 0 && t.Paths[i-1].Dst.Compare(p.Dst) >= 0 {
			fail("%s: paths not sorted or repeated", k)
		}
		snat = snat || p.Src.IsValid()
	}
	if snat != t.AllocPort {
		fail("%s: AllocPort %t but source NAT on some path %t", k, t.AllocPort, snat)
	}
}
