package host

import (
	"context"
	"errors"
	"os"
	"strings"
)

// Cleanup removes everything of the lab's, also what a killed earlier run
// left: it kills the processes inside the namespaces its records name,
// deletes those namespaces, then every root-namespace link that has the
// lab's prefix and carries its marker, and the records. Nothing else is
// touched. It returns what it removed ("namespace vsl-pod1", "link
// vsl-br0", "process 4242 in namespace vsl-pod1"); a second call removes
// nothing and returns no error. It keeps going past a failure and returns
// every error.
func (l *Lab) Cleanup() ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx := context.Background()
	var removed []string
	var errs []error
	nss, err := l.recordedNamespaces()
	if err != nil {
		return nil, err
	}
	for _, ns := range nss {
		r, err := l.removeNamespace(ctx, ns)
		removed = append(removed, r...)
		errs = append(errs, err)
	}
	ls, err := l.links(ctx, "")
	if err != nil {
		return removed, errors.Join(append(errs, err)...)
	}
	gone := map[string]bool{}
	for _, k := range ls {
		if !ownedLink(k, l.prefix, l.marker) || gone[k.Name] {
			continue
		}
		if err := l.deleteLink(ctx, k.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, "link "+k.Name)
		gone[k.Name] = true
	}
	if err := errors.Join(errs...); err != nil {
		return removed, err
	}
	// The records' directory goes once empty; other labs' stay.
	os.Remove(l.nsRecordDir())
	os.Remove(l.dir)
	return removed, nil
}

// ownedLink says whether Cleanup may delete the root-namespace link k: it
// carries the lab's prefix and its marker, both.
func ownedLink(k link, prefix, marker string) bool {
	return strings.HasPrefix(k.Name, prefix) && k.Alias == marker
}
