package core

import "fmt"

// What tests and test doubles ask of the layer (vppcfg/vppcfgtest exports
// it; vppcfg's own tests call it here).

// Validate checks one item as a commit does; a nil item is invalid.
func Validate(it Item) error {
	if it == nil {
		return fmt.Errorf("%w: nil item", ErrInvalid)
	}
	return ValidateItem(it.Key(), it)
}

// ValidateSet checks one owner's whole desired set as a resync commit
// does. Of items with one key the last counts, but each is validated.
func ValidateSet(owner string, items []Item) error {
	ops := make([]TxnOp, 0, len(items))
	for _, it := range items {
		if it == nil {
			return fmt.Errorf("%w: nil item", ErrInvalid)
		}
		ops = append(ops, TxnOp{Put: it, Key: it.Key()})
	}
	return NewStore().Commit(owner, ops, true)
}

// SharedSetting is the group and value of the setting VPP keeps once per
// group (Descriptor.Shared); ok is false for kinds without one.
func SharedSetting(it Item) (group, value string, ok bool) {
	if it == nil {
		return "", "", false
	}
	if f := Of(it).Shared; f != nil {
		return f(it)
	}
	return "", "", false
}
