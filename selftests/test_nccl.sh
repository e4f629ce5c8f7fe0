#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The NCCL net plugin (build/.../libnccl-net-mroce.so) driven by
# selftests/nccl_harness.c as NCCL would drive it, one rank per network
# namespace on a Linux bridge (namespaces hnccl-PID-* or $HNCCL_NS_PREFIX-PID-*,
# addresses 198.18.14.0/24,
# removed on every exit path). Needs root.
#
#   selftests/test_nccl.sh [CASE...]       BUILD=build/asan for the ASan/UBSan build
#
# Cases: connect sizes larger group maxreq close_inflight stray neigh (2 ranks),
# killed (2 ranks, rank 1 SIGKILLed mid-transfer), ring (4 ranks). stray: port
# probes and silent clients ahead of the peer; neigh: the ranks flush their
# neighbour tables (ip neigh) during the handshake. Ends with
# "nccl: N passed, N failed, N skipped".
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PLUGIN=$BUILD/libnccl-net-mroce.so
HARNESS=$BUILD/selftests/nccl_harness
. "$ROOT/selftests/netns.sh"

PFX=${HNCCL_NS_PREFIX:-hnccl}-$$	# namespaces: $PFX-br, $PFX-r0..
NET=198.18.14
PORT=29511
DEAD_PEER_MS=2000	# the survivor's error after the kill, wall clock (the harness checks it too)
PASSED=0 FAILED=0 SKIPPED=0
TMP=$(mktemp -d /tmp/hnccl.XXXXXX)
RANK_PIDS=()
NRANKS=0

teardown() {
	local p ns
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PFX-"); do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
	NRANKS=0
	return 0
}
cleanup() { teardown; rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# net_up N: N ranks $PFX-r0.. with eth0 at $NET.<i+1> on a bridge in $PFX-br.
net_up() {
	local n=$1 i br=$PFX-br
	ip netns add "$br" || return 1
	netns_pick_exec "$br"	# a chroot's / refuses the remount `ip netns exec` makes
	in_ns "$br" ip link set lo up &&
	in_ns "$br" ip link add br0 type bridge stp_state 0 forward_delay 0 mcast_snooping 0 &&
	in_ns "$br" sh -c 'for f in /proc/sys/net/bridge/bridge-nf-call-*; do
			[ -e "$f" ] && echo 0 >"$f"; done; exit 0' || return 1
	for ((i = 0; i < n; i++)); do
		ip netns add "$PFX-r$i" &&
		ip link add eth0 netns "$PFX-r$i" numtxqueues 1 numrxqueues 1 type veth \
			peer name p$i netns "$br" numtxqueues 1 numrxqueues 1 &&
		in_ns "$br" ip link set p$i master br0 up &&
		in_ns "$PFX-r$i" ip link set lo up &&
		in_ns "$PFX-r$i" ip link set eth0 up &&
		in_ns "$PFX-r$i" ip addr add "$NET.$((i + 1))/24" dev eth0 || return 1
	done
	in_ns "$br" ip link set br0 up || return 1
	NRANKS=$n
}

# start_ranks N CASE...: the harness in every rank, in the background; outputs in $TMP/rI.
start_ranks() {
	local n=$1 i
	shift
	RANK_PIDS=()
	for ((i = 0; i < n; i++)); do
		in_ns "$PFX-r$i" env RANK=$i WORLD_SIZE=$n MASTER_ADDR=$NET.1 MASTER_PORT=$PORT \
			MROCE_IFNAME=eth0 HNCCL_MARK="$TMP/mark" ${HNCCL_DLCLOSE:+HNCCL_DLCLOSE=1} \
			"$HARNESS" "$PLUGIN" "$@" >"$TMP/r$i" 2>&1 &
		RANK_PIDS+=($!)
	done
}

# wait_ranks SECONDS: 0 if every rank exited 0 in time; kills the rest otherwise.
wait_ranks() {
	local deadline=$((SECONDS + $1)) p rc=0 alive
	while :; do
		alive=0
		for p in "${RANK_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		if [ $SECONDS -ge $deadline ]; then
			echo "timed out after $1 s: a rank hung"
			for p in "${RANK_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
			rc=1
			break
		fi
		sleep 0.1
	done
	for p in "${RANK_PIDS[@]}"; do wait "$p" || rc=1; done
	return $rc
}

show_ranks() {
	local i
	for ((i = 0; i < NRANKS; i++)); do sed "s/^/    [$i] /" "$TMP/r$i"; done
}

# Sanitizer reports in a rank's output (UBSan's do not change the exit status).
sanitizer_reports() {
	local i
	for ((i = 0; i < NRANKS; i++)); do
		grep -E 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$TMP/r$i" | sed "s/^/    [$i] /"
	done
}

# A case passes when every rank ran it to PASS and exited 0, with no sanitizer report.
run_case() {
	local name=$1 n=$2 i ok=1
	teardown
	if ! net_up "$n" >"$TMP/setup" 2>&1; then
		echo "FAIL: $name: could not create the namespaces"; sed 's/^/    /' "$TMP/setup"
		FAILED=$((FAILED + 1)); teardown; return
	fi
	start_ranks "$n" "$name"
	wait_ranks 120 >"$TMP/wait" || ok=0
	for ((i = 0; i < n; i++)); do grep -q "^PASS: $name " "$TMP/r$i" || ok=0; done
	[ -z "$(sanitizer_reports)" ] || { echo "    sanitizer report:" >>"$TMP/wait"; ok=0; }
	if [ $ok = 1 ]; then
		echo "PASS: $name ($n ranks)"; PASSED=$((PASSED + 1))
		grep -h '^    ' "$TMP/r0" || true
	else
		echo "FAIL: $name ($n ranks)"; FAILED=$((FAILED + 1))
		cat "$TMP/wait"; show_ranks
	fi
	[ -n "${VERBOSE:-}" ] && show_ranks
	teardown
}

# Rank 1 is SIGKILLed once its transfers are in flight; rank 0 must report an
# error within DEAD_PEER_MS of the kill, and exit on its own.
run_killed() {
	local name=killed i ok=1 kill_ns err_ns dt victim
	teardown
	rm -f "$TMP/mark"
	if ! net_up 2 >"$TMP/setup" 2>&1; then
		echo "FAIL: $name: could not create the namespaces"; FAILED=$((FAILED + 1)); teardown; return
	fi
	start_ranks 2 killed
	for ((i = 0; i < 3000; i++)); do [ -s "$TMP/mark" ] && break; sleep 0.01; done
	if [ ! -s "$TMP/mark" ]; then
		echo "FAIL: $name: rank 1 never got its transfers going"; show_ranks
		FAILED=$((FAILED + 1)); teardown; return
	fi
	sleep 0.05	# mid-transfer: a 16 MiB exchange is under way
	victim=$(awk '$1 == "inflight" { print $2 }' "$TMP/mark")
	kill_ns=$(date +%s%N)
	kill -KILL "$victim"	# the harness process itself, not the shell around it
	wait "${RANK_PIDS[1]}" 2>/dev/null
	RANK_PIDS=("${RANK_PIDS[0]}")
	wait_ranks 30 >"$TMP/wait" || ok=0
	grep -q '^PASS: killed ' "$TMP/r0" || ok=0
	err_ns=$(sed -n 's/^ERROR_AT_NS //p' "$TMP/r0")
	if [ -n "$err_ns" ]; then
		dt=$(( (err_ns - kill_ns) / 1000000 ))
		[ "$dt" -le $DEAD_PEER_MS ] || { echo "    error $dt ms after the kill (bound $DEAD_PEER_MS)"; ok=0; }
	else
		ok=0
	fi
	NRANKS=2
	[ -z "$(sanitizer_reports)" ] || { echo "    sanitizer report:" >>"$TMP/wait"; ok=0; }
	if [ $ok = 1 ]; then
		echo "PASS: $name (rank 1 SIGKILLed mid-transfer; rank 0's error $dt ms after the kill, bound $DEAD_PEER_MS ms)"
		PASSED=$((PASSED + 1))
		grep -h '^    ' "$TMP/r0" || true
	else
		echo "FAIL: $name"; FAILED=$((FAILED + 1)); cat "$TMP/wait"; show_ranks
	fi
	teardown
}

if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
	sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: nccl: needs root (network namespaces, XDP)"
	echo "nccl: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
for f in "$PLUGIN" "$HARNESS"; do
	[ -e "$f" ] || { echo "FAIL: nccl: $f is not built (make nccl)"; exit 1; }
done
CASES=("$@")
[ ${#CASES[@]} -gt 0 ] || CASES=(connect sizes larger group maxreq close_inflight stray neigh killed ring)
for c in "${CASES[@]}"; do
	case $c in
	connect|sizes|larger|group|maxreq|close_inflight|stray|neigh) run_case "$c" 2 ;;
	ring) run_case ring 4 ;;
	killed) run_killed ;;
	*) echo "test_nccl.sh: unknown case '$c'" >&2; exit 2 ;;
	esac
done
echo "nccl: $PASSED passed, $FAILED failed, $SKIPPED skipped"
[ $FAILED -eq 0 ]
