package vppcfg

import (
	"testing"
	"unsafe"
)

// TestNAT44LBMappingSize keeps the mapping's small fields packed into one
// word: the renderer and the layer's store share one mapping per service
// port, and 80 bytes is a size class of Go's allocator where 88 would take 96.
func TestNAT44LBMappingSize(t *testing.T) {
	if got := unsafe.Sizeof(NAT44LBMapping{}); got > 80 {
		t.Errorf("NAT44LBMapping is %d bytes, want at most 80: keep the small fields together", got)
	}
}
