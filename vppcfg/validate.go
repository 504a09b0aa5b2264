package vppcfg

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// The errors Commit wraps: ErrInvalid marks an item the layer rejects,
// with the key and the offending field, so renderers find the bug without
// reading VPP logs; ErrConflict marks a Put that collides with another
// owner's item.
var (
	ErrInvalid  = core.ErrInvalid
	ErrConflict = core.ErrConflict
)

func invalid(k Key, field, format string, args ...any) error {
	return fmt.Errorf("%w %s: %s: %s", ErrInvalid, k, field, fmt.Sprintf(format, args...))
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
