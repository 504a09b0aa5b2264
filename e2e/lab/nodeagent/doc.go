// Package nodeagent is the lab's reference CNI node agent: the first real
// embedder of vppsvc. Per node it runs (or adopts) its own VPP, builds the
// node as a VPP CNI does — an uplink on the lab's bridge, a host link to
// the node's own kernel, one interface per pod, an L2 member of the pods'
// bridge domain whose BVI is the pods' one L3 interface — embeds vppsvc through
// agent.New and k8swatch as the README tells an embedder, and acts as the
// node's kubelet for the lab's pods: a network namespace per pod running
// the pod's netexec container, status written back, graceful deletion.
//
// What it does that a production CNI must also do, seen from vppsvc:
//   - name the interfaces it gives vppsvc (FrontendInterfaces: uplink0,
//     host0 and the pods' BVI pods0, made before vppsvc starts) and report
//     each local pod (UpdateLocalPod) with the VPP interface that reaches
//     it, pods0, once the pod's own interface is in the bridge: a new pod
//     then adds no NAT44 interface, whose outside role would make VPP walk
//     every service's mapping;
//   - make the pods' BVI IP-enabled (unnumbered), route each pod IP
//     through it with a static neighbour, and route other nodes' pod CIDRs
//     over the uplink;
//   - survive its own restart without touching VPP (adopt interfaces and
//     pods; vppsvc's resync is hitless), and re-create every interface after
//     a VPP restart (vppsvc re-applies its configuration once they exist).
package nodeagent
