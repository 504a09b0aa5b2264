package renderer

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Helpers of the tests of unexported code (index, diff); the tests of the
// exported API are in package renderer_test and use renderertest's builders.

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
func pfx(s string) netip.Prefix  { return netip.MustParsePrefix(s) }

// svc is service default/<name> with nothing else.
func svc(name string) *model.ContivService {
	return &model.ContivService{ID: model.ServiceID{Namespace: "default", Name: name}}
}

func fe(kind FrontendKind, addr string) Frontend {
	return Frontend{Kind: kind, Addr: ap(addr), Protocol: vppcfg.ProtoTCP}
}
