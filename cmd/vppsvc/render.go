package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/clusterfile"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/renderview"
	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/vppcli"
	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/processor"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func init() { extraCommands = append(extraCommands, newRenderCommand) }

// renderFormats are the -o values of render; the first is the default.
var renderFormats = []string{"services", "vppcli", "yaml", "json", "text"}

func newRenderCommand(log *logrus.Logger) *cobra.Command {
	flags := &clusterFlags{}
	var output string
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Print how vppsvc programs a cluster's Services into VPP on one node",
		Long: `render runs the processor, the renderers and the VPP layer against a fake VPP
for the selected node, and prints the result:

  -o services  one block per Service: frontends, the VPP objects that implement
               each, backends, traffic policies, affinity, source ranges (default)
  -o vppcli    the VPP CLI lines an operator would type for the same configuration
  -o yaml      every desired VPP item with its owners and state (also -o json;
               the JSON fields are a contract, see docs/cli.md)
  -o text      the data plane's own dump of its state (interfaces, routes,
               NAT44-ED, ACLs, cnat), as VPP holds it

The terms the output uses are explained in docs/glossary.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains(renderFormats, output) {
				return usagef("-o: want %s, got %q", strings.Join(renderFormats, ", "), output)
			}
			sim, err := simulate(cmd.Context(), flags, cmd.InOrStdin(), log)
			if err != nil {
				return err
			}
			defer sim.close()
			return sim.render(cmd.OutOrStdout(), output)
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", renderFormats[0], "output format: "+strings.Join(renderFormats, ", "))
	return cmd
}

func (s *simulation) render(w io.Writer, format string) error {
	items := s.agent.Reconciler.Desired()
	switch format {
	case "services":
		svcs := renderview.Services(renderview.Input{
			Services:     s.agent.Processor.Services(),
			NodePortIPs:  s.agent.Processor.NodePortIPs(),
			Items:        items,
			ServiceKeys:  s.serviceKeys(),
			Owners:       s.owners,
			Types:        serviceTypes(s.cluster),
			BackendNodes: endpointNodes(s.cluster),
		})
		skipped := skippedElements(s.cluster)
		for i := range svcs {
			svcs[i].Skipped = skipped[svcs[i].ID]
		}
		return renderview.WriteServices(w, s.plan.Node, svcs, renderview.NodeWide(items, svcs), s.notRendered())
	case "text":
		fmt.Fprintf(w, "# node %s: VPP state after rendering %d services\n", s.plan.Node, len(s.agent.Processor.Services()))
		_, err := io.WriteString(w, wrapDump(s.node.Dump()))
		return err
	case "vppcli":
		fmt.Fprintf(w, "# node %s: VPP CLI equivalent of the configuration vppsvc programs\n", s.plan.Node)
		_, err := io.WriteString(w, strings.Join(vppcli.Lines(items), "\n")+"\n")
		return err
	}
	doc := renderview.BuildDocument(s.plan.Node, items, s.status)
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if data, err = renderview.JSONToYAML(data); err != nil {
			return err
		}
	} else {
		data = append(data, '\n')
	}
	_, err = w.Write(data)
	return err
}

// serviceKeyer is implemented by renderers built on renderer.Core.
type serviceKeyer interface {
	ServiceKeys() map[model.ServiceID][]vppcfg.Key
}

// serviceKeys are, per renderer, the items each service wins.
func (s *simulation) serviceKeys() map[string]map[model.ServiceID][]vppcfg.Key {
	out := map[string]map[model.ServiceID][]vppcfg.Key{}
	for name, r := range s.agent.Renderers {
		if sk, ok := r.(serviceKeyer); ok {
			out[name] = sk.ServiceKeys()
		}
	}
	return out
}

// owners returns the renderers that desire an item.
func (s *simulation) owners(k vppcfg.Key) []string {
	st, _ := s.agent.Reconciler.Status(k)
	return st.Owners
}

// status is the VPP layer's status of an item, for the document.
func (s *simulation) status(k vppcfg.Key) (renderview.ItemStatus, bool) {
	st, ok := s.agent.Reconciler.Status(k)
	if !ok {
		return renderview.ItemStatus{}, false
	}
	return renderview.ItemStatus{Owners: st.Owners, State: st.State.String(), Reason: st.Reason}, true
}

// serviceTypes are the spec.type of the cluster file's Services; the
// processor's model does not keep it.
func serviceTypes(c *clusterfile.Cluster) map[model.ServiceID]string {
	out := map[model.ServiceID]string{}
	for _, svc := range c.Services {
		t := svc.Spec.Type
		if t == "" {
			t = corev1.ServiceTypeClusterIP
		}
		out[model.ServiceID{Namespace: svc.Namespace, Name: svc.Name}] = string(t)
	}
	return out
}

// notRendered lists the cluster file's Services the processor has no
// model of, with the likely reason.
func (s *simulation) notRendered() []string {
	have := map[model.ServiceID]bool{}
	for _, svc := range s.agent.Processor.Services() {
		have[svc.ID] = true
	}
	var out []string
	for _, svc := range s.cluster.Services {
		id := model.ServiceID{Namespace: svc.Namespace, Name: svc.Name}
		if have[id] {
			continue
		}
		why := "skipped by the processor (see the warnings above)"
		if skipped := skippedElements(s.cluster)[id]; len(skipped) > 0 {
			why = "nothing usable left: skipped " + strings.Join(skipped, "; ")
		}
		switch {
		case svc.Spec.Type == corev1.ServiceTypeExternalName:
			why = "ExternalName (a DNS alias: nothing to program)"
		case svc.Spec.ClusterIP == corev1.ClusterIPNone:
			why = "headless (clusterIP None: clients reach the pods directly)"
		}
		out = append(out, id.String()+": "+why)
	}
	slices.Sort(out)
	return out
}

// skippedElements are, per Service of the cluster file, the invalid elements
// the processor skips (a port out of range, an unknown protocol), as
// "field \"value\": reason". The processor logs each once as a warning; the
// service view shows them where the service is read.
func skippedElements(c *clusterfile.Cluster) map[model.ServiceID][]string {
	out := map[model.ServiceID][]string{}
	for _, svc := range c.Services {
		// The Service alone: its EndpointSlices' problems are the backends'.
		_, problems := processor.ConvertService(svc, nil, processor.NodeContext{})
		id := model.ServiceID{Namespace: svc.Namespace, Name: svc.Name}
		for _, p := range problems {
			out[id] = append(out[id], fmt.Sprintf("%s %q: %s", p.Field, p.Value, p.Reason))
		}
	}
	return out
}

// endpointNodes maps endpoint addresses to the node the EndpointSlice says
// they run on.
func endpointNodes(c *clusterfile.Cluster) map[netip.Addr]string {
	out := map[netip.Addr]string{}
	for _, es := range c.EndpointSlices {
		for _, ep := range es.Endpoints {
			if ep.NodeName == nil {
				continue
			}
			for _, a := range ep.Addresses {
				if ip, err := netip.ParseAddr(a); err == nil {
					out[ip.Unmap()] = *ep.NodeName
				}
			}
		}
	}
	return out
}

// wrapDump wraps the data plane dump's long lines (an interface's ACL list
// is one line) at vppcli.Width, continuing four columns deeper.
func wrapDump(dump string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(dump, "\n") {
		body := strings.TrimSuffix(line, "\n")
		if len(body) <= vppcli.Width {
			b.WriteString(line)
			continue
		}
		indent := body[:len(body)-len(strings.TrimLeft(body, " "))]
		for _, l := range vppcli.Wrap(indent, indent+"    ", body, vppcli.Width) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
