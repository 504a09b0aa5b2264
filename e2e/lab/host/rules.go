package host

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Rule is a policy-routing rule of a namespace's kernel (ip rule) that
// sends the namespace's own traffic (iif lo) to To, of one protocol and
// destination ports, to a routing table.
type Rule struct {
	Pref  int
	To    netip.Addr
	Proto string // "tcp" or "udp"
	Ports string // "30000-30999" or "30123"
	// Table is a table number, or "local" for the kernel's own addresses.
	Table string
}

func (r Rule) args() ([]string, error) {
	if r.Pref <= 0 || !r.To.IsValid() || (r.Proto != "tcp" && r.Proto != "udp") || r.Ports == "" || r.Table == "" {
		return nil, fmt.Errorf("rule %+v: want a preference, a destination, tcp or udp, ports and a table", r)
	}
	return []string{"pref", strconv.Itoa(r.Pref), "iif", "lo", "to", r.To.String(), "ipproto", r.Proto, "dport", r.Ports, "lookup", r.Table}, nil
}

// AddRule installs r in the lab's namespace ns; an identical rule is
// replaced, not doubled.
func (l *Lab) AddRule(ns string, r Rule) error {
	if err := l.DelRule(ns, r); err != nil {
		return err
	}
	return l.rule(ns, "add", r)
}

// DelRule removes r from the lab's namespace ns; a missing rule is no
// error.
func (l *Lab) DelRule(ns string, r Rule) error {
	err := l.rule(ns, "del", r)
	if err != nil && strings.Contains(err.Error(), "No such file or directory") {
		return nil
	}
	return err
}

func (l *Lab) rule(ns, verb string, r Rule) error {
	if !l.isOurNamespace(ns) {
		return fmt.Errorf("rule %s: namespace %s is not the lab's", verb, ns)
	}
	args, err := r.args()
	if err != nil {
		return err
	}
	_, err = l.ip(context.Background(), nsArgs(ns, append([]string{family(r.To), "rule", verb}, args...)...)...)
	if err == nil {
		l.log.WithFields(map[string]any{"namespace": ns, "rule": strings.Join(args, " "), "op": verb}).Debug("rule")
	}
	return err
}

// DelRulesAt removes every rule of family (4 or 6) at preference pref in
// the lab's namespace ns (what an earlier run of a rule's owner left).
func (l *Lab) DelRulesAt(ns string, family6 bool, pref int) error {
	if !l.isOurNamespace(ns) {
		return fmt.Errorf("rule del: namespace %s is not the lab's", ns)
	}
	fam := "-4"
	if family6 {
		fam = "-6"
	}
	for range 1000 {
		_, err := l.ip(context.Background(), nsArgs(ns, fam, "rule", "del", "pref", strconv.Itoa(pref))...)
		if err != nil {
			return nil // none left
		}
	}
	return fmt.Errorf("rules at preference %d in %s: more than 1000", pref, ns)
}

// MoveLocalRule moves the kernel's rule that looks up its own addresses
// (table local, preference 0) to preference pref in the lab's namespace
// ns, both families, so that rules before it can send traffic to one of
// the namespace's own addresses elsewhere. Moving it again is a no-op.
func (l *Lab) MoveLocalRule(ns string, pref int) error {
	if !l.isOurNamespace(ns) {
		return fmt.Errorf("move local rule: namespace %s is not the lab's", ns)
	}
	ctx := context.Background()
	for _, fam := range []string{"-4", "-6"} {
		out, err := l.ip(ctx, nsArgs(ns, fam, "rule", "show", "pref", strconv.Itoa(pref))...)
		if err != nil {
			return err
		}
		if !strings.Contains(string(out), "lookup local") {
			if _, err := l.ip(ctx, nsArgs(ns, fam, "rule", "add", "pref", strconv.Itoa(pref), "lookup", "local")...); err != nil {
				return err
			}
		}
		out, err = l.ip(ctx, nsArgs(ns, fam, "rule", "show", "pref", "0")...)
		if err != nil {
			return err
		}
		if strings.Contains(string(out), "lookup local") {
			if _, err := l.ip(ctx, nsArgs(ns, fam, "rule", "del", "pref", "0", "lookup", "local")...); err != nil {
				return err
			}
		}
	}
	l.log.WithFields(map[string]any{"namespace": ns, "pref": pref}).Debug("local rule moved")
	return nil
}
