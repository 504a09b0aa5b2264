package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/vppsvc/vppsvc/cmd/vppsvc/internal/vppcli"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func init() { extraCommands = append(extraCommands, newRenderCommand) }

func newRenderCommand(log *logrus.Logger) *cobra.Command {
	flags := &clusterFlags{}
	var output string
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Print the VPP configuration vppsvc programs for a cluster on one node",
		Long: `render runs the processor, the renderers and the VPP layer against a fake VPP
for the selected node, and prints the resulting configuration:

  -o text    the fake VPP's state (interfaces, NAT44-ED, cnat, ACLs), as VPP holds it
  -o yaml    the desired items with their owners and status (also -o json)
  -o vppcli  the VPP CLI lines an operator would type for the same configuration`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains([]string{"text", "yaml", "json", "vppcli"}, output) {
				return fmt.Errorf("-o: want text, yaml, json or vppcli, got %q", output)
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
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, yaml, json or vppcli")
	return cmd
}

// renderedItem is one desired item in yaml/json output.
type renderedItem struct {
	Key    string      `json:"key"`
	Owners []string    `json:"owners"`
	State  string      `json:"state"`
	Reason string      `json:"reason,omitempty"`
	Config vppcfg.Item `json:"config"`
}

func (s *simulation) render(w io.Writer, format string) error {
	items := s.agent.Reconciler.Desired()
	switch format {
	case "text":
		fmt.Fprintf(w, "# node %s: VPP state after rendering %d services\n", s.plan.Node, len(s.agent.Processor.Services()))
		_, err := io.WriteString(w, s.node.Dump())
		return err
	case "vppcli":
		fmt.Fprintf(w, "# node %s: VPP CLI equivalent of the configuration vppsvc programs\n", s.plan.Node)
		_, err := io.WriteString(w, strings.Join(vppcli.Lines(items), "\n")+"\n")
		return err
	}
	out := make([]renderedItem, 0, len(items))
	for _, it := range items {
		ri := renderedItem{Key: it.Key().String(), Config: it}
		if st, ok := s.agent.Reconciler.Status(it.Key()); ok {
			ri.Owners, ri.State, ri.Reason = st.Owners, st.State.String(), st.Reason
		}
		out = append(out, ri)
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
	} else {
		data = append(data, '\n')
	}
	_, err = w.Write(data)
	return err
}
