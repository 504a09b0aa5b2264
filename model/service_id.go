package model

import "cmp"

// ServiceID identifies a Kubernetes Service by namespace and name.
type ServiceID struct {
	Namespace string
	Name      string
}

// String returns "namespace/name", the form kubectl prints.
func (id ServiceID) String() string {
	return id.Namespace + "/" + id.Name
}

// Compare orders IDs by namespace, then name; it gives renderers and dumps a
// stable order.
func (id ServiceID) Compare(other ServiceID) int {
	if c := cmp.Compare(id.Namespace, other.Namespace); c != 0 {
		return c
	}
	return cmp.Compare(id.Name, other.Name)
}
