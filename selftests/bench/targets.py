#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Issue 12's point-to-point targets: mroce with the library's defaults against kernel TCP.

    selftests/bench/targets.py [--rounds N] [--secs S] [--mtu 3498|9000] [--out docs/benchmarks.md]

Root. One veth pair between two namespaces, as bench.py sets it up: MTU 3498
(the issue's setup, the largest before jumbo frames) or 9000 (jumbo frames,
AF_XDP multi-buffer); TCP runs on the same link.
The contenders run interleaved, round after round (mroce, TCP, mroce, TCP...),
so that each ratio compares figures taken a few seconds apart: this VM's speed
drifts up to 2x between runs. mroce runs as a user runs it, `mroce-perf client
--test T --size S` and nothing else (no window, path or progress options).

CPU per byte counts every CPU of the machine, both ends and the kernel's work
for them (/proc/stat, busy = everything but idle and iowait), over the client's
run only: the servers are started and stopped outside the window.

Prints each target as met or missed with the median of the rounds' ratios and
every round's ratio; with --out, replaces the section between
<!-- targets: targets.py --> and <!-- /targets --> of the report (or appends it).
"""
import argparse, json, os, re, signal, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (the namespaces, the servers, the tools' paths)

BEGIN, END = "<!-- targets: targets.py -->", "<!-- /targets -->"


def cpu_busy_s():
    """Busy CPU seconds of the whole machine so far (all CPUs)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = v
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def measured(server, client):
    """Start the server, run the client inside a CPU window, stop the server: (client output, CPU s)."""
    srv = B.start_in(*server)
    try:
        c0 = cpu_busy_s()
        out = B.run_in(*client, timeout=300)
        return out, cpu_busy_s() - c0
    finally:
        B.stop(srv)


def mroce(test, size, secs, extra=(), srv_extra=()):
    out, cpu = measured((B.NS_B, [B.PERF, "server", "--dev", "vb", "--addr", B.IP_B] + list(srv_extra),
                         "listening"),
                        (B.NS_A, [B.PERF, "client", "--dev", "va", "--addr", B.IP_B, "--json",
                                  "--test", test, "--size", str(size), "--duration", str(secs)] + list(extra)))
    r = [json.loads(l) for l in out.splitlines() if l.startswith("{")][0]
    nbytes = r["gbit_s"] * 1e9 / 8 * r["seconds"]
    return {"gbps": r["gbit_s"], "mops": r["mops"], "p50": r["lat_us"]["p50"],
            "cpu_s_per_gb": cpu / (nbytes / 1e9) if nbytes else None}


def tcp_bulk(secs):
    out, cpu = measured((B.NS_B, ["iperf3", "-s", "-1", "-B", B.IP_B], None),
                        (B.NS_A, ["iperf3", "-c", B.IP_B, "-t", str(secs), "-J"]))
    d = json.loads(out)["end"]["sum_received"]
    return {"gbps": d["bits_per_second"] / 1e9, "cpu_s_per_gb": cpu / (d["bytes"] / 1e9)}


# (name, target text, measure(round) -> ratio or value, met(x) -> bool)
def targets():
    return [
        ("write_bw", "WRITE 1 MiB throughput >= 2.0x iperf3's", lambda r: r["w"]["gbps"] / r["t"]["gbps"],
         lambda x: x >= 2.0, "x"),
        ("write_cpu", "CPU seconds per GB (all CPUs) <= 0.5x kernel TCP's",
         lambda r: r["w"]["cpu_s_per_gb"] / r["t"]["cpu_s_per_gb"], lambda x: x <= 0.5, "x"),
        ("write_lat", "8-byte WRITE latency p50 <= 0.5x sockperf TCP ping-pong's (mroce on the library's "
         "progress thread, as sockperf does not busy-poll either)",
         lambda r: r["lt"]["p50"] / r["s"]["p50"], lambda x: x <= 0.5, "x"),
        ("write_rate", "8-byte WRITE rate >= 1 M/s", lambda r: r["m"]["mops"], lambda x: x >= 1.0, " M/s"),
        ("read_bw", "READ 1 MiB within 10% of WRITE", lambda r: r["rd"]["gbps"] / r["w"]["gbps"],
         lambda x: x >= 0.9, "x of WRITE"),
    ]


def one_round(secs):
    r = {}
    r["w"] = mroce("write_bw", "1m", secs)
    r["t"] = tcp_bulk(secs)
    # beside, not instead: the same on device memory, into which XDP places the WRITEs
    dm = ["--memory", "dm"]
    r["wh"] = mroce("write_bw", "1m", secs, dm, dm)
    r["rd"] = mroce("read_bw", "1m", secs)
    r["lt"] = mroce("write_lat", 8, secs, ["--progress", "thread"])
    r["l"] = mroce("write_lat", 8, secs)	# mroce-perf's default for latency: it busy-polls
    r["s"] = B.sockperf(secs)
    r["m"] = mroce("write_bw", 8, secs)
    return r


def markers(mtu):
    """The report section's markers: the default MTU keeps the original ones."""
    if mtu == B.MTU:
        return BEGIN, END
    return f"<!-- targets: targets.py mtu={mtu} -->", f"<!-- /targets mtu={mtu} -->"


def report(rounds, mtu):
    begin, end = markers(mtu)
    L = [begin, f"## Issue 12's targets, point to point, MTU {mtu} (`selftests/bench/targets.py --mtu {mtu}`)\n",
         f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {len(rounds)} rounds, "
         "contenders interleaved, mroce with the library's defaults (`mroce-perf client --test T --size S`), "
         "CPU over all CPUs from /proc/stat. The ratio is the median of the rounds'.\n",
         "| target | measured (median) | each round | met |", "|---|---|---|---|"]
    rows, met_all = B.target_rows(rounds, [t[1:] for t in targets()])
    L += rows
    L.append("")
    L.append("| round | mroce WRITE Gbit/s, CPU s/GB | the same on device memory (XDP places, `--memory dm`) | "
             "iperf3 Gbit/s, CPU s/GB | mroce READ Gbit/s | "
             "WRITE 8 B p50 us, progress thread / busy-polling (mroce-perf's default) | sockperf p50 us | "
             "WRITE 8 B M/s |")
    L.append("|---|---|---|---|---|---|---|---|")
    for i, r in enumerate(rounds):
        L.append(f"| {i + 1} | {r['w']['gbps']:.2f}, {r['w']['cpu_s_per_gb']:.2f} | "
                 f"{r['wh']['gbps']:.2f}, {r['wh']['cpu_s_per_gb']:.2f} | "
                 f"{r['t']['gbps']:.2f}, {r['t']['cpu_s_per_gb']:.2f} | {r['rd']['gbps']:.2f} | "
                 f"{r['lt']['p50']:.2f} / {r['l']['p50']:.2f} | {r['s']['p50']:.2f} | {r['m']['mops']:.3f} |")
    L.append(end)
    return "\n".join(L) + "\n", met_all


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=float, default=2)
    ap.add_argument("--mtu", type=int, default=B.MTU, choices=(B.MTU, 9000))
    ap.add_argument("--out", help="the report to put the section in (docs/benchmarks.md)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("targets: needs root (network namespaces, XDP)")
    for t in (B.PERF, "iperf3", "sockperf"):
        if not (os.access(t, os.X_OK) or B.shutil.which(t)):
            sys.exit(f"targets: {t} is missing (make bench installs the tools)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    rounds = []
    try:
        B.veth_pair(a.mtu)
        for i in range(a.rounds):
            print(f"targets: round {i + 1} of {a.rounds}", flush=True)
            rounds.append(one_round(a.secs))
    finally:
        B.cleanup()
    text, _ = report(rounds, a.mtu)
    begin, end = markers(a.mtu)
    B.publish("targets", text, a.out, begin, end)


if __name__ == "__main__":
    main()
