#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# mroce's libibverbs' RC QPs: qp_test (state machine, refusals) in a namespace
# on a veth pair, then ibv_rc_pingpong -g 0 between two namespaces at 1 B ..
# 1 MiB, with and without -e (root). Usage: qp_test.sh [BUILD]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-${BUILD:-$ROOT/build}}
LIB=$BUILD/verbs
[ -e "$LIB/libibverbs.so.1" ] || { echo "no $LIB/libibverbs.so.1 (make verbs)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, XDP)"; exit 4; }
. "$ROOT/selftests/netns.sh"
. "$ROOT/verbs/tests/san.sh"

NA=mrv-qpa-$$
NB=mrv-qpb-$$
BIN=$(mktemp -d /tmp/mrv-qp.XXXXXX)
chmod 755 "$BIN"
cleanup() {
	local ns p
	for ns in "$NA" "$NB"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$BIN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cc -std=gnu11 -Wall -Wextra -Werror -O1 -g -o "$BIN/qp_test" "$ROOT/verbs/tests/qp_test.c" -libverbs || exit 1
ip netns add "$NA" && ip netns add "$NB" || exit 1
netns_pick_exec "$NA"
ip link add va netns "$NA" type veth peer name vb netns "$NB" || exit 1
for ns in "$NA" "$NB"; do in_ns "$ns" ip link set lo up; done
in_ns "$NA" ip link set va up && in_ns "$NB" ip link set vb up
in_ns "$NA" ip addr add 198.18.0.1/24 dev va && in_ns "$NB" ip addr add 198.18.0.2/24 dev vb
in_ns "$NA" ping -c 1 -W 2 198.18.0.2 >/dev/null || { echo "the veth pair does not pass traffic"; exit 1; }

fails=0
echo "== qp_test"
in_ns "$NA" env LD_LIBRARY_PATH="$LIB" "${SAN[@]}" "$BIN/qp_test" mroce_va || fails=$((fails + 1))

pingpong() {	# args for both ends
	local out="$BIN/pp.out" spid rc src
	in_ns "$NB" env LD_LIBRARY_PATH="$LIB" "${SAN_THIRD[@]}" timeout 30 ibv_rc_pingpong -g 0 -d mroce_vb "$@" >"$out" 2>&1 &
	spid=$!
	wait_port "$NB" 18515 || { kill "$spid"; cat "$out"; return 1; }	# ibv_rc_pingpong's port
	in_ns "$NA" env LD_LIBRARY_PATH="$LIB" "${SAN_THIRD[@]}" timeout 30 ibv_rc_pingpong -g 0 -d mroce_va "$@" 198.18.0.2 2>&1 | tail -1
	rc=${PIPESTATUS[0]}
	wait "$spid"
	src=$?
	[ "$rc" = 0 ] && [ "$src" = 0 ] || { echo "FAILED: ibv_rc_pingpong $* (client $rc, server $src)"; cat "$out"; return 1; }
}
if command -v ibv_rc_pingpong >/dev/null; then
	for s in 1 255 256 257 4096 65536 1048576; do
		for e in "" -e; do
			echo "== ibv_rc_pingpong -s $s $e"
			pingpong -s "$s" -n 20 $e || fails=$((fails + 1))
		done
	done
else
	echo "SKIP: ibv_rc_pingpong (ibverbs-utils) is not installed"
fi
echo "$fails failed"
[ "$fails" = 0 ]
