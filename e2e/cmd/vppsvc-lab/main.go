// Command vppsvc-lab runs the lab: a two-node dual-stack Kubernetes cluster
// on real VPP 25.10s, in this machine's network namespaces (docs/lab.md).
//
//	vppsvc-lab [up] [--nodes N | --kinds vpp,kernel]   bring the lab up, print how to reach it, run until interrupted, tear down
//	vppsvc-lab down               remove what a killed lab left (nothing else is touched)
//
// It runs as root; VPPSVC_LAB_VPP names a VPP 25.10 binary (bin/vpp of a
// build directory).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/vppsvc/vppsvc/e2e/lab"
	"github.com/vppsvc/vppsvc/e2e/lab/topology"
)

func main() {
	lab.RunChild() // the lab re-runs this program as node agents and pod containers
	cmd := "up"
	args := os.Args[1:]
	if len(args) > 0 && (args[0] == "up" || args[0] == "down") {
		cmd, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("vppsvc-lab "+cmd, flag.ContinueOnError)
	var opts lab.Options
	fs.IntVar(&opts.Nodes, "nodes", 0, "VPP nodes (1 to 9; default 2)")
	kinds := fs.String("kinds", os.Getenv(topology.EnvKinds), "each node's kind in order, vpp or kernel (kube-proxy in nftables mode): vpp,kernel (default two vpp; env "+topology.EnvKinds+")")
	fs.StringVar(&opts.Prefix, "prefix", "", "prefix of every name the lab creates (default vsl)")
	fs.StringVar(&opts.StateDir, "state-dir", "", "the lab's state directory (default /run/vppsvc-lab)")
	fs.BoolVar(&opts.Verbose, "v", false, "print the API server's and etcd's logs")
	if err := fs.Parse(args); err != nil {
		os.Exit(2)
	}
	if *kinds != "" {
		ks, err := topology.ParseKinds(*kinds)
		if err != nil {
			fmt.Fprintln(os.Stderr, "vppsvc-lab:", err)
			os.Exit(2)
		}
		opts.Kinds = ks
	}
	log := logrus.New()
	opts.Log = log
	var err error
	switch cmd {
	case "up":
		err = up(opts)
	case "down":
		err = lab.Down(opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vppsvc-lab:", err)
		os.Exit(1)
	}
}

func up(opts lab.Options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	l, err := lab.Up(ctx, opts)
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Printf("lab up in %s\n\n", time.Since(start).Round(100*time.Millisecond))
	l.PrintAccess(os.Stdout)
	<-ctx.Done()
	fmt.Println("\ntearing the lab down…")
	return nil
}
