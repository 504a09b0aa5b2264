package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// client is one owner's handle on the reconciler's store.
type client struct {
	r     *Reconciler
	owner string
}

var _ vppcfg.Client = (*client)(nil)

func (c *client) Owner() string         { return c.owner }
func (c *client) Txn() vppcfg.Txn       { return &txn{c: c} }
func (c *client) ResyncTxn() vppcfg.Txn { return &txn{c: c, resync: true} }

// txn records Puts and Deletes in call order; the last operation on a key wins.
type txn struct {
	c         *client
	resync    bool
	ops       []core.TxnOp
	committed bool
	err       error // a Put of nil: the whole transaction is rejected
}

var (
	_ vppcfg.Txn         = (*txn)(nil)
	_ vppcfg.KeyedPutter = (*txn)(nil)
)

func (t *txn) Put(items ...vppcfg.Item) vppcfg.Txn { return t.PutKeyed(nil, items) }

// PutKeyed keeps keys[i] when it is items[i]'s key: the store then shares
// the name with the caller.
func (t *txn) PutKeyed(keys []vppcfg.Key, items []vppcfg.Item) vppcfg.Txn {
	t.ops = slices.Grow(t.ops, len(items)) // a resync puts 50,000 at once
	for i, it := range items {
		if it == nil {
			t.err = fmt.Errorf("%w: nil item", vppcfg.ErrInvalid)
			continue
		}
		k := it.Key()
		if i < len(keys) && keys[i] == k {
			k = keys[i]
		}
		t.ops = append(t.ops, core.TxnOp{Put: it, Key: k})
	}
	return t
}

func (t *txn) Delete(keys ...vppcfg.Key) vppcfg.Txn {
	for _, k := range keys {
		t.ops = append(t.ops, core.TxnOp{Del: k})
	}
	return t
}

// errCommitted is returned by a second Commit of the same transaction.
var errCommitted = errors.New("vppcfg: transaction already committed")

func (t *txn) Commit(ctx context.Context) error {
	if t.committed {
		return errCommitted
	}
	t.committed = true
	if t.err != nil {
		return t.err
	}
	return t.c.r.commit(ctx, t.c.owner, t.ops, t.resync)
}
