package cnat

import (
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
)

// Frontend is one address:port/protocol through which a service port
// is reached (the key of the cnat translation rendered for it), and whether
// cnat must treat its address as real.
type Frontend struct {
	renderer.Frontend
	// RealIP is true when the address also belongs to a node (every node-port
	// frontend, and any other frontend whose address is a node IP): cnat
	// must then forward what no translation matches instead of dropping it,
	// or the node would lose every other packet sent to its address.
	RealIP bool
}

// Frontends returns the TCP and UDP frontends of family f of a service
// (renderer.Frontends), each marked real or exclusive. A service without a
// ClusterIP of the family (single-stack in the other) has none, not even
// node ports (renderer.Serves).
func Frontends(f Family, svc *model.ContivService, nodeIPs model.IPAddresses) []Frontend {
	return appendFrontends(nil, f, svc, nodeIPs)
}

// appendFrontends is Frontends appended to dst[:0]: renderService passes
// room on its stack, which spares two allocations a service (the shared
// frontends are listed on this function's stack) when they fit.
func appendFrontends(dst []Frontend, f Family, svc *model.ContivService, nodeIPs model.IPAddresses) []Frontend {
	var room [4]renderer.Frontend
	var shared []renderer.Frontend
	if f.SCTP {
		shared = renderer.AppendFrontendsWithSCTP(room[:0], svc, nodeIPs, f.IP)
	} else {
		shared = renderer.AppendFrontends(room[:0], svc, nodeIPs, f.IP)
	}
	out := dst[:0]
	if out == nil {
		out = make([]Frontend, 0, len(shared))
	}
	for _, fe := range shared {
		out = append(out, Frontend{Frontend: fe, RealIP: fe.Kind == renderer.NodePortFrontend || nodeIPs.Has(fe.Addr.Addr())})
	}
	return out
}
