package fakevpp

import (
	"container/list"
	"time"
)

// NAT44-ED frees an expired session only when something looks at it: a
// packet of its flow, or the LRU reclaim that every session allocation
// runs first (nat_ed_session_alloc → nat_lru_free_one, nat44_ed_inlines.h).
// The reclaim looks at the head (least recently moved session) of each of
// five per-thread lists in a fixed order and frees the first head that has
// expired, at most one session per allocation. Affinity records depend on
// it: a record is released only when its last session is freed
// (nat44_ed_free_session_data → nat_affinity_unlock).

// lruList names the list a session is on (the tsm->*_lru_head_index).
type lruList uint8

const (
	lruTCPTrans lruList = iota
	lruUDP
	lruUnknown
	lruICMP
	lruTCPEstab
	lruLists
)

// lruPlace is a session's element on its list and when it last moved.
type lruPlace struct {
	list       lruList
	elem       *list.Element
	lastUpdate time.Duration
}

// sessionLRU is the five lists of one thread (the fake has one).
type sessionLRU struct {
	lists [lruLists]*list.List
}

func newSessionLRU() sessionLRU {
	var l sessionLRU
	for i := range l.lists {
		l.lists[i] = list.New()
	}
	return l
}

// listOf is nat_ed_lru_insert's choice by protocol, and the TCP state
// machine's: established sessions on the established list, the others on
// the transitory one.
func listOf(s *session) lruList {
	switch s.proto {
	case protoUDP:
		return lruUDP
	case protoTCP:
		if s.tcpState == tcpEstablished {
			return lruTCPEstab
		}
		return lruTCPTrans
	case protoICMP:
		return lruICMP
	}
	return lruUnknown
}

// insert appends a new session to the tail of its list.
func (l *sessionLRU) insert(s *session, now time.Duration) {
	s.lru = lruPlace{list: listOf(s), lastUpdate: now}
	s.lru.elem = l.lists[s.lru.list].PushBack(s)
}

// remove takes a freed session off its list.
func (l *sessionLRU) remove(s *session) {
	if s.lru.elem != nil {
		l.lists[s.lru.list].Remove(s.lru.elem)
		s.lru.elem = nil
	}
}

// move puts a session whose TCP state changed at the tail of its new list.
func (l *sessionLRU) move(s *session, now time.Duration) {
	if s.lru.elem == nil {
		return
	}
	l.remove(s)
	l.insert(s, now)
}

// refresh is nat44_session_update_lru: a session heard more than a second
// after its last move goes to the tail of its list again.
func (l *sessionLRU) refresh(s *session) {
	if s.lru.elem == nil || s.lastHeard <= s.lru.lastUpdate+time.Second {
		return
	}
	l.lists[s.lru.list].MoveToBack(s.lru.elem)
	s.lru.lastUpdate = s.lastHeard
}

// lruFreeOne is nat_lru_free_one: the first expired list head, in the
// order TCP transitory, UDP, unknown protocol, ICMP, TCP established, is
// freed. It reports whether one was.
func (n *natState) lruFreeOne(v *VPP) bool {
	for _, ls := range n.lru.lists {
		head := ls.Front()
		if head == nil {
			continue
		}
		if s := head.Value.(*session); n.lruExpired(v, s) {
			n.deleteSession(v, s)
			return true
		}
	}
	return false
}
