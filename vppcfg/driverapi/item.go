package driverapi

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/vppsvc/vppsvc/vppcfg/internal/kindname"
)

// Item is one piece of VPP configuration.
type Item interface {
	// Key identifies the item; two items with equal keys describe the same VPP object.
	Key() Key
	// Equal reports whether other is the same configuration (same kind and fields).
	Equal(other Item) bool
	// String renders the item on one line for logs and dumps.
	String() string
}

// Kind is the kind of an item. The order of vppcfg's constants is the order
// in which kinds are created (dependencies first); deletes run in reverse
// order.
type Kind uint8

func (k Kind) String() string {
	if n := kindname.Of(uint8(k)); n != "" {
		return n
	}
	return fmt.Sprintf("kind-%d", uint8(k))
}

// Key identifies one item: its kind, and a name unique within the kind.
type Key struct {
	Kind Kind
	Name string
}

func (k Key) String() string { return k.Kind.String() + "/" + k.Name }

// Compare orders keys by kind (creation order), then name. The names are
// compared once (strings.Compare; cmp.Compare compares unequal strings
// twice): the VPP layer sorts a cold sync's keys with it.
func (k Key) Compare(o Key) int {
	if c := cmp.Compare(k.Kind, o.Kind); c != 0 {
		return c
	}
	return strings.Compare(k.Name, o.Name)
}
