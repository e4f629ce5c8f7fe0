#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Unmodified Verbs applications over mroce's libibverbs: Debian's
# ibverbs-utils and perftest 4.5 binaries, run as they are with
# LD_LIBRARY_PATH=$BUILD/verbs, between two network namespaces on a veth
# pair (the library attaches mroce's XDP datapath itself), and our own
# verbs_check (every completion and byte checked) in all its modes, under
# injected loss and reordering too, and what mroce refuses (UD QPs, SRQs,
# memory windows, atomics) refused cleanly.
#
# With BUILD=build/asan (run-tests.sh's veth-asan tier) the library is the
# ASan + UBSan build; the third-party binaries then get the sanitizer
# runtimes by LD_PRELOAD (see third_party_env).
#
#   selftests/test_verbs_compat.sh              every test
#   ONLY=REGEX selftests/test_verbs_compat.sh   the tests whose function matches
. "$(dirname "$0")/lib.sh"

VLIB=$BUILD/verbs
VC=$BUILD/selftests/verbs_check
DEV_A=mroce_$IF_A
DEV_B=mroce_$IF_B
T=${VERBS_COMPAT_TIMEOUT:-60}	# every command's time limit (s)
PORT=18600	# the next TCP port; each test has namespaces of its own, so ports restart at each

# The sanitizer runtimes for binaries that were not built with them: the
# library inside them needs libasan/libubsan loaded first. Leak detection off
# for those binaries only: perftest and ibverbs-utils do not free everything
# before they exit (their leaks, not the library's: perftest's own callocs,
# and the device list it never gives back to ibv_free_device_list), and a
# leak report would fail every run; our own verbs_check frees everything and
# keeps run-tests.sh's detect_leaks=1, which checks the library's.
THIRD_ENV=()
if ldd "$VLIB/libibverbs.so.1" 2>/dev/null | grep -q libasan; then
	THIRD_ENV=(LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
		   ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")	# the last one counts
fi

# vrun NS CMD...: CMD in namespace NS over mroce's libibverbs, at most $T s.
vrun() {
	local ns=$1
	shift
	# line-buffered: what a run printed survives its timeout
	in_ns "$ns" timeout -k 5 "$T" env LD_LIBRARY_PATH="$VLIB" "${THIRD_ENV[@]}" stdbuf -oL -eL "$@"
}
# ours: verbs_check needs no preload (it is built with the sanitizers when the library is)
vown() {
	local ns=$1
	shift
	in_ns "$ns" timeout -k 5 "$T" env LD_LIBRARY_PATH="$VLIB" "$@"
}

# What an exit status says, for the logs.
rc_says() {
	case $1 in
	0) echo "exit 0" ;;
	124) echo "TIMED OUT after ${T}s" ;;
	129|1[3-8][0-9]|19[0-2]) echo "killed by signal $(( $1 - 128 )) ($(kill -l $(( $1 - 128 )) 2>/dev/null))" ;;
	*) echo "exit $1" ;;
	esac
}

# clean_fail RC: a failure by the program's own choice (not 0, no timeout, no signal:
# 128 + a signal number is 129..192; perftest and ibverbs-utils exit 255 on errors).
clean_fail() {
	[ "$1" -ne 0 ] && [ "$1" -ne 124 ] && { [ "$1" -lt 129 ] || [ "$1" -gt 192 ]; }
}

need() {
	local pkg=$1 bin
	shift
	for bin in "$@"; do
		command -v "$bin" >/dev/null && continue
		echo "$bin is not installed (Debian package $pkg; scripts/deps.sh installs it)"
		return $SKIP
	done
}

# ---- ibverbs-utils -------------------------------------------------------------------------

t_devices() {
	need ibverbs-utils ibv_devices || return
	vrun "$NS_A" ibv_devices >"$TMP/dev.log" 2>&1
	local rc=$?
	cat "$TMP/dev.log"
	[ $rc -eq 0 ] || { echo "ibv_devices: $(rc_says $rc)"; return 1; }
	grep -qw "$DEV_A" "$TMP/dev.log" || { echo "ibv_devices does not list $DEV_A"; return 1; }
	# only the namespace's own interface (loopback is never one)
	! grep -qw mroce_lo "$TMP/dev.log" || { echo "loopback listed"; return 1; }
	# MROCE_VERBS_DEVICES names the interfaces: one that does not exist is not listed
	vrun "$NS_A" env MROCE_VERBS_DEVICES=nosuchif0 ibv_devices >"$TMP/dev2.log" 2>&1
	! grep -q mroce_ "$TMP/dev2.log" || { cat "$TMP/dev2.log"; echo "MROCE_VERBS_DEVICES=nosuchif0 still lists a device"; return 1; }
	# no root needed to list devices (the datapath is not touched)
	if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
		# a copy it can read: the tree may sit where only root enters (a clone in
		# /root), and the loader would quietly take the system's libibverbs instead
		mkdir -p "$TMP/lib" && cp "$VLIB/libibverbs.so.1" "$TMP/lib/" && chmod -R a+rX "$TMP/lib"
		in_ns "$NS_A" timeout -k 5 "$T" env LD_LIBRARY_PATH="$TMP/lib" "${THIRD_ENV[@]}" \
			setpriv --reuid=nobody --regid=nogroup --clear-groups ibv_devices >"$TMP/dev3.log" 2>&1
		rc=$?
		[ $rc -eq 0 ] && grep -qw "$DEV_A" "$TMP/dev3.log" ||
			{ cat "$TMP/dev3.log"; echo "ibv_devices as nobody: $(rc_says $rc), $DEV_A not listed"; return 1; }
		echo "as user nobody: $DEV_A listed"
	fi
}

t_devinfo() {
	need ibverbs-utils ibv_devinfo || return
	vrun "$NS_A" ibv_devinfo -d "$DEV_A" -v >"$TMP/info.log" 2>&1
	local rc=$? want
	cat "$TMP/info.log"
	[ $rc -eq 0 ] || { echo "ibv_devinfo: $(rc_says $rc)"; return 1; }
	for want in "hca_id:[[:space:]]*$DEV_A" "state:[[:space:]]*PORT_ACTIVE" "active_mtu:[[:space:]]*1024" \
		    "link_layer:[[:space:]]*Ethernet" "GID\[ *0\]:[[:space:]]*::ffff:$IP_A" "transport:[[:space:]]*InfiniBand"; do
		grep -Eq "$want" "$TMP/info.log" || { echo "ibv_devinfo -v: no line matching '$want'"; return 1; }
	done
	# ibv_devinfo -d of an unknown device: a clear error, no crash
	vrun "$NS_A" ibv_devinfo -d mroce_nosuch >"$TMP/info2.log" 2>&1
	rc=$?
	cat "$TMP/info2.log"
	clean_fail $rc || { echo "ibv_devinfo -d mroce_nosuch: $(rc_says $rc)"; return 1; }
}

# pingpong SIZE [ARGS]: ibv_rc_pingpong between the namespaces, the server in B, buffers checked (-c).
pingpong() {
	need ibverbs-utils ibv_rc_pingpong || return
	local size=$1 port=$((PORT++)) rc src
	shift
	rm -f "$TMP/pp-s.log"
	bg vrun "$NS_B" ibv_rc_pingpong -d "$DEV_B" -g 0 -c -p "$port" -s "$size" "$@" >"$TMP/pp-s.log" 2>&1
	local spid=$!
	wait_port "$NS_B" "$port" || { cat "$TMP/pp-s.log"; return 1; }
	vrun "$NS_A" ibv_rc_pingpong -d "$DEV_A" -g 0 -c -p "$port" -s "$size" "$@" "$IP_B" >"$TMP/pp-c.log" 2>&1
	rc=$?
	wait "$spid"
	src=$?
	echo "client ($(rc_says $rc)):"; sed 's/^/    /' "$TMP/pp-c.log"
	echo "server ($(rc_says $src)):"; sed 's/^/    /' "$TMP/pp-s.log"
	[ $rc -eq 0 ] && [ $src -eq 0 ] || return 1
	grep -q "iters in" "$TMP/pp-c.log" && grep -q "iters in" "$TMP/pp-s.log" ||
		{ echo "no 'iters in' result line"; return 1; }
}
t_pp_1()      { pingpong 1 -n 1000; }
t_pp_4k()     { pingpong 4096 -n 1000; }
t_pp_64k()    { pingpong 65536 -n 500; }
t_pp_1m()     { pingpong 1048576 -n 100; }
t_pp_1_e()    { pingpong 1 -n 1000 -e; }
t_pp_4k_e()   { pingpong 4096 -n 500 -e; }
t_pp_64k_e()  { pingpong 65536 -n 200 -e; }
t_pp_1m_e()   { pingpong 1048576 -n 50 -e; }

# ---- perftest -------------------------------------------------------------------------------

# perf TOOL [ARGS]: TOOL's server in B, its client in A, both with -d DEV -x 0 and ARGS;
# both must exit 0 and print a result row (#bytes #iterations ...).
perf() {
	local tool=$1 port=$((PORT++)) rc src
	shift
	need perftest "$tool" || return
	rm -f "$TMP/pf-s.log"
	bg vrun "$NS_B" "$tool" -d "$DEV_B" -x 0 -p "$port" -F "$@" >"$TMP/pf-s.log" 2>&1
	local spid=$!
	wait_port "$NS_B" "$port" || { cat "$TMP/pf-s.log"; return 1; }
	vrun "$NS_A" "$tool" -d "$DEV_A" -x 0 -p "$port" -F "$@" "$IP_B" >"$TMP/pf-c.log" 2>&1
	rc=$?
	wait "$spid"
	src=$?
	echo "$tool $* -- client ($(rc_says $rc)):"; sed 's/^/    /' "$TMP/pf-c.log"
	echo "server ($(rc_says $src)):"; sed 's/^/    /' "$TMP/pf-s.log"
	[ $rc -eq 0 ] && [ $src -eq 0 ] || return 1
	# result rows: bytes, iterations, then figures; none with no iterations or only
	# zeros (perftest prints such a row, and exits 0, when a -D run completed nothing)
	local rows
	rows=$(grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$TMP/pf-c.log")
	[ -n "$rows" ] || { echo "$tool: the client printed no result row"; return 1; }
	printf '%s\n' "$rows" | awk '$2 == 0 || ($3 + 0 == 0 && $4 + 0 == 0) { bad = 1 } END { exit bad }' ||
		{ echo "$tool: a result row with no iterations or only zeros"; return 1; }
	! grep -Eiq "couldn't|failed|error" "$TMP/pf-c.log" "$TMP/pf-s.log" || { echo "$tool: an error was printed"; return 1; }
}

for tool in write read send; do
	for kind in bw lat; do
		eval "t_${tool}_${kind}()          { perf ib_${tool}_${kind}; }"
		eval "t_${tool}_${kind}_all()      { perf ib_${tool}_${kind} -n 100 -a $( [ $kind = bw ] && echo --report_gbits); }"
		eval "t_${tool}_${kind}_s1m()      { perf ib_${tool}_${kind} -s 1048576 -n 200; }"
		eval "t_${tool}_${kind}_D2()       { perf ib_${tool}_${kind} -D 2; }"
		eval "t_${tool}_${kind}_n()        { perf ib_${tool}_${kind} -n 2000; }"
	done
	# perftest's latency tests have no -q, -t or -b
	eval "t_${tool}_bw_q4() { perf ib_${tool}_bw -q 4 -n 1000; }"
	eval "t_${tool}_bw_t()  { perf ib_${tool}_bw -t 32 -n 1000; }"
	eval "t_${tool}_bw_b()  { perf ib_${tool}_bw -b -n 2000; }"
done

# ib_atomic_bw: mroce has no atomics. Refused with a message, a nonzero exit on both
# ends, neither hung nor killed by a signal.
t_atomic_refused() {
	need perftest ib_atomic_bw || return
	local port=$((PORT++)) rc src
	rm -f "$TMP/at-s.log"
	bg vrun "$NS_B" ib_atomic_bw -d "$DEV_B" -x 0 -p "$port" -F >"$TMP/at-s.log" 2>&1
	local spid=$!
	# the server may refuse before it listens: then there is nothing to connect to
	local i
	for ((i = 0; i < 200; i++)); do
		in_ns "$NS_B" ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	vrun "$NS_A" ib_atomic_bw -d "$DEV_A" -x 0 -p "$port" -F "$IP_B" >"$TMP/at-c.log" 2>&1
	rc=$?
	# a server still waiting for a client that gave up: perftest's own, not ours
	wait "$spid"
	src=$?
	echo "client ($(rc_says $rc)):"; sed 's/^/    /' "$TMP/at-c.log"
	echo "server ($(rc_says $src)):"; sed 's/^/    /' "$TMP/at-s.log"
	clean_fail $rc ||
		{ echo "the client: $(rc_says $rc), expected a refusal (nonzero exit, no signal, no hang)"; return 1; }
	[ $src -eq 0 ] || clean_fail $src || { echo "the server: $(rc_says $src)"; return 1; }
	grep -Eiq "atomic|not supported|couldn't|unable|fail" "$TMP/at-c.log" ||
		{ echo "the client printed no message saying why"; return 1; }
	! grep -Eq '^ *[0-9]+ +[0-9]+ +[0-9.]+' "$TMP/at-c.log" || { echo "a result row: atomics ran?"; return 1; }
}

# ---- our verbs_check -----------------------------------------------------------------------

# vcheck "server env/args" "client env/args": verbs_check's server in B, client in A.
# Each argument string may begin with VAR=value words (the environment of that end).
vcheck() {
	local port=$((PORT++)) rc src senv=() cenv=() sargs=() cargs=() w
	for w in $1; do [[ $w == *=* && ${#sargs[@]} -eq 0 ]] && senv+=("$w") || sargs+=("$w"); done
	for w in $2; do [[ $w == *=* && ${#cargs[@]} -eq 0 ]] && cenv+=("$w") || cargs+=("$w"); done
	rm -f "$TMP/vc-s.log"
	bg vown "$NS_B" "${senv[@]}" "$VC" -d "$DEV_B" -p "$port" "${sargs[@]}" >"$TMP/vc-s.log" 2>&1
	local spid=$!
	wait_for "$TMP/vc-s.log" listening 30 || { cat "$TMP/vc-s.log"; return 1; }
	vown "$NS_A" "${cenv[@]}" "$VC" -d "$DEV_A" -p "$port" "${cargs[@]}" "$IP_B" >"$TMP/vc-c.log" 2>&1
	rc=$?
	wait "$spid"
	src=$?
	echo "client ($(rc_says $rc)):"; sed 's/^/    /' "$TMP/vc-c.log"
	echo "server ($(rc_says $src)):"; sed 's/^/    /' "$TMP/vc-s.log"
	[ $rc -eq 0 ] && [ $src -eq 0 ] || return 1
	grep -q "ok: posted" "$TMP/vc-c.log" && grep -q "ok: posted" "$TMP/vc-s.log" ||
		{ echo "no summary line"; return 1; }
}
FAULTS_RX_A="seed=7,rx_drop_ppm=10000,rx_reorder_ppm=100000"
FAULTS_RX_B="seed=8,rx_drop_ppm=10000,rx_reorder_ppm=100000"
FAULTS_TX_A="seed=9,tx_drop_ppm=10000,tx_reorder_ppm=100000"
FAULTS_TX_B="seed=10,tx_drop_ppm=10000,tx_reorder_ppm=100000"

t_vc_poll()     { vcheck "" ""; }
t_vc_events()   { vcheck "-e" "-e"; }
t_vc_wr_api()   { vcheck "-x" "-x"; }
t_vc_cq_ex()    { vcheck "-c -e" "-c -e"; }
t_vc_all_sig()  { vcheck "-k 1 -x -e" "-k 1 -x -e"; }
t_vc_one_qp_deep() { vcheck "-q 1 -w 256 -n 10 -m 8388608" "-q 1 -w 256 -n 10 -m 8388608"; }
# vcheck_lossy: vcheck, and the faults did bite: B's QPs resent packets (their
# retx_pkts in `mroce flows`, sampled while they live), or the run proved nothing.
vcheck_lossy() {
	rm -f "$TMP/flows.stop" "$TMP/flows.log"
	( while [ ! -e "$TMP/flows.stop" ]; do b "$MROCE" flows "$IF_B" --json 2>/dev/null; echo; sleep 0.2; done ) \
		>"$TMP/flows.log" 2>&1 &
	local fp=$! rc re
	vcheck "$1" "$2"
	rc=$?
	touch "$TMP/flows.stop"
	wait "$fp"
	re=$(grep -o '"retx_pkts":[0-9]*' "$TMP/flows.log" | cut -d: -f2 | sort -n | tail -n 1)
	echo "the server's QPs resent up to ${re:-0} packets each"
	[ $rc -eq 0 ] || return 1
	[ "${re:-0}" -gt 0 ] || { echo "faults injected, yet nothing was resent: were they injected?"; return 1; }
}
t_vc_rx_faults() {
	vcheck_lossy "MROCE_VERBS_TEST_FAULTS=$FAULTS_RX_B -n 10" "MROCE_VERBS_TEST_FAULTS=$FAULTS_RX_A -n 10"
}
t_vc_tx_faults() {
	vcheck_lossy "MROCE_VERBS_TEST_FAULTS=$FAULTS_TX_B -n 10 -e -x" "MROCE_VERBS_TEST_FAULTS=$FAULTS_TX_A -n 10 -e -x"
}
t_vc_both_faults() {
	vcheck_lossy "MROCE_VERBS_TEST_FAULTS=$FAULTS_RX_B,tx_drop_ppm=5000,tx_reorder_ppm=50000 -n 10 -q 8 -c" \
		     "MROCE_VERBS_TEST_FAULTS=$FAULTS_TX_A,rx_drop_ppm=5000,rx_reorder_ppm=50000 -n 10 -q 8 -c"
}

# The test of the test: a byte flipped in what arrived (VERBS_CHECK_CORRUPT) is seen.
t_vc_detects() {
	local port=$((PORT++)) rc
	bg vown "$NS_B" env VERBS_CHECK_CORRUPT=1 "$VC" -d "$DEV_B" -p "$port" -q 1 -n 3 -w 8 >"$TMP/vc-s.log" 2>&1
	local spid=$!
	wait_for "$TMP/vc-s.log" listening 30 || { cat "$TMP/vc-s.log"; return 1; }
	vown "$NS_A" "$VC" -d "$DEV_A" -p "$port" -q 1 -n 3 -w 8 "$IP_B" >"$TMP/vc-c.log" 2>&1
	wait "$spid"
	rc=$?
	cat "$TMP/vc-s.log"
	[ $rc -eq 1 ] && grep -q "FAIL: qp 0 round 1 seq [0-9]* .*byte [0-9]* is" "$TMP/vc-s.log" ||
		{ echo "a flipped byte went unnoticed (server $(rc_says $rc))"; return 1; }
}

# UD/UC/raw QPs, SRQs, memory windows, atomics: refused with an errno, never a crash;
# alone and on a connected QP (which then still carries its rounds).
t_vc_refusals() {
	vown "$NS_A" "$VC" -d "$DEV_A" --refusals-only >"$TMP/ref.log" 2>&1
	local rc=$?
	cat "$TMP/ref.log"
	[ $rc -eq 0 ] || { echo "verbs_check --refusals-only: $(rc_says $rc)"; return 1; }
	vcheck "--refusals -n 2" "--refusals -n 2"
}

# A malformed MROCE_VERBS_TEST_FAULTS: the device open fails with EINVAL, a clear error.
t_vc_bad_faults() {
	vown "$NS_A" env MROCE_VERBS_TEST_FAULTS=seed=1,bogus_ppm=3 "$VC" -d "$DEV_A" --refusals-only \
		>"$TMP/bad.log" 2>&1
	local rc=$?
	cat "$TMP/bad.log"
	[ $rc -eq 1 ] || { echo "expected verbs_check to fail cleanly (exit 1), got $(rc_says $rc)"; return 1; }
	grep -q "Invalid argument" "$TMP/bad.log" || { echo "not EINVAL"; return 1; }
}

require_root verbs_compat
for f in "$VLIB/libibverbs.so.1" "$VC"; do
	[ -e "$f" ] || { echo "FAIL: verbs_compat: $f is not built (make all)"; echo "verbs_compat: 0 passed, 1 failed, 0 skipped"; exit 1; }
done

run_test "ibv_devices lists $DEV_A (MROCE_VERBS_DEVICES honoured, no root needed)" t_devices
run_test "ibv_devinfo -v: PORT_ACTIVE, active_mtu, Ethernet, GID ::ffff:IPv4" t_devinfo
run_test "ibv_rc_pingpong -g 0 -c -s 1" t_pp_1
run_test "ibv_rc_pingpong -g 0 -c -s 4096" t_pp_4k
run_test "ibv_rc_pingpong -g 0 -c -s 65536" t_pp_64k
run_test "ibv_rc_pingpong -g 0 -c -s 1048576" t_pp_1m
run_test "ibv_rc_pingpong -e -s 1" t_pp_1_e
run_test "ibv_rc_pingpong -e -s 4096" t_pp_4k_e
run_test "ibv_rc_pingpong -e -s 65536" t_pp_64k_e
run_test "ibv_rc_pingpong -e -s 1048576" t_pp_1m_e
for tool in write read send; do
	for kind in bw lat; do
		run_test "ib_${tool}_${kind} -d DEV -x 0" "t_${tool}_${kind}"
		run_test "ib_${tool}_${kind} $([ $kind = bw ] && echo '--report_gbits ')-a -n 100" "t_${tool}_${kind}_all"
		run_test "ib_${tool}_${kind} -s 1048576" "t_${tool}_${kind}_s1m"
		run_test "ib_${tool}_${kind} -D 2" "t_${tool}_${kind}_D2"
		run_test "ib_${tool}_${kind} -n 2000" "t_${tool}_${kind}_n"
	done
	run_test "ib_${tool}_bw -q 4" "t_${tool}_bw_q4"
	run_test "ib_${tool}_bw -t 32" "t_${tool}_bw_t"
	run_test "ib_${tool}_bw -b" "t_${tool}_bw_b"
done
run_test "ib_atomic_bw refused with a message, no crash, no hang" t_atomic_refused
run_test "verbs_check: 4 QPs x 64 WRs both ways, polling" t_vc_poll
run_test "verbs_check -e: completion channel" t_vc_events
run_test "verbs_check -x: ibv_wr_* API" t_vc_wr_api
run_test "verbs_check -c -e: extended CQ with events" t_vc_cq_ex
run_test "verbs_check -k 1 -x -e: every WR signaled" t_vc_all_sig
run_test "verbs_check -q 1 -w 256: one QP, 256 WRs in flight" t_vc_one_qp_deep
run_test "verbs_check under 1% rx loss and 10% rx reordering" t_vc_rx_faults
run_test "verbs_check -e -x under 1% tx loss and 10% tx reordering" t_vc_tx_faults
run_test "verbs_check -q 8 -c under loss and reordering both ways" t_vc_both_faults
run_test "verbs_check sees a byte flipped on arrival (the test of the test)" t_vc_detects
run_test "UD/UC QPs, SRQ, memory windows, atomics refused cleanly" t_vc_refusals
run_test "a malformed MROCE_VERBS_TEST_FAULTS: EINVAL, no crash" t_vc_bad_faults
summary verbs_compat
