package vppcfg

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestACLListHelpers: the position-indexed list helpers of aclAssignments.
func TestACLListHelpers(t *testing.T) {
	cur := []string{"a", "b", "c", "d"}
	assert.Equal(t, []string{"a", "c"}, keepOnly(cur, []string{"c", "x", "a"}))
	assert.Equal(t, []string{"b", "d"}, without(cur, []string{"c", "x", "a"}))
	// Kept names go just before the first desired name that follows them
	// in cur, or at the end.
	assert.Equal(t, []string{"a", "b", "c", "x", "d"}, mergeKept([]string{"a", "c", "x"}, []string{"b", "d"}, cur))
	assert.Equal(t, []string{"y", "b"}, mergeKept([]string{"y"}, []string{"b"}, cur))
	bs := []*ACLBinding{{ACL: "d"}, {ACL: "z"}, {ACL: "a"}}
	assert.Equal(t, []string{"z", "a", "d"}, inOrder(bs, cur), "names missing from cur first, then cur's order")
	assert.True(t, slices.Equal([]string{"a"}, sortBindings([]*ACLBinding{{ACL: "a", Priority: 2}, {ACL: "a", Priority: 1}})))
}
