package vppcfg

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// kindSwitchSkipped are trees not checked at all, with the reason.
var kindSwitchSkipped = map[string]string{
	"vppcfg/govppdriver": "the driver side is a registry keyed by Kind of its own",
	"fakevpp":            "imports nothing of vppcfg: it is the independent oracle",
	"realvpp":            "imports nothing of vppcfg",
}

// TestNoTypeSwitchOverItemKinds fails when a type switch over vppcfg's
// item types (case *X in this package, case *vppcfg.X elsewhere) appears
// outside the kind_*.go descriptor files and tests of other packages (tests
// build and inspect the items they make): what a kind means belongs in its
// descriptor, so that adding a kind is one file. It has no exceptions.
func TestNoTypeSwitchOverItemKinds(t *testing.T) {
	itemTypes := itemTypeNames(t)
	if len(itemTypes) < int(kindLimit)-1 {
		t.Fatalf("found %d item types (%v), want one per kind", len(itemTypes), itemTypes)
	}
	root := ".."
	files := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if _, skip := kindSwitchSkipped[rel]; skip || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		inVPPCfg := filepath.ToSlash(filepath.Dir(rel)) == "vppcfg"
		switch {
		case inVPPCfg && strings.HasPrefix(filepath.Base(rel), "kind_"):
			return nil
		case !inVPPCfg && strings.HasSuffix(rel, "_test.go"):
			return nil
		}
		files++
		for _, line := range kindSwitchCases(t, path, inVPPCfg, itemTypes) {
			t.Errorf("%s:%d: type switch over item kinds; give the kind's descriptor (vppcfg/kind_*.go) what the switch knows", rel, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("checked only %d files: is %s the module's root?", files, root)
	}
}

// itemTypeNames are the types of this package with a Key method: the items.
func itemTypeNames(t *testing.T) []string {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range pkgs["vppcfg"].Files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Key" || len(fn.Recv.List) != 1 {
				continue
			}
			if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && !slices.Contains(names, id.Name) {
					names = append(names, id.Name)
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// kindSwitchCases returns the lines of case clauses of type switches in
// one file that name a pointer to an item type.
func kindSwitchCases(t *testing.T, path string, inVPPCfg bool, itemTypes []string) []int {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var lines []int
	ast.Inspect(f, func(n ast.Node) bool {
		sw, ok := n.(*ast.TypeSwitchStmt)
		if !ok {
			return true
		}
		for _, stmt := range sw.Body.List {
			for _, e := range stmt.(*ast.CaseClause).List {
				if star, ok := e.(*ast.StarExpr); ok && namesItemType(star.X, inVPPCfg, itemTypes) {
					lines = append(lines, fset.Position(e.Pos()).Line)
				}
			}
		}
		return true
	})
	return lines
}

func namesItemType(e ast.Expr, inVPPCfg bool, itemTypes []string) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return inVPPCfg && slices.Contains(itemTypes, x.Name)
	case *ast.SelectorExpr:
		pkg, ok := x.X.(*ast.Ident)
		return ok && pkg.Name == "vppcfg" && slices.Contains(itemTypes, x.Sel.Name)
	}
	return false
}
