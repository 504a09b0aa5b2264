package inspect

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWaitingInterface(t *testing.T) {
	for reason, want := range map[string]string{
		`interface "tap-1" not found`: "tap-1",
		`interface "a\"b" not found`:  `a"b`,
		`waiting for acl "x"`:         "",
		`interface tap-1`:             "",
		"":                            "",
	} {
		assert.Equal(t, want, waitingInterface(reason), reason)
	}
}
