#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Root selftests of the torch.distributed backend "mroce" (docs/pytorch.md):
# tools/mroce-launch jobs, one rank per namespace, running
# selftests/torch_ops.py (every op and dtype checked against values computed
# on each rank, float sums bit for bit against gloo, async work, argument
# errors, a rank that stalls, a rank that is killed) and examples/ddp_train.py
# (DistributedDataParallel: the parameters after 12 steps must equal gloo's
# bit for bit). Needs python3-torch (scripts/deps.sh torch) and `make pytorch`.
. "$(dirname "$0")/lib.sh"

LAUNCH=$ROOT/tools/mroce-launch
PY=/usr/bin/python3
OPS=$ROOT/selftests/torch_ops.py
DDP=$ROOT/examples/ddp_train.py
EXT=$BUILD/torch/_mroce_torch.so
JOB=htorch$$

launch() {
	"$LAUNCH" run --name "$JOB" --timeout 240 --env GLOO_SOCKET_IFNAME=eth0 \
		--env "BUILD=$BUILD" "$@"
}

t_ops_2()	{ launch -n 2 -- "$PY" "$OPS" ops; }
t_ops_4()	{ launch -n 4 -- "$PY" "$OPS" ops; }
# Two ranks per host sharing its NIC, each on a receive queue of its own
# (the fabric steers each one's port there and hairpins a host's frames).
t_ops_4_two_per_host() { launch -n 4 --per-host 2 --net fabric -- "$PY" "$OPS" ops; }
t_gloo_order_3(){ launch -n 3 -- "$PY" "$OPS" gloo-order; }
t_gloo_order_4(){ launch -n 4 -- "$PY" "$OPS" gloo-order; }
t_async()	{ launch -n 3 -- "$PY" "$OPS" async; }
t_errors()	{ launch -n 2 -- "$PY" "$OPS" errors; }
# Splits that disagree between two ranks (4 ranks, renumbered in gloo's
# order): a clear error on both, never silently cut data.
t_a2a_mismatch(){ launch -n 4 --env TORCH_OPS_TIMEOUT=10 -- "$PY" "$OPS" a2a-mismatch; }

# Rank 1 of 3 skips an all_reduce (timeout 2 s): both others raise, within 3.5 s
# (3 Python ranks on 2 cores).
t_timeout() {
	local out rc n=0 s worst=
	out=$(launch -n 3 --env TORCH_OPS_TIMEOUT=2 -- "$PY" "$OPS" timeout 2>&1)
	rc=$?
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q 'exit codes: 3 0 3' || { echo "ranks 0 and 2 did not raise"; return 1; }
	# One report per match, not per line: rank 0's stdout and the other
	# ranks' prefixed stderr share the pipe, and a line may hold two reports.
	while read -r s; do
		python3 -c "import sys; sys.exit(not ($s <= 3.5))" || { echo "raised after $s s"; return 1; }
		worst=$s n=$((n + 1))
	done < <(printf '%s\n' "$out" | grep -o 'all_reduce raised after [0-9.]* s' | sed 's/.* after \([0-9.]*\) s/\1/')
	echo "timeout: $n ranks raised, the last after ${worst:-?} s (timeout 2 s)"
	[ $n -eq 2 ] && [ $rc -ne 0 ]
}

# SIGKILL rank 2 of 4 during 16 MiB all_reduces (timeout 2 s), 20 s in (4
# ranks importing torch on 2 cores take ~8 s to start, more when loaded): every
# survivor raises a RuntimeError within 3.5 s of the kill (the timeout counts from the
# last completion, which may come a little after the kill, and 4 Python ranks
# share 2 cores) and exits by itself.
t_dead_rank() {
	local out kill_at worst=0 at late n=0
	out=$(launch -n 4 --env TORCH_OPS_TIMEOUT=2 --kill-rank 2 --kill-after-ms 20000 -- \
		"$PY" "$OPS" dead 2>&1)
	printf '%s\n' "$out"
	kill_at=$(printf '%s\n' "$out" | sed -n 's/^mroce-launch: killed rank 2 at \([0-9.]*\).*/\1/p')
	[ -n "$kill_at" ] || { echo "the launcher did not report the kill"; return 1; }
	while read -r at; do
		late=$(python3 -c "print(int(($at - $kill_at) * 1000))")
		[ "$late" -gt "$worst" ] && worst=$late
		n=$((n + 1))
	done < <(printf '%s\n' "$out" | grep -o 'rank [0-9]*: allreduce [0-9]* failed at [0-9.]*' | sed 's/.* at //')
	echo "dead rank: $n survivors raised, the last $worst ms after the kill (timeout 2000 ms)"
	[ $n -eq 3 ] || { echo "expected 3 survivors to raise"; return 1; }
	[ "$worst" -le 3500 ] || { echo "a survivor took longer than the timeout + 1.5 s"; return 1; }
	printf '%s\n' "$out" | grep -q 'others exited: 0:3 1:3 3:3' || { echo "survivors did not exit 3"; return 1; }
}

# Every parameter of two saved DDP runs equal (torch.equal): $1 gloo's, $2 the other's.
same_params() {
	"$PY" - "$1" "$2" <<-'EOF'
	import sys, torch
	g, m = torch.load(sys.argv[1]), torch.load(sys.argv[2])
	assert g.keys() == m.keys() and len(g) > 0, "different parameter sets"
	bad = 0
	for k in g:
	    if not torch.equal(g[k], m[k]):
	        bad += 1
	        print(f"ddp: {k} differs, max abs diff {(g[k] - m[k]).abs().max().item():.3e}")
	print(f"ddp: {len(g)} tensors, {sum(v.numel() for v in g.values())} parameters, {bad} differ from gloo")
	sys.exit(1 if bad else 0)
	EOF
}

# DDP, 12 steps, same seeds: every parameter equal to gloo's run.
ddp_vs_gloo() {
	local n=$1 b
	for b in gloo mroce; do
		launch -n "$n" -- "$PY" "$DDP" --backend $b --steps 12 --save "$TMP/ddp_$b.pt" || return 1
	done
	same_params "$TMP/ddp_gloo.pt" "$TMP/ddp_mroce.pt"
}
t_ddp_2() { ddp_vs_gloo 2; }
t_ddp_4() { ddp_vs_gloo 4; }

# The same DDP job under PyTorch's own launcher: torchrun on each of 2
# "hosts" (a namespace each, from mroce-launch up), static rendezvous on
# rank 0's address; torchrun sets the workers' RANK, WORLD_SIZE, MASTER_*.
# Debian 12's torchrun (torch 1.13.1 on Python 3.11) fails at start with its
# default --redirects 0 and --tee 0 (Python 3.11 no longer iterates an
# IntFlag's zero member, so Std.from_str("0") is None): --redirects 1
# --tee 1 (stdout to a file under --log_dir and to the console) avoid it.
t_torchrun() {
	local i pids=() rc=0 port=29531
	launch -n 2 -- "$PY" "$DDP" --backend gloo --steps 12 --save "$TMP/ddp_gloo.pt" || return 1
	"$LAUNCH" up -n 2 --name "$JOB" >/dev/null || return 1
	for i in 0 1; do
		"$LAUNCH" exec "$JOB" $i -- env -u RANK -u WORLD_SIZE -u LOCAL_RANK BUILD="$BUILD" \
			timeout 240 "$PY" -m torch.distributed.run --nnodes 2 --node_rank $i \
			--nproc_per_node 1 --master_addr "$("$LAUNCH" addr "$JOB" 0)" --master_port $port \
			--redirects 1 --tee 1 --log_dir "$TMP/torchrun_logs$i" \
			"$DDP" --backend mroce --steps 12 --save "$TMP/ddp_torchrun.pt" >"$TMP/torchrun$i.log" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	"$LAUNCH" down "$JOB" >/dev/null
	[ $rc -eq 0 ] || { cat "$TMP"/torchrun*.log; return 1; }
	grep -h "loss" "$TMP/torchrun0.log" | tail -1
	same_params "$TMP/ddp_gloo.pt" "$TMP/ddp_torchrun.pt"
}

# And under Open MPI's mpirun, one rank per namespace (selftests/bench/
# mpirun_ns.sh: an rsh agent that enters the namespace): the ranks take
# RANK and WORLD_SIZE from OMPI_COMM_WORLD_* (mroce_torch.env_from_mpi),
# MASTER_ADDR and MASTER_PORT exported with -x.
t_mpirun() {
	local a0 a1
	command -v mpirun >/dev/null || { echo "no mpirun: scripts/deps.sh torch installs Open MPI"; return 1; }
	launch -n 2 -- "$PY" "$DDP" --backend gloo --steps 12 --save "$TMP/ddp_gloo.pt" || return 1
	"$LAUNCH" up -n 2 --name "$JOB" >/dev/null || return 1
	a0=$("$LAUNCH" addr "$JOB" 0)
	a1=$("$LAUNCH" addr "$JOB" 1)
	MASTER_ADDR=$a0 MASTER_PORT=29532 MROCE_IFNAME=eth0 BUILD=$BUILD \
		"$ROOT/selftests/bench/mpirun_ns.sh" --ns "$("$LAUNCH" ns "$JOB" 0),$("$LAUNCH" ns "$JOB" 1)" \
		--addrs "$a0,$a1" --subnet "${a0%.*}.0/24" --timeout 240 -- \
		-x MASTER_ADDR -x MASTER_PORT -x MROCE_IFNAME -x BUILD \
		"$PY" "$DDP" --backend mroce --steps 12 --save "$TMP/ddp_mpirun.pt" >"$TMP/mpirun.log" 2>&1
	local rc=$?
	"$LAUNCH" down "$JOB" >/dev/null
	[ $rc -eq 0 ] || { cat "$TMP/mpirun.log"; return 1; }
	grep "loss" "$TMP/mpirun.log" | tail -1
	same_params "$TMP/ddp_gloo.pt" "$TMP/ddp_mpirun.pt"
}

torch_setup() { :; }
torch_teardown() { "$LAUNCH" down "$JOB" >/dev/null 2>&1; }
TEST_SETUP=torch_setup
TEST_TEARDOWN=torch_teardown
FIGURES='^(timeout:|dead rank:|ddp: [0-9]+ tensors)'
trap 'torch_teardown; cleanup_all' EXIT

require_root test_torch
if ! "$PY" -c 'import torch, torch.distributed' 2>/dev/null; then
	echo "SKIP: test_torch: $PY cannot import torch (python3-torch is not installed: scripts/deps.sh torch)"
	echo "test_torch: 0 passed, 0 failed, 1 skipped"
	exit 0
fi
[ -f "$EXT" ] || { echo "FAIL: test_torch: $EXT is not built (make pytorch)"; exit 1; }
if [ $# -gt 0 ]; then
	for t in "$@"; do run_test "$t" "t_$t"; done
else
	run_test "2 ranks: every op and dtype, checked values" t_ops_2
	run_test "4 ranks: every op and dtype, checked values" t_ops_4
	run_test "4 ranks, 2 per host sharing a NIC: every op and dtype, checked values" t_ops_4_two_per_host
	run_test "3 ranks: float sums bit for bit equal to gloo's" t_gloo_order_3
	run_test "4 ranks: float sums bit for bit equal to gloo's" t_gloo_order_4
	run_test "async work: wait, futures, is_completed" t_async
	run_test "argument errors raise at once, the group stays usable" t_errors
	run_test "all_to_all_single splits that disagree: both ranks raise" t_a2a_mismatch
	run_test "a rank that skips an all_reduce: the others raise in time" t_timeout
	run_test "a rank killed mid all_reduce: every survivor raises in time" t_dead_rank
	run_test "DDP on 2 ranks: parameters equal gloo's bit for bit" t_ddp_2
	run_test "DDP on 4 ranks: parameters equal gloo's bit for bit" t_ddp_4
	run_test "DDP under torchrun, 2 hosts: parameters equal gloo's bit for bit" t_torchrun
	run_test "DDP under mpirun, 2 ranks: parameters equal gloo's bit for bit" t_mpirun
fi
summary test_torch
