// Package renderer holds what the service renderers share, so that each
// renderer is only its translation:
//
//   - the incremental engine (core.go, index.go, diff.go, demand.go): Core
//     keeps the per-service index of rendered items, resolves services that
//     claim the same VPP object (smallest service ID wins), composes the
//     filter ACL shards, keeps the node-wide state that follows the set of
//     services (NodeDemand), diffs every call against what it remembers,
//     commits one transaction and rolls back on failure; it implements
//     AddService, UpdateService, DeleteService, Resync and
//     UpdateLocalFrontendIfs of vppsvc.ServiceRendererAPI;
//   - the pieces of a translation every family needs: frontends of one
//     address family and the single-stack rule (family.go, frontends.go),
//     the endpoints a frontend may use under its traffic policy with the
//     terminating fallback (backends.go), filter rules for frontends without
//     endpoints and loadBalancerSourceRanges (filter.go), the fixed set of
//     filter ACLs those rules are sharded into (shards.go) and the shared
//     permit-all ACL after them (acl.go);
//   - deterministic, length-bounded names (names.go) and the helpers that
//     load and validate renderer configuration (config.go).
//
// Each renderer lives in a sub-package (renderer/nat44 for IPv4 over
// NAT44-ED, renderer/ipv6 for IPv6 over cnat) and implements
// vppsvc.ServiceRendererAPI on top of a vppcfg.Client. Renderers import
// model, vppsvc, vppcfg and this package only; they never import the
// processor.
//
// # Writing a renderer
//
// A renderer is a pure translation plus a little wiring. Write
// RenderService(svc, node, cfg) Rendering, which returns the VPP items of
// one service (pick its frontends with Frontends, the endpoints of each
// with Backends, and put the rules of FilterRules in Rendering.Rules, never
// an ACL of your own), and RenderNode(node, cfg), which returns the
// renderer's own node-wide items. Give a node context type that implements
// NodeContext, embed a *Core built with NewCore in your renderer type (it
// provides AddService, UpdateService, DeleteService, Resync and
// UpdateLocalFrontendIfs, and the filter shards with their bindings), and
// implement UpdateNodePortServices and UpdateLocalBackendIfs with
// Core.Reconfigure, re-rendering only the services that depend on what
// changed. Node-wide state that some services switch on (NAT44's
// short-circuit) is a CoreConfig.Demand, not state of the renderer: a
// renderer keeps nothing but its configuration and overrides none of
// Core's methods. Then run the conformance suite of package
// renderer/renderertest from your tests (renderertest.Run(t, factory)),
// with your own invariants
// as extra checks: it drives the renderer through random call sequences and
// checks the contract (incremental calls equal one Resync, idempotent
// Resync, delete leaves only node-wide items, failed commits converge,
// inputs are not modified) with an in-memory vppcfg.Client that checks what
// VPP requires at every commit. The NAT44 and IPv6 renderers are built
// this way; docs/renderer-nat44.md and docs/renderer-ipv6.md explain their
// decisions.
package renderer
