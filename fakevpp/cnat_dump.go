package fakevpp

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/vppsvc/vppsvc/fakevpp/internal/cnat"
)

// cnatDumpState adds cnat's sections to Dump from the engine's own rendering
// (internal/cnat Dump), made to follow the core's rules: Dump does not depend
// on indices or creation order, so translations lose their ID and are sorted
// with the other entries, sw_if_index values become interface names, and the
// lines a freshly booted cnat also has (no SNAT address, policy none, empty
// tables, no sessions) are left out, so an unconfigured cnat adds nothing.
func cnatDumpState(v *VPP, w *dumpWriter) {
	fresh := cnatBootDump()
	section, entry := "", ""
	flush := func() {
		if entry != "" {
			w.add("cnat translations", "%s", entry)
			entry = ""
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(v.cnat().Dump(), "\n"), "\n") {
		text := strings.TrimSpace(line)
		switch {
		case !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":"):
			flush()
			section = strings.TrimSuffix(line, ":")
		case !strings.HasPrefix(line, " "): // "sessions: …", "ports in use: …"
			flush()
			section = ""
			if !fresh[line] {
				w.add("cnat sessions", "%s", text)
			}
		case section == "translations" && strings.HasPrefix(line, "      "): // a path
			entry += "\n" + v.cnatIfNames(text)
		case section == "translations":
			flush()
			_, entry, _ = strings.Cut(text, "] ")
			entry = v.cnatIfNames(entry)
		case !fresh[line]:
			w.add("cnat "+section, "%s", v.cnatIfNames(text))
		}
	}
	flush()
}

// cnatBootDump is the set of lines of a freshly booted cnat's Dump.
var cnatBootDump = sync.OnceValue(func() map[string]bool {
	lines := map[string]bool{}
	for _, l := range strings.Split(cnat.New(nil).Dump(), "\n") {
		lines[l] = true
	}
	return lines
})

var (
	// cnatEndpointIf matches the interface of an endpoint: "sw5/ip4 (…):80".
	cnatEndpointIf = regexp.MustCompile(`\bsw(\d+)/`)
	// cnatSnatIf matches the interface of a SNAT address: "sw_if_index 5".
	cnatSnatIf = regexp.MustCompile(`\bsw_if_index (\d+)\b`)
	// cnatIfSet matches the SNAT lines listing interfaces.
	cnatIfSet = regexp.MustCompile(`^(include-v4|include-v6|pod|host|cnat-snat-ip4|cnat-snat-ip6): (.*)$`)
)

// cnatIfNames replaces the sw_if_index values of one engine Dump line with
// interface names (v.ifName: "#5(absent)" for an index no interface has).
func (v *VPP) cnatIfNames(line string) string {
	name := func(num string) string {
		sw, err := strconv.ParseUint(num, 10, 32)
		if err != nil {
			return num
		}
		return v.ifName(uint32(sw))
	}
	if m := cnatIfSet.FindStringSubmatch(line); m != nil && m[2] != "-" {
		var names []string
		for _, num := range strings.Fields(m[2]) {
			names = append(names, name(num))
		}
		sort.Strings(names)
		return m[1] + ": " + strings.Join(names, " ")
	}
	line = cnatEndpointIf.ReplaceAllStringFunc(line, func(s string) string {
		return name(cnatEndpointIf.FindStringSubmatch(s)[1]) + "/"
	})
	return cnatSnatIf.ReplaceAllStringFunc(line, func(s string) string {
		return "sw_if_index " + name(cnatSnatIf.FindStringSubmatch(s)[1])
	})
}
