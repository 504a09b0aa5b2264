// Command vppsvc shows what vppsvc programs into VPP for a cluster, traces
// where a packet to a service goes, and runs as a node agent.
package main

import (
	"fmt"
	"os"
)

func main() {
	err := newRootCommand(os.Stdout, os.Stderr).Execute()
	if line := errorLine(err); line != "" {
		fmt.Fprintln(os.Stderr, "vppsvc:", line)
	}
	os.Exit(exitCode(err))
}
