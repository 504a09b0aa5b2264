// Package archtest enforces the import rules docs/architecture.md states, so
// the layering is checked by make test rather than by review.
package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/vppsvc/vppsvc"

// graph maps each package of the module (path relative to the module root,
// "." for the root) to the imports of its non-test files.
type graph map[string][]string

// loadGraph parses the imports of every non-test Go file under the module
// root, skipping testdata and nested modules (e2e/).
func loadGraph(t *testing.T) graph {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	g := graph{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || fileExists(filepath.Join(p, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkg := filepath.ToSlash(rel)
		if _, ok := g[pkg]; !ok {
			g[pkg] = nil
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			g[pkg] = append(g[pkg], ip)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(g) < 10 {
		t.Fatalf("found only %d packages under %s: wrong root?", len(g), root)
	}
	return g
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// local returns the module-relative path of an import of this module.
func local(ip string) (string, bool) {
	if ip == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(ip, module+"/")
	return rel, ok
}

func isStdlib(ip string) bool { return !strings.Contains(strings.Split(ip, "/")[0], ".") }

// reach lists every import reachable from pkg, the module's packages
// followed transitively, with the chain that leads to each.
func (g graph) reach(pkg string) map[string]string {
	seen := map[string]string{}
	var walk func(p, via string)
	walk = func(p, via string) {
		for _, ip := range g[p] {
			if _, ok := seen[ip]; ok {
				continue
			}
			chain := via + " → " + ip
			seen[ip] = chain
			if rel, ok := local(ip); ok {
				walk(rel, chain)
			}
		}
	}
	walk(pkg, pkg)
	return seen
}

func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// rule is one line of docs/architecture.md's import table, as a predicate
// over everything a package reaches.
type rule struct {
	name string
	// applies selects the packages the rule constrains.
	applies func(pkg string) bool
	// allowed decides whether pkg may reach ip.
	allowed func(ip string) bool
}

var rules = []rule{
	{
		name:    "model imports the standard library only",
		applies: func(p string) bool { return p == "model" },
		allowed: isStdlib,
	},
	{
		name:    "the root package (api.go) imports model only",
		applies: func(p string) bool { return p == "." },
		allowed: func(ip string) bool { rel, ok := local(ip); return isStdlib(ip) || ok && under(rel, "model") },
	},
	{
		name:    "renderers never reach the processor",
		applies: func(p string) bool { return under(p, "renderer") || under(p, "examples") },
		allowed: func(ip string) bool { rel, ok := local(ip); return !ok || !under(rel, "processor") },
	},
	{
		name: "renderers program VPP only through vppcfg (no govpp)",
		applies: func(p string) bool {
			return p == "renderer" || under(p, "renderer/nat44") || under(p, "renderer/cnat") || under(p, "renderer/cnat4") || under(p, "renderer/ipv6")
		},
		allowed: func(ip string) bool { return !strings.HasPrefix(ip, "go.fd.io/govpp") },
	},
	{
		name:    "the processor never reaches a renderer or the VPP layer",
		applies: func(p string) bool { return under(p, "processor") },
		allowed: func(ip string) bool {
			rel, ok := local(ip)
			return !ok || !(under(rel, "renderer") || under(rel, "vppcfg") || under(rel, "fakevpp"))
		},
	},
	{
		name:    "vppcfg, its engine and its internals know neither govpp nor Kubernetes",
		applies: func(p string) bool { return p == "vppcfg" || under(p, "vppcfg/engine") || under(p, "vppcfg/internal") },
		allowed: func(ip string) bool {
			rel, ok := local(ip)
			return isStdlib(ip) || ip == "github.com/sirupsen/logrus" ||
				ok && (under(rel, "internal/logx") || under(rel, "internal/parallel") || under(rel, "internal/ranksort") || rel == "vppcfg" || under(rel, "vppcfg/driverapi") || under(rel, "vppcfg/internal"))
		},
	},
	{
		name: "the vocabulary, its internals and the drivers never reach the engine",
		applies: func(p string) bool {
			return p == "vppcfg" || under(p, "vppcfg/internal") || under(p, "vppcfg/driverapi") ||
				under(p, "vppcfg/govppdriver") || under(p, "vppcfg/present")
		},
		allowed: func(ip string) bool { rel, ok := local(ip); return !ok || !under(rel, "vppcfg/engine") },
	},
	{
		name:    "renderers speak the vocabulary: their production code never reaches the engine",
		applies: func(p string) bool { return under(p, "renderer") || under(p, "examples") },
		allowed: func(ip string) bool { rel, ok := local(ip); return !ok || !under(rel, "vppcfg/engine") },
	},
	{
		name:    "the driver contract imports the standard library and its kind names only",
		applies: func(p string) bool { return under(p, "vppcfg/driverapi") },
		allowed: func(ip string) bool {
			rel, ok := local(ip)
			return isStdlib(ip) || ok && under(rel, "vppcfg/internal/kindname")
		},
	},
	{
		name:    "presentation is the CLI's: renderers never reach vppcfg/present",
		applies: func(p string) bool { return under(p, "renderer") || under(p, "examples") || p == "vppcfg" },
		allowed: func(ip string) bool { rel, ok := local(ip); return !ok || !under(rel, "vppcfg/present") },
	},
	{
		name:    "fakevpp imports nothing of the project but itself, and of the world only govpp",
		applies: func(p string) bool { return under(p, "fakevpp") },
		allowed: func(ip string) bool {
			rel, ok := local(ip)
			if ok {
				return under(rel, "fakevpp")
			}
			return isStdlib(ip) || strings.HasPrefix(ip, "go.fd.io/govpp")
		},
	},
	{
		name:    "realvpp reaches only fakevpp, the govpp node builder and the socket adapter of the project",
		applies: func(p string) bool { return p == "realvpp" },
		allowed: func(ip string) bool {
			rel, ok := local(ip)
			return !ok || under(rel, "fakevpp") || under(rel, "internal/govppnode") || under(rel, "vppsock")
		},
	},
	{
		name:    "the govpp node builder knows nothing of the project, and of the world only govpp",
		applies: func(p string) bool { return under(p, "internal/govppnode") },
		allowed: func(ip string) bool {
			_, ok := local(ip)
			return !ok && (isStdlib(ip) || strings.HasPrefix(ip, "go.fd.io/govpp"))
		},
	},
	{
		name:    "vppsock knows nothing of the project, and of the world only govpp",
		applies: func(p string) bool { return under(p, "vppsock") },
		allowed: func(ip string) bool {
			_, ok := local(ip)
			return !ok && (isStdlib(ip) || strings.HasPrefix(ip, "go.fd.io/govpp"))
		},
	},
	{
		name:    "dataplane reaches only fakevpp and realvpp of the project",
		applies: func(p string) bool { return p == "dataplane" },
		allowed: func(ip string) bool {
			rel, ok := local(ip)
			return !ok || under(rel, "fakevpp") || under(rel, "realvpp") || under(rel, "internal/govppnode") || under(rel, "vppsock")
		},
	},
	{
		name:    "the agent library never reaches fakevpp",
		applies: func(p string) bool { return p == "agent" },
		allowed: func(ip string) bool { rel, ok := local(ip); return !ok || !under(rel, "fakevpp") },
	},
}

func TestImportRules(t *testing.T) {
	g := loadGraph(t)
	pkgs := make([]string, 0, len(g))
	for p := range g {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			n := 0
			for _, p := range pkgs {
				if !r.applies(p) {
					continue
				}
				n++
				for ip, chain := range g.reach(p) {
					if !r.allowed(ip) {
						t.Errorf("%s reaches %s (%s)", p, ip, chain)
					}
				}
			}
			if n == 0 {
				t.Errorf("the rule applies to no package: the layout changed, update the rule")
			}
		})
	}
}

// TestRulesCanFail feeds a graph that breaks every rule, so a rule whose
// predicate became vacuous is noticed.
func TestRulesCanFail(t *testing.T) {
	bad := graph{
		"model":              {"github.com/sirupsen/logrus"},
		".":                  {module + "/processor"},
		"renderer/nat44":     {module + "/processor", "go.fd.io/govpp/api", module + "/vppcfg/present", module + "/vppcfg/engine"},
		"processor":          {module + "/vppcfg"},
		"vppcfg":             {"go.fd.io/govpp/api", module + "/vppcfg/engine"},
		"vppcfg/driverapi":   {module + "/vppcfg"},
		"fakevpp":            {module + "/vppcfg"},
		"realvpp":            {module + "/dataplane"},
		"dataplane":          {module + "/agent"},
		"agent":              {module + "/fakevpp"},
		"internal/govppnode": {module + "/model", "github.com/sirupsen/logrus"},
		"vppsock":            {module + "/model", "github.com/sirupsen/logrus"},
	}
	for _, r := range rules {
		broken := false
		for p := range bad {
			if !r.applies(p) {
				continue
			}
			for ip := range bad.reach(p) {
				if !r.allowed(ip) {
					broken = true
				}
			}
		}
		if !broken {
			t.Errorf("rule %q is not broken by a graph that breaks it", r.name)
		}
	}
}
