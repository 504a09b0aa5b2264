package vppnode

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// WantVersion is the VPP release the lab runs (and vppsvc is tested on).
const WantVersion = "25.10"

// EnvBinary names the VPP binary of the lab: a build directory's bin/vpp.
const EnvBinary = "VPPSVC_LAB_VPP"

// versionString is the image version VPP links into its binary
// (vpe_version_string: "vpp v25.10.0-release built by ..."); show_version
// answers the part after "vpp v".
var versionString = regexp.MustCompile(`vpp v([0-9][0-9A-Za-z.~+_-]*) built by `)

// BinaryVersion reads the version VPP's binary carries, without running
// it: VPP has no --version flag, and its version string is a constant of
// the executable (vpp/app/version.c).
func BinaryVersion(binary string) (string, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return "", fmt.Errorf("VPP binary: %w (set %s to a VPP %s build's bin/vpp)", err, EnvBinary, WantVersion)
	}
	return versionIn(data, binary)
}

func versionIn(data []byte, binary string) (string, error) {
	if !bytes.HasPrefix(data, []byte("\x7fELF")) {
		return "", fmt.Errorf("VPP binary %s is not an executable (no ELF header)", binary)
	}
	m := versionString.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("VPP binary %s carries no \"vpp v<version> built by\" string: not a VPP build", binary)
	}
	return string(m[1]), nil
}

// checkVersion accepts a version of the release WantVersion
// ("25.10", "25.10.0-release", "25.10-rc2~3-g1234"), nothing else.
func checkVersion(v, where string) error {
	if v == WantVersion || strings.HasPrefix(v, WantVersion+".") || strings.HasPrefix(v, WantVersion+"-") {
		return nil
	}
	return fmt.Errorf("%s is VPP %q; the lab needs VPP %s", where, v, WantVersion)
}

// CheckBinary refuses a missing binary or one that is not VPP 25.10,
// without starting it.
func CheckBinary(binary string) error {
	if binary == "" {
		return fmt.Errorf("no VPP binary: set %s to a VPP %s build's bin/vpp", EnvBinary, WantVersion)
	}
	v, err := BinaryVersion(binary)
	if err != nil {
		return err
	}
	return checkVersion(v, binary)
}
