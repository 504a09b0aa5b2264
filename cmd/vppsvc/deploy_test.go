package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
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
		for _, res := range r.Resources {
			granted[res] = r.Verbs
		}
	}
	for _, res := range []string{"services", "endpointslices", "nodes", "pods"} {
		assert.ElementsMatch(t, []string{"get", "list", "watch"}, granted[res], res)
	}

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
	assert.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)

	configFile := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(configFile, []byte(cm.Data["config.yaml"]), 0o644))
	_, err = agent.LoadConfig(configFile, []netip.Addr{netip.MustParseAddr("192.168.16.1"), netip.MustParseAddr("2001:db8:16::1")})
	assert.NoError(t, err)
}
