#!/bin/bash
# test-realvpp.sh PACKAGE... — `make test-realvpp`: each package's tests on
# the real VPP at VPPSVC_TEST_VPP_SOCKET, one package at a time (they share
# that VPP). With VPPSVC_TEST_VPP_RESTART set, VPP is restarted before each
# package, so that none inherits another's state or the main heap a long
# run has worn (a scratch VPP used for many 50,000-service syncs once
# aborted, out of main heap, in the first test of a later run). Every
# package runs; the exit status is 1 when any failed, 2 when VPP could not
# be (re)started.
set -u
: "${GO:=go}"
sock=${VPPSVC_TEST_VPP_SOCKET:?set VPPSVC_TEST_VPP_SOCKET to a scratch VPP 25.10\'s API socket (docs/real-vpp.md)}
restart=${VPPSVC_TEST_VPP_RESTART:-}

# restart_vpp runs the restart command (bounded, as realvpp.Node.Restart
# bounds it) and waits at most 30 s for the restarted VPP's API socket: a
# socket other than the one before (inode and change time), since a
# command may return before the old VPP has removed its own.
restart_vpp() {
	local before
	before=$(stat -c '%i %Z' "$sock" 2>/dev/null)
	if ! timeout 120 sh -c "$restart" >/dev/null 2>&1 </dev/null; then
		echo "test-realvpp: the restart command failed: $restart" >&2
		return 1
	fi
	for _ in $(seq 300); do
		[ -S "$sock" ] && [ "$(stat -c '%i %Z' "$sock" 2>/dev/null)" != "$before" ] && return 0
		sleep 0.1
	done
	echo "test-realvpp: no API socket at $sock 30 s after the restart" >&2
	return 1
}

failed=()
for pkg in "$@"; do
	if [ -n "$restart" ]; then
		restart_vpp || exit 2
	fi
	if ! $GO test -count=1 -timeout 30m "$pkg"; then
		failed+=("$pkg")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "test-realvpp: failed: ${failed[*]}" >&2
	exit 1
fi
