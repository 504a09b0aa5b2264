package cnat

import (
	"net/netip"
	"sort"

	"go.fd.io/govpp/binapi/cnat"
	"go.fd.io/govpp/binapi/ip"
)

// Backend choice (README.md#backend-choice, cnat_load_balance in cnat_node.h).
//
// VPP hashes the packet with ip4/ip6_compute_flow_hash using the
// translation's flow-hash config (IP_FLOW_HASH_DEFAULT when 0) and picks
// active_paths[h % n], or with maglev active_paths[table[h % 1009]]. The fake
// selects the same header fields as VPP but mixes them with its own stable
// hash, so it agrees with VPP on which packets hash alike (stickiness, what
// SRC_IP|DST_IP pins), not on which backend a given flow lands on.

// defaultFlowHash is IP_FLOW_HASH_DEFAULT (0x9F): src, dst, sport, dport,
// proto and the IPv6 flow label. The API's ip_flow_hash_config_v2 bits are
// VPP's internal bits, so the configured value is used as is.
const defaultFlowHash = uint32(ip.IP_API_V2_FLOW_HASH_SRC_IP | ip.IP_API_V2_FLOW_HASH_DST_IP |
	ip.IP_API_V2_FLOW_HASH_SRC_PORT | ip.IP_API_V2_FLOW_HASH_DST_PORT |
	ip.IP_API_V2_FLOW_HASH_PROTO | ip.IP_API_V2_FLOW_HASH_FLOW_LABEL)

// maglevLen is CNAT_DEFAULT_MAGLEV_LEN.
const maglevLen = 1009

// flowHash returns the packet's flow hash for config fhc. Field selection
// follows ip4_compute_flow_hash: addresses per SRC_IP/DST_IP, swapped by
// REVERSE; ports only for TCP and UDP (not SCTP or ICMP) per
// SRC_PORT/DST_PORT; SYMMETRIC orders the address pair and the port pair;
// PROTO adds the protocol. Flow has no IPv6 flow label, so FLOW_LABEL
// contributes 0.
func flowHash(f Flow, fhc uint32) uint32 {
	has := func(bit ip.IPFlowHashConfigV2) bool { return fhc&uint32(bit) != 0 }
	var a, b [16]byte
	if has(ip.IP_API_V2_FLOW_HASH_SRC_IP) {
		a = f.Src.Addr().As16()
	}
	if has(ip.IP_API_V2_FLOW_HASH_DST_IP) {
		b = f.Dst.Addr().As16()
	}
	if has(ip.IP_API_V2_FLOW_HASH_REVERSE) {
		a, b = b, a
	}
	var sp, dp uint16
	if f.Proto == protoTCP || f.Proto == protoUDP {
		if has(ip.IP_API_V2_FLOW_HASH_SRC_PORT) {
			sp = f.Src.Port()
		}
		if has(ip.IP_API_V2_FLOW_HASH_DST_PORT) {
			dp = f.Dst.Port()
		}
	}
	if has(ip.IP_API_V2_FLOW_HASH_SYMETRIC) {
		if string(b[:]) < string(a[:]) {
			a, b = b, a
		}
		if dp < sp {
			sp, dp = dp, sp
		}
	}
	var proto byte
	if has(ip.IP_API_V2_FLOW_HASH_PROTO) {
		proto = f.Proto
	}
	c := uint32(dp)<<16 | uint32(sp)
	if has(ip.IP_API_V2_FLOW_HASH_REVERSE) {
		c = uint32(sp)<<16 | uint32(dp)
	}
	h := newHasher()
	h.write(a[:])
	h.write(b[:])
	h.write([]byte{proto, byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)})
	return uint32(h.sum())
}

// backendHash seeds a backend's maglev permutation from its address and port,
// as cnat_translation_init_maglev does.
func backendHash(a netip.Addr, port uint16) uint64 {
	h := newHasher()
	b := a.As16()
	h.write(b[:])
	h.write([]byte{byte(port >> 8), byte(port)})
	return h.sum()
}

// hasher is FNV-1a 64 with a splitmix64 finaliser, so that small input
// differences (one source port) spread over all bits before "mod n".
type hasher uint64

func newHasher() hasher { return 14695981039346656037 }

func (h *hasher) write(p []byte) {
	for _, c := range p {
		*h ^= hasher(c)
		*h *= 1099511628211
	}
}

func (h hasher) sum() uint64 {
	z := uint64(h) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// buildMaglev fills the 1009-slot table with indices into t.active. Each
// backend gets a permutation (offset, skip) from backendHash; backends take
// turns claiming their next free slot until the table is full. The turn order
// is sorted by permutation, not by path position, so a backend's slots depend
// only on the set of backends: adding one moves about 1/N of the slots.
// Paths flagged test-disabled (0x80) get no slots; if none is left every slot
// points at the first active path.
func buildMaglev(t *translation) []int {
	type perm struct {
		offset, skip uint64
		h            uint64
		index        int
	}
	var perms []perm
	for ai, pi := range t.active {
		pa := t.paths[pi]
		if pa.flags&trkTestDisabled != 0 {
			continue
		}
		h := backendHash(pa.dst.addr, pa.dst.port)
		perms = append(perms, perm{
			offset: (h & 0xffffffff) % maglevLen,
			skip:   (h>>32)%(maglevLen-1) + 1,
			h:      h,
			index:  ai,
		})
	}
	table := make([]int, maglevLen)
	if len(perms) == 0 {
		return table
	}
	sort.Slice(perms, func(i, j int) bool {
		if perms[i].offset != perms[j].offset {
			return perms[i].offset < perms[j].offset
		}
		if perms[i].skip != perms[j].skip {
			return perms[i].skip < perms[j].skip
		}
		return perms[i].h < perms[j].h
	})
	filled := make([]bool, maglevLen)
	next := make([]uint64, len(perms))
	for done := 0; ; {
		for i := range perms {
			c := (perms[i].offset + next[i]*perms[i].skip) % maglevLen
			for filled[c] {
				next[i]++
				c = (perms[i].offset + next[i]*perms[i].skip) % maglevLen
			}
			table[c] = perms[i].index
			filled[c] = true
			next[i]++
			if done++; done == maglevLen {
				return table
			}
		}
	}
}

// choose returns the index into t.paths of the backend for a new flow, or
// false when no path is active (lb_n_buckets == 0).
func (t *translation) choose(f Flow) (int, bool) {
	if len(t.active) == 0 {
		return 0, false
	}
	fhc := t.fhc
	if fhc == 0 {
		fhc = defaultFlowHash
	}
	h := flowHash(f, fhc)
	if t.lbType == cnat.CNAT_LB_TYPE_MAGLEV && t.maglev != nil {
		return t.active[t.maglev[h%maglevLen]], true
	}
	return t.active[h%uint32(len(t.active))], true
}
