package archtest

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The repository's code and docs cite documents by path and heading anchor
// ("docs/fakevpp.md#restart"), never by section number of a document that
// lives elsewhere: a reader of this repository must be able to follow every
// reference. These tests keep it so.

// sectionSign is written as an escape so that this file does not cite one.
const sectionSign = "\u00a7"

// docRef is a cited document with an optional anchor: a path ending in
// .md, then # and a heading's anchor.
var docRef = regexp.MustCompile(`([A-Za-z0-9_.\-/]+\.md)(?:#([A-Za-z0-9_\-]+))?`)

// repoRoot is the module root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// walkRepo calls visit for every file of the repository with one of the
// extensions, skipping hidden directories (.git).
func walkRepo(t *testing.T, root string, exts []string, visit func(path string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		for _, ext := range exts {
			if strings.HasSuffix(p, ext) {
				visit(p)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// resolveDoc finds a cited document: relative to the citing file's
// directory first (a package's own README), then to the repository root.
// A path that leads out of the repository (../shared/…) is not found.
func resolveDoc(root, citingDir, doc string) (string, bool) {
	for _, base := range []string{citingDir, root} {
		p := filepath.Join(base, filepath.FromSlash(doc))
		if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, true
		}
	}
	return "", false
}

// citesInRepoDoc tells whether a line names a document that exists in the
// repository.
func citesInRepoDoc(root, citingDir, line string) bool {
	for _, m := range docRef.FindAllStringSubmatch(line, -1) {
		if _, ok := resolveDoc(root, citingDir, m[1]); ok {
			return true
		}
	}
	return false
}

// TestSectionSignsCiteInRepoDocs fails on a section sign in a Go or Markdown file
// whose line does not also name a document of this repository: a section
// number alone points at a document the reader may not have.
func TestSectionSignsCiteInRepoDocs(t *testing.T) {
	root := repoRoot(t)
	walkRepo(t, root, []string{".go", ".md"}, func(p string) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.Contains(line, sectionSign) && !citesInRepoDoc(root, filepath.Dir(p), line) {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s:%d cites a section without an in-repo document path (cite docs/X.md#anchor): %s", rel, n, strings.TrimSpace(line))
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	})
}

// issueCite is a citation of a tracker issue by number (the word issue
// and a number, "#" or not): the tracker is not part of the
// repository, so a reader cannot follow it.
var issueCite = regexp.MustCompile(`(?i)\bissues? #?[0-9]+`)

// TestGoCommentsCiteNoIssues fails on a Go comment that cites a tracker
// issue by number: say what the issue asked for instead.
func TestGoCommentsCiteNoIssues(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	walkRepo(t, root, []string{".go"}, func(p string) {
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, group := range f.Comments {
			for _, c := range group.List {
				if m := issueCite.FindString(c.Text); m != "" {
					t.Errorf("%s:%d: comment cites %q, which a reader of the repository cannot follow: say what it asked for", rel, fset.Position(c.Pos()).Line, m)
				}
			}
		}
	})
}

func TestIssueCite(t *testing.T) {
	for text, want := range map[string]bool{
		"// issue 19: the kernel":        true,
		"// the targets of issues 7 and": true,
		"// Issue #3":                    true,
		"// an issue with the dump":      false,
		"// tissue 4":                    false,
	} {
		if got := issueCite.MatchString(text); got != want {
			t.Errorf("issueCite.MatchString(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestGoCommentDocAnchorsExist fails when a Go comment cites a Markdown
// document that does not exist, or an anchor that none of its headings
// has: a renamed heading must take its citations along.
func TestGoCommentDocAnchorsExist(t *testing.T) {
	root := repoRoot(t)
	anchorsOf := map[string]map[string]bool{}
	fset := token.NewFileSet()
	checked := 0
	walkRepo(t, root, []string{".go"}, func(p string) {
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, group := range f.Comments {
			for _, c := range group.List {
				for _, m := range docRef.FindAllStringSubmatch(c.Text, -1) {
					doc, anchor := m[1], m[2]
					if anchor == "" {
						continue // a file name in prose ("README.md") is not a link
					}
					line := fset.Position(c.Pos()).Line
					path, ok := resolveDoc(root, filepath.Dir(p), doc)
					if !ok {
						t.Errorf("%s:%d cites %s#%s: no such document", rel, line, doc, anchor)
						continue
					}
					if anchorsOf[path] == nil {
						anchorsOf[path] = headingAnchors(t, path)
					}
					if !anchorsOf[path][anchor] {
						t.Errorf("%s:%d cites %s#%s: the document has no such heading", rel, line, doc, anchor)
					}
					checked++
				}
			}
		}
	})
	if checked == 0 {
		t.Fatal("no doc#anchor citation found in any Go comment: the pattern is broken")
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file (headings inside fenced code blocks are not headings).
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return anchorsIn(string(data))
}

// anchorsIn is headingAnchors over a document's text.
func anchorsIn(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if title == line || (title != "" && title[0] != ' ') {
			continue // "#tag", not a heading
		}
		a := githubAnchor(title)
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// mdLink is a Markdown link, whose text alone counts in an anchor.
var mdLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// githubAnchor is the anchor GitHub derives from a heading's text:
// lower case, letters, digits, '-' and '_' kept, each space a '-', all
// other punctuation dropped ("Restart (VPP)" → "restart-vpp").
func githubAnchor(title string) string {
	title = mdLink.ReplaceAllString(strings.TrimSpace(title), "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func TestGitHubAnchor(t *testing.T) {
	for title, want := range map[string]string{
		" Restart":                               "restart",
		" Pools, return values and zero values":  "pools-return-values-and-zero-values",
		" NAT44-ED state and messages":           "nat44-ed-state-and-messages",
		" fakevpp — an in-memory VPP 25.10":      "fakevpp--an-in-memory-vpp-2510",
		" `Nat44DelSession` (and legacy)":        "nat44delsession-and-legacy",
		" Decisions on the [?] points":           "decisions-on-the--points",
		" See [the README](README.md) for_more":  "see-the-readme-for_more",
		" Comparing a change with main":          "comparing-a-change-with-main",
		" VRFs and addresses that follow ifaces": "vrfs-and-addresses-that-follow-ifaces",
	} {
		if got := githubAnchor(title); got != want {
			t.Errorf("githubAnchor(%q) = %q, want %q", title, got, want)
		}
	}
}

func TestAnchorsIn(t *testing.T) {
	doc := "# Title\n\n## Usage\n\n```sh\n# not a heading\n```\n\n### Usage\n#hashtag\n"
	got := anchorsIn(doc)
	for _, a := range []string{"title", "usage", "usage-1"} {
		if !got[a] {
			t.Errorf("anchor %q missing from %v", a, got)
		}
	}
	for _, a := range []string{"not-a-heading", "hashtag"} {
		if got[a] {
			t.Errorf("anchor %q found in %v; it is no heading", a, got)
		}
	}
}

func TestCitesInRepoDoc(t *testing.T) {
	root := repoRoot(t)
	here, _ := filepath.Abs(".")
	cases := map[string]bool{
		"see docs/fakevpp.md#restart":                                  true,
		"(" + sectionSign + "5, docs/architecture.md)":                 true,
		"semantics " + sectionSign + "5":                               false,
		sectionSign + "2 of ../shared/docs/vpp-dataplane-semantics.md": false,
		"docs/no-such-doc.md#x":                                        false,
	}
	for line, want := range cases {
		if got := citesInRepoDoc(root, here, line); got != want {
			t.Errorf("citesInRepoDoc(%q) = %v, want %v", line, got, want)
		}
	}
}
