#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Receive queues and several processes per interface, on multi-queue veth
# pairs: each process's device serves queues of its own (veth delivers a
# frame to the peer's queue it was sent from, so the process on queue q
# talks to the one on the peer's queue q); WRITE, READ and SEND verified by
# content in every process at once; a process killed mid-transfer leaves
# the others whole and its queue to the next; a frame that reaches another
# process's queue is dropped and counted there, never delivered.
. "$(dirname "$0")/lib.sh"

RT=$BUILD/selftests/rdma_test
CM_PORT=18600

# servers N [args]: N rdma_test servers in B, on queues 0..N-1, CM ports CM_PORT+i.
servers() {
	local n=$1 i
	shift
	for ((i = 0; i < n; i++)); do
		bg b "$RT" server --dev "$IF_B" --addr "$IP_B" --port $((CM_PORT + i)) --queue $i "$@" \
			>"$TMP/srv$i.log" 2>&1
		SRV[$i]=$!
	done
	for ((i = 0; i < n; i++)); do
		wait_for "$TMP/srv$i.log" listening 30 || { cat "$TMP/srv$i.log"; return 1; }
		grep -q "server: queues $i..$i, UDP port $((4792 + i))" "$TMP/srv$i.log" ||
			{ echo "server $i: not on queue $i, port $((4792 + i)):"; cat "$TMP/srv$i.log"; return 1; }
	done
}

# clients N ARGS...: N clients in A at once, client i on queue i to server i; all must pass.
clients() {
	local n=$1 i rc=0
	shift
	for ((i = 0; i < n; i++)); do
		bg a "$RT" client --dev "$IF_A" --addr "$IP_B" --port $((CM_PORT + i)) --queue $i "$@" \
			>"$TMP/cli$i.log" 2>&1
		CLI[$i]=$!
	done
	for ((i = 0; i < n; i++)); do
		if ! wait "${CLI[$i]}"; then
			echo "client $i failed:"; sed 's/^/    /' "$TMP/cli$i.log"; rc=1
		fi
		if ! wait "${SRV[$i]}"; then
			echo "server $i failed:"; sed 's/^/    /' "$TMP/srv$i.log"; rc=1
		fi
	done
	return $rc
}

# No frame of these processes met a queue that was not its device's, or no socket.
no_stray_frames() {
	local side ns dev n
	for side in a b; do
		[ $side = a ] && dev=$IF_A || dev=$IF_B
		for n in wrong_queue no_xsk; do
			local v
			v=$($side "$MROCE" status "$dev" --json | sed -n "s/.*\"$n\":\([0-9]*\).*/\1/p")
			echo "$dev: $n $v"
			[ "$v" = 0 ] || { echo "$dev: $n counted $v frames of mroce traffic"; return 1; }
		done
	done
}

# N processes per end, every operation at several sizes, each verified by content.
many_processes() {
	local n=$1 sizes=$2
	servers "$n" || return 1
	clients "$n" --sizes "$sizes" || return 1
	for ((i = 0; i < n; i++)); do
		grep -q "client: queues $i..$i" "$TMP/cli$i.log" || { echo "client $i: not on queue $i"; return 1; }
		grep -q "server: ok" "$TMP/srv$i.log" || { echo "server $i: no ok"; return 1; }
	done
	no_stray_frames
}

t_four_processes() { many_processes 4 0,1,4097,1048576,16777216; }
t_eight_processes() { many_processes 8 0,4097,1048576; }
t_two_processes_loss() {
	servers 2 --faults drop=10000,reorder=50000,seed=5 || return 1
	clients 2 --sizes 4097,1048576 --faults drop=10000,reorder=50000,seed=6 || return 1
	no_stray_frames
}

# Without --queue: the second process gets the next free queue (and its own
# port), the third on a 2-queue interface a clear error, not EBUSY.
t_default_next_free_queue() {
	local i
	for i in 0 1; do
		bg b "$RT" server --dev "$IF_B" --addr "$IP_B" --port $((CM_PORT + i)) >"$TMP/srv$i.log" 2>&1
		SRV[$i]=$!
		wait_for "$TMP/srv$i.log" listening 30 || { cat "$TMP/srv$i.log"; return 1; }
		grep "server: queues" "$TMP/srv$i.log"
		grep -q "server: queues $i..$i, UDP port $((4792 + i))" "$TMP/srv$i.log" ||
			{ echo "server $i is not on queue $i"; return 1; }
	done
	b "$RT" server --dev "$IF_B" --addr "$IP_B" --port $((CM_PORT + 2)) >"$TMP/srv2.log" 2>&1
	cat "$TMP/srv2.log"
	grep -q "receive queues taken by other processes" "$TMP/srv2.log" ||
		{ echo "third process on a 2-queue interface: no clear error"; return 1; }
	# each client on its server's queue (veth: the queue a frame lands on is the one it left from)
	for i in 0 1; do
		bg a "$RT" client --dev "$IF_A" --addr "$IP_B" --port $((CM_PORT + i)) --queue $i --sizes 4097,1048576 \
			>"$TMP/cli$i.log" 2>&1
		CLI[$i]=$!
		wait "${CLI[$i]}" || { cat "$TMP/cli$i.log"; return 1; }
		wait "${SRV[$i]}" || { cat "$TMP/srv$i.log"; return 1; }
	done
	no_stray_frames
}

# One of four servers killed mid-transfer: its client gives up, the other
# three pairs finish verified, and a new process takes the dead one's queue.
t_one_killed() {
	local victim=2 pid i rc=0
	servers 4 || return 1
	for ((i = 0; i < 4; i++)); do
		if [ $i = $victim ]; then
			bg a "$RT" client --dev "$IF_A" --addr "$IP_B" --port $((CM_PORT + i)) --queue $i \
				--until-killed >"$TMP/cli$i.log" 2>&1
		else
			bg a "$RT" client --dev "$IF_A" --addr "$IP_B" --port $((CM_PORT + i)) --queue $i \
				--sizes 1048576,16777216,67108864 >"$TMP/cli$i.log" 2>&1
		fi
		CLI[$i]=$!
	done
	wait_for "$TMP/cli$victim.log" "writing until" 30 || { cat "$TMP/cli$victim.log"; return 1; }
	sleep 0.3
	pid=$(sed -n 's/.*, pid \([0-9]*\)$/\1/p' "$TMP/srv$victim.log")
	[ -n "$pid" ] && kill -KILL "$pid" || { echo "cannot find server $victim's pid"; return 1; }
	echo "killed server $victim (pid $pid) mid-transfer"
	for ((i = 0; i < 4; i++)); do
		[ $i = $victim ] && continue
		wait "${CLI[$i]}" || { echo "client $i failed:"; cat "$TMP/cli$i.log"; rc=1; }
		wait "${SRV[$i]}" || { echo "server $i failed:"; cat "$TMP/srv$i.log"; rc=1; }
		grep -q "server: ok" "$TMP/srv$i.log" || rc=1
	done
	timeout 10 tail --pid="${CLI[$victim]}" -f /dev/null || { echo "client $victim still running"; return 1; }
	tail -2 "$TMP/cli$victim.log"
	[ $rc = 0 ] || return 1
	echo "the other three pairs finished, verified"
	# the dead server's queue is free again for a new process
	bg b "$RT" server --dev "$IF_B" --addr "$IP_B" --port $((CM_PORT + 9)) --queue $victim \
		>"$TMP/srv9.log" 2>&1
	local s9=$!
	wait_for "$TMP/srv9.log" listening 30 || { cat "$TMP/srv9.log"; return 1; }
	a "$RT" client --dev "$IF_A" --addr "$IP_B" --port $((CM_PORT + 9)) --queue $victim \
		--sizes 4097,1048576 >"$TMP/cli9.log" 2>&1 || { cat "$TMP/cli9.log" "$TMP/srv9.log"; return 1; }
	wait $s9 || return 1
	echo "a new process took queue $victim and finished, verified"
}

# Isolation. B: servers S0 (queue 0) and S1 (queue 1); A: a bystander
# server P on queue 1, and a client M on queue 0 connected to S1. S1's
# frames leave from B's queue 1 and land on A's queue 1, P's: XDP drops
# them there (wrong_queue) and P receives none of them; M never hears from
# S1 and fails. P then serves a client of its own, verified.
t_other_queue_isolated() {
	servers 2 || return 1
	bg a "$RT" server --dev "$IF_A" --addr "$IP_A" --port $((CM_PORT + 5)) --queue 1 >"$TMP/p.log" 2>&1
	local ppid=$!
	wait_for "$TMP/p.log" listening 30 || { cat "$TMP/p.log"; return 1; }
	a timeout 15 "$RT" client --dev "$IF_A" --addr "$IP_B" --port $((CM_PORT + 1)) --queue 0 \
		--sizes 4097 >"$TMP/cli.log" 2>&1
	local rc=$? wq
	cat "$TMP/cli.log"
	[ $rc != 0 ] || { echo "a connection through another process's queue completed"; return 1; }
	wq=$(a "$MROCE" status "$IF_A" --json | sed -n 's/.*"wrong_queue":\([0-9]*\).*/\1/p')
	echo "A: wrong_queue $wq"
	[ "$wq" -gt 0 ] || { echo "nothing counted as wrong_queue"; return 1; }
	# S0 ends unserved; P, the bystander, serves a client from B's queue 1 (S1 is gone)
	wait "${SRV[1]}"
	kill "${SRV[0]}" 2>/dev/null
	b "$RT" client --dev "$IF_B" --addr "$IP_A" --port $((CM_PORT + 5)) --queue 1 \
		--sizes 4097,1048576 >"$TMP/pc.log" 2>&1 || { cat "$TMP/pc.log" "$TMP/p.log"; return 1; }
	wait $ppid || { cat "$TMP/p.log"; return 1; }
	grep -E "^server: (ok|packets)" "$TMP/p.log"
}

# queues_map_set SIDE QUEUE DEV_ID PID FLAGS: write the mroce_queues entry of
# SIDE's interface as a process that died would have left it (bpftool, by the
# attached program's map ids: every attached interface has a map of that name).
queues_map_set() {
	local side=$1 dev prog map
	[ "$side" = a ] && dev=$IF_A || dev=$IF_B
	prog=$($side bpftool -j net show dev "$dev" | python3 -c \
		'import json,sys; print(json.load(sys.stdin)[0]["xdp"][0]["id"])') || return 1
	map=$(bpftool -j prog show id "$prog" | python3 -c 'import json,sys,subprocess
for m in json.load(sys.stdin)["map_ids"]:
    j = json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", str(m)], capture_output=True).stdout)
    if j.get("name") == "mroce_queues":
        print(m)') || return 1
	[ -n "$map" ] || { echo "no mroce_queues map on $dev"; return 1; }
	python3 - "$2" "$3" "$4" "$5" <<'PY' >"$TMP/qmap.args"
import struct, sys
q, dev, pid, flags = map(int, sys.argv[1:5])
print(" ".join(f"{b:#04x}" for b in struct.pack("<I", q)), "value",
      " ".join(f"{b:#04x}" for b in struct.pack("<IIII", dev, pid, flags, 0)))
PY
	# shellcheck disable=SC2046
	bpftool map update id "$map" key $(cat "$TMP/qmap.args")
}

# A crashed process's entries: one naming a live pid (a reused one) does not
# keep the queue from a new device (the bind decides), and one still marking
# its port leaves that port to other traffic once its socket is gone.
t_stale_entries() {
	b "$MROCE" attach "$IF_B" >/dev/null || return 1
	# queue 0: a dead device's entry whose pid is now a live process's (ours)
	queues_map_set b 0 12345 $$ 1 || return 1
	servers 1 || return 1
	clients 1 --sizes 4097,1048576 || return 1
	echo "a live pid recorded on queue 0 did not keep a new device from it"
	# queue 1: a dead device's first queue, its port 4793, no socket any more
	queues_map_set b 1 54321 $$ 1 || return 1
	local p0 p1
	p0=$(counter "$IF_B" pass)
	a python3 -c "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(20): s.sendto(b'not MetaRoCE, another protocol on port 4793', ('$IP_B', 4793))"
	sleep 0.3
	p1=$(counter "$IF_B" pass)
	echo "UDP to port 4793 (a dead device's): pass $p0 -> $p1"
	[ $((p1 - p0)) -ge 20 ] || { echo "another protocol's frames on a dead device's port were not passed"; return 1; }
	no_stray_frames
}

# Processes on one interface share its flows map: 4 create and connect QPs at
# once till the QPNs run out, and each QPN goes to one of them; after one is
# killed holding its QPs and the others close theirs, one process alone takes
# every QPN again (rdma_test.c, qpn_check()).
t_qpns_at_once() {
	a "$RT" qpns "$IF_A" "$IP_A" 4
}

setup_q2() { PAIR_QUEUES=2 setup_pair "$@"; }
setup_q4() { PAIR_QUEUES=4 setup_pair "$@"; }
setup_q8() { PAIR_QUEUES=8 setup_pair "$@"; }

require_root queues
[ -x "$RT" ] || { echo "FAIL: queues: $RT is not built"; exit 1; }
TEST_SETUP=setup_q4 run_test "4 processes per end, WRITE/READ/SEND at once, verified" t_four_processes
TEST_SETUP=setup_q8 run_test "8 processes per end, WRITE/READ/SEND at once, verified" t_eight_processes
TEST_SETUP=setup_q2 run_test "2 processes per end under 1% loss and reordering" t_two_processes_loss
TEST_SETUP=setup_q2 run_test "without --queue: the next free queue, then a clear error" t_default_next_free_queue
TEST_SETUP=setup_q4 run_test "one process killed mid-transfer: the others unaffected, its queue reused" t_one_killed
TEST_SETUP=setup_q2 run_test "a frame on another process's queue: dropped, counted, never delivered" t_other_queue_isolated
TEST_SETUP=setup_q4 run_test "4 processes take QPNs at once: each once; a dead one's taken over" t_qpns_at_once
TEST_SETUP=setup_q2 run_test "a crashed process's entries: a reused pid blocks nothing, its port is free" t_stale_entries
summary queues
