package processor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vppsvc/vppsvc/model"
)

// compareIDs must order exactly as model.ServiceID.Compare: renderers get
// the services of a resync in that order.
func TestCompareIDsIsServiceIDOrder(t *testing.T) {
	ids := []model.ServiceID{
		{}, {Namespace: "default"}, {Namespace: "default", Name: "a"}, {Namespace: "default", Name: "b"},
		{Namespace: "default", Name: "ab"}, {Namespace: "kube-system", Name: "a"}, {Namespace: "a", Name: "default"},
		{Namespace: "é", Name: "x"}, {Namespace: "e", Name: "x"}, {Name: "a"},
	}
	for _, a := range ids {
		for _, b := range ids {
			assert.Equal(t, a.Compare(b), compareIDs(a, b), "%v vs %v", a, b)
		}
	}
}
