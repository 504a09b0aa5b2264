package fakevpp

import (
	"strings"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/vpe"
)

// Version is what ShowVersion reports: a real VPP 25.10 release build
// answers "25.10.0-release", or "25.10-release" when built from the tag
// itself (see Release).
const Version = "25.10.0-release"

// Release is the release a VPP version string names, the form Version
// has: VPP's version script (src/scripts/version) adds the ".0" of an
// "implicit zeroth" release only to builds past the tag, so a build of
// the v25.10 tag reports "25.10-release" and one a commit later
// "25.10.0-release", both 25.10. Any other string is returned as it is.
func Release(version string) string {
	num, suffix, ok := strings.Cut(version, "-")
	if ok && strings.Count(num, ".") == 1 {
		return num + ".0-" + suffix
	}
	return version
}

func init() {
	registerPlugin(&plugin{
		name:  "vpe",
		order: 0,
		handlers: handlers(
			handle(func(c *call, _ *vpe.ShowVersion) []api.Message {
				return c.reply(&vpe.ShowVersionReply{Program: "vpe", Version: Version, BuildDate: "fakevpp", BuildDirectory: "/fakevpp"})
			}),
		),
	})
}
