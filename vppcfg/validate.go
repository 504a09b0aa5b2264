package vppcfg

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// ErrInvalid marks an item the layer rejects; Commit wraps it with the key
// and the offending field, so renderers find the bug without reading VPP logs.
var ErrInvalid = core.ErrInvalid

// ErrConflict marks a Put that collides with another owner's item.
var ErrConflict = core.ErrConflict

func invalid(k Key, field, format string, args ...any) error {
	return fmt.Errorf("%w %s: %s: %s", ErrInvalid, k, field, fmt.Sprintf(format, args...))
}

// Validate checks one item as Commit does: an error wrapping ErrInvalid
// names the key and the field VPP would reject, or would accept and then
// misbehave on (VPP 25.10 divides by zero on all-zero LB weights and aborts
// on a cnat translation without paths).
func Validate(it Item) error {
	if it == nil {
		return fmt.Errorf("%w: nil item", ErrInvalid)
	}
	return core.ValidateItem(it.Key(), it)
}

// ValidateSet checks one owner's whole desired set as Commit checks a
// transaction: the owner name, every item (Validate), and the items VPP
// cannot hold together (one mapping per external key, an output-feature
// interface that is also inside or outside). Of items with one key the
// last counts, as in a transaction, but each is validated. Test doubles of Client call it so that
// they reject what the layer rejects.
func ValidateSet(owner string, items []Item) error {
	ops := make([]core.TxnOp, 0, len(items))
	for _, it := range items {
		if it == nil {
			return fmt.Errorf("%w: nil item", ErrInvalid)
		}
		ops = append(ops, core.TxnOp{Put: it, Key: it.Key()})
	}
	return core.NewStore().Commit(owner, ops, true)
}

func prefix(k Key, field string, p netip.Prefix) error {
	if !p.IsValid() {
		return invalid(k, field, "invalid prefix")
	}
	if p.Masked() != p {
		return invalid(k, field, "host bits set in %s (VPP rejects it; use %s)", p, p.Masked())
	}
	return nil
}

func tagSafe(k Key, field, s string) error {
	if strings.ContainsRune(s, 0) {
		return invalid(k, field, "contains NUL")
	}
	return nil
}
