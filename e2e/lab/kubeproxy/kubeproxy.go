// Package kubeproxy finds, or builds once, Kubernetes' own kube-proxy for
// the lab's kernel nodes.
package kubeproxy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// Env names a kube-proxy binary for the lab's kernel nodes; unset,
// the lab uses (building it first if missing) .lab/kube-proxy of the
// source tree it was built from, Kubernetes' own cmd/kube-proxy at the
// version e2e/tools/kube-proxy/go.mod requires (`make kube-proxy`).
const Env = "VPPSVC_LAB_KUBE_PROXY"

// buildTimeout bounds building kube-proxy on demand (minutes on a
// loaded two-core machine with a cold cache).
const buildTimeout = 20 * time.Minute

// Binary returns the kube-proxy binary of the lab's kernel nodes:
// the one Env names, or the source tree's .lab/kube-proxy, built
// with the go command when it is missing.
func Binary(ctx context.Context, log logrus.FieldLogger) (string, error) {
	if p := os.Getenv(Env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s: %w", Env, err)
		}
		return p, nil
	}
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("set %s to a kube-proxy binary (`make kube-proxy` builds .lab/kube-proxy)", Env)
	}
	root := filepath.Join(filepath.Dir(self), "..", "..", "..") // e2e/lab/kubeproxy/kubeproxy.go
	src := filepath.Join(root, "e2e", "tools", "kube-proxy")
	out := filepath.Join(root, ".lab", "kube-proxy")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		return "", fmt.Errorf("no kube-proxy: set %s, or run the lab from its source tree (%v)", Env, err)
	}
	log.WithField("output", out).Info("building kube-proxy from Kubernetes' source (once; `make kube-proxy` does the same)")
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	args := []string{"build", "-o", out}
	if v := requiredKubernetes(ctx, src); v != "" {
		// As Kubernetes' release builds stamp it (a plain build says v0.0.0-master).
		args = append(args, "-ldflags", "-X k8s.io/component-base/version.gitVersion="+v)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "k8s.io/kubernetes/cmd/kube-proxy")...)
	cmd.Dir = src
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building kube-proxy in %s: %w", src, err)
	}
	return out, nil
}

// requiredKubernetes is the k8s.io/kubernetes version the module in dir
// requires ("v1.37.2"), or "" when the go command cannot say.
func requiredKubernetes(ctx context.Context, dir string) string {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes")
	cmd.Dir = dir
	out, err := cmd.Output()
	if v := strings.TrimSpace(string(out)); err == nil && strings.HasPrefix(v, "v") {
		return v
	}
	return ""
}
