package renderer

import (
	"testing"
	"unsafe"
)

// TestServiceEntrySize keeps an index entry at 64 bytes, a size class of
// Go's allocator (72 would take 80): the index holds one per service.
func TestServiceEntrySize(t *testing.T) {
	if got := unsafe.Sizeof(serviceEntry{}); got > 64 {
		t.Errorf("serviceEntry is %d bytes, want at most 64", got)
	}
}
