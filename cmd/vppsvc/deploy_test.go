package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/vppsvc/vppsvc/agent"
)

// TestDeployManifest keeps docs/deploy/daemonset.yaml working: it decodes
// strictly, grants what the agent watches, and its arguments and
// configuration are accepted by this very binary.
func TestDeployManifest(t *testing.T) {
	data, err := os.ReadFile("../../docs/deploy/daemonset.yaml")
	require.NoError(t, err)
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var ds *appsv1.DaemonSet
	var role *rbacv1.ClusterRole
	var cm *corev1.ConfigMap
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		obj, _, err := decoder.Decode(doc, nil, nil)
		require.NoError(t, err, string(doc))
		switch o := obj.(type) {
		case *appsv1.DaemonSet:
			ds = o
		case *rbacv1.ClusterRole:
			role = o
		case *corev1.ConfigMap:
			cm = o
		}
	}
	require.NotNil(t, ds)
	require.NotNil(t, role)
	require.NotNil(t, cm)

	granted := map[string][]string{}
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				granted[g+"/"+res] = r.Verbs
			}
		}
	}
	for _, res := range []string{"/services", "discovery.k8s.io/endpointslices", "/nodes", "/pods"} {
		assert.ElementsMatch(t, []string{"get", "list", "watch"}, granted[res], res)
	}
	assert.ElementsMatch(t, []string{"list", "watch"}, granted["networking.k8s.io/servicecidrs"], "what the ServiceCIDR informer needs")

	pod := ds.Spec.Template.Spec
	assert.True(t, pod.HostNetwork)
	c := pod.Containers[0]
	args := slices.Clone(c.Args)
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "$(NODE_NAME)", "node-a")
	}
	require.Equal(t, "run", args[0])
	run, _, err := newRootCommand(io.Discard, io.Discard).Find(args[:1])
	require.NoError(t, err)
	require.NoError(t, run.ParseFlags(args[1:]), "arguments the run command accepts")
	socket, _ := run.Flags().GetString("vpp-socket")
	assert.True(t, slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == filepath.Dir(socket) }), "socket directory mounted")
	assert.Equal(t, "/livez", c.LivenessProbe.HTTPGet.Path, "liveness restarts only what a restart can cure")
	assert.Equal(t, "/healthz", c.ReadinessProbe.HTTPGet.Path)

	configFile := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(configFile, []byte(cm.Data["config.yaml"]), 0o644))
	_, err = agent.LoadConfig(configFile, []netip.Addr{netip.MustParseAddr("192.168.16.1"), netip.MustParseAddr("2001:db8:16::1")})
	assert.NoError(t, err)
}

// makeDefault is the default value of a `NAME ?= value` line of the Makefile.
func makeDefault(t *testing.T, makefile, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `\s*\?=\s*(\S+)\s*$`).FindStringSubmatch(makefile)
	require.NotNil(t, m, "Makefile sets no default %s", name)
	return m[1]
}

// TestDeployImage keeps the image recipe and the manifest together: the
// DaemonSet runs the image `make image` builds by default, the Dockerfile
// builds this command as a static binary onto a base without libc and makes
// it the entrypoint (the manifest gives only args), and `make image` fails
// with a clear message when neither docker nor podman is there.
func TestDeployImage(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	image := makeDefault(t, string(makefile), "IMAGE") + ":" + makeDefault(t, string(makefile), "VERSION")
	assert.Contains(t, string(makefile), "build --build-arg VERSION=$(VERSION) -t $(IMAGE):$(VERSION) .")
	assert.Contains(t, string(makefile), "neither docker nor podman is installed")

	data, err := os.ReadFile("../../docs/deploy/daemonset.yaml")
	require.NoError(t, err)
	ds := deployDaemonSet(t, data)
	c := ds.Spec.Template.Spec.Containers[0]
	assert.Equal(t, image, c.Image, "the manifest runs what make image builds")
	assert.Empty(t, c.Command, "the image's entrypoint is vppsvc; the manifest gives arguments only")

	dockerfile, err := os.ReadFile("../../Dockerfile")
	require.NoError(t, err)
	df := string(dockerfile)
	assert.Regexp(t, `(?m)^RUN CGO_ENABLED=0 .*go build .*-X main\.version=\$\{VERSION\}.* -o /out/vppsvc \./cmd/vppsvc$`, df)
	stages := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(df, -1)
	require.Len(t, stages, 2, "a builder stage and the runtime stage")
	assert.Regexp(t, `^(gcr\.io/distroless/static(-debian\d+)?(:\S+)?|scratch)$`, stages[1][1], "a static base: no libc, no shell")
	assert.Contains(t, df, "COPY --from=build /out/vppsvc /usr/local/bin/vppsvc")
	assert.Regexp(t, `(?m)^ENTRYPOINT \["/usr/local/bin/vppsvc"\]$`, df)
	ignore, err := os.ReadFile("../../.dockerignore")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^e2e$`, string(ignore), "the e2e module (Kubernetes sources) stays out of the build context")
}

// deployDaemonSet is the DaemonSet of the manifest.
func deployDaemonSet(t *testing.T, manifest []byte) *appsv1.DaemonSet {
	t.Helper()
	decoder := serializer.NewCodecFactory(scheme.Scheme).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			t.Fatal("no DaemonSet in the manifest")
		}
		require.NoError(t, err)
		if obj, _, err := decoder.Decode(doc, nil, nil); err == nil {
			if ds, ok := obj.(*appsv1.DaemonSet); ok {
				return ds
			}
		}
	}
}
