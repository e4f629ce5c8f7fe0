#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Streams target on the emulated fabric: 64 streams over one connection, one stalled.

    selftests/bench/streams_targets.py [--rounds N] [--out docs/benchmarks.md]

Root. The emulated fabric (docs/fabric.md) with 2 hosts and 4 paths delayed
10/20/50/100 us, MTU 1500. One data QP with 64 ordered streams (library
defaults otherwise: no congestion control, rate grants on), rdma_test
--streams: the client keeps 2 SENDs of 64 KiB outstanding on every stream,
the server 4 receives posted on every stream. Each round is two phases of
0.5 s in the same run, interleaved: every stream served, then stream 32's
receiver posting nothing (the server stops reposting its receives). The
figure: the other 63 streams' goodput (their SENDs completed) in the stalled
phase against the served one; the target is a cost under 5%, judged on the
median of the rounds. At the end every stream is served again and every SEND,
the stalled stream's too, must complete; the server checks every 8th message
of each stream by content.

Prints each target as met or missed; with --out, replaces the section between
<!-- targets: streams_targets.py --> and <!-- /targets streams --> of the report.
"""
import argparse, os, re, signal, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

BEGIN, END = "<!-- targets: streams_targets.py -->", "<!-- /targets streams -->"
RT = os.path.join(B.BUILD, "selftests", "rdma_test")
DELAYS = (10, 20, 50, 100)
STREAMS, STALL, MSG = 64, 32, 64 << 10


def run(rounds, phase_ms):
    h0, h1, ip1 = B.fabric_host(0), B.fabric_host(1), "198.18.1.2"
    for p, d in enumerate(DELAYS):
        B.sh([B.FABRIC_SH, "ctl", B.FAB, "path", str(p), "up", f"delay={d}"])
    srv = B.start_in(h1, [RT, "server", "--dev", "eth0", "--addr", ip1, "--streams", str(STREAMS),
                          "--region", str(STREAMS * 4 * MSG)], ready="listening")
    try:
        out = B.run_in(h0, [RT, "client", "--dev", "eth0", "--addr", ip1, "--paths", "4",
                            "--streams", str(STREAMS), "--stall", str(STALL),
                            "--rounds", str(rounds), "--phase-ms", str(phase_ms),
                            "--region", str(STREAMS * MSG)], timeout=60 + rounds * 5)
        if srv.wait(60):
            raise RuntimeError("the streams run failed:\n" + out[-2000:])
        log = next(l for p, l in B.procs if p is srv)
        log.seek(0)
        srv_text = log.read()
    finally:
        B.stop(srv)
    m = re.search(r"server: streams: (\d+) messages checked by content, (\d+) bad", srv_text)
    if not m or m.group(2) != "0":
        raise RuntimeError("the server found bad messages:\n" + srv_text[-1500:])
    res = []
    for line in out.splitlines():
        r = re.search(r"streams round (\d+): the other \d+ streams ([0-9.]+) Gbit/s with all served, "
                      r"([0-9.]+) Gbit/s with stream \d+ stalled", line)
        if r:
            res.append({"served": float(r.group(2)), "stalled": float(r.group(3))})
            print("  " + line.strip(), flush=True)
    tail = re.search(r"restarts (\d+), VOIDs (\d+)", out)
    for r in res:
        r["ratio"] = r["stalled"] / r["served"]
    return res, int(m.group(1)), tail.groups() if tail else ("?", "?")


def targets():
    return [
        ("64 streams over one connection: a stalled stream (its receiver not posting) costs the "
         "others < 5% of their goodput (stalled / served)", lambda r: r["ratio"], lambda x: x >= 0.95, "x"),
        ("... the other 63 streams' goodput, all served, Gbit/s", lambda r: r["served"], lambda x: True, ""),
        ("... the same with stream 32 stalled, Gbit/s", lambda r: r["stalled"], lambda x: True, ""),
    ]


def report(rounds, checked, restarts, voids, phase_ms):
    L = [BEGIN, "## Streams target, emulated fabric (`selftests/bench/streams_targets.py`)\n",
         f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {len(rounds)} rounds in one "
         "run; 2 hosts, 4 paths delayed 10/20/50/100 us, MTU 1500; one QP with 64 ordered streams, "
         "library defaults; 2 SENDs of 64 KiB outstanding per stream, 4 receives posted per stream. "
         f"Each round: {phase_ms} ms with every stream served, then {phase_ms} ms with stream 32's "
         "receiver posting nothing. Goodput: the other 63 streams' SENDs completed. A figure is the "
         f"median of the rounds'. The server checked {checked} messages by content, none bad; the "
         f"stalled stream was refused and restarted {restarts} times ({voids} PSNs given up by VOID), and "
         "every SEND of it completed once it was served again.\n",
         "| target | measured (median) | each round | met |", "|---|---|---|---|"]
    rows, met_all = B.target_rows(rounds, targets())
    L += rows
    L.append(END)
    return "\n".join(L) + "\n", met_all


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--phase-ms", type=int, default=500)
    ap.add_argument("--out", help="the report to put the section in (docs/benchmarks.md)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("streams_targets: needs root (network namespaces, XDP)")
    if not os.access(RT, os.X_OK):
        sys.exit(f"streams_targets: {RT} is missing (run make)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    B.sh([B.FABRIC_SH, "down", B.FAB], check=False)
    B.sh([B.FABRIC_SH, "up", B.FAB, "--hosts", "2", "--paths", "4"])
    try:
        rounds, checked, (restarts, voids) = run(a.rounds, a.phase_ms)
    finally:
        B.cleanup()
        B.sh([B.FABRIC_SH, "down", B.FAB], check=False)
    text, _ = report(rounds, checked, restarts, voids, a.phase_ms)
    B.publish("streams_targets", text, a.out, BEGIN, END)


if __name__ == "__main__":
    main()
