package renderertest

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Builders of model values for renderer table tests. They panic on a
// malformed literal, which is a bug in the test.

// IPs returns the set of the given addresses.
func IPs(addrs ...string) model.IPAddresses {
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return model.NewIPAddresses(out...)
}

// Backend builds an endpoint from "ip:port" ("[ip6]:port") and the flags
// "local", "hostnet" and "term" (serving but terminating).
func Backend(addrPort string, flags ...string) model.ServiceBackend {
	a := netip.MustParseAddrPort(addrPort)
	b := model.ServiceBackend{IP: a.Addr(), Port: a.Port()}
	for _, f := range flags {
		switch f {
		case "local":
			b.Local = true
		case "hostnet":
			b.HostNetwork = true
		case "term":
			b.Terminating = true
		default:
			panic("renderertest: unknown backend flag " + f)
		}
	}
	return b
}

// Service builds the ClusterIP service default/<name> with the given
// ClusterIP and one unnamed TCP port 80, changed by the mutators.
func Service(name, clusterIP string, mutate ...func(*model.ContivService)) *model.ContivService {
	s := &model.ContivService{
		ID:         model.ServiceID{Namespace: "default", Name: name},
		ClusterIPs: IPs(clusterIP),
		Ports:      []model.NamedPort{{ServicePort: model.ServicePort{Protocol: model.ProtocolTCP, Port: 80}}},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// WithBackends sets the backends of a port, which must exist (Service's
// unnamed port, or WithPort before).
func WithBackends(port string, bs ...model.ServiceBackend) func(*model.ContivService) {
	return func(s *model.ContivService) { s.SetBackends(port, bs) }
}

// WithPort adds or replaces a port.
func WithPort(name string, proto model.Protocol, port, nodePort uint16) func(*model.ContivService) {
	return func(s *model.ContivService) {
		s.SetPort(name, model.ServicePort{Protocol: proto, Port: port, NodePort: nodePort})
	}
}

// FilterKeys returns the keys of a renderer's filter items on the given
// frontend interfaces: every shard ACL, its bindings and the permit-all ACL
// with its bindings, which renderer.Core puts when the first service gets
// filter rules and deletes when the last one loses them.
func FilterKeys(shards renderer.ACLShards, frontendIfs model.Interfaces) []vppcfg.Key {
	var keys []vppcfg.Key
	for _, it := range shards.Bindings(frontendIfs) {
		keys = append(keys, it.Key())
	}
	for i := range shards.Count {
		keys = append(keys, vppcfg.ACLKey(shards.Name(i)))
	}
	return keys
}
