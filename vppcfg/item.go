package vppcfg

import (
	"strconv"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// Item is one piece of desired VPP configuration: a value of one of the
// item types of this package.
type Item = driverapi.Item

// InterfaceBound is implemented by items that refer to interfaces by name. Such
// an item stays pending until every named interface exists in VPP.
type InterfaceBound interface {
	Interfaces() []string
}

// Protocol is an IP protocol number as VPP uses it.
type Protocol uint8

const (
	ProtoAny   Protocol = 0
	ProtoICMP  Protocol = 1
	ProtoTCP   Protocol = 6
	ProtoUDP   Protocol = 17
	ProtoICMP6 Protocol = 58
	ProtoSCTP  Protocol = 132
	// ProtoExperiment is 253, reserved for experimentation (RFC 3692): VPP
	// accepts a cnat translation for it and no packet ever matches one, which
	// makes it the protocol of inert translations (the IPv6 renderer's flow
	// keepers).
	ProtoExperiment Protocol = 253
)

func (p Protocol) String() string {
	switch p {
	case ProtoAny:
		return "any"
	case ProtoICMP:
		return "icmp"
	case ProtoTCP:
		return "tcp"
	case ProtoUDP:
		return "udp"
	case ProtoICMP6:
		return "icmp6"
	case ProtoSCTP:
		return "sctp"
	case ProtoExperiment:
		return "exp1" // VPP's name for 253, which its CLI parses
	}
	return "proto" + strconv.Itoa(int(p))
}

// AnyVRF marks a NAT pool address usable by every inside VRF (VPP's ~0).
const AnyVRF = ^uint32(0)
