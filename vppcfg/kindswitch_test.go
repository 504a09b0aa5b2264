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

// strictDirs are the packages held to every check: this one (its kind
// files aside), the engine and what both share.
var strictDirs = map[string]bool{"vppcfg": true, "vppcfg/engine": true, "vppcfg/internal/core": true}

// kindBlindDirs are the packages that may not even name a kind's concept:
// the engine and what it shares with vppcfg know no ACL (a merged kind's
// state is opaque to them, core.MergedState).
var kindBlindDirs = map[string]bool{"vppcfg/engine": true, "vppcfg/internal/core": true}

// TestNoKindBranchesOutsideKindFiles fails when code branches on an item
// kind outside the kind_*.go files: what a kind means belongs in its
// descriptor (descriptor.go), so that the engine knows no kind and adding
// one is its kind file, its driver file and fakevpp. It looks for
//
//   - type switches over item types (case *X in this package, case
//     *vppcfg.X elsewhere), in every file of vppcfg and in the non-test
//     files of other packages (tests build and inspect the items they make);
//   - in the non-test files of vppcfg, vppcfg/engine and
//     vppcfg/internal/core, also comparisons with a Kind constant
//     (k.Kind == KindACL, vppcfg.KindACL or driverapi.KindACL, a case
//     KindACL: of a value switch) and type assertions to an item type
//     (it.(*ACLBinding), it.(*vppcfg.ACLBinding), and the contract's
//     merged value it.(*driverapi.ACLAssignment));
//   - in the non-test files of vppcfg/engine and vppcfg/internal/core,
//     also any name of an ACL concept (an identifier or import path with
//     a word acl…: ACLLists, aclOrder, acllists.Lists): the merged ACL
//     lists are the binding kind's own state.
//
// It has no exceptions.
func TestNoKindBranchesOutsideKindFiles(t *testing.T) {
	sh := kindShapes(t)
	root := ".."
	files, strictFiles, blindFiles := 0, 0, 0
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
		dir := filepath.ToSlash(filepath.Dir(rel))
		inVPPCfg := dir == "vppcfg"
		test := strings.HasSuffix(rel, "_test.go")
		switch {
		case inVPPCfg && strings.HasPrefix(filepath.Base(rel), "kind_"):
			return nil
		case !inVPPCfg && test:
			return nil
		}
		if strictDirs[dir] && !test {
			strictFiles++
		}
		files++
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, f := range kindBranches(t, rel, src, inVPPCfg, strictDirs[dir] && !test, sh) {
			t.Errorf("%s; give the kind's descriptor (vppcfg/kind_*.go) what the branch knows", f)
		}
		if kindBlindDirs[dir] && !test {
			blindFiles++
			for _, f := range aclNames(t, rel, src) {
				t.Errorf("%s; the engine knows no kind: keep it in the kind's file (a merged kind's state is a core.MergedState)", f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("checked only %d files: is %s the module's root?", files, root)
	}
	if strictFiles < 20 {
		t.Fatalf("checked only %d files strictly: did the engine move out of %v?", strictFiles, strictDirs)
	}
	if blindFiles < 20 {
		t.Fatalf("checked only %d files for kind names: did the engine move out of %v?", blindFiles, kindBlindDirs)
	}
}

// TestACLNamesFound: the kind-name check finds a name of the ACL kind in
// its shapes and passes names that only contain the letters.
func TestACLNamesFound(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		{"type", "package core\ntype ACLLists struct{}", 1},
		{"field", "package engine\ntype r struct{ acl map[string]int }", 1},
		{"method", "package engine\nfunc (m x) ACLOrder() {}", 1},
		{"lower camel", "package engine\nvar aclOrder int", 1},
		{"in a selector", "package engine\nvar _ = core.NewACLLists", 1},
		{"kind's package", "package engine\nimport \"github.com/vppsvc/vppsvc/vppcfg/internal/acllists\"\nvar _ = acllists.New", 2},
		{"plural", "package engine\nvar ownACLs int", 1},
		{"letters only", "package engine\nvar oracle, tackle, Macl int", 0},
		{"comment", "package engine\n// ACL bindings merge.\nvar x int", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := aclNames(t, "x.go", []byte(tc.src)); len(got) != tc.want {
				t.Errorf("found %d (%v), want %d", len(got), got, tc.want)
			}
		})
	}
}

// aclNames returns the identifiers and import paths of src that name the
// ACL kind (namesACL).
func aclNames(t *testing.T, name string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Ident:
			if namesACL(x.Name) {
				found = append(found, fset.Position(x.Pos()).String()+": name "+x.Name+" of the ACL kind")
			}
		case *ast.ImportSpec:
			for _, seg := range strings.Split(strings.Trim(x.Path.Value, "\"`"), "/") {
				if namesACL(seg) {
					found = append(found, fset.Position(x.Pos()).String()+": import of the ACL kind's "+x.Path.Value)
				}
			}
		}
		return true
	})
	return found
}

// namesACL reports whether an identifier spells ACL in capitals (ownACLs)
// or has a word that starts with acl.
func namesACL(ident string) bool {
	if strings.Contains(ident, "ACL") {
		return true
	}
	for _, w := range identWords(ident) {
		if strings.HasPrefix(strings.ToLower(w), "acl") {
			return true
		}
	}
	return false
}

// identWords splits an identifier into words: at underscores and digits,
// before an upper-case letter that follows a lower-case one, and before the
// last upper-case letter of a run followed by a lower-case one (ACLLists:
// ACL, Lists; aclOrder: acl, Order).
func identWords(s string) []string {
	var words []string
	r := []rune(s)
	start := 0
	isUpper := func(c rune) bool { return c >= 'A' && c <= 'Z' }
	isLower := func(c rune) bool { return c >= 'a' && c <= 'z' }
	cut := func(i int) {
		if i > start {
			words = append(words, string(r[start:i]))
		}
		start = i
	}
	for i, c := range r {
		switch {
		case !isUpper(c) && !isLower(c):
			cut(i)
			start = i + 1
		case i > 0 && isUpper(c) && isLower(r[i-1]):
			cut(i)
		case i > 0 && isUpper(c) && isUpper(r[i-1]) && i+1 < len(r) && isLower(r[i+1]):
			cut(i)
		}
	}
	cut(len(r))
	return words
}

// TestKindBranchesFound: the checker finds each shape of branch it looks
// for, in this package's code and in another package's, and passes code
// that only asks descriptors.
func TestKindBranchesFound(t *testing.T) {
	sh := kindShapes(t)
	for _, tc := range []struct {
		name     string
		src      string
		inVPPCfg bool
		want     int
	}{
		{"comparison", "package vppcfg\nfunc f(k Key) bool { return k.Kind == KindACLBinding }", true, 1},
		{"reversed inequality", "package vppcfg\nfunc f(k Key) bool { return KindNAT44Global != k.Kind }", true, 1},
		{"value switch", "package vppcfg\nfunc f(k Key) { switch k.Kind { case KindACL, KindDropRoute: } }", true, 2},
		{"type assertion", "package vppcfg\nfunc f(it Item) { _, _ = it.(*ACLBinding) }", true, 1},
		{"type switch", "package vppcfg\nfunc f(it Item) { switch it.(type) { case *ACL: } }", true, 1},
		{"type switch elsewhere", "package x\nfunc f(it vppcfg.Item) { switch it.(type) { case *vppcfg.ACL: } }", false, 1},
		{"engine comparison", "package engine\nfunc f(k vppcfg.Key) bool { return k.Kind == vppcfg.KindACL }", false, 1},
		{"contract's constant", "package engine\nfunc f(k vppcfg.Key) bool { return k.Kind != driverapi.KindACL }", false, 1},
		{"engine type assertion", "package engine\nfunc f(it vppcfg.Item) { _, _ = it.(*vppcfg.ACLBinding) }", false, 1},
		{"merged value assertion", "package core\nfunc f(it Item) { _, _ = it.(*driverapi.ACLAssignment) }", false, 1},
		{"descriptor", "package engine\nfunc f(k vppcfg.Key) bool { return core.Describe(k.Kind).Merge != nil }", false, 0},
		{"interface assertion", "package vppcfg\nfunc f(it Item) { _, _ = it.(InterfaceBound) }", true, 0},
		{"kind arithmetic", "package vppcfg\nfunc f(k Kind) bool { return k < kindLimit }", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := kindBranches(t, "x.go", []byte(tc.src), tc.inVPPCfg, true, sh)
			if len(got) != tc.want {
				t.Errorf("found %d (%v), want %d", len(got), got, tc.want)
			}
		})
	}
}

// shapes are the names the checker looks for: the item types (the types
// of this package and of the driver contract with a Key method, the
// contract's being the merged values of kinds) and the Kind constants.
type shapes struct {
	items, kinds []string
}

func kindShapes(t *testing.T) shapes {
	fset := token.NewFileSet()
	notTest := func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, ".", notTest, 0)
	if err != nil {
		t.Fatal(err)
	}
	contract, err := parser.ParseDir(fset, "driverapi", notTest, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sh shapes
	var files []*ast.File
	own := map[*ast.File]bool{} // the Kind constants are counted in vppcfg's re-export
	for _, f := range pkgs["vppcfg"].Files {
		files = append(files, f)
		own[f] = true
	}
	for _, f := range contract["driverapi"].Files {
		files = append(files, f)
	}
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || d.Name.Name != "Key" || len(d.Recv.List) != 1 {
					continue
				}
				if star, ok := d.Recv.List[0].Type.(*ast.StarExpr); ok {
					if id, ok := star.X.(*ast.Ident); ok && !slices.Contains(sh.items, id.Name) {
						sh.items = append(sh.items, id.Name)
					}
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if vs, ok := spec.(*ast.ValueSpec); ok && d.Tok == token.CONST && own[f] {
						for _, n := range vs.Names {
							if strings.HasPrefix(n.Name, "Kind") {
								sh.kinds = append(sh.kinds, n.Name)
							}
						}
					}
				}
			}
		}
	}
	if len(sh.items) < int(kindLimit)-1 || len(sh.kinds) != int(kindLimit)-1 {
		t.Fatalf("found %d item types (%v) and %d Kind constants (%v), want one per kind", len(sh.items), sh.items, len(sh.kinds), sh.kinds)
	}
	return sh
}

// kindBranches returns where src branches on a kind: type switches always,
// comparisons and assertions when strict.
func kindBranches(t *testing.T, name string, src []byte, inVPPCfg, strict bool, sh shapes) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var found []string
	at := func(n ast.Node, what string) {
		found = append(found, fset.Position(n.Pos()).String()+": "+what)
	}
	isKind := func(e ast.Expr) bool { return names(e, inVPPCfg, sh.kinds) }
	isItem := func(e ast.Expr) bool {
		star, ok := e.(*ast.StarExpr)
		return ok && names(star.X, inVPPCfg, sh.items)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.TypeSwitchStmt:
			for _, stmt := range x.Body.List {
				for _, e := range stmt.(*ast.CaseClause).List {
					if isItem(e) {
						at(e, "type switch over item kinds")
					}
				}
			}
		case *ast.SwitchStmt:
			if !strict {
				break
			}
			for _, stmt := range x.Body.List {
				for _, e := range stmt.(*ast.CaseClause).List {
					if isKind(e) {
						at(e, "switch case on a Kind constant")
					}
				}
			}
		case *ast.BinaryExpr:
			if strict && (x.Op == token.EQL || x.Op == token.NEQ) && (isKind(x.X) || isKind(x.Y)) {
				at(x, "comparison with a Kind constant")
			}
		case *ast.TypeAssertExpr:
			if strict && x.Type != nil && isItem(x.Type) {
				at(x, "type assertion to an item type")
			}
		}
		return true
	})
	return found
}

// names reports whether e names one of list: X in this package, vppcfg.X
// elsewhere (or driverapi.X: the contract declares the Kind constants that
// vppcfg re-exports).
func names(e ast.Expr, inVPPCfg bool, list []string) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return inVPPCfg && slices.Contains(list, x.Name)
	case *ast.SelectorExpr:
		pkg, ok := x.X.(*ast.Ident)
		return ok && (pkg.Name == "vppcfg" || pkg.Name == "driverapi") && slices.Contains(list, x.Sel.Name)
	}
	return false
}
