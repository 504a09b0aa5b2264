// Command vppsvc shows what vppsvc programs into VPP for a cluster, traces
// where a packet to a service goes, and runs as a node agent.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand(os.Stdout, os.Stderr).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "vppsvc:", err)
		os.Exit(1)
	}
}
