package processor

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/vppsvc/vppsvc/model"
)

// LabelServiceProxyName marks a Service as handled by another proxy; services
// carrying it (with any value) are not rendered, as kube-proxy does when it
// runs without a proxy name of its own.
const LabelServiceProxyName = "service.kubernetes.io/service-proxy-name"

// DefaultSessionAffinityTimeout is the ClientIP affinity timeout used when a
// Service asks for ClientIP affinity without a valid timeout (the API default).
const DefaultSessionAffinityTimeout = 10800

const maxSessionAffinityTimeout = 86400

// NodeContext is what converting a Service needs to know about this node and
// the cluster's nodes. It is a value so that ConvertService stays pure.
type NodeContext struct {
	// Name is this node's name: endpoints whose nodeName equals it are Local.
	Name string
	// Zone is this node's topology.kubernetes.io/zone label; "" disables
	// topology hints.
	Zone string
	// NodeIPs are the InternalIP and ExternalIP addresses of the nodes the
	// processor knows (this node only, unless the watcher watches every
	// Node): endpoints on them are HostNetwork.
	NodeIPs model.IPAddresses
}

// ServiceIDOf returns the ID of a Service object.
func ServiceIDOf(svc *corev1.Service) model.ServiceID {
	return model.ServiceID{Namespace: svc.Namespace, Name: svc.Name}
}

// ConvertService turns a Service and the EndpointSlices labelled with its name
// into the value renderers consume. It is pure: the result depends only on the
// arguments (not on the order of slices) and nothing is logged or counted.
//
// It returns nil when the Service is not rendered: ExternalName, headless,
// without an allocated cluster IP, claimed by another proxy through
// LabelServiceProxyName, or left without any usable cluster IP or port.
// Problems lists every element skipped because it was invalid; they never
// stop the conversion of the rest.
func ConvertService(svc *corev1.Service, slices []*discoveryv1.EndpointSlice, node NodeContext) (*model.ContivService, []Problem) {
	return convertService(svc, slices, node, false)
}

// convertService is ConvertService; slicesOwned says that the caller has
// taken the slices by their namespace and service-name label, so that
// they are not checked again (the processor's cache holds a service's
// slices so; reading every slice's labels again was a tenth of a cold
// sync's conversion).
func convertService(svc *corev1.Service, slices []*discoveryv1.EndpointSlice, node NodeContext, slicesOwned bool) (*model.ContivService, []Problem) {
	if svc == nil {
		return nil, nil
	}
	c := &converter{svc: svc, slicesOwned: slicesOwned}
	// The value is drafted on the stack, its ports and the endpoints on
	// offer in rooms of the common sizes; once the number of endpoints is
	// known, it gets its memory in as few allocations as its shape allows
	// (allocValue), and its backends are picked into it.
	var draft model.ContivService
	var portRoom [2]model.NamedPort
	ports, ok := c.frontends(svc, &draft, portRoom[:0])
	if !ok {
		return nil, c.problems
	}
	var candidateRoom [8]endpoint
	candidates := c.candidates(svc, familiesOf(draft.ClusterIPs), ports, slices, node, candidateRoom[:0])
	out, room := allocValue(&draft, ports, len(candidates))
	pickBackends(out, room, candidates, node.Zone)
	return out, c.problems
}

// converter collects the problems of one conversion.
type converter struct {
	svc         *corev1.Service
	problems    []Problem
	slicesOwned bool // see convertService
}

// object names the service; built only when a problem needs it.
func (c *converter) object() string { return c.svc.Namespace + "/" + c.svc.Name }

func (c *converter) serviceProblem(field, value, reason string) {
	c.problems = append(c.problems, Problem{Kind: KindService, Object: c.object(), Field: field, Value: value, Reason: reason})
}

func (c *converter) sliceProblem(s *discoveryv1.EndpointSlice, field, value, reason string) {
	c.problems = append(c.problems, Problem{Kind: KindEndpointSlice, Object: s.Namespace + "/" + s.Name, Field: field, Value: value, Reason: reason})
}

// isRendered reports whether vppsvc renders services of this shape at all;
// these are deliberate exclusions, not problems.
func isRendered(svc *corev1.Service) bool {
	if _, claimed := svc.Labels[LabelServiceProxyName]; claimed {
		return false
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return false
	}
	ips := clusterIPStrings(svc)
	return len(ips) > 0 && ips[0] != corev1.ClusterIPNone
}

// clusterIPStrings returns spec.clusterIPs, or spec.clusterIP for objects
// written before dual-stack.
func clusterIPStrings(svc *corev1.Service) []string {
	if len(svc.Spec.ClusterIPs) > 0 {
		return svc.Spec.ClusterIPs
	}
	if svc.Spec.ClusterIP != "" {
		return []string{svc.Spec.ClusterIP}
	}
	return nil
}

// frontends converts everything but the ports and backends into out and
// returns the ports, appended to portRoom (it stores nothing of portRoom in
// out, which may stay on the caller's stack only so); false means not
// rendered.
func (c *converter) frontends(svc *corev1.Service, out *model.ContivService, portRoom []model.NamedPort) ([]model.NamedPort, bool) {
	if !isRendered(svc) {
		return nil, false
	}
	switch svc.Spec.Type {
	case "", corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	default:
		c.serviceProblem("spec.type", string(svc.Spec.Type), "unknown service type; service not rendered")
		return nil, false
	}
	out.ID = ServiceIDOf(svc)

	var clusterIPs []netip.Addr
	for _, s := range clusterIPStrings(svc) {
		ip, ok := parseIP(s)
		if !ok {
			c.serviceProblem("spec.clusterIPs[]", s, "not an IP address")
			continue
		}
		clusterIPs = append(clusterIPs, ip)
	}
	out.ClusterIPs = model.NewIPAddresses(clusterIPs...)
	if len(out.ClusterIPs) == 0 {
		return nil, false // the bad addresses were reported above
	}
	fam := familiesOf(out.ClusterIPs)

	out.ExternalIPs = c.addresses(svc.Spec.ExternalIPs, "spec.externalIPs[]", fam)
	isLB := svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if isLB {
		var ingress []string
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			// Hostname-only ingress has nothing to render; Proxy mode means
			// the load balancer delivers to the node, not to the VIP.
			if ing.IP == "" || (ing.IPMode != nil && *ing.IPMode == corev1.LoadBalancerIPModeProxy) {
				continue
			}
			ingress = append(ingress, ing.IP)
		}
		out.LoadBalancerIPs = c.addresses(ingress, "status.loadBalancer.ingress[].ip", fam)
		out.LoadBalancerSourceRanges = c.sourceRanges(svc.Spec.LoadBalancerSourceRanges)
	}

	externallyAccessible := isLB || svc.Spec.Type == corev1.ServiceTypeNodePort || len(svc.Spec.ExternalIPs) > 0
	switch svc.Spec.ExternalTrafficPolicy {
	case "", corev1.ServiceExternalTrafficPolicyCluster:
	case corev1.ServiceExternalTrafficPolicyLocal:
		// Like kube-proxy, Local only matters when something external can
		// reach the service; otherwise it would just hide endpoints.
		if externallyAccessible {
			out.ExternalTrafficPolicy = model.TrafficPolicyLocal
		}
	default:
		c.serviceProblem("spec.externalTrafficPolicy", string(svc.Spec.ExternalTrafficPolicy), "unknown policy; using Cluster")
	}
	if itp := svc.Spec.InternalTrafficPolicy; itp != nil {
		switch *itp {
		case "", corev1.ServiceInternalTrafficPolicyCluster:
		case corev1.ServiceInternalTrafficPolicyLocal:
			out.InternalTrafficPolicy = model.TrafficPolicyLocal
		default:
			c.serviceProblem("spec.internalTrafficPolicy", string(*itp), "unknown policy; using Cluster")
		}
	}
	if isLB && out.ExternalTrafficPolicy == model.TrafficPolicyLocal && svc.Spec.HealthCheckNodePort != 0 {
		if validPort(svc.Spec.HealthCheckNodePort) {
			out.HealthCheckNodePort = uint16(svc.Spec.HealthCheckNodePort)
		} else {
			c.serviceProblem("spec.healthCheckNodePort", strconv.Itoa(int(svc.Spec.HealthCheckNodePort)), "port out of range 1-65535")
		}
	}
	out.SessionAffinityTimeout = c.sessionAffinity(svc)
	ports := c.ports(svc, portRoom)
	if len(ports) == 0 {
		if len(svc.Spec.Ports) == 0 {
			c.serviceProblem("spec.ports", "", "service has no port; not rendered")
		}
		return nil, false
	}
	return ports, true
}

// ipFamilies says which address families a service serves.
type ipFamilies struct{ v4, v6 bool }

func familiesOf(ips model.IPAddresses) ipFamilies {
	var f ipFamilies
	for _, ip := range ips {
		if ip.Is4() {
			f.v4 = true
		} else {
			f.v6 = true
		}
	}
	return f
}

func (f ipFamilies) has(ip netip.Addr) bool { return (ip.Is4() && f.v4) || (ip.Is6() && f.v6) }

// addresses parses a list of frontend addresses, keeping those of a family the
// service has a cluster IP in (kube-proxy filters the same way).
func (c *converter) addresses(in []string, field string, fam ipFamilies) model.IPAddresses {
	if len(in) == 0 {
		return nil
	}
	var ips []netip.Addr
	for _, s := range in {
		ip, ok := parseIP(s)
		switch {
		case !ok:
			c.serviceProblem(field, s, "not an IP address")
		case !fam.has(ip):
			c.serviceProblem(field, s, "address family not served by the service's cluster IPs")
		default:
			ips = append(ips, ip)
		}
	}
	if len(ips) == 0 {
		return nil
	}
	return model.NewIPAddresses(ips...)
}

// sourceRanges trims, masks, sorts and deduplicates the source ranges. The API
// server has accepted padded values, which kube-proxy trims too.
func (c *converter) sourceRanges(in []string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range in {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			c.serviceProblem("spec.loadBalancerSourceRanges[]", s, "not a CIDR")
			continue
		}
		out = append(out, p.Masked())
	}
	slices.SortFunc(out, comparePrefixes)
	return slices.Compact(out)
}

func comparePrefixes(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return cmp.Compare(a.Bits(), b.Bits())
}

func (c *converter) sessionAffinity(svc *corev1.Service) uint32 {
	switch svc.Spec.SessionAffinity {
	case "", corev1.ServiceAffinityNone:
		return 0
	case corev1.ServiceAffinityClientIP:
	default:
		c.serviceProblem("spec.sessionAffinity", string(svc.Spec.SessionAffinity), "unknown affinity; using None")
		return 0
	}
	cfg := svc.Spec.SessionAffinityConfig
	if cfg == nil || cfg.ClientIP == nil || cfg.ClientIP.TimeoutSeconds == nil {
		return DefaultSessionAffinityTimeout
	}
	t := *cfg.ClientIP.TimeoutSeconds
	if t < 1 || t > maxSessionAffinityTimeout {
		c.serviceProblem("spec.sessionAffinityConfig.clientIP.timeoutSeconds", strconv.Itoa(int(t)),
			fmt.Sprintf("out of range 1-%d; using %d", maxSessionAffinityTimeout, DefaultSessionAffinityTimeout))
		return DefaultSessionAffinityTimeout
	}
	return uint32(t)
}

// parseProtocol maps an API protocol to the model; "" is the API default, TCP.
func parseProtocol(p corev1.Protocol) (model.Protocol, bool) {
	switch p {
	case "", corev1.ProtocolTCP:
		return model.ProtocolTCP, true
	case corev1.ProtocolUDP:
		return model.ProtocolUDP, true
	case corev1.ProtocolSCTP:
		return model.ProtocolSCTP, true
	}
	return 0, false
}

// ports converts the service ports, sorted by name, appending them to
// room[:0]; of two ports with one name the first is kept.
func (c *converter) ports(svc *corev1.Service, room []model.NamedPort) []model.NamedPort {
	hasNodePorts := svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	out := room[:0]
	for _, sp := range svc.Spec.Ports {
		proto, ok := parseProtocol(sp.Protocol)
		if !ok {
			c.serviceProblem("spec.ports[].protocol", string(sp.Protocol), "unknown protocol; port "+strconv.Quote(sp.Name)+" skipped")
			continue
		}
		if !validPort(sp.Port) {
			c.serviceProblem("spec.ports[].port", strconv.Itoa(int(sp.Port)), "port out of range 1-65535; port "+strconv.Quote(sp.Name)+" skipped")
			continue
		}
		// Linear: services have a handful of ports, and the API server
		// rejects duplicate names anyway.
		if slices.ContainsFunc(out, func(p model.NamedPort) bool { return p.Name == sp.Name }) {
			c.serviceProblem("spec.ports[].name", sp.Name, "duplicate port name; later port skipped")
			continue
		}
		port := model.ServicePort{Protocol: proto, Port: uint16(sp.Port)}
		if hasNodePorts && sp.NodePort != 0 {
			if validPort(sp.NodePort) {
				port.NodePort = uint16(sp.NodePort)
			} else {
				c.serviceProblem("spec.ports[].nodePort", strconv.Itoa(int(sp.NodePort)), "port out of range 1-65535; node port skipped")
			}
		}
		out = append(out, model.NamedPort{Name: sp.Name, ServicePort: port})
	}
	slices.SortFunc(out, func(a, b model.NamedPort) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
