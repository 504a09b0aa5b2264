package fakevpp

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/acl"
	"go.fd.io/govpp/binapi/cnat"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/ip"
	"go.fd.io/govpp/binapi/nat44_ed"
	"go.fd.io/govpp/binapi/vpe"
)

// binapiVPP matches the generator's header line naming the VPP version
// the bindings were generated from ("//  VPP:              25.10-release").
var binapiVPP = regexp.MustCompile(`(?m)^//\s+VPP:\s+(\S+)\s*$`)

// bindingsVersion reads the VPP version from the generated source file
// that defines m's type: the file compiled into the test binary, or, when
// that path is gone (a -trimpath build), the package's directory as the go
// command reports it.
func bindingsVersion(t *testing.T, m api.Message) string {
	t.Helper()
	var src []byte
	if meth, ok := reflect.TypeOf(m).MethodByName("GetMessageName"); ok {
		if fn := runtime.FuncForPC(meth.Func.Pointer()); fn != nil {
			file, _ := fn.FileLine(fn.Entry())
			src, _ = os.ReadFile(file)
		}
	}
	if src == nil {
		pkg := reflect.TypeOf(m).Elem().PkgPath()
		out, err := exec.Command("go", "list", "-f", "{{.Dir}}", pkg).Output()
		if err != nil {
			t.Fatalf("%T: neither the compiled-in source path nor go list %s (%v) finds the bindings", m, pkg, err)
		}
		files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "*.ba.go"))
		if len(files) == 0 {
			t.Fatalf("%s: no generated file", pkg)
		}
		if src, err = os.ReadFile(files[0]); err != nil {
			t.Fatal(err)
		}
	}
	match := binapiVPP.FindSubmatch(src)
	if match == nil {
		t.Fatalf("%T: no VPP version line in the generator's header", m)
	}
	return string(match[1])
}

// sameVPPVersion compares VPP version strings as the generator and
// show_version write them: "25.10-release" and "25.10.0-release" are one
// release (a missing patch number is 0); the suffix after "-" must match.
func sameVPPVersion(a, b string) bool {
	return strings.Contains(a, "-") && Release(a) == Release(b)
}

func TestSameVPPVersion(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"25.10-release", "25.10.0-release", true},
		{"25.10.0-release", "25.10.0-release", true},
		{"25.10-release", "25.10.1-release", false},
		{"25.06-release", "25.10.0-release", false},
		{"25.10-rc1", "25.10.0-release", false},
		{"25.10", "25.10.0-release", false},
	} {
		if got := sameVPPVersion(c.a, c.b); got != c.want {
			t.Errorf("sameVPPVersion(%q, %q) = %t, want %t", c.a, c.b, got, c.want)
		}
	}
}

// The fake claims to be the VPP that govpp's bindings were generated
// from: a govpp upgrade to bindings of another VPP must come with a new
// Version (and goldens recorded on that VPP).
func TestVersionMatchesBindings(t *testing.T) {
	for _, m := range []api.Message{&vpe.ShowVersion{}, &interfaces.SwInterfaceDump{}, &ip.IPTableAddDel{}, &nat44_ed.Nat44AddressDump{}, &acl.ACLDump{}, &cnat.CnatTranslationDump{}} {
		if got := bindingsVersion(t, m); !sameVPPVersion(got, Version) {
			t.Errorf("govpp's %T was generated from VPP %s, but fakevpp.Version is %s", m, got, Version)
		}
	}
}
