// Package sample embeds the cluster that vppsvc commands use when no -f file
// is given: three nodes and a set of services that exercises every kind of
// frontend and policy. The address plan is written at the top of cluster.yaml.
package sample

import _ "embed"

// ClusterYAML is the sample cluster as multi-document YAML.
//
//go:embed cluster.yaml
var ClusterYAML []byte
