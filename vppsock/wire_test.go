package vppsock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// chunkReader returns one chunk per Read, as a socket returns what arrived.
type chunkReader struct {
	chunks [][]byte
	reads  int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	r.reads++
	n := copy(p, r.chunks[0])
	if n < len(r.chunks[0]) {
		r.chunks[0] = r.chunks[0][n:]
	} else {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

// message returns a message's data of n bytes, its first two bytes i.
func message(i uint16, n int) []byte {
	d := make([]byte, n)
	binary.BigEndian.PutUint16(d, i)
	for j := 2; j < n; j++ {
		d[j] = byte(int(i) + j)
	}
	return d
}

func TestAppendFrame(t *testing.T) {
	data := message(7, 12)
	got := appendFrame([]byte("x"), data)
	want := append([]byte("x"), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0)
	want = append(want, data...)
	if !bytes.Equal(got, want) {
		t.Fatalf("appendFrame = % x, want % x", got, want)
	}
	req := appendRequest(nil, data, 0x0a0b0c0d, 0x01020304)
	if !bytes.Equal(req[16:28], []byte{0, 7, 0x0a, 0x0b, 0x0c, 0x0d, 1, 2, 3, 4, data[10], data[11]}) {
		t.Fatalf("appendRequest data = % x", req[16:])
	}
	if !bytes.Equal(data, message(7, 12)) {
		t.Fatal("appendRequest modified its data")
	}
}

// Every complete message a read returned is returned before the next read
// (buffered says whether one is left); a message split across reads (its
// header too) is completed by the following reads.
func TestFrameReaderSplitAndMany(t *testing.T) {
	var stream []byte
	var want [][]byte
	for i := range 5 {
		m := message(uint16(i), 10+i)
		want = append(want, m)
		stream = appendFrame(stream, m)
	}
	f0 := 16 + 10
	f1 := 16 + 11
	cut := []int{
		5,               // half a header
		f0 + 3,          // the rest of message 0 and part of message 1's header
		f0 + f1 - 2,     // message 1 but its last two bytes
		len(stream) - 1, // the rest of 1, messages 2, 3, and all of 4 but one byte
		len(stream),
	}
	r := &chunkReader{}
	prev := 0
	for _, c := range cut {
		r.chunks = append(r.chunks, stream[prev:c])
		prev = c
	}
	fr := newFrameReader(r, 256, nil)
	readsAt := []int{2, 4, 4, 4, 5} // the read after which each message is complete
	for i, w := range want {
		got, err := fr.next()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("message %d = % x, want % x", i, got, w)
		}
		if r.reads != readsAt[i] {
			t.Errorf("message %d returned after %d reads, want %d", i, r.reads, readsAt[i])
		}
		// buffered: the next message is complete without another read.
		if want := i+1 < len(readsAt) && readsAt[i+1] == readsAt[i]; fr.buffered() != want {
			t.Errorf("after message %d buffered() = %v, want %v", i, !want, want)
		}
	}
	if _, err := fr.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last message: %v, want EOF", err)
	}
}

// Many messages in one read cost one read; a buffer that fills up is
// compacted and the messages go on.
func TestFrameReaderManyPerReadAndCompaction(t *testing.T) {
	var stream []byte
	var want [][]byte
	for i := range 300 {
		m := message(uint16(i), 20+i%7)
		want = append(want, m)
		stream = appendFrame(stream, m)
	}
	// Reads of 1000 bytes into a 256-byte buffer: every read fills the
	// buffer, every message is split somewhere along the way.
	r := &chunkReader{}
	for len(stream) > 0 {
		n := min(1000, len(stream))
		r.chunks = append(r.chunks, stream[:n])
		stream = stream[n:]
	}
	fr := newFrameReader(r, 256, nil)
	for i, w := range want {
		got, err := fr.next()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("message %d = % x, want % x", i, got, w)
		}
	}
}

// A message larger than the buffer is assembled in one of its own; the
// standing buffer serves the messages after it.
func TestFrameReaderLargeMessage(t *testing.T) {
	small := message(1, 30)
	large := message(2, 200<<10)
	after := message(3, 40)
	var stream []byte
	stream = appendFrame(stream, small)
	stream = appendFrame(stream, large)
	stream = appendFrame(stream, after)
	r := &chunkReader{}
	for len(stream) > 0 {
		n := min(48<<10, len(stream))
		r.chunks = append(r.chunks, stream[:n])
		stream = stream[n:]
	}
	fr := newFrameReader(r, readBufSize, nil)
	for i, w := range [][]byte{small, large, after} {
		got, err := fr.next()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("message %d: %d bytes, want %d (or different bytes)", i, len(got), len(w))
		}
	}
	if len(fr.buf) != readBufSize {
		t.Errorf("buffer after the large message: %d bytes, want the standing %d", len(fr.buf), readBufSize)
	}
}

func TestFrameReaderCorruptLength(t *testing.T) {
	h := make([]byte, 16)
	binary.BigEndian.PutUint32(h[8:], maxDataLen+1)
	fr := newFrameReader(&chunkReader{chunks: [][]byte{h}}, 64, nil)
	if _, err := fr.next(); !errors.Is(err, errFrameTooLarge) {
		t.Fatalf("next = %v, want errFrameTooLarge", err)
	}
}
