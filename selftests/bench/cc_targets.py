#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Congestion control on by default: what it costs a clean pair.

    selftests/bench/cc_targets.py [--rounds N] [--secs S] [--out docs/benchmarks.md]

Root. One veth pair between two namespaces, as bench.py sets it up (MTU 3498).
`mroce-perf client --test write_bw --size 1m` with the library's defaults
(congestion control on) and with `--cc none` (the window at its cap, as before
congestion control was on by default), interleaved round after round (A B A B),
so each ratio compares figures taken seconds apart: this VM's speed drifts.
A clean veth pair marks no ECN, so what the default can cost is its slow start
and any cut its delay and loss rules make on a software path's noisy RTTs.

Prints the target as met or missed on the median of the rounds' ratios, with
every round's; with --out, replaces the section between <!-- targets: cc_targets.py -->
and <!-- /targets cc --> of the report (or appends it).
"""
import argparse, json, os, signal, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

BEGIN, END = "<!-- targets: cc_targets.py -->", "<!-- /targets cc -->"


def write_bw(secs, cc):
    srv = B.start_in(B.NS_B, [B.PERF, "server", "--dev", "vb", "--addr", B.IP_B], "listening")
    try:
        out = B.run_in(B.NS_A, [B.PERF, "client", "--dev", "va", "--addr", B.IP_B, "--json", "--test",
                                "write_bw", "--size", "1m", "--duration", str(secs)] +
                       (["--cc", cc] if cc else []), timeout=300)
    finally:
        B.stop(srv)
    r = [json.loads(line) for line in out.splitlines() if line.startswith("{")][0]
    return r["gbit_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--secs", type=float, default=2)
    ap.add_argument("--out", help="the report to put the section in (docs/benchmarks.md)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("cc_targets: needs root (network namespaces, XDP)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    rounds = []
    try:
        B.veth_pair(B.MTU)
        for i in range(a.rounds):
            print(f"cc_targets: round {i + 1} of {a.rounds}", flush=True)
            r = {"on": write_bw(a.secs, None), "off": write_bw(a.secs, "none")}
            print(f"  default {r['on']:.2f} Gbit/s, --cc none {r['off']:.2f} Gbit/s", flush=True)
            rounds.append(r)
    finally:
        B.cleanup()
    targets = [("a clean pair keeps >= 0.97x its WRITE 1 MiB throughput with congestion control on "
                "by default (against `--cc none`)", lambda r: r["on"] / r["off"], lambda x: x >= 0.97, "x")]
    rows, _ = B.target_rows(rounds, targets)
    L = [BEGIN, "## Congestion control on by default, a clean pair (`selftests/bench/cc_targets.py`)\n",
         f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {len(rounds)} rounds, "
         "interleaved (defaults, then `--cc none`), `mroce-perf client --test write_bw --size 1m`, "
         f"{a.secs:g} s each, veth MTU {B.MTU}. The ratio is the median of the rounds'.\n",
         "| target | measured (median) | each round | met |", "|---|---|---|---|"] + rows + [""]
    L += ["| round | defaults Gbit/s | `--cc none` Gbit/s |", "|---|---|---|"]
    L += [f"| {i + 1} | {r['on']:.2f} | {r['off']:.2f} |" for i, r in enumerate(rounds)]
    L.append(END)
    B.publish("cc_targets", "\n".join(L) + "\n", a.out, BEGIN, END)


if __name__ == "__main__":
    main()
