package dataplane_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/fakevpp"
)

// goldenRoot holds the differential goldens.
var goldenRoot = filepath.Join("testdata", "differential")

// readGoldens returns every golden's provenance by path.
func readGoldens(t *testing.T) map[string]provenance {
	t.Helper()
	out := map[string]provenance{}
	err := filepath.WalkDir(goldenRoot, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".golden") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		p, _, ok := splitGolden(string(raw))
		if !ok {
			t.Errorf("%s: no provenance header (the VPP build and the messages it was recorded with): record it with -update on a real VPP", path)
			return nil
		}
		out[path] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no goldens under %s", goldenRoot)
	}
	return out
}

// Every golden names the VPP build it was recorded on, and that build is
// the release fakevpp claims to be: a golden from another VPP is no
// evidence about this one.
func TestGoldenProvenance(t *testing.T) {
	for path, p := range readGoldens(t) {
		if fakevpp.Release(p.version) != fakevpp.Version {
			t.Errorf("%s was recorded on VPP %s (built %s); fakevpp is %s: record it again on a VPP %s", path, p.version, p.built, fakevpp.Version, fakevpp.Version)
		}
	}
}

// Every message fakevpp serves with a model is sent by at least one
// differential case, so each has been compared with a real VPP. A message
// added to fakevpp needs a case here (recorded with -update on a real
// VPP) in the same change.
func TestEveryServedMessageHasACase(t *testing.T) {
	covered := map[string][]string{}
	for path, p := range readGoldens(t) {
		for _, m := range p.messages {
			covered[m] = append(covered[m], path)
		}
	}
	var missing []string
	for _, m := range fakevpp.Served() {
		if len(covered[m]) == 0 {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		t.Errorf("fakevpp serves %d messages no differential case sends (add a case under dataplane/, record it on a real VPP):\n  %s",
			len(missing), strings.Join(missing, "\n  "))
	}
	served := fakevpp.Served()
	for m, paths := range covered {
		if !slices.Contains(served, m) {
			t.Errorf("%s send %s, which fakevpp does not serve (it answers -9)", strings.Join(paths, ", "), m)
		}
	}
}

// splitGolden reads the header -update writes and rejects what is not one.
func TestSplitGolden(t *testing.T) {
	good := provenance{version: "25.10.0-release", built: "2025-10-29T10:00:00", messages: []string{"a", "b"}}
	for _, c := range []struct {
		name, text string
		ok         bool
		body       string
	}{
		{"written by -update", good.String() + "# x\n  0\n", true, "# x\n  0\n"},
		{"no header", "# x\n  0\n", false, ""},
		{"no build", "# recorded on VPP 25.10.0-release\n# messages: a\n", false, ""},
		{"no messages line", "# recorded on VPP 25.10.0-release built x\n# x\n", false, ""},
	} {
		p, body, ok := splitGolden(c.text)
		if ok != c.ok {
			t.Errorf("%s: ok %t, want %t", c.name, ok, c.ok)
			continue
		}
		if ok && (body != c.body || p.version != good.version || p.built != good.built || !slices.Equal(p.messages, good.messages)) {
			t.Errorf("%s: got %+v %q", c.name, p, body)
		}
	}
}
