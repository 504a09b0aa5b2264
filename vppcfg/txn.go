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

// KeyedPutter is a Txn that also takes items with the keys their caller
// holds for them. A renderer indexes its items by key, so each key's name
// exists already; handed over, it is the one copy the layer keeps instead
// of a second (24 bytes a desired item). A key that is not its item's is
// not taken: that item is put at its own key, as by Put.
type KeyedPutter interface {
	// PutKeyed puts items, expecting items[i] at keys[i].
	PutKeyed(keys []Key, items []Item) Txn
}

// PutKeyed puts items into t with the keys expected for them when t takes
// keys (KeyedPutter), and as Put does otherwise or when the two lists
// differ in length.
func PutKeyed(t Txn, keys []Key, items []Item) Txn {
	if kp, ok := t.(KeyedPutter); ok && len(keys) == len(items) {
		return kp.PutKeyed(keys, items)
	}
	return t.Put(items...)
}
