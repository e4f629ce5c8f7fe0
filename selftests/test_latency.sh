#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Root selftests of small-message latency on a clean link: nothing is lost
# on a veth pair, so nothing may be resent and no timer may expire, however
# the host schedules the two ends. 10^4 8-byte round trips of `mroce-perf
# write_lat`, both ends busy-polling (mroce-perf's default for latency), and
# again on the library's progress thread, must each show 0 resends, 0 RTOs
# and 0 duplicates in the client's JSON (the server's resends are the
# client's duplicates: on a lossless link every copy arrives), and no path
# slot retired (one sample that waited out a stall is no slow route). On a
# host whose two cores are shared with other work the ends are descheduled
# for milliseconds: that is the condition tested (docs/transport.md,
# "Scheduling stalls"). A stall longer than any seen before, which no learned
# allowance covers, is asked about, not resent (lib/loss.c, "Asks"): the JSON's
# asks. The p99.9 against kernel TCP is selftests/bench/latency_targets.py's.
# LATENCY_ITERS=N changes the round trips (default 10000).
#
# Measured here before the asks: in 1 run of 4 a stall of 0.8-1.7 ms cost an
# RTO and 9-13 resends; with them, 20 runs of 20 in a row showed zero while
# other work loaded both cores (stalls up to 56 ms). LATENCY_BOUND=1 holds a
# run only to the older bound (30 resends and duplicates, 5 RTOs, 5 paths
# retired) to tell a regression from the class of fault fixed before it
# (150-630 resends, up to 20 RTOs).
. "$(dirname "$0")/lib.sh"

PERF=$BUILD/mroce-perf
ITERS=${LATENCY_ITERS:-10000}

start_server() {
	rm -f "$TMP/srv.log"
	bg b "$PERF" server -d "$IF_B" "$IP_B" "$@" >"$TMP/srv.log" 2>&1
	wait_for "$TMP/srv.log" listening 30 || { cat "$TMP/srv.log"; return 1; }
}

# clean_round_trips ARGS...: ITERS 8-byte write_lat round trips, the client's
# counters from its JSON, all zero.
clean_round_trips() {
	start_server "$@" || return 1
	a timeout 300 "$PERF" client --test write_lat -d "$IF_A" -s 8 -n "$ITERS" --json "$@" "$IP_B" \
		>"$TMP/cli.json" 2>"$TMP/cli.err" || { cat "$TMP/cli.json" "$TMP/cli.err"; return 1; }
	python3 - "$TMP/cli.json" "$ITERS" "${LATENCY_BOUND:-0}" <<'EOF'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][0]
lat = d["lat_us"]
print("figures: %d round trips: %d resent, %d RTOs, %d duplicates, %d paths retired, %d asks; "
      "half round trip p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us"
      % (d["ops"], d["retransmitted"], d["rto_events"], d["duplicates"], d["paths_retired"], d["asks"],
         lat["p50"], lat["p99"], lat["p999"], lat["max"]))
strict = sys.argv[3] != "1"
most = {"retransmitted": 30, "rto_events": 5, "duplicates": 30, "paths_retired": 5}
bad = [k for k in most if d[k] > (0 if strict else most[k])]
if d["ops"] != int(sys.argv[2]):
    bad.append("ops")
sys.exit(("not zero: " if strict else "over the bound: ") + ", ".join(bad) if bad else 0)
EOF
}

t_busy_polling() { clean_round_trips; }
t_progress_thread() { clean_round_trips --progress thread; }

require_root test_latency
[ -x "$PERF" ] || { echo "FAIL: test_latency: $PERF is not built (run make)"; exit 1; }
if [ "${LATENCY_BOUND:-0}" = 1 ]; then
	what="at most 30 resends, 5 RTOs, 5 paths retired (the target, zero, without LATENCY_BOUND=1)"
else
	what="no resend, no RTO, no path retired"
fi
FIGURES='^figures:' run_test "$ITERS 8-byte round trips, both ends busy-polling: $what" \
	t_busy_polling 3498
FIGURES='^figures:' run_test "$ITERS 8-byte round trips on the progress thread: $what" \
	t_progress_thread 3498
summary test_latency
