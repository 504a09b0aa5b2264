package fakevpp

// Violation records a request or packet for which the real VPP would crash,
// corrupt its state or behave in an undefined way (see
// docs/fakevpp.md#code-findings-and-decisions). The fake answers as VPP would, or with an error where VPP would
// crash, and records the violation so that tests can assert there is none.
type Violation struct {
	Message string // what is wrong, short and stable (tests may match it)
	Detail  string // the objects involved
}

// violate records a violation once; identical repeats (1000 packets hitting
// the same broken LB mapping) are kept as one entry.
func (v *VPP) violate(message, detail string) {
	k := Violation{Message: message, Detail: detail}
	if v.seenViol[k] {
		return
	}
	v.seenViol[k] = true
	v.violations = append(v.violations, k)
}

// Violations returns the violations recorded since New or ClearViolations, in
// the order they happened.
func (v *VPP) Violations() []Violation {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]Violation(nil), v.violations...)
}

// ClearViolations forgets the recorded violations.
func (v *VPP) ClearViolations() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.violations = nil
	v.seenViol = map[Violation]bool{}
}
