package renderer

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"

	"github.com/vppsvc/vppsvc/model"
)

// MaxTagLen is the longest name VPP stores as an object tag: tags are 64-byte
// fields that must hold a terminating NUL, so 63 bytes of text. ACL names and
// mapping labels end up in tags, so every name built here fits.
const MaxTagLen = 63

// hashLen is the number of base32 characters of ShortHash: 10 characters carry
// 50 bits, which keeps the chance of two of 100,000 services colliding below
// one in a million (n²/2^51) even when their readable parts are truncated to
// the same text.
const hashLen = 10

// lowerBase32 is RFC 4648 base32 in lower case without padding: only letters
// and digits, so hashes are safe in tags, logs and CLI arguments.
var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// ShortHash returns a 10-character lower-case base32 digest of s. It makes
// names unique when their readable part has to be truncated.
func ShortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return lowerBase32.EncodeToString(sum[:])[:hashLen]
}

// ServiceLabel returns the label renderers put on the NAT mappings of a
// service, which the VPP layer stores in the mapping's tag: the service ID
// "namespace/name" when it fits in MaxTagLen bytes, otherwise a hash followed
// by as much of the ID as fits ("<hash>~<namespace/name…>"), so labels stay
// unique and recognisable. The "~" cannot occur in a Kubernetes name, so a
// hashed label is never mistaken for an ID.
func ServiceLabel(id model.ServiceID) string {
	s := id.String()
	if len(s) <= MaxTagLen {
		return s
	}
	return truncate(ShortHash(s)+"~"+s, MaxTagLen)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
// Kubernetes names are ASCII, but a renderer prefix might not be.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
