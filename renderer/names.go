package renderer

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// MaxLabelLen bounds the labels and ACL names built here: VPP's tag field
// holds 63 bytes of text (vppcfg.MaxTagLen), and a name longer than that
// could not even be read back whole. A name that fits is still not the whole
// tag: the VPP layer writes "vppsvc:<owner>:<name>" and shortens a tag that
// does not fit with a hash (vppcfgtest.Tag shows it), so a long name keeps
// its readable start in VPP, and the layer recognises it by the hash.
const MaxLabelLen = vppcfg.MaxTagLen

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
// "namespace/name" when it fits in MaxLabelLen bytes, otherwise a hash followed
// by as much of the ID as fits ("<hash>~<namespace/name…>"), so labels stay
// unique and recognisable. The "~" cannot occur in a Kubernetes name, so a
// hashed label is never mistaken for an ID.
func ServiceLabel(id model.ServiceID) string {
	s := id.String()
	if len(s) <= MaxLabelLen {
		return s
	}
	return truncate(ShortHash(s)+"~"+s, MaxLabelLen)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
// Kubernetes names are ASCII, but a renderer prefix might not be.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
