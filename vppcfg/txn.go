package vppcfg

import "context"

// Client is one owner's handle on the desired configuration. Each renderer
// holds its own Client; items are owned per client, so one renderer's resync
// never removes another's items. Two owners may put the same key only with
// equal values (a shared item, removed when its last owner deletes it).
type Client interface {
	// Owner is the name under which this client's items are owned and tagged.
	Owner() string
	// Txn starts an incremental transaction.
	Txn() Txn
	// ResyncTxn starts a transaction that, on Commit, replaces everything this
	// owner desired: items it owned but did not put are removed.
	ResyncTxn() Txn
}

// Txn collects the changes of one owner and applies them at once on Commit.
type Txn interface {
	Put(items ...Item) Txn
	Delete(keys ...Key) Txn
	// Commit records the new desired state and applies the resulting VPP
	// operations before it returns. It returns an error only for changes the
	// layer rejects (an invalid item, a conflict with another owner); failed
	// VPP operations are retried by the reconciler and reported through item
	// status, not by Commit.
	Commit(ctx context.Context) error
}
