package nat44

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// fakeClient is an in-memory vppcfg.Client: it keeps the desired items of one
// owner, records every commit as sorted key lists, and checks after each
// commit the invariants VPP and the VPP layer impose on the whole state (so
// a random sequence that breaks one fails at the step that broke it).
type fakeClient struct {
	mu      sync.Mutex
	store   map[vppcfg.Key]vppcfg.Item
	commits []commitLog
	// failNext, when set, makes the next Commit fail with it (and change nothing).
	failNext error
}

type commitLog struct {
	Resync  bool
	Puts    []string
	Deletes []string
}

func (l commitLog) String() string {
	kind := "txn"
	if l.Resync {
		kind = "resync"
	}
	return fmt.Sprintf("%s put=%v del=%v", kind, l.Puts, l.Deletes)
}

func newFakeClient() *fakeClient { return &fakeClient{store: map[vppcfg.Key]vppcfg.Item{}} }

func (c *fakeClient) Owner() string         { return "nat44" }
func (c *fakeClient) Txn() vppcfg.Txn       { return &fakeTxn{c: c} }
func (c *fakeClient) ResyncTxn() vppcfg.Txn { return &fakeTxn{c: c, resync: true} }

// takeCommits returns the commits since the last call.
func (c *fakeClient) takeCommits() []commitLog {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.commits
	c.commits = nil
	return out
}

// snapshot returns the stored items, sorted by key.
func (c *fakeClient) snapshot() []vppcfg.Item {
	c.mu.Lock()
	defer c.mu.Unlock()
	items := make([]vppcfg.Item, 0, len(c.store))
	for _, it := range c.store {
		items = append(items, it)
	}
	return sortItems(items)
}

type fakeTxn struct {
	c      *fakeClient
	resync bool
	puts   []vppcfg.Item
	dels   []vppcfg.Key
}

func (t *fakeTxn) Put(items ...vppcfg.Item) vppcfg.Txn { t.puts = append(t.puts, items...); return t }
func (t *fakeTxn) Delete(keys ...vppcfg.Key) vppcfg.Txn {
	t.dels = append(t.dels, keys...)
	return t
}

func (t *fakeTxn) Commit(context.Context) error {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.failNext; err != nil {
		c.failNext = nil
		return err
	}
	next := map[vppcfg.Key]vppcfg.Item{}
	if !t.resync {
		for k, v := range c.store {
			next[k] = v
		}
	}
	log := commitLog{Resync: t.resync}
	put := map[vppcfg.Key]bool{}
	for _, it := range t.puts {
		k := it.Key()
		if put[k] {
			return fmt.Errorf("fake client: %s put twice in one transaction", k)
		}
		put[k] = true
		next[k] = it
		log.Puts = append(log.Puts, k.String())
	}
	for _, k := range t.dels {
		if put[k] {
			return fmt.Errorf("fake client: %s both put and deleted in one transaction", k)
		}
		delete(next, k)
		log.Deletes = append(log.Deletes, k.String())
	}
	if err := checkInvariants(next); err != nil {
		return fmt.Errorf("fake client: commit would break an invariant: %w", err)
	}
	sort.Strings(log.Puts)
	sort.Strings(log.Deletes)
	c.store = next
	c.commits = append(c.commits, log)
	return nil
}

// checkInvariants checks what VPP and the VPP layer require of the whole
// desired state of the renderer.
func checkInvariants(store map[vppcfg.Key]vppcfg.Item) error {
	var errs []error
	external := map[string]vppcfg.Key{}
	claimExternal := func(k vppcfg.Key, ext fmt.Stringer, proto vppcfg.Protocol) {
		id := ext.String() + "/" + proto.String()
		if other, dup := external[id]; dup {
			errs = append(errs, fmt.Errorf("%s and %s share the VPP external key %s", other, k, id))
		}
		external[id] = k
	}
	permitAll := map[string]bool{}
	filtered := map[string]bool{}
	nat := false
	for k, it := range store {
		switch v := it.(type) {
		case *vppcfg.NAT44LBMapping:
			nat = true
			claimExternal(k, v.External, v.Protocol)
			if len(v.Locals) < 2 {
				errs = append(errs, fmt.Errorf("%s: fewer than 2 locals", k))
			}
			if !slices.IsSortedFunc(v.Locals, func(a, b vppcfg.NAT44LBLocal) int { return a.Addr.Compare(b.Addr) }) {
				errs = append(errs, fmt.Errorf("%s: locals not sorted", k))
			}
			for _, l := range v.Locals {
				if l.Probability == 0 {
					errs = append(errs, fmt.Errorf("%s: local %s has probability 0", k, l.Addr))
				}
			}
			if !v.Out2InOnly {
				errs = append(errs, fmt.Errorf("%s: not out2in-only", k))
			}
		case *vppcfg.NAT44StaticMapping:
			nat = true
			claimExternal(k, v.External, v.Protocol)
			if !v.Out2InOnly {
				errs = append(errs, fmt.Errorf("%s: not out2in-only", k))
			}
		case *vppcfg.NAT44IdentityMapping:
			nat = true
			claimExternal(k, netip.AddrPortFrom(v.Addr, v.Port), v.Protocol)
		case *vppcfg.NAT44Interface, *vppcfg.NAT44Address:
			nat = true
		case *vppcfg.ACL:
			if len(v.Name) > renderer.MaxTagLen {
				errs = append(errs, fmt.Errorf("%s: name longer than %d bytes", k, renderer.MaxTagLen))
			}
			if len(v.Rules) == 0 {
				errs = append(errs, fmt.Errorf("%s: no rules (would deny everything)", k))
			}
		case *vppcfg.ACLBinding:
			if _, ok := store[vppcfg.ACLKey(v.ACL)]; !ok {
				errs = append(errs, fmt.Errorf("%s: ACL %q not desired", k, v.ACL))
			}
			if v.ACL == renderer.PermitAllACLName {
				permitAll[v.Interface] = true
			} else {
				filtered[v.Interface] = true
			}
		}
	}
	for ifName := range filtered {
		if !permitAll[ifName] {
			errs = append(errs, fmt.Errorf("interface %s has service ACLs but no permit-all ACL", ifName))
		}
	}
	for ifName := range permitAll {
		if !filtered[ifName] {
			errs = append(errs, fmt.Errorf("interface %s has the permit-all ACL but no service ACL (needless filtering)", ifName))
		}
	}
	if nat && store[vppcfg.NAT44GlobalKey()] == nil {
		errs = append(errs, errors.New("NAT44 items without nat44-global"))
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		sort.Strings(msgs)
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}
