package vppcfg

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// Kind is the kind of a configuration item. The order of the constants is the
// order in which kinds are created (dependencies first); deletes run in
// reverse order. Each kind has a descriptor, registered by its kind_*.go
// file (descriptor.go) into vppcfg/internal/core, where the engine reads it.
type Kind = driverapi.Kind

const (
	KindNAT44Global          Kind = driverapi.KindNAT44Global
	KindNAT44Address         Kind = driverapi.KindNAT44Address
	KindNAT44Interface       Kind = driverapi.KindNAT44Interface
	KindNAT44StaticMapping   Kind = driverapi.KindNAT44StaticMapping
	KindNAT44IdentityMapping Kind = driverapi.KindNAT44IdentityMapping
	KindNAT44LBMapping       Kind = driverapi.KindNAT44LBMapping
	KindCNATSnatConfig       Kind = driverapi.KindCNATSnatConfig
	KindCNATSnatInterface    Kind = driverapi.KindCNATSnatInterface
	KindInterfaceFeature     Kind = driverapi.KindInterfaceFeature
	KindCNATTranslation      Kind = driverapi.KindCNATTranslation
	KindACL                  Kind = driverapi.KindACL
	KindACLBinding           Kind = driverapi.KindACLBinding
	KindDropRoute            Kind = driverapi.KindDropRoute
	// kindLimit is one past the last kind (the size of the descriptor table).
	kindLimit = driverapi.KindLimit
)

// Key identifies one item. Callers build keys with the key constructors of
// this package (ACLKey and the like, in the kinds' files; NAT44MappingKey for
// the mappings that share VPP's external key), never by formatting strings.
// The layer itself makes keys of two more shapes: an interface's merged ACL
// lists (an ACLAssignment's, in its kind file), and a duplicate object a
// dump found (vppcfg/engine's ownership.go).
type Key = driverapi.Key

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
