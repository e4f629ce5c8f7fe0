#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The collectives' algorithm table against the choices it replaced, in one run.

    selftests/bench/coll_algos_targets.py [--rounds N] [--quick] [--out docs/benchmarks.md]

Root. (`make bench` runs it; `make bench-coll-algos` alone.)

libmroce-coll picks each operation's algorithm from one table by kind, size
and rank count (coll/select.c, docs/collectives.md "Algorithms"). The
algorithms for many ranks must not cost the few ranks this machine has:
here, for 2 and 4 ranks on a bridge (MTU 3498) and 4 ranks on the emulated
fabric (4 paths delayed 10/20/50/100 us), every collective of
build/mroce-coll-perf at a few sizes runs

  A  as a user runs it: the table's choice (no MROCE_COLL_ALGO), and
  B  the choice the table made before the algorithms for scale
     (recursive doubling up to 16 KiB, then the ring, for all-reduce; the
     ring for reduce-scatter and all-gather; a binomial tree up to 16 KiB,
     then a chain, for broadcast; pairwise all-to-all), pinned by
     MROCE_COLL_ALGO,

interleaved A B A B over the rounds, each run its own mroce-coll-perf
processes (one rank per namespace, tools/mroce-launch; 20 timed calls
after 5 warm-up calls, elements checked in a separate pass). Where A's
choice is B's, nothing is compared and the row says so. Elsewhere the
target is A's median time <= 1.05 x B's (the 5% is the band this VM's
noise leaves between two runs of one algorithm): printed as met or missed
with every round's ratio. Any wrong element fails the run.
"""
import argparse, json, os, signal, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coll_bench as C  # noqa: E402  (the namespaces, mroce-launch, the report's helpers)

BEGIN, END = "<!-- targets: coll_algos_targets.py -->", "<!-- /targets coll algos -->"
COLLS = ("allreduce", "reducescatter", "allgather", "broadcast", "alltoall")
NETS = (("bridge", 2, (8, 65536, 1 << 20, 16 << 20)),
        ("bridge", 4, (8, 65536, 1 << 20, 16 << 20)),
        ("fabric", 4, (65536, 1 << 20, 16 << 20)))
SMALL = 16 * 1024	# the old table's latency algorithms up to here (the communicator's default)
BAND = 1.05


def old_choice(coll, size, ranks):
    """What the table chose before the algorithms for scale; size as mroce-coll-perf counts it."""
    if coll == "allreduce":
        return "rd" if size <= SMALL else "ring"
    if coll == "broadcast":
        return "tree" if size <= SMALL else "chain"
    if coll == "alltoall":
        return "pairwise-inbox" if size // ranks <= SMALL else "pairwise-direct"
    return "ring"


def run(ranks, coll, size, iters, pin=None):
    """One mroce-coll-perf job at one size; (time_us, algo, wrong) of rank 0's JSON, or None
    where the size is below one element per rank."""
    env = dict(os.environ)
    env.pop("MROCE_COLL_ALGO", None)
    if pin:
        env["MROCE_COLL_ALGO"] = pin
    args = ["-c", coll, "-b", str(size), "-e", str(size)] + iters + ["--json"]
    procs = [subprocess.Popen([C.LAUNCH, "exec", C.JOB, str(i), "--", C.CPERF] + args, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              start_new_session=True, env=env)
             for i in range(ranks)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=300))
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    bad = [(i, p.returncode, outs[i][1][-600:]) for i, p in enumerate(procs) if p.returncode]
    if bad:
        raise RuntimeError(f"mroce-coll-perf failed: {bad}")
    res = json.loads(outs[0][0])["results"]
    if not res:
        return None	# mroce-coll-perf runs no size below one element per rank
    row = res[0]
    if row["wrong"]:
        raise RuntimeError(f"{coll} {size} B on {ranks} ranks ({pin or 'table'}): "
                           f"{row['wrong']} wrong elements")
    return row["time_us"], row["algo"], row["wrong"]


def measure(rounds, quick):
    iters = ["-n", "5", "-w", "2"] if quick else ["-n", "20", "-w", "5"]
    rows = []
    for net, ranks, sizes in NETS:
        print(f"coll_algos: {net}, {ranks} ranks", flush=True)
        C.up(ranks, net)
        try:
            for coll in COLLS:
                for size in sizes:
                    if coll == "alltoall" and size < 4 * ranks:
                        continue	# less than one float per peer
                    old = old_choice(coll, size, ranks)
                    a, b = [], []
                    first = run(ranks, coll, size, iters)
                    if first is None:
                        continue
                    t, algo, _ = first
                    a.append(t)
                    same = algo == old
                    for r in range(rounds):
                        if r:
                            a.append(run(ranks, coll, size, iters)[0])
                        if not same:
                            b.append(run(ranks, coll, size, iters, pin=old)[0])
                    rows.append({"net": net, "ranks": ranks, "coll": coll, "size": size,
                                 "algo": algo, "old": old, "a": a, "b": b})
                    print(f"  {coll} {C.human(size)}: {algo} {statistics.median(a):.1f} us"
                          + ("" if same else f", {old} {statistics.median(b):.1f} us"), flush=True)
        finally:
            C.down()
    return rows


def verdict(row):
    """(ratio of medians, per-round ratios) or None where the algorithms are one."""
    if not row["b"]:
        return None
    per = [x / y for x, y in zip(row["a"], row["b"])]
    return statistics.median(row["a"]) / statistics.median(row["b"]), per


def section(rows, rounds, date):
    L = [BEGIN, "## Collectives: the algorithm table against the choices it replaced\n",
         f"Generated by `selftests/bench/coll_algos_targets.py --rounds {rounds}` (part of "
         f"`make bench`) on {date}. A is the table's choice as a user runs it, B the choice "
         "before the algorithms for scale, pinned with `MROCE_COLL_ALGO`; runs interleaved "
         "A B A B; medians of the rounds' times (20 calls each after 5 warm-up calls, the "
         f"slowest rank's). Target: A ≤ {BAND} × B's time wherever they differ.\n",
         "| network | ranks | collective | size | A (table) | B (before) | A µs | B µs | A/B | met |",
         "|---|---:|---|---:|---|---|---:|---:|---:|---|"]
    for r in rows:
        v = verdict(r)
        am = statistics.median(r["a"])
        if v is None:
            L.append(f"| {r['net']} | {r['ranks']} | {r['coll']} | {C.human(r['size'])} | {r['algo']} | "
                     f"same | {am:.1f} | | | same algorithm |")
        else:
            L.append(f"| {r['net']} | {r['ranks']} | {r['coll']} | {C.human(r['size'])} | {r['algo']} | "
                     f"{r['old']} | {am:.1f} | {statistics.median(r['b']):.1f} | {v[0]:.2f} | "
                     f"{'yes' if v[0] <= BAND else 'no'} |")
    L.append("")
    L.append(END)
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1 round, few iterations (a smoke test)")
    ap.add_argument("--out", help="the report whose section to rewrite (docs/benchmarks.md)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("coll_algos_targets: needs root (network namespaces, XDP)")
    if not os.access(C.CPERF, os.X_OK):
        sys.exit(f"coll_algos_targets: {C.CPERF} is not built (run make)")
    rounds = 1 if a.quick else a.rounds
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    try:
        rows = measure(rounds, a.quick)
    finally:
        C.down()
    text = section(rows, rounds, date)
    if a.out:
        C.write_section(a.out, text)
    print(text)
    for r in rows:
        v = verdict(r)
        if v is not None:
            print(f"{'met' if v[0] <= BAND else 'missed'}: {r['net']}, {r['ranks']} ranks: {r['coll']} "
                  f"at {C.human(r['size'])}, {r['algo']} time <= {BAND} x {r['old']}'s: {v[0]:.2f}x "
                  f"(rounds: {', '.join(f'{x:.2f}' for x in v[1])})")


if __name__ == "__main__":
    main()
