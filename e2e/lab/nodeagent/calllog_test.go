package nodeagent

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCallLogRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "calls.log")
	c, err := openCallLog(path)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	c.Begin("nat44")
	c.End("nat44", nil)
	c.BeginFullSync("ipv6")
	c.End("ipv6", errors.New("refused"))
	c.End("never-begun", nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := renameTo(path, CallLogFile(dir, "node-a")); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCallLog(dir, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		renderer string
		ok       bool
	}{{"nat44", true}, {"ipv6", false}, {"never-begun", true}}
	if len(got) != len(want) {
		t.Fatalf("read %d calls, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Renderer != w.renderer || g.OK != w.ok || g.Begin.Before(before) || g.End.Before(g.Begin) {
			t.Errorf("call %d: %+v, want renderer %s ok %t, begin ≥ %s ≤ end", i, g, w.renderer, w.ok, before)
		}
	}
	if !got[2].Begin.Equal(got[2].End) {
		t.Errorf("a call without its begin: begin %s, want its end %s", got[2].Begin, got[2].End)
	}
}

func TestParseCallLogSkipsBadLines(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int
	}{
		{"good", "1 2 nat44 true\n", 1},
		{"too few fields", "1 2 nat44\n", 0},
		{"bad begin", "x 2 nat44 true\n", 0},
		{"bad end", "1 y nat44 true\n", 0},
		{"bad ok", "1 2 nat44 maybe\n", 0},
		{"one of two bad", "1 2 nat44 true\n1 2\n", 1},
		{"empty", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseCallLog(bufio.NewScanner(strings.NewReader(tc.in))); len(got) != tc.want {
				t.Errorf("%q: %d calls, want %d", tc.in, len(got), tc.want)
			}
		})
	}
}

func renameTo(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.Rename(from, to)
}
