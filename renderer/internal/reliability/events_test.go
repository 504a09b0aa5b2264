package reliability_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"go.fd.io/govpp/api"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/fakevpp"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/renderer/internal/tracetest"
)

// Events keep the cluster and the agent's processor in step.

func (c *cluster) putService(p *processor.Processor, s *corev1.Service) {
	c.services[s.Name] = s
	p.UpdateService(s)
}

func (c *cluster) delService(p *processor.Processor, name string) {
	delete(c.services, name)
	p.DeleteService("default", name)
}

func (c *cluster) putSlice(p *processor.Processor, s *discoveryv1.EndpointSlice) {
	c.slices[s.Name] = s
	p.UpdateEndpointSlice(s)
}

func (c *cluster) delSlice(p *processor.Processor, name string) {
	delete(c.slices, name)
	p.DeleteEndpointSlice("default", name)
}

// TestIdentityRaces: an item deleted while its create is failing, a
// service deleted and re-created under the same name, an endpoint moving
// between slices (in both orders) each leave exactly the desired state:
// no orphan NAT44 mapping or LB local, cnat translation or ACL.
func TestIdentityRaces(t *testing.T) {
	v4 := discoveryv1.AddressTypeIPv4
	v6 := discoveryv1.AddressTypeIPv6
	base := func() *cluster { return bulkCluster(6) }
	// svc-2 is dual stack with 3 endpoints, svc-3 a filtered LoadBalancer.
	type step struct {
		name string
		do   func(c *cluster, p *processor.Processor, v *fakevpp.VPP)
		// failing: VPP keeps failing msg after the step; wait until the
		// layer counted a failure instead of waiting for convergence.
		failing string
	}
	inFlight := func(msg string, svc, endpoints int) []step {
		return []step{
			{name: "create fails", failing: msg, do: func(c *cluster, p *processor.Processor, v *fakevpp.VPP) {
				v.FailMessage(msg, int32(api.UNSPECIFIED))
				s := bulkService(100 + svc)
				s.Spec = bulkService(svc).Spec // shape of svc, new addresses below
				s.Spec.ClusterIPs = []string{fmt.Sprintf("10.96.99.%d", svc+1), fmt.Sprintf("fd00:96::99:%d", svc+1)}
				s.Spec.ClusterIP = s.Spec.ClusterIPs[0]
				s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
				for i := range s.Spec.Ports {
					s.Spec.Ports[i].NodePort = 0
				}
				if s.Spec.Type != corev1.ServiceTypeClusterIP {
					s.Spec.Type = corev1.ServiceTypeLoadBalancer
					s.Spec.Ports[0].NodePort = 31999
					s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.250"}}
				}
				c.putService(p, s)
				c.putSlice(p, slice(s.Name, v4, []discoveryv1.Endpoint{endpointOf(v4, 0), endpointOf(v4, 5)}[:endpoints]...))
				c.putSlice(p, slice(s.Name, v6, []discoveryv1.Endpoint{endpointOf(v6, 1), endpointOf(v6, 6)}[:endpoints]...))
			}},
			{name: "deleted while failing", do: func(c *cluster, p *processor.Processor, v *fakevpp.VPP) {
				name := fmt.Sprintf("svc-%d", 100+svc)
				c.delService(p, name)
				c.delSlice(p, sliceName(name, v4))
				c.delSlice(p, sliceName(name, v6))
				v.ClearFaults()
			}},
		}
	}
	recreate := func(mutate func(*corev1.Service)) []step {
		return []step{
			{name: "deleted", do: func(c *cluster, p *processor.Processor, _ *fakevpp.VPP) { c.delService(p, "svc-2") }},
			{name: "re-created", do: func(c *cluster, p *processor.Processor, _ *fakevpp.VPP) {
				s := bulkService(2)
				mutate(s)
				c.putService(p, s)
			}},
		}
	}
	move := func(addFirst bool) []step {
		extra := func(c *cluster) *discoveryv1.EndpointSlice {
			s := c.slices[sliceName("svc-2", v4)].DeepCopy()
			s.Name = "svc-2-extra"
			s.Endpoints = nil
			return s
		}
		ep := func(c *cluster) discoveryv1.Endpoint { return c.slices[sliceName("svc-2", v4)].Endpoints[0] }
		gain := step{name: "the other slice gains the endpoint", do: func(c *cluster, p *processor.Processor, _ *fakevpp.VPP) {
			s := extra(c)
			if old, ok := c.slices["svc-2-extra"]; ok {
				s = old.DeepCopy()
			}
			s.Endpoints = append(s.Endpoints, ep(c))
			c.putSlice(p, s)
		}}
		lose := step{name: "its slice loses the endpoint", do: func(c *cluster, p *processor.Processor, _ *fakevpp.VPP) {
			s := c.slices[sliceName("svc-2", v4)].DeepCopy()
			if _, ok := c.slices["svc-2-extra"]; !ok {
				c.putSlice(p, extra(c)) // empty until it gains the endpoint
			}
			s.Endpoints = s.Endpoints[1:]
			c.putSlice(p, s)
		}}
		if addFirst {
			return []step{gain, lose}
		}
		return []step{lose, gain}
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"create of a NAT44 LB mapping of one local deleted while failing", inFlight("nat44_add_del_lb_static_mapping", 0, 1)},
		{"create of NAT44 LB mapping deleted while failing", inFlight("nat44_add_del_lb_static_mapping", 2, 2)},
		{"create of cnat translations deleted while failing", inFlight("cnat_translation_update", 2, 2)},
		{"filter ACL change undone while failing", inFlight("acl_add_replace", 3, 2)},
		{"service re-created with the same name and addresses", recreate(func(*corev1.Service) {})},
		{"service re-created with other cluster IPs", recreate(func(s *corev1.Service) {
			s.Spec.ClusterIPs = []string{"10.96.98.2", "fd00:96::98:2"}
			s.Spec.ClusterIP = "10.96.98.2"
		})},
		{"service re-created single stack with other ports", recreate(func(s *corev1.Service) {
			s.Spec.ClusterIPs, s.Spec.IPFamilies = s.Spec.ClusterIPs[1:], s.Spec.IPFamilies[1:]
			s.Spec.ClusterIP = s.Spec.ClusterIPs[0]
			s.Spec.Ports = s.Spec.Ports[:1]
			s.Spec.Ports[0].Port = 8000
		})},
		{"endpoint moves: added to the other slice first", move(true)},
		{"endpoint moves: removed from its slice first", move(false)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			v := newFake(1)
			a := startAgent(t, v, true)
			a.proc.Resync(c.snapshot())
			waitDump(t, a, v, reference(t, c.snapshot(), nil), "initial state")
			for _, st := range tc.steps {
				st.do(c, a.proc, v)
				if st.failing != "" {
					if !waitFor(convergeTimeout, func() bool { return a.Rec.Stats().CallFailures[st.failing] > 0 }) {
						t.Fatalf("after %s: no %s failed", st.name, st.failing)
					}
					continue
				}
				waitDump(t, a, v, reference(t, c.snapshot(), nil), "after: "+st.name)
			}
			tracetest.AssertNoViolations(t, v)
		})
	}
}

// randomService is service i of the property test: random family, type,
// ports, affinity and traffic policy; its addresses depend on gen, so a
// re-created service may move.
func randomService(rng *rand.Rand, i int) *corev1.Service {
	gen := rng.IntN(2)
	s := bulkService(i)
	v4 := fmt.Sprintf("10.96.200.%d", 1+2*i+gen)
	v6 := fmt.Sprintf("fd00:96::200:%x", 1+2*i+gen)
	switch rng.IntN(3) {
	case 0:
		s.Spec.ClusterIPs, s.Spec.IPFamilies = []string{v4}, []corev1.IPFamily{corev1.IPv4Protocol}
	case 1:
		s.Spec.ClusterIPs, s.Spec.IPFamilies = []string{v6}, []corev1.IPFamily{corev1.IPv6Protocol}
	default:
		s.Spec.ClusterIPs, s.Spec.IPFamilies = []string{v4, v6}, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	}
	s.Spec.ClusterIP = s.Spec.ClusterIPs[0]
	s.Spec.Type, s.Status = corev1.ServiceTypeClusterIP, corev1.ServiceStatus{}
	s.Spec.LoadBalancerSourceRanges = nil
	s.Spec.Ports[0].NodePort = 0
	switch rng.IntN(4) {
	case 1:
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = int32(30100 + i)
	case 2:
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].NodePort = int32(30100 + i)
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: fmt.Sprintf("198.51.100.%d", 100+i)},
			{IP: fmt.Sprintf("2001:db8:1b::%x", 100+i)}}
		if rng.IntN(2) == 0 {
			s.Spec.LoadBalancerSourceRanges = []string{"100.64.1.0/24", "2001:db8:c:1::/64"}
		}
		if rng.IntN(2) == 0 {
			tracetest.ETPLocal(s)
		}
	}
	if rng.IntN(3) == 0 {
		s.Spec.Ports = s.Spec.Ports[:1]
	}
	// Affinity varies too: changing it changes the cnat LB type, which cnat
	// cannot update in place (a recreate: delete, then create).
	if rng.IntN(2) == 0 {
		tracetest.ClientIPAffinity(s)
	}
	return s
}

// randomSlice is a slice of service i of a family, with a random subset
// of the 12 pods (some terminating).
func randomSlice(rng *rand.Rand, i int, fam discoveryv1.AddressType, name string) *discoveryv1.EndpointSlice {
	var eps []discoveryv1.Endpoint
	for n := range 12 {
		if rng.IntN(4) == 0 {
			ep := endpointOf(fam, n)
			if rng.IntN(5) == 0 {
				ep = tracetest.Terminating(ep)
			}
			eps = append(eps, ep)
		}
	}
	s := slice(fmt.Sprintf("svc-%d", i), fam, eps...)
	s.Name = name
	return s
}

// randomEvent applies one random change to c and to the processor p, or,
// with faults, plans a VPP fault on v.
func randomEvent(rng *rand.Rand, c *cluster, p *processor.Processor, v *fakevpp.VPP, faults bool) string {
	const services = 4
	i := rng.IntN(services)
	fam := []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6}[rng.IntN(2)]
	sliceNames := []string{sliceName(fmt.Sprintf("svc-%d", i), fam), fmt.Sprintf("svc-%d-%s-b", i, fam)}
	switch k := rng.IntN(100); {
	case k < 20:
		s := randomService(rng, i)
		c.putService(p, s)
		return "put " + s.Name
	case k < 28:
		c.delService(p, fmt.Sprintf("svc-%d", i))
		return fmt.Sprintf("delete svc-%d", i)
	case k < 55:
		s := randomSlice(rng, i, fam, sliceNames[rng.IntN(2)])
		c.putSlice(p, s)
		return "put slice " + s.Name
	case k < 63:
		name := sliceNames[rng.IntN(2)]
		c.delSlice(p, name)
		return "delete slice " + name
	case k < 70:
		n := tracetest.Node(tracetest.OtherNode, otherNodeIP6, otherNodeIP4)
		if rng.IntN(2) == 0 { // a remote pod address becomes a node address (HostNetwork)
			n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "10.1.2.5"})
		}
		c.nodes[n.Name] = n
		p.UpdateNode(n)
		return "update node-2"
	case k < 73:
		delete(c.nodes, tracetest.OtherNode)
		p.DeleteNode(tracetest.OtherNode)
		return "delete node-2"
	case k < 76:
		n := tracetest.Node(tracetest.ThisNode, nodeIP6, nodeIP4)
		if rng.IntN(2) == 0 {
			n.Labels = map[string]string{corev1.LabelTopologyZone: "zone-a"}
		}
		c.nodes[n.Name] = n
		p.UpdateNode(n)
		return "update node-1"
	case k < 84:
		pod := localPod(localPods[rng.IntN(len(localPods))])
		if rng.IntN(2) == 0 {
			delete(c.pods, pod.ID.Name)
			p.DeleteLocalPod(pod.ID)
			return "delete " + pod.ID.Name
		}
		c.pods[pod.ID.Name] = pod
		p.UpdateLocalPod(pod)
		return "put " + pod.ID.Name
	case !faults:
		return "no fault planned"
	case k < 92:
		n := 1 + rng.IntN(5)
		v.FailNth(n, int32(api.UNSPECIFIED))
		return fmt.Sprintf("VPP fails its %d-th next call", n)
	case k < 97:
		v.FailRandom(0.3, rng.Int64(), int32(api.INVALID_VALUE))
		return "VPP fails 30% of calls"
	default:
		v.ClearFaults()
		return "VPP faults cleared"
	}
}

// TestPropertyIncrementalResyncRestart: over random sequences of events on
// services, slices, nodes and pods, the VPP state from incremental
// processing equals the state from one Resync of the final objects on a
// fresh agent and VPP, and equals the state after an agent restart over the
// same VPP. VPP faults are in TestPropertyWithVPPFaults.
//
// It found untagged objects (cnat translations) left in VPP when a resync
// re-read VPP while their delete was pending (fixed: vppcfg keeps their
// owner across resyncs; ipv6.Claims).
func TestPropertyIncrementalResyncRestart(t *testing.T) {
	checkProperty(t, propertySequences(t), sizes(12, 30), false)
}

// TestPropertyWithVPPFaults is the property with VPP faults (the n-th next
// call failing, bursts of 30 % failures) among the events. It found objects
// the layer lost track of after a failed call (seeds 15 and 40), and an LB
// affinity change that looked applied after a failed delete and a resync
// (seed 840; vppcfg now recalls the fields VPP does not dump).
func TestPropertyWithVPPFaults(t *testing.T) {
	checkProperty(t, propertySequences(t), sizes(12, 30), true)
}

// propertySequences is how many sequences each property test runs: 1,000,
// with or without -short, or VPPSVC_PROPERTY_SEQUENCES=<n> (the nightly
// size is 10,000: about 5 minutes without faults on two cores). A
// sequence's agents and fakes are released when it ends (inScope), so
// memory does not grow with n; time does (docs/reliability.md).
func propertySequences(t *testing.T) int {
	s := os.Getenv("VPPSVC_PROPERTY_SEQUENCES")
	if s == "" {
		return 1000
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("VPPSVC_PROPERTY_SEQUENCES=%q: want a positive number of sequences", s)
	}
	return n
}

// checkProperty runs seqs sequences of length events, seeds 0, 1, …; with
// VPPSVC_SEED=<n> only sequence n (to reproduce a failure). Each sequence
// runs in its own scope: its agents and fakes are stopped and released when
// it ends, not when the test does.
func checkProperty(t *testing.T, seqs, length int, faults bool) {
	first := uint64(0)
	if s := os.Getenv("VPPSVC_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("VPPSVC_SEED: %v", err)
		}
		first, seqs = n, 1
	}
	for seed := first; seed < first+uint64(seqs); seed++ {
		inScope(t, func(tb testing.TB) { propertySequence(tb, seed, length, faults) })
	}
}

// propertySequence runs the sequence of seed: length random events on an
// agent over a fake, checked against a fresh agent's Resync of the final
// objects, then an agent restart over the same fake. It returns the fake
// and the two agents, stopped, for TestStoppedAgentsAreCollected; their
// cleanups are registered with tb.
func propertySequence(tb testing.TB, seed uint64, length int, faults bool) (v *fakevpp.VPP, a, b *agent) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x7e57))
	resetSeqLog()
	c := newCluster()
	for i := range 4 {
		if rng.IntN(2) == 0 {
			c.addService(randomService(rng, i))
			c.addSlice(randomSlice(rng, i, discoveryv1.AddressTypeIPv4, sliceName(fmt.Sprintf("svc-%d", i), discoveryv1.AddressTypeIPv4)))
			c.addSlice(randomSlice(rng, i, discoveryv1.AddressTypeIPv6, sliceName(fmt.Sprintf("svc-%d", i), discoveryv1.AddressTypeIPv6)))
		}
	}
	v = newFake(int64(seed))
	a = startAgent(tb, v, true)
	a.proc.Resync(c.snapshot())
	var log []string
	for range length {
		log = append(log, randomEvent(rng, c, a.proc, v, faults))
	}
	v.ClearFaults()
	what := fmt.Sprintf("seed %d, events %q", seed, log)
	want := reference(tb, c.snapshot(), nil)
	waitDump(tb, a, v, want, what+": incremental")
	a.stop()
	b = startAgent(tb, v, false)
	b.proc.Resync(c.snapshot())
	waitDump(tb, b, v, want, what+": after an agent restart")
	b.stop()
	return v, a, b
}
