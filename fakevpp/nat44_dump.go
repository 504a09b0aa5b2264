package fakevpp

import (
	"fmt"
	"net/netip"
	"strings"
)

// natDumpState adds NAT44-ED's sections.
func natDumpState(v *VPP, w *dumpWriter) {
	n := v.nat()
	if !n.enabled {
		w.add("nat44-ed", "disabled")
		return
	}
	fwd := "off"
	if n.forwarding {
		fwd = "on"
	}
	t := n.timeouts
	w.add("nat44-ed", "enabled inside-vrf=%d outside-vrf=%d sessions=%d forwarding=%s", n.insideVrf, n.outsideVrf, n.sessionLimit, fwd)
	w.add("nat44-ed", "timeouts udp=%d tcp-established=%d tcp-transitory=%d icmp=%d", t.udp, t.tcpEstablished, t.tcpTransitory, t.icmp)
	n.ifaces.each(func(_ uint32, r *natIface) bool {
		w.add("nat44-ed interfaces", "%s %s", v.ifName(r.sw), roleName(r))
		return true
	})
	n.outputs.each(func(_ uint32, r *natIface) bool {
		w.add("nat44-ed interfaces", "%s output-feature", v.ifName(r.sw))
		return true
	})
	for _, a := range n.addrs {
		w.add("nat44-ed addresses", "%s vrf=%s", a.addr, vrfString(a.vrf))
	}
	for _, a := range n.twiceAddrs {
		w.add("nat44-ed addresses", "%s twice-nat vrf=%s", a.addr, vrfString(a.vrf))
	}
	n.mappings.each(func(_ uint32, m *mapping) bool {
		switch m.kind {
		case smStatic:
			pool := ""
			if m.poolAddr.IsValid() {
				pool = " pool=" + m.poolAddr.String()
			}
			w.add("nat44-ed mappings", "static %s %s ↔ %s vrf=%d flags=%s%s tag=%q", protoName(m.proto),
				epString(m.local, m.localPort, m.addrOnly()), epString(m.ext, m.extPort, m.addrOnly()), m.vrf, flagString(m.flags), pool, m.tag)
		case smIdentity:
			var vrfs []string
			m.identVrfs.each(func(_ uint32, x *uint32) bool {
				vrfs = append(vrfs, fmt.Sprint(*x))
				return true
			})
			w.add("nat44-ed mappings", "identity %s %s vrfs=%s tag=%q", protoName(m.proto), epString(m.ext, m.extPort, m.addrOnly()), strings.Join(vrfs, ","), m.tag)
		case smLB:
			e := fmt.Sprintf("lb %s %s:%d flags=%s affinity=%d tag=%q", protoName(m.proto), m.ext, m.extPort, flagString(m.flags), m.affinity, m.tag)
			m.locals.each(func(_ uint32, l *lbLocal) bool {
				e += fmt.Sprintf("\nlocal %s probability=%d vrf=%d", l.ep(), l.prob, l.vrf)
				return true
			})
			w.add("nat44-ed mappings", "%s", e)
		}
		return true
	})
	for _, rp := range n.resolve {
		kind := "static"
		if rp.identity {
			kind = "identity"
		}
		state := "pending"
		if rp.resolved {
			state = "resolved"
		}
		w.add("nat44-ed mappings", "%s %s %s:%d ↔ if=%s:%d vrf=%s flags=%s tag=%q (interface-bound, %s)", kind, protoName(rp.proto),
			rp.local, rp.lport, v.ifName(rp.sw), rp.eport, vrfString(rp.vrf), flagString(rp.flags), rp.tag, state)
	}
	var total, static, lb, twice, bypass, hairpin, expired int
	n.sessions.each(func(_ uint32, s *session) bool {
		total++
		switch {
		case s.flags&sfBypass != 0:
			bypass++
		case s.flags&sfLB != 0:
			lb++
		case s.flags&sfStatic != 0:
			static++
		}
		if s.flags&sfTwice != 0 {
			twice++
		}
		if s.flags&sfHairpin != 0 {
			hairpin++
		}
		if n.expired(v, s) || s.vrfExpired {
			expired++
		}
		return true
	})
	w.add("nat44-ed sessions", "total=%d dynamic=%d static=%d lb=%d bypass=%d twice-nat=%d hairpin=%d expired=%d affinity-records=%d",
		total, total-static-lb-bypass, static, lb, bypass, twice, hairpin, expired, len(n.affinity))
}

func vrfString(vrf uint32) string {
	if vrf == anyVRF {
		return "any"
	}
	return fmt.Sprint(vrf)
}

func epString(a netip.Addr, port uint16, addrOnly bool) string {
	if addrOnly {
		return a.String()
	}
	return netip.AddrPortFrom(a, port).String()
}
