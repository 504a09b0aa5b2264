package fakevpp

import "fmt"

// FIB tables of both families and their locks, in one place
// (docs/fakevpp.md#vrfs-and-addresses-that-follow-interfaces). A table
// exists while something holds a lock on it: the API (one lock however
// often it is added, ip_table_create), each interface bound to it
// (fib_table_bind) and NAT44-ED (fib_table_find_or_create_and_lock, whose
// locks natState counts so that a reset gives them back). Table 0 of each
// family always exists. The fake uses the table ID as the FIB index.

// tableLocks returns the lock counts of a family (table ID → locks).
func (v *VPP) tableLocks(ip6 bool) map[uint32]int {
	return v.fibs().tables[famIdx(ip6)]
}

func (v *VPP) tableExistsFam(id uint32, ip6 bool) bool {
	_, ok := v.tableLocks(ip6)[id]
	return ok
}

func (v *VPP) lockTableFam(id uint32, ip6 bool) { v.tableLocks(ip6)[id]++ }

// dropTableLock drops a lock (table 0 never goes); with the last one the
// table and its name go. It tells whether the table went.
func (v *VPP) dropTableLock(id uint32, ip6 bool) bool {
	if id == 0 {
		return false
	}
	l := v.tableLocks(ip6)
	if l[id] <= 1 {
		delete(l, id)
		delete(v.fibs().names, tableKey{id, ip6})
		return true
	}
	l[id]--
	return false
}

// unlockTableFam drops a lock; with the last one the table and its routes
// go (table 0 never).
func (v *VPP) unlockTableFam(id uint32, ip6 bool) {
	v.dropTableLock(id, ip6)
	if !v.tableExistsFam(id, ip6) {
		for k := range v.fibs().routes {
			if k.table == id && k.ip6 == ip6 {
				delete(v.fibs().routes, k)
			}
		}
	}
}

// lockTable creates IPv4 FIB table vrf if needed and takes a reference on
// it, as fib_table_find_or_create_and_lock does for NAT VRFs.
func (v *VPP) lockTable(vrf uint32) { v.lockTableFam(vrf, false) }

// unlockTable drops a reference on an IPv4 table; the table disappears
// with the last one (table 0 is never removed).
func (v *VPP) unlockTable(vrf uint32) { v.dropTableLock(vrf, false) }

// tableExists tells whether IPv4 FIB table vrf exists.
func (v *VPP) tableExists(vrf uint32) bool { return v.tableExistsFam(vrf, false) }

// lockTable creates (if needed) and locks a FIB table on NAT's behalf.
func (n *natState) lockTable(v *VPP, vrf uint32) { n.lockTableN(v, vrf, 1) }

// lockTableN is lockTable k times.
func (n *natState) lockTableN(v *VPP, vrf uint32, k int) {
	v.tableLocks(false)[vrf] += k
	n.tableLocks[vrf] += k
}

func (n *natState) unlockTable(v *VPP, vrf uint32) {
	if n.tableLocks[vrf] == 0 {
		return
	}
	n.tableLocks[vrf]--
	v.unlockTable(vrf)
}

// AddTable creates VRF table id of a family, as ip_table_add_del does
// (adding it again changes nothing; table 0 always exists).
func (v *VPP) AddTable(id uint32, ip6 bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.addTable(id, ip6, "")
}

func (v *VPP) addTable(id uint32, ip6 bool, name string) {
	k := tableKey{id, ip6}
	if id == 0 || v.fibs().api[k] {
		return
	}
	if !v.tableExistsFam(id, ip6) && name != "" {
		// fib_table_find_or_create_and_lock_w_name: a table keeps the
		// name it was created with.
		v.fibs().names[k] = name
	}
	v.fibs().api[k] = true
	v.lockTableFam(id, ip6)
}

// delTable is ip_table_delete: the API's lock and the API's routes go; the
// table stays while an interface or a plugin holds it.
func (v *VPP) delTable(id uint32, ip6 bool) {
	k := tableKey{id, ip6}
	if id == 0 || !v.fibs().api[k] {
		return
	}
	delete(v.fibs().api, k)
	for rk := range v.fibs().routes {
		if rk.table == id && rk.ip6 == ip6 {
			delete(v.fibs().routes, rk)
		}
	}
	v.unlockTableFam(id, ip6)
}

// tableName is a table's name: the one it was created with, else VPP's
// default "ipv4-VRF:<id>" / "ipv6-VRF:<id>" (fib_table.c).
func (v *VPP) tableName(id uint32, ip6 bool) string {
	if n, ok := v.fibs().names[tableKey{id, ip6}]; ok {
		return n
	}
	if ip6 {
		return fmt.Sprintf("ipv6-VRF:%d", id)
	}
	return fmt.Sprintf("ipv4-VRF:%d", id)
}
