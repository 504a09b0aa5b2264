package vppcfg

import "fmt"

// NAT44Role is the NAT role of an interface. Inside and outside may both be
// set on one interface (two items); Output excludes the other two.
type NAT44Role uint8

const (
	NAT44Inside NAT44Role = iota + 1
	NAT44Outside
	NAT44Output
)

func (r NAT44Role) String() string {
	switch r {
	case NAT44Inside:
		return "in"
	case NAT44Outside:
		return "out"
	case NAT44Output:
		return "output"
	}
	return "role?"
}

// NAT44Interface gives an interface one NAT role.
type NAT44Interface struct {
	Interface string
	Role      NAT44Role
}

// nat44InterfaceKey keys one NAT role of one interface.
func nat44InterfaceKey(ifName string, role NAT44Role) Key {
	return Key{Kind: KindNAT44Interface, Name: ifName + "/" + role.String()}
}

func (i *NAT44Interface) Key() Key             { return nat44InterfaceKey(i.Interface, i.Role) }
func (i *NAT44Interface) kind() Kind           { return KindNAT44Interface }
func (i *NAT44Interface) Interfaces() []string { return []string{i.Interface} }
func (i *NAT44Interface) Equal(o Item) bool {
	other, ok := o.(*NAT44Interface)
	return ok && *i == *other
}
func (i *NAT44Interface) String() string {
	return fmt.Sprintf("nat44 interface %s %s", i.Interface, i.Role)
}

func init() {
	register(kindSpec[*NAT44Interface]{
		Kind: KindNAT44Interface, Name: "nat44-interface", Gate: KindNAT44Global,
		Validate: func(k Key, v *NAT44Interface) error {
			if v.Interface == "" {
				return invalid(k, "Interface", "empty")
			}
			if v.Role < NAT44Inside || v.Role > NAT44Output {
				return invalid(k, "Role", "unknown role %d", v.Role)
			}
			return nil
		},
		// VPP refuses an output-feature interface that is also inside or outside.
		Excludes: func(v *NAT44Interface) []Key {
			if v.Role == NAT44Output {
				return []Key{nat44InterfaceKey(v.Interface, NAT44Inside), nat44InterfaceKey(v.Interface, NAT44Outside)}
			}
			return []Key{nat44InterfaceKey(v.Interface, NAT44Output)}
		},
		ExcludeWhy: "an output-feature interface cannot also be inside or outside",
		// nat44_ed_add_interface and nat44_ed_add_output_interface
		// (src/plugins/nat/nat44-ed/nat44_ed.c, v25.10) call
		// nat44_ed_add_del_sm_fib_reg_entries for an outside or output
		// interface: a FIB entry for every static mapping's external
		// address (LB and identity mappings are static mappings there).
		Walks: func(v *NAT44Interface) []Kind {
			if v.Role == NAT44Inside {
				return nil
			}
			return []Kind{KindNAT44StaticMapping, KindNAT44IdentityMapping, KindNAT44LBMapping}
		},
		CLI: func(v *NAT44Interface) []string {
			switch v.Role {
			case NAT44Inside:
				return []string{"set interface nat44 in " + v.Interface}
			case NAT44Outside:
				return []string{"set interface nat44 out " + v.Interface}
			default:
				return []string{"set interface nat44 out " + v.Interface + " output-feature"}
			}
		},
		Printable: func(v *NAT44Interface, _ string) any {
			role, ok := printableRoles[v.Role]
			if !ok {
				role = v.Role.String()
			}
			return printableNAT44Interface{Interface: v.Interface, Role: role}
		},
	})
}

// printableRoles are the roles as `show nat44 interfaces` words them.
var printableRoles = map[NAT44Role]string{
	NAT44Inside:  "inside",
	NAT44Outside: "outside",
	NAT44Output:  "output-feature",
}

// printableNAT44Interface is NAT44Interface as the render document prints it.
type printableNAT44Interface struct {
	Interface string `json:"interface"`
	Role      string `json:"role"`
}
