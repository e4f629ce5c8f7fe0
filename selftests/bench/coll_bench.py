#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Collectives: mroce next to Open MPI on the same namespaces, in one run.

    selftests/bench/coll_bench.py [--runs N] [--quick] [--out docs/benchmarks.md]

(`make bench` runs it after bench.py; `make bench-coll` alone.) Root.

What it runs:
- all-reduce (float sum) and all-to-all on 2 and 4 ranks, one rank per
  network namespace, started with tools/mroce-launch;
- build/mroce-coll-perf against selftests/bench/mpi_coll_perf.c, run by
  Open MPI 4 (ob1 over TCP, one rank per namespace, --bind-to none, and
  --mca mpi_yield_when_idle 1 when ranks outnumber cores).

Where:
- on a Linux bridge (MTU 3498), sizes 8 B to 16 MiB;
- on the emulated fabric (4 paths delayed 10/20/50/100 us, MTU 1500),
  clean and with 1% loss on every path, at 64 KiB, 1 MiB and 16 MiB.

Each figure is the median of --runs runs, and the targets are ratios from
this same run. The mroce XDP program is detached before Open MPI runs, so
TCP sees a plain veth.

Writes:
- the "Collectives" section of the report (between markers, the rest of
  the file is kept);
- docs/bench/coll_busbw.png;
- docs/bench/coll_results.json.
"""
import argparse, json, os, shutil, signal, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
LAUNCH = os.path.join(ROOT, "tools", "mroce-launch")
MPIRUN_NS = os.path.join(ROOT, "selftests", "bench", "mpirun_ns.sh")
CPERF = os.path.join(BUILD, "mroce-coll-perf")
MPI_SRC = os.path.join(ROOT, "selftests", "bench", "mpi_coll_perf.c")
MPI_BIN = os.path.join(BUILD, "selftests", "mpi_coll_perf")
MROCE = os.path.join(BUILD, "mroce")
JOB = f"cb{os.getpid() % 100000}"
BEGIN, END = "<!-- collectives: coll_bench.py -->", "<!-- /collectives -->"
KEY_SIZES = (8, 65536, 1 << 20, 16 << 20)
MPI_RETRIES = []


def sh(cmd, check=True, timeout=None, **kw):
    return subprocess.run(cmd, check=check, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=timeout, **kw)


def down():
    sh([LAUNCH, "down", JOB], check=False)


def up(ranks, net):
    down()
    if net == "bridge":
        sh([LAUNCH, "up", "-n", str(ranks), "--name", JOB, "--mtu", "3498"])
    else:
        args = [LAUNCH, "up", "-n", str(ranks), "--name", JOB, "--net", "fabric", "--paths", "4"]
        loss = "loss=1%" if net == "fabric-loss" else "loss=0%"
        for p, d in enumerate((10, 20, 50, 100)):
            args += ["--fabric-ctl", f"path {p} delay={d} {loss}"]
        sh(args)
    ns = [sh([LAUNCH, "ns", JOB, str(i)]).stdout.strip() for i in range(ranks)]
    addrs = [sh([LAUNCH, "addr", JOB, str(i)]).stdout.strip() for i in range(ranks)]
    return ns, addrs


def run_mroce(ranks, args, timeout=300, tool=None, env=None):
    """Every rank at once through `mroce-launch exec` (tool: mroce-coll-perf unless given);
    rank 0's JSON."""
    procs = [subprocess.Popen([LAUNCH, "exec", JOB, str(i), "--", tool or CPERF] + args, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                              env=env)
             for i in range(ranks)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=timeout))
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    bad = [(i, p.returncode, outs[i][1][-800:]) for i, p in enumerate(procs) if p.returncode]
    if bad:
        raise RuntimeError(f"mroce-coll-perf failed: {bad}")
    return json.loads(outs[0][0])


def detach_all(ns):
    """mroce's datapath off every rank, checked: Open MPI's TCP as on hosts without mroce."""
    for n in ns:
        sh(["ip", "netns", "exec", n, MROCE, "detach", "eth0"], check=False)
        shown = sh(["ip", "netns", "exec", n, "ip", "-d", "link", "show", "eth0"]).stdout
        if "prog/xdp" in shown:
            raise RuntimeError(f"coll_bench: an XDP program is still attached to eth0 in {n}:\n{shown}")


def run_mpi(ns, addrs, subnet, args, timeout=240, tries=3):
    """Open MPI's launch across namespaces occasionally never completes (mpirun
    waits on daemons that are gone): such a run is killed by the timeout and
    repeated, and the report counts the repeats."""
    cmd = [MPIRUN_NS, "--ns", ",".join(ns), "--addrs", ",".join(addrs), "--subnet", subnet,
           "--timeout", str(timeout)]
    if len(ns) > (os.cpu_count() or 1):
        cmd.append("--yield")
    for attempt in range(tries):
        p = sh(cmd + ["--", MPI_BIN] + args, check=False, timeout=timeout + 30)
        line = next((l for l in p.stdout.splitlines() if l.startswith("{")), None)
        if not p.returncode and line:
            return json.loads(line)
        print(f"coll_bench: Open MPI run failed ({p.returncode}), attempt {attempt + 1} of {tries}",
              flush=True)
        MPI_RETRIES.append(p.returncode)
    raise RuntimeError(f"mpi_coll_perf failed ({p.returncode}):\n{p.stdout[-1500:]}")


def merge(results):
    """Median per size of time and bandwidths over runs; the sum of wrong elements."""
    out = {}
    for r in results:
        for row in r["results"]:
            out.setdefault(row["size"], []).append(row)
    return {s: {"size": s, "time_us": statistics.median(x["time_us"] for x in rows),
                "algbw": statistics.median(x["algbw"] for x in rows),
                "busbw": statistics.median(x["busbw"] for x in rows),
                "wrong": sum(x["wrong"] for x in rows), "algo": rows[0]["algo"], "n": len(rows)}
            for s, rows in out.items()}


def measure(runs, quick):
    iters = ["-n", "5", "-w", "2"] if quick else ["-n", "20", "-w", "5"]
    sweeps = {"bridge": ["-b", "8", "-e", "16M", "-f", "2"],
              "fabric": ["-b", "64K", "-e", "16M", "-f", "16"],
              "fabric-loss": ["-b", "64K", "-e", "16M", "-f", "16"]}
    res = {}
    for net in ("bridge", "fabric", "fabric-loss"):
        subnet = "198.18.2.0/24" if net == "bridge" else "198.18.1.0/24"
        for ranks in (2, 4):
            print(f"coll_bench: {net}, {ranks} ranks", flush=True)
            ns, addrs = up(ranks, net)
            try:
                for coll in ("allreduce", "alltoall"):
                    args = ["-c", coll] + sweeps[net] + iters + ["--json"]
                    m, o = [], []
                    for _ in range(runs):
                        m.append(run_mroce(ranks, args))
                        if os.access(MPI_BIN, os.X_OK):
                            detach_all(ns)
                            o.append(run_mpi(ns, addrs, subnet, args))
                    key = f"{net}/{ranks}/{coll}"
                    res[key] = {"mroce": merge(m), "openmpi": merge(o) if o else {}}
            finally:
                down()
    return res


# ---- report ----------------------------------------------------------------------

def human(size):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1024)):
        if size >= div and size % div == 0:
            return f"{size // div} {unit}"
    return f"{size} B"


def get(res, key, impl, size, field="busbw"):
    row = res.get(key, {}).get(impl, {}).get(size)
    return None if row is None else row[field]


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def f(x, nd=3):
    return "n/a" if x is None else f"{x:.{nd}f}"


def plot(res, outdir):
    if not shutil.which("gnuplot"):
        return None
    dat = os.path.join(outdir, "coll_busbw.dat")
    cols = [(c, r, impl) for c in ("allreduce", "alltoall") for r in (2, 4) for impl in ("mroce", "openmpi")]
    sizes = sorted({s for k, v in res.items() if k.startswith("bridge/") for i in v.values() for s in i})
    with open(dat, "w") as fh:
        for s in sizes:
            vals = [get(res, f"bridge/{r}/{c}", impl, s) for c, r, impl in cols]
            fh.write(f"{s} " + " ".join("NaN" if v is None else f"{v:.5f}" for v in vals) + "\n")
    png = os.path.join(outdir, "coll_busbw.png")
    plots = []
    for i, (c, r, impl) in enumerate(cols):
        name = "mroce" if impl == "mroce" else "Open MPI (TCP)"
        style = "lw 2" if impl == "mroce" else "lw 2 dt 2"
        pt = 7 if r == 4 else 6
        plots.append(f"'{dat}' u 1:{i + 2} w lp {style} pt {pt} t '{c}, {r} ranks, {name}'")
    script = f"""set terminal pngcairo size 1000,560; set output '{png}'
set logscale x 2; set xlabel 'size per rank (bytes)'; set ylabel 'bus bandwidth (GB/s)'; set key top left; set grid
set xtics ("8" 8, "64" 64, "512" 512, "4K" 4096, "64K" 65536, "1M" 1048576, "16M" 16777216)
set title 'Collectives: bus bandwidth against size, bridge, MTU 3498 (medians)'
plot {", ".join(plots)}
"""
    sh(["gnuplot"], input=script, check=False)
    return png


def targets(res):
    """(text, ratio, met(ratio) or None for information), each from this run's medians."""
    T = []
    for ranks in (2, 4):
        for c in ("allreduce", "alltoall"):
            for sz in (1 << 20, 16 << 20):
                k = f"bridge/{ranks}/{c}"
                T.append((f"bridge, {ranks} ranks: {c} bus bandwidth at {human(sz)} ≥ 1.0 × Open MPI's",
                          ratio(get(res, k, "mroce", sz), get(res, k, "openmpi", sz)), lambda x: x >= 1.0))
        k = f"bridge/{ranks}/allreduce"
        T.append((f"bridge, {ranks} ranks: 8-byte all-reduce time ≤ 0.8 × Open MPI's",
                  ratio(get(res, k, "mroce", 8, "time_us"), get(res, k, "openmpi", 8, "time_us")),
                  lambda x: x <= 0.8))
    for net, what in (("fabric", "clean"), ("fabric-loss", "1% loss")):
        for c in ("allreduce", "alltoall"):
            for sz in (1 << 20, 16 << 20):
                k = f"{net}/4/{c}"
                T.append((f"emulated fabric, 4 ranks, {what}: {c} bus bandwidth at {human(sz)} ≥ 2 × Open MPI's",
                          ratio(get(res, k, "mroce", sz), get(res, k, "openmpi", sz)), lambda x: x >= 2.0))
    for c in ("allreduce", "alltoall"):
        for sz in (1 << 20, 16 << 20):
            T.append((f"(information) fabric, 4 ranks: {c} at {human(sz)}, 1% loss with reordering / clean",
                      ratio(get(res, f"fabric-loss/4/{c}", "mroce", sz), get(res, f"fabric/4/{c}", "mroce", sz)),
                      None))
    return T


def section(res, runs, date, retries=()):
    L = [BEGIN, "## Collectives: mroce against Open MPI\n"]
    L.append(
        f"Generated by `selftests/bench/coll_bench.py --runs {runs}` (part of `make bench`) on {date}.\n"
        "\n**Setup.**\n"
        "- One rank per network namespace, started with `tools/mroce-launch`.\n"
        "- `build/mroce-coll-perf` against `selftests/bench/mpi_coll_perf.c` under Open MPI 4: "
        "ob1 over TCP, `--bind-to none`, and `--mca mpi_yield_when_idle 1` with 4 ranks on the 2 cores.\n"
        "- Both run on the same namespaces in the same run. The mroce XDP program is detached before "
        "Open MPI runs.\n"
        "- Data: float sum for all-reduce, float for all-to-all.\n"
        "\n**Measurement.**\n"
        "- Each figure is the median of the runs, and each run the mean of 20 calls after 5 warm-up calls.\n"
        "- `time` is the slowest rank's time.\n"
        "- busbw = algbw × 2(n−1)/n for all-reduce, algbw × (n−1)/n for all-to-all.\n"
        "- Every size was also checked element by element (`#wrong` below).\n")
    for ranks in (2, 4):
        L.append(f"\n### Bridge, {ranks} ranks (MTU 3498)\n")
        L.append("| size | all-reduce mroce | all-reduce Open MPI | ratio | all-to-all mroce | all-to-all Open MPI | ratio |")
        L.append("|---:|---:|---:|---:|---:|---:|---:|")
        for s in KEY_SIZES:
            cells = [human(s)]
            for c in ("allreduce", "alltoall"):
                k = f"bridge/{ranks}/{c}"
                m, o = get(res, k, "mroce", s), get(res, k, "openmpi", s)
                mt, ot = get(res, k, "mroce", s, "time_us"), get(res, k, "openmpi", s, "time_us")
                if s == 8:
                    cells += [f"{f(mt, 1)} µs", f"{f(ot, 1)} µs", f(ratio(mt, ot), 2) + " (time)"]
                else:
                    cells += [f"{f(m)} GB/s", f"{f(o)} GB/s", f(ratio(m, o), 2)]
            L.append("| " + " | ".join(cells) + " |")
    L.append("\nAt 8 B the cells are times (lower is better); elsewhere bus bandwidth (higher is better). "
             "An 8-byte all-to-all on 4 ranks is less than one float per peer, so it is not run.\n")
    L.append("![bus bandwidth against size](bench/coll_busbw.png)\n")
    L.append("\n### Emulated fabric: 4 paths delayed 10/20/50/100 µs, clean and 1% loss (MTU 1500)\n")
    L.append("| ranks | collective | size | mroce clean | mroce 1% loss | kept | Open MPI clean | Open MPI 1% loss | kept |")
    L.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for ranks in (2, 4):
        for c in ("allreduce", "alltoall"):
            for s in (65536, 1 << 20, 16 << 20):
                mc, ml = get(res, f"fabric/{ranks}/{c}", "mroce", s), get(res, f"fabric-loss/{ranks}/{c}", "mroce", s)
                oc, ol = get(res, f"fabric/{ranks}/{c}", "openmpi", s), get(res, f"fabric-loss/{ranks}/{c}", "openmpi", s)
                L.append(f"| {ranks} | {c} | {human(s)} | {f(mc)} | {f(ml)} | {f(ratio(ml, mc), 2)} | "
                         f"{f(oc)} | {f(ol)} | {f(ratio(ol, oc), 2)} |")
    L.append("\n- The fabric is one user-space switch thread on the same 2 cores, with a ceiling of "
             "about 2.5 Gbit/s (docs/fabric.md).\n"
             "- The clean figures are therefore the emulator's. What this table measures is the share "
             "each transport keeps under loss.\n"
             "- Open MPI's TCP connection hashes onto one path, so it sees loss but no reordering. mroce "
             "sprays every QP over 8 paths, so it sees both.\n")
    L.append("\n### Targets\n")
    L.append("| target | measured | met |")
    L.append("|---|---:|---|")
    for text, r_, ok in targets(res):
        L.append(f"| {text} | {f(r_, 2)} × | {'n/a' if r_ is None else ('yes' if ok(r_) else 'no') if ok else 'info'} |")
    wrong = sum(row["wrong"] for v in res.values() for impl in v.values() for row in impl.values())
    L.append(f"\nWrong elements over every run, size, rank count and network: {wrong}.\n")
    if retries:
        L.append(f"Open MPI runs repeated after a launch that never completed (killed after 240 s): "
                 f"{len(retries)}.\n")
    L.append(open(os.path.join(ROOT, "selftests", "bench", "coll_analysis.md")).read())
    L.append(END)
    return "\n".join(L) + "\n"


def write_section(out, text, begin=BEGIN, end=END):
    """Replace the section between begin and end of the report, or append it."""
    old = open(out).read() if os.path.exists(out) else "# Benchmarks\n"
    if begin in old and end in old:
        new = old[:old.index(begin)] + text + old[old.index(end) + len(end):].lstrip("\n")
    else:
        new = old.rstrip("\n") + "\n\n" + text
    with open(out, "w") as fh:
        fh.write(new)


def build_mpi():
    if not shutil.which("mpicc"):
        print("coll_bench: mpicc not found (scripts/deps.sh bench installs Open MPI): mroce only")
        return
    os.makedirs(os.path.dirname(MPI_BIN), exist_ok=True)
    sh(["mpicc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-o", MPI_BIN, MPI_SRC])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1 run, few iterations (a smoke test)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the section and plot from the saved coll_results.json")
    a = ap.parse_args()
    outdir = os.path.join(os.path.dirname(os.path.abspath(a.out)), "bench")
    if a.report_only:
        saved = json.load(open(os.path.join(outdir, "coll_results.json")))
        res = {k: {impl: {int(s): row for s, row in rows.items()} for impl, rows in v.items()}
               for k, v in saved["results"].items()}
        plot(res, outdir)
        write_section(a.out, section(res, saved["runs"], saved["date"], saved.get("mpi_retries", ())))
        return
    if os.geteuid():
        sys.exit("coll_bench: needs root (network namespaces, XDP)")
    for t in (CPERF, MROCE):
        if not os.access(t, os.X_OK):
            sys.exit(f"coll_bench: {t} is not built (run make)")
    build_mpi()
    runs = 1 if a.quick else a.runs
    os.makedirs(outdir, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    try:
        res = measure(runs, a.quick)
    finally:
        down()
    with open(os.path.join(outdir, "coll_results.json"), "w") as fh:
        json.dump({"date": date, "runs": runs, "mpi_retries": MPI_RETRIES, "results": res}, fh, indent=1)
    plot(res, outdir)
    text = section(res, runs, date, MPI_RETRIES)
    write_section(a.out, text)
    print(text)
    for t, r_, ok in targets(res):
        if ok:
            print(f"{'n/a' if r_ is None else 'met' if ok(r_) else 'missed'}: {t}: {f(r_, 2)}x")
    print(f"coll_bench: section written to {a.out}, plot and coll_results.json in {outdir}")


if __name__ == "__main__":
    main()
