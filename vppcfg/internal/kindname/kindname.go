// Package kindname holds the names of item kinds: vppcfg registers them
// with each kind's descriptor, and driverapi.Kind's String reads them, so
// that the contract package names kinds without depending on vppcfg.
package kindname

var names [256]string

// Set names kind k; the first name set for a kind stays.
func Set(k uint8, name string) {
	if names[k] == "" {
		names[k] = name
	}
}

// Of returns the name of kind k, "" when none was set.
func Of(k uint8) string { return names[k] }
