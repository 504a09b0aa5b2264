// Package ranksort orders large lists by string keys without comparing
// strings: each element is ranked by two words (the bytes of its keys past
// the prefix every key shares), the ranks are radix-sorted, and only the
// elements whose words tie are compared in full. A cold sync sorts 50,000
// services and as many of the VPP layer's changes; sorted by comparison,
// most of the time went to reading strings spread over the heap and to
// moving large elements under the collector's write barrier.
package ranksort

import (
	"encoding/binary"
	"slices"
)

// Rank is an element's place in the order as far as two words tell it,
// Hi first. Hi is exact — equal only for elements whose first key is equal,
// such as a small number or FirstWord's word of a short string — unless its
// low byte is Inexact; Lo may tie for different keys (Word). Either word
// orders as its key does where the words differ. I is the element's index.
type Rank struct {
	Hi, Lo uint64
	I      int32
}

// Inexact marks a Hi word that may tie for different first keys.
const Inexact = 0xFF

// Order sorts ranks by Hi then Lo and returns the elements' indexes in
// that order, the elements whose words tie ordered by tie (a full
// comparison of the elements at two indexes, as slices.SortFunc takes):
// those of equal Hi and Lo, and all of those of one inexact Hi. ranks
// serves as scratch space.
func Order(ranks []Rank, tie func(a, b int32) int) []int32 {
	ranks = radix(ranks, make([]Rank, len(ranks)))
	order := make([]int32, len(ranks))
	for i, r := range ranks {
		order[i] = r.I
	}
	for lo := 0; lo < len(ranks); {
		hi := lo + 1
		inexact := byte(ranks[lo].Hi) == Inexact
		for hi < len(ranks) && ranks[hi].Hi == ranks[lo].Hi && (inexact || ranks[hi].Lo == ranks[lo].Lo) {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(order[lo:hi], tie)
		}
		lo = hi
	}
	return order
}

// radix sorts ranks by (Hi, Lo), one byte a pass from the least
// significant (each pass is stable, so the passes compose), moving them
// between ranks and tmp; it returns the slice that holds the result. A
// byte that is the same in every rank costs a count and no move.
func radix(ranks, tmp []Rank) []Rank {
	if len(ranks) < 2 {
		return ranks
	}
	for b := range 16 {
		hi, shift := b >= 8, 8*(b%8)
		var count [256]int
		for i := range ranks {
			count[digit(&ranks[i], hi, shift)]++
		}
		if count[digit(&ranks[0], hi, shift)] == len(ranks) {
			continue
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for i := range ranks {
			d := digit(&ranks[i], hi, shift)
			tmp[count[d]] = ranks[i]
			count[d]++
		}
		ranks, tmp = tmp, ranks
	}
	return ranks
}

// digit is the byte of r's Hi or Lo at shift.
func digit(r *Rank, hi bool, shift int) byte {
	if hi {
		return byte(r.Hi >> shift)
	}
	return byte(r.Lo >> shift)
}

// Word is the eight bytes of s from skip on, big-endian and padded with
// zeros: a string that is a prefix of another gets a word at or below the
// other's, and strings that differ within those bytes get words in their
// order. Strings whose words are equal are told apart by the tie.
func Word(s string, skip int) uint64 {
	var b [8]byte
	copy(b[:], s[skip:])
	return binary.BigEndian.Uint64(b[:])
}

// FirstWord is an exact Hi for s past skip when the rest is at most seven
// bytes long (those bytes, zero-padded, and the rest's length in the low
// byte), and an Inexact one otherwise (its first seven bytes): a string
// that is a prefix of another still gets the smaller word.
func FirstWord(s string, skip int) uint64 {
	rest := s[skip:]
	var b [8]byte
	copy(b[:7], rest)
	b[7] = Inexact
	if len(rest) <= 7 {
		b[7] = byte(len(rest))
	}
	return binary.BigEndian.Uint64(b[:])
}

// SharedPrefix is the length of the prefix the n strings key(0) … key(n-1)
// share (the "172.30." of a cluster's ClusterIPs), for Word to skip.
func SharedPrefix(n int, key func(i int) string) int {
	if n == 0 {
		return 0
	}
	p := key(0)
	for i := 1; i < n && p != ""; i++ {
		p = Common(p, key(i))
	}
	return len(p)
}

// Common is the longest prefix of a that b starts with.
func Common(a, b string) string {
	j := 0
	for j < len(a) && j < len(b) && a[j] == b[j] {
		j++
	}
	return a[:j]
}
