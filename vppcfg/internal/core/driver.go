package core

// DropRoutePreference is the path preference that marks vppsvc's drop
// routes in VPP (the preference of a route's only path changes nothing):
// the driver writes it, and reads back only drop routes that carry it.
const DropRoutePreference = 0x76 // 'v'

// The NAT44 timeouts VPP applies for zero values: vppcfg's
// DefaultNAT44UDPTimeout and the like (a test of vppcfg checks they agree).
const (
	defaultUDPTimeout     = 300
	defaultTCPEstablished = 7440
	defaultTCPTransitory  = 240
	defaultICMPTimeout    = 60
)

// NAT44Timeouts has the fields of vppcfg.NAT44Timeouts, so that each
// converts to the other: the kind file and the driver read the effective
// values without vppcfg exporting a function renderers have no use for.
type NAT44Timeouts struct {
	UDP, TCPEstablished, TCPTransitory, ICMP uint32
}

// EffectiveTimeouts replaces zero timeouts by VPP's defaults.
func EffectiveTimeouts(t NAT44Timeouts) NAT44Timeouts {
	def := func(v *uint32, d uint32) {
		if *v == 0 {
			*v = d
		}
	}
	def(&t.UDP, defaultUDPTimeout)
	def(&t.TCPEstablished, defaultTCPEstablished)
	def(&t.TCPTransitory, defaultTCPTransitory)
	def(&t.ICMP, defaultICMPTimeout)
	return t
}
