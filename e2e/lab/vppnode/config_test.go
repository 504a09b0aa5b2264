package vppnode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStartupConf(t *testing.T) {
	got := startupConf(config{dir: "/run/vppsvc-lab/vsl/n1", prefix: "vsl-n1", pluginDir: "/b/lib/x86_64-linux-gnu/vpp_plugins", mainHeap: "512M"})
	for _, want := range []string{
		"unix {\n  nodaemon\n  cli-listen /run/vppsvc-lab/vsl/n1/cli.sock\n}",
		"api-segment {\n  prefix vsl-n1\n}",
		"socksvr {\n  socket-name /run/vppsvc-lab/vsl/n1/api.sock\n}",
		"statseg {\n  socket-name /run/vppsvc-lab/vsl/n1/stats.sock\n}",
		"cpu {\n  workers 0\n}",
		"buffers {\n  page-size 4k\n  buffers-per-numa 16384\n}",
		"memory {\n  main-heap-size 512M\n  main-heap-page-size 4k\n}",
		"  path /b/lib/x86_64-linux-gnu/vpp_plugins\n  plugin default { disable }\n",
		"plugin af_packet_plugin.so { enable }", "plugin nat_plugin.so { enable }", "plugin acl_plugin.so { enable }",
		"plugin cnat_plugin.so { enable }", "plugin ping_plugin.so { enable }",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("startup.conf lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "poll-sleep") {
		t.Error("startup.conf sets a fixed poll sleep: VPP would wake every loop")
	}
	if strings.Count(got, "{") != strings.Count(got, "}") {
		t.Errorf("unbalanced braces:\n%s", got)
	}
}

func TestAPIPrefix(t *testing.T) {
	for dir, want := range map[string]string{
		"/run/vppsvc-lab/vsl/vpp-n1":  "vsl-vpp-n1",
		"/run/vppsvc-lab/vsl/vpp-n2/": "vsl-vpp-n2",
		"/x/a b/c.d":                  "a_b-c_d",
		"/n1":                         "n1",
	} {
		if got := apiPrefix(dir); got != want {
			t.Errorf("apiPrefix(%q) = %q, want %q", dir, got, want)
		}
	}
}

func TestBuildLayout(t *testing.T) {
	lib, plugins := buildLayout("/tmp/vpp/build/bin/vpp")
	if lib != "/tmp/vpp/build/lib/x86_64-linux-gnu" || plugins != "/tmp/vpp/build/lib/x86_64-linux-gnu/vpp_plugins" {
		t.Errorf("buildLayout = %s, %s", lib, plugins)
	}
}

func TestVersionIn(t *testing.T) {
	elf := "\x7fELF\x02\x01\x01"
	for _, tc := range []struct {
		desc, data, want string
		ok               bool
	}{
		{"a build", elf + "junk\x00vpp v25.10.0-release built by root on vm at 2026-11-27\x00more", "25.10.0-release", true},
		{"a tagged dev build", elf + "vpp v25.10-rc0~12-gabc123 built by x", "25.10-rc0~12-gabc123", true},
		{"no version string", elf + "vpp is great", "", false},
		{"not an executable", "#!/bin/sh\necho vpp v25.10.0 built by me", "", false},
	} {
		got, err := versionIn([]byte(tc.data), "bin/vpp")
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("%s: versionIn = %q, %v; want %q ok=%v", tc.desc, got, err, tc.want, tc.ok)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	for v, ok := range map[string]bool{
		"25.10": true, "25.10.0-release": true, "25.10.1": true, "25.10-rc2~3-g1234": true,
		"25.06.0-release": false, "25.100": false, "26.02": false, "": false,
	} {
		if err := checkVersion(v, "x"); (err == nil) != ok {
			t.Errorf("checkVersion(%q) = %v, want ok=%v", v, err, ok)
		}
	}
}

func TestCheckBinaryRefuses(t *testing.T) {
	t.Setenv(EnvBinary, "") // New falls back to it for an unset binary
	dir := t.TempDir()
	old := filepath.Join(dir, "vpp-old")
	if err := os.WriteFile(old, []byte("\x7fELF...vpp v25.06.0-release built by x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for desc, tc := range map[string]struct{ binary, want string }{
		"unset":       {"", "set VPPSVC_LAB_VPP"},
		"missing":     {filepath.Join(dir, "nope"), "no such file"},
		"not 25.10":   {old, `is VPP "25.06.0-release"; the lab needs VPP 25.10`},
		"a directory": {dir, "is a directory"},
	} {
		err := CheckBinary(tc.binary)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckBinary = %v, want %q", desc, err, tc.want)
		}
		if _, err := New(Options{Binary: tc.binary, Dir: dir}); err == nil {
			t.Errorf("%s: New accepted the binary", desc)
		}
	}
}

func TestCmdlineRuns(t *testing.T) {
	conf := "/run/vppsvc-lab/vsl/vpp-n1/startup.conf"
	for cmdline, want := range map[string]bool{
		"/tmp/vpp/build/bin/vpp\x00-c\x00" + conf + "\x00":                            true,
		"/tmp/vpp/build/bin/vpp\x00-c\x00/run/vppsvc-lab/vsl/vpp-n2/startup.conf\x00": false,
		"/usr/bin/vpp\x00-c\x00/etc/vpp/startup.conf\x00":                             false,
		"sleep\x00300\x00": false,
		"":                 false,
	} {
		if got := cmdlineRuns([]byte(cmdline), conf); got != want {
			t.Errorf("cmdlineRuns(%q) = %v, want %v", cmdline, got, want)
		}
	}
}
