package main

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every command exits 2, with one line on stderr and nothing on stdout, for
// a mistake in its call: an unknown flag, a missing required flag, a bad -o,
// a bad flag value, a stray argument. diff too: its 1 means drift.
func TestUsageErrorsExitTwo(t *testing.T) {
	regular := writeFile(t, "not-a-socket", "x")
	for _, tc := range []struct {
		name string
		args []string
		err  string // the start of the error line, after "vppsvc: "
	}{
		{"root: unknown command", []string{"frobnicate"}, `unknown command "frobnicate" for "vppsvc"`},
		{"root: unknown flag", []string{"--frobnicate"}, "unknown flag: --frobnicate"},
		{"bad --log-level", []string{"version", "--log-level", "loud"}, "--log-level: "},
		{"bad --log-format", []string{"render", "--log-format", "xml"}, "--log-format: want text or json"},

		{"version: unknown flag", []string{"version", "--frobnicate"}, "unknown flag: --frobnicate"},
		{"version: stray argument", []string{"version", "extra"}, `unknown command "extra" for "vppsvc version"`},

		{"render: unknown flag", []string{"render", "--frobnicate"}, "unknown flag: --frobnicate"},
		{"render: bad -o", []string{"render", "-o", "html"}, `-o: want services, vppcli, yaml, json, text, got "html"`},
		{"render: stray argument", []string{"render", "extra"}, `unknown command "extra" for "vppsvc render"`},
		{"render: -f without value", []string{"render", "-f"}, "flag needs an argument: 'f' in -f"},
		{"render: bad --nodeport-addresses", []string{"render", "--nodeport-addresses", "10.0.0.0/33"}, `--nodeport-addresses: "10.0.0.0/33" is neither a CIDR nor "primary": prefix length out of range`},
		{"render: bad --service-cluster-ip-range", []string{"render", "--service-cluster-ip-range", "10.96.0.0/99"}, `--service-cluster-ip-range: "10.96.0.0/99" is not a CIDR`},
		{"render: two stdins", []string{"render", "-f", "-", "--config", "-"}, "-f and --config both read stdin (-)"},
		{"render: --vpp-socket a file", []string{"render", "--vpp-socket", regular}, "--vpp-socket " + regular + ": not a socket (a regular file)"},

		{"trace: unknown flag", []string{"trace", "--frobnicate"}, "unknown flag: --frobnicate"},
		{"trace: missing --dst", []string{"trace", "--src", "10.1.1.9"}, "need --src and --dst, or --flows FILE"},
		{"trace: bad -o", []string{"trace", "--src", "10.1.1.9", "--dst", "10.96.0.10:80", "-o", "xml"}, `-o: want text or json, got "xml"`},
		{"trace: bad --dst", []string{"trace", "--src", "10.1.1.9", "--dst", "10.96.0.10"}, `dst: "10.96.0.10" has no port`},
		{"trace: bad --ingress", []string{"trace", "--src", "10.1.1.9", "--dst", "10.96.0.10:80", "--ingress", "eth9"}, `ingress: no interface "eth9" on node node-a`},
		{"trace: --flows with --src", []string{"trace", "--flows", "x.yaml", "--src", "10.1.1.9"}, "--flows and --src/--dst are exclusive"},

		{"diff: unknown flag", []string{"diff", "--frobnicate"}, "unknown flag: --frobnicate"},
		{"diff: missing --vpp-socket", []string{"diff"}, "--vpp-socket is required"},
		{"diff: bad -o", []string{"diff", "--vpp-socket", "/run/vpp/api.sock", "-o", "yaml"}, `-o: want text or json, got "yaml"`},
		{"diff: bad --timeout", []string{"diff", "--vpp-socket", "/run/vpp/api.sock", "--timeout", "soon"}, `invalid argument "soon" for "--timeout" flag`},
		{"diff: --vpp-socket a file", []string{"diff", "--vpp-socket", regular}, "--vpp-socket " + regular + ": not a socket (a regular file)"},
		{"diff: stray argument", []string{"diff", "extra"}, `unknown command "extra" for "vppsvc diff"`},

		{"run: unknown flag", []string{"run", "--frobnicate"}, "unknown flag: --frobnicate"},
		{"run: missing --node", []string{"run", "--node", "", "--fake-vpp"}, "--node is required (or set NODE_NAME)"},
		{"run: exclusive VPPs", []string{"run", "--node", "n1", "--fake-vpp", "--vpp-socket", "/x"}, "--vpp-socket and --fake-vpp are exclusive"},
		{"run: bad --healthz-timeout", []string{"run", "--node", "n1", "--healthz-timeout", "x"}, `invalid argument "x" for "--healthz-timeout" flag`},
		{"run: bad --nodeport-addresses", []string{"run", "--node", "n1", "--fake-vpp", "--nodeport-addresses", "10.0.0.0/33"}, `--nodeport-addresses: "10.0.0.0/33" is neither a CIDR nor "primary"`},
		{"run: --vpp-socket a file", []string{"run", "--node", "n1", "--vpp-socket", regular}, "--vpp-socket " + regular + ": not a socket (a regular file)"},

		{"status: unknown flag", []string{"status", "--frobnicate"}, "unknown flag: --frobnicate"},
		{"status: bad -o", []string{"status", "-o", "yaml"}, `-o: want table or json, got "yaml"`},
		{"status: two services", []string{"status", "a/b", "c/d"}, "accepts at most 1 arg(s), received 2"},
		{"status: bad service", []string{"status", "a/b/c"}, `service "a/b/c": want namespace/name`},
		{"service list: bad -o", []string{"service", "list", "-o", "yaml"}, `-o: want table or json, got "yaml"`},
		{"service: unknown subcommand", []string{"service", "frobnicate"}, `unknown command "frobnicate" for "vppsvc service"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runMain(t, "", tc.args...)
			assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.True(t, strings.HasPrefix(stderr, "vppsvc: "+tc.err), "%q does not start with %q", stderr, "vppsvc: "+tc.err)
		})
	}
}

// render, trace and diff take the cluster file by one name, -f/--file;
// diff's former --cluster still sets it, hidden and deprecated.
func TestClusterFileFlag(t *testing.T) {
	for _, name := range []string{"render", "trace", "diff"} {
		root := newRootCommand(io.Discard, io.Discard)
		cmd, _, err := root.Find([]string{name})
		require.NoError(t, err)
		file := cmd.Flags().Lookup("file")
		require.NotNil(t, file, name)
		assert.Equal(t, "f", file.Shorthand, name)
		require.NoError(t, cmd.Flags().Parse([]string{"-f", "a.yaml"}))
		assert.Equal(t, "a.yaml", file.Value.String(), name)
	}
	root := newRootCommand(io.Discard, io.Discard)
	diff, _, err := root.Find([]string{"diff"})
	require.NoError(t, err)
	cluster := diff.Flags().Lookup("cluster")
	require.NotNil(t, cluster)
	assert.True(t, cluster.Hidden)
	assert.Equal(t, "use -f/--file", cluster.Deprecated)
	require.NoError(t, diff.Flags().Parse([]string{"--cluster", "b.yaml"}))
	assert.Equal(t, "b.yaml", diff.Flags().Lookup("file").Value.String())
}

// The exit status of each outcome: usage errors 2 everywhere; a failure of
// the work 1, except in diff, where 1 is drift and every error 2.
func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code int
		line string
	}{
		{"success", nil, 0, ""},
		{"failure", errors.New("open x: no such file"), 1, "open x: no such file"},
		{"usage", usagef("-o: want text or json"), 2, "-o: want text or json"},
		{"wrapped usage", errorsJoin(usagef("bad")), 2, "bad"},
		{"cobra's unknown command", errors.New(`unknown command "x" for "vppsvc"`), 2, `unknown command "x" for "vppsvc"`},
		{"diff in sync", diffOutcome(false, nil), 0, ""},
		{"diff drift", diffOutcome(true, nil), 1, ""},
		{"diff error", diffOutcome(false, errors.New("connect to VPP: refused")), 2, "connect to VPP: refused"},
		{"diff usage", diffOutcome(false, usagef("-o: bad")), 2, "-o: bad"},
	} {
		assert.Equal(t, tc.code, exitCode(tc.err), tc.name)
		assert.Equal(t, tc.line, errorLine(tc.err), tc.name)
	}
}

func errorsJoin(errs ...error) error { return errors.Join(errs...) }
