package agent

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"

	vppsvc "github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/renderer/cnat4"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
	"github.com/vppsvc/vppsvc/renderer/nat44"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// ExtraRenderer is a renderer of the embedder's that the agent runs next to
// its NAT44 and IPv6 renderers (Options.ExtraRenderers): the processor
// calls it like them, and it programs VPP through its own client of the
// agent's VPP layer, so its items are applied, retried, re-applied after a
// VPP restart and recovered after an agent restart like theirs.
// examples/frontendacl is one; renderer/renderertest checks one.
type ExtraRenderer struct {
	// New builds the renderer over client, whose owner is the renderer's
	// name (Options.ExtraRenderers' key); log carries renderer=<name>.
	New func(client vppcfg.Client, log logrus.FieldLogger) (vppsvc.ServiceRendererAPI, error)
	// Claim, when set, claims untagged VPP objects that nobody desires as
	// this renderer's, so that the VPP layer removes them after the
	// renderer's first Resync (see vppcfg.UntaggedClaimFunc and ipv6.Claims): a
	// renderer that programs untagged kinds (cnat translations, interface
	// features) needs it, or what it programmed for services deleted while
	// the agent was down stays in VPP. Tagged kinds (ACLs, NAT44 mappings)
	// are recovered by tag and need none.
	Claim vppcfg.UntaggedClaimFunc
}

// checkExtraRenderers refuses names the VPP layer cannot own items under
// and names of the agent's own renderers, before anything connects.
func checkExtraRenderers(extra map[string]ExtraRenderer) error {
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		switch {
		case name == nat44.Name || name == cnat4.Name || name == ipv6.Name:
			return fmt.Errorf("extra renderer %q: the agent's own renderer has that name", name)
		case name == "" || len(name) > vppcfg.MaxOwnerLen || strings.ContainsAny(name, ": \x00"):
			return fmt.Errorf("extra renderer %q: a name must be 1 to %d bytes without ':', spaces or NUL (it is the owner in VPP tags)", name, vppcfg.MaxOwnerLen)
		case extra[name].New == nil:
			return fmt.Errorf("extra renderer %q: New is nil", name)
		}
	}
	return nil
}
