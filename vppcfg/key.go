package vppcfg

import (
	"cmp"
	"fmt"
	"net/netip"
	"strings"
)

// Kind is the kind of a configuration item. The order of the constants is the
// order in which kinds are created (dependencies first); deletes run in
// reverse order. Each kind has a descriptor, registered by its kind_*.go
// file (descriptor.go).
type Kind uint8

const (
	KindNAT44Global Kind = iota + 1
	KindNAT44Address
	KindNAT44Interface
	KindNAT44StaticMapping
	KindNAT44IdentityMapping
	KindNAT44LBMapping
	KindCNATSnatConfig
	KindCNATSnatInterface
	KindInterfaceFeature
	KindCNATTranslation
	KindACL
	KindACLBinding
	KindDropRoute
	// kindLimit is one past the last kind (the size of the descriptor table).
	kindLimit
)

func (k Kind) String() string {
	if d := describe(k); d != unknownKind {
		return d.name
	}
	return fmt.Sprintf("kind-%d", uint8(k))
}

// Key identifies one item. Callers build keys with the key constructors of
// this package (ACLKey and the like, in the kinds' files; NAT44MappingKey for
// the mappings that share VPP's external key), never by formatting strings.
// The layer itself makes two kinds of keys no item has: the key of an
// interface's merged ACL list, and that of a duplicate object a dump found.
type Key struct {
	Kind Kind
	Name string
}

func (k Key) String() string { return k.Kind.String() + "/" + k.Name }

// Compare orders keys by kind (creation order), then name. The names are
// compared once (strings.Compare; cmp.Compare compares unequal strings
// twice): the VPP layer sorts a cold sync's keys with it.
func (k Key) Compare(o Key) int {
	if c := cmp.Compare(k.Kind, o.Kind); c != 0 {
		return c
	}
	return strings.Compare(k.Name, o.Name)
}

// addrPortProto returns "<addr>:<port>/<proto>" in one allocation: keys are
// built whenever an item's Key is asked for (several times per item in a
// commit), and building them by concatenation cost two allocations each, a
// tenth of a cold sync's allocations.
func addrPortProto(ap netip.AddrPort, proto Protocol) string {
	if !ap.Addr().IsValid() {
		// AppendTo writes nothing for it; keep String's "invalid AddrPort".
		return ap.String() + "/" + proto.String()
	}
	var buf [64]byte
	b := ap.AppendTo(buf[:0])
	b = append(b, '/')
	b = append(b, proto.String()...)
	return string(b)
}
