package fakevpp

import "math/rand/v2"

// faults plans failures of requests. Only requests answered by a reply with a
// retval can fail (dumps cannot fail in VPP: they return what exists), and
// control pings never do (govpp's health check would take the connection
// down). A failed request leaves every table untouched.
type faults struct {
	seq    uint64              // faultable requests received so far
	nth    map[uint64]nthFault // request sequence number → what happens to it
	byName map[string]int32    // message name → retval

	share  float64
	rng    *rand.Rand
	retval int32
	// lost tells SendMsg that the current request is served but its reply
	// lost with the connection (LoseReplyNth).
	lost bool
}

// nthFault is what FailNth or LoseReplyNth planned for one request.
type nthFault struct {
	retval    int32
	loseReply bool
}

// take decides whether the faultable request name fails, and with which
// retval. It is called once per such request.
func (f *faults) take(name string) (int32, bool) {
	f.seq++
	if nf, ok := f.nth[f.seq]; ok {
		delete(f.nth, f.seq)
		if nf.loseReply {
			f.lost = true
			return 0, false
		}
		return nf.retval, true
	}
	if r, ok := f.byName[name]; ok {
		return r, true
	}
	if f.rng != nil && f.rng.Float64() < f.share {
		return f.retval, true
	}
	return 0, false
}

// FailNth makes the n-th next faultable request (1 = the next one) fail with
// retval. Several FailNth calls add up.
func (v *VPP) FailNth(n int, retval int32) { v.planNth(n, nthFault{retval: retval}) }

// LoseReplyNth makes the n-th next faultable request (1 = the next one)
// take effect in VPP, and then reset the client's connection before the
// reply is sent, as when the socket to VPP breaks during a call: the client
// cannot tell whether VPP did it. The client reconnects as after
// DropConnections.
func (v *VPP) LoseReplyNth(n int) { v.planNth(n, nthFault{loseReply: true}) }

// planNth plans what happens to the n-th next faultable request.
func (v *VPP) planNth(n int, f nthFault) {
	if n < 1 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.faults.nth == nil {
		v.faults.nth = map[uint64]nthFault{}
	}
	v.faults.nth[v.faults.seq+uint64(n)] = f
}

// FailMessage makes every request of a message fail with retval until
// ClearFaults. msgName is the VPP name ("acl_add_replace") or the Go type name
// ("ACLAddReplace").
func (v *VPP) FailMessage(msgName string, retval int32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.faults.byName == nil {
		v.faults.byName = map[string]int32{}
	}
	v.faults.byName[messages().canonicalName(msgName)] = retval
}

// FailRandom makes a share (0..1) of faultable requests fail with retval,
// drawn from a generator seeded with seed, until ClearFaults.
func (v *VPP) FailRandom(share float64, seed int64, retval int32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.faults.share = share
	v.faults.rng = rand.New(rand.NewPCG(uint64(seed), 0xfa017))
	v.faults.retval = retval
}

// ClearFaults cancels every planned failure.
func (v *VPP) ClearFaults() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.faults = faults{seq: v.faults.seq}
}
