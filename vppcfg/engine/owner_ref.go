package engine

// ownerRef names an owner in 8 bytes instead of a string's 16: the applied
// view holds one per item, by value, and all of them point at one copy of
// each owner's name. The zero value is no owner.
type ownerRef struct{ name *string }

// newOwnerRef returns a reference to a copy of name of its own; ownerRefs
// shares one between all items of an owner.
func newOwnerRef(name string) ownerRef {
	if name == "" {
		return ownerRef{}
	}
	return ownerRef{&name}
}

// String returns the owner's name ("" for none).
func (o ownerRef) String() string {
	if o.name == nil {
		return ""
	}
	return *o.name
}

// ownerRefs hands out one shared reference per owner name.
type ownerRefs map[string]ownerRef

func (rs ownerRefs) of(name string) ownerRef {
	if o, ok := rs[name]; ok {
		return o
	}
	o := newOwnerRef(name)
	if name != "" {
		rs[name] = o
	}
	return o
}
