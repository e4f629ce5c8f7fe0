#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The collectives as they run now against the library before the algorithms for scale, in one run.

    selftests/bench/coll_algos_targets.py [--rounds N] [--quick] [--before COMMIT] [--out docs/benchmarks.md]

Root. (`make bench` runs it; `make bench-coll-algos` alone.)

libmroce-coll picks each operation's algorithm from one table by kind, size
and rank count (coll/select.c, docs/collectives.md "Algorithms"), and its
algorithms run as state machines driven by completions. What was built for
many ranks must not cost the few ranks this machine has: here, for 2 and 4
ranks on a bridge (MTU 3498) and 4 ranks on the emulated fabric (4 paths
delayed 10/20/50/100 us), every collective of mroce-coll-perf at a few
sizes runs

  A  this tree's build/mroce-coll-perf, as a user runs it (the table's choice), and
  B  the same tool built from the commit before (--before, 2258b6b: its own
     table and channels), built once into build/before-COMMIT from a
     detached git worktree,

interleaved A B A B over the rounds, each run its own processes (one rank
per namespace, tools/mroce-launch; timed calls after a tenth as many
warm-up ones: 200 up to 64 KiB, 50 at 1 MiB, 20 beyond, so that a small
size's figure is not a few calls' scheduling luck; elements checked in a
separate pass; any wrong element fails the run).
Target: A's median time <= 1.05 x B's (the 5% is the band this VM's noise
leaves between two runs of one build), printed as met or missed with every
round's ratio, and each side's algorithm.
"""
import argparse, os, shutil, signal, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coll_bench as C  # noqa: E402  (the namespaces, mroce-launch, the report's helpers)

BEGIN, END = "<!-- targets: coll_algos_targets.py -->", "<!-- /targets coll algos -->"
COLLS = ("allreduce", "reducescatter", "allgather", "broadcast", "alltoall")
NETS = (("bridge", 2, (8, 65536, 1 << 20, 16 << 20)),
        ("bridge", 4, (8, 65536, 1 << 20, 16 << 20)),
        ("fabric", 4, (65536, 1 << 20, 16 << 20)))
BAND = 1.05
BEFORE = "2258b6b"


def build_before(commit):
    """mroce-coll-perf of commit, built once into build/before-COMMIT; its path."""
    out = os.path.join(C.ROOT, "build", f"before-{commit}")
    tool = os.path.join(out, "mroce-coll-perf")
    if os.access(tool, os.X_OK):
        return tool
    wt = os.path.join(C.ROOT, "build", f"before-{commit}-src")
    subprocess.run(["git", "-C", C.ROOT, "worktree", "remove", "--force", wt], capture_output=True)
    subprocess.run(["git", "-C", C.ROOT, "worktree", "add", "--detach", wt, commit], check=True,
                   capture_output=True)
    try:
        subprocess.run(["make", "-C", wt, "-j2", "build/mroce-coll-perf"], check=True,
                       capture_output=True)
        os.makedirs(out, exist_ok=True)
        shutil.copy2(os.path.join(wt, "build", "mroce-coll-perf"), tool)
    finally:
        subprocess.run(["git", "-C", C.ROOT, "worktree", "remove", "--force", wt], capture_output=True)
    return tool


def run(ranks, coll, size, iters, tool):
    """One mroce-coll-perf job at one size; (time_us, algo, wrong) of rank 0's JSON, or None
    where the size is below one element per rank."""
    env = dict(os.environ)
    for k in ("MROCE_COLL_ALGO", "MROCE_COLL_A2A_WINDOW"):
        env.pop(k, None)	# as a user runs it
    args = ["-c", coll, "-b", str(size), "-e", str(size)] + iters + ["--json"]
    res = C.run_mroce(ranks, args, tool=tool, env=env)["results"]
    if not res:
        return None	# mroce-coll-perf runs no size below one element per rank
    row = res[0]
    if row["wrong"]:
        raise RuntimeError(f"{coll} {size} B on {ranks} ranks ({tool}): "
                           f"{row['wrong']} wrong elements")
    return row["time_us"], row["algo"], row["wrong"]


def iterations(size, quick):
    """mroce-coll-perf's -n and -w at one size (the docstring's rule)."""
    if quick:
        return ["-n", "5", "-w", "2"]
    n = 200 if size <= 65536 else 50 if size <= (1 << 20) else 20
    return ["-n", str(n), "-w", str(max(5, n // 10))]


def measure(rounds, quick, before):
    rows = []
    for net, ranks, sizes in NETS:
        print(f"coll_algos: {net}, {ranks} ranks", flush=True)
        C.up(ranks, net)
        try:
            for coll in COLLS:
                for size in sizes:
                    if coll == "alltoall" and size < 4 * ranks:
                        continue	# less than one float per peer
                    a, b, algo, old = [], [], None, None
                    for _ in range(rounds):
                        iters = iterations(size, quick)
                        ra = run(ranks, coll, size, iters, C.CPERF)
                        if ra is None:
                            break	# no size below one element per rank
                        rb = run(ranks, coll, size, iters, before)
                        a.append(ra[0])
                        b.append(rb[0])
                        algo, old = ra[1], rb[1]
                    if not a:
                        continue
                    rows.append({"net": net, "ranks": ranks, "coll": coll, "size": size,
                                 "algo": algo, "old": old, "a": a, "b": b})
                    print(f"  {coll} {C.human(size)}: now {algo} {statistics.median(a):.1f} us, "
                          f"before {old} {statistics.median(b):.1f} us", flush=True)
        finally:
            C.down()
    return rows


def verdict(row):
    """(ratio of medians, per-round ratios)."""
    per = [x / y for x, y in zip(row["a"], row["b"])]
    return statistics.median(row["a"]) / statistics.median(row["b"]), per


def section(rows, rounds, date, before):
    L = [BEGIN, "## Collectives: the library now against the library before the algorithms for scale\n",
         f"Generated by `selftests/bench/coll_algos_targets.py --rounds {rounds}` (part of "
         f"`make bench`) on {date}. A is this tree's `mroce-coll-perf` as a user runs it, B the "
         f"same tool built from commit {before} (the table, channels and algorithms before); runs "
         "interleaved A B A B; medians of the rounds' times (each the slowest rank's mean over 200 "
         f"calls up to 64 KiB, 50 at 1 MiB, 20 beyond, after a tenth as many warm-up calls). Target: A ≤ {BAND} × B's time.\n",
         "| network | ranks | collective | size | A's algorithm | B's | A µs | B µs | A/B | met |",
         "|---|---:|---|---:|---|---|---:|---:|---:|---|"]
    for r in rows:
        v = verdict(r)
        L.append(f"| {r['net']} | {r['ranks']} | {r['coll']} | {C.human(r['size'])} | {r['algo']} | "
                 f"{r['old']} | {statistics.median(r['a']):.1f} | {statistics.median(r['b']):.1f} | "
                 f"{v[0]:.2f} | {'yes' if v[0] <= BAND else 'no'} |")
    L.append("")
    L.append(END)
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1 round, few iterations (a smoke test)")
    ap.add_argument("--out", help="the report whose section to rewrite (docs/benchmarks.md)")
    ap.add_argument("--before", default=BEFORE, help=f"the commit to compare with ({BEFORE})")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("coll_algos_targets: needs root (network namespaces, XDP)")
    if not os.access(C.CPERF, os.X_OK):
        sys.exit(f"coll_algos_targets: {C.CPERF} is not built (run make)")
    rounds = 1 if a.quick else a.rounds
    before = build_before(a.before)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    try:
        rows = measure(rounds, a.quick, before)
    finally:
        C.down()
    text = section(rows, rounds, date, a.before)
    if a.out:
        C.write_section(a.out, text, BEGIN, END)
    print(text)
    for r in rows:
        v = verdict(r)
        print(f"{'met' if v[0] <= BAND else 'missed'}: {r['net']}, {r['ranks']} ranks: {r['coll']} "
              f"at {C.human(r['size'])}, now ({r['algo']}) time <= {BAND} x before's ({r['old']}): "
              f"{v[0]:.2f}x (rounds: {', '.join(f'{x:.2f}' for x in v[1])})")


if __name__ == "__main__":
    main()
