// Package kubecluster runs a real Kubernetes control plane in process: a
// single-member etcd (embed) and kube-apiserver (k8s.io/kubernetes's own test
// server), both on loopback, behind a TCP proxy whose address outlives API
// server restarts. The e2e tests, the cluster simulation and the lab share it.
//
//	etcd (embed)  127.0.0.1:<client>, <peer>  ports picked before start
//	kube-apiserver (cmd/kube-apiserver/app/testing)  127.0.0.1:<random>
//	proxy  127.0.0.1:<fixed for the cluster>  → the current API server
//
// Clients connect through the proxy, a plain TCP forwarder: TLS is end to
// end with the API server, whose serving certificate and static bearer token
// are written once, so a restarted API server (a new instance on a new port,
// same etcd) is reached at the same address with the same credentials, as a
// real cluster's clients would after an API server restart. While the API
// server is down the proxy refuses connections, as a stopped server's port
// would.
package kubecluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/test/utils/ktesting"
)

// Options shape the cluster's address plan and logging.
type Options struct {
	// ServiceCIDRs are the API server's service IP ranges, one per family,
	// the primary first (--service-cluster-ip-range).
	ServiceCIDRs []string
	// NodePortRange is --service-node-port-range, e.g. "30000-30099".
	NodePortRange string
	// Token is the static bearer token of the system:masters user the
	// cluster's Config carries.
	Token string
	// Verbose sends the API server's and etcd's logs to stderr.
	Verbose bool
	// ExtraFlags are appended to the API server's flags.
	ExtraFlags []string
}

// Cluster is etcd, the current API server and the proxy in front of it.
type Cluster struct {
	// Config reaches the API server through the proxy with the e2e token.
	Config *rest.Config
	// Client is the tests' own client (Config).
	Client kubernetes.Interface

	dir     string
	etcd    *embed.Etcd
	storage *storagebackend.Config
	proxy   *proxy
	flags   []string
	log     *logBuffer

	verbose bool

	mu     sync.Mutex
	server *kubeapiservertesting.TestServer
	tb     *harnessTB
}

func Start(opts Options) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "vppsvc-e2e-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, log: &logBuffer{verbose: opts.Verbose}, verbose: opts.Verbose}
	if c.etcd, err = startEtcd(filepath.Join(dir, "etcd"), opts.Verbose); err != nil {
		return c, fmt.Errorf("etcd: %w", err)
	}
	c.storage = storagebackend.NewDefaultConfig("/registry", nil)
	c.storage.Transport.ServerList = []string{"http://" + c.etcd.Clients[0].Addr().String()}

	// Serving certificate and token, shared by every API server instance.
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		return c, err
	}
	files := map[string][]byte{
		"serving.crt": certPEM,
		"serving.key": keyPEM,
		"tokens.csv":  []byte(opts.Token + `,vppsvc-e2e,vppsvc-e2e-uid,"system:masters"` + "\n"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return c, err
		}
	}
	c.flags = []string{
		"--endpoint-reconciler-type=none",
		"--disable-admission-plugins=ServiceAccount",
		"--service-node-port-range=" + opts.NodePortRange,
		"--service-cluster-ip-range=" + strings.Join(opts.ServiceCIDRs, ","),
		"--tls-cert-file=" + filepath.Join(dir, "serving.crt"),
		"--tls-private-key-file=" + filepath.Join(dir, "serving.key"),
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--enable-priority-and-fairness=false",
	}
	c.flags = append(c.flags, opts.ExtraFlags...)

	if c.proxy, err = newProxy(); err != nil {
		return c, err
	}
	c.Config = &rest.Config{
		Host:            "https://" + c.proxy.Addr(),
		BearerToken:     opts.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: certPEM},
		QPS:             1000,
		Burst:           1000,
		Timeout:         30 * time.Second,
	}
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return c, err
	}
	if err := c.StartAPIServer(); err != nil {
		return c, err
	}
	return c, nil
}

// freePorts picks n free loopback TCP ports (closed again before use).
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// startEtcd runs a single-member etcd on loopback in dir.
func startEtcd(dir string, verbose bool) (*embed.Etcd, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	clientURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[0])}
	peerURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	cfg := embed.NewConfig()
	cfg.Name = "e2e"
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ListenMetricsUrls = nil
	cfg.UnsafeNoFsync = true // a test database: no need to survive a power cut
	if verbose {
		cfg.LogLevel = "warn"
	} else {
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, errors.New("etcd did not become ready within 60s")
	}
}

// StartAPIServer starts a new kube-apiserver over the cluster's etcd and
// points the proxy at it. It returns once /healthz is ok and the default
// namespace exists.
func (c *Cluster) StartAPIServer() error {
	if _, err := c.StartAPIServerHidden(); err != nil {
		return err
	}
	return c.Expose()
}

// StartAPIServerHidden starts a new kube-apiserver that the proxy does not
// lead to yet: for clients of the proxy (the agents) the API server is still
// down. It returns a client that reaches the new server directly.
func (c *Cluster) StartAPIServerHidden() (kubernetes.Interface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server != nil {
		return nil, errors.New("the API server is already running")
	}
	tb := &harnessTB{name: "kube-apiserver", log: c.log}
	// Our own test context: the API server's contextual logger is discarded
	// (or goes to stderr with E2E_VERBOSE), and tearing down cancels it.
	logger := logr.Discard()
	if c.verbose {
		logger = klog.Background()
	}
	ctx := ktesting.WithCancel(ktesting.InitCtx(klog.NewContext(context.Background(), logger), tb))
	opts := kubeapiservertesting.NewDefaultTestServerOptions()
	srv, err := kubeapiservertesting.StartTestServer(ctx, opts, c.flags, c.storage)
	if err != nil {
		tb.runCleanups()
		return nil, err
	}
	c.server, c.tb = &srv, tb
	return kubernetes.NewForConfig(srv.ClientConfig)
}

// Running reports whether an API server instance is up (exposed or not).
func (c *Cluster) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server != nil
}

// Expose points the proxy at the running API server.
func (c *Cluster) Expose() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server == nil {
		return errors.New("no API server is running")
	}
	return c.proxy.SetBackend(c.server.ClientConfig.Host)
}

// StopAPIServer stops the API server (etcd keeps running) and cuts every
// connection made through the proxy.
func (c *Cluster) StopAPIServer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server == nil {
		return
	}
	_ = c.proxy.SetBackend("")
	c.server.TearDownFn()
	c.tb.runCleanups()
	c.server, c.tb = nil, nil
}

// Close stops everything and removes the files.
func (c *Cluster) Close() {
	c.StopAPIServer()
	if c.proxy != nil {
		c.proxy.Close()
	}
	if c.etcd != nil {
		c.etcd.Close()
	}
	os.RemoveAll(c.dir)
}

func (c *Cluster) DumpLog(w io.Writer) {
	fmt.Fprintln(w, "--- harness log ---")
	c.log.dump(w)
}

// logBuffer keeps the last lines the harness's TB was given.
type logBuffer struct {
	verbose bool
	mu      sync.Mutex
	lines   []string
}

func (b *logBuffer) add(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.verbose {
		fmt.Fprintln(os.Stderr, s)
	}
	b.lines = append(b.lines, s)
	if len(b.lines) > 200 {
		b.lines = b.lines[len(b.lines)-200:]
	}
}

func (b *logBuffer) dump(w io.Writer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lines {
		fmt.Fprintln(w, l)
	}
}

// harnessTB is the ktesting.TB the API server test helper runs under. The
// server outlives single tests (it is started from TestMain), so this is not
// a testing.T: logs go to the harness's buffer, cleanups run at stop, and a
// fatal error panics (the helper only calls it for a failed temp file).
type harnessTB struct {
	name string
	log  *logBuffer

	mu       sync.Mutex
	failed   bool
	cleanups []func()
}

var _ ktesting.TB = (*harnessTB)(nil)

func (t *harnessTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *harnessTB) runCleanups() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

func (t *harnessTB) Error(args ...any) { t.Log(args...); t.Fail() }
func (t *harnessTB) Errorf(format string, args ...any) {
	t.Logf(format, args...)
	t.Fail()
}
func (t *harnessTB) Fail() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
}
func (t *harnessTB) FailNow() { t.Fail(); panic(t.name + ": FailNow") }
func (t *harnessTB) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}
func (t *harnessTB) Fatal(args ...any) { t.Log(args...); panic(fmt.Sprint(args...)) }
func (t *harnessTB) Fatalf(format string, args ...any) {
	t.Logf(format, args...)
	panic(fmt.Sprintf(format, args...))
}
func (t *harnessTB) Helper()                          {}
func (t *harnessTB) Log(args ...any)                  { t.log.add(strings.TrimSpace(fmt.Sprintln(args...))) }
func (t *harnessTB) Logf(format string, args ...any)  { t.log.add(fmt.Sprintf(format, args...)) }
func (t *harnessTB) Name() string                     { return t.name }
func (t *harnessTB) Setenv(key, value string)         { os.Setenv(key, value) }
func (t *harnessTB) Skip(args ...any)                 { t.Log(args...) }
func (t *harnessTB) SkipNow()                         {}
func (t *harnessTB) Skipf(format string, args ...any) { t.Logf(format, args...) }
func (t *harnessTB) Skipped() bool                    { return false }
func (t *harnessTB) TempDir() string {
	d, err := os.MkdirTemp("", "vppsvc-e2e-tb-")
	if err != nil {
		panic(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// proxy forwards loopback TCP connections to the current API server. It
// listens only while it has a backend: while the API server is down its
// address refuses connections, as a stopped API server's port does.
type proxy struct {
	addr string // fixed for the proxy's life

	mu      sync.Mutex
	l       net.Listener // nil while down
	backend string       // host:port of the API server
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// newProxy reserves a loopback address; it listens from the first
// SetBackend on.
func newProxy() (*proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	return &proxy{addr: addr, conns: map[net.Conn]struct{}{}}, nil
}

func (p *proxy) Addr() string { return p.addr }

// SetBackend closes every forwarded connection, then forwards new ones to
// backend (host:port or a URL), or stops listening if backend is empty.
func (p *proxy) SetBackend(backend string) error {
	if u, err := url.Parse(backend); err == nil && u.Host != "" {
		backend = u.Host
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.backend = backend
	if backend == "" {
		if p.l != nil {
			p.l.Close()
			p.l = nil
		}
		return nil
	}
	if p.l != nil {
		return nil
	}
	// Listen on the same address again; the port may linger briefly.
	var l net.Listener
	var err error
	for range 100 {
		if l, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("proxy: listening again on %s: %w", p.addr, err)
	}
	p.l = l
	p.wg.Add(1)
	go p.serve(l)
	return nil
}

func (p *proxy) Close() {
	p.SetBackend("")
	p.wg.Wait()
}

func (p *proxy) serve(l net.Listener) {
	defer p.wg.Done()
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		backend := p.backend
		p.mu.Unlock()
		if backend == "" {
			in.Close()
			continue
		}
		out, err := net.DialTimeout("tcp", backend, 5*time.Second)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		if p.backend != backend || p.l != l { // switched while dialling
			p.mu.Unlock()
			in.Close()
			out.Close()
			continue
		}
		p.conns[in], p.conns[out] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// WriteKubeconfig writes a kubeconfig file that reaches the cluster through
// its proxy with its token, for kubectl and for agents in other processes.
func (c *Cluster) WriteKubeconfig(path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["vppsvc"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData}
	cfg.AuthInfos["vppsvc"] = &clientcmdapi.AuthInfo{Token: c.Config.BearerToken}
	cfg.Contexts["vppsvc"] = &clientcmdapi.Context{Cluster: "vppsvc", AuthInfo: "vppsvc"}
	cfg.CurrentContext = "vppsvc"
	return clientcmd.WriteToFile(*cfg, path)
}
