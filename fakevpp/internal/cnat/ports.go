package cnat

import "math/bits"

// Source-port allocation (cnat_src_policy.c, README.md#source-ports).
//
// VPP keeps one global bitmap per protocol — TCP, UDP, ICMP and ICMPv6, shared
// by IPv4 and IPv6 and by the VIP path and cnat-snat — and always takes the
// lowest free port at or above 49152 (MIN_SRC_PORT). Port 65535 is never
// handed out, so 16383 ports exist per protocol. A session that expires does
// not give its port back (freeAsVPP): a real VPP 25.10 hands out each port
// once until it restarts. Other protocols (SCTP included) have no allocator:
// asking for a port fails, which the callers turn into a drop.
const (
	minSrcPort = 49152
	maxSrcPort = 65534
)

const (
	protoICMP  = 1
	protoTCP   = 6
	protoUDP   = 17
	protoICMP6 = 58
	protoSCTP  = 132
)

// portAllocator holds the four bitmaps; the zero value has every port free.
type portAllocator struct {
	used [4][1024]uint64
}

// bitmap returns the protocol's bitmap, or nil if it has none.
func (a *portAllocator) bitmap(proto uint8) *[1024]uint64 {
	switch proto {
	case protoTCP:
		return &a.used[0]
	case protoUDP:
		return &a.used[1]
	case protoICMP:
		return &a.used[2]
	case protoICMP6:
		return &a.used[3]
	}
	return nil
}

// alloc is cnat_allocate_port with a zero hint: the lowest free port in
// [49152, 65534], or false when the protocol has no allocator or every port
// is taken ("no more free ports").
func (a *portAllocator) alloc(proto uint8) (uint16, bool) {
	bm := a.bitmap(proto)
	if bm == nil {
		return 0, false
	}
	for w := minSrcPort / 64; w < len(bm); w++ {
		free := ^bm[w]
		if free == 0 {
			continue
		}
		port := w*64 + bits.TrailingZeros64(free)
		if port > maxSrcPort {
			return 0, false
		}
		bm[w] |= 1 << (port % 64)
		return uint16(port), true
	}
	return 0, false
}

// free is cnat_free_port.
func (a *portAllocator) free(proto uint8, port uint16) {
	if bm := a.bitmap(proto); bm != nil {
		bm[port/64] &^= 1 << (port % 64)
	}
}

// freeAsVPP is what cnat_session_free does with a session's allocated port.
// cnat_allocate_port returns the port in network byte order, the session
// keeps it so, and cnat_session_free hands it as is to cnat_free_port, which
// clears the bit of that number read in host order: on a little-endian host
// the byte-swapped port. The session's own port stays taken (unless both of
// its bytes are equal); the bit cleared is below the range when the low byte
// is under 0xC0, else another port of the range, which may belong to a live
// flow. Seen on a real VPP 25.10 (dataplane case sessions/cnat-port-reuse).
// It returns the port whose bit was cleared and whether it was taken.
func (a *portAllocator) freeAsVPP(proto uint8, port uint16) (cleared uint16, wasTaken bool) {
	cleared = bits.ReverseBytes16(port)
	if bm := a.bitmap(proto); bm != nil {
		wasTaken = bm[cleared/64]&(1<<(cleared%64)) != 0
	}
	a.free(proto, cleared)
	return cleared, wasTaken
}

// inUse counts the allocated ports of a protocol (for Dump).
func (a *portAllocator) inUse(proto uint8) int {
	bm := a.bitmap(proto)
	if bm == nil {
		return 0
	}
	n := 0
	for _, w := range bm {
		n += bits.OnesCount64(w)
	}
	return n
}
