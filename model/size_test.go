package model

import (
	"testing"
	"unsafe"
)

// TestContivServiceSize keeps the small fields of ContivService packed into
// one word: the processor holds one value per service, and 160 bytes is a
// size class of Go's allocator where 168 would take 176.
func TestContivServiceSize(t *testing.T) {
	if got := unsafe.Sizeof(ContivService{}); got > 160 {
		t.Errorf("ContivService is %d bytes, want at most 160: keep the small fields together", got)
	}
}

// TestServiceBackendSize keeps a backend at 48 bytes, a size class of Go's
// allocator (56 would take 64): the processor holds one per endpoint.
func TestServiceBackendSize(t *testing.T) {
	if got := unsafe.Sizeof(ServiceBackend{}); got > 48 {
		t.Errorf("ServiceBackend is %d bytes, want at most 48", got)
	}
}
