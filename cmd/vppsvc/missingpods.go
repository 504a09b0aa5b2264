package main

import (
	"net/netip"
	"slices"

	"github.com/sirupsen/logrus"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/clusterfile"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/simnode"
)

// warnMissingLocalPods warns, once, when EndpointSlices put endpoints on the
// simulated node whose Pods the cluster file does not hold. Without the Pod
// there is no tap for it: the endpoint is routed out of uplink0 like a pod
// of another node, and its own traffic to a service is taken for an external
// client's (source-NATed, out the uplink), so render and trace would show a
// node that does not exist. The usual cause is a file made without "pods"
// in `kubectl get`. Endpoints at one of the node's IPs are host-network pods,
// which have no tap anyway.
func warnMissingLocalPods(c *clusterfile.Cluster, plan *simnode.Plan, log logrus.FieldLogger) {
	known := slices.Clone(plan.NodeIPs)
	for _, lp := range plan.LocalPods {
		known = append(known, lp.IPs...)
	}
	missing := map[netip.Addr]bool{}
	example := ""
	for _, es := range c.EndpointSlices {
		if es == nil {
			continue
		}
		for _, ep := range es.Endpoints {
			if ep.NodeName == nil || *ep.NodeName != plan.Node {
				continue
			}
			for _, ip := range unknownAddresses(ep, known) {
				if !missing[ip] && example == "" {
					example = es.Namespace + "/" + es.Name + " " + ip.String()
				}
				missing[ip] = true
			}
		}
	}
	if len(missing) == 0 {
		return
	}
	log.WithFields(logrus.Fields{"node": plan.Node, "endpoint_addresses": len(missing), "example": example, "pods_in_file": len(c.Pods)}).
		Warning("endpoints on this node have no Pod in the cluster file: the simulated node has no tap for them, so traffic to them leaves by uplink0 as to another node's pods, and theirs would arrive as an external client's; include the pods: kubectl get nodes,pods,services,endpointslices -A -o yaml")
}

// unknownAddresses are the addresses of an endpoint that are neither a
// known local pod's nor a node IP.
func unknownAddresses(ep discoveryv1.Endpoint, known []netip.Addr) []netip.Addr {
	var out []netip.Addr
	for _, s := range ep.Addresses {
		ip, err := netip.ParseAddr(s)
		if err == nil && !slices.Contains(known, ip.Unmap()) {
			out = append(out, ip.Unmap())
		}
	}
	return out
}
