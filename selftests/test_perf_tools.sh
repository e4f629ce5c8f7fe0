#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Root selftests of the benchmark tools as their users call them
# (docs/tools.md): mroce-perf with perftest's flags on a veth pair
# (ib_write_bw -d DEV -s SIZE -D SECONDS ... SERVER), its perftest columns,
# its JSON with iperf3's intervals and end, and mroce-coll-perf with
# nccl-tests' flags on a 2-rank job (out-of-place and in-place columns, the
# footers). A bad command line fails with exit 2 before anything starts.
# PERF_TOOLS_NS=PREFIX names the namespaces PREFIX-a, PREFIX-b and the
# launcher's job PREFIX (default: the shared helpers' names).
. "$(dirname "$0")/lib.sh"

PERF=$BUILD/mroce-perf
CPERF=$BUILD/mroce-coll-perf
LAUNCH=$ROOT/tools/mroce-launch
JOB=tools$$
if [ -n "${PERF_TOOLS_NS:-}" ]; then
	NS_A=$PERF_TOOLS_NS-a NS_B=$PERF_TOOLS_NS-b JOB=$PERF_TOOLS_NS
fi
export BUILD

start_server() {
	rm -f "$TMP/srv.log"
	bg b "$PERF" server -d "$IF_B" "$IP_B" >"$TMP/srv.log" 2>&1
	wait_for "$TMP/srv.log" listening 30 || { cat "$TMP/srv.log"; return 1; }
}

# client ARGS...: the client in A, its output in $TMP/cli.log (and shown).
client() {
	a timeout 120 "$PERF" client "$@" >"$TMP/cli.log" 2>&1
	local rc=$?
	sed 's/^/    client: /' "$TMP/cli.log"
	return $rc
}

t_write_bw_perftest_flags() {
	start_server || return 1
	client --test write_bw -d "$IF_A" -s 64k -D 2 -q 2 -x 0 -F -t 32 --report_gbits "$IP_B" || return 1
	grep -q '^ #bytes     #iterations    BW peak\[Gb/sec\]    BW average\[Gb/sec\]   MsgRate\[Mpps\]$' "$TMP/cli.log" ||
		{ echo "no perftest bandwidth columns in Gb/sec"; return 1; }
	grep -q 't_min\|t_typical' "$TMP/cli.log" && { echo "latency columns on a bandwidth test"; return 1; }
	grep -q '^ Number of qps  : 2 ' "$TMP/cli.log" || { echo "the header does not show -q 2"; return 1; }
	grep -q ' TX depth       : 32$' "$TMP/cli.log" || { echo "the header does not show -t 32"; return 1; }
	# the row: bytes, iterations, peak >= average > 0, message rate = average / size
	awk '$1 == 65536 && NF == 5 {
		if ($2 < 1 || $4 <= 0 || $3 < $4) exit 1
		rate = $4 * 1e9 / 8 / 65536 / 1e6
		if ($5 < rate * 0.99 || $5 > rate * 1.01) exit 1
		found = 1 }
	     END { exit !found }' "$TMP/cli.log" || { echo "no sane 65536-byte row"; return 1; }
	# the transport figures under the table (selftests/test_xsk.sh reads them)
	grep -q '^write_bw 65536 B: .* sent [0-9]* retx [0-9]* .* rto [0-9]* retired [0-9]*' "$TMP/cli.log" ||
		{ echo "no transport line"; return 1; }
	echo "figures: $(awk '$1 == 65536 && NF == 5' "$TMP/cli.log")"
}

t_write_lat_perftest_flags() {
	start_server || return 1
	client --test write_lat -d "$IF_A" -s 8 -n 2000 "$IP_B" || return 1
	grep -q '^ #bytes #iterations    t_min\[usec\]    t_max\[usec\]  t_typical\[usec\]    t_avg\[usec\]    t_stdev\[usec\]   99% percentile\[usec\]   99.9% percentile\[usec\]$' "$TMP/cli.log" ||
		{ echo "no perftest latency columns"; return 1; }
	grep -q 'BW peak' "$TMP/cli.log" && { echo "bandwidth columns on a latency test"; return 1; }
	# 2000 iterations; min <= typical <= p99 <= p99.9 <= max, min <= avg <= max
	awk '$1 == 8 && NF == 9 {
		if ($2 != 2000 || $3 <= 0 || $3 > $5 || $5 > $8 || $8 > $9 || $9 > $4 || $6 < $3 || $6 > $4) exit 1
		found = 1 }
	     END { exit !found }' "$TMP/cli.log" || { echo "no consistent 8-byte row of 2000 iterations"; return 1; }
	echo "figures: $(awk '$1 == 8 && NF == 9' "$TMP/cli.log")"
}

# -a: perftest's sweep, 2 B to 8 MiB, one row each.
t_all_sizes() {
	start_server || return 1
	client --test write_bw -d "$IF_A" -a -n 20 "$IP_B" || return 1
	local want=2 size
	for size in $(awk '$1 ~ /^[0-9]+$/ && NF == 5 { print $1 }' "$TMP/cli.log"); do
		[ "$size" = "$want" ] || { echo "row for $size, expected $want"; return 1; }
		want=$((want * 2))
	done
	[ "$want" = $((16 << 20)) ] || { echo "the sweep stopped before 8 MiB (next: $want)"; return 1; }
}

t_json_intervals() {
	start_server || return 1
	client --dev "$IF_A" --addr "$IP_B" --test write_bw --size 1m --duration 2.5 --json --paths 1 \
		--window 896 || return 1
	grep '^{' "$TMP/cli.log" | python3 -c '
import json, sys
lines = [l for l in sys.stdin]
assert len(lines) == 1, "one JSON object per size"
d = json.loads(lines[0])
for k in ("test", "size", "gbit_s", "mops", "seconds", "tx_pkts", "rto_events", "retransmitted",
          "paths_retired", "cpu_s_per_gb", "lat_us", "ops", "rss_kb"):
    assert k in d, k
iv = d["intervals"]
assert len(iv) >= 2, iv
assert all(abs(i["seconds"] - (i["end"] - i["start"])) < 1e-5 for i in iv), iv
assert all(abs(a["end"] - b["start"]) < 1e-6 for a, b in zip(iv, iv[1:])), iv
assert sum(i["bytes"] for i in iv) == d["ops"] * d["size"], "the intervals add up to the whole"
for side in ("sum_sent", "sum_received"):
    e = d["end"][side]
    assert e["bytes"] == d["ops"] * d["size"], e
    assert abs(e["bits_per_second"] / 1e9 - d["gbit_s"]) < 0.001 + d["gbit_s"] * 0.001, (e, d["gbit_s"])
print("json: %d intervals, %.3f Gbit/s, peak %.3f" % (len(iv), d["gbit_s"], d["bw_peak_gbit_s"]))'
}

# -b (perftest's bidirectional): for each bandwidth test both ends run it toward
# each other at once over the same connections; the client's JSON has each
# direction, their sum, and whether each end held the other's data. Each
# direction must carry a fair share (>= 20% of the bytes), not merely some: a
# direction starved until the other stopped still moves a few.
bidir_check() {	# ARGS...: the client's; its JSON line(s) checked
	client -d "$IF_A" -b --json "$@" "$IP_B" || return 1
	grep '^{' "$TMP/cli.log" | COUNTED=${COUNTED:-0} python3 -c '
import json, os, sys
lines = [l for l in sys.stdin]
assert lines, "no JSON"
for l in lines:
    d = json.loads(l)
    b = d["bidirectional"]
    c, s, t = b["client_to_server"], b["server_to_client"], b["total"]
    size = d["size"]
    for name, x in (("client->server", c), ("server->client", s)):
        assert x["ops"] > 0 and x["bytes"] == x["ops"] * size, (name, x)
        assert x["seconds"] > 0 and abs(x["gbit_s"] - x["bytes"] * 8 / x["seconds"] / 1e9) < 0.001 + x["gbit_s"] * 0.001, (name, x)
        assert x["bytes"] >= 0.2 * (c["bytes"] + s["bytes"]), ("a direction starved", name, c, s)
    counted = int(os.environ["COUNTED"])
    if counted:
        assert c["ops"] == counted and s["ops"] == counted, ("-n: each direction its count", c, s)
    assert t["ops"] == c["ops"] + s["ops"] and t["bytes"] == c["bytes"] + s["bytes"], (t, c, s)
    assert abs(t["gbit_s"] - (c["gbit_s"] + s["gbit_s"])) < 0.0002, (t, c, s)
    assert d["ops"] == t["ops"] and abs(d["gbit_s"] - t["gbit_s"]) < 0.0002, ("the row is the sum", d["ops"], d["gbit_s"], t)
    e = d["end"]
    assert e["sum_sent"]["bytes"] == c["bytes"] and e["sum_received_bidir_reverse"]["bytes"] == s["bytes"], e
    assert sum(i["bytes"] for i in d["intervals"]) == c["bytes"], "the intervals are the client direction"
    assert b["verified"] is True, "each end must hold the other end\u2019s data"
    print("bidir: %s %d B: client->server %.3f Gbit/s (%d), server->client %.3f Gbit/s (%d), total %.3f, verified"
          % (d["test"], size, c["gbit_s"], c["ops"], s["gbit_s"], s["ops"], t["gbit_s"]))'
}

t_bidirectional() {
	local t
	start_server || return 1
	for t in write_bw read_bw send_bw; do
		bidir_check --test "$t" -s 64k -D 2 || { echo "$t -b failed"; return 1; }
	done
	# two QPs, a count: -n 3000 split over the QPs, 3000 each way exactly; two sizes in one run
	for t in write_bw read_bw send_bw; do
		COUNTED=3000 bidir_check --test "$t" -q 2 -n 3000 -s 4k || { echo "$t -b -q 2 -n 3000 failed"; return 1; }
	done
	# the text: the header says so, the row's iterations are both directions', the line per direction
	client --test write_bw -d "$IF_A" -b -s 1m -n 200 "$IP_B" || return 1
	grep -q '^ Bidirectional  : on' "$TMP/cli.log" || { echo "no Bidirectional line in the header"; return 1; }
	awk '$1 == 1048576 && NF == 5 && $2 == 400 { found = 1 } END { exit !found }' "$TMP/cli.log" ||
		{ echo "the row should count 400 iterations (200 each way)"; return 1; }
	grep -q "^  both ways: client->server [0-9.]* Gbit/s (200 in .*server->client [0-9.]* Gbit/s (200 in .*each end held the other's data$" \
		"$TMP/cli.log" || { echo "no per-direction line"; return 1; }
}

# Bad values stop both tools before they touch the network: exit 2, the flag named.
t_bad_values() {
	local bad=0 args out rc
	while IFS='|' read -r tool flag args; do
		# shellcheck disable=SC2086
		out=$(a "$tool" $args 2>&1 >/dev/null)
		rc=$?
		if [ $rc -ne 2 ] || ! printf '%s' "$out" | grep -q -- "$flag"; then
			echo "$(basename "$tool") $args: exit $rc, '$out' (want 2 and '$flag')"
			bad=1
		fi
	done <<EOF2
$PERF|--size|client -d $IF_A --test write_bw -s 12q $IP_B
$PERF|--duration|client -d $IF_A --test write_bw -D -1 $IP_B
$PERF|--iters|client -d $IF_A --test write_bw -n 0 $IP_B
$PERF|--qps|client -d $IF_A --test write_bw -q 99999999999999999999 $IP_B
$PERF|--gid-index|client -d $IF_A --test write_bw -x abc $IP_B
$PERF|--bidirectional|client -d $IF_A --test write_lat -b $IP_B
$PERF|--bidirectional|client -d $IF_A --test send_lat --bidirectional $IP_B
$PERF|--bidirectional|client -d $IF_A --test write_bw -b -s 33m $IP_B
$PERF|--bidirectional|client -d $IF_A --test read_bw -b --sweep $IP_B
$CPERF|-w|-w abc
$CPERF|-n|-n 0
$CPERF|-g|-g 2
$CPERF|-b|-b 12q
$CPERF|-c|-c 2
EOF2
	[ $bad -eq 0 ]
}

# Every tool: -h/--help and -V/--version, alone and after a command, exit 0
# on stdout; the completion offers them. A bad command line: exit 2, one line
# naming the argument at fault, one pointer to --help.
t_help_version_usage() {
	local bad=0 tool args out rc name w
	while IFS='|' read -r tool name args; do
		# shellcheck disable=SC2086
		out=$("$tool" $args 2>/dev/null)
		rc=$?
		case $args in
		*-V* | *--version*) printf '%s\n' "$out" | head -n 1 | grep -q "^$name [0-9]" ;;
		*) [ "$(printf '%s\n' "$out" | wc -l)" -gt 3 ] ;;
		esac || { echo "$name $args: exit $rc, stdout '$(printf '%s' "$out" | head -n 2)'"; bad=1; continue; }
		[ $rc -eq 0 ] || { echo "$name $args: exit $rc"; bad=1; }
	done <<EOF2
$MROCE|mroce|-V
$MROCE|mroce|--version
$MROCE|mroce|-h
$MROCE|mroce|attach --help
$MROCE|mroce|status eth0 -V
$PERF|mroce-perf|-V
$PERF|mroce-perf|client --help
$PERF|mroce-perf|server -d x -V
$CPERF|mroce-coll-perf|-V
$CPERF|mroce-coll-perf|--help
$LAUNCH|mroce-launch|-V
$LAUNCH|mroce-launch|--version
$LAUNCH|mroce-launch|-h
$LAUNCH|mroce-launch|run --help
$LAUNCH|mroce-launch|run -n 2 -V
$LAUNCH|mroce-launch|up -h
$LAUNCH|mroce-launch|exec --help
$LAUNCH|mroce-launch|ns -V
$LAUNCH|mroce-launch|addr --help
$LAUNCH|mroce-launch|down -h
$LAUNCH|mroce-launch|list --version
EOF2
	# usage errors: exit 2, the argument at fault named, exactly one --help hint
	while IFS='|' read -r tool want args; do
		# shellcheck disable=SC2086
		out=$(env -u RANK -u WORLD_SIZE -u MASTER_ADDR "$tool" $args 2>&1 >/dev/null)
		rc=$?
		if [ $rc -ne 2 ] || ! printf '%s' "$out" | grep -qF -- "$want" ||
		   [ "$(printf '%s' "$out" | grep -o -- '--help' | wc -l)" -ne 1 ] ||
		   [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then
			echo "$(basename "$tool") $args: exit $rc, '$out' (want 2, '$want' and one --help hint)"
			bad=1
		fi
	done <<EOF2
$PERF|server or client?|
$PERF|unknown option '-z'|client -d lo -zz X
$PERF|unknown option '--bogus'|client -d lo --bogus=3 X
$PERF|--port needs a value|client -d lo X --port
$CPERF|unknown option '-q'|-d float -qq X
$MROCE|unknown option '-x'|attach -x lo
$MROCE|no command given|
$MROCE|unknown command 'frob'|frob eth0
EOF2
	# nccl-tests' names for collectives mroce does not have: refused, not all-reduce
	for name in reduce_perf gather_perf sendrecv_perf hypercube_perf scatter_perf; do
		ln -sf "$CPERF" "$TMP/$name"
		out=$("$TMP/$name" -b 8 -e 8 2>&1 >/dev/null)
		rc=$?
		if [ $rc -ne 2 ] || ! printf '%s' "$out" | grep -q "'$name' is a collective mroce-coll-perf does not have.*all_reduce_perf"; then
			echo "$name: exit $rc, '$out' (want 2 and the names it has)"
			bad=1
		fi
	done
	# the rendezvous variables: the missing one is named, before anything is opened
	while IFS='|' read -r want envs; do
		# shellcheck disable=SC2086
		out=$(env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT $envs "$CPERF" -b 8 -e 8 2>&1 >/dev/null)
		rc=$?
		if [ $rc -ne 2 ] || ! printf '%s' "$out" | grep -qF -- "$want"; then
			echo "mroce-coll-perf with '$envs': exit $rc, '$out' (want 2 and '$want')"
			bad=1
		fi
	done <<EOF2
WORLD_SIZE is not set|
RANK is not set|WORLD_SIZE=2
MASTER_ADDR is not set|WORLD_SIZE=2 RANK=1
RANK='2' is not a rank of WORLD_SIZE=2|WORLD_SIZE=2 RANK=2 MASTER_ADDR=198.18.2.1
MASTER_PORT='x'|WORLD_SIZE=2 RANK=1 MASTER_ADDR=198.18.2.1 MASTER_PORT=x
EOF2
	# the completion offers -V and --version wherever it offers --help
	# shellcheck disable=SC1091
	. "$ROOT/completion/mroce.bash"
	for w in "_mroce mroce" "_mroce_perf mroce-perf" "_mroce_coll_perf mroce-coll-perf" \
		 "_mroce_launch mroce-launch" "_mroce mroce attach" "_mroce_launch mroce-launch run" \
		 "_mroce_launch mroce-launch down"; do
		read -ra words <<<"$w"
		COMP_WORDS=("${words[@]:1}" -)
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		"${words[0]}"
		for name in --help -V --version; do
			printf '%s\n' "${COMPREPLY[@]}" | grep -qx -- "$name" ||
				{ echo "completion of '${words[*]:1} -' lacks $name"; bad=1; }
		done
	done
	[ $bad -eq 0 ] && echo "usage: help, version and errors as documented"
}

coll() { "$LAUNCH" run -n 2 --name "$JOB" --timeout 120 -- "$CPERF" "$@"; }

t_coll_nccl_flags() {
	local out
	out=$(coll -b 8 -e 1M -f 16 -n 3 -w 1 -c 1 -z 0 -d int32 -o max --warmup-ms 0) || { echo "$out"; return 1; }
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q '^#  *out-of-place  *in-place$' || { echo "no placement labels"; return 1; }
	printf '%s\n' "$out" | grep -q '^#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong$' ||
		{ echo "no nccl-tests column row"; return 1; }
	# 8, 128, 2048, 32768, 524288: 13 columns each, #wrong 0 out of place and in place
	[ "$(printf '%s\n' "$out" | awk '!/^#/ && NF == 13 && $3 == "int32" && $4 == "max" && $5 == -1 && $9 == 0 && $13 == 0' | wc -l)" -eq 5 ] ||
		{ echo "expected 5 checked int32/max rows"; return 1; }
	[ "$(printf '%s\n' "$out" | grep -vc '^#')" -eq 5 ] || { echo "lines outside the table"; return 1; }
	printf '%s\n' "$out" | grep -q '^# Out of bounds values : 0 OK$' || { echo "no out-of-bounds footer"; return 1; }
	printf '%s\n' "$out" | grep -Eq '^# Avg bus bandwidth    : [0-9.e+-]+$' || { echo "no bus bandwidth footer"; return 1; }
	# -r 1: broadcast from rank 1; -c 0: no check, N/A
	out=$(coll -c broadcast -r 1 -b 1K -e 64K -f 8 -n 2 -w 0 -d double --warmup-ms 0) || { echo "$out"; return 1; }
	printf '%s\n' "$out"
	[ "$(printf '%s\n' "$out" | awk '!/^#/ && $5 == 1 && $9 == 0 && $13 == 0' | wc -l)" -eq 3 ] ||
		{ echo "expected 3 checked rows with root 1"; return 1; }
	out=$(coll -c alltoall -b 64 -e 64 -n 2 -w 0 -c 0 --warmup-ms 0) || { echo "$out"; return 1; }
	printf '%s\n' "$out"
	printf '%s\n' "$out" | awk '!/^#/ { n++; if ($9 != "N/A" || $13 != "N/A") exit 1 } END { exit n != 1 }' ||
		{ echo "-c 0 should print N/A for #wrong"; return 1; }
	# -r past the ranks: refused on every rank, exit 2 each (the launcher: 1)
	out=$(coll -c broadcast -r 2 2>&1) && { echo "-r 2 of 2 ranks was accepted"; return 1; }
	printf '%s\n' "$out" | grep -q -- '-r 2: there are 2 ranks' || { echo "$out"; return 1; }
	echo "coll: nccl-tests flags, placements, footers, root and -c 0 as expected"
}

# Every line a rank writes reaches the launcher's output whole, never spliced
# with another rank's: 4 ranks writing 300 lines each to stdout and stderr
# at once. (mawk -W interactive wrote a prefixed line's text and its newline
# in two writes: "[1] rank 1 reached its peerrank 0 reached its peer".)
t_launch_whole_lines() {
	local out n bad
	out=$("$LAUNCH" run -n 4 --name "$JOB" --timeout 120 -- sh -c \
		'i=0; while [ $i -lt 300 ]; do echo "err $RANK $i" >&2; echo "out $RANK $i"; i=$((i + 1)); done' \
		2>&1) || { echo "$out"; return 1; }
	n=$(printf '%s\n' "$out" | grep -c -E '^(\[[0-3]\] )?(err|out) [0-3] [0-9]+$')
	bad=$(printf '%s\n' "$out" | grep -v -E '^(\[[0-3]\] )?(err|out) [0-3] [0-9]+$' | grep -v '^mroce-launch: ' | head -n 3)
	echo "coll: $n whole lines of 2400"
	[ -z "$bad" ] && [ "$n" -eq 2400 ] || { echo "spliced or missing lines: $bad"; return 1; }
}

coll_setup() { :; }
coll_teardown() { "$LAUNCH" down "$JOB" >/dev/null 2>&1; }
trap 'coll_teardown; cleanup_all' EXIT

require_root test_perf_tools
for t in "$MROCE" "$PERF" "$CPERF"; do
	[ -x "$t" ] || { echo "FAIL: test_perf_tools: $t is not built (run make)"; exit 1; }
done
FIGURES='^(figures|json):' run_test "mroce-perf write_bw with perftest's flags: columns, no latency" t_write_bw_perftest_flags 3498
FIGURES='^figures:' run_test "mroce-perf write_lat with perftest's flags: the latency columns" t_write_lat_perftest_flags 3498
run_test "mroce-perf -a: 2 B to 8 MiB" t_all_sizes 3498
FIGURES='^json:' run_test "mroce-perf --json: iperf3's intervals and end beside the old keys" t_json_intervals 3498
FIGURES='^bidir:' run_test "mroce-perf -b: write_bw, read_bw and send_bw both ways at once, each direction's share, verified" t_bidirectional 3498
run_test "bad values: exit 2 and the flag named" t_bad_values
TEST_SETUP=coll_setup TEST_TEARDOWN=: FIGURES='^usage:' \
	run_test "help, version and usage errors of every tool" t_help_version_usage
TEST_SETUP=coll_setup TEST_TEARDOWN=coll_teardown FIGURES='^coll:' \
	run_test "mroce-coll-perf with nccl-tests' flags on 2 ranks" t_coll_nccl_flags
TEST_SETUP=coll_setup TEST_TEARDOWN=coll_teardown FIGURES='^coll:' \
	run_test "mroce-launch: 4 ranks' lines, stdout and stderr at once, each whole" t_launch_whole_lines
summary test_perf_tools
