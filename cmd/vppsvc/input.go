package main

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"

	"github.com/vppsvc/vppsvc/agent"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/decodeerr"
	"github.com/vppsvc/vppsvc/processor"

	"github.com/spf13/pflag"
)

// stdinPath is what a file flag (-f, --flows, --config) takes to read stdin.
const stdinPath = "-"

// maxConfigSize bounds a --config file: the whole configuration is under a
// KiB, so anything near this is not one.
const maxConfigSize = 1 << 20

// readInput reads the file at path, or stdin for "-", and refuses more than
// limit bytes without reading further: a wrong file (a disk image, a log)
// fails at once instead of being held in memory. source names the input in
// errors ("stdin" or the path).
func readInput(path string, stdin io.Reader, limit int64) (data []byte, source string, err error) {
	source, r := path, stdin
	if path == stdinPath {
		source = "stdin"
	} else {
		fh, err := os.Open(path)
		if err != nil {
			return nil, path, err
		}
		defer fh.Close()
		r = fh
	}
	data, err = io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, source, fmt.Errorf("%s: %w", source, err)
	}
	if int64(len(data)) > limit {
		return nil, source, fmt.Errorf("%s: over the limit of %d bytes", source, limit)
	}
	return data, source, nil
}

// oneStdin refuses two file flags that both say "-": stdin can be read once.
// flags alternates flag names and values.
func oneStdin(flags ...string) error {
	first := ""
	for i := 0; i+1 < len(flags); i += 2 {
		if flags[i+1] != stdinPath {
			continue
		}
		if first != "" {
			return fmt.Errorf("%s and %s both read stdin (-): give one of them a file", first, flags[i])
		}
		first = flags[i]
	}
	return nil
}

// configFlags are the flags that override fields of the --config file,
// with kube-proxy's names.
type configFlags struct {
	// nodePortAddresses is --nodeport-addresses.
	nodePortAddresses []string
	// serviceCIDRs is --service-cluster-ip-range.
	serviceCIDRs []string
	// ipv4Renderer is --ipv4-renderer (not kube-proxy's): the file's
	// ipv4Renderer.
	ipv4Renderer string
}

func (f *configFlags) register(fl *pflag.FlagSet) {
	fl.StringSliceVar(&f.nodePortAddresses, "nodeport-addresses", nil, nodePortAddressesUsage)
	fl.StringVar(&f.ipv4Renderer, "ipv4-renderer", "", "the IPv4 renderer: \""+agent.IPv4RendererNAT44+"\" (NAT44-ED, the default) or \""+agent.IPv4RendererCNAT+"\" (cnat); overrides the config file's ipv4Renderer")
	fl.StringSliceVar(&f.serviceCIDRs, "service-cluster-ip-range", nil, "the cluster's service CIDRs (one per family, as the API server's flag): traffic to an address of them that no service translates is dropped; overrides the config file's serviceClusterIPRange and the cluster's ServiceCIDR objects (the default)")
}

// validate checks the flags' values on their own, before anything waits
// for the cluster or VPP, and says once which flag and value is wrong.
func (f configFlags) validate() error {
	switch f.ipv4Renderer {
	case "", agent.IPv4RendererNAT44, agent.IPv4RendererCNAT:
	default:
		return usagef("--ipv4-renderer: %q is neither %q nor %q", f.ipv4Renderer, agent.IPv4RendererNAT44, agent.IPv4RendererCNAT)
	}
	for _, v := range f.nodePortAddresses {
		v = strings.TrimSpace(v)
		if v == processor.NodePortAddressesPrimary {
			if len(f.nodePortAddresses) > 1 {
				return usagef("--nodeport-addresses: %q cannot be combined with CIDRs", v)
			}
			continue
		}
		if why := cidrProblem(v); why != "" {
			return usagef("--nodeport-addresses: %q is neither a CIDR nor %q: %s", v, processor.NodePortAddressesPrimary, why)
		}
	}
	for _, v := range f.serviceCIDRs {
		if why := cidrProblem(strings.TrimSpace(v)); why != "" {
			return usagef("--service-cluster-ip-range: %q is not a CIDR: %s", v, why)
		}
	}
	return nil
}

// cidrProblem says what is wrong with a CIDR ("" when nothing): netip's
// reason without its own restatement of the input.
func cidrProblem(v string) string {
	_, err := netip.ParsePrefix(v)
	if err == nil {
		return ""
	}
	msg := err.Error()
	if _, why, ok := strings.Cut(msg, "): "); ok {
		return why
	}
	return msg
}

// loadConfig is agent.LoadConfig for the --config flag, which also takes
// "-" for stdin; the flags in over, when given, replace the file's fields.
func loadConfig(path string, stdin io.Reader, nodeIPs []netip.Addr, over configFlags) (agent.Config, error) {
	var c agent.Config
	var err error
	source := path
	if path != stdinPath {
		c, err = agent.LoadConfig(path, nodeIPs)
	} else {
		var data []byte
		if data, source, err = readInput(path, stdin, maxConfigSize); err != nil {
			return agent.Config{}, fmt.Errorf("--config: %w", err)
		}
		c, err = agent.ParseConfig(source, data, nodeIPs)
	}
	if msg, ok := decodeerr.Explain(err); ok {
		// The decoder's own words name Go types; say what the file has wrong.
		err = fmt.Errorf("--config %s: %s", source, msg)
	}
	if err != nil || (len(over.nodePortAddresses) == 0 && len(over.serviceCIDRs) == 0 && over.ipv4Renderer == "") {
		return c, err
	}
	if over.ipv4Renderer != "" {
		c.SelectIPv4Renderer(over.ipv4Renderer)
	}
	if len(over.nodePortAddresses) > 0 {
		c.NodePortAddresses = over.nodePortAddresses
	}
	if len(over.serviceCIDRs) > 0 {
		c.ServiceClusterIPRange = over.serviceCIDRs
	}
	if err := over.validate(); err != nil {
		return c, err
	}
	if err := c.Validate(); err != nil {
		// The flags' values are valid (validate): what fails is the
		// configuration they complete.
		return c, fmt.Errorf("--config with --nodeport-addresses/--service-cluster-ip-range/--ipv4-renderer: %w", err)
	}
	return c, nil
}

// nodePortAddressesUsage documents --nodeport-addresses, kube-proxy's flag.
const nodePortAddressesUsage = "CIDRs selecting this node's addresses that answer NodePorts, or \"primary\" (the default, as kube-proxy's nftables mode: the node's primary IP of each family); overrides the config file's nodePortAddresses"
