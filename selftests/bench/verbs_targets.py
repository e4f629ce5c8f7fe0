#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Unmodified perftest over mroce's libibverbs next to mroce-perf, in one run.

    selftests/bench/verbs_targets.py [--rounds N] [--out docs/benchmarks.md]

Root (`make bench-verbs`; part of `make bench`). One veth pair between two
namespaces (bench.py's, MTU 3498, the datapath attached once at both ends).
Per round, interleaved (perftest, mroce-perf, perftest, mroce-perf ...: this
VM's speed drifts between runs), each with the library's defaults:

- Debian's perftest 4.5 as it is, over build/verbs/libibverbs.so.1
  (LD_LIBRARY_PATH): `ib_write_bw -x 0 -s 65536 -n N` and `-s 1048576`,
  `ib_write_lat -x 0 -s 8 -n N`;
- `mroce-perf client --test write_bw --size S --iters N` and `--test
  write_lat --size 8 --iters N`.

Matched: the message size, one QP, 128 WRITEs in flight (perftest's default
tx depth and mroce-perf's default --depth), the same number of operations
(-n / --iters: both time from the first post to the last completion), the
link, and for latency both ends busy-polling (perftest always polls;
mroce-perf's default for *_lat). Not matched (each tool's own default):
perftest inlines small WRITEs (-I, 220 bytes by default on mroce's
max_inline_data), mroce-perf does not.

Bandwidth: perftest's "BW average" (MB/sec, 2^20 bytes) against mroce-perf's
gbit_s; latency: perftest's t_typical (the median) against mroce-perf's
typical (its perftest-style median), both half the round trip. CPU: busy
seconds of all CPUs (/proc/stat: both ends, the kernel's veth and softirq
work included; both ends run on this one machine) over the transfer window
(the measured seconds before the client printed its result), as cores.

Targets: ib_write_bw >= 0.9x mroce-perf write_bw at 64 KiB and at 1 MiB;
ib_write_lat typical <= 1.1x mroce-perf write_lat's (the median of the
rounds' ratios). Prints each as met or missed; with --out, replaces the
section between <!-- targets: verbs_targets.py --> and <!-- /targets verbs -->
of the report. The timed part holds /tmp/bench.lock (flock), as every timed
run on this machine must.
"""
import argparse, fcntl, json, os, re, shutil, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (the namespaces, the servers, the tools' paths)

BEGIN, END = "<!-- targets: verbs_targets.py -->", "<!-- /targets verbs -->"
VERBS = os.path.join(B.BUILD, "verbs")
LOCK = "/tmp/bench.lock"
MB = 1 << 20		# perftest's MB/sec
BW_SIZES = (65536, 1048576)
LAT_SIZE = 8


def verbs_env(dev):
    """perftest over mroce's libibverbs, the namespace's interface its only device; stdbuf so the
    server's "Waiting for client" line reaches the log as printed."""
    return ["env", f"LD_LIBRARY_PATH={VERBS}", f"MROCE_VERBS_DEVICES={dev}", "stdbuf", "-oL"]


def bw_iters(size, target_bytes):
    return max(1000, target_bytes // size)


def window_cpu(sampler, lines, secs, pattern):
    """Busy cores over the secs before the line matching pattern was printed (the transfer)."""
    t_end = next((t for t, l in lines if re.search(pattern, l)), None)
    if t_end is None or not secs:
        return None
    return sampler.cpu(t_end - secs, t_end) / secs


def perftest(tool, size, iters, sampler):
    """ib_write_bw / ib_write_lat between the namespaces; its figures or an error string."""
    args = [tool, "-x", "0", "-F", "-s", str(size), "-n", str(iters)]
    try:
        srv = B.start_in(B.NS_B, verbs_env("vb") + args + ["-d", "mroce_vb"], ready="Waiting for client")
    except RuntimeError as e:
        return {"error": str(e).splitlines()[-1] if str(e) else "server failed"}
    try:
        lines = B.live(B.NS_A, verbs_env("va") + args + ["-d", "mroce_va", B.IP_B], timeout=600)
    except RuntimeError as e:
        return {"error": " | ".join(str(e).splitlines()[-3:])}
    finally:
        B.stop(srv)
    text = [l for _, l in lines]
    hdr = next((i for i, l in enumerate(text) if l.strip().startswith("#bytes")), None)
    if hdr is None or hdr + 1 >= len(text):
        return {"error": "no result line: " + " | ".join(text[-3:])}
    v = text[hdr + 1].split()
    # the path MTU perftest chose from the port (mroce's packets are that size)
    mtu = next((m.group(1) for m in (re.search(r"Mtu\s*:\s*(\d+)", l) for l in text) if m), None)
    if tool == "ib_write_bw":	# #bytes #iterations BW_peak BW_average MsgRate (MB/sec)
        gbps = float(v[3]) * MB * 8 / 1e9
        secs = size * iters / (float(v[3]) * MB) if float(v[3]) else None
        return {"gbps": gbps, "cpu": window_cpu(sampler, lines, secs, re.escape(text[hdr + 1])), "mtu": mtu}
    # #bytes #iterations t_min t_max t_typical t_avg t_stdev p99 p99.9 (usec)
    return {"typical": float(v[4]), "avg": float(v[5]), "p99": float(v[7]), "p999": float(v[8]),
            "cpu": None, "mtu": mtu}


def mroce_perf(test, size, iters, sampler):
    args = ["--test", test, "--size", str(size), "--iters", str(iters)]
    try:
        srv = B.start_in(B.NS_B, [B.PERF, "server", "--dev", "vb", "--addr", B.IP_B], ready="listening")
    except RuntimeError as e:
        return {"error": str(e).splitlines()[-1]}
    try:
        lines = B.live(B.NS_A, [B.PERF, "client", "--dev", "va", "--addr", B.IP_B, "--json"] + args, timeout=600)
    except RuntimeError as e:
        return {"error": " | ".join(str(e).splitlines()[-3:])}
    finally:
        B.stop(srv)
    r = [json.loads(l) for _, l in lines if l.startswith("{")][0]
    if test == "write_bw":
        return {"gbps": r["gbit_s"], "cpu": window_cpu(sampler, lines, r["seconds"], r"^\{")}
    lat = r["lat_us"]
    return {"typical": lat["typical"], "avg": lat["avg"], "p99": lat["p99"], "p999": lat["p999"],
            "cpu": None}


def ratio(a, b):
    return None if a is None or not b else a / b


def rows():
    """(key, text, A's figure, B's figure, unit, met(ratio))."""
    return [
        ("bw64k", "`ib_write_bw -x 0 -s 65536` / `mroce-perf write_bw --size 65536`, >= 0.9x",
         "gbps", "Gbit/s", lambda x: x >= 0.9),
        ("bw1m", "`ib_write_bw -x 0 -s 1048576` / `mroce-perf write_bw --size 1048576`, >= 0.9x",
         "gbps", "Gbit/s", lambda x: x >= 0.9),
        ("lat", "`ib_write_lat -x 0 -s 8` typical / `mroce-perf write_lat --size 8` typical, <= 1.1x",
         "typical", "us", lambda x: x <= 1.1),
    ]


def judge(rounds):
    out = []
    for key, text, fig, unit, ok in rows():
        rs = [ratio(r[key]["verbs"].get(fig), r[key]["mroce"].get(fig)) for r in rounds]
        xs = [x for x in rs if x is not None]
        m = B.median(xs)
        out.append((key, text, fig, unit, xs, m, m is not None and ok(m)))
    return out


def cell(d, fig, unit):
    if "error" in d:
        return f"failed: {d['error'][:120]}"
    s = f"{B.fmt(d.get(fig))} {unit}"
    if d.get("cpu") is not None:
        s += f", CPU {d['cpu']:.2f} cores"
    if fig == "typical":
        s += f" (avg {B.fmt(d['avg'])}, p99 {B.fmt(d['p99'])}, p99.9 {B.fmt(d['p999'])})"
    if d.get("mtu"):
        s += f", path MTU {d['mtu']}"
    return s


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def report(rounds, iters, load):
    L = [BEGIN, "## Unmodified perftest over mroce's libibverbs (`selftests/bench/verbs_targets.py`)\n",
         f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {len(rounds)} rounds, "
         f"perftest and mroce-perf interleaved on bench.py's veth pair (MTU {B.MTU}), the library's defaults. "
         "perftest 4.5 from Debian, unmodified, over build/verbs/libibverbs.so.1 (`LD_LIBRARY_PATH`). Matched: "
         "message size, 1 QP, 128 WRITEs in flight (both tools' default), the same operation count "
         f"({', '.join(f'{s} B: {n}' for s, n in iters.items())}), busy-polling for latency. Not matched: "
         "perftest inlines WRITEs up to its inline size, mroce-perf never does. CPU: busy cores of the "
         "whole machine (both ends, /proc/stat) over the transfer window. Ratio: perftest over "
         f"mroce-perf, the median of the rounds'. The machine's 1-minute load average before and after: "
         f"{load[0]} / {load[1]} (2 CPUs: above 2, other work ran beside the benchmark).\n",
         "| target | ratio (median) | each round | met |", "|---|---|---|---|"]
    met_all = True
    for key, text, fig, unit, xs, m, met in judge(rounds):
        met_all &= met
        L.append(f"| {text} | {B.fmt(m)} | {', '.join(f'{x:.2f}' for x in xs) or 'n/a'} | "
                 f"{'met' if met else 'missed'} |")
    L += ["", "| round | case | perftest over mroce's libibverbs | mroce-perf |", "|---|---|---|---|"]
    for i, r in enumerate(rounds):
        for key, text, fig, unit, _ in rows():
            L.append(f"| {i + 1} | {key} | {cell(r[key]['verbs'], fig, unit)} | {cell(r[key]['mroce'], fig, unit)} |")
    L.append(END)
    return "\n".join(L) + "\n", met_all


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bytes", type=int, default=4 << 30, help="bytes per bandwidth run (default 4 GiB)")
    ap.add_argument("--lat-iters", type=int, default=10000)
    ap.add_argument("--out", help="the report to put the section in (docs/benchmarks.md)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("verbs_targets.py: needs root (network namespaces, XDP)")
    for tool in ("ib_write_bw", "ib_write_lat"):
        if not shutil.which(tool):
            sys.exit(f"verbs_targets.py: {tool} is not installed (apt-get install perftest)")
    if not os.path.exists(os.path.join(VERBS, "libibverbs.so.1")):
        sys.exit(f"verbs_targets.py: {VERBS}/libibverbs.so.1 is not built (make verbs)")
    iters = {s: bw_iters(s, a.bytes) for s in BW_SIZES}
    iters[LAT_SIZE] = a.lat_iters
    cases = [("bw64k", "ib_write_bw", "write_bw", 65536), ("bw1m", "ib_write_bw", "write_bw", 1048576),
             ("lat", "ib_write_lat", "write_lat", LAT_SIZE)]
    rounds = []
    lock = open(LOCK, "w")
    try:
        B.veth_pair(B.MTU)
        print(f"verbs_targets: waiting for {LOCK}", flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)	# the timed part: no other timed run, no build
        load = [loadavg()]
        sampler = B.Sampler()
        try:
            for i in range(a.rounds):
                r = {}
                for key, ptool, mtest, size in cases:	# A B, case by case: interleaved
                    r[key] = {"verbs": perftest(ptool, size, iters[size], sampler),
                              "mroce": mroce_perf(mtest, size, iters[size], sampler)}
                    fig = "gbps" if mtest == "write_bw" else "typical"
                    unit = "Gbit/s" if mtest == "write_bw" else "us"
                    print(f"round {i + 1} {key}: perftest {cell(r[key]['verbs'], fig, unit)}; "
                          f"mroce-perf {cell(r[key]['mroce'], fig, unit)}", flush=True)
                rounds.append(r)
        finally:
            sampler.stop.set()
            load.append(loadavg())
            fcntl.flock(lock, fcntl.LOCK_UN)
    finally:
        B.cleanup()
        lock.close()
    text, met_all = report(rounds, iters, load)
    B.publish("verbs_targets", text, a.out, BEGIN, END)
    for key, text, fig, unit, xs, m, met in judge(rounds):
        print(f"{'met' if met else 'missed'}: {text}: {B.fmt(m)}x (rounds: {', '.join(f'{x:.2f}' for x in xs)})")
    sys.exit(0 if met_all else 1)


if __name__ == "__main__":
    main()
