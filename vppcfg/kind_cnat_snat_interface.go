package vppcfg

import "fmt"

// CNATSnatTable is one of cnat's SNAT-policy interface sets.
type CNATSnatTable uint8

const (
	CNATSnatIncludeV4 CNATSnatTable = iota
	CNATSnatIncludeV6
	CNATSnatPod
	CNATSnatHost
)

func (t CNATSnatTable) String() string {
	switch t {
	case CNATSnatIncludeV4:
		return "include-v4"
	case CNATSnatIncludeV6:
		return "include-v6"
	case CNATSnatPod:
		return "pod"
	case CNATSnatHost:
		return "host"
	}
	return "table?"
}

// CNATSnatInterface puts an interface into one SNAT-policy table.
type CNATSnatInterface struct {
	Interface string
	Table     CNATSnatTable
}

// cnatSnatInterfaceKey keys the membership of an interface in one SNAT policy table.
func cnatSnatInterfaceKey(ifName string, table CNATSnatTable) Key {
	return Key{Kind: KindCNATSnatInterface, Name: ifName + "/" + table.String()}
}

func (i *CNATSnatInterface) Key() Key             { return cnatSnatInterfaceKey(i.Interface, i.Table) }
func (i *CNATSnatInterface) kind() Kind           { return KindCNATSnatInterface }
func (i *CNATSnatInterface) Interfaces() []string { return []string{i.Interface} }
func (i *CNATSnatInterface) Equal(o Item) bool {
	other, ok := o.(*CNATSnatInterface)
	return ok && *i == *other
}
func (i *CNATSnatInterface) String() string {
	return fmt.Sprintf("cnat snat-policy if %s table %s", i.Interface, i.Table)
}

// VPP cannot dump the tables (State.Unobservable); it keeps entries of a
// deleted interface by index, which the reconciler cleans on reuse.
func init() {
	register(kindSpec[*CNATSnatInterface]{
		Kind: KindCNATSnatInterface, Name: "cnat-snat-interface",
		// VPP keeps the entry by index when the interface is deleted.
		Rebind: func(v *CNATSnatInterface, ifName string) *CNATSnatInterface {
			return &CNATSnatInterface{Interface: ifName, Table: v.Table}
		},
		Validate: func(k Key, v *CNATSnatInterface) error {
			if v.Interface == "" {
				return invalid(k, "Interface", "empty")
			}
			if v.Table > CNATSnatHost {
				return invalid(k, "Table", "unknown table %d", v.Table)
			}
			return nil
		},
		CLI: func(v *CNATSnatInterface) []string {
			table := v.Table.String()
			if v.Table == CNATSnatPod {
				table = "k8s" // the CLI's name for the pod table
			}
			return []string{fmt.Sprintf("set cnat snat-policy if table %s %s", table, v.Interface)}
		},
		Printable: func(v *CNATSnatInterface, _ string) any {
			return printableCNATSnatInterface{Interface: v.Interface, Table: v.Table.String()}
		},
	})
}

// printableCNATSnatInterface is CNATSnatInterface as the render document
// prints it.
type printableCNATSnatInterface struct {
	Interface string `json:"interface"`
	Table     string `json:"table"`
}
