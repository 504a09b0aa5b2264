// Package vppsvc implements Kubernetes Services on VPP as a library that a
// VPP-based CNI agent embeds.
//
// The processor (package processor) turns Services, EndpointSlices, Nodes and
// the local pods reported by the agent into one model.ContivService per
// Service, and drives every registered renderer through ServiceRendererAPI.
// A renderer reads a service's ports from ContivService.Ports (sorted by
// name, each with its backends) and the endpoints a frontend may use from
// ContivService.ClusterBackends or LocalBackends.
// Renderers (package renderer and its sub-packages) translate those values into
// VPP configuration through the declarative VPP layer (package vppcfg).
package vppsvc

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/model"
)

// ServiceRendererAPI is the contract between the processor and a renderer.
//
// The processor calls one renderer from one goroutine at a time, never
// concurrently, and never before the first Resync. Values passed in are
// immutable: a renderer must not modify them and may keep references to them.
//
// After a method returns an error the processor no longer knows what the
// renderer holds: it marks the renderer dirty, sends it no incremental call,
// and retries with a Resync of the whole state, with backoff, until one
// succeeds. Resync must therefore converge from any state a failed call
// left behind. The other renderers are not held back by one that fails.
type ServiceRendererAPI interface {
	// AddService is called when a service becomes renderable: it was created,
	// or changed from a type that is not rendered (ExternalName, headless) to
	// one that is.
	AddService(service *model.ContivService) error

	// UpdateService is called when a rendered service changed in any field
	// (frontends, ports, backends, policies). It is never called for a change
	// that leaves the ContivService equal. The renderer should change only the
	// configuration that differs between oldService and newService.
	UpdateService(oldService, newService *model.ContivService) error

	// DeleteService is called when a rendered service is removed or stops being
	// renderable. The renderer must remove everything it configured for it.
	DeleteService(service *model.ContivService) error

	// UpdateNodePortServices is called when the addresses on which this node
	// answers NodePorts change (see model.ResyncEventData.NodeIPs). It carries
	// them and every service that has a node port, so the renderer can
	// re-render node-port frontends.
	UpdateNodePortServices(nodeIPs model.IPAddresses, npServices []*model.ContivService) error

	// UpdateLocalFrontendIfs is called when the set of interfaces through which
	// clients reach services changes (local pods come and go).
	UpdateLocalFrontendIfs(oldIfNames, newIfNames model.Interfaces) error

	// UpdateLocalBackendIfs is called when the set of interfaces of local pods
	// that serve at least one service changes.
	UpdateLocalBackendIfs(oldIfNames, newIfNames model.Interfaces) error

	// Resync replaces the renderer's whole state with the given one. It is
	// called once after the processor has seen a full snapshot of the cluster,
	// and again whenever the processor resynchronises (for example after a
	// failure that may have lost incremental state). After Resync the
	// renderer's configuration must be exactly what the incremental calls
	// would have produced for the same cluster state; a renderer must hold no
	// state that Resync cannot rebuild.
	Resync(resyncEv *model.ResyncEventData) error
}

// ServiceCIDRRenderer is implemented by a renderer whose configuration
// depends on the cluster's service CIDRs (model.ResyncEventData.ServiceCIDRs).
// The processor calls UpdateServiceCIDRs, under the same rules as the
// methods of ServiceRendererAPI, when they change: a ServiceCIDR object
// came, went or changed its CIDRs. cidrs is the whole new set, of both
// families, sorted and masked. A renderer that does not implement it gets
// the service CIDRs only with Resync.
type ServiceCIDRRenderer interface {
	UpdateServiceCIDRs(cidrs []netip.Prefix) error
}
