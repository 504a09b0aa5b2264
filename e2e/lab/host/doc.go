// Package host is the Linux side of the lab: network namespaces (pods,
// node hosts, the external client), veth pairs, one Linux bridge in the
// root namespace, addresses, routes, static neighbours and sysctls, built
// with iproute2's ip command; sockets and processes inside a namespace.
//
// Safety rules, so that a lab never damages the machine it runs on:
//   - every name it creates starts with one prefix (Options.Prefix, "vsl"
//     by default); link names fit the kernel's 15 bytes;
//   - it marks what it creates: a link carries the alias Marker(prefix), a
//     namespace has a record under the state directory (Options.StateDir);
//   - before creating it refuses, naming the object, when the name exists
//     and is not marked as its own; re-creating its own object is a no-op,
//     so a restarted node agent can re-run its plan;
//   - it never changes or deletes anything that is not its own. Cleanup
//     removes everything of its own, also what a killed earlier run left.
package host
