package ipv6

import (
	"github.com/vppsvc/vppsvc/renderer/cnat"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// The names this package's tests knew before the rendering moved to
// renderer/cnat, as the IPv6 face of it.

const keeperProtocol = cnat.KeeperProtocol

var (
	cnatInputFeature6  = family.InputFeature()
	cnatOutputFeature6 = family.OutputFeature()
)

func hairpinOnlyItems(node Node, cfg *Config) []vppcfg.Item {
	return cnat.HairpinOnlyItems(family, node, cfg.cnat())
}
