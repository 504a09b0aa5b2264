package vppcfg

import (
	"context"
	"errors"
	"fmt"
)

// client is one owner's handle on the reconciler's store.
type client struct {
	r     *Reconciler
	owner string
}

var _ Client = (*client)(nil)

func (c *client) Owner() string  { return c.owner }
func (c *client) Txn() Txn       { return &txn{c: c} }
func (c *client) ResyncTxn() Txn { return &txn{c: c, resync: true} }

// txn records Puts and Deletes in call order; the last operation on a key wins.
type txn struct {
	c         *client
	resync    bool
	ops       []txnOp
	committed bool
	err       error // a Put of nil: the whole transaction is rejected
}

var _ Txn = (*txn)(nil)

func (t *txn) Put(items ...Item) Txn {
	for _, it := range items {
		if it == nil {
			t.err = fmt.Errorf("%w: nil item", ErrInvalid)
			continue
		}
		t.ops = append(t.ops, txnOp{put: it, key: it.Key()})
	}
	return t
}

func (t *txn) Delete(keys ...Key) Txn {
	for _, k := range keys {
		t.ops = append(t.ops, txnOp{del: k})
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
