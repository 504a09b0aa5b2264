package host

import (
	"context"
	"fmt"
	"slices"
)

// AddNamespace creates the network namespace ns (named with the lab's
// prefix) with its loopback up. A namespace the lab created already is
// kept as it is; one it did not create is refused.
func (l *Lab) AddNamespace(ns string) error {
	if err := checkNamespaceName(ns); err != nil {
		return err
	}
	if err := l.owned("namespace", ns); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx := context.Background()
	all, err := l.namespaces(ctx)
	if err != nil {
		return err
	}
	if slices.Contains(all, ns) {
		if !l.isOurNamespace(ns) {
			return fmt.Errorf("namespace %s %w (no record under %s): the lab will not touch it; delete it or pick another lab prefix", ns, errNotOurs, l.nsRecordDir())
		}
		return nil
	}
	if err := l.recordNamespace(ns); err != nil {
		return err
	}
	if _, err := l.ip(ctx, "netns", "add", ns); err != nil {
		return err
	}
	l.log.WithField("namespace", ns).Info("namespace created")
	_, err = l.ip(ctx, nsArgs(ns, "link", "set", "lo", "up")...)
	return err
}

// DelNamespace kills the processes inside the lab's namespace ns and
// deletes it with every link inside it (a veth's other end too). A
// namespace that is gone is no error; one the lab did not create is
// refused.
func (l *Lab) DelNamespace(ns string) error {
	if !l.isOurNamespace(ns) {
		return fmt.Errorf("namespace %s has no record under %s: the lab deletes only its own namespaces", ns, l.nsRecordDir())
	}
	_, err := l.removeNamespace(context.Background(), ns)
	return err
}

// removeNamespace kills what runs inside ns, deletes it if it exists and
// drops its record; it returns what it removed, for Cleanup's report.
func (l *Lab) removeNamespace(ctx context.Context, ns string) ([]string, error) {
	all, err := l.namespaces(ctx)
	if err != nil {
		return nil, err
	}
	var removed []string
	if slices.Contains(all, ns) {
		killed, err := l.killNamespaceProcesses(ctx, ns)
		for _, p := range killed {
			removed = append(removed, fmt.Sprintf("process %d in namespace %s", p, ns))
		}
		if err != nil {
			return removed, err
		}
		// Links first, synchronously: a namespace's own teardown runs
		// later in the kernel, and a veth's root end would linger until
		// then, in the way of the same name created anew.
		ls, err := l.links(ctx, ns)
		if err != nil {
			return removed, err
		}
		for _, k := range ls {
			if k.Name == "lo" {
				continue
			}
			if _, err := l.ip(ctx, nsArgs(ns, "link", "del", "dev", k.Name)...); err != nil {
				return removed, err
			}
		}
		if _, err := l.ip(ctx, "netns", "del", ns); err != nil {
			return removed, err
		}
		l.log.WithField("namespace", ns).Info("namespace deleted")
		removed = append(removed, "namespace "+ns)
	}
	return removed, l.forgetNamespace(ns)
}
