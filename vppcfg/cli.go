package vppcfg

import "github.com/vppsvc/vppsvc/vppcfg/internal/core"

// cliCommands returns the VPP CLI lines an operator would type to create
// the item (VPP 25.10 syntax, from the CLI definitions in nat44_ed_cli.c,
// cnat_translation.c, cnat_snat_policy.c and acl.c); each kind's descriptor
// writes its own. Where the CLI cannot express a field that the binary API
// sets, the line carries a "# api:" comment naming it. Kinds without a CLI
// form of their own (an ACL binding: VPP takes an interface's whole list)
// get a comment saying so. vppcfg/present exports it as CLICommands.
func cliCommands(it Item) []string {
	if it == nil {
		return nil
	}
	return core.Of(it).CLI(it)
}
