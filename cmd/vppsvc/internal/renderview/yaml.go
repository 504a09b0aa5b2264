package renderview

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// flowLimit is the longest list of plain values written on one line
// ("owners: [nat44, ipv6]"); longer lists get a line per value.
const flowLimit = 60

// JSONToYAML re-encodes JSON as YAML, keeping the JSON's field order (the
// document's order: key, kind, owners, state, config) rather than sorting
// fields, with short lists of plain values on one line.
func JSONToYAML(data []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	restyle(&root)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	return b.Bytes(), nil
}

// restyle drops the JSON quoting and braces the decoder recorded, so that
// the encoder writes plain YAML, and puts short scalar lists in flow style.
func restyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		restyle(c)
	}
	switch n.Kind {
	case yaml.SequenceNode:
		width := 0
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return
			}
			width += len(c.Value) + 2
		}
		if width <= flowLimit {
			n.Style = yaml.FlowStyle
		}
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle
		}
	}
}
