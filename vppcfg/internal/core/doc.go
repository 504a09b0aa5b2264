// Package core is what package vppcfg (the renderers' vocabulary), its
// engine (vppcfg/engine) and its driver (vppcfg/govppdriver) share without
// renderers seeing it:
//
//   - the kind constants, which vppcfg re-exports;
//   - the kind descriptors: vppcfg's kind files register one per kind, the
//     engine reads them, and neither names the other's internals (a merged
//     kind's hooks see the engine through the interfaces of merge.go, and
//     the engine keeps the kind's state as an opaque MergedState);
//   - the desired-state store, which validates an owner's set for
//     vppcfgtest.ValidateSet and holds it for the engine;
//   - owner names, the VPP tags the engine writes, and the errors a commit
//     wraps;
//   - the values only the kind files and the driver read: the drop
//     routes' mark, NAT44's effective timeouts.
package core
