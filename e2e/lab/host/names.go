package host

import (
	"fmt"
	"strings"
)

// DefaultPrefix starts every name the lab creates unless Options say
// otherwise.
const DefaultPrefix = "vsl"

// DefaultStateDir holds the lab's records (namespaces it created, each
// node's VPP directory). /run is emptied at boot, as are namespaces.
const DefaultStateDir = "/run/vppsvc-lab"

// maxLinkName is the kernel's limit on an interface name (IFNAMSIZ - 1).
const maxLinkName = 15

// markerPrefix starts the alias of every link the lab created; the lab's
// prefix follows, so two labs with different prefixes never claim each
// other's links.
const markerPrefix = "vppsvc-lab:"

// Marker is the alias the lab with prefix sets on each link it creates.
func Marker(prefix string) string { return markerPrefix + prefix }

// markerOwner returns the prefix of the lab that set alias, if alias is a
// lab's marker.
func markerOwner(alias string) (prefix string, ok bool) {
	p, ok := strings.CutPrefix(alias, markerPrefix)
	if !ok || p == "" {
		return "", false
	}
	return p, true
}

// checkPrefix checks a lab prefix: short enough to leave room in a link
// name, and made of characters safe in names and file paths.
func checkPrefix(p string) error {
	if p == "" || len(p) > 8 {
		return fmt.Errorf("lab prefix %q: want 1 to 8 characters", p)
	}
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return fmt.Errorf("lab prefix %q: want lower-case letters and digits only", p)
		}
	}
	return nil
}

// checkLinkName checks an interface name as the kernel wants it.
func checkLinkName(name string) error {
	if name == "" || len(name) > maxLinkName {
		return fmt.Errorf("link name %q: want 1 to %d bytes", name, maxLinkName)
	}
	if name == "." || name == ".." || strings.ContainsAny(name, "/: \t\n") {
		return fmt.Errorf("link name %q: contains a character the kernel refuses", name)
	}
	return nil
}

// checkNamespaceName checks a namespace name: it becomes a file name
// under /run/netns and under the state directory.
func checkNamespaceName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("namespace name %q: want 1 to 64 bytes", name)
	}
	if name == "." || name == ".." || strings.ContainsAny(name, "/ \t\n") {
		return fmt.Errorf("namespace name %q: contains a character a file name cannot", name)
	}
	return nil
}

// owned checks that name, an object the lab is asked to create in the
// root namespace, carries the lab's prefix.
func (l *Lab) owned(kind, name string) error {
	if !strings.HasPrefix(name, l.prefix) {
		return fmt.Errorf("%s %q does not start with the lab prefix %q: the lab names everything it creates with it", kind, name, l.prefix)
	}
	return nil
}
