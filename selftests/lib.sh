# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Shared by the root selftests and the demo: two hosts in network namespaces
# on a veth pair, addresses from 198.18.0.0/15 only, and a teardown that runs
# on every exit path (success, failure, Ctrl-C).
#
# A test is a shell function: return 0 to pass, 1 to fail, $SKIP (4) to skip
# with the reason as its last line of output.

set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
MROCE=$BUILD/mroce
PEER=$BUILD/selftests/peer
SKIP=4

NS_A=mroce-a-$$
NS_B=mroce-b-$$
IF_A=va
IF_B=vb
IP_A=198.18.0.1
IP_B=198.18.0.2
TMP=$(mktemp -d /tmp/mroce-selftest.XXXXXX)
chmod 755 "$TMP"
PASSED=0
FAILED=0
SKIPPED=0
BG_PIDS=()

. "$ROOT/selftests/netns.sh"
a() { in_ns "$NS_A" "$@"; }
b() { in_ns "$NS_B" "$@"; }
mac_of() { "$1" ip -o link show "$2" | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2; }

# Start a command in the background and remember it for the teardown.
bg() { "$@" & BG_PIDS+=($!); }

teardown_pair() {
	local p ns
	# Whatever still runs inside the namespaces (a test that failed half way) goes first.
	for ns in "$NS_A" "$NS_B"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	done
	for p in "${BG_PIDS[@]+"${BG_PIDS[@]}"}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	BG_PIDS=()
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	return 0
}

cleanup_all() {
	[ -n "${TEST_PID:-}" ] && kill "$TEST_PID" 2>/dev/null
	teardown_pair
	rm -rf "$TMP"
}
trap cleanup_all EXIT
trap 'exit 130' INT TERM

# MTU 1500 unless told; $PAIR_QUEUES receive and transmit queues per side (1 unless
# told: veth delivers a frame to the peer's queue it was sent from, so a
# device on queue q talks to one on the peer's queue q).
setup_pair() {
	local mtu=${1:-1500} nq=${PAIR_QUEUES:-1}
	ip netns add "$NS_A" && ip netns add "$NS_B" || return 1
	if ! ip netns exec "$NS_A" true 2>/dev/null; then
		NETNS_EXEC=nsenter
		[ -n "${NSENTER_NOTED:-}" ] || echo "note: 'ip netns exec' is refused here; entering namespaces with nsenter --net" >&2
		NSENTER_NOTED=1
	fi
	ip link add "$IF_A" netns "$NS_A" numtxqueues "$nq" numrxqueues "$nq" type veth \
		peer name "$IF_B" netns "$NS_B" numtxqueues "$nq" numrxqueues "$nq" || return 1
	a ip link set lo up && b ip link set lo up &&
	a ip link set "$IF_A" mtu "$mtu" up && b ip link set "$IF_B" mtu "$mtu" up &&
	a ip addr add "$IP_A/24" dev "$IF_A" && b ip addr add "$IP_B/24" dev "$IF_B" || return 1
	MAC_A=$(mac_of a "$IF_A")
	MAC_B=$(mac_of b "$IF_B")
}

# A second plane beside setup_pair's: another veth pair $IF_A1/$IF_B1 with
# $IP_A1/$IP_B1 (/24), which the script sets.
setup_planes() {
	setup_pair "$@" || return 1
	ip link add "$IF_A1" netns "$NS_A" numtxqueues 1 numrxqueues 1 type veth \
		peer name "$IF_B1" netns "$NS_B" numtxqueues 1 numrxqueues 1 || return 1
	a ip link set "$IF_A1" mtu "${1:-1500}" up && b ip link set "$IF_B1" mtu "${1:-1500}" up &&
	a ip addr add "$IP_A1/24" dev "$IF_A1" && b ip addr add "$IP_B1/24" dev "$IF_B1" || return 1
	MAC_A1=$(mac_of a "$IF_A1")
	MAC_B1=$(mac_of b "$IF_B1")
}

# Wait up to $3 seconds for file $1 to contain $2.
wait_for() {
	local i
	for ((i = 0; i < ${3:-10} * 100; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	echo "timed out waiting for '$2' in $1"
	return 1
}

# ping and a TCP round trip of 1 MiB from A to B over the veth pair.
normal_traffic_ok() {
	local port=${1:-5201}
	a ping -c 3 -i 0.2 -W 2 "$IP_B" >"$TMP/ping.log" 2>&1 || { echo "ping failed:"; cat "$TMP/ping.log"; return 1; }
	rm -f "$TMP/tcp.log"
	bg b python3 "$ROOT/selftests/tcp_echo.py" server "$IP_B" "$port" >"$TMP/tcp.log" 2>&1
	wait_for "$TMP/tcp.log" listening 5 || return 1
	a python3 "$ROOT/selftests/tcp_echo.py" client "$IP_B" "$port" 1048576 || return 1
}

# counter NAME DEV: one counter from `mroce status --json` in namespace B.
counter() {
	b "$MROCE" status "$1" --json | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"
}

# run_test NAME FUNCTION [MTU]: fresh hosts for every test, built by
# $TEST_SETUP (default: the veth pair) and removed by $TEST_TEARDOWN. Lines
# of the test's output matching $FIGURES (a regex) are always shown.
run_test() {
	local name=$1 fn=$2 out rc
	# ONLY=REGEX: run just the tests whose function name matches (the others are not counted)
	[ -z "${ONLY:-}" ] || [[ $fn =~ $ONLY ]] || return 0
	if ! "${TEST_SETUP:-setup_pair}" "${3:-1500}" >"$TMP/setup.log" 2>&1; then
		echo "FAIL: $name: could not create the test hosts"
		sed 's/^/    /' "$TMP/setup.log"
		FAILED=$((FAILED + 1))
		"${TEST_TEARDOWN:-teardown_pair}"
		return
	fi
	# In the background, so that an interrupt runs the traps at once
	# (`wait` returns on a signal; a command substitution would not).
	"$fn" >"$TMP/test.out" 2>&1 &
	TEST_PID=$!
	wait "$TEST_PID"
	rc=$?
	TEST_PID=
	out=$(cat "$TMP/test.out")
	if [ $rc -eq 0 ]; then
		echo "PASS: $name"
		PASSED=$((PASSED + 1))
	elif [ $rc -eq $SKIP ]; then
		echo "SKIP: $name: $(printf '%s\n' "$out" | tail -n 1)"
		SKIPPED=$((SKIPPED + 1))
	else
		echo "FAIL: $name"
		FAILED=$((FAILED + 1))
	fi
	[ -n "${FIGURES:-}" ] && printf '%s\n' "$out" | grep -E "$FIGURES" | sed 's/^/    /'
	if [ $rc -ne 0 ] && [ $rc -ne $SKIP ] || [ -n "${VERBOSE:-}" ]; then
		printf '%s\n' "$out" | sed "s/^/    ${FIGURES:+| }/"
	fi
	"${TEST_TEARDOWN:-teardown_pair}"
}

summary() {
	echo "$1: $PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" -eq 0 ]
}

require_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: $1: needs root (network namespaces, XDP)"
		echo "$1: 0 passed, 0 failed, 1 skipped"
		exit 0
	fi
	for t in "$MROCE" "$PEER"; do
		[ -x "$t" ] || { echo "FAIL: $1: $t is not built (run make)"; exit 1; }
	done
}
