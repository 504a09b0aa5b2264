# vppsvc — the two commands the README promises, plus a few for developers.
GO ?= go
export PATH := $(PATH):/usr/local/go/bin

.PHONY: demo test test-long test-property test-realvpp bench-realvpp chaos-realvpp fuzz soak bench vet fmt-check image

## demo: render the embedded sample cluster into a fake VPP and trace a packet.
demo:
	$(GO) run ./cmd/vppsvc render
	$(GO) run ./cmd/vppsvc trace --src 10.1.1.9 --dst 10.96.0.10:80

## test: format check, vet, and the whole test suite in short mode (what CI runs).
## It ends with test-e2e.
test: fmt-check vet
	$(GO) test -short -count=1 ./...
	$(GO) test -race -short -count=1 -run 'TestFor|Parallel|Conformance/.*/a_large' $(RACE_PACKAGES)
	$(GO) test -race -short -count=1 ./vppsock/ ./fakevpp/
	$(GO) test -race -short -count=1 -run '$(RACE_DRIVER_RUN)' -skip '$(RACE_DRIVER_SKIP)' ./vppcfg/govppdriver/
	$(MAKE) test-e2e

## The race detector on what runs on several goroutines at once: a cold
## sync's conversion and rendering (internal/parallel).
RACE_PACKAGES = ./internal/parallel/ ./processor/ ./renderer/nat44/ ./renderer/cnat4/ ./renderer/ipv6/ ./vppcfg/ ./vppcfg/engine/
## ... and where the driver's pipe, the socket's reader and the reply
## routes meet: every test of vppsock and fakevpp (the routes' tests among
## them), and the driver's pipeline and lane tests. Not the driver's other
## tests, nor the govpp stream's lost-connection cases: govpp v0.13.0 races
## itself when it reconnects under a stream still reading replies
## (retrieveMessageIDs writes the message table that Stream.RecvMsg reads
## through LookupByID, without the table's lock), and its streams carry
## the driver's dumps (docs/reliability.md, "govpp's reconnect race"). The
## lane takes no message IDs from govpp's core.
RACE_DRIVER_RUN = Lane|Pipeline|ReplyTimeout
RACE_DRIVER_SKIP = TestPipelineStopsAtALostReply/stream

## test-realvpp: the data-plane tests on a real VPP 25.10 (docs/real-vpp.md):
## the bare data plane's parity tests, the VPP driver's round trips, every
## renderer's packet traces (NAT44, cnat IPv4, IPv6; agent and VPP restarts
## included) and the CLI's sample flows with either IPv4 renderer, with the
## packets crossing VPP's graph. Needs
## VPPSVC_TEST_VPP_SOCKET (a scratch VPP: its interfaces are the tests');
## VPPSVC_TEST_VPP_RESTART (a command that restarts it) enables the
## VPP-restart tests and restarts VPP before each package. Packages run one
## at a time: they share the one VPP (scripts/test-realvpp.sh).
REALVPP_PACKAGES = ./dataplane/ ./realvpp/ ./vppcfg/govppdriver/ ./renderer/nat44/ ./renderer/cnat4/ ./renderer/ipv6/ ./cmd/vppsvc/
test-realvpp:
	@test -n "$$VPPSVC_TEST_VPP_SOCKET" || { echo "test-realvpp: set VPPSVC_TEST_VPP_SOCKET to a scratch VPP 25.10's API socket (docs/real-vpp.md)" >&2; exit 2; }
	GO=$(GO) scripts/test-realvpp.sh $(REALVPP_PACKAGES)

## lab: a two-node dual-stack cluster on real VPP 25.10s in this machine's
## network namespaces (docs/lab.md): Kubernetes' API server and EndpointSlice
## controller in process, one VPP and one node agent embedding vppsvc per
## node, pods running agnhost's netexec protocol, an external client. Runs
## until interrupted, then removes everything it created. Needs root and
## VPPSVC_LAB_VPP (a VPP 25.10 bin/vpp). LAB_NODES=3 for more nodes;
## LAB_KINDS=vpp,kernel gives each node its kind (kernel: pods on a Linux
## bridge, kube-proxy in nftables mode; docs/lab.md "kube-proxy beside
## vppsvc"), for make lab and make test-lab alike.
LAB_NODES ?= 2
LAB_KINDS ?=
# VPP is needed unless every node is a kernel node.
LAB_NEEDS_VPP = $(if $(LAB_KINDS),$(findstring vpp,$(LAB_KINDS)),yes)
LAB_KUBE_PROXY = $(if $(findstring kernel,$(LAB_KINDS)),kube-proxy)
.PHONY: lab test-lab lab-down lab-figures kube-proxy
lab: $(LAB_KUBE_PROXY)
	@test -z "$(LAB_NEEDS_VPP)" || test -n "$$VPPSVC_LAB_VPP" || { echo "lab: set VPPSVC_LAB_VPP to a VPP 25.10 binary (a build directory's bin/vpp; docs/lab.md)" >&2; exit 2; }
	cd e2e && $(GO) build -o ../.lab/vppsvc-lab ./cmd/vppsvc-lab
	./.lab/vppsvc-lab up $(if $(LAB_KINDS),--kinds $(LAB_KINDS),--nodes $(LAB_NODES))

## kube-proxy: Kubernetes' own cmd/kube-proxy, built from k8s.io/kubernetes
## at the version e2e/tools/kube-proxy/go.mod requires (a module of its
## own, so the e2e module's Kubernetes does not move), into .lab/kube-proxy
## for the lab's kernel nodes. Several minutes the first time.
KUBE_PROXY_VERSION = $(shell cd e2e/tools/kube-proxy && $(GO) list -m -f '{{.Version}}' k8s.io/kubernetes)
kube-proxy:
	@case "$(KUBE_PROXY_VERSION)" in v[0-9]*) ;; *) echo "kube-proxy: no k8s.io/kubernetes version in e2e/tools/kube-proxy/go.mod" >&2; exit 2;; esac
	cd e2e/tools/kube-proxy && $(GO) build -ldflags "-X k8s.io/component-base/version.gitVersion=$(KUBE_PROXY_VERSION)" -o ../../../.lab/kube-proxy k8s.io/kubernetes/cmd/kube-proxy

## lab-figures: the lab's figures for docs/performance.md ("vppsvc and
## kube-proxy on the same traffic"): on a lab of two VPP nodes and two
## kernel nodes (LAB_FIGURES_KINDS, default vpp,vpp,kernel,kernel), vppsvc
## and kube-proxy alternating round by round: connections/s through a
## ClusterIP, a NodePort and the pod directly, round trip, one stream's
## throughput, data-plane CPU per connection and per packet (perf), and
## network programming latency over 100 changes per side. Needs root,
## VPPSVC_LAB_VPP and perf; a lab of one kind measures that kind alone.
LAB_FIGURES_KINDS ?= $(if $(LAB_KINDS),$(LAB_KINDS),vpp,vpp,kernel,kernel)
lab-figures: $(if $(findstring kernel,$(LAB_FIGURES_KINDS)),kube-proxy)
	@test -n "$$VPPSVC_LAB_VPP" || { echo "lab-figures: set VPPSVC_LAB_VPP to a VPP 25.10 binary (docs/lab.md)" >&2; exit 2; }
	cd e2e && VPPSVC_LAB_FIGURES=1 VPPSVC_LAB_KINDS=$(LAB_FIGURES_KINDS) $(GO) test -count=1 -p 1 -timeout 40m -v -run '^TestFigures$$' ./lab/labtest/

## lab-io: the lab's VPP I/O settings (vppnode.KnownIO: TPACKET_V3 or V2
## rings, interrupt or polling RX) against a kernel router on the same
## traffic, same run, rounds alternating: round trip, connections/s, one
## stream, data-plane CPU per connection and per packet (docs/performance.md,
## "The lab's VPP I/O"). One VPP and a few namespaces of its own (prefix
## vsio), so it runs beside a lab. Needs root, VPPSVC_LAB_VPP, perf, iperf3.
.PHONY: lab-io
lab-io:
	@test -n "$$VPPSVC_LAB_VPP" || { echo "lab-io: set VPPSVC_LAB_VPP to a VPP 25.10 binary (docs/lab.md)" >&2; exit 2; }
	cd e2e && VPPSVC_LAB_IO_FIGURES=1 $(GO) test -count=1 -timeout 20m -v -run '^TestIOChoices$$' ./lab/iochoice/

## lab-down: remove what a killed lab left (refuses while a lab runs).
lab-down:
	cd e2e && $(GO) run ./cmd/vppsvc-lab down

## test-lab: the lab's tests (docs/lab.md): Kubernetes' Service behaviours
## with real sockets through real VPPs, on IPv4 and IPv6; the lab comes up
## at the start and is torn down at the end. Needs root and VPPSVC_LAB_VPP.
test-lab: $(LAB_KUBE_PROXY)
	@test -z "$(LAB_NEEDS_VPP)" || test -n "$$VPPSVC_LAB_VPP" || { echo "test-lab: set VPPSVC_LAB_VPP to a VPP 25.10 binary (a build directory's bin/vpp; docs/lab.md)" >&2; exit 2; }
	cd e2e && VPPSVC_LAB_KINDS=$(LAB_KINDS) $(GO) test -count=1 -p 1 -timeout 30m -v ./lab/labtest/

.PHONY: sim-cluster
## sim-cluster: the cluster-scale simulation (docs/scale.md): N agents
## (VPPSVC_SIM_AGENTS, default 200) and as many kube-proxy informer sets
## against one in-process API server, under endpoint churn and Node status
## updates; prints per-agent bytes, events and cache next to kube-proxy's.
## The VPPSVC_SIM_* variables of e2e/simcluster_test.go size it.
sim-cluster:
	cd e2e && VPPSVC_SIM=1 $(GO) test -count=1 -run '^TestSimCluster$$' -v -timeout 15m .

.PHONY: test-e2e
## test-e2e: end-to-end tests against a real kube-apiserver and etcd, in process
## (module e2e/, docs/e2e.md). The first build compiles Kubernetes: 7 to 11 minutes.
test-e2e:
	cd e2e && $(GO) vet ./... && $(GO) test -count=1 -timeout 10m ./...

## test-property: only the end-to-end property tests (1,000 random event
## sequences each, with and without VPP faults; about 90 s; part of test).
## VPPSVC_SEED=<n> replays one sequence.
test-property:
	$(GO) test -short -count=1 -run 'TestProperty' ./renderer/internal/reliability/

## fuzz: each fuzz target for 60 s (the long-mode check of issue 7); new
## crashers land in the package's testdata/fuzz.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzConvertService$$' -fuzztime 60s ./processor/
	$(GO) test -run '^$$' -fuzz '^FuzzParseFile$$' -fuzztime 60s ./cmd/vppsvc/internal/flows/

## soak: 100 endpoint changes per second for 60 s over 10,000 services.
soak:
	$(GO) test -count=1 -run '^TestChurnSoak$$' -v ./internal/benchmarks/

## test-long: the same tests with their long (nightly-size) variants, the
## property tests at 10,000 sequences each (VPPSVC_PROPERTY_SEQUENCES).
test-long: vet
	VPPSVC_PROPERTY_SEQUENCES=10000 $(GO) test -count=1 -timeout 60m ./...

## bench: the benchmarks whose figures docs/performance.md records (about 10
## minutes on 2 cores; the 50,000-service cases need about 3 GB). The scale
## benchmarks end with the tables of docs/performance.md (medians, and the
## targets of issues 7 and 15: met, or by how much not); last, issue 15's
## ratios against kube-proxy (bench-kubeproxy; KUBEPROXY=0 skips it).
## Nothing is written: copy the figures into docs/performance.md by hand.
## BENCHCOUNT=3 repeats each.
BENCHCOUNT ?= 1
KUBEPROXY ?= 1
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCHCOUNT) -timeout 60m ./internal/benchmarks/ | $(GO) run ./internal/benchmarks/benchtable
	$(GO) test -run '^$$' -bench . -benchmem ./processor/ ./vppcfg/engine/ ./renderer/nat44/ ./renderer/ipv6/
	$(GO) test -run '^$$' -bench 'BenchmarkReconcileColdSync|BenchmarkHitlessResync20k|BenchmarkRecoveryAfterVPPRestart' -benchtime=5x -benchmem ./vppcfg/govppdriver/
	if [ "$(KUBEPROXY)" != 0 ]; then $(MAKE) --no-print-directory bench-kubeproxy; fi

## bench-compare: the benchmarks on BASE (default: the merge-base with main)
## and on the working tree in one run, interleaved BENCHCOUNT times (default
## 6), then benchstat's ratios (docs/performance.md, "Comparing a change with
## main"). BENCH and PKGS choose the benchmarks (write $$ for a $ in BENCH
## on make's command line); the default set takes about 3 minutes on 2 cores.
## Example: make bench-compare BASE=HEAD~1 BENCHCOUNT=2
.PHONY: bench-compare
bench-compare: BENCHCOUNT = 6
bench-compare:
	BENCHCOUNT=$(BENCHCOUNT) GO='$(GO)' scripts/bench-compare.sh

## bench-kubeproxy: issue 15's kube-proxy anchor: downloads k8s.io/kubernetes
## (KUBE_VERSION, default v1.37.2), times its nftables rule generation and
## vppsvc's cold sync alternately on 5,000 x 10 and 50,000 x 1, ROUNDS times
## (default 3), and prints the ratios against the targets (docs/performance.md,
## "The kube-proxy anchor"). First run about 5 minutes; only the raw results
## stay, in the temporary directory the last line names.
.PHONY: bench-kubeproxy
bench-kubeproxy:
	GO='$(GO)' scripts/bench-kubeproxy.sh

## bench-realvpp: vppsvc's cost on a real VPP 25.10 (docs/performance.md,
## "Real VPP 25.10" and "A real VPP at control-plane speed"): cold syncs of
## 5,000 x 10 and 50,000 x 1 with and without a ServiceCIDR, each with VPP's
## own ceiling for the same writes replayed into a fresh VPP (metrics
## ceiling-calls/s, wire-calls/s, held-calls/s, x-ceiling) and, for NAT44,
## the floor: the same mappings built with no state (floor-x-ceiling,
## x-floor), an agent restart,
## NAT44-ED's mapping shapes at 2, 10 and 100 outside interfaces (first and
## last 1,000 adds: last1k/first1k), then CPU clocks per packet from VPP's
## "show runtime", and how long VPP stops when a pod is added at 50,000
## services (TestRealPodAddStall). Needs VPPSVC_TEST_VPP_SOCKET (a scratch VPP);
## VPPSVC_TEST_VPP_RESTART restarts that VPP between benchmarks (faster
## than deleting 50,000 mappings) and is needed for the ceilings. About 10
## minutes on 2 cores.
bench-realvpp:
	@test -n "$$VPPSVC_TEST_VPP_SOCKET" || { echo "bench-realvpp: set VPPSVC_TEST_VPP_SOCKET to a scratch VPP 25.10's API socket (docs/real-vpp.md)" >&2; exit 2; }
	$(GO) test -count=1 -run '^TestRealPodAddStall$$' -bench . -benchtime=1x -timeout 60m ./internal/benchmarks/realvpp/

## chaos-realvpp: the chaos suite on a real VPP 25.10 (docs/reliability.md,
## "Chaos on a real VPP 25.10"): VPP killed at several points of cold syncs
## and of an incremental change, recovery time against a cold sync, VPP
## frozen for 30 s, its main heap exhausted, its NAT session table flooded,
## and 10 minutes of churn; each case ends by comparing VPP with the desired
## state. Needs VPPSVC_TEST_VPP_SOCKET and VPPSVC_TEST_VPP_RESTART (a
## command that restarts that VPP; the heap case also needs it to honour
## VPPSVC_TEST_VPP_MAIN_HEAP). About 15 minutes.
chaos-realvpp:
	@test -n "$$VPPSVC_TEST_VPP_SOCKET" || { echo "chaos-realvpp: set VPPSVC_TEST_VPP_SOCKET to a scratch VPP 25.10's API socket (docs/real-vpp.md)" >&2; exit 2; }
	VPPSVC_CHAOS_CHURN=10m $(GO) test -count=1 -p 1 -run 'TestChaos' -timeout 60m -v ./internal/benchmarks/realvpp/

## image: the agent's container image from the Dockerfile (a static binary on
## distroless/static), tagged $(IMAGE):$(VERSION), with docker or podman,
## whichever is installed (CONTAINER_TOOL overrides). docs/deploy/daemonset.yaml
## runs $(IMAGE):$(VERSION); to deploy, build with your registry's name
## (make image IMAGE=registry.example.com/vppsvc VERSION=v1), push it and set
## that name in the manifest. The project publishes no image.
IMAGE ?= ghcr.io/vppsvc/vppsvc
VERSION ?= devel
CONTAINER_TOOL ?= $(shell command -v docker 2>/dev/null || command -v podman 2>/dev/null)
image:
	@test -n "$(CONTAINER_TOOL)" || { echo "image: neither docker nor podman is installed; install one, or set CONTAINER_TOOL to a builder that reads a Dockerfile" >&2; exit 2; }
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) -t $(IMAGE):$(VERSION) .

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files --others --exclude-standard '*.go' 2>/dev/null)); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
