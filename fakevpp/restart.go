package fakevpp

// Restart models a VPP restart (docs/fakevpp.md#restart). Every table is dropped: NAT44-ED
// is disabled, there are no ACLs (the next index is 0 again), no sessions, no
// plugin state, and the fake clock restarts at 0. Interfaces go back to the
// startup set — those created before the first client connected (VPP's
// startup configuration), or marked with SetStartup — re-created in their
// original order from index 1, so an index may differ from before. Routes
// added before the first connect through a startup interface are kept; every
// other route goes. Likewise the unnumbered setting an interface had when
// the first client connected (SetUnnumbered before that) is re-applied when
// both interfaces come back; later changes are lost. The PID changes. Every connected client sees its
// connection reset: its next request fails, so govpp's health check reports
// Disconnected, disconnects and reconnects (Connected). Event registrations
// die with the connection; clients must ask again. Faults, call counters and
// violations are test instrumentation and survive.
func (v *VPP) Restart() {
	v.mu.Lock()
	defer v.mu.Unlock()
	var startup []*iface
	v.ifaces.each(func(_ uint32, ifc *iface) bool {
		if ifc.index != 0 && ifc.startup {
			startup = append(startup, ifc)
		}
		return true
	})
	var routes []*route
	for _, r := range v.routes {
		if r.startup {
			routes = append(routes, r)
		}
	}
	v.pid++
	v.breakConnections()
	v.resetTables()
	v.booted = false
	for _, ifc := range startup {
		v.createInterface(ifc.name, ifc.addrs, true)
	}
	for _, ifc := range startup {
		if donor := v.ifaceNamed(ifc.startupDonor); donor != nil {
			v.setUnnumbered(v.ifaceNamed(ifc.name), donor.index, true)
		}
	}
	for _, r := range routes {
		if v.ifaceNamed(r.ifName) != nil {
			v.routes[r.dst] = r
		}
	}
}

// DropConnections models a lost API connection to a VPP that keeps running
// (a health check missed under load, a restarted socket proxy): every
// connected client sees its connection reset as after Restart, and
// reconnects, but VPP keeps every table, its interfaces and its PID.
func (v *VPP) DropConnections() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.breakConnections()
}

// breakConnections resets every connected client's connection: its next
// request fails, and its event registrations are gone.
func (v *VPP) breakConnections() {
	for _, c := range v.clients {
		c.breakConnection()
	}
}

// breakConnection resets one client's connection, if it is connected.
func (c *client) breakConnection() {
	if c.connected {
		c.broken = true
		c.wantIfEvents = false
		if c.out != nil {
			c.out.close()
			c.out = nil
		}
	}
}
