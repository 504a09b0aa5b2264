#!/usr/bin/env bash
# bench-compare: the project's benchmarks on a baseline commit and on the
# working tree, in one run on one machine, compared by benchstat.
#
# Runs on a shared machine drift by ±15–30 % between runs (docs/performance.md),
# so two figures measured at different times say little about a change. Here
# both builds run in the same minutes, interleaved (base, head, base, head …),
# so a slow spell of the machine hits both sides alike, and benchstat reports
# each ratio with its confidence interval.
#
# Environment (all optional; make bench-compare passes its variables):
#   BASE        the baseline commit (default: the merge-base of HEAD and main)
#   BENCH       the -bench regexp (default: the quick set below)
#   PKGS        the packages, space-separated (default: ./internal/benchmarks/ ./vppcfg/engine/)
#   BENCHCOUNT  rounds; each round runs base once, then head once (default 6)
#   BENCHFLAGS  extra test-binary flags, e.g. -test.benchtime=2s
#   GO          the go command (default: go)
set -euo pipefail

GO=${GO:-go}
BENCHCOUNT=${BENCHCOUNT:-6}
PKGS=${PKGS:-./internal/benchmarks/ ./vppcfg/engine/}
# The quick set: a 1,000-service cold sync end to end, an endpoint change
# in 10,000 services (fake and instant VPP), and the VPP layer's diff. Go
# splits the regexp at a top-level | into whole alternatives, then each at
# / into one pattern per sub-benchmark level.
BENCH=${BENCH:-'^BenchmarkColdSync$/^services=1000$|^BenchmarkEndpointChange$|^BenchmarkDiffSteadyState$'}
BENCHFLAGS=${BENCHFLAGS:-}
# benchstat has no releases; this is the newest pseudo-version on the module
# proxy when the script was written. Pinned so that every run formats alike.
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

root=$(git rev-parse --show-toplevel)
cd "$root"
if [ -z "${BASE:-}" ]; then
	BASE=$(git merge-base HEAD main 2>/dev/null || echo main)
fi
base_rev=$(git rev-parse --verify --quiet "$BASE^{commit}") || {
	echo "bench-compare: BASE=$BASE is not a commit" >&2
	exit 2
}

work=$(mktemp -d "${TMPDIR:-/tmp}/vppsvc-bench-compare.XXXXXX")
results=$work/results
mkdir -p "$results" "$work/bin/base" "$work/bin/head"
cleanup() {
	git -C "$root" worktree remove --force "$work/base" >/dev/null 2>&1 || true
	rm -rf "$work/base" "$work/bin"
}
trap cleanup EXIT
git worktree add --quiet --detach "$work/base" "$base_rev"

# binary names the test binary of package pkg (./a/b/ → a_b.test).
binary() {
	local p=${1#./}
	p=${p%/}
	echo "${p//\//_}.test"
}

# Build both sides first, so that compiling never overlaps a measurement.
# A package missing on one side is left out of both.
pkgs=()
for pkg in $PKGS; do
	if [ ! -d "$work/base/$pkg" ] || [ ! -d "$root/$pkg" ]; then
		echo "bench-compare: $pkg is not in both trees; skipped" >&2
		continue
	fi
	echo "build $pkg (base $(git rev-parse --short "$base_rev"), head working tree)" >&2
	(cd "$work/base" && $GO test -c -o "$work/bin/base/$(binary "$pkg")" "$pkg")
	(cd "$root" && $GO test -c -o "$work/bin/head/$(binary "$pkg")" "$pkg")
	pkgs+=("$pkg")
done
[ ${#pkgs[@]} -gt 0 ] || { echo "bench-compare: no package to run" >&2; exit 2; }

# run side round: every package's benchmarks of one side, run from the
# package's directory in that side's tree, as go test runs them.
run() {
	local side=$1 round=$2 tree=$root
	[ "$side" = base ] && tree=$work/base
	for pkg in "${pkgs[@]}"; do
		echo "round $round/$BENCHCOUNT: $side $pkg" >&2
		# shellcheck disable=SC2086 # BENCHFLAGS is a list of flags
		(cd "$tree/$pkg" && "$work/bin/$side/$(binary "$pkg")" -test.run '^$' \
			-test.bench "$BENCH" -test.benchmem -test.count 1 -test.timeout 60m $BENCHFLAGS) \
			>>"$results/$side.txt"
	done
}

for round in $(seq 1 "$BENCHCOUNT"); do
	run base "$round"
	run head "$round"
done

echo
echo "base = $BASE ($(git rev-parse --short "$base_rev")), head = working tree of $(git rev-parse --abbrev-ref HEAD); $BENCHCOUNT rounds"
(cd "$results" && $GO run "$BENCHSTAT" base=base.txt head=head.txt)
echo
echo "raw results: $results/base.txt $results/head.txt"
