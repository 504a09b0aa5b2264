// Package engine is the VPP layer's engine: a Reconciler holds what each
// owner (a renderer, through its vppcfg.Client) desires, plans the VPP
// operations that make VPP hold it, and applies them through a driver
// (driverapi.Driver), with retries, ownership in VPP tags, a hitless
// resync after a restart, per-item status and a drift check
// (CompareWithVPP).
//
// It is the agent's, not the renderers': renderers speak package vppcfg's
// vocabulary only, and their production code never imports this package.
// What each item kind means comes from the kind descriptors vppcfg
// registers (vppcfg/internal/core); the engine branches on no kind.
package engine
