// Package model holds the values that flow from the processor to the renderers:
// one ContivService per Kubernetes Service, plus the node-wide facts a renderer
// needs (node IPs, frontend and backend interfaces).
//
// Every type here is plain data built from the standard library only, so that a
// renderer author can depend on it without pulling in Kubernetes or VPP. Values
// are treated as immutable once handed to a renderer: use Clone before changing
// one. String output is deterministic so that logs, golden files and diffs are
// stable.
package model
