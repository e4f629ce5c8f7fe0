#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Issue 13's loss targets on the emulated fabric: goodput kept under random loss.

    selftests/bench/loss_targets.py [--rounds N] [--secs S] [--out docs/benchmarks.md]

Root. The emulated fabric (docs/fabric.md) with 2 hosts and 4 paths delayed
10/20/50/100 us, MTU 1500, the same loss on every path both ways, as bench.py's
loss table. Per round and loss rate the contenders run interleaved: mroce as a
user runs it (`mroce-perf client --test write_bw --size 1m`, the library's
defaults: selective repeat sprayed over 4 paths), mroce go-back-N on one path
(`--gbn --paths 1`), and kernel TCP (iperf3) through the same fabric. Each
ratio divides a figure by the clean one of the same round; the report gives
the median of the rounds' ratios and every round's. Timeouts are mroce's
`rto_events` against the packets it sent (`tx_pkts`).

Prints each target as met or missed; with --out, replaces the section between
<!-- targets: loss_targets.py --> and <!-- /targets loss --> of the report.
"""
import argparse, os, signal, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (the fabric, the servers, the tools' paths)

BEGIN, END = "<!-- targets: loss_targets.py -->", "<!-- /targets loss -->"
LOSSES = ("0", "0.1", "1", "10")
DELAYS = (10, 20, 50, 100)


def set_loss(loss):
    for p, d in enumerate(DELAYS):
        B.sh([B.FABRIC_SH, "ctl", B.FAB, "path", str(p), f"delay={d}", f"loss={loss}%"])


def one_round(secs):
    h0, h1, ip1 = B.fabric_host(0), B.fabric_host(1), "198.18.1.2"
    r = {}
    for loss in LOSSES:
        set_loss(loss)
        m = B.mroce_perf(h1, h0, "eth0", "eth0", ip1,
                         ["--test", "write_bw", "--size", "1m", "--duration", str(secs)])[0]
        g = B.mroce_perf(h1, h0, "eth0", "eth0", ip1,
                         ["--test", "write_bw", "--size", "1m", "--gbn", "--paths", "1",
                          "--duration", str(secs)])[0]
        t = B.iperf3(h1, h0, ip1, secs)
        r[loss] = {"mroce": m["gbit_s"], "tx": m["tx_pkts"], "rto": m["rto_events"],
                   "resent": m["retransmitted"], "gbn": g["gbit_s"], "tcp": t}
        print(f"  loss {loss}%: mroce {m['gbit_s']:.2f} Gbit/s ({m['rto_events']} timeouts in "
              f"{m['tx_pkts']} packets), go-back-N {g['gbit_s']:.2f}, TCP {t:.2f}", flush=True)
    return r


def kept(r, loss, who="mroce"):
    return r[loss][who] / r["0"][who] if r["0"][who] else None


def targets():
    return [
        ("0.1% loss: goodput >= 0.99x the clean figure", lambda r: kept(r, "0.1"), lambda x: x >= 0.99, "x"),
        ("1% loss: goodput >= 0.95x the clean figure (Meta reports ~0.86)", lambda r: kept(r, "1"),
         lambda x: x >= 0.95, "x"),
        ("10% loss: goodput >= 0.5x the clean figure", lambda r: kept(r, "10"), lambda x: x >= 0.5, "x"),
        ("10% loss: more of the clean figure kept than TCP keeps (mroce's share / TCP's)",
         lambda r: kept(r, "10") / kept(r, "10", "tcp"), lambda x: x > 1.0, "x"),
        ("1% loss: timeouts per 10^4 packets sent < 1", lambda r: r["1"]["rto"] * 1e4 / r["1"]["tx"],
         lambda x: x < 1.0, ""),
        ("sprayed beats go-back-N at every loss rate (the smallest ratio of the rates)",
         lambda r: min(r[l]["mroce"] / r[l]["gbn"] for l in LOSSES if l != "0"), lambda x: x > 1.0, "x"),
        ("sprayed beats kernel TCP at every loss rate (the smallest ratio of the rates)",
         lambda r: min(r[l]["mroce"] / r[l]["tcp"] for l in LOSSES if l != "0"), lambda x: x > 1.0, "x"),
    ]


def report(rounds):
    L = [BEGIN, "## Issue 13's loss targets, emulated fabric (`selftests/bench/loss_targets.py`)\n",
         f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {len(rounds)} rounds; "
         "2 hosts, 4 paths delayed 10/20/50/100 us, MTU 1500, the loss on every path both ways; "
         "per loss rate mroce (the library's defaults), mroce go-back-N on one path and iperf3 "
         "interleaved. A ratio is the median of the rounds'.\n",
         "| target | measured (median) | each round | met |", "|---|---|---|---|"]
    rows, met_all = B.target_rows(rounds, targets())
    L += rows
    L.append("")
    L.append("| round | loss | mroce Gbit/s (kept) | timeouts / packets sent | resent | "
             "go-back-N Gbit/s (kept) | TCP Gbit/s (kept) |")
    L.append("|---|---|---|---|---|---|---|")
    for i, r in enumerate(rounds):
        for l in LOSSES:
            v = r[l]
            L.append(f"| {i + 1} | {l}% | {v['mroce']:.2f} ({kept(r, l):.2f}) | {v['rto']} / {v['tx']} | "
                     f"{v['resent']} | {v['gbn']:.2f} ({kept(r, l, 'gbn'):.2f}) | "
                     f"{v['tcp']:.2f} ({kept(r, l, 'tcp'):.2f}) |")
    L.append(END)
    return "\n".join(L) + "\n", met_all


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=float, default=3)
    ap.add_argument("--out", help="the report to put the section in (docs/benchmarks.md)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("loss_targets: needs root (network namespaces, XDP)")
    for t in (B.PERF, "iperf3"):
        if not (os.access(t, os.X_OK) or B.shutil.which(t)):
            sys.exit(f"loss_targets: {t} is missing (make bench installs the tools)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    rounds = []
    B.sh([B.FABRIC_SH, "down", B.FAB], check=False)
    B.sh([B.FABRIC_SH, "up", B.FAB, "--hosts", "2", "--paths", "4"])
    try:
        for i in range(a.rounds):
            print(f"loss_targets: round {i + 1} of {a.rounds}", flush=True)
            rounds.append(one_round(a.secs))
    finally:
        B.sh([B.FABRIC_SH, "down", B.FAB], check=False)
    text, _ = report(rounds)
    B.publish("loss_targets", text, a.out, BEGIN, END)


if __name__ == "__main__":
    main()
