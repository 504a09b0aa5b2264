package vppnode

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Plugins is what a lab VPP loads; every other plugin stays disabled
// (faster start, smaller heap): NAT44-ED, ACL and cnat for services,
// ping for checks by hand, af_packet for the veths, tracedump for packet
// traces over the API.
var Plugins = []string{"af_packet_plugin.so", "nat_plugin.so", "acl_plugin.so", "cnat_plugin.so", "ping_plugin.so", "tracedump_plugin.so"}

// config is what startup.conf is made of.
type config struct {
	dir       string // the node's directory: sockets live here
	prefix    string // api-segment prefix, unique per VPP on the machine
	pluginDir string
	mainHeap  string
}

// startupConf renders a lab VPP's startup.conf. No poll-sleep-usec: VPP
// 25.10's main loop already sleeps in epoll (up to 10 ms) when no input
// node polls and af_packet queues start in interrupt mode; a fixed sleep
// would wake it every loop instead. NAT44-ED's session table keeps its
// defaults (vppsvc enables the plugin itself).
func startupConf(c config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "unix {\n  nodaemon\n  cli-listen %s\n}\n", filepath.Join(c.dir, "cli.sock"))
	fmt.Fprintf(&b, "api-segment {\n  prefix %s\n}\n", c.prefix)
	fmt.Fprintf(&b, "socksvr {\n  socket-name %s\n}\n", filepath.Join(c.dir, "api.sock"))
	fmt.Fprintf(&b, "statseg {\n  socket-name %s\n}\n", filepath.Join(c.dir, "stats.sock"))
	b.WriteString("cpu {\n  workers 0\n}\n")
	b.WriteString("buffers {\n  page-size 4k\n  buffers-per-numa 16384\n}\n")
	fmt.Fprintf(&b, "memory {\n  main-heap-size %s\n  main-heap-page-size 4k\n}\n", c.mainHeap)
	b.WriteString("plugins {\n")
	fmt.Fprintf(&b, "  path %s\n", c.pluginDir)
	b.WriteString("  plugin default { disable }\n")
	for _, p := range Plugins {
		fmt.Fprintf(&b, "  plugin %s { enable }\n", p)
	}
	b.WriteString("}\n")
	return b.String()
}

// apiPrefix derives a node's api-segment prefix from its directory: the
// lab's prefix and the node's name are in the path, unique on the machine.
func apiPrefix(dir string) string {
	parts := strings.Split(strings.Trim(filepath.Clean(dir), "/"), "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	var b strings.Builder
	for _, c := range strings.Join(parts, "-") {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// buildLayout finds a build directory's libraries and plugins from its
// bin/vpp: <build>/lib/x86_64-linux-gnu and .../vpp_plugins.
func buildLayout(binary string) (libDir, pluginDir string) {
	build := filepath.Dir(filepath.Dir(binary))
	libDir = filepath.Join(build, "lib", "x86_64-linux-gnu")
	return libDir, filepath.Join(libDir, "vpp_plugins")
}
