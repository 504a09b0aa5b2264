// Package cnat4 renders Kubernetes Services for IPv4 into VPP's cnat plugin
// and ACLs, through the declarative VPP layer (package vppcfg): the IPv4
// face of renderer/cnat, whose IPv6 face is renderer/ipv6. It is the
// alternative to the NAT44-ED renderer (renderer/nat44); an agent runs
// exactly one of the two (agent.Config.IPv4Renderer).
//
// For every IPv4 frontend of a TCP or UDP service port (each ClusterIP,
// external IP and LoadBalancer ingress IP with the port, and every IPv4
// node IP with the node port) of a service with an IPv4 ClusterIP, the
// renderer puts one cnat translation that load-balances the frontend over
// the IPv4 endpoints its traffic policy allows (cnat.RenderService), with
// the same objects and decisions as the IPv6 renderer.
//
// docs/renderer-cnat4.md describes what is particular to IPv4 and how it
// compares with the NAT44-ED renderer; docs/renderer-ipv6.md the objects
// and decisions both cnat renderers share.
package cnat4

import (
	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/renderer/cnat"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// Name is the renderer's name in logs and the prefix of the ACL names it owns.
const Name = "cnat4"

// Family is the IPv4 face of renderer/cnat: what Config.Validate takes.
var Family = cnat.IPv4

// Config is the node configuration of the renderer: cnat.Config, whose
// addresses are IPv4 ones here. Validate it with Validate(&cfg).
type Config = cnat.Config

// Renderer implements vppsvc.ServiceRendererAPI for IPv4 with cnat.
type Renderer = cnat.Renderer

// DefaultConfig returns the documented defaults. SNATAddress is left unset:
// it depends on the node and must be configured (the agent takes the node's
// first IPv4 address).
func DefaultConfig() Config { return cnat.DefaultConfig() }

// Validate reports every invalid field of cfg, named by its YAML path.
func Validate(cfg *Config) error { return cfg.Validate(Family) }

// New returns a renderer writing through client. cfg must pass Validate;
// start from DefaultConfig. Nothing is written before the first Resync.
func New(client vppcfg.Client, cfg Config, log logrus.FieldLogger) (*Renderer, error) {
	return cnat.New(Family, client, cfg, log)
}

// Claims are the VPP layer claims of this renderer (cnat.Claims): every
// IPv4 cnat translation, and cnat-input-ip4 and cnat-output-ip4 on every
// interface. They overlap the NAT44 renderer's, which is why the agent never
// runs both.
func Claims() map[string]vppcfg.UntaggedClaimFunc { return cnat.Claims(Family) }
