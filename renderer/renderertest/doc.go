// Package renderertest is the test kit of service renderers: an in-memory
// vppcfg.Client that checks, at every commit, the invariants VPP and the VPP
// layer impose on a renderer's whole desired state (Client, CheckVPP), and
// a conformance suite that any vppsvc.ServiceRendererAPI implementation
// built on a vppcfg.Client can run (Run):
//
//	func TestConformance(t *testing.T) {
//		renderertest.Run(t, func(c vppcfg.Client) (vppsvc.ServiceRendererAPI, error) {
//			return myrenderer.New(c, myrenderer.DefaultConfig(), nil)
//		})
//	}
//
// The suite drives the renderer the way the processor does, with seeded
// random sequences of model values of both address families, and checks
// the contract of vppsvc.ServiceRendererAPI: Resync is idempotent, the
// incremental calls reach exactly the state one Resync of the same cluster
// reaches, deleting every service leaves only the node-wide items, a Resync
// after a failed commit converges (as does the same call made again), no
// call fails on valid input, and input values are never modified. A failing sequence names its
// seed, the calls that led to it and the command that replays it alone:
//
//	replay (from the module root): VPPSVC_SEED=2 go test -run '^TestConformance$/^delete_removes_everything$' ./renderer/nat44/
//
// (SeedEnv: with VPPSVC_SEED set, each part of the suite plays that seed only.)
package renderertest
