package core

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid and ErrConflict are vppcfg's (it re-exports them): a commit
// wraps ErrInvalid for an item the layer rejects and ErrConflict for a Put
// that collides with another owner's item.
var (
	ErrInvalid  = errors.New("invalid item")
	ErrConflict = errors.New("conflicting items")
)

// MaxOwnerLen bounds owner names so that a tag always keeps a readable
// label: vppcfg.MaxOwnerLen (a test of vppcfg checks they agree).
const MaxOwnerLen = 24

// ValidateOwner checks an owner name: it becomes part of every tag.
func ValidateOwner(owner string) error {
	switch {
	case owner == "":
		return fmt.Errorf("owner: empty name")
	case len(owner) > MaxOwnerLen:
		return fmt.Errorf("owner %q: longer than %d bytes", owner, MaxOwnerLen)
	case strings.ContainsAny(owner, ": \x00"):
		return fmt.Errorf("owner %q: must not contain ':', spaces or NUL", owner)
	}
	return nil
}
