// Package frontendacl is an example of a renderer of your own, run by the
// agent next to its NAT44 and IPv6 renderers (agent.Options.ExtraRenderers)
// and checked by the conformance suite of renderer/renderertest.
//
// For every service it keeps one ACL, named after the service, that permits
// traffic to the service's frontends: its ClusterIPs, external IPs and
// load-balancer IPs on each service port, and its node ports on the node's
// IPs, in both address families. The ACL is bound to no interface: it is a
// building block a network-policy component of the embedding CNI could bind
// where it wants. It programs one kind of VPP item through the VPP layer's
// client, so it shows the whole renderer contract (vppsvc.ServiceRendererAPI)
// without the incremental engine the built-in renderers share
// (renderer.Core): keep what the last successful commit holds, compute the
// new items from the arguments, commit, and remember only on success, so
// that the Resync the processor sends after a failed call, or the same call
// made again, converges.
package frontendacl

import (
	"context"
	"net/netip"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Name is the renderer's name: the owner of its VPP items.
const Name = "frontendacl"

// Renderer keeps one frontend ACL per service. The processor calls it from
// one goroutine at a time, so it needs no lock.
type Renderer struct {
	client vppcfg.Client
	log    logrus.FieldLogger
	// nodeIPs and services are what the last successful commit rendered.
	nodeIPs  model.IPAddresses
	services map[model.ServiceID]*model.ContivService
}

var _ vppsvc.ServiceRendererAPI = (*Renderer)(nil)

// New returns a renderer that writes through client; log may be nil.
func New(client vppcfg.Client, log logrus.FieldLogger) (*Renderer, error) {
	if log == nil {
		log = logrus.StandardLogger()
	}
	return &Renderer{client: client, log: log, services: map[model.ServiceID]*model.ContivService{}}, nil
}

// ACLName is the name of a service's ACL: "fe-namespace/name", or a hash of
// the ID when that does not fit in a VPP tag.
func ACLName(id model.ServiceID) string {
	if name := "fe-" + id.String(); len(name) <= renderer.MaxLabelLen {
		return name
	}
	return "fe-" + renderer.ShortHash(id.String())
}

// Rules are the permit rules of a service's frontends, in a stable order;
// none for a service without a TCP or UDP port.
func Rules(svc *model.ContivService, nodeIPs model.IPAddresses) []vppcfg.ACLRule {
	var rules []vppcfg.ACLRule
	seen := map[vppcfg.ACLRule]bool{}
	permit := func(dst netip.Addr, proto vppcfg.Protocol, port uint16) {
		any4, any6 := netip.PrefixFrom(netip.IPv4Unspecified(), 0), netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		src := any4
		if dst.Unmap().Is6() {
			src = any6
		}
		r := vppcfg.ACLRule{Action: vppcfg.ACLPermit, Src: src, Dst: renderer.HostPrefix(dst), Protocol: proto,
			SrcPorts: vppcfg.AnyPort, DstPorts: vppcfg.SinglePort(port)}
		if !seen[r] {
			seen[r] = true
			rules = append(rules, r)
		}
	}
	for _, name := range svc.PortNames() {
		p, _ := svc.Port(name)
		proto, ok := renderer.L4Protocol(p.Protocol)
		if !ok {
			continue // SCTP: the built-in renderers skip it too
		}
		for _, ips := range []model.IPAddresses{svc.ClusterIPs, svc.ExternalIPs, svc.LoadBalancerIPs} {
			for _, ip := range ips {
				permit(ip, proto, p.Port)
			}
		}
		if p.NodePort != 0 {
			for _, ip := range nodeIPs {
				permit(ip, proto, p.NodePort)
			}
		}
	}
	return rules
}

// render adds the service's ACL to txn, or its deletion when it has no
// rules (VPP denies everything with an empty ACL).
func render(txn vppcfg.Txn, svc *model.ContivService, nodeIPs model.IPAddresses) {
	rules := Rules(svc, nodeIPs)
	if len(rules) == 0 {
		txn.Delete(vppcfg.ACLKey(ACLName(svc.ID)))
		return
	}
	txn.Put(&vppcfg.ACL{Name: ACLName(svc.ID), Rules: rules})
}

func (r *Renderer) commit(txn vppcfg.Txn) error { return txn.Commit(context.Background()) }

// AddService puts the service's ACL.
func (r *Renderer) AddService(svc *model.ContivService) error {
	txn := r.client.Txn()
	render(txn, svc, r.nodeIPs)
	if err := r.commit(txn); err != nil {
		return err
	}
	r.services[svc.ID] = svc
	return nil
}

// UpdateService replaces the service's ACL in place (VPP replaces the rules
// of an ACL under the same index, so bindings of it stay).
func (r *Renderer) UpdateService(old, svc *model.ContivService) error {
	txn := r.client.Txn()
	if old != nil && old.ID != svc.ID {
		txn.Delete(vppcfg.ACLKey(ACLName(old.ID)))
	}
	render(txn, svc, r.nodeIPs)
	if err := r.commit(txn); err != nil {
		return err
	}
	if old != nil {
		delete(r.services, old.ID)
	}
	r.services[svc.ID] = svc
	return nil
}

// DeleteService removes the service's ACL.
func (r *Renderer) DeleteService(svc *model.ContivService) error {
	if err := r.commit(r.client.Txn().Delete(vppcfg.ACLKey(ACLName(svc.ID)))); err != nil {
		return err
	}
	delete(r.services, svc.ID)
	return nil
}

// UpdateNodePortServices re-renders the services with node ports, whose
// rules name the node's IPs.
func (r *Renderer) UpdateNodePortServices(nodeIPs model.IPAddresses, npServices []*model.ContivService) error {
	txn := r.client.Txn()
	for _, svc := range npServices {
		render(txn, svc, nodeIPs)
	}
	if err := r.commit(txn); err != nil {
		return err
	}
	r.nodeIPs = nodeIPs
	for _, svc := range npServices {
		r.services[svc.ID] = svc
	}
	return nil
}

// UpdateLocalFrontendIfs changes nothing: the ACLs are bound to no interface.
func (r *Renderer) UpdateLocalFrontendIfs(_, _ model.Interfaces) error { return nil }

// UpdateLocalBackendIfs changes nothing: the ACLs do not depend on where
// endpoints run.
func (r *Renderer) UpdateLocalBackendIfs(_, _ model.Interfaces) error { return nil }

// Resync replaces everything the renderer owns with the ACLs of ev's
// services: a ResyncTxn removes the ACLs of services that are gone,
// including those deleted while the agent was down (ACLs carry a tag, so
// the VPP layer knows they are this renderer's).
func (r *Renderer) Resync(ev *model.ResyncEventData) error {
	txn := r.client.ResyncTxn()
	for _, svc := range ev.Services {
		render(txn, svc, ev.NodeIPs)
	}
	if err := r.commit(txn); err != nil {
		return err
	}
	r.nodeIPs = ev.NodeIPs
	r.services = make(map[model.ServiceID]*model.ContivService, len(ev.Services))
	for _, svc := range ev.Services {
		r.services[svc.ID] = svc
	}
	r.log.WithField("services", len(ev.Services)).Debug("frontend ACLs resynced")
	return nil
}
