package fakevpp

// pool mirrors a VPP pool (vppinfra/pool.h): an index is handed out from the
// free list if it is not empty, most recently freed first (LIFO), otherwise a
// new index is appended. Walks go in ascending index order. VPP uses pools for
// sw_if_index, ACL indices, NAT mappings, NAT interface records, LB locals and
// sessions, so both index reuse and dump order follow from this one type.
type pool[T any] struct {
	items []*T
	free  []uint32
}

// add stores x and returns its index.
func (p *pool[T]) add(x *T) uint32 {
	if n := len(p.free); n > 0 {
		i := p.free[n-1]
		p.free = p.free[:n-1]
		p.items[i] = x
		return i
	}
	p.items = append(p.items, x)
	return uint32(len(p.items) - 1)
}

// del frees index i; freeing a free or unknown index is a no-op.
func (p *pool[T]) del(i uint32) {
	if int(i) >= len(p.items) || p.items[i] == nil {
		return
	}
	p.items[i] = nil
	p.free = append(p.free, i)
}

// get returns the element at i, or nil when i is free or out of range.
func (p *pool[T]) get(i uint32) *T {
	if int(i) >= len(p.items) {
		return nil
	}
	return p.items[i]
}

// each calls fn for every element in ascending index order until fn returns
// false. fn may delete the element it is given.
func (p *pool[T]) each(fn func(i uint32, x *T) bool) {
	for i := 0; i < len(p.items); i++ {
		if x := p.items[i]; x != nil {
			if !fn(uint32(i), x) {
				return
			}
		}
	}
}

// len returns the number of elements in use.
func (p *pool[T]) len() int {
	return len(p.items) - len(p.free)
}

// find returns the index of the first element for which match is true.
func (p *pool[T]) find(match func(x *T) bool) (uint32, *T) {
	for i, x := range p.items {
		if x != nil && match(x) {
			return uint32(i), x
		}
	}
	return 0, nil
}
