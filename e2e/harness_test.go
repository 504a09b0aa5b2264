package e2e

// The harness: one real kube-apiserver over a real embedded etcd per test
// package (internal/kubecluster), reached through a proxy whose address
// survives API server restarts.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/grpclog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/vppsvc/vppsvc/e2e/internal/kubecluster"
)

// Address plan of the cluster the API server serves.
const (
	serviceCIDRv4 = "10.96.0.0/16"
	serviceCIDRv6 = "fd00:96::/112"
	nodePortRange = "30000-30099"
	nodePortMin   = 30000
	nodePortMax   = 30099
	// e2eToken authenticates the tests and the agents (system:masters; the
	// test server authorizes everything anyway).
	e2eToken = "vppsvc-e2e-token"
)

// verbose (E2E_VERBOSE=1) sends the API server's and etcd's logs to stderr.
var verbose = os.Getenv("E2E_VERBOSE") != ""

// cluster is the package's API server and etcd.
var cluster *kubecluster.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	quietLogs()
	start := time.Now()
	c, err := kubecluster.Start(kubecluster.Options{
		ServiceCIDRs: []string{serviceCIDRv4, serviceCIDRv6}, NodePortRange: nodePortRange, Token: e2eToken, Verbose: verbose})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting etcd and kube-apiserver: %v\n", err)
		if c != nil {
			c.DumpLog(os.Stderr)
			c.Close()
		}
		os.Exit(1)
	}
	if testing.Verbose() {
		fmt.Printf("e2e: etcd and kube-apiserver up in %s (API %s)\n", time.Since(start).Round(time.Millisecond), c.Config.Host)
	}
	cluster = c
	setupCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	err = setupCluster(setupCtx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: creating nodes and pods: %v\n", err)
		c.Close()
		os.Exit(1)
	}
	code := m.Run()
	c.Close()
	os.Exit(code)
}

// quietLogs silences klog (the API server's logging) and grpc unless
// E2E_VERBOSE is set. Test failures are reported through testing as usual.
func quietLogs() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if verbose {
		_ = fs.Set("v", "2")
		return
	}
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	klog.SetLogger(logr.Discard())
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
}

// TestHarness checks what the scenarios rely on: the API server is real
// (it defaults and allocates), serves both families, and comes back on the
// same address after a restart with the objects kept in etcd.
func TestHarness(t *testing.T) {
	ctx := t.Context()
	cs := cluster.Client
	ns := newNamespace(t)
	svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec: corev1.ServiceSpec{
			Type:           corev1.ServiceTypeNodePort,
			IPFamilyPolicy: ptr(corev1.IPFamilyPolicyPreferDualStack),
			Ports:          []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.ClusterIPs) != 2 {
		t.Errorf("PreferDualStack service got clusterIPs %v, want one per family", svc.Spec.ClusterIPs)
	}
	p := svc.Spec.Ports[0]
	if p.NodePort < nodePortMin || p.NodePort > nodePortMax || p.Protocol != corev1.ProtocolTCP || p.TargetPort.IntValue() != 80 {
		t.Errorf("port not allocated/defaulted: %+v", p)
	}
	if svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
		t.Errorf("externalTrafficPolicy not defaulted: %q", svc.Spec.ExternalTrafficPolicy)
	}

	t0 := time.Now()
	cluster.StopAPIServer()
	t.Logf("API server stopped in %s", time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	if _, err := cs.CoreV1().Services(ns).Get(ctx, "probe", metav1.GetOptions{}); err == nil {
		t.Error("the API server still answers after StopAPIServer")
	} else if !strings.Contains(err.Error(), "connection refused") || time.Since(t0) > 5*time.Second {
		t.Errorf("with the API server down: %v after %s, want connection refused at once", err, time.Since(t0))
	}
	t0 = time.Now()
	if err := cluster.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("API server started in %s", time.Since(t0).Round(time.Millisecond))
	got, err := cs.CoreV1().Services(ns).Get(ctx, "probe", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if got.UID != svc.UID || got.Spec.ClusterIP != svc.Spec.ClusterIP {
		t.Errorf("after restart the service is %s %s, want %s %s", got.UID, got.Spec.ClusterIP, svc.UID, svc.Spec.ClusterIP)
	}
}

// newNamespace creates a namespace for one test. Agents watch every
// namespace, and without a namespace controller deleting a namespace would
// leave its objects in etcd, so at the end of the test its Services and
// EndpointSlices are deleted one by one (the next test starts from a
// cluster holding only the default "kubernetes" service and the nodes).
func newNamespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	_, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNamespaceObjects(t, name) })
	return name
}

func deleteNamespaceObjects(t *testing.T, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := cluster.Client
	if err := cs.DiscoveryV1().EndpointSlices(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Errorf("cleanup: endpointslices of %s: %v", ns, err)
	}
	svcs, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("cleanup: services of %s: %v", ns, err)
		return
	}
	for _, s := range svcs.Items {
		if err := cs.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: service %s/%s: %v", ns, s.Name, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }
