package fakevpp

import (
	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/vpe"
)

// Version is what ShowVersion reports: a real VPP 25.10 release build
// answers "25.10.0-release".
const Version = "25.10.0-release"

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
