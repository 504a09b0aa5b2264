package renderertest

import (
	"context"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// NullClient is a vppcfg.Client that accepts every transaction and keeps
// nothing, so that a benchmark measures a renderer alone (Client checks
// invariants over the whole state at every commit). It counts the items
// put and deleted, and the ACL rules put.
type NullClient struct {
	Name                    string // the owner
	Puts, Deletes, ACLRules int
}

func (c *NullClient) Owner() string         { return c.Name }
func (c *NullClient) Txn() vppcfg.Txn       { return &nullTxn{c: c} }
func (c *NullClient) ResyncTxn() vppcfg.Txn { return &nullTxn{c: c} }

type nullTxn struct{ c *NullClient }

func (t *nullTxn) Put(items ...vppcfg.Item) vppcfg.Txn {
	t.c.Puts += len(items)
	for _, it := range items {
		if acl, ok := it.(*vppcfg.ACL); ok {
			t.c.ACLRules += len(acl.Rules)
		}
	}
	return t
}

func (t *nullTxn) Delete(keys ...vppcfg.Key) vppcfg.Txn {
	t.c.Deletes += len(keys)
	return t
}

func (t *nullTxn) Commit(context.Context) error { return nil }
