#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Run every test tier (make test builds first) and close with one line:
#   tests: N passed, N failed, N skipped
# Tiers: cmocka unit tests (no root), the same under ASan/UBSan, the SPIN model, the XDP
# program under BPF_PROG_TEST_RUN (root), the veth/netns selftests (root),
# the latter also with the sanitizer-built tools, and the emulated fabric
# (root; its functional tests again with the sanitizer-built tools, its
# timing bounds only with the optimised build), and the collectives on N-rank
# jobs (root; its functional tests again with the sanitizer-built tools), the
# cluster simulator's command (no root).
#   scripts/run-tests.sh           every tier
#   scripts/run-tests.sh fabric    the fabric tier alone (make test-fabric)
#   scripts/run-tests.sh coll      the collectives tier alone (make test-coll)
set -u
cd "$(dirname "$0")/.."

PASS=0 FAIL=0 SKIPPED=0
LOGDIR=$(mktemp -d /tmp/mroce-tests.XXXXXX)
trap 'rm -rf "$LOGDIR"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# A cmocka binary: count from its summary; a crash without a summary is a failure.
run_cmocka() {
	local bin=$1 tag=$2 log rc p f
	log="$LOGDIR/$(echo "$tag-$bin" | tr '/' '_').log"
	"$bin" >"$log" 2>&1
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "SKIP: $tag $(basename "$bin"): $(tail -n 1 "$log")"
		SKIPPED=$((SKIPPED + 1))
		return
	fi
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
	p=${p:-0} f=${f:-0}
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1	# crashed, sanitizer report, or setup failure
	fi
	PASS=$((PASS + p)) FAIL=$((FAIL + f))
	if [ "$f" -ne 0 ]; then
		echo "FAIL: $tag $(basename "$bin") ($p passed, $f failed)"
		sed 's/^/    /' "$log"
	else
		echo "ok:   $tag $(basename "$bin") ($p passed)"
	fi
}

# A script that counts its own failures and says so by its exit status
# (verbs/tests/*.sh): one test, passed or failed, its log shown on failure.
run_whole() {
	local script=$1 tag=$2 build=$3 log
	log="$LOGDIR/$tag-$(basename "$script").log"
	if bash "$script" "$build" >"$log" 2>&1; then
		echo "PASS: $tag $script"
		PASS=$((PASS + 1))
	else
		echo "FAIL: $tag $script (exit $?)"
		tail -n 30 "$log" | sed 's/^/    /'
		FAIL=$((FAIL + 1))
	fi
}

# A selftest script: its PASS/FAIL/SKIP lines, then its own summary line.
run_script() {
	local script=$1 tag=$2 build=${3:-build} log rc p f s
	shift 3
	log="$LOGDIR/$tag-$(basename "$script").log"
	BUILD=$build FABRIC_BIN=$PWD/build/selftests/fabric bash "$script" "$@" >"$log" 2>&1
	rc=$?
	grep -E '^(PASS|FAIL|SKIP): |^    ' "$log" | sed "s/^\(PASS\|FAIL\|SKIP\): /\1: $tag /"
	read -r p f s < <(sed -n 's/^[a-z_-]*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$log" | tail -n 1)
	if [ -z "${p:-}" ]; then
		echo "FAIL: $tag $(basename "$script") ended without a summary (exit $rc)"
		tail -n 20 "$log" | sed 's/^/    /'
		FAIL=$((FAIL + 1))
		return
	fi
	PASS=$((PASS + p)) FAIL=$((FAIL + f)) SKIPPED=$((SKIPPED + s))
	[ $rc -ne 0 ] && [ "$f" -eq 0 ] && FAIL=$((FAIL + 1))
}

fabric_tier() {
	echo "== selftests on the emulated fabric: 4 hosts, 4 paths (root)"
	run_script selftests/test_fabric.sh fabric "$PWD/build"
	echo "== fabric selftests with the sanitizer-built tools (functional ones)"
	run_script selftests/test_fabric.sh fabric-asan "$PWD/build/asan" \
		ops_mixed_delays ops_loss_1pct ops_duplication mroce_rss4
}

coll_tier() {
	echo "== collectives: N-rank jobs in network namespaces (root)"
	run_script selftests/test_coll.sh coll "$PWD/build"
	echo "== collectives with the sanitizer-built library"
	run_script selftests/test_coll.sh coll-asan "$PWD/build/asan" \
		three_ranks_ring four_ranks_loss_reorder_dup four_ranks_two_per_host
}

if [ "${1:-}" = fabric ] || [ "${1:-}" = coll ]; then
	"${1}_tier"
	echo
	echo "tests: $PASS passed, $FAIL failed, $SKIPPED skipped"
	[ "$FAIL" -eq 0 ] && [ "$PASS" -gt 0 ]
	exit
fi

echo "== unit tests (cmocka, no root)"
for t in build/tests/test_*; do
	[ -x "$t" ] && [ -f "$t" ] && run_cmocka "$t" unit
done

echo "== unit tests under AddressSanitizer and UBSan"
for t in build/asan/tests/test_*; do
	[ -x "$t" ] && [ -f "$t" ] && run_cmocka "$t" asan
done

# The quick ones again as clang builds them with its UBSan (the slow simulations
# already ran under gcc's ASan + UBSan above).
echo "== unit tests under clang's UBSan"
for t in build/clang-ubsan/tests/test_*; do
	case "$t" in *.d|*/test_paths|*/test_random|*/test_transport) continue ;; esac
	[ -x "$t" ] && [ -f "$t" ] && run_cmocka "$t" clang-ubsan
done

echo "== the protocol model under SPIN (make model)"
run_model() {
	local log="$LOGDIR/model.log" p f
	model/check.sh build/model >"$log" 2>&1
	read -r p f < <(sed -n 's/^model: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$log" | tail -n 1)
	if [ -z "${p:-}" ]; then
		echo "FAIL: model check.sh ended without a summary"
		tail -n 20 "$log" | sed 's/^/    /'
		FAIL=$((FAIL + 1))
		return
	fi
	PASS=$((PASS + p)) FAIL=$((FAIL + f))
	if [ "$f" -ne 0 ]; then
		echo "FAIL: model ($p passed, $f failed)"
		sed 's/^/    /' "$log"
	else
		echo "ok:   model ($p passed)"
	fi
}
run_model

echo "== the cluster simulator's command on small fabrics (make sim; no root)"
run_script scripts/sim-smoke.sh sim "$PWD/build"

echo "== XDP program under BPF_PROG_TEST_RUN (root)"
run_cmocka build/selftests/prog_test bpf
run_cmocka build/asan/selftests/prog_test asan-bpf

# test_verbs_compat.sh: unmodified ibverbs-utils and perftest over mroce's libibverbs,
# test_verbs_dv.sh: its extension calls (mrocedv.h); in the veth-asan tier over the
# ASan-built library (test_verbs_compat.sh preloads the sanitizer runtimes into the
# third-party binaries itself).
VETH_TESTS=(selftests/test_datapath.sh selftests/test_verbs.sh selftests/test_xsk.sh selftests/test_perf_tools.sh
	selftests/test_queues.sh selftests/test_verbs_compat.sh selftests/test_verbs_dv.sh)
echo "== selftests on veth pairs in network namespaces (root)"
for s in "${VETH_TESTS[@]}"; do
	run_script "$s" veth "$PWD/build"
done
run_script selftests/test_verbs_rogue.sh veth "$PWD/build"	# Verbs QPs: off-path injection, fabric keys
# mroce's libibverbs from the inside: devices, queries, regions, CQs and channels; the QP state machine
for s in verbs/tests/core_test.sh verbs/tests/qp_test.sh; do
	run_whole "$s" veth "$PWD/build"
	run_whole "$s" veth-asan "$PWD/build/asan"
done

echo "== 2 planes on veth under a flood of bad-token frames: it dies in XDP, nothing lost, planes come back (root)"
run_script selftests/test_planes_load.sh planes-load "$PWD/build"

echo "== 10^4 small round trips on a clean veth pair, busy-polling and on the progress thread: nothing resent, no timeout (root)"
run_script selftests/test_latency.sh latency "$PWD/build"

echo "== least privilege: each operation as user nobody with exactly the capabilities libmroce(7) gives it, then each one fewer (root)"
run_script selftests/test_caps.sh caps "$PWD/build"
run_script selftests/test_caps.sh caps-asan "$PWD/build/asan"

echo "== the verbs selftests again, every region in device memory: XDP places the WRITEs (user space where the kernel refuses bpf_xdp_adjust_meta) (root)"
export MROCE_TEST_DM=1
run_script selftests/test_verbs.sh veth-dm "$PWD/build"
unset MROCE_TEST_DM

echo "== the verbs selftests again, every region in the UMEM's transmit pool: sent without the library's copy (root)"
export MROCE_TEST_POOL=1
run_script selftests/test_verbs.sh veth-pool "$PWD/build"
unset MROCE_TEST_POOL

echo "== selftests with the sanitizer-built tools"
for s in "${VETH_TESTS[@]}"; do
	run_script "$s" veth-asan "$PWD/build/asan"
done

echo "== the NCCL net plugin driven by its harness, also under ASan/UBSan (root)"
run_script selftests/test_nccl.sh nccl "$PWD/build"
run_script selftests/test_nccl.sh nccl-asan "$PWD/build/asan"

echo "== make install into a scratch DESTDIR: every file, man pages, pkg-config, completion, the installed launcher, the PyTorch backend"
run_script selftests/test_install.sh install "$PWD/build"

echo "== the Debian packages: dpkg-buildpackage, lintian, install, check (man mroce, pkg-config, a linked program, import mroce_torch), remove"
run_script scripts/test-debs.sh debs "$PWD/build"

echo "== the PyTorch backend: torch.distributed jobs in namespaces, DDP against gloo bit for bit (root)"
run_script selftests/test_torch.sh torch "$PWD/build"

fabric_tier
coll_tier

echo
echo "tests: $PASS passed, $FAIL failed, $SKIPPED skipped"
[ "$FAIL" -eq 0 ] && [ "$PASS" -gt 0 ]
