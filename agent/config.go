// Package agent assembles the library into a node agent: processor →
// renderers (NAT44 or cnat for IPv4, cnat for IPv6) → VPP layer → govpp driver. The
// vppsvc command (render, trace, run) and the e2e tests build exactly this
// agent; only the VPP behind the driver (fakevpp or a real socket) and the
// source of cluster state (a file, or client-go through processor/k8swatch)
// differ. An embedding CNI agent may use it too, or wire the packages itself.
// What a running agent knows is served to the state inspector by package
// agent/inspect (Agent.Inspect, inspect.Handler).
package agent

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/renderer"
	"github.com/vppsvc/vppsvc/renderer/cnat4"
	"github.com/vppsvc/vppsvc/renderer/ipv6"
	"github.com/vppsvc/vppsvc/renderer/nat44"
)

// The IPv4 renderers IPv4Renderer chooses between.
const (
	// IPv4RendererNAT44 is the NAT44-ED renderer (renderer/nat44), the default.
	IPv4RendererNAT44 = "nat44"
	// IPv4RendererCNAT is the cnat IPv4 renderer (renderer/cnat4).
	IPv4RendererCNAT = "cnat"
)

// Config is the --config file: one section per renderer, each with the
// renderer's own fields and defaults (docs/renderer-nat44.md,
// docs/renderer-cnat4.md, docs/renderer-ipv6.md).
type Config struct {
	// IPv4Renderer chooses the one IPv4 renderer the agent runs:
	// IPv4RendererNAT44 ("nat44", the default when empty) or
	// IPv4RendererCNAT ("cnat"). Their claims on IPv4 cnat objects overlap,
	// so the two never run on one node at once.
	IPv4Renderer string       `json:"ipv4Renderer"`
	NAT44        nat44.Config `json:"nat44"`
	CNAT4        cnat4.Config `json:"cnat4"`
	IPv6         ipv6.Config  `json:"ipv6"`
	// DisableIPv4 and DisableIPv6 leave one family unrendered.
	DisableIPv4 bool `json:"disableIPv4"`
	DisableIPv6 bool `json:"disableIPv6"`
	// NodePortAddresses is kube-proxy's nodePortAddresses: CIDRs selecting
	// this node's addresses that answer NodePorts, or ["primary"] (the
	// default, as kube-proxy's nftables mode): the node's primary IP of each
	// family (processor.ParseNodePortAddresses).
	NodePortAddresses []string `json:"nodePortAddresses"`
	// ServiceClusterIPRange is the cluster's service CIDRs (the API
	// server's --service-cluster-ip-range), of either family: traffic to an
	// address of them that no service translates is dropped, as kube-proxy
	// rejects it. When set, the cluster's ServiceCIDR objects are ignored;
	// when not, their CIDRs are used. Each ClusterIP outside every service
	// CIDR still drops its other ports by a route of its own.
	ServiceClusterIPRange []string `json:"serviceClusterIPRange"`
}

// DefaultConfig returns the renderers' defaults, with the node-dependent
// addresses taken from the node's own IPs: the first IPv4 address as the
// twice-NAT address and as the cnat IPv4 renderer's SNAT address, the first
// IPv6 address as cnat's IPv6 SNAT address. A family the node has no address
// of is disabled unless the file configures it.
func DefaultConfig(nodeIPs []netip.Addr) Config {
	c := Config{IPv4Renderer: IPv4RendererNAT44, NAT44: nat44.DefaultConfig(), CNAT4: cnat4.DefaultConfig(), IPv6: ipv6.DefaultConfig()}
	for _, ip := range nodeIPs {
		if ip.Is4() && !c.NAT44.TwiceNATAddress.IsValid() {
			c.NAT44.TwiceNATAddress = ip
			c.CNAT4.SNATAddress = ip
		}
		if ip.Is6() && !ip.Is4In6() && !c.IPv6.SNATAddress.IsValid() {
			c.IPv6.SNATAddress = ip
		}
	}
	c.DisableIPv4 = !c.ipv4Address().IsValid()
	c.DisableIPv6 = !c.IPv6.SNATAddress.IsValid()
	return c
}

// UseCNAT4 reports whether the IPv4 renderer is the cnat one.
func (c *Config) UseCNAT4() bool { return c.IPv4Renderer == IPv4RendererCNAT }

// SelectIPv4Renderer makes name (IPv4RendererNAT44 or IPv4RendererCNAT)
// the IPv4 renderer, as a flag overriding the file does; the family is
// disabled when that renderer has no address. Validate names a bad name.
func (c *Config) SelectIPv4Renderer(name string) {
	c.IPv4Renderer = name
	if !c.ipv4Address().IsValid() {
		c.DisableIPv4 = true
	}
}

// ipv4Address is the node address the chosen IPv4 renderer needs: without
// it the family is not rendered.
func (c *Config) ipv4Address() netip.Addr {
	if c.UseCNAT4() {
		return c.CNAT4.SNATAddress
	}
	return c.NAT44.TwiceNATAddress
}

// LoadConfig starts from DefaultConfig(nodeIPs), applies the file at path
// (if path is not empty) and validates the renderers that stay enabled.
//
// A family is rendered unless the file disables it, or it has no address:
// the node has none of that family and the file sets none. So a file that
// tunes only the NAT44 section works on an IPv4-only node, and a file that
// sets ipv6.snatAddress enables IPv6 on a node without an IPv6 address.
// The IPv4 family's address is that of the renderer IPv4Renderer chooses
// (nat44.twiceNATAddress or cnat4.snatAddress).
func LoadConfig(path string, nodeIPs []netip.Addr) (Config, error) {
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return DefaultConfig(nodeIPs), fmt.Errorf("--config: %w", err)
		}
		return ParseConfig(path, data, nodeIPs)
	}
	c := DefaultConfig(nodeIPs)
	return c, c.Validate()
}

// ParseConfig is LoadConfig for a file already read (stdin, a ConfigMap's
// value); source names it in errors.
func ParseConfig(source string, data []byte, nodeIPs []netip.Addr) (Config, error) {
	c := DefaultConfig(nodeIPs)
	c.DisableIPv4, c.DisableIPv6 = false, false
	if err := renderer.DecodeConfig(data, &c); err != nil {
		return c, fmt.Errorf("--config %s: %w", source, err)
	}
	if c.IPv4Renderer == "" {
		c.IPv4Renderer = IPv4RendererNAT44
	}
	c.DisableIPv4 = c.DisableIPv4 || !c.ipv4Address().IsValid()
	c.DisableIPv6 = c.DisableIPv6 || !c.IPv6.SNATAddress.IsValid()
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("--config %s: %w", source, err)
	}
	return c, nil
}

// Validate checks the enabled renderers' sections.
func (c *Config) Validate() error {
	var errs []error
	switch {
	case c.IPv4Renderer != "" && c.IPv4Renderer != IPv4RendererNAT44 && !c.UseCNAT4():
		errs = append(errs, renderer.FieldErrorf("ipv4Renderer", "%q is not %q or %q", c.IPv4Renderer, IPv4RendererNAT44, IPv4RendererCNAT))
	case c.DisableIPv4:
	case c.UseCNAT4():
		errs = append(errs, cnat4.Validate(&c.CNAT4))
	default:
		errs = append(errs, c.NAT44.Validate())
	}
	if !c.DisableIPv6 {
		errs = append(errs, c.IPv6.Validate())
	}
	if c.DisableIPv4 && c.DisableIPv6 {
		errs = append(errs, errors.New("both address families are disabled: nothing to render"))
	}
	if _, err := processor.ParseNodePortAddresses(c.NodePortAddresses); err != nil {
		errs = append(errs, renderer.FieldErrorf("nodePortAddresses", "%v", err))
	}
	if _, err := parseCIDRs(c.ServiceClusterIPRange); err != nil {
		errs = append(errs, renderer.FieldErrorf("serviceClusterIPRange", "%v", err))
	}
	return errors.Join(errs...)
}

// parseCIDRs reads comma-free CIDR strings (a flag's values, a list in the
// file).
func parseCIDRs(values []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range values {
		p, err := netip.ParsePrefix(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR", v)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// serviceCIDRs is the parsed ServiceClusterIPRange (Validate accepted it):
// the processor hands them to the renderers instead of the cluster's
// ServiceCIDR objects.
func (c *Config) serviceCIDRs() []netip.Prefix {
	cidrs, _ := parseCIDRs(c.ServiceClusterIPRange)
	return cidrs
}

// nodePortAddresses is the parsed NodePortAddresses (Validate accepted it).
func (c *Config) nodePortAddresses() processor.NodePortAddresses {
	n, _ := processor.ParseNodePortAddresses(c.NodePortAddresses)
	return n
}
