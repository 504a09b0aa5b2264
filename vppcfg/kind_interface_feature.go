package vppcfg

import "fmt"

// InterfaceFeature enables a graph feature on an interface's feature arc, for
// example cnat-snat-ip6 on ip6-unicast.
type InterfaceFeature struct {
	Interface string
	Arc       string
	Feature   string
}

// interfaceFeatureKey keys a feature enabled on an interface's feature arc.
func interfaceFeatureKey(ifName, arc, feature string) Key {
	return Key{Kind: KindInterfaceFeature, Name: ifName + "/" + arc + "/" + feature}
}

func (f *InterfaceFeature) Key() Key             { return interfaceFeatureKey(f.Interface, f.Arc, f.Feature) }
func (f *InterfaceFeature) kind() Kind           { return KindInterfaceFeature }
func (f *InterfaceFeature) Interfaces() []string { return []string{f.Interface} }
func (f *InterfaceFeature) Equal(o Item) bool {
	other, ok := o.(*InterfaceFeature)
	return ok && *f == *other
}
func (f *InterfaceFeature) String() string {
	return fmt.Sprintf("set interface feature %s %s arc %s", f.Interface, f.Feature, f.Arc)
}

// Features have no dump; the driver probes the ones vppsvc uses.
func init() {
	register(kindSpec[*InterfaceFeature]{
		Kind: KindInterfaceFeature, Name: "interface-feature",
		Validate: func(k Key, v *InterfaceFeature) error {
			for _, f := range []struct{ field, s string }{{"Interface", v.Interface}, {"Arc", v.Arc}, {"Feature", v.Feature}} {
				if f.s == "" || len(f.s) > MaxTagLen {
					return invalid(k, f.field, "must be 1 to %d bytes, got %q", MaxTagLen, f.s)
				}
			}
			return nil
		},
		CLI: func(v *InterfaceFeature) []string {
			return []string{fmt.Sprintf("set interface feature %s %s arc %s", v.Interface, v.Feature, v.Arc)}
		},
		Printable: func(v *InterfaceFeature, _ string) any {
			return printableInterfaceFeature{Interface: v.Interface, Arc: v.Arc, Feature: v.Feature}
		},
		Untagged: func(v *InterfaceFeature) untaggedTraits { return untaggedTraits{feature: v.Feature} },
	})
}

// printableInterfaceFeature is InterfaceFeature as the render document
// prints it.
type printableInterfaceFeature struct {
	Interface string `json:"interface"`
	Arc       string `json:"arc"`
	Feature   string `json:"feature"`
}
