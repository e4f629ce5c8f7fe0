#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Plane failure targets on the emulated fabric: one plane of two, and of four, fails.

    selftests/bench/planes_targets.py [--rounds N] [--out docs/benchmarks.md]

Root. The emulated fabric (docs/fabric.md) with 2 hosts and N planes (eth0 on
the first switch, eth1..eth3 on switches of their own), 4 paths per plane,
each path limited to 250 Mbit/s. Per round and plane count, rdma_test streams
a 384 MiB WRITE over 8 paths with the library's defaults; 0.4 s in, every
path of the last plane goes down, and 0.6 s later comes back. Goodput is
measured where the data lands: the server's --timeline samples its receive
counters every 100 us, and goodput over a window is the data packets that
arrived in it, less duplicates. The clean figure is the goodput over the 50
ms before the failure. Figures: the time from the failure to the end of the
first 2 ms window with at least (N-1)/N of the clean figure (target: 5 ms),
the goodput over the 5 ms from then (against the clean figure), and the time
from the plane's return to the end of the first 10 ms window with 90% of the
clean figure (target: 1 s).

Prints each target as met or missed; with --out, replaces the section between
<!-- targets: planes_targets.py --> and <!-- /targets planes --> of the report.
"""
import argparse, os, re, signal, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

BEGIN, END = "<!-- targets: planes_targets.py -->", "<!-- /targets planes -->"
RT = os.path.join(B.BUILD, "selftests", "rdma_test")
SIZE = 384 << 20
STEP, PRE, SAMPLE_US = 1e5, 50e6, 100	# ns, ns, us
DOWN_WIN, UP_WIN, UP_FRACTION = 2e6, 10e6, 0.9


def rate(tl, t0, t1):
    return (B.interp(tl, t1) - B.interp(tl, t0)) / ((t1 - t0) / 1e9)


def ctl(plane, *args):
    if plane == 0:
        return B.sh([B.FABRIC_SH, "ctl", B.FAB] + list(args)).stdout
    return B.sh([B.FABRIC_SH, "ctl-plane", B.FAB, str(plane)] + list(args)).stdout


def first_at(tl, t0, win, level):
    """End of the first window (length win, moving by STEP) after t0 with goodput >= level."""
    t = t0 + win
    while t <= tl[-1][0]:
        if rate(tl, t - win, t) >= level:
            return t
        t += STEP
    return None


def one_round(tmp, n):
    h0, h1, ip1 = B.fabric_host(0), B.fabric_host(1), "198.18.1.2"
    last = n - 1
    for pl in range(n):
        ctl(pl, "path", "all", "up", "rate=250m")
    planes = sum((["--plane", f"eth{pl}"] for pl in range(1, n)), [])
    go, tlp = os.path.join(tmp, "go"), os.path.join(tmp, "srv_timeline")
    for f in (go, tlp):
        if os.path.exists(f):
            os.unlink(f)
    srv = B.start_in(h1, [RT, "server", "--dev", "eth0", *planes, "--addr", ip1, "--region",
                          str(SIZE + (16 << 20)), "--timeline", tlp, "--timeline-us", str(SAMPLE_US)],
                     ready="listening")
    cli = None
    try:
        cli = B.start_in(h0, [RT, "client", "--dev", "eth0", *planes, "--addr", ip1, "--paths", "8",
                              "--stream", str(SIZE), "--region", str(SIZE + (16 << 20)), "--go-file", go],
                         ready="streaming, ready")
        open(go, "w").close()
        time.sleep(0.4)
        t_down = int(re.search(r"t_ns=(\d+)", ctl(last, "path", "all", "down")).group(1))
        time.sleep(0.6)
        t_up = int(re.search(r"t_ns=(\d+)", ctl(last, "path", "all", "up")).group(1))
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
    m = re.search(r"planes down (\d+) rejoined (\d+)", text)
    srtt = int(re.search(r"srtt (\d+) us", text).group(1))
    tl = []
    for line in open(tlp):
        f = line.split()
        if len(f) > 6 and f[1] == "rx" and f[5] == "dup":
            tl.append((int(f[0]), int(f[2]) - int(f[6])))
    pre = rate(tl, t_down - PRE, t_down)
    need = (n - 1) / n
    t_ok = first_at(tl, t_down, DOWN_WIN, need * pre)
    t_back = first_at(tl, t_up, UP_WIN, UP_FRACTION * pre)
    r = {"n": n, "pre": pre, "srtt": srtt, "need": need,
         "down_ms": (t_ok - t_down) / 1e6 if t_ok else float("inf"),
         "kept": rate(tl, t_ok, t_ok + 5e6) / pre if t_ok else 0.0,
         "degraded": rate(tl, t_down + 100e6, t_up) / pre,
         "up_ms": (t_back - t_up) / 1e6 if t_back else float("inf"),
         "downs": int(m.group(1)) if m else -1, "rejoins": int(m.group(2)) if m else -1}
    print(f"  {n} planes, plane {last} down: clean {pre / 1e3:.0f} kpkt/s; >= {need:.2f} of it after "
          f"{r['down_ms']:.1f} ms, the 5 ms from then {r['kept']:.2f}; while down {r['degraded']:.2f}; "
          f"back to 90% {r['up_ms']:.1f} ms after its return; planes down {r['downs']} rejoined "
          f"{r['rejoins']} (srtt {srtt} us)", flush=True)
    return r


def targets(n):
    return [
        (f"one plane of {n} fails: goodput >= {n - 1}/{n} of the clean figure within 5 ms (ms)",
         lambda r: r["down_ms"], lambda x: x <= 5.0, " ms"),
        (f"... goodput over the 5 ms from then (of clean; >= {(n - 1) / n:.2f})",
         lambda r: r["kept"], lambda x: x >= (n - 1) / n, ""),
        ("... goodput while it is down, after the first 100 ms (of clean)",
         lambda r: r["degraded"], lambda x: True, ""),
        ("... back to the full figure (90%) within 1 s of the plane's return (ms)",
         lambda r: r["up_ms"], lambda x: x <= 1000.0, " ms"),
    ]


def report(by_n):
    L = [BEGIN, "## Plane failure targets, emulated fabric (`selftests/bench/planes_targets.py`)\n",
         f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: "
         f"{len(next(iter(by_n.values())))} rounds per plane count, planes counts interleaved; 2 hosts, "
         "each plane its own switch with 4 paths of 250 Mbit/s, MTU 1500; a 384 MiB WRITE over 8 paths "
         "with the library's defaults, the last plane down 0.4 s in and back 0.6 s later. Goodput where "
         "the data lands (the server's receive counters every 100 us, less duplicates), against the 50 "
         "ms before the failure. A figure is the median of the rounds'.\n",
         "| target | measured (median) | each round | met |", "|---|---|---|---|"]
    met_all = True
    for n, rounds in by_n.items():
        rows, met = B.target_rows(rounds, targets(n))
        L += rows
        met_all &= met
    L += ["", "| planes | round | clean, kpkt/s | >= (N-1)/N after | 5 ms from then | while down | "
          "back to 90% after return | planes down / rejoined | srtt |", "|---|---|---|---|---|---|---|---|---|"]
    for n, rounds in by_n.items():
        for i, r in enumerate(rounds):
            L.append(f"| {n} | {i + 1} | {r['pre'] / 1e3:.0f} | {r['down_ms']:.1f} ms | {r['kept']:.2f} | "
                     f"{r['degraded']:.2f} | {r['up_ms']:.1f} ms | {r['downs']} / {r['rejoins']} | "
                     f"{r['srtt']} us |")
    L.append(END)
    return "\n".join(L) + "\n", met_all


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", help="the report to put the section in (docs/benchmarks.md)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("planes_targets: needs root (network namespaces, XDP)")
    if not os.access(RT, os.X_OK):
        sys.exit(f"planes_targets: {RT} is missing (run make)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    tmp = f"/tmp/planes-{os.getpid()}"
    os.makedirs(tmp, exist_ok=True)
    by_n = {2: [], 4: []}
    B.sh([B.FABRIC_SH, "down", B.FAB], check=False)
    B.sh([B.FABRIC_SH, "up", B.FAB, "--hosts", "2", "--paths", "4"])
    try:
        for pl in (1, 2, 3):
            B.sh([B.FABRIC_SH, "plane", B.FAB, str(pl), "--paths", "4"])
        for i in range(a.rounds):
            for n in by_n:	# interleaved: 2 4 2 4 ...
                print(f"planes_targets: round {i + 1} of {a.rounds}, {n} planes", flush=True)
                by_n[n].append(one_round(tmp, n))
    finally:
        B.cleanup()
        B.sh([B.FABRIC_SH, "down", B.FAB], check=False)
        B.sh(["rm", "-rf", tmp], check=False)
    text, _ = report(by_n)
    B.publish("planes_targets", text, a.out, BEGIN, END)


if __name__ == "__main__":
    main()
