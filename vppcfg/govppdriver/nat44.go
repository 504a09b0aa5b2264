package govppdriver

import (
	"go.fd.io/govpp/binapi/nat_types"

	"github.com/vppsvc/vppsvc/vppcfg"
)

// What the NAT44 kinds share (nat44_*.go): the flags of mappings.

// twiceNATFlags maps the twice-NAT mode to VPP flags.
func twiceNATFlags(m vppcfg.TwiceNATMode) nat_types.NatConfigFlags {
	switch m {
	case vppcfg.TwiceNATAlways:
		return nat_types.NAT_IS_TWICE_NAT
	case vppcfg.TwiceNATSelf:
		return nat_types.NAT_IS_SELF_TWICE_NAT
	}
	return 0
}

// fromTwiceNATFlags reads the twice-NAT mode back from VPP flags.
func fromTwiceNATFlags(f nat_types.NatConfigFlags) vppcfg.TwiceNATMode {
	switch {
	case f&nat_types.NAT_IS_TWICE_NAT != 0:
		return vppcfg.TwiceNATAlways
	case f&nat_types.NAT_IS_SELF_TWICE_NAT != 0:
		return vppcfg.TwiceNATSelf
	}
	return vppcfg.TwiceNATOff
}

func staticFlags(addrOnly, out2inOnly bool, twice vppcfg.TwiceNATMode) nat_types.NatConfigFlags {
	f := twiceNATFlags(twice)
	if addrOnly {
		f |= nat_types.NAT_IS_ADDR_ONLY
	}
	if out2inOnly {
		f |= nat_types.NAT_IS_OUT2IN_ONLY
	}
	return f
}
