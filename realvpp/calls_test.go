package realvpp

import (
	"encoding/binary"
	"errors"
	"maps"
	"sync"
	"testing"

	"go.fd.io/govpp/adapter"
)

// idAdapter numbers messages as its table says and accepts every send but
// those it is told to refuse.
type idAdapter struct {
	adapter.VppAPI // nil: only the methods below are called
	ids            map[string]uint16
	refuse         bool
}

func (a *idAdapter) GetMsgID(name, _ string) (uint16, error) { return a.ids[name], nil }

func (a *idAdapter) SendMsg(uint32, []byte) error {
	if a.refuse {
		return errors.New("refused")
	}
	return nil
}

func send(t *testing.T, a *countingAdapter, id uint16) {
	t.Helper()
	var b [10]byte
	binary.BigEndian.PutUint16(b[:], id)
	if err := a.SendMsg(0, b[:]); err != nil {
		t.Fatal(err)
	}
}

func TestCallCounts(t *testing.T) {
	counts := newCallCounts()
	inner := &idAdapter{ids: map[string]uint16{"a": 10, "b": 11, "far": countedIDs + 7}}
	a := newCountingAdapter(inner, counts)
	other := newCountingAdapter(&idAdapter{ids: map[string]uint16{"a": 20}}, counts)
	for _, m := range []string{"a", "b", "far"} {
		if _, err := a.GetMsgID(m, "crc"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.GetMsgID("a", "crc"); err != nil {
		t.Fatal(err)
	}
	want := func(w map[string]int) {
		t.Helper()
		if got := counts.snapshot(); !maps.Equal(got, w) {
			t.Fatalf("counts %v, want %v", got, w)
		}
	}

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var b [10]byte
			binary.BigEndian.PutUint16(b[:], 10)
			for range 1000 {
				_ = a.SendMsg(0, b[:])
			}
		})
	}
	wg.Wait()
	send(t, a, 11)
	send(t, a, countedIDs+7)
	send(t, a, 12) // an ID nobody asked for: not reported, now or once named
	send(t, other, 20)
	want(map[string]int{"a": 4001, "b": 1, "far": 1})

	inner.refuse = true
	var b [10]byte
	binary.BigEndian.PutUint16(b[:], 11)
	if err := a.SendMsg(0, b[:]); err == nil {
		t.Fatal("a refused send returned no error")
	}
	inner.refuse = false
	want(map[string]int{"a": 4001, "b": 1, "far": 1}) // a refused send is no call

	// VPP came back with other IDs: what ID 11 counted stays "b"'s.
	inner.ids = map[string]uint16{"c": 11, "b": 12}
	for _, m := range []string{"c", "b"} {
		if _, err := a.GetMsgID(m, "crc"); err != nil {
			t.Fatal(err)
		}
	}
	send(t, a, 11)
	send(t, a, 12)
	want(map[string]int{"a": 4001, "b": 2, "c": 1, "far": 1})

	counts.reset()
	want(map[string]int{})
	send(t, other, 20)
	send(t, a, countedIDs+7)
	want(map[string]int{"a": 1, "far": 1})
}
