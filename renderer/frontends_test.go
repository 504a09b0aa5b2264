package renderer_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
)

func TestFrontends(t *testing.T) {
	nodeIPs := ips("192.168.16.1", "fd00:16::1")
	dual := func(s *model.ContivService) {
		s.ClusterIPs = ips("10.96.0.10", "fd00:96::10")
		s.ExternalIPs = ips("198.51.100.1", "2001:db8:1b::1")
		s.LoadBalancerIPs = ips("198.51.100.1", "198.51.100.2")
		s.SetPort("", model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: 30080})
		s.SetPort("sig", model.ServicePort{Protocol: model.ProtocolSCTP, Port: 3868})
		s.SetPort("zero", model.ServicePort{Protocol: model.ProtocolUDP})
	}
	nodePort := func(s *model.ContivService) {
		s.SetPort("", model.ServicePort{Protocol: model.ProtocolTCP, Port: 80, NodePort: 30080})
	}
	tests := []struct {
		name string
		svc  *model.ContivService
		fam  renderer.Family
		want []string
	}{
		{
			name: "dual-stack, IPv4 half: sorted by kind, an address that is external and LoadBalancer IP once, SCTP and port 0 skipped",
			svc:  svc("fe", nil, dual), fam: renderer.IPv4,
			want: []string{
				"cluster-ip 10.96.0.10:80/tcp",
				"external-ip 198.51.100.1:80/tcp",
				"load-balancer 198.51.100.2:80/tcp",
				"node-port 192.168.16.1:30080/tcp",
			},
		},
		{
			name: "dual-stack, IPv6 half",
			svc:  svc("fe", nil, dual), fam: renderer.IPv6,
			want: []string{
				"cluster-ip [fd00:96::10]:80/tcp",
				"external-ip [2001:db8:1b::1]:80/tcp",
				"node-port [fd00:16::1]:30080/tcp",
			},
		},
		{
			name: "single-stack IPv6 NodePort service: nothing for IPv4, not even node ports",
			svc:  svc("v6", ips("fd00:96::11"), nodePort), fam: renderer.IPv4,
			want: nil,
		},
		{
			name: "single-stack IPv4 NodePort service: nothing for IPv6",
			svc:  svc("v4", ips("10.96.0.11"), nodePort), fam: renderer.IPv6,
			want: nil,
		},
		{
			name: "IPv4-mapped ClusterIP counts as IPv4",
			svc:  svc("mapped", model.IPAddresses{netip.MustParseAddr("::ffff:10.96.0.12")}), fam: renderer.IPv4,
			want: []string{"cluster-ip 10.96.0.12:80/tcp"},
		},
		{
			name: "more frontends than the short list handles: the duplicate is still kept once",
			svc: svc("many", ips("10.96.0.14"), func(s *model.ContivService) {
				s.ExternalIPs = ips("198.51.100.1", "198.51.100.3", "198.51.100.4", "198.51.100.5", "198.51.100.6")
				s.LoadBalancerIPs = ips("198.51.100.1", "198.51.100.2", "198.51.100.7", "198.51.100.8")
			}), fam: renderer.IPv4,
			want: []string{
				"cluster-ip 10.96.0.14:80/tcp",
				"external-ip 198.51.100.1:80/tcp",
				"external-ip 198.51.100.3:80/tcp",
				"external-ip 198.51.100.4:80/tcp",
				"external-ip 198.51.100.5:80/tcp",
				"external-ip 198.51.100.6:80/tcp",
				"load-balancer 198.51.100.2:80/tcp",
				"load-balancer 198.51.100.7:80/tcp",
				"load-balancer 198.51.100.8:80/tcp",
			},
		},
		{
			name: "the unspecified address is never a frontend",
			svc:  svc("unspec", ips("10.96.0.13"), func(s *model.ContivService) { s.ExternalIPs = ips("0.0.0.0") }), fam: renderer.IPv4,
			want: []string{"cluster-ip 10.96.0.13:80/tcp"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range renderer.Frontends(tt.svc, nodeIPs, tt.fam) {
				got = append(got, f.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("Frontends =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}
