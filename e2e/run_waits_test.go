package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// `vppsvc run` started while its API server is down does not exit: it
// waits with backoff, logs each wait at info level with its fields, and
// answers /healthz 503 with the reason; once the API server is up, it
// reads its Node, syncs, and serves the cluster's Services (/healthz 200,
// the service in `vppsvc status`). This runs the real binary, as a node
// does, against the test API server through the proxy that refuses
// connections while the API server is down.
func TestRunWaitsForAPIServer(t *testing.T) {
	dir := t.TempDir()
	bin := buildVppsvc(t, dir)
	kubeconfig := writeKubeconfig(t, dir)

	// A Service the agent must serve once it reaches the API server.
	ctx := context.Background()
	ns := "run-waits"
	if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := cluster.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cluster.StopAPIServer()
	t.Cleanup(func() { // leave a running API server to the next test
		if !cluster.Running() {
			if err := cluster.StartAPIServer(); err != nil {
				t.Errorf("restarting the API server: %v", err)
			}
		}
	})

	healthz, metrics := freeAddr(t), freeAddr(t)
	inspect := filepath.Join(dir, "inspect.sock")
	agent := exec.Command(bin, "run", "--node", thisNode, "--kubeconfig", kubeconfig, "--fake-vpp",
		"--healthz-bind-address", healthz, "--metrics-bind-address", metrics, "--inspect-socket", inspect, "--log-format", "json")
	logs := &lockedBuffer{}
	agent.Stdout, agent.Stderr = logs, logs
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- agent.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = agent.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("vppsvc run's log:\n%s", logs.String())
		}
	})

	// Down: the agent keeps running, says why it is not ready, and logs its
	// waits with their fields.
	eventuallyWithin(t, 30*time.Second, "two logged waits for the API server", func() string {
		select {
		case err := <-exited:
			exited <- err
			return fmt.Sprintf("vppsvc run exited (%v) instead of waiting", err)
		default:
		}
		if n := len(logLines(logs.String(), "waiting for the API server")); n < 2 {
			return fmt.Sprintf("%d waits logged", n)
		}
		return ""
	})
	for _, line := range logLines(logs.String(), "waiting for the API server")[:2] {
		for _, field := range []string{"level", "attempt", "waited", "retry_in", "error", "node"} {
			if _, ok := line[field]; !ok {
				t.Errorf("wait log line without %q: %v", field, line)
			}
		}
		if line["level"] != "info" {
			t.Errorf("wait logged at %v, want info", line["level"])
		}
	}
	code, body := httpGet(t, "http://"+healthz+"/healthz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"reason":"waiting for the API server: reading node \"node-1\"`) {
		t.Errorf("/healthz while the API server is down: %d %s, want 503 with the reason", code, body)
	}

	// Up: the agent reads its node, syncs, and serves the Service.
	if err := cluster.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, 90*time.Second, "/healthz 200 after the API server came up", func() string {
		if code, body := httpGet(t, "http://"+healthz+"/healthz"); code != http.StatusOK {
			return fmt.Sprintf("%d %s", code, body)
		}
		return ""
	})
	eventually(t, "the Service served", func() string {
		out, err := exec.Command(bin, "status", "--inspect-socket", inspect, ns+"/web", "-o", "json").CombinedOutput()
		if err != nil {
			return fmt.Sprintf("vppsvc status: %v: %s", err, out)
		}
		var st struct {
			Frontends []struct{ Address string } `json:"frontends"`
		}
		if err := json.Unmarshal(out, &st); err != nil {
			return fmt.Sprintf("vppsvc status: %v: %s", err, out)
		}
		if len(st.Frontends) == 0 {
			return "no frontends: " + string(out)
		}
		return ""
	})
	if len(logLines(logs.String(), "the API server answers")) != 1 {
		t.Error(`no "the API server answers" log line`)
	}

	// SIGTERM stops it cleanly, as ever.
	stopped = true
	_ = agent.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("vppsvc run after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		_ = agent.Process.Kill()
		<-exited
		t.Error("vppsvc run did not stop within 30s of SIGTERM")
	}
}

// buildVppsvc builds the command from the main module into dir.
func buildVppsvc(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "vppsvc")
	build := exec.Command("go", "build", "-o", bin, "./cmd/vppsvc")
	build.Dir = ".." // the main module, which this one replaces
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/vppsvc: %v\n%s", err, out)
	}
	return bin
}

// writeKubeconfig writes the tests' client configuration (through the
// proxy) as a kubeconfig file for the agent.
func writeKubeconfig(t *testing.T, dir string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cluster.Config.Host, CertificateAuthorityData: cluster.Config.CAData}
	cfg.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{Token: cluster.Config.BearerToken}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e"}
	cfg.CurrentContext = "e2e"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// logLines are the JSON log lines whose msg is msg.
func logLines(logs, msg string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == msg {
			out = append(out, line)
		}
	}
	return out
}

// lockedBuffer collects a process's output while tests read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
