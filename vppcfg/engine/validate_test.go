package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestCommitValidatesEveryItem(t *testing.T) {
	r := NewReconciler(newFakeDriver(), testOptions())
	err := r.Client("a").Txn().Put(acl("ok"), &vppcfg.ACL{}).Commit(context.Background())
	require.ErrorIs(t, err, vppcfg.ErrInvalid)
	assert.Empty(t, r.Desired(), "a transaction with one invalid item applies nothing")
}
