package engine

import (
	"github.com/vppsvc/vppsvc/vppcfg"
	"github.com/vppsvc/vppsvc/vppcfg/internal/core"
)

// readySet is which desired keys a diff can apply now: those of its scope
// that readiness did not hold back (blocked, pending, waiting for a
// dependency), and those out of the scope that a gate's reset decided. It
// keeps the few keys held back rather than every ready one: a cold sync's
// 50,000 ready keys cost no map entry, nor a lookup each time the diff
// walks them.
type readySet struct {
	sc *scope
	// notReady are the desired keys of the scope held back.
	notReady map[vppcfg.Key]bool
	// decided are keys out of the scope, ready or not (gateReset).
	decided map[vppcfg.Key]bool
	// count is how many keys of the scope are ready.
	count int
}

// hold marks a desired key of the scope as not ready.
func (s *readySet) hold(k vppcfg.Key) {
	if s.notReady == nil {
		s.notReady = map[vppcfg.Key]bool{}
	}
	if !s.notReady[k] {
		s.notReady[k] = true
		s.count--
	}
}

// held reports whether a desired key of the scope (one eachDesired
// visits) is held back: the cheap form of !has for those keys.
func (s *readySet) held(k vppcfg.Key) bool { return s.notReady[k] }

// decide records whether a key out of the scope is ready.
func (s *readySet) decide(k vppcfg.Key, ready bool) {
	if s.decided == nil {
		s.decided = map[vppcfg.Key]bool{}
	}
	s.decided[k] = ready
}

// has reports whether k is ready.
func (s *readySet) has(k vppcfg.Key) bool {
	if ready, ok := s.decided[k]; ok {
		return ready
	}
	return !s.notReady[k] && s.sc.visits(k)
}

// visits reports whether eachDesired visits k: a desired key of the
// scope, or any desired binding when bindings are merged in this diff.
func (sc *scope) visits(k vppcfg.Key) bool {
	if !sc.in.Desired.Has(k) {
		return false
	}
	if sc.in.Scope == nil || (sc.merges && core.Merged(k.Kind)) {
		return true
	}
	return sc.in.Scope[k]
}
