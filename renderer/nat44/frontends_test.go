package nat44

import (
	"testing"

	"github.com/vppsvc/vppsvc/model"
)

func TestFrontendsOrderDedupAndFilters(t *testing.T) {
	svc := service("fe", "10.96.0.10", withPort("sig", model.ProtocolSCTP, 3868, 0), func(s *model.ContivService) {
		s.ClusterIPs = ips("10.96.0.10", "fd00:96::10")
		s.ExternalIPs = ips("198.51.100.1")
		s.LoadBalancerIPs = ips("198.51.100.1", "198.51.100.2")
		s.Ports[""] = model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: 30080}
	})
	got := Frontends(svc, ips("192.168.16.1", "fd00:16::1"))
	want := []string{
		"cluster-ip 10.96.0.10:80/tcp",
		"external-ip 198.51.100.1:80/tcp",
		"load-balancer 198.51.100.2:80/tcp", // 198.51.100.1:80 is already the external IP's
		"node-port 192.168.16.1:30080/tcp",
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i, fe := range got {
		if s := fe.Kind.String() + " " + fe.Addr.String() + "/" + fe.Protocol.String(); s != want[i] {
			t.Fatalf("frontend %d = %s, want %s", i, s, want[i])
		}
	}
	if sctp := SCTPPorts(svc); len(sctp) != 1 || sctp[0] != "sig" {
		t.Fatalf("SCTPPorts = %v", sctp)
	}
}

func TestFrontendKindPolicy(t *testing.T) {
	if ClusterIPFrontend.External() {
		t.Fatal("a ClusterIP is governed by internalTrafficPolicy")
	}
	for _, k := range []FrontendKind{ExternalIPFrontend, LoadBalancerFrontend, NodePortFrontend} {
		if !k.External() {
			t.Fatalf("%s is governed by externalTrafficPolicy", k)
		}
	}
}
