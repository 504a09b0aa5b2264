package cnat

import (
	"net/netip"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// snatPath decides whether cnat rewrites the client source to
// Config.SNATAddress on the path from a frontend to backend b. cnat decides
// source NAT per path (the path's source endpoint), never per client, so the
// choice is made per frontend kind and backend:
//
//   - externalTrafficPolicy Local: never. Only local backends serve, so the
//     reply comes back through this node anyway, and the client address is
//     preserved as the policy promises.
//   - a backend on another node, reached through an external frontend
//     (policy Cluster): always. The backend would otherwise answer the
//     external client directly, bypassing the session that turns the reply
//     back into one from the frontend; replying to the SNAT address (this
//     node) brings it back here.
//   - a backend on this node: only with HairpinSNATLocalPaths. A pod
//     reaching itself through its own service would otherwise receive a
//     packet from itself to itself and answer inside its own network stack,
//     where the reply does not match the connection it opened to the
//     frontend. A path cannot source-NAT only the flows whose client is the
//     backend, so every client of a local backend is source-NATed; with
//     HairpinSNATOnly cnat's feature nodes do that per flow instead
//     (HairpinOnlyItems, docs: "Hairpin").
//   - a backend on another node reached through a ClusterIP: never. The
//     client is on this node (pods of other nodes are translated there), so
//     the reply is routed to this node and meets its session here.
func snatPath(svc *model.ContivService, kind renderer.FrontendKind, b model.ServiceBackend, cfg *Config) bool {
	switch {
	case kind.External() && svc.ExternalTrafficPolicy == model.TrafficPolicyLocal:
		return false
	case b.Local:
		return cfg.HairpinSNAT == HairpinSNATLocalPaths
	}
	return kind.External()
}

// translationFor returns the cnat translation of one frontend served by
// backends, or nil when there is none: cnat must never receive a
// translation without paths (VPP 25.10 aborts), so an unserved frontend is
// left out and dropped another way (see RenderService).
//
// The LB type and flow hash depend only on the service's session affinity
// and the configuration, never on its backends, because VPP fixes both when
// the translation is created: a change makes the VPP layer delete and
// re-create the translation. Session affinity ClientIP hashes the source
// address only, so that every flow of a client picks the same backend, and
// uses maglev, so that adding or removing a backend re-pins only about 1/N
// of the clients. The affinity timeout cannot be expressed (docs).
func translationFor(svc *model.ContivService, fe Frontend, backends []model.ServiceBackend, cfg *Config) *vppcfg.CNATTranslation {
	if len(backends) == 0 {
		return nil
	}
	lb, _ := cfg.LoadBalancing.lbType()
	t, paths := newTranslation(len(backends))
	*t = vppcfg.CNATTranslation{
		VIP:      fe.Addr,
		Protocol: fe.Protocol,
		IsRealIP: fe.RealIP,
		LBType:   lb,
	}
	if svc.SessionAffinityTimeout > 0 {
		t.LBType, t.FlowHash = vppcfg.CNATLBMaglev, vppcfg.CNATHashSrcIP
	}
	for _, b := range backends {
		p := vppcfg.CNATPath{Dst: b.AddrPort()}
		if snatPath(svc, fe.Kind, b, cfg) {
			// Port 0: with AllocPort cnat picks a free source port per flow,
			// so that two clients using the same source port do not collide
			// on one SNAT address. cnat has no SCTP port allocator
			// (cnat_get_src_port_allocator): asking drops the packet, so an
			// SCTP flow keeps its source port.
			p.Src = netip.AddrPortFrom(cfg.SNATAddress, 0)
			t.AllocPort = fe.Protocol != vppcfg.ProtoSCTP
		}
		paths = append(paths, p)
	}
	t.Paths = uniquePaths(paths)
	return t
}

// translationAndOnePath is a translation with room for its one path.
type translationAndOnePath struct {
	t    vppcfg.CNATTranslation
	path [1]vppcfg.CNATPath
}

// newTranslation returns a translation to fill and room for its n paths:
// for one path (a one-endpoint service, and its flow keeper), both in one
// allocation of the bytes they took apart (128).
func newTranslation(n int) (*vppcfg.CNATTranslation, []vppcfg.CNATPath) {
	if n == 1 {
		both := &translationAndOnePath{}
		return &both.t, both.path[:0]
	}
	return &vppcfg.CNATTranslation{}, make([]vppcfg.CNATPath, 0, n)
}

// uniquePaths puts paths in canonical order and keeps one path per backend
// address: cnat does not reject a repeated backend, but it would double
// that backend's share of new flows.
func uniquePaths(paths []vppcfg.CNATPath) []vppcfg.CNATPath {
	vppcfg.SortCNATPaths(paths)
	out := paths[:0]
	for _, p := range paths {
		if len(out) == 0 || out[len(out)-1].Dst != p.Dst {
			out = append(out, p)
		}
	}
	return out
}

// KeeperProtocol is the protocol of flow keepers: cnat accepts a
// translation for 253 but keys no packet of it (cnat_session_make_key knows
// TCP, UDP, SCTP and ICMP only), so a keeper never translates anything.
const KeeperProtocol = vppcfg.ProtoExperiment

// flowKeeper returns the service's flow keeper, or nil when it needs none.
//
// A cnat session forwards through the load balance of its backend's host
// entry, which cnat's path tracker adds when no other source holds it; a
// translation update releases every tracker before it tracks the new paths,
// so an entry that one translation alone held goes, with the load balance
// the open flows stored (docs/renderer-ipv6.md, "Open flows across endpoint
// changes"). The keeper is a second, inert translation tracking every
// backend address the service's translations track once only: whichever of
// the two VPP updates first, the other still holds the backends both keep,
// so their open flows survive any endpoint change. Its VIP is the service's
// ClusterIP of family f with port 0 under KeeperProtocol, which no packet
// matches.
func flowKeeper(f Family, svc *model.ContivService, translations []vppcfg.Item) *vppcfg.CNATTranslation {
	vip, ok := clusterIP(f, svc)
	if !ok {
		return nil
	}
	if len(translations) == 1 {
		// Every backend address is the one translation's alone: the keeper
		// holds the first path of each (its paths are sorted by
		// destination), without counting them in maps.
		tp := translations[0].(*vppcfg.CNATTranslation).Paths
		n := 0
		for i, p := range tp {
			if i == 0 || p.Dst.Addr() != tp[i-1].Dst.Addr() {
				n++
			}
		}
		if n == 0 {
			return nil
		}
		k, paths := newTranslation(n)
		for i, p := range tp {
			if i == 0 || p.Dst.Addr() != tp[i-1].Dst.Addr() {
				paths = append(paths, vppcfg.CNATPath{Dst: p.Dst})
			}
		}
		*k = vppcfg.CNATTranslation{VIP: netip.AddrPortFrom(vip, 0), Protocol: KeeperProtocol, Paths: uniquePaths(paths)}
		return k
	}
	held := map[netip.Addr]int{}
	first := map[netip.Addr]netip.AddrPort{}
	for _, it := range translations {
		seen := map[netip.Addr]bool{}
		for _, p := range it.(*vppcfg.CNATTranslation).Paths {
			a := p.Dst.Addr()
			if seen[a] {
				continue
			}
			seen[a] = true
			if held[a]++; held[a] == 1 {
				first[a] = p.Dst
			}
		}
	}
	var paths []vppcfg.CNATPath
	for a, n := range held {
		if n == 1 {
			paths = append(paths, vppcfg.CNATPath{Dst: first[a]})
		}
	}
	if len(paths) == 0 {
		return nil
	}
	k, room := newTranslation(len(paths))
	*k = vppcfg.CNATTranslation{VIP: netip.AddrPortFrom(vip, 0), Protocol: KeeperProtocol, Paths: uniquePaths(append(room, paths...))}
	return k
}

// clusterIP is the service's ClusterIP of family f: the address every
// keeper shares with the service's own exclusive VIP.
func clusterIP(f Family, svc *model.ContivService) (netip.Addr, bool) {
	for _, ip := range svc.ClusterIPs {
		if f.IP.Has(ip) {
			return ip.Unmap(), true
		}
	}
	return netip.Addr{}, false
}
