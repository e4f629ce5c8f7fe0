#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Root selftests of the collectives (docs/collectives.md): N-rank jobs started
# by tools/mroce-launch, one rank per namespace, on a bridge or the emulated
# fabric. build/selftests/coll_check checks every operation, type and
# reduction element by element (counts 0, 1, fewer than the ranks, uneven,
# several chunks; all-to-all-v with per-pair counts, zeros, inbox and direct
# blocks in one call; in place; non-blocking; send/recv round a ring) on 2, 3, 4, 5 and 8 ranks,
# every algorithm of the table pinned by name on 2-8 ranks, clean
# and under loss, reordering and duplication; then a rank is killed in the
# middle of an all-reduce and the others must fail in time and leave nothing.
. "$(dirname "$0")/lib.sh"

LAUNCH=$ROOT/tools/mroce-launch
CHECK=$BUILD/selftests/coll_check
CPERF=$ROOT/build/mroce-coll-perf
JOB=c$$

# launch ARGS... -- CMD...: one job, its own network, removed when it ends.
launch() { "$LAUNCH" --name "$JOB" --timeout 240 "$@"; }

t_two_ranks()		{ launch -n 2 -- "$CHECK"; }
t_three_ranks_ring()	{ launch -n 3 -- "$CHECK" --algo ring; }
t_four_ranks()		{ launch -n 4 -- "$CHECK"; }
t_five_ranks_small()	{ launch -n 5 -- "$CHECK" --algo small; }
t_eight_ranks()		{ launch -n 8 -- "$CHECK" --max-count 70000; }
# Every algorithm of the table pinned by name (MROCE_COLL_ALGO), checked
# element by element at 2-8 ranks, powers of two and not: the log-step ones
# the table picks beyond 8 ranks (rhd all-reduce and reduce-scatter, rd
# all-gather, scatter-ag broadcast), then the others at rank counts the
# default runs do not give them.
t_log_algos() {
	local n out
	for n in 2 3 4 5 6 7 8; do
		out=$(launch -n $n -- "$CHECK" --algo rhd,rd,scatter-ag --max-count 70000 2>&1) ||
			{ printf '%s\n' "$out" | tail -20; echo "rhd,rd,scatter-ag failed on $n ranks"; return 1; }
		printf '%s\n' "$out" | grep 'rank 0 of\|pinned'
	done
}
t_pinned_algos() {
	launch -n 6 -- "$CHECK" --algo ring,tree --max-count 70000 &&
	launch -n 7 -- "$CHECK" --algo rd,chain --max-count 70000
}
# Beyond 8 ranks the table itself picks the log-step algorithms (12: not a
# power of two); pinned ones under loss, duplication and reordering.
t_twelve_ranks() {
	local out
	out=$(launch -n 12 -- "$CHECK" --max-count 20000 2>&1) || { printf '%s\n' "$out" | tail -20; return 1; }
	printf '%s\n' "$out" | grep '^coll_check: rank 0 of\|runs'
	for want in "allreduce of 1 MiB runs rhd" "reducescatter of 1 MiB runs rhd" \
		    "allgather of 1 MiB runs rd" "broadcast of 1 MiB runs scatter-ag"; do
		printf '%s\n' "$out" | grep -q "$want" || { echo "expected: $want"; return 1; }
	done
}
t_log_algos_faults() {
	launch -n 6 --env MROCE_COLL_A2A_WINDOW=2 -- "$CHECK" --algo rhd,rd,scatter-ag \
		--max-count 70000 --loss 10000 --dup 10000 --reorder 50000
}
# All-to-all with a window of 2 peers in flight (distance by distance).
t_a2a_window() {
	local n
	for n in 5 7 8; do
		launch -n $n --env MROCE_COLL_A2A_WINDOW=2 -- "$CHECK" --max-count 70000 ||
			{ echo "all-to-all window 2 failed on $n ranks"; return 1; }
	done
}
# Point to point with sizes that disagree: the receiver gets -EBADMSG, and
# both ranks' next collective fails instead of waiting.
t_p2p_mismatch()	{ launch -n 2 -- "$CHECK" --p2p-mismatch --timeout-ms 5000; }
# All-to-all-v whose sizes for one pair disagree, each way a block can go
# (inbox or direct, either end): both ranks get -EBADMSG well before the
# timeout, nothing lands beyond the receiver's block, the third rank's next
# call fails too.
t_a2av_mismatch() {
	local sr out
	for sr in 100,99 99,100 100,10000 10000,100 10000,10001 10001,10000 0,5 5,0; do
		out=$(launch -n 3 -- "$CHECK" --a2av-mismatch "$sr" --timeout-ms 5000 2>&1)
		local rc=$?
		printf '%s\n' "$out" | grep 'mismatched alltoallv'
		[ $rc -eq 0 ] || { printf '%s\n' "$out"; echo "mismatch $sr not reported"; return 1; }
		printf '%s\n' "$out" | awk '/mismatched alltoallv/ { t = $NF; gsub(/[()]/, "", t);
			if (t + 0 > 4000) exit 1 }' || { echo "mismatch $sr: waited for the timeout"; return 1; }
	done
}

# Two ranks per host (namespace), each on a receive queue of its own, the
# fabric's switch steering each one's UDP port to its queue (flow rules) and
# bringing the frames between the two ranks of a host back (hairpin); the
# same under 1% loss on every path.
per_host_two() {
	local out rc
	out=$(launch -n 4 --per-host 2 --net fabric "$@" -- "$CHECK" --stats 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E "coll_check: rank [0-9]: .*queues|checks" | sort
	[ $rc = 0 ] || { printf '%s\n' "$out" | tail -20; return 1; }
	# ranks 0, 1 on host 0 and 2, 3 on host 1: one on queue 0, the other on queue 1
	for pair in "0 1" "2 3"; do
		set -- $pair
		local qa qb
		qa=$(printf '%s\n' "$out" | sed -n "s/.*coll_check: rank $1: eth0 queues \([0-9]\)\.\..*/\1/p")
		qb=$(printf '%s\n' "$out" | sed -n "s/.*coll_check: rank $2: eth0 queues \([0-9]\)\.\..*/\1/p")
		[ -n "$qa" ] && [ -n "$qb" ] && [ "$qa" != "$qb" ] ||
			{ echo "ranks $1 and $2 of one host are not on queues of their own ($qa, $qb)"; return 1; }
	done
}
t_four_ranks_two_per_host() { per_host_two; }
t_four_ranks_two_per_host_loss() { per_host_two --fabric-ctl 'path all loss=1%'; }

# Fault injection in every rank's device: 1% of frames dropped, 1%
# duplicated, 5% held back behind later ones.
t_four_ranks_loss_reorder_dup() {
	launch -n 4 -- "$CHECK" --loss 10000 --dup 10000 --reorder 50000
}
t_eight_ranks_loss_reorder_dup() {
	launch -n 8 -- "$CHECK" --max-count 70000 --loss 10000 --dup 10000 --reorder 50000
}

# The emulated fabric: 4 paths delayed 10/20/50/100 us (every multi-packet
# message arrives out of order), 1% loss and 1% duplication on each.
t_fabric_four_ranks() {
	local out ooo
	out=$(launch -n 4 --net fabric --paths 4 \
		--fabric-ctl 'path 0 delay=10 loss=1% dup=1%' --fabric-ctl 'path 1 delay=20 loss=1% dup=1%' \
		--fabric-ctl 'path 2 delay=50 loss=1% dup=1%' --fabric-ctl 'path 3 delay=100 loss=1% dup=1%' \
		-- "$CHECK" --max-count 70000 --stats 2>&1)
	local rc=$?
	printf '%s\n' "$out"
	[ $rc -eq 0 ] || return 1
	ooo=$(printf '%s\n' "$out" | sed -n 's/.*device: .* ooo \([0-9]*\) .*/\1/p' | head -n 1)
	echo "fabric: rank 0 saw ${ooo:-?} packets out of order"
	[ "${ooo:-0}" -gt 0 ] || { echo "no reordering: the fabric's delays did not act"; return 1; }
}

# SIGKILL rank 2 of 4 during 16 MiB all-reduces. Every other rank must
# return an error within the timeout (2 s) of the kill, exit by itself, and
# the job must leave no namespace and no process behind.
t_rank_killed_mid_allreduce() {
	local out rc kill_at worst=0 line at late n=0
	out=$(launch -n 4 --kill-rank 2 --kill-after-ms 1500 -- "$CHECK" --kill-test --timeout-ms 2000 2>&1)
	rc=$?
	printf '%s\n' "$out"
	[ $rc -eq 0 ] || { echo "the surviving ranks did not all exit"; return 1; }
	kill_at=$(printf '%s\n' "$out" | sed -n 's/^mroce-launch: killed rank 2 at \([0-9.]*\).*/\1/p')
	[ -n "$kill_at" ] || { echo "the launcher did not report the kill"; return 1; }
	# One report per match, not per line: rank 0's stdout and the other
	# ranks' prefixed stderr share the pipe, and a line may hold two reports.
	while read -r line; do
		at=${line##* at }
		late=$(python3 -c "print(int(($at - $kill_at) * 1000))")
		[ "$late" -gt "$worst" ] && worst=$late
		n=$((n + 1))
	done < <(printf '%s\n' "$out" | grep -o 'rank [0-9]*: allreduce [0-9]* failed at [0-9.]*')
	echo "killed rank: $n survivors failed, the last $worst ms after the kill (timeout 2000 ms)"
	[ $n -eq 3 ] || { echo "expected 3 survivors to report an error"; return 1; }
	[ "$worst" -le 2500 ] || { echo "a survivor took longer than the timeout"; return 1; }
	printf '%s\n' "$out" | grep -q 'others exited: 0:3 1:3 3:3' ||
		{ echo "survivors did not exit with the error code"; return 1; }
	if ip netns list | grep -q "^mrl-$JOB-"; then echo "namespaces left behind"; return 1; fi
	if pgrep -f "coll_check --kill-test" >/dev/null; then echo "processes left behind"; return 1; fi
}

# A rank that never joins: the root gives up after the timeout with a clear
# error; a job without MASTER_ADDR is refused at once.
t_rendezvous_errors() {
	local out t0 ms
	t0=$(date +%s%N)
	out=$(launch -n 2 --env MROCE_COLL_TIMEOUT_MS=1500 -- sh -c \
		'[ "$RANK" = 0 ] && exec "$0" || exit 0' "$CHECK" 2>&1)
	ms=$((($(date +%s%N) - t0) / 1000000))
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q 'joining the communicator: Connection timed out' ||
		{ echo "no timeout error from the root"; return 1; }
	echo "rendezvous: gave up after $ms ms (timeout 1500)"
	out=$(launch -n 2 -- sh -c 'unset MASTER_ADDR; exec "$0"' "$CHECK" 2>&1)
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q 'joining the communicator: Destination address required' ||
		{ echo "no error for a missing MASTER_ADDR"; return 1; }
	# ranks that pin different algorithms would run different messages: refused
	out=$(launch -n 2 -- sh -c '[ "$RANK" = 1 ] && export MROCE_COLL_ALGO=rhd; exec "$0"' \
		"$CHECK" 2>&1)
	printf '%s\n' "$out"
	[ "$(printf '%s\n' "$out" | grep -c 'joining the communicator: Invalid argument')" = 2 ] ||
		{ echo "ranks pinning different algorithms were not both refused"; return 1; }
}

# The benchmark's own check: nccl-tests style lines with #wrong 0, and JSON.
t_coll_perf() {
	local out
	out=$(launch -n 4 -- "$CPERF" -c allreduce -b 8 -e 8M -f 32 -n 5 -w 1) || return 1
	printf '%s\n' "$out"
	[ "$(printf '%s\n' "$out" | grep -vc '^#')" -eq 5 ] || { echo "expected 5 sizes"; return 1; }
	printf '%s\n' "$out" | grep -v '^#' | awk '$NF != 0 { exit 1 }' || return 1
	out=$(launch -n 3 -- "$CPERF" -c alltoall -b 96 -e 24M -f 64 -n 3 -w 1 --json) || return 1
	printf '%s\n' "$out"
	printf '%s\n' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["impl"] == "mroce" and d["ranks"] == 3 and len(d["results"]) == 4, d
assert all(r["wrong"] == 0 and r["busbw"] >= 0 for r in d["results"]), d
print("json: %d sizes, algos %s" % (len(d["results"]), sorted({r["algo"] for r in d["results"]})))'
}

coll_setup() { :; }
coll_teardown() { "$LAUNCH" down "$JOB" >/dev/null 2>&1; }
TEST_SETUP=coll_setup
TEST_TEARDOWN=coll_teardown
FIGURES='^(coll_check: rank 0|coll_check: [a-z]* pinned|coll_check: [a-z]* of 1 MiB runs|\[[0-9]\] coll_check: rank [0-9]: mismatched|\[[0-9]\] coll_check: rank [0-9]: allreduce|killed rank:|fabric:|rendezvous:|json:)'
trap 'coll_teardown; cleanup_all' EXIT

require_root test_coll
for t in "$CHECK" "$CPERF"; do
	[ -x "$t" ] || { echo "FAIL: test_coll: $t is not built (run make)"; exit 1; }
done
if [ $# -gt 0 ]; then
	for t in "$@"; do run_test "$t" "t_$t"; done
else
	run_test "2 ranks: every op, type, reduction and count" t_two_ranks
	run_test "3 ranks, ring algorithms only" t_three_ranks_ring
	run_test "4 ranks" t_four_ranks
	run_test "5 ranks, latency algorithms for every size" t_five_ranks_small
	run_test "8 ranks" t_eight_ranks
	run_test "log-step algorithms pinned, 2-8 ranks, element by element" t_log_algos
	run_test "ring, tree, rd, chain pinned at 6 and 7 ranks" t_pinned_algos
	run_test "all-to-all, 2 peers in flight, 5, 7, 8 ranks" t_a2a_window
	run_test "12 ranks: the table's log-step algorithms" t_twelve_ranks
	run_test "log-step algorithms, 6 ranks, 1% loss, 1% dup, 5% reordering" t_log_algos_faults
	run_test "4 ranks, 1% loss, 1% duplication, 5% reordering" t_four_ranks_loss_reorder_dup
	run_test "8 ranks, 1% loss, 1% duplication, 5% reordering" t_eight_ranks_loss_reorder_dup
	run_test "4 ranks on the fabric: delayed paths, 1% loss, 1% dup" t_fabric_four_ranks
	run_test "4 ranks, 2 per host on queues of their own (steered, hairpin)" t_four_ranks_two_per_host
	run_test "4 ranks, 2 per host, 1% loss on every path" t_four_ranks_two_per_host_loss
	run_test "send/recv whose sizes disagree: an error on both ranks, no wait" t_p2p_mismatch
	run_test "all-to-all-v whose sizes disagree: -EBADMSG on both ranks, no wait" t_a2av_mismatch
	run_test "rank killed in the middle of an all-reduce" t_rank_killed_mid_allreduce
	run_test "rendezvous: missing rank, missing MASTER_ADDR" t_rendezvous_errors
	run_test "mroce-coll-perf: checked results, JSON" t_coll_perf
fi
summary test_coll
