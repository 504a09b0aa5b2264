package lab

import (
	"flag"
	"io"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/grpclog"
	"k8s.io/klog/v2"
)

// QuietKubernetesLogs silences klog (the API server's, etcd's client's and
// the controllers' logging) and grpc's, which would bury the lab's own
// lines; verbose keeps them.
func QuietKubernetesLogs(verbose bool) {
	if verbose {
		return
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	klog.SetLogger(logr.Discard())
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
}
