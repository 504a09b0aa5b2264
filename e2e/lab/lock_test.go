package lab

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A start removes the directories of every node an earlier lab had, more
// nodes than this one included, and nothing else of the state directory.
func TestRemoveNodeDirs(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"node-a/vpp", "node-d/logs", "other"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"node-x", "kubeconfig"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removeNodeDirs(dir)
	var left []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{"kubeconfig", "node-x", "other"}; !slices.Equal(left, want) {
		t.Fatalf("left %v, want %v", left, want)
	}
}
