package engine

import (
	"context"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// A key handed with its item is the store's copy of the name; a key that
// is not the item's is not taken, and the item goes to its own key.
func TestPutKeyedSharesTheCallersName(t *testing.T) {
	r := NewReconciler(newFakeDriver(), testOptions())
	a, b := static("10.96.0.10:80", "10.1.1.1:80"), static("10.96.0.11:80", "10.1.1.2:80")
	ka := a.Key() // the caller's copy
	wrong := vppcfg.Key{Kind: vppcfg.KindDropRoute, Name: "vrf0/10.96.0.11/32"}
	require.NoError(t, vppcfg.PutKeyed(r.Client("svc").ResyncTxn(), []vppcfg.Key{ka, wrong}, []vppcfg.Item{a, b}).Commit(context.Background()))

	r.storeMu.RLock()
	defer r.storeMu.RUnlock()
	var names []string
	for k := range r.store.Items {
		names = append(names, k.String())
		if k == ka {
			assert.Same(t, unsafe.StringData(ka.Name), unsafe.StringData(k.Name), "the store keeps the caller's name")
		}
	}
	assert.ElementsMatch(t, []string{ka.String(), b.Key().String()}, names, "b at its own key, nothing at the wrong one")
}

// Keys and items of different lengths are put as Put puts them.
func TestPutKeyedWithoutKeys(t *testing.T) {
	r := NewReconciler(newFakeDriver(), testOptions())
	a := static("10.96.0.10:80", "10.1.1.1:80")
	require.NoError(t, vppcfg.PutKeyed(r.Client("svc").ResyncTxn(), nil, []vppcfg.Item{a}).Commit(context.Background()))
	_, ok := r.store.Items[a.Key()]
	assert.True(t, ok)
}
