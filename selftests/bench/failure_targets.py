#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Issue 13's path failure target on the emulated fabric: one path of four fails mid-transfer.

    selftests/bench/failure_targets.py [--rounds N] [--out docs/benchmarks.md]

Root. The emulated fabric (docs/fabric.md) with 2 hosts and 4 paths delayed
10/20/50/100 us, MTU 1500. Per round, rdma_test streams a 384 MiB WRITE over 4
paths (its defaults otherwise: the library's, no congestion control); 0.4 s in,
the busiest path goes down. Goodput at t is what was acknowledged over the
millisecond before t (the client's --timeline, sampled every millisecond); the
level before is the goodput over the 50 ms before the failure. Recovery is how
long after the failure the 1 ms goodput first reaches 80% of that level again,
looked at every 0.1 ms, in milliseconds and in the QP's RTTs (its smoothed RTT
at the end). A 1 ms window reaching 80% means at most 0.2 ms of it was lost:
the resolution is about a millisecond either way.

Prints each target as met or missed; with --out, replaces the section between
<!-- targets: failure_targets.py --> and <!-- /targets failure --> of the report.
"""
import argparse, os, re, signal, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

BEGIN, END = "<!-- targets: failure_targets.py -->", "<!-- /targets failure -->"
RT = os.path.join(B.BUILD, "selftests", "rdma_test")
DELAYS = (10, 20, 50, 100)
SIZE = 384 << 20
WINDOW, STEP, PRE, FRACTION = 1e6, 1e5, 50e6, 0.8	# ns


def acked_at(tl, t):
    prev = tl[0]
    for s in tl:
        if s[0] >= t:
            if s[0] == prev[0]:
                return s[1]
            return prev[1] + (s[1] - prev[1]) * (t - prev[0]) / (s[0] - prev[0])
        prev = s
    return tl[-1][1]


def rate(tl, t0, t1):
    return (acked_at(tl, t1) - acked_at(tl, t0)) / ((t1 - t0) / 1e9)


def busiest_path():
    best, path = -1, 0
    for line in B.sh([B.FABRIC_SH, "ctl", B.FAB, "stats"]).stdout.splitlines():
        f = line.split()
        if len(f) > 2 and f[0].isdigit() and f[1] == "up" and int(f[2]) > best:
            best, path = int(f[2]), int(f[0])
    return path


def one_round(tmp):
    h0, h1, ip1 = B.fabric_host(0), B.fabric_host(1), "198.18.1.2"
    for p, d in enumerate(DELAYS):
        B.sh([B.FABRIC_SH, "ctl", B.FAB, "path", str(p), "up", f"delay={d}"])
    go, tlp = os.path.join(tmp, "go"), os.path.join(tmp, "timeline")
    for f in (go, tlp):
        if os.path.exists(f):
            os.unlink(f)
    srv = B.start_in(h1, [RT, "server", "--dev", "eth0", "--addr", ip1, "--region", str(SIZE + (16 << 20))],
                     ready="listening")
    cli = None
    try:
        cli = B.start_in(h0, [RT, "client", "--dev", "eth0", "--addr", ip1, "--paths", "4", "--stream",
                              str(SIZE), "--region", str(SIZE + (16 << 20)), "--go-file", go,
                              "--timeline", tlp], ready="streaming, ready")
        open(go, "w").close()
        time.sleep(0.4)
        path = busiest_path()
        out = B.sh([B.FABRIC_SH, "ctl", B.FAB, "path", str(path), "down"]).stdout
        t_down = int(re.search(r"t_ns=(\d+)", out).group(1))
        if cli.wait(120) or srv.wait(60):
            raise RuntimeError("the stream failed")
        log = next(l for p, l in B.procs if p is cli)
        log.seek(0)
        text = log.read()
    finally:
        for p in (cli, srv):
            if p:
                B.stop(p)
    if "stream verified" not in text:
        raise RuntimeError("the stream was not verified:\n" + text[-1500:])
    srtt = int(re.search(r"srtt (\d+) us", text).group(1))
    tl = [tuple(map(int, l.split()[:2])) for l in open(tlp) if l.strip()]
    pre = rate(tl, t_down - PRE, t_down)
    t, rec = t_down + WINDOW, None
    while t <= tl[-1][0]:
        if rate(tl, t - WINDOW, t) >= FRACTION * pre:
            rec = (t - t_down) / 1e6
            break
        t += STEP
    r = {"pre": pre * 8 / 1e9, "ms": rec, "srtt": srtt, "path": path,
         "rtts": rec * 1000 / srtt if rec is not None and srtt else float("inf")}
    print(f"  path {path} down: before {r['pre']:.2f} Gbit/s, back to 80% after "
          f"{'never' if rec is None else f'{rec:.1f} ms'} (srtt {srtt} us)", flush=True)
    return r


def fmt_ms(ms):
    return "never" if ms is None else f"{ms:.1f} ms"


def targets():
    return [
        ("one path of four fails: goodput back to >= 80% within 3 RTTs (RTTs)",
         lambda r: r["rtts"], lambda x: x <= 3, ""),
        ("... the same, in milliseconds (1 ms windows; issue 13 measured 9 ms before)",
         lambda r: float("inf") if r["ms"] is None else r["ms"], lambda x: True, " ms"),
    ]


def report(rounds):
    L = [BEGIN, "## Issue 13's path failure target, emulated fabric (`selftests/bench/failure_targets.py`)\n",
         f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {len(rounds)} rounds; "
         "2 hosts, 4 paths delayed 10/20/50/100 us, MTU 1500; a 384 MiB WRITE over 4 paths, the "
         "busiest path down 0.4 s in. Recovery: the first 1 ms window (looked at every 0.1 ms) "
         "with 80% of the goodput of the 50 ms before; the resolution is about a millisecond, "
         "several RTTs here. A figure is the median of the rounds'.\n",
         "| target | measured (median) | each round | met |", "|---|---|---|---|"]
    rows, met_all = B.target_rows(rounds, targets())
    L += rows
    L += ["", "| round | path down | goodput before, Gbit/s | back to 80% after | srtt |",
          "|---|---|---|---|---|"]
    for i, r in enumerate(rounds):
        L.append(f"| {i + 1} | {r['path']} | {r['pre']:.2f} | "
                 f"{fmt_ms(r['ms'])} | {r['srtt']} us |")
    L.append(END)
    return "\n".join(L) + "\n", met_all


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", help="the report to put the section in (docs/benchmarks.md)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("failure_targets: needs root (network namespaces, XDP)")
    if not os.access(RT, os.X_OK):
        sys.exit(f"failure_targets: {RT} is missing (run make)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    tmp = f"/tmp/failure-{os.getpid()}"
    os.makedirs(tmp, exist_ok=True)
    rounds = []
    B.sh([B.FABRIC_SH, "down", B.FAB], check=False)
    B.sh([B.FABRIC_SH, "up", B.FAB, "--hosts", "2", "--paths", "4"])
    try:
        for i in range(a.rounds):
            print(f"failure_targets: round {i + 1} of {a.rounds}", flush=True)
            rounds.append(one_round(tmp))
    finally:
        B.cleanup()
        B.sh([B.FABRIC_SH, "down", B.FAB], check=False)
        B.sh(["rm", "-rf", tmp], check=False)
    text, _ = report(rounds)
    for line in text.splitlines():
        if line.startswith("|"):
            print(line)
    if a.out:
        B.replace_section(a.out, BEGIN, END, text)
        print(f"failure_targets: section written to {a.out}")


if __name__ == "__main__":
    main()
