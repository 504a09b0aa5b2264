package realvpp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// VPP's packet generator reads streams from, and captures into, classic
// pcap files (libpcap format, Ethernet link type); these helpers write one
// frame and read every frame back.

const (
	pcapMagic       = 0xa1b2c3d4
	pcapLinkEther   = 1
	pcapHeaderLen   = 24
	pcapRecordLen   = 16
	pcapMaxSnapshot = 65535
)

// writePcap writes frames to path as a pcap file.
func writePcap(path string, frames ...[]byte) error {
	b := make([]byte, pcapHeaderLen)
	binary.LittleEndian.PutUint32(b[0:], pcapMagic)
	binary.LittleEndian.PutUint16(b[4:], 2)
	binary.LittleEndian.PutUint16(b[6:], 4)
	binary.LittleEndian.PutUint32(b[16:], pcapMaxSnapshot)
	binary.LittleEndian.PutUint32(b[20:], pcapLinkEther)
	for _, f := range frames {
		rec := make([]byte, pcapRecordLen)
		binary.LittleEndian.PutUint32(rec[8:], uint32(len(f)))
		binary.LittleEndian.PutUint32(rec[12:], uint32(len(f)))
		b = append(b, rec...)
		b = append(b, f...)
	}
	return os.WriteFile(path, b, 0o644)
}

// readPcap returns the frames of a pcap file; a file that does not exist
// yet (nothing captured) has none. A record cut short (VPP still writing)
// ends the list.
func readPcap(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(b) < pcapHeaderLen {
		return nil, nil
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch {
	case binary.LittleEndian.Uint32(b) == pcapMagic:
	case binary.BigEndian.Uint32(b) == pcapMagic:
		order = binary.BigEndian
	default:
		return nil, fmt.Errorf("%s: not a pcap file", path)
	}
	var frames [][]byte
	for off := pcapHeaderLen; off+pcapRecordLen <= len(b); {
		n := int(order.Uint32(b[off+8:]))
		off += pcapRecordLen
		if off+n > len(b) {
			break
		}
		frames = append(frames, b[off:off+n])
		off += n
	}
	return frames, nil
}
