#!/usr/bin/env bash
# bench-kubeproxy: the kube-proxy anchor of issue 15's speed targets, measured
# on this machine in the same run as vppsvc's cold sync.
#
# Issue 15 states its cold-sync targets as ratios against kube-proxy's
# nftables rule generation for the same input. Nothing of Kubernetes is kept
# in this repository: at run time the script
#   1. downloads k8s.io/kubernetes@KUBE_VERSION with the go command (module
#      cache) and copies it to a temporary directory;
#   2. points the staging modules (k8s.io/api, k8s.io/client-go …), which the
#      module's go.mod takes from ./staging, at their published versions on
#      the module proxy (v0.X.Y for v1.X.Y), as e2e/go.mod does;
#   3. writes one benchmark file, below, into that copy of
#      pkg/proxy/nftables, so that it can use the package's test helper
#      NewFakeProxier and its unexported syncProxyRules;
#   4. builds that test binary and vppsvc's internal/benchmarks test binary,
#      then runs them alternately, ROUNDS times (kube-proxy, vppsvc, …), one
#      cold sync per shape per run, so that a busy spell of this shared
#      machine falls on both sides;
#   5. prints, per shape, both sides' medians and the ratio vppsvc /
#      kube-proxy against issue 15's targets.
#
# Shapes: 5,000 services × 10 endpoints and 50,000 × 1, generated alike on
# both sides (internal/benchmarks/gen.go): service default/svc<i>, ClusterIP
# 172.30.0.0 + i + 1, one TCP port 80 named p80, one EndpointSlice of N ready
# endpoints 10.0.0.0 + i*N + j + 1 on the node of the proxy under test.
#
# Timed on kube-proxy's side, on a new proxier whose (empty) nftables table
# exists: every Service through OnServiceAdd and every EndpointSlice through
# OnEndpointSliceAdd, then one syncProxyRules (service and endpoint maps
# updated, the full-sync transaction built) and the transaction rendered to
# the text kube-proxy pipes to `nft -f -`. Nothing is applied: nft and the
# kernel are not timed, nor is knftables.Fake's in-memory emulation (a linear
# search per set element, quadratic in the number of services, which no real
# kube-proxy pays). vppsvc's side is BenchmarkColdSync: one Processor.Resync
# through the NAT44 renderer, the VPP layer and govpp's codec into the fake
# VPP, whose emulation is timed. Both sides know the service CIDR
# 172.30.0.0/16 (kube-proxy's fake proxier is built with it; vppsvc gets it
# as VPPSVC_BENCH_SERVICE_CIDR, so the NAT44 renderer drops the range's free
# addresses by one route, as kube-proxy does by one rule, instead of one
# route per ClusterIP).
#
# Environment (all optional):
#   KUBE_VERSION  the Kubernetes release (default v1.37.2)
#   ROUNDS        runs of each side (default 3)
#   VPPSVC        0 runs kube-proxy's side only (default 1)
#   GO            the go command (default go)
# The first build of Kubernetes' package takes a few minutes; the results
# stay in the temporary directory the last line names, everything else is
# removed.
set -euo pipefail

GO=${GO:-go}
KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
ROUNDS=${ROUNDS:-3}
VPPSVC=${VPPSVC:-1}
staging_version=v0.${KUBE_VERSION#v1.}

root=$(git rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/vppsvc-bench-kubeproxy.XXXXXX")
results=$work/results
mkdir -p "$results"
cleanup() { rm -rf "$work/kubernetes" "$work/bin"; }
trap cleanup EXIT

echo "bench-kubeproxy: k8s.io/kubernetes@$KUBE_VERSION into $work" >&2
dir=$(cd "$work" && GOWORK=off "$GO" mod download -json "k8s.io/kubernetes@$KUBE_VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$dir" ] || { echo "bench-kubeproxy: k8s.io/kubernetes@$KUBE_VERSION not downloaded" >&2; exit 1; }
cp -r "$dir" "$work/kubernetes"
chmod -R u+w "$work/kubernetes"
kube=$work/kubernetes
pkg=$kube/pkg/proxy/nftables
[ -d "$pkg" ] || { echo "bench-kubeproxy: $KUBE_VERSION has no pkg/proxy/nftables" >&2; exit 1; }

# The staging modules, from the proxy instead of ./staging.
replaces=()
for m in $(sed -n 's|^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\) => \./staging/src/.*$|\1|p' "$kube/go.mod"); do
	replaces+=("-replace=$m=$m@$staging_version")
done
[ ${#replaces[@]} -gt 0 ] || { echo "bench-kubeproxy: no staging replaces in go.mod" >&2; exit 1; }
(cd "$kube" && GOWORK=off "$GO" mod edit "${replaces[@]}")

cat >"$pkg/zz_vppsvc_anchor_test.go" <<'GO'
package nftables

// This file is not part of Kubernetes. vppsvc's scripts/bench-kubeproxy.sh
// writes it into a temporary copy of this package at run time, to time
// kube-proxy's nftables rule generation on the cluster shape of vppsvc's
// BenchmarkColdSync (internal/benchmarks/gen.go).

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/knftables"
)

// textOnly stands in for the nft binary: it turns each transaction into
// the text the real backend pipes to "nft -f -" and applies nothing.
// (knftables.Fake's own Run emulates the kernel with a linear search per
// set element, quadratic in the number of services, which kube-proxy in
// production never pays.)
type textOnly struct {
	*knftables.Fake
	written int
}

func (t *textOnly) Run(_ context.Context, tx *knftables.Transaction) error {
	t.written += len(tx.String())
	return nil
}

// anchorIP is the address off places after base.
func anchorIP(base string, off int) string {
	b := netip.MustParseAddr(base).As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) + uint32(off)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
}

// anchorCluster builds services default/svc<i> with ClusterIP
// 172.30.0.0+i+1 and one TCP port 80 named p80, each with one slice of
// eps ready endpoints 10.0.0.0+i*eps+j+1 on this proxier's node.
func anchorCluster(n, eps int) ([]*v1.Service, []*discovery.EndpointSlice) {
	svcs := make([]*v1.Service, n)
	slices := make([]*discovery.EndpointSlice, n)
	ready, node := true, testNodeName
	proto, port, portName := v1.ProtocolTCP, int32(80), "p80"
	for i := range n {
		name, ip := fmt.Sprint("svc", i), anchorIP("172.30.0.0", i+1)
		svcs[i] = &v1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: v1.ServiceSpec{
				Type: v1.ServiceTypeClusterIP, ClusterIP: ip, ClusterIPs: []string{ip},
				IPFamilies: []v1.IPFamily{v1.IPv4Protocol},
				Ports:      []v1.ServicePort{{Name: portName, Protocol: proto, Port: port}},
			},
		}
		endpoints := make([]discovery.Endpoint, eps)
		for j := range endpoints {
			endpoints[j] = discovery.Endpoint{
				Addresses:  []string{anchorIP("10.0.0.0", i*eps+j+1)},
				Conditions: discovery.EndpointConditions{Ready: &ready},
				NodeName:   &node,
			}
		}
		slices[i] = &discovery.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: "default", Name: name + "-abcde",
				Labels: map[string]string{discovery.LabelServiceName: name},
			},
			AddressType: discovery.AddressTypeIPv4,
			Endpoints:   endpoints,
			Ports:       []discovery.EndpointPort{{Name: &portName, Protocol: &proto, Port: &port}},
		}
	}
	return svcs, slices
}

// BenchmarkVppsvcAnchorColdSync times, on a new proxier whose nftables
// table exists and is empty: every Service and EndpointSlice handed to the
// change trackers, then one syncProxyRules (service and endpoint maps,
// the whole transaction, its nft text). trackers-ns/service is the share
// of the change trackers (OnServiceAdd, OnEndpointSliceAdd) in ns/service.
func BenchmarkVppsvcAnchorColdSync(b *testing.B) {
	for _, sz := range [][2]int{{5000, 10}, {50000, 1}} {
		n, eps := sz[0], sz[1]
		b.Run(fmt.Sprintf("services=%d/endpoints=%d", n, eps), func(b *testing.B) {
			svcs, slices := anchorCluster(n, eps)
			written, tracking := 0, time.Duration(0)
			for b.Loop() {
				b.StopTimer()
				fake, p := NewFakeProxier(v1.IPv4Protocol)
				tx := fake.NewTransaction()
				tx.Add(&knftables.Table{})
				if err := fake.Run(context.Background(), tx); err != nil {
					b.Fatal(err)
				}
				nft := &textOnly{Fake: fake}
				p.nftables = nft
				b.StartTimer()
				start := time.Now()
				for _, s := range svcs {
					p.OnServiceAdd(s)
				}
				for _, s := range slices {
					p.OnEndpointSliceAdd(s)
				}
				tracking += time.Since(start)
				err := p.syncProxyRules()
				b.StopTimer()
				if err != nil || p.needFullSync || len(p.svcPortMap) != n || nft.written == 0 {
					b.Fatalf("sync failed: err=%v needFullSync=%v services=%d nft bytes=%d", err, p.needFullSync, len(p.svcPortMap), nft.written)
				}
				written = nft.written
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/service")
			b.ReportMetric(float64(tracking.Nanoseconds())/float64(b.N*n), "trackers-ns/service")
			b.ReportMetric(float64(written)/float64(n), "nft-B/service")
		})
	}
}
GO

echo "bench-kubeproxy: building kube-proxy's nftables test binary (minutes on a cold cache)" >&2
mkdir -p "$work/bin"
(cd "$kube" && GOWORK=off "$GO" test -mod=mod -c -o "$work/bin/kubeproxy.test" ./pkg/proxy/nftables)
if [ "$VPPSVC" != 0 ]; then
	echo "bench-kubeproxy: building vppsvc's internal/benchmarks test binary" >&2
	(cd "$root" && "$GO" test -c -o "$work/bin/vppsvc.test" ./internal/benchmarks/)
fi

kp_bench='^BenchmarkVppsvcAnchorColdSync$'
vs_bench='^BenchmarkColdSync$/^services=5000$/^endpoints=10$|^BenchmarkColdSync$/^services=50000$/^endpoints=1$'
flags=(-test.run '^$' -test.benchmem -test.benchtime 1x -test.count 1 -test.timeout 30m)
for r in $(seq 1 "$ROUNDS"); do
	echo "bench-kubeproxy: round $r of $ROUNDS ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	(cd "$pkg" && "$work/bin/kubeproxy.test" "${flags[@]}" -test.bench "$kp_bench") | tee -a "$results/kubeproxy.txt" | grep '^Benchmark' >&2
	if [ "$VPPSVC" != 0 ]; then
		(cd "$root/internal/benchmarks" && VPPSVC_BENCH_SERVICE_CIDR=172.30.0.0/16 "$work/bin/vppsvc.test" "${flags[@]}" -test.bench "$vs_bench") | tee -a "$results/vppsvc.txt" | grep '^Benchmark' >&2
	fi
done

# field FILE SHAPE UNIT: the value before UNIT on each result line of SHAPE.
field() {
	awk -v name="/$2(-[0-9]+)?\$" -v unit="$3" '$1 ~ name {
		for (i = 2; i <= NF; i++) if ($i == unit) print $(i - 1)
	}' "$1"
}
# median: of the numbers on stdin.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) exit 1
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2
	}'
}

echo
echo "kube-proxy $KUBE_VERSION nftables vs vppsvc, cold sync, medians of $ROUNDS round(s) ($(date -u +%Y-%m-%d\ %H:%M) UTC)"
[ "$VPPSVC" = 0 ] && printf '%-12s %s\n' shape "kube-proxy ms, µs/svc, allocs/svc" ||
	printf '%-12s %-36s %-32s %-6s %-60s %s\n' shape "kube-proxy ms, µs/svc, allocs/svc" "vppsvc ms, µs/svc, allocs/svc" ratio "target" "ratio per round"
for shape in "services=5000/endpoints=10" "services=50000/endpoints=1"; do
	n=${shape#services=}
	n=${n%%/*}
	eps=${shape##*=}
	case $n in
	5000) target=0.25 ;;
	*) target=0.40 ;;
	esac
	kp_ns=$(field "$results/kubeproxy.txt" "$shape" ns/op | median)
	kp_al=$(field "$results/kubeproxy.txt" "$shape" allocs/op | median)
	kp=$(awk -v ns="$kp_ns" -v al="$kp_al" -v n="$n" 'BEGIN { printf "%.0f, %.1f, %.0f", ns / 1e6, ns / 1e3 / n, al / n }')
	if [ "$VPPSVC" = 0 ]; then
		printf '%-12s %-35s\n' "${n}x$eps" "$kp"
		continue
	fi
	vs_ns=$(field "$results/vppsvc.txt" "$shape" ns/op | median)
	vs_al=$(field "$results/vppsvc.txt" "$shape" allocs/op | median)
	vs=$(awk -v ns="$vs_ns" -v al="$vs_al" -v n="$n" 'BEGIN { printf "%.0f, %.1f, %.0f", ns / 1e6, ns / 1e3 / n, al / n }')
	ratio=$(awk -v a="$vs_ns" -v b="$kp_ns" 'BEGIN { printf "%.2f", a / b }')
	rounds=$(paste -d' ' <(field "$results/vppsvc.txt" "$shape" ns/op) <(field "$results/kubeproxy.txt" "$shape" ns/op) |
		awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 / $2 }')
	verdict=$(awk -v r="$ratio" -v t="$target" -v us="$vs_ns" -v n="$n" 'BEGIN {
		s = r <= t ? "met" : sprintf("missed by %.0f %%", (r / t - 1) * 100)
		if (n == 50000) s = s sprintf("; %.1f µs/svc vs <= 10: %s", us / 1e3 / n, us / 1e3 / n <= 10 ? "met" : sprintf("missed by %.0f %%", (us / 1e4 / n - 1) * 100))
		print "<= " t ": " s
	}')
	printf '%-12s %-35s %-31s %-6s %-60s %s\n' "${n}x$eps" "$kp" "$vs" "$ratio" "$verdict" "$rounds"
done
echo "raw results: $results"
