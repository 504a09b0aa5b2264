package main

import (
	"fmt"
	"io"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
)

// globalFlags are shared by every command.
type globalFlags struct {
	logLevel  string
	logFormat string
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	g := &globalFlags{}
	log := logrus.New()
	log.SetOutput(stderr)
	root := &cobra.Command{
		Use:   "vppsvc",
		Short: "Kubernetes Services on VPP: render, trace and run",
		Long: `vppsvc turns Kubernetes Services into VPP NAT44-ED, cnat and ACL configuration.

Without -f, render and trace use an embedded sample cluster; see 'vppsvc render --help'.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return asUsage(configureLogger(log, g))
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "warning", "log level: debug, info, warning, error")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "text", "log format: text or json")
	root.AddCommand(newVersionCommand())
	for _, add := range extraCommands {
		root.AddCommand(add(log))
	}
	markUsageErrors(root)
	return root
}

// extraCommands are registered by the files that implement them, so that the
// root does not change when a command is added.
var extraCommands []func(log *logrus.Logger) *cobra.Command

func configureLogger(log *logrus.Logger, g *globalFlags) error {
	level, err := logrus.ParseLevel(g.logLevel)
	if err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log.SetLevel(level)
	switch g.logFormat {
	case "text":
		log.SetFormatter(&logrus.TextFormatter{DisableTimestamp: false})
	case "json":
		log.SetFormatter(&logrus.JSONFormatter{})
	default:
		return fmt.Errorf("--log-format: want text or json, got %q", g.logFormat)
	}
	return nil
}
