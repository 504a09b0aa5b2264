package vppsock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
)

// The framing of VPP's API socket: every message's data is preceded by a
// 16-byte header of 8 zero bytes, the data length (4 bytes, big endian) and
// 4 zero bytes.
const (
	headerLen = 16
	lenOffset = 8
)

// Sizes of the buffers.
const (
	// readBufSize is the reader's standing buffer: every complete message
	// one read returns is handed to the callback from it.
	readBufSize = 64 << 10
	// minReadRoom is the free space under which the reader moves a partial
	// message to the front of its buffer before reading again.
	minReadRoom = 4 << 10
	// maxDataLen bounds one message's data, so that a corrupt length cannot
	// make the reader allocate gigabytes (VPP's largest message, the
	// sockclnt_create reply with its message table, is well under 1 MiB).
	maxDataLen = 64 << 20
)

// errFrameTooLarge ends a reader that met a length over maxDataLen: the
// stream is not VPP's framing (or is corrupt) and cannot be resynchronised.
var errFrameTooLarge = errors.New("vppsock: message length over the limit: the stream is corrupt")

// The request header inside a message's data: message ID (2 bytes), client
// index (4), context (4). A reply's: message ID (2), context (4).
const (
	reqClientIndexOffset = 2
	reqContextOffset     = 6
	reqHeaderLen         = 10
	replyContextOffset   = 2
	replyHeaderLen       = 6
)

// appendFrame appends the header for data and data itself to dst.
func appendFrame(dst, data []byte) []byte {
	var h [headerLen]byte
	binary.BigEndian.PutUint32(h[lenOffset:], uint32(len(data)))
	dst = append(dst, h[:]...)
	return append(dst, data...)
}

// appendRequest appends the frame of a request whose data is data with the
// client index and context written into its request header; data itself is
// not modified (the caller may reuse it at once).
func appendRequest(dst, data []byte, clientIndex, context uint32) []byte {
	start := len(dst) + headerLen
	dst = appendFrame(dst, data)
	binary.BigEndian.PutUint32(dst[start+reqClientIndexOffset:], clientIndex)
	binary.BigEndian.PutUint32(dst[start+reqContextOffset:], context)
	return dst
}

// frameReader cuts a stream into messages. It reads into a standing buffer
// and returns every complete message the buffer holds before it reads
// again, so the messages one read returned cost one read; a message split
// across reads is completed by the following reads, and one larger than the
// buffer is assembled in a buffer of its own size, dropped once returned.
type frameReader struct {
	r     io.Reader
	reads *atomic.Uint64 // counts Read calls (may be nil)

	small []byte // the standing buffer
	buf   []byte // small, or a larger one while a large message is assembled
	start int    // first unreturned byte of buf
	end   int    // end of the bytes read into buf
}

func newFrameReader(r io.Reader, size int, reads *atomic.Uint64) *frameReader {
	b := make([]byte, size)
	return &frameReader{r: r, reads: reads, small: b, buf: b}
}

// next returns the data of the next message (without its 16-byte header).
// The slice is valid only until the following call of next.
func (f *frameReader) next() ([]byte, error) {
	for {
		need := headerLen
		if avail := f.end - f.start; avail >= headerLen {
			n := binary.BigEndian.Uint32(f.buf[f.start+lenOffset:])
			if n > maxDataLen {
				return nil, fmt.Errorf("%w (%d bytes)", errFrameTooLarge, n)
			}
			need = headerLen + int(n)
			if avail >= need {
				data := f.buf[f.start+headerLen : f.start+need : f.start+need]
				f.start += need
				return data, nil
			}
		}
		f.makeRoom(need)
		if err := f.fill(); err != nil {
			return nil, err
		}
	}
}

// buffered tells whether a complete message is in the buffer, so that next
// returns it without reading.
func (f *frameReader) buffered() bool {
	avail := f.end - f.start
	if avail < headerLen {
		return false
	}
	return avail >= headerLen+int(binary.BigEndian.Uint32(f.buf[f.start+lenOffset:]))
}

// makeRoom arranges for the message being read, need bytes in all, to fit
// in buf from start, and for the next read to have room.
func (f *frameReader) makeRoom(need int) {
	pending := f.end - f.start
	if pending == 0 {
		// Nothing partial: start over in the standing buffer (a large
		// message's buffer, if any, is let go).
		f.buf, f.start, f.end = f.small, 0, 0
	}
	if need <= len(f.buf)-f.start && len(f.buf)-f.end >= min(minReadRoom, need-pending) {
		return
	}
	dst := f.small
	if need > len(dst) {
		dst = make([]byte, need)
	}
	copy(dst, f.buf[f.start:f.end]) // copy is memmove: dst may be buf
	f.buf, f.start, f.end = dst, 0, pending
}

// fill reads once into the free part of buf. A read that returned bytes
// and an error returns the bytes now and the error on the next read.
func (f *frameReader) fill() error {
	n, err := f.r.Read(f.buf[f.end:])
	if f.reads != nil {
		f.reads.Add(1)
	}
	f.end += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}
