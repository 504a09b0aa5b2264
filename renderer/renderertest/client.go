package renderertest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/vppcfgtest"
)

// Check checks a renderer's whole desired state and returns one message per
// violated invariant.
type Check func(items map[vppcfg.Key]vppcfg.Item) []string

// Client is an in-memory vppcfg.Client double: it keeps the desired items of
// one owner with the VPP layer's transaction semantics (a ResyncTxn replaces
// everything, an incremental Txn applies its puts and deletes, the last
// operation on a key wins), logs every commit, and rejects a commit that the
// VPP layer would reject (it asks vppcfgtest.Validate and vppcfgtest.ValidateSet) or
// that would break CheckVPP or one of the extra checks, so that a random
// call sequence that breaks an invariant fails at the call that broke it.
// It is safe for concurrent use.
type Client struct {
	owner  string
	checks []Check

	mu       sync.Mutex
	items    map[vppcfg.Key]vppcfg.Item
	commits  []Commit
	failNext error
}

// NewClient returns an empty client for owner; checks are run after
// CheckVPP at every commit.
func NewClient(owner string, checks ...Check) *Client {
	return &Client{owner: owner, checks: checks, items: map[vppcfg.Key]vppcfg.Item{}}
}

// Owner returns the owner name given to NewClient.
func (c *Client) Owner() string { return c.owner }

// Txn starts an incremental transaction.
func (c *Client) Txn() vppcfg.Txn { return &txn{c: c} }

// ResyncTxn starts a transaction that replaces the whole desired state.
func (c *Client) ResyncTxn() vppcfg.Txn { return &txn{c: c, resync: true} }

// FailNextCommit makes the next commit return err and change nothing, as
// the VPP layer does for a transaction it rejects.
func (c *Client) FailNextCommit(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failNext = err
}

// Items returns the desired items, sorted by key.
func (c *Client) Items() []vppcfg.Item {
	c.mu.Lock()
	defer c.mu.Unlock()
	return renderer.SortItems(slices.Collect(maps.Values(c.items)))
}

// TakeCommits returns the commits since the last call, oldest first.
func (c *Client) TakeCommits() []Commit {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.commits
	c.commits = nil
	return out
}

// RequireCommits fails the test unless the commits since the last
// TakeCommits are exactly want, each as Commit.String renders it.
func RequireCommits(t testing.TB, c *Client, want ...string) {
	t.Helper()
	var got []string
	for _, m := range c.TakeCommits() {
		got = append(got, m.String())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("commits:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// Commit is one successful commit, its keys sorted: per key its last
// operation, a Put or a Delete.
type Commit struct {
	Resync  bool
	Puts    []vppcfg.Key
	Deletes []vppcfg.Key
	// Keyed are the puts handed over with their own key (vppcfg.PutKeyed),
	// sorted; String leaves them out.
	Keyed []vppcfg.Key
}

// String renders the commit as "txn|resync put=[keys] del=[keys]".
func (m Commit) String() string {
	kind := "txn"
	if m.Resync {
		kind = "resync"
	}
	return fmt.Sprintf("%s put=%s del=%s", kind, KeyList(m.Puts...), KeyList(m.Deletes...))
}

// KeyList renders keys sorted, the way Commit.String does.
func KeyList(keys ...vppcfg.Key) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = k.String()
	}
	slices.Sort(s)
	return "[" + strings.Join(s, " ") + "]"
}

// txn records Puts and Deletes in call order: as in the VPP layer's Txn,
// the last operation on a key wins.
type txn struct {
	c      *Client
	resync bool
	ops    []txnOp
}

// txnOp is a Put (isPut) or a Delete (del); keyed: a put handed over with
// its own key.
type txnOp struct {
	isPut, keyed bool
	put          vppcfg.Item
	del          vppcfg.Key
}

var _ vppcfg.KeyedPutter = (*txn)(nil)

func (t *txn) Put(items ...vppcfg.Item) vppcfg.Txn { return t.PutKeyed(nil, items) }

// PutKeyed is Put, recording which items came with their own key.
func (t *txn) PutKeyed(keys []vppcfg.Key, items []vppcfg.Item) vppcfg.Txn {
	for i, it := range items {
		keyed := i < len(keys) && it != nil && keys[i] == it.Key()
		t.ops = append(t.ops, txnOp{isPut: true, put: it, keyed: keyed})
	}
	return t
}

func (t *txn) Delete(keys ...vppcfg.Key) vppcfg.Txn {
	for _, k := range keys {
		t.ops = append(t.ops, txnOp{del: k})
	}
	return t
}

// Commit applies the transaction if the VPP layer would accept it
// (vppcfgtest.Validate of every put, vppcfgtest.ValidateSet of the result) and the
// resulting state passes every check.
func (t *txn) Commit(context.Context) error {
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
	put, keyed := map[vppcfg.Key]bool{}, map[vppcfg.Key]bool{}
	for _, op := range t.ops {
		if !op.isPut {
			delete(next, op.del)
			put[op.del] = false
			continue
		}
		if err := vppcfgtest.Validate(op.put); err != nil {
			return fmt.Errorf("renderertest client: %w", err)
		}
		k := op.put.Key()
		next[k] = op.put
		put[k] = true
		keyed[k] = op.keyed
	}
	if err := vppcfgtest.ValidateSet(c.owner, slices.Collect(maps.Values(next))); err != nil {
		return fmt.Errorf("renderertest client: %w", err)
	}
	errs := CheckVPP(next)
	for _, check := range c.checks {
		errs = append(errs, check(next)...)
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return fmt.Errorf("renderertest client: commit would break an invariant: %s", strings.Join(errs, "; "))
	}
	m := Commit{Resync: t.resync}
	for k, isPut := range put {
		if isPut {
			m.Puts = append(m.Puts, k)
			if keyed[k] {
				m.Keyed = append(m.Keyed, k)
			}
		} else {
			m.Deletes = append(m.Deletes, k)
		}
	}
	slices.SortFunc(m.Puts, vppcfg.Key.Compare)
	slices.SortFunc(m.Keyed, vppcfg.Key.Compare)
	slices.SortFunc(m.Deletes, vppcfg.Key.Compare)
	c.items = next
	c.commits = append(c.commits, m)
	return nil
}
