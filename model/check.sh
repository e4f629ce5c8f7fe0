#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Check model/mroce.pml with SPIN: every property of the fixed rules, then
# each BUG_ variant, which must give a counterexample. docs/model.md explains
# the runs. Two runs at a time (the machine's 2 cores are shared).
#   model/check.sh [BUILD_DIR]      (default build/model)
set -uo pipefail

SRC=$(cd "$(dirname "$0")" && pwd)/mroce.pml
OUT=${1:-build/model}
DEPTH=20000		# -m: the deepest run reaches ~1,300 steps
# -O2 without RTL GCSE: that one pass takes 40% of the compile of pan.c for no
# measurable search speed here (13 s instead of 23 s per variant).
PAN_CFLAGS=${PAN_CFLAGS:--O2 -fno-gcse}
JOBS=${MODEL_JOBS:-2}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
t0=$(date +%s)
names=()

command -v spin >/dev/null || { echo "model: spin missing (apt-get install spin)" >&2; exit 1; }

# one NAME EXPECT MODE DEFINES...   EXPECT: ok | cex; MODE: safety | ltl:<claim>
one() {
	local name=$1 expect=$2 mode=$3; shift 3
	local d="$OUT/$name" errs st res note=""
	rm -rf "$d" && mkdir -p "$d" && cp "$SRC" "$d/" && cd "$d" || exit 1
	if ! spin -a "$@" mroce.pml >spin.log 2>&1; then
		note="spin failed: $d/spin.log"
	elif [ "$mode" = safety ]; then
		gcc $PAN_CFLAGS -DSAFETY -DNOCLAIM -o pan pan.c 2>gcc.log &&
			./pan -m$DEPTH -n >pan.out 2>&1
	else
		gcc $PAN_CFLAGS -o pan pan.c 2>gcc.log &&
			./pan -a -f -m$DEPTH -n -N "${mode#ltl:}" >pan.out 2>&1
	fi
	errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out 2>/dev/null | tail -1)
	st=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out 2>/dev/null | tail -1)
	st=$(printf '%.0f' "${st:-0}")
	if [ -z "$errs" ]; then
		res=FAIL; note=${note:-"pan did not finish: $d/pan.out"}
	elif grep -q "max search depth too small" pan.out; then
		res=FAIL; note="search truncated: raise DEPTH"
	elif [ "$expect" = ok ] && [ "$errs" -eq 0 ]; then
		res=ok
	elif [ "$expect" = cex ] && [ "$errs" -gt 0 ]; then
		res=ok; note=$(grep -m1 -E "assertion violated|acceptance cycle" pan.out)
	else
		res=FAIL; note=$(grep -m1 -E "assertion violated|acceptance cycle" pan.out)
		note=${note:-"expected a counterexample, SPIN found none"}
	fi
	printf 'model: %-4s %-24s %-12s errors %s, %8s states, %s s  (%s)\n' "$res" "$name" "$mode" \
		"$errs" "$st" "$(sed -n 's/.*elapsed time \([0-9.e+]*\).*/\1/p' pan.out | tail -1)" "$*" >result
	[ -n "$note" ] && echo "        $note" >>result
	echo "$res $st" >status
}

run() {
	names+=("$1")
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	( one "$@" ) &
}

# Fixed rules (the default). Safety: every workload, both completion modes,
# and dying responders, in one exhaustive search (init picks the configuration).
run safety           ok  safety       -DCFG_SAFETY
# Liveness under weak fairness: every configuration without early losses,
# and the richest ones with one (a loss the path rule or RACK declares,
# right or wrong), which multiplies the states by ten.
run healthy          ok  ltl:healthy  -DCFG_HEALTHY -DEARLY=0
run healthy-early    ok  ltl:healthy  -DWL=1 -DORDERED=1
run healthy-early-u  ok  ltl:healthy  -DWL=7 -DORDERED=0
run dead             ok  ltl:dead     -DCFG_DEAD -DEARLY=0
run dead-early       ok  ltl:dead     -DWL=1 -DDEAD=2
run deadfail         ok  ltl:deadfail -DCFG_DEADFAIL
# Wire v2's rate grants: the window capped and released at any time, on the
# workloads with every operation (safety) and the READ one (liveness).
run grants           ok  safety       -DWL=1 -DGRANTS=2
run grants-u         ok  safety       -DWL=7 -DORDERED=0 -DGRANTS=2
run grants-healthy   ok  ltl:healthy  -DWL=6 -DEARLY=0 -DGRANTS=2
# RNR (a receive posted late): the refused message restarts in a new epoch
# with new PSNs, its old ones given up as VOIDs. Posted in time (within
# rnr_retry RNR timer periods), everything succeeds: the receive workloads
# in both modes, and with an early loss the two-message one. Never posted,
# with rnr_retry 7 (waits for ever; the RNR timer runs out once, then the
# stream stays held): the WRITE of the other stream succeeds all the same.
run rnr              ok  ltl:healthy  -DCFG_RNR -DRNR_INTIME -DEARLY=0
run rnr-early-u      ok  ltl:healthy  -DWL=8 -DORDERED=0 -DRNR_INTIME
run rnrwrite         ok  ltl:rnrwrite -DCFG_RNRWRITE -DNOPOST -DRNR_RETRY=7 -DHOLDS=1
# The stream-failure rule: out of RNR retries (rnr_retry 1), a SEND fails its
# stream alone: the stream's later SEND is flushed, the WRITE on the other
# stream succeeds and the QPs stay up (receives never posted); with them
# posted late, at any time, every safety property holds.
run streamfail       ok  ltl:streamfail -DCFG_STREAMFAIL -DNOPOST
run streamfail-late  ok  safety       -DCFG_STREAMFAIL
# The learned reordering window (-DREO): early losses only with evidence
# beyond the window, which grows when an ACK's per-path SACK shows the copy
# declared lost arrived. Safety (R1: a loss is proven spurious only if the
# declared copy did arrive) with two early losses, and liveness: the window
# never keeps a real loss from being recovered.
run reo              ok  safety       -DREO -DWL=1 -DEARLY=2
run reo-healthy      ok  ltl:healthy  -DREO -DWL=1 -DORDERED=1
# Asking before resending (-DASK): an RTO expiry may ask instead of declaring
# anything lost, and the answer declares what it did not see. Safety on
# every configuration; liveness with every expiry free to ask (the answer's
# verdict alone repairs a loss) and with a dead peer (asks count as expiries).
run ask              ok  safety       -DASK -DCFG_SAFETY
run ask-healthy      ok  ltl:healthy  -DASK -DWL=1 -DEARLY=0
run ask-dead         ok  ltl:dead     -DASK -DCFG_DEAD -DEARLY=0

# The C rules before each fix: SPIN must find a counterexample.
run bug2-read-no-timer      cex safety      -DWL=6 -DDEAD=2 -DBUG_READ_NO_TIMER
run bug2-read-no-timer-ltl  cex ltl:dead    -DWL=6 -DDEAD=2 -DBUG_READ_NO_TIMER
run bug3-read-ack-sacked    cex safety      -DWL=6 -DBUG_READ_ACK_SACKED
run bug4-rnr-per-packet     cex safety      -DWL=2 -DBUG_RNR_PER_PACKET
run bug-rnr-no-epoch        cex safety      -DWL=2 -DBUG_NO_EPOCH
run bug-rnr-void-not-sent   cex safety      -DWL=2 -DBUG_VOID_NOT_SENT
run bug-rnr-stale           cex ltl:healthy -DWL=2 -DRNR_INTIME -DEARLY=0 -DBUG_STALE_RNR
run bug-rnr-holds-qp        cex ltl:rnrwrite -DCFG_RNRWRITE -DNOPOST -DRNR_RETRY=7 -DHOLDS=1 -DBUG_RNR_HOLDS_QP
run bug-rnr-fails-qp         cex ltl:streamfail -DCFG_STREAMFAIL -DNOPOST -DBUG_RNR_FAILS_QP
run bug5-read-slots         cex ltl:healthy -DWL=5 -DBUG_READ_SLOTS
run bug8-send-done-on-sack  cex safety      -DWL=4 -DBUG_SEND_DONE_ON_SACK
run bug8-recv-err-early     cex safety      -DWL=3 -DBUG_RECV_ERR_EARLY
run bug-early-counts        cex ltl:healthy -DWL=6 -DRETRY=1 -DBUG_EARLY_COUNTS
run bug-reo-any-copy        cex safety      -DREO -DWL=1 -DEARLY=2 -DBUG_REO_ANY_COPY
run bug-ask-no-verdict      cex ltl:healthy -DASK -DWL=1 -DEARLY=0 -DBUG_ASK_NO_VERDICT
run bug-ask-uncounted       cex safety      -DASK -DWL=1 -DDEAD=1 -DBUG_ASK_UNCOUNTED
wait

pass=0 fail=0 states=0
for n in "${names[@]}"; do
	if [ -f "$OUT/$n/status" ]; then
		cat "$OUT/$n/result"
		read -r res st <"$OUT/$n/status"
	else
		echo "model: FAIL $n (no result)"; res=FAIL st=0
	fi
	states=$((states + st))
	if [ "$res" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "model: $states states stored in all, $(( $(date +%s) - t0 )) s"
echo "model: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
