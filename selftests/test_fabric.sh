#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Root selftests on the emulated fabric (selftests/fabric, docs/fabric.md):
# 4 hosts, 4 ECMP paths, a fresh fabric per test. Every operation under
# mixed path delays, loss and duplication; a path failing mid-WRITE; incast;
# a slow path, sprayed vs single-path; kernel TCP through the same chaos.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fabric/lib.sh"

RT=$BUILD/selftests/rdma_test
FAB=t$$
HOSTS=4
PATHS=4
SIZES=0,1,4095,4096,4097,1048576,16777216
trap 'fabric_destroy "$FAB"; cleanup_all' EXIT

h() { fab_host "$FAB" "$@"; }
f() { fab "$FAB" "$@"; }

# The four paths' delays: packets of one message arrive heavily reordered.
mixed_delays() {
	f path 0 delay=10 >/dev/null && f path 1 delay=20 >/dev/null &&
	f path 2 delay=50 >/dev/null && f path 3 delay=100 >/dev/null
}

# path_stat PATH NAME: one per-path counter.
path_stat() {
	f stats json | python3 -c "import json,sys; print(json.load(sys.stdin)['paths'][$1]['$2'])"
}
total_stat() {
	f stats json | python3 -c "import json,sys; print(sum(p['$1'] for p in json.load(sys.stdin)['paths']))"
}

# fab_rdma SERVER CLIENT "server args" "client args": one verified exchange.
fab_rdma() {
	local s=$1 c=$2 log=$TMP/srv.log spid rc src
	rm -f "$log"
	bg h "$s" "$RT" server --dev eth0 --addr "$(fab_ip "$s")" $3 >"$log" 2>&1
	spid=$!
	wait_for "$log" listening 30 || { cat "$log"; return 1; }
	h "$c" "$RT" client --dev eth0 --addr "$(fab_ip "$s")" $4
	rc=$?
	wait "$spid"
	src=$?
	sed 's/^/    /' "$log"
	[ $rc -eq 0 ] && [ $src -eq 0 ]
}

t_ops_mixed_delays() {
	mixed_delays || return 1
	h 0 ping -c 3 -i 0.2 -W 2 "$(fab_ip 3)" >/dev/null || { echo "ping across the fabric failed"; return 1; }
	fab_rdma 1 0 "" "--sizes $SIZES --paths 8" || return 1
	f stats
	local ooo
	ooo=$(sed -n 's/.*server: .*out of order \([0-9]*\),.*/\1/p' "$TMP/srv.log")
	echo "server saw $ooo packets out of order"
	[ "${ooo:-0}" -gt 0 ] || { echo "no reordering: the delays did not act"; return 1; }
}

# ops_impaired SETTING COUNTER WHAT SERVER CLIENT: every operation verified on
# mixed delays plus SETTING on all paths, which must have acted (COUNTER > 0).
ops_impaired() {
	mixed_delays && f path all "$1" >/dev/null || return 1
	fab_rdma "$4" "$5" "" "--sizes $SIZES --paths 8" || return 1
	f stats
	local n
	n=$(total_stat "$2")
	echo "the fabric $3 $n packets"
	[ "$n" -gt 0 ] || { echo "the fabric $3 nothing: the setting did not act"; return 1; }
}
t_ops_loss_1pct() { ops_impaired loss=1% drop_loss dropped 1 0; }
t_ops_duplication() { ops_impaired dup=2% duplicated duplicated 2 3; }

# Kernel TCP through the same delays, loss and duplication, checked by SHA-256.
t_tcp_same_fabric() {
	mixed_delays && f path all loss=1% dup=1% >/dev/null || return 1
	h 0 ping -c 3 -i 0.2 -W 2 "$(fab_ip 1)" >/dev/null || { echo "ping failed"; return 1; }
	rm -f "$TMP/tcp.log"
	bg h 1 python3 "$ROOT/selftests/fabric/tcp_bulk.py" server "$(fab_ip 1)" 5201 >"$TMP/tcp.log" 2>&1
	local spid=$!
	wait_for "$TMP/tcp.log" listening 10 || return 1
	h 0 python3 "$ROOT/selftests/fabric/tcp_bulk.py" client "$(fab_ip 1)" 5201 33554432 || return 1
	wait "$spid" || { cat "$TMP/tcp.log"; return 1; }
	cat "$TMP/tcp.log"
	f stats
}

# The path that forwarded the most so far.
# The path that forwarded the most packets so far, from the text stats: no
# interpreter to start while the transfer it is aimed at runs.
busiest_path() {
	f stats | awk '$1 ~ /^[0-9]+$/ && $2 == "up" && $3 + 0 >= best { best = $3 + 0; p = $1 }
		       END { print p }'
}

# 384 MiB WRITE; after 0.5 s the busiest path goes down. Data must be intact
# and goodput back to 80% of its level within 50 ms.
t_path_down_mid_write() {
	local s=402653184 clog=$TMP/client.log out t_down path cpid spid
	rm -f "$TMP/srv.log" "$TMP/go"
	bg h 1 "$RT" server --dev eth0 --addr "$(fab_ip 1)" --region 420000000 --timeline "$TMP/srv_timeline" \
		>"$TMP/srv.log" 2>&1
	spid=$!
	wait_for "$TMP/srv.log" listening 30 || return 1
	bg h 0 "$RT" client --dev eth0 --addr "$(fab_ip 1)" --paths 8 --window 896 --stream $s --region 420000000 \
		--go-file "$TMP/go" --timeline "$TMP/timeline" >"$clog" 2>&1
	cpid=$!
	wait_for "$clog" "streaming, ready" 30 || { cat "$clog"; return 1; }
	touch "$TMP/go"
	sleep 0.5
	path=$(busiest_path)
	out=$(f path "$path" down) || return 1
	t_down=$(echo "$out" | sed -n 's/^ok t_ns=\([0-9]*\)/\1/p')
	echo "path $path down at t_ns=$t_down"
	wait "$cpid"
	local rc=$?
	wait "$spid"
	cat "$clog"
	f stats
	[ $rc -eq 0 ] || return 1
	grep -q "stream verified" "$clog" || return 1
	[ "$(path_stat "$path" drop_down)" -gt 0 ] || { echo "the failed path dropped nothing: the failure missed the transfer"; return 1; }
	python3 "$ROOT/selftests/fabric/recovery.py" "$TMP/timeline" "$t_down" 50 "$TMP/srv_timeline" ||
		{ cat "$TMP/srv.log"; return 1; }
}

# Planes: hosts 0 and 1 on two planes (eth0 on this fabric, eth1 on a second
# switch), each plane one path (TEST_PATHS=1) limited to 1 Gbit/s. One path
# per plane, not four of 250 Mbit/s: the QP sprays its slots equally, so over
# four ECMP paths a plane carries 4 x the share of its most loaded path, and
# which paths the slots hash onto is drawn afresh when they move (the
# failure, the return). The level before the failure and the one after the
# return were then two independent draws, 0.6 to 1.8 Gbit/s on the same
# fabric: the check compared ECMP luck, not the plane's return. With one
# path a plane's capacity is its link's, before and after. Plane 1 fails in the
# middle of a WRITE and comes back 600 ms later: throughput >= 1/2 of the
# clean figure within 50 ms of the failure (the path-down test's bound;
# issue 13's 5 ms is judged by make bench-planes on a quiet machine: here a
# quiet run recovers in the first 5 ms window, and one fresh-machine run
# took 40 ms), the full figure (90%) within 1 s of the return, the stream
# intact, and no timeout in the application.
t_plane_down() {
	local s=402653184 clog=$TMP/client.log out t_down t_up cpid spid line
	fabric_add_plane "$FAB" 1 1 || return 1
	f path all rate=1000m >/dev/null && fab_plane "$FAB" 1 path all rate=1000m >/dev/null || return 1
	rm -f "$TMP/srv.log" "$TMP/go"
	bg h 1 "$RT" server --dev eth0 --plane eth1 --addr "$(fab_ip 1)" --region 420000000 \
		--timeline "$TMP/srv_timeline" >"$TMP/srv.log" 2>&1
	spid=$!
	wait_for "$TMP/srv.log" listening 30 || { cat "$TMP/srv.log"; return 1; }
	bg h 0 "$RT" client --dev eth0 --plane eth1 --addr "$(fab_ip 1)" --paths 8 --stream $s \
		--region 420000000 --go-file "$TMP/go" --timeline "$TMP/timeline" >"$clog" 2>&1
	cpid=$!
	wait_for "$clog" "streaming, ready" 30 || { cat "$clog"; return 1; }
	touch "$TMP/go"
	sleep 0.4
	out=$(fab_plane "$FAB" 1 path all down) || return 1
	t_down=$(echo "$out" | sed -n 's/^ok t_ns=\([0-9]*\)/\1/p' | head -n 1)
	sleep 0.6
	out=$(fab_plane "$FAB" 1 path all up) || return 1
	t_up=$(echo "$out" | sed -n 's/^ok t_ns=\([0-9]*\)/\1/p' | head -n 1)
	echo "plane 1 down at t_ns=$t_down, up at t_ns=$t_up"
	wait "$cpid"
	local rc=$?
	wait "$spid"
	cat "$clog"
	# FABRIC_KEEP=DIR keeps both ends' timelines, the client's log and the two times, to read a run later.
	if [ -n "${FABRIC_KEEP:-}" ]; then
		mkdir -p "$FABRIC_KEEP" && cp "$TMP/timeline" "$TMP/srv_timeline" "$clog" "$FABRIC_KEEP/" &&
			echo "$t_down $t_up" >"$FABRIC_KEEP/events"
	fi
	[ $rc -eq 0 ] || return 1
	grep -q "stream verified" "$clog" || return 1
	line=$(grep -o "planes down [0-9]* rejoined [0-9]*" "$clog" | head -n 1)
	set -- $line
	# plane 1 joins once at the start (it is proven by a probe first), once after the failure
	[ "${3:-0}" -ge 1 ] && [ "${5:-0}" -ge 2 ] ||
		{ echo "expected plane 1 down once and rejoined twice: '$line'"; return 1; }
	python3 "$ROOT/selftests/fabric/recovery.py" "$TMP/timeline" "$t_down" 50 "$TMP/srv_timeline" \
		--fraction 0.5 || return 1
	python3 "$ROOT/selftests/fabric/recovery.py" "$TMP/timeline" "$t_up" 1000 "$TMP/srv_timeline" \
		--fraction 0.9 --ref-ns "$t_down" || return 1
}

# Incast: hosts 1-3 WRITE to host 0 at once, all through one 500 Mbit/s path
# with ECN marking; DCTCP-like control on. Aggregate >= 80% of the
# bottleneck, Jain's index >= 0.9, every transfer complete and intact.
t_incast() {
	local s=33554432 i logs=() pids=() spid
	f pin 0 0 >/dev/null && f path 0 rate=500m buffer=1m ecn=128k >/dev/null || return 1
	rm -f "$TMP/srv.log" "$TMP/go"
	bg h 0 "$RT" server --dev eth0 --addr "$(fab_ip 0)" --qps 3 --region $((3 * s + 4096)) >"$TMP/srv.log" 2>&1
	spid=$!
	wait_for "$TMP/srv.log" listening 30 || return 1
	for i in 1 2 3; do
		logs+=("$TMP/client$i.log")
		bg h "$i" "$RT" client --dev eth0 --addr "$(fab_ip 0)" --paths 4 --cc ecn --stream $s \
			--roff $(((i - 1) * s)) --region $s --go-file "$TMP/go" >"$TMP/client$i.log" 2>&1
		pids+=($!)
		# One at a time: the server pairs each client's two QPs in order.
		wait_for "$TMP/client$i.log" "streaming, ready" 30 || { cat "$TMP/client$i.log"; return 1; }
	done
	touch "$TMP/go"
	local rc=0
	for i in 0 1 2; do wait "${pids[$i]}" || rc=1; done
	wait "$spid" || rc=1
	cat "${logs[@]}"
	f stats
	[ $rc -eq 0 ] || return 1
	cat "${logs[@]}" | python3 -c "
import re, sys
runs = [tuple(map(int, m)) for m in re.findall(r'stream qp \d+: (\d+) bytes start_ns (\d+) end_ns (\d+)', sys.stdin.read())]
assert len(runs) == 3, runs
rates = [b * 8 / (e - s) for b, s, e in runs]
agg = sum(b for b, _, _ in runs) * 8 / (max(e for _, _, e in runs) - min(s for _, s, _ in runs))
jain = sum(rates) ** 2 / (len(rates) * sum(r * r for r in rates))
print('incast: senders ' + ', '.join(f'{r:.3f}' for r in rates) + f' Gbit/s; aggregate {agg:.3f} Gbit/s '
      f'= {agg / 0.5:.0%} of the 0.5 Gbit/s bottleneck (>= 80%); Jain index {jain:.3f} (>= 0.9)')
sys.exit(0 if agg >= 0.8 * 0.5 and jain >= 0.9 else 1)"
}

# A marking path (wire v2's path states): path 2 serialises at 1 Gbit/s and
# marks ECN above 16 KiB, the others are unlimited; a QP sprays 64 MiB over 4
# slots, the first of them starting on path 2, library defaults otherwise.
# Marks make a slot SKIP new packets for its RTT, and the scoreboard moves a
# slot whose marks go on: what a user relies on is the outcome, path 2
# carrying well under its even share (1/4) of the data, and the data intact.
# Which mechanism took the slot off path 2 depends on timing (a slot moved
# before its first skip has nothing left to skip; with congestion control
# on, slow start may keep path 2's queue under the marking threshold and
# the scoreboard move the slot for its delay before any mark), so the
# marks, skips and retirements are printed, not judged.
t_marked_path() {
	local s=67108864 clog=$TMP/client.log spid port
	f path 2 rate=1g buffer=1m ecn=16k >/dev/null || return 1
	# Slot 0 starts on path 2 (its source port hashes there); the others go where they hash.
	for ((port = 49152; port < 50000; port++)); do
		[ "$(f hash "$(fab_ip 0)" "$(fab_ip 1)" udp $port 4792)" = "path 2" ] && break
	done
	[ $port -lt 50000 ] || { echo "no source port hashing onto path 2"; return 1; }
	rm -f "$TMP/srv.log"
	bg h 1 "$RT" server --dev eth0 --addr "$(fab_ip 1)" --region $((s + 4096)) >"$TMP/srv.log" 2>&1
	spid=$!
	wait_for "$TMP/srv.log" listening 30 || { cat "$TMP/srv.log"; return 1; }
	h 0 "$RT" client --dev eth0 --addr "$(fab_ip 1)" --paths 4 --sports $port --stream $s --region $s \
		>"$clog" 2>&1 ||
		{ cat "$clog"; return 1; }
	wait "$spid" || { cat "$TMP/srv.log"; return 1; }
	cat "$clog"
	f stats
	grep -q "stream verified" "$clog" || return 1
	f stats json | python3 -c "
import json, re, sys
paths = json.load(sys.stdin)['paths']
log = open('$clog').read()
skipped = int(re.search(r'skipped (\d+)', log).group(1))
retired = int(re.search(r'paths retired (\d+)', log).group(1))
data = sum(p['fwd_bytes'] for p in paths)
share = paths[2]['fwd_bytes'] / data
marked = paths[2]['ecn_marked']
print(f'marking path: path 2 carried {share:.1%} of the bytes (an even share is 25%; < 12.5% wanted), '
      f'{marked} packets marked; the client skipped a marked slot {skipped} times, retired {retired} slots')
sys.exit(0 if share < 0.125 else 1)"
}

# A 64 KiB queue at 1 Gbit/s, congestion control as users get it: every
# path serialises at 1 Gbit/s behind a 64 KiB tail-drop buffer, first with
# no ECN marking, then marking above 16 KiB; one QP on one path WRITEs
# 32 MiB with the library's defaults, then the same with --cc none. With the
# defaults fewer than 5% of the packets are resent (the loss and ECN
# responses of the default congestion control), and the data is intact
# both ways; without CC the queue overflows (printed, not judged).
t_queue64k() {
	local s=33554432 mode cc i
	for mode in taildrop ecn; do
		for ((i = 0; i < PATHS; i++)); do
			if [ $mode = ecn ]; then
				f path $i rate=1g buffer=64k ecn=16k >/dev/null || return 1
			else
				f path $i rate=1g buffer=64k >/dev/null || return 1
			fi
		done
		for cc in default none; do
			local drops0
			drops0=$(f stats json | python3 -c "import json, sys; print(sum(p['drop_buffer'] for p in json.load(sys.stdin)['paths']))")
			rm -f "$TMP/srv.log"
			bg h 1 "$RT" server --dev eth0 --addr "$(fab_ip 1)" --region $((s + 4096)) >"$TMP/srv.log" 2>&1
			local spid=$!
			wait_for "$TMP/srv.log" listening 30 || { cat "$TMP/srv.log"; return 1; }
			h 0 "$RT" client --dev eth0 --addr "$(fab_ip 1)" --paths 1 --stream $s --region $s --cc $cc \
				>"$TMP/$mode-$cc.log" 2>&1 || { cat "$TMP/$mode-$cc.log"; return 1; }
			wait "$spid" || { cat "$TMP/srv.log"; return 1; }
			grep -q "stream verified" "$TMP/$mode-$cc.log" || { cat "$TMP/$mode-$cc.log"; return 1; }
			f stats json | python3 -c "import json, sys
print('tail-dropped', sum(p['drop_buffer'] for p in json.load(sys.stdin)['paths']) - $drops0)" >>"$TMP/$mode-$cc.log"
		done
	done
	cat "$TMP"/taildrop-*.log "$TMP"/ecn-*.log | python3 -c "
import re, sys
runs = re.findall(r'([0-9.]+) Gbit/s; sent (\d+) resent (\d+).*?window cuts (\d+).*?timeouts (\d+).*?tail-dropped (\d+)',
                  sys.stdin.read(), re.S)
assert len(runs) == 4, runs
ok = True
for name, (gbps, sent, resent, cuts, rtos, drops) in zip(('tail drop, defaults', 'tail drop, --cc none',
                                             'ECN above 16 KiB, defaults', 'ECN above 16 KiB, --cc none'), runs):
    sent, resent = int(sent), int(resent)
    print(f'queue 64k: {name}: {gbps} Gbit/s, resent {resent} of {sent} ({100 * resent / sent:.2f}%), '
          f'{cuts} window cuts, {rtos} timeouts, {drops} tail-dropped by the fabric' +
          (' (< 5% wanted)' if 'defaults' in name else ''))
    if 'defaults' in name and resent * 20 >= sent:
        ok = False
sys.exit(0 if ok else 1)"
}

# Incast 8 to 1 (wire v2's receiver rate grants): hosts 1-8 WRITE 8 MiB each
# to host 0 at once, through one 1 Gbit/s path with a 1 MiB buffer marking
# ECN above 128 KiB, with library defaults (no sender congestion control:
# the receiver's grants alone). Measured from 1 ms after the first start
# (the timelines' resolution; 2 RTTs are less) to the first finish: the
# aggregate rate, Jain's index over the senders' rates, the slowest sender's
# share. Every transfer complete and intact.
#
# What nine processes and an emulator on this VM's 2 cores can carry moves
# with the machine's speed and load (90-92% of the link on a good day, 58-68%
# on a slow one, grants or none), so the aggregate is judged against the same
# incast without grants, run right after on the same fabric (the first
# incast of a fabric, a warm-up, is not counted): with grants it keeps at
# least 3/4 of that (two runs in a row differ by up to 20% here) and half
# the link; Jain >= 0.9 and none starved (each >= half its fair share).
# Whether the grants measure the link rather than the receiver's bursts is
# checked exactly, in virtual time, by tests/test_grant.c. Issue 13's targets (90%, 0.95) are judged by
# make bench-incast on a quiet machine.
INCAST_N=8
# One incast; server options $1 (none: grants on), its figures in $2.
incast8_once() {
	local opts=$1 out=$2 s=8388608 i logs=() tls=() pids=() spid
	rm -f "$TMP/srv.log" "$TMP/go" "$TMP"/client*.log "$TMP"/tl*
	bg h 0 "$RT" server --dev eth0 --addr "$(fab_ip 0)" --qps $INCAST_N --region $((INCAST_N * s + 4096)) \
		$opts >"$TMP/srv.log" 2>&1
	spid=$!
	wait_for "$TMP/srv.log" listening 30 || return 1
	for i in $(seq 1 $INCAST_N); do
		logs+=("$TMP/client$i.log")
		tls+=("$TMP/tl$i")
		bg h "$i" "$RT" client --dev eth0 --addr "$(fab_ip 0)" --stream $s --roff $(((i - 1) * s)) \
			--region $s --go-file "$TMP/go" --timeline "$TMP/tl$i" >"$TMP/client$i.log" 2>&1
		pids+=($!)
		# One at a time: the server pairs each client's two QPs in order.
		wait_for "$TMP/client$i.log" "streaming, ready" 30 || { cat "$TMP/client$i.log"; return 1; }
	done
	touch "$TMP/go"
	local rc=0
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	wait "$spid" || rc=1
	cat "${logs[@]}"
	[ $rc -eq 0 ] || return 1
	python3 - "$out" "${tls[@]}" "${logs[@]}" <<'PY'
import re, sys
out = sys.argv[1]
n = len(sys.argv[2:]) // 2
tls, logs = sys.argv[2:2 + n], sys.argv[2 + n:]
runs = []
for l in logs:
    m = re.findall(r'stream qp \d+: (\d+) bytes start_ns (\d+) end_ns (\d+)', open(l).read())
    assert len(m) == 1, (l, m)
    runs.append(tuple(map(int, m[0])))
rates = [b * 8 / (e - s) for b, s, e in runs]
t0 = min(s for _, s, _ in runs) + 1e6
t1 = min(e for _, _, e in runs)
def acked_at(path, t):
    prev = (0, 0)
    for line in open(path):
        f = line.split()
        if not f:
            continue
        cur = (int(f[0]), int(f[1]))
        if cur[0] >= t:
            if cur[0] == prev[0] or prev == (0, 0):
                return cur[1] if prev == (0, 0) else prev[1]
            return prev[1] + (cur[1] - prev[1]) * (t - prev[0]) / (cur[0] - prev[0])
        prev = cur
    return prev[1]
agg = sum(acked_at(p, t1) - acked_at(p, t0) for p in tls) * 8 / (t1 - t0)
jain = sum(rates) ** 2 / (n * sum(r * r for r in rates))
slowest = min(rates) * n
with open(out, 'w') as f:
    f.write(f'{agg} {jain} {slowest} ' + ','.join(f'{r:.3f}' for r in rates) + '\n')
PY
}

t_incast8() {
	f pin 0 0 >/dev/null && f path 0 rate=1g buffer=1m ecn=128k >/dev/null || return 1
	incast8_once --no-grants "$TMP/warm" >/dev/null || return 1
	incast8_once "" "$TMP/grants" || return 1
	incast8_once --no-grants "$TMP/none" >/dev/null || return 1
	f stats
	python3 - "$TMP/grants" "$TMP/none" <<'PY'
import sys
g, o = (open(p).read().split() for p in sys.argv[1:3])
agg, jain, slowest, rates = float(g[0]), float(g[1]), float(g[2]), g[3]
none, none_jain = float(o[0]), float(o[1])
ok = agg >= 0.75 * none and agg >= 0.5 and jain >= 0.9 and slowest >= 0.5
print(f'incast 8 to 1: senders {rates.replace(",", ", ")} Gbit/s; aggregate {agg:.3f} Gbit/s = {agg:.0%} '
      f'of the 1 Gbit/s bottleneck from 1 ms on, {agg / none:.2f}x the same incast without grants '
      f'({none:.0%}, Jain {none_jain:.3f}) (>= 0.75x, and >= 50%); Jain index {jain:.3f} (>= 0.9); '
      f'slowest {slowest:.2f} of its fair share (>= 0.5): ' + ('met' if ok else 'missed'))
sys.exit(0 if ok else 1)
PY
}

# Four flows from host 0 to host 1 whose source ports all hash onto path 2,
# which runs at 100 Mbit/s: as single-path ECMP flows with fixed ports (as in
# RoCEv2), and sprayed with the path scoreboard. The sprayed set must finish
# first.
t_slow_path() {
	local sports=() port run
	f path 2 rate=100m >/dev/null || return 1
	for ((port = 49152; ${#sports[@]} < 4 && port < 50000; port++)); do
		[ "$(f hash "$(fab_ip 0)" "$(fab_ip 1)" udp $port 4792)" = "path 2" ] && sports+=($port)
	done
	[ ${#sports[@]} -eq 4 ] || { echo "no colliding source ports found"; return 1; }
	local list
	list=$(IFS=,; echo "${sports[*]}")
	echo "source ports $list all hash onto path 2 (100 Mbit/s; the others unlimited)"
	for run in single spray; do
		local paths=1 extra="--static-paths"	# single-path ECMP as RoCEv2 does it: fixed
		[ $run = spray ] && paths=8 && extra="--linger-ms 1500"
		rm -f "$TMP/srv.log" "$TMP/$run.log"
		bg h 1 "$RT" server --dev eth0 --addr "$(fab_ip 1)" --qps 4 --region 33558528 >"$TMP/srv.log" 2>&1
		local spid=$!
		wait_for "$TMP/srv.log" listening 30 || return 1
		bg h 0 "$RT" client --dev eth0 --addr "$(fab_ip 1)" --qps 4 --paths $paths --sports "$list" \
			--stream 8388608 --region 33554432 $extra >"$TMP/$run.log" 2>&1
		local cpid=$!
		if [ $run = spray ]; then
			# While the QPs live, the CLI shows what the library published.
			wait_for "$TMP/$run.log" lingering 60 || { cat "$TMP/$run.log"; return 1; }
			h 0 "$MROCE" flows eth0
			h 0 "$MROCE" status eth0 | sed -n '/^transport/,$p'
			h 0 "$MROCE" status eth0 --json >"$TMP/status.json"
		fi
		wait "$cpid" || { cat "$TMP/$run.log"; return 1; }
		wait "$spid" || { cat "$TMP/srv.log"; return 1; }
		cat "$TMP/$run.log"
	done
	f stats
	python3 - "$TMP/single.log" "$TMP/spray.log" "$TMP/status.json" <<'PY'
import json, re, sys
def span(path):
    runs = [tuple(map(int, m)) for m in re.findall(r'start_ns (\d+) end_ns (\d+)', open(path).read())]
    assert len(runs) == 4, runs
    return (max(e for _, e in runs) - min(s for s, _ in runs)) / 1e6
single, spray = span(sys.argv[1]), span(sys.argv[2])
t = json.load(open(sys.argv[3]))['transport']
print(f"slow path: 4 x 8 MiB completed in {single:.1f} ms single-path ECMP vs {spray:.1f} ms sprayed "
      f"({single / spray:.1f}x faster); mroce status: paths_retired {t['paths_retired']}, tx_pkts {t['tx_pkts']}")
sys.exit(0 if spray < single and t['paths_retired'] > 0 and t['tx_pkts'] > 0 else 1)
PY
}

# 64 ordered streams on one QP (wire v2's streams), the paths delayed
# 10/20/50/100 us: in rounds, every stream served, then stream 32's receiver
# posts nothing. The stalled stream must cost the others < 20% of their
# goodput (median of 5 rounds, measured in this one run, interleaved): a
# stream blocking the others costs them all of it, and 20% stays clear of
# what a loaded machine's noise does to one round (0.85x to 1.23x seen).
# Issue 13's target, < 5%, is judged by make bench-streams on a quiet
# machine. Every SEND completes once the stream is served again, and the
# server finds every message it checks intact (every 8th of each stream).
t_streams64() {
	local clog=$TMP/client.log spid
	mixed_delays || return 1
	rm -f "$TMP/srv.log"
	bg h 1 "$RT" server --dev eth0 --addr "$(fab_ip 1)" --streams 64 --region $((64 * 4 * 65536)) \
		>"$TMP/srv.log" 2>&1
	spid=$!
	wait_for "$TMP/srv.log" listening 30 || return 1
	h 0 "$RT" client --dev eth0 --addr "$(fab_ip 1)" --paths 4 --streams 64 --stall 32 --rounds 5 \
		--phase-ms 400 --region $((64 * 65536)) >"$clog" 2>&1 || { cat "$clog"; return 1; }
	wait "$spid" || { cat "$TMP/srv.log"; return 1; }
	cat "$clog" "$TMP/srv.log"
	grep -q "server: streams: [1-9][0-9]* messages checked by content, 0 bad" "$TMP/srv.log" || return 1
	python3 - "$clog" <<'PY'
import re, sys
m = re.search(r'costs the others (-?[0-9.]+)%', open(sys.argv[1]).read())
cost = float(m.group(1))
print(f'streams: a stalled stream of 64 costs the others {cost:.1f}% of their goodput (< 20% wanted)')
sys.exit(0 if cost < 20 else 1)
PY
}

# Multi-queue host links (TEST_QUEUES=4, TEST_STEER_BASE=4792, 2 hosts): the
# switch sends each frame on the host receive queue a NIC would pick.
XSK_RAW=$BUILD/selftests/xsk_raw

# queue_counts PORT tx|rx: the port's per-queue counters, space-separated.
queue_counts() {
	f stats json | python3 -c "import json,sys; print(*json.load(sys.stdin)['ports'][$1]['$2_queue'])"
}

# udp_burst DPORT SPORT0 N: one datagram from each of host 0's UDP ports SPORT0..+N-1 to host 1.
udp_burst() {
	h 0 python3 -c "
import socket, sys
dport, s0, n = map(int, sys.argv[1:4])
for sp in range(s0, s0 + n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('$(fab_ip 0)', sp))
    s.sendto(b'q', ('$(fab_ip 1)', dport))
    s.close()" "$@"
}

# spread_of DPORT SPORT0 N: send the burst; print host 1's queues' frame counts
# from the switch, and (second line) where the switch says each flow goes.
spread_of() {
	local before after
	before=$(queue_counts 1 tx)
	udp_burst "$@" || return 1
	sleep 0.2
	after=$(queue_counts 1 tx)
	python3 -c "import sys; b, a = (list(map(int, x.split())) for x in sys.argv[1:3]); print(*(y - x for x, y in zip(b, a)))" \
		"$before" "$after"
	local q want=(0 0 0 0) sp
	for ((sp = $2; sp < $2 + $3; sp++)); do
		q=$(f rxq 1 "$(fab_ip 0)" "$(fab_ip 1)" udp "$sp" "$1" | awk '{print $2}')
		want[q]=$((want[q] + 1))
	done
	echo "${want[@]}"
}

# check_spread "GOT" "WANT" WHAT: per queue, what arrived is what the switch
# predicted (queue 0 may also carry a stray ARP or neighbour frame or two).
check_spread() {
	python3 - "$1" "$2" "$3" <<'PY'
import sys
got, want = (list(map(int, x.split())) for x in sys.argv[1:3])
print(f'queues: {sys.argv[3]}: per host queue {got} (predicted {want})')
ok = got[0] - want[0] in range(0, 4) and got[1:] == want[1:]
sys.exit(0 if ok else 1)
PY
}

t_rss_queues() {
	local out got want
	h 0 ping -c 2 -i 0.2 -W 2 "$(fab_ip 1)" >/dev/null || { echo "ping failed"; return 1; }
	f show
	# RSS: 256 flows (source ports) to one UDP port, spread over all four queues.
	out=$(spread_of 5000 40000 256) || return 1
	got=$(echo "$out" | sed -n 1p) want=$(echo "$out" | sed -n 2p)
	check_spread "$got" "$want" "RSS, 256 source ports to UDP port 5000" || return 1
	python3 -c "import sys; g = list(map(int, sys.argv[1].split())); sys.exit(0 if min(g) >= 256 // 4 // 2 else 1)" "$got" ||
		{ echo "RSS did not spread the flows over all 4 queues"; return 1; }
	# --steer-base 4792: UDP port 4792+q to queue q alone, whatever the source port.
	local q
	for q in 0 1 2 3; do
		out=$(spread_of $((4792 + q)) 41000 32) || return 1
		got=$(echo "$out" | sed -n 1p)
		check_spread "$got" "$(python3 -c "print(*[32 if i == $q else 0 for i in range(4)])")" \
			"steer base: 32 flows to UDP port $((4792 + q))" || return 1
	done
	# A rule moves a port to one queue, then to a range of two, then goes.
	f steer 1 5000 3 >/dev/null || return 1
	got=$(spread_of 5000 42000 64 | sed -n 1p)
	check_spread "$got" "0 0 0 64" "steer 1 5000 3" || return 1
	f steer 1 5000 1 2 >/dev/null || return 1
	out=$(spread_of 5000 43000 64) || return 1
	got=$(echo "$out" | sed -n 1p) want=$(echo "$out" | sed -n 2p)
	check_spread "$got" "$want" "steer 1 5000 1 2" || return 1
	set -- $got
	[ "$1" -le 3 ] && [ "$2" -gt 0 ] && [ "$3" -gt 0 ] && [ "$4" -eq 0 ] ||
		{ echo "steer 1 5000 1 2: not queues 1 and 2 alone"; return 1; }
	f steer 1 clear >/dev/null || return 1
	out=$(spread_of 4792 44000 256) || return 1
	got=$(echo "$out" | sed -n 1p) want=$(echo "$out" | sed -n 2p)
	check_spread "$got" "$want" "steer 1 clear: RSS for UDP port 4792 again" || return 1
	python3 -c "import sys; g = list(map(int, sys.argv[1].split())); sys.exit(0 if min(g) >= 32 else 1)" "$got" ||
		{ echo "after clear, RSS did not spread the flows over all 4 queues"; return 1; }
	f stats
}

# xsk_rx_tx RXHOST RXQ TXHOST TXQ DSTMAC DSTIP: xsk_raw on RXHOST's receive
# queue RXQ counts what xsk_raw sends from TXHOST's transmit queue TXQ (0.5 s).
xsk_rx_tx() {
	local log=$TMP/xsk_rx.log rpid
	rm -f "$log"
	bg h "$1" "$XSK_RAW" rx --dev eth0 --queue "$2" --seconds 3 --token $$ >"$log" 2>&1
	rpid=$!
	wait_for "$log" "rx: ready" 10 || { cat "$log"; return 1; }
	h "$3" "$XSK_RAW" tx --dev eth0 --queue "$4" --dst-mac "$5" --src "$(fab_ip "$3")" --dst "$6" \
		--size 256 --seconds 0.5 --token $$ || return 1
	wait "$rpid"
	local rc=$?
	cat "$log"
	return $rc
}

# The queues are real: what a host sends on its transmit queue 3 reaches the
# switch's socket of queue 3, and what the switch sends on host 1's queue 2
# arrives on host 1's receive queue 2 (an AF_XDP socket bound there alone).
t_queues_end_to_end() {
	local tx0 rx0 tx1 rx1 frames
	h 0 ping -c 2 -i 0.2 -W 2 "$(fab_ip 1)" >/dev/null || { echo "ping failed"; return 1; }
	f steer 1 9 2 >/dev/null || return 1
	rx0=$(queue_counts 0 rx) tx1=$(queue_counts 1 tx)
	xsk_rx_tx 1 2 0 3 "$(fab_mac 1)" "$(fab_ip 1)" || return 1
	rx1=$(queue_counts 0 rx) tx0=$(queue_counts 1 tx)
	frames=$(sed -n 's/^rx: \([0-9]*\) frames.*/\1/p' "$TMP/xsk_rx.log")
	python3 - "$rx0" "$rx1" "$tx1" "$tx0" "${frames:-0}" <<'PY'
import sys
rx0, rx1, tx0, tx1 = (list(map(int, x.split())) for x in sys.argv[1:5])
got = int(sys.argv[5])
rx = [b - a for a, b in zip(rx0, rx1)]
tx = [b - a for a, b in zip(tx0, tx1)]
print(f'queues: host 0 sent on its queue 3: the switch read {rx} per queue; it sent {tx} per queue to host 1, '
      f'whose receive queue 2 socket counted {got}')
ok = rx[3] >= got > 1000 and sum(rx) - rx[3] < 10 and tx[2] >= got and sum(tx) - tx[2] < 10
sys.exit(0 if ok else 1)
PY
}

# Hairpin: two processes on host 0 (an AF_XDP sender on transmit queue 1, a
# receiver on receive queue 0) talk through the switch, which sends the frames
# back out of the port they came in on.
t_hairpin() {
	f steer 0 9 0 >/dev/null || return 1
	xsk_rx_tx 0 0 0 1 "$(fab_mac 0)" "$(fab_ip 0)" || { echo "nothing came back through the switch"; return 1; }
	f stats
}

# no_stray HOST...: no frame of mroce traffic met a queue its device does not
# serve (wrong_queue) or one without a socket (no_xsk) on these hosts.
no_stray() {
	local i n v
	for i in "$@"; do
		for n in wrong_queue no_xsk; do
			v=$(h "$i" "$MROCE" status eth0 --json | sed -n "s/.*\"$n\":\([0-9]*\).*/\1/p")
			[ "$v" = 0 ] || { echo "host $i: $n counted ${v:-?} frames of mroce traffic"; return 1; }
		done
	done
	echo "queues: hosts $*: wrong_queue 0, no_xsk 0"
}

# mroce_rss ARGS: every operation, verified, between two devices that serve
# every queue of their host link (the default on a NIC; said here, as veth
# defaults to one), the switch spreading their frames by RSS, 1% loss on every
# path. Each host queue must have carried a share of the server's frames.
mroce_rss() {
	local before after nq=$TEST_QUEUES
	mixed_delays && f path all loss=1% >/dev/null || return 1
	before=$(queue_counts 1 tx)
	fab_rdma 1 0 "--queues all $*" "--queues all --sizes 0,4097,1048576,16777216 --paths 16 $*" || return 1
	after=$(queue_counts 1 tx)
	grep "queues" "$TMP/srv.log" | head -1
	no_stray 0 1 || return 1
	python3 - "$before" "$after" "$nq" <<'PY'
import sys
b, a = (list(map(int, x.split())) for x in sys.argv[1:3])
n = int(sys.argv[3])
d = [y - x for x, y in zip(b, a)][:n]
print(f'queues: {n} queues, RSS: frames to the server per host queue {d}')
sys.exit(0 if min(d) * 4 * n >= sum(d) else 1)  # each queue at least a quarter of its fair share
PY
}
t_mroce_rss2() { mroce_rss; }
t_mroce_rss4() { mroce_rss; }

# A device on queues 1..3 of 4 (the sender transmits on queue 1, its first),
# its port steered there by a rule over the three (an RSS context on a NIC):
# verified under 1% loss, nothing on queue 0.
t_mroce_steered_context() {
	local before after
	f path all loss=1% >/dev/null || return 1
	f steer 0 4793 1 3 >/dev/null && f steer 1 4793 1 3 >/dev/null || return 1
	before=$(queue_counts 1 tx)
	fab_rdma 1 0 "--queue 1 --queues 3" "--queue 1 --queues 3 --sizes 4097,1048576,16777216 --paths 16" ||
		return 1
	after=$(queue_counts 1 tx)
	grep -q "server: queues 1..3, UDP port 4793" "$TMP/srv.log" || { echo "server not on queues 1..3"; return 1; }
	no_stray 0 1 || return 1
	python3 - "$before" "$after" <<'PY'
import sys
b, a = (list(map(int, x.split())) for x in sys.argv[1:3])
d = [y - x for x, y in zip(b, a)]
print(f'queues: device on queues 1..3, rule 4793 -> 1..3: frames per host queue {d}')
sys.exit(0 if d[0] < 100 and min(d[1:]) > 1000 else 1)  # queue 0: ARP, the CM's TCP
PY
}

# A fresh fabric for every test (run_test in lib.sh); its figures always shown.
fabric_setup() {
	FAB_QUEUES=${TEST_QUEUES:-1} FAB_STEER_BASE=${TEST_STEER_BASE:-} \
		fabric_create "$FAB" "${TEST_HOSTS:-$HOSTS}" "${TEST_PATHS:-$PATHS}" 1500
}
fabric_teardown() {
	local p
	fabric_destroy "$FAB"
	for p in "${BG_PIDS[@]+"${BG_PIDS[@]}"}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	BG_PIDS=()
}
TEST_SETUP=fabric_setup
TEST_TEARDOWN=fabric_teardown
FIGURES='^(client: (qp|stream)|recovery|incast|slow path|marking path|queue 64k|tcp:|path [0-9]+ down|the fabric|server saw|source ports|streams:|server: streams|queues:|rx: [0-9])'

require_root test_fabric
[ -x "$FABRIC_BIN" ] || { echo "FAIL: test_fabric: $FABRIC_BIN is not built (run make)"; exit 1; }
if [ $# -gt 0 ]; then
	for t in "$@"; do
		[ "$t" = incast8 ] && TEST_HOSTS=$((INCAST_N + 1))
		[ "$t" = plane_down ] && TEST_PATHS=1
		case $t in rss_queues | queues_end_to_end | hairpin) TEST_HOSTS=2 TEST_QUEUES=4 TEST_STEER_BASE=4792 ;; esac
		case $t in mroce_rss2) TEST_HOSTS=2 TEST_QUEUES=2 ;; mroce_rss4 | mroce_steered_context) TEST_HOSTS=2 TEST_QUEUES=4 ;; esac
		run_test "$t" "t_$t"
		TEST_HOSTS= TEST_PATHS= TEST_QUEUES= TEST_STEER_BASE=
	done
else
	run_test "every op, paths delayed 10/20/50/100 us" t_ops_mixed_delays
	run_test "every op, 1% loss on mixed delays" t_ops_loss_1pct
	run_test "every op, 2% duplication on mixed delays" t_ops_duplication
	run_test "kernel TCP through the same fabric" t_tcp_same_fabric
	run_test "path down in the middle of a 384 MiB WRITE" t_path_down_mid_write
	TEST_PATHS=1
	run_test "plane 1 of 2 down in the middle of a 384 MiB WRITE, and back" t_plane_down
	TEST_PATHS=
	run_test "incast 3 to 1 through one 500 Mbit/s path" t_incast
	TEST_HOSTS=$((INCAST_N + 1))
	run_test "incast 8 to 1 through one 1 Gbit/s path, receiver grants" t_incast8
	TEST_HOSTS=
	run_test "slow path: spraying vs single-path ECMP" t_slow_path
	run_test "a path marking ECN: its slots skip, then move" t_marked_path
	run_test "a 64 KiB queue at 1 Gbit/s: under 5% resent with the defaults" t_queue64k
	run_test "64 streams on one QP, one stalled" t_streams64
	TEST_HOSTS=2 TEST_QUEUES=4 TEST_STEER_BASE=4792
	run_test "4 queues per host link: RSS spreads flows, steering rules move them" t_rss_queues
	run_test "4 queues: a host's transmit queue and receive queue are the switch's" t_queues_end_to_end
	run_test "hairpin: two processes of one host through the switch" t_hairpin
	TEST_STEER_BASE=
	run_test "mroce on 4 queues, RSS, 1% loss: every byte verified, no stray frame" t_mroce_rss4
	run_test "mroce on queues 1..3, a rule steering its port there, 1% loss" t_mroce_steered_context
	TEST_QUEUES=2
	run_test "mroce on 2 queues, RSS, 1% loss: every byte verified, no stray frame" t_mroce_rss2
	TEST_HOSTS= TEST_QUEUES= TEST_STEER_BASE=
fi
summary test_fabric
