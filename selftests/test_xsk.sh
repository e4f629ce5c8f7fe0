#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Root selftests of the AF_XDP port on a veth pair: a second process that
# cannot have the interface's only queue fails clearly and leaves the first
# one's socket in place,
# and a clean 16 MiB write_bw neither loses packets in the AF_XDP rings nor
# resends more than a small share of them; the socket's own counters
# (XDP_STATISTICS) are exposed by mroce_dev_stats and `mroce status`; an
# idle server sleeps.
. "$(dirname "$0")/lib.sh"

PERF=$BUILD/mroce-perf

start_server() {
	rm -f "$TMP/srv.log"
	bg b "$PERF" server --dev "$IF_B" --addr "$IP_B" >"$TMP/srv.log" 2>&1
	wait_for "$TMP/srv.log" listening 30 || { cat "$TMP/srv.log"; return 1; }
}

# One short write_bw from A; its result line is in $TMP/cli.log.
client_ok() {
	a timeout 60 "$PERF" client --dev "$IF_A" --addr "$IP_B" --test write_bw "$@" >"$TMP/cli.log" 2>&1
	local rc=$?
	sed 's/^/    client: /' "$TMP/cli.log"
	[ $rc -eq 0 ] && grep -q '^write_bw' "$TMP/cli.log"
}

t_second_open_keeps_first() {
	start_server || return 1
	client_ok --size 65536 --iters 100 || { echo "the first server does not work at all"; return 1; }
	# A second process on a one-queue interface: the queue is the first's
	# (never shared), so it fails with the clear error, not a bare EBUSY.
	b timeout 30 "$PERF" server --dev "$IF_B" --addr "$IP_B" --port 4800 >"$TMP/srv2.log" 2>&1
	local rc=$?
	sed 's/^/    second server: /' "$TMP/srv2.log"
	[ $rc -ne 0 ] && grep -q 'receive queues taken by other processes' "$TMP/srv2.log" ||
		{ echo "the second open did not fail with the queues' error (rc $rc)"; return 1; }
	local before after try
	before=$(counter "$IF_B" no_xsk)
	# mroce-perf's server sometimes refuses a connection that follows the
	# previous one closely (hello timeout, RNR): a deaf socket fails every try.
	for try in 1 2 3; do
		client_ok --size 65536 --iters 100 && break
		[ $try -lt 3 ] || { echo "the first server went deaf after the failed open"; return 1; }
	done
	after=$(counter "$IF_B" no_xsk)
	echo "no_xsk drops (frames for a queue without a socket): $before before the failed open, $after after"
	[ "$after" = "$before" ]
}

t_write_bw_16m_clean() {
	start_server || return 1
	local run sent retx rto bad=0
	for run in 1 2 3; do
		client_ok --size 16m || return 1
		sent=$(sed -n 's/.* sent \([0-9]*\) retx.*/\1/p' "$TMP/cli.log")
		retx=$(sed -n 's/.* retx \([0-9]*\) ooo.*/\1/p' "$TMP/cli.log")
		rto=$(sed -n 's/.* rto \([0-9]*\) retired.*/\1/p' "$TMP/cli.log")
		echo "run $run: sent $sent retx $retx rto $rto"
		# Nothing is lost on a clean pair: resends beyond 0.5% are spurious.
		[ -n "$sent" ] && [ $((retx * 200)) -le "$sent" ] || bad=1
	done
	b "$MROCE" status "$IF_B" >"$TMP/status.log" 2>&1
	sed 's/^/    status: /' "$TMP/status.log"
	local f v
	for f in xsk_rx_dropped xsk_rx_invalid_descs xsk_tx_invalid_descs xsk_rx_ring_full \
		 xsk_rx_fill_ring_empty xsk_tx_ring_empty; do
		v=$(awk -v f="$f" '$1 == f { print $2 }' "$TMP/status.log")
		[ -n "$v" ] || { echo "mroce status does not list $f"; return 1; }
		case $f in
		xsk_rx_dropped|xsk_rx_invalid_descs|xsk_tx_invalid_descs|xsk_rx_ring_full)
			[ "$v" -eq 0 ] || { echo "$f is $v on a clean pair"; bad=1; } ;;
		esac
	done
	[ $bad -eq 0 ]
}

# perf_pid NS: the mroce-perf process running in namespace NS ($! is the
# subshell that bg starts, not the server).
perf_pid() {
	local p
	for p in $(ip netns pids "$1"); do
		tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | grep -q "^$PERF " && { echo "$p"; return 0; }
	done
	return 1
}

# cpu_ticks PID: user + system clock ticks of every thread of PID so far.
cpu_ticks() {
	awk '{ sub(/.*\) /, ""); t += $12 + $13 } END { print t }' /proc/"$1"/task/*/stat
}

# An idle server, in each progress mode, costs next to nothing: it sleeps on
# its socket, eventfd and CQ until something happens (it woke every
# millisecond before: 4-7% of a CPU).
t_idle_server_costs_nothing() {
	local mode sh pid t0 t1 pct hz try bad=0
	hz=$(getconf CLK_TCK)
	for mode in thread poll; do
		# The kernel releases the last server's socket a moment after it exits (EBUSY).
		for try in 1 2 3 4 5; do
			rm -f "$TMP/srv.log"
			bg b "$PERF" server --dev "$IF_B" --addr "$IP_B" --progress "$mode" >"$TMP/srv.log" 2>&1
			sh=$!
			wait_for "$TMP/srv.log" 'listening\|busy' 30
			grep -q listening "$TMP/srv.log" && break
			wait "$sh" 2>/dev/null
			[ $try -lt 5 ] || { cat "$TMP/srv.log"; return 1; }
			sleep 0.5
		done
		pid=$(perf_pid "$NS_B") || { echo "cannot find the server's process"; return 1; }
		sleep 1.5	# past the poll mode's 1 s of spinning after the last work
		t0=$(cpu_ticks "$pid")
		sleep 4
		t1=$(cpu_ticks "$pid")
		kill "$pid"
		wait "$sh" 2>/dev/null
		pct=$(( (t1 - t0) * 1000 / (4 * hz) ))	# tenths of a percent of one CPU
		echo "idle server, progress $mode: $((pct / 10)).$((pct % 10))% of a CPU over 4 s (bound 2%)"
		[ "$pct" -le 20 ] || bad=1
	done
	[ $bad -eq 0 ]
}

require_root test_xsk
run_test "a failed second open leaves the first socket receiving" t_second_open_keeps_first
FIGURES='^run [0-9]' run_test "write_bw 16 MiB on a clean pair: < 0.5% resent, no AF_XDP drops" t_write_bw_16m_clean
FIGURES='^idle server' run_test "an idle mroce-perf server costs < 2% of a CPU in either progress mode" t_idle_server_costs_nothing
summary test_xsk
