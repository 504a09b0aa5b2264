// Package vppnode runs one lab node's VPP 25.10 and offers the operations
// a CNI node agent needs on it: af_packet interfaces on host veths,
// renamed, up, with addresses or unnumbered, IPv6, routes, static
// neighbours, MACs, the pods' bridge domain with its loopback BVI and its
// members (bridge.go), through govpp's binary API.
//
// What it owns and its safety rules:
//   - a VPP lives in its own directory (Options.Dir, under the lab's state
//     directory): startup.conf, the API, CLI and stats sockets, vpp.pid,
//     vpp.log; its api-segment prefix is unique per node;
//   - it starts VPP in its own process group, so the VPP outlives the node agent
//     that started it; Start over a VPP still running from that directory
//     adopts it; Kill signals only the process recorded in vpp.pid, and
//     only if that process runs this directory's startup.conf;
//   - it refuses a missing binary or one that is not VPP 25.10, before
//     starting anything (see CheckBinary), and checks the running VPP's
//     own answer again (show_version);
//   - every operation of Client is idempotent: a node agent restarted over
//     its VPP re-runs the same plan and VPP receives no change (Changes
//     counts what was sent).
package vppnode
