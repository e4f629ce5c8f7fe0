#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Root selftests of libmroce over the real XDP + AF_XDP path on a veth pair:
# every operation at sizes from 0 bytes to 64 MiB verified by content, the
# same under injected loss and reordering, fill-ring starvation, 64 QPs,
# bad keys, and a peer killed mid-transfer.
. "$(dirname "$0")/lib.sh"

RT=$BUILD/selftests/rdma_test

# rdma_pair "server args" "client args": run one server/client exchange.
rdma_pair() {
	rm -f "$TMP/srv.log"
	bg b "$RT" server --dev "$IF_B" --addr "$IP_B" $1 >"$TMP/srv.log" 2>&1
	local spid=$!
	wait_for "$TMP/srv.log" listening 30 || { cat "$TMP/srv.log"; return 1; }
	a "$RT" client --dev "$IF_A" --addr "$IP_B" $2
	local rc=$?
	wait "$spid"
	local src=$?
	sed 's/^/    /' "$TMP/srv.log"
	[ $rc -eq 0 ] && [ $src -eq 0 ]
}

SIZES=0,1,4095,4096,4097,1048576,67108864

# With MROCE_TEST_POOL=1 (run-tests.sh's veth-pool tier) the regions are in
# the UMEM's transmit pool: the data must have left without the library's
# copy (content checked by the client as always).
pool_sent() {
	local side=$1 log=$2 n
	[ "${MROCE_TEST_POOL:-0}" != 0 ] || return 0
	n=$(sed -n "s/^ *$side: sent from the transmit pool without a copy \([0-9]*\)$/\1/p" "$log")
	echo "$side: $n packets sent from the transmit pool without a copy"
	[ -n "$n" ] && [ "$n" -gt 100 ] || { echo "$side: regions in the pool, yet nothing was sent from it"; return 1; }
}

t_every_op_every_size() {
	rdma_pair "" "--sizes $SIZES" >"$TMP/out.log" || { cat "$TMP/out.log"; return 1; }
	cat "$TMP/out.log"
	pool_sent client "$TMP/out.log" || return 1
	pool_sent server "$TMP/out.log" || return 1
	# With MROCE_TEST_DM=1 (run-tests.sh's veth-dm tier) the regions are
	# device memory: the WRITEs must have been placed by XDP, the library
	# only completing them (and the content checks above passed). On a
	# kernel that refuses bpf_xdp_adjust_meta to XDP, placement in XDP is
	# off (mroce status: xdp_places 0; prog_test checks the kernel does
	# refuse it): then user space placed every one, and XDP none.
	if [ "${MROCE_TEST_DM:-0}" != 0 ]; then
		local xdp lib places
		xdp=$(counter "$IF_B" placed)
		places=$(counter "$IF_B" xdp_places)
		lib=$(sed -n 's/.*server: .*placed by XDP \([0-9]*\)$/\1/p' "$TMP/srv.log")
		case "$places" in
		1)
			echo "XDP placed $xdp WRITE payloads in the server's device memory, the library completed $lib of them"
			[ -n "$lib" ] && [ "$lib" -gt 1000 ] && [ "$xdp" -ge "$lib" ] ||
				{ echo "device memory, but XDP did not place the WRITEs"; return 1; }
			;;
		0)
			echo "placement in XDP off (this kernel refuses bpf_xdp_adjust_meta to XDP): user space placed every WRITE in the server's device memory (content checked above); XDP placed $xdp, the library saw ${lib:-none} placed by XDP"
			[ "$xdp" = 0 ] && [ "$lib" = 0 ] ||
				{ echo "placement in XDP off, yet payloads were reported placed by XDP"; return 1; }
			;;
		*)
			echo "mroce status --json has no xdp_places"; return 1 ;;
		esac
	fi
}

# The largest message the API promises: 1 GiB in one work request, each way.
t_one_gib() {
	rdma_pair "--region 1100000000" "--sizes 1073741824 --region 2200000000"
}

t_loss_1pct_reordering() {
	rdma_pair "--faults drop=10000,reorder=100000,seed=2" \
		"--sizes $SIZES --faults drop=10000,reorder=100000,seed=1"
}

# Reordering without loss, both ways, 16 paths: it is not taken for loss.
# Each side may resend under 1% of what it sent (lib/reorder.c learns how
# far its routes reorder; before, every overtaken copy was resent).
t_reordering_no_loss() {
	rdma_pair "--faults reorder=200000,seed=22" \
		"--sizes 1048576,16777216 --paths 16 --faults reorder=200000,seed=21" >"$TMP/out.log" || { cat "$TMP/out.log"; return 1; }
	cat "$TMP/out.log"
	local side tx re
	for side in client server; do
		read -r tx re < <(sed -n "s/^ *$side: packets tx \([0-9]*\) rx [0-9]*, retransmitted \([0-9]*\),.*/\1 \2/p" "$TMP/out.log")
		[ -n "$tx" ] || { echo "no $side counters"; return 1; }
		echo "$side: $re of $tx packets resent"
		[ $((re * 100)) -lt "$tx" ] || { echo "$side resent 1% or more of its packets on a wire that loses nothing"; return 1; }
	done
}

t_loss_10pct_reordering() {
	rdma_pair "--faults drop=100000,reorder=200000,dup=20000,seed=4" \
		"--sizes 0,1,4095,4096,4097,1048576 --faults drop=100000,reorder=200000,dup=20000,corrupt=5000,seed=3"
}

# Bits flipped on the way in (the server's receive side): corrupted frames
# fail the checksum and are dropped and counted (a flip in a field nothing
# reads, the IP TTL say, may pass), no wrong byte lands (the client checks
# every byte), and the resends deliver. The client sends clean, so in the
# veth-pool tier its frames are the pool's.
t_corruption() {
	rdma_pair "--faults corrupt=20000,seed=31" "--sizes 4097,1048576" >"$TMP/out.log" ||
		{ cat "$TMP/out.log"; return 1; }
	cat "$TMP/out.log"
	local bad
	bad=$(sed -n 's/^ *server: packets tx .*, bad \([0-9]*\), injected faults.*/\1/p' "$TMP/out.log")
	echo "server: $bad corrupted frames dropped and counted"
	[ -n "$bad" ] && [ "$bad" -gt 10 ] || { echo "corruption injected, yet no frame was counted bad"; return 1; }
	pool_sent client "$TMP/out.log"
}

t_unordered_and_go_back_n() {
	rdma_pair "--faults drop=20000,seed=6" "--sizes 4097,1048576 --order unordered --faults drop=20000,seed=5" || return 1
	# Go-back-N resends the whole window from each gap. The receiver must
	# NACK every gap (XDP passes a packet past it up to be NACKed, again
	# each millisecond the gap lasts) and XDP must keep a burst that user
	# space has not read yet: before, the READ's responses met one or the
	# other and a 1 MiB READ at 2% loss took 0.2-60 s, its responder
	# resending 40-85 thousand packets on timeouts. --retry 30: this checks
	# that go-back-N delivers, not its retry budget.
	rdma_pair "--retry 30 --faults drop=20000,seed=8" \
		"--sizes 4097,1048576 --gbn --paths 1 --retry 30 --faults drop=20000,seed=7" \
		>"$TMP/out.log" || { cat "$TMP/out.log"; return 1; }
	cat "$TMP/out.log"
	local re to gaps
	re=$(sed -n 's/^ *server: packets tx [0-9]* rx [0-9]*, retransmitted \([0-9]*\),.*/\1/p' "$TMP/out.log")
	to=$(sed -n 's/^client: packets tx .*, timeouts \([0-9]*\),.*/\1/p' "$TMP/out.log")
	gaps=$(a "$MROCE" status "$IF_A" --json | sed -n 's/.*"gap_report":\([0-9]*\).*/\1/p')
	echo "go-back-N: the server resent $re packets, the client timed out $to times, its XDP passed up $gaps packets to NACK a gap"
	[ -n "$re" ] && [ "$re" -lt 8000 ] || { echo "the READ's responder resent ${re:-?} packets: a storm"; return 1; }
	[ -n "$to" ] && [ "$to" -lt 30 ] || { echo "the client waited on ${to:-?} timeouts: gaps not NACKed"; return 1; }
	[ -n "$gaps" ] && [ "$gaps" -gt 0 ] || { echo "no gap went up to be NACKed"; return 1; }
}

# 64 receive frames: bursts overflow the socket, packets are lost between
# XDP and user space, and must still arrive through retransmission.
t_fill_ring_starvation() {
	rdma_pair "--umem 64" "--sizes 1048576,4194304" || return 1
	local xdp_rx lib_rx
	xdp_rx=$(counter "$IF_B" rx)
	lib_rx=$(sed -n 's/.*server: packets tx [0-9]* rx \([0-9]*\),.*/\1/p' "$TMP/srv.log")
	echo "XDP redirected $xdp_rx packets to the server's socket, the library received $lib_rx"
	[ -n "$lib_rx" ] && [ "$xdp_rx" -gt "$lib_rx" ] || { echo "no packet was lost on the way: starvation not exercised"; return 1; }
}

t_64_qps() {
	rdma_pair "--qps 64" "--qps 64 --sizes 0,1,4097,65536"
}

t_bad_keys_and_ranges() {
	rdma_pair "--qps 4" "--qps 4 --bad-keys"
}

# MTU 9000: frames of up to 9014 bytes in several UMEM buffers each way
# (AF_XDP multi-buffer), under loss and reordering too; XDP saw them whole.
t_jumbo_frames() {
	rdma_pair "--faults drop=5000,reorder=50000,seed=12" \
		"--sizes 0,1,4097,8958,8959,9000,1048576,16777216 --faults drop=5000,reorder=50000,seed=11" || return 1
	local rx bytes
	rx=$(counter "$IF_B" rx)
	bytes=$(counter "$IF_B" rx_bytes)
	echo "the server's XDP took $rx MetaRoCE frames, $((bytes / rx)) bytes on average"
	[ "$rx" -gt 0 ] && [ $((bytes / rx)) -gt 4096 ] || { echo "no jumbo frames went by"; return 1; }
}

# Device memory's own rules (rdma_test.c, dm_check()): errors, sizes, zeroed
# and separate allocations, -EBUSY under a region, chunks back at close and
# from a process that died holding them.
t_device_memory() {
	a "$RT" dm "$IF_A"
}

t_umem_pool() {
	a "$RT" pool "$IF_A"
}

t_peer_killed() {
	rm -f "$TMP/srv.log" "$TMP/cli.log"
	bg b "$RT" server --dev "$IF_B" --addr "$IP_B" >"$TMP/srv.log" 2>&1
	local spid=$!
	wait_for "$TMP/srv.log" listening 30 || return 1
	bg a "$RT" client --dev "$IF_A" --addr "$IP_B" --until-killed >"$TMP/cli.log" 2>&1
	local cpid=$!
	wait_for "$TMP/cli.log" "writing until" 30 || { cat "$TMP/cli.log"; return 1; }
	sleep 0.5
	local pid
	pid=$(sed -n 's/.*, pid \([0-9]*\)$/\1/p' "$TMP/srv.log")
	[ -n "$pid" ] && kill -KILL "$pid" || { echo "cannot find the server's pid"; return 1; }
	local t0=$(date +%s%N)
	wait "$cpid"
	local rc=$? t1=$(date +%s%N)
	cat "$TMP/cli.log"
	echo "client gave up $(( (t1 - t0) / 1000000 )) ms after the kill"
	[ $rc -eq 0 ] && [ $(( (t1 - t0) / 1000000 )) -lt 5000 ]
}

require_root verbs
[ -x "$RT" ] || { echo "FAIL: verbs: $RT is not built"; exit 1; }
run_test "WRITE, READ, WRITE_IMM, SEND at 0 B .. 64 MiB" t_every_op_every_size
run_test "one 1 GiB message of every kind" t_one_gib
run_test "the same under 1% loss and reordering" t_loss_1pct_reordering
run_test "reordering without loss over 16 paths: under 1% resent" t_reordering_no_loss
run_test "10% loss, reordering, duplication, corruption" t_loss_10pct_reordering
run_test "2% of frames corrupted on receive: dropped, counted, resent, every byte right" t_corruption
run_test "unordered delivery and go-back-N under loss" t_unordered_and_go_back_n
run_test "fill-ring starvation" t_fill_ring_starvation
run_test "64 connections (128 QPs)" t_64_qps
run_test "bad keys and out-of-range addresses" t_bad_keys_and_ranges
run_test "peer killed mid-transfer" t_peer_killed
run_test "jumbo frames, MTU 9000 (AF_XDP multi-buffer), with loss and reordering" t_jumbo_frames 9000
run_test "device memory: allocation, zeroing, -EBUSY, chunks back from the dead" t_device_memory
run_test "the UMEM's transmit pool: argument errors, first fit, zeroed, frees" t_umem_pool
summary verbs
