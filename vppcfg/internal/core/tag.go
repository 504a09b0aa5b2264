package core

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// The VPP tags of the kinds VPP lets us tag (vppcfg's tag.go says how they
// carry ownership): the engine writes them on create and parses them from
// dumps; the renderers see none of it.

// TagPrefix starts every tag this layer writes.
const TagPrefix = "vppsvc:"

// MaxTagLen is the longest tag VPP stores (string[64] including the NUL).
const MaxTagLen = 63

const tagHashLen = 8

// Tag returns the VPP tag for an item of owner with the given label.
func Tag(owner, label string) string {
	full := TagPrefix + owner + ":" + label
	if len(full) <= MaxTagLen {
		return full
	}
	sum := sha256.Sum256([]byte(owner + "\x00" + label))
	keep := MaxTagLen - 1 - tagHashLen
	for keep > 0 && !utf8.RuneStart(full[keep]) {
		keep--
	}
	return full[:keep] + "~" + hex.EncodeToString(sum[:])[:tagHashLen]
}

// ParseTag splits a tag written by this layer into owner and label. The
// label of a shortened tag is its readable, cut part. ok is false for tags
// this layer did not write.
func ParseTag(tag string) (owner, label string, ok bool) {
	rest, found := strings.CutPrefix(tag, TagPrefix)
	if !found {
		return "", "", false
	}
	owner, label, found = strings.Cut(rest, ":")
	if !found || owner == "" {
		return "", "", false
	}
	return owner, label, true
}
