package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// CheckFree changes nothing: it refuses, naming each one, the root-namespace
// links and the namespaces among those given that exist and are not the
// lab's own. What is the lab's own (left by a killed earlier run) is fine:
// Cleanup removes it. A lab checks every name it needs before it creates
// anything, so that a refusal leaves the machine as it was.
func (l *Lab) CheckFree(links, namespaces []string) error {
	ctx := context.Background()
	var errs []error
	ls, err := l.links(ctx, "")
	if err != nil {
		return err
	}
	for _, name := range links {
		if err := l.checkRootLink(name); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := claimLink(ls, name, l.marker); err != nil {
			errs = append(errs, err)
		}
	}
	all, err := l.namespaces(ctx)
	if err != nil {
		return err
	}
	for _, ns := range namespaces {
		if err := checkNamespaceName(ns); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := l.owned("namespace", ns); err != nil {
			errs = append(errs, err)
			continue
		}
		if slices.Contains(all, ns) && !l.isOurNamespace(ns) {
			errs = append(errs, fmt.Errorf("namespace %s %w (no record under %s)", ns, errNotOurs, l.nsRecordDir()))
		}
	}
	return errors.Join(errs...)
}
