#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The studies of docs/scale.md: mroce-sim runs, their tables and plots.

    sim/studies.py                  every study (make sim-studies)
    sim/studies.py --only incast    one of: modes-256 modes-1024 collectives failures planes incast state
    sim/studies.py --quick          smaller sizes, to try the script itself

Each run's JSON and time series go to docs/scale/; a run whose JSON is there
already with the same command is not run again (--force runs everything).
Each study's section of docs/scale.md, between its markers, is rewritten
with the commands that produced it. Nothing here needs root.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
SIM = os.path.join(BUILD, "mroce-sim")
DOC = os.path.join(ROOT, "docs", "scale.md")
OUT = os.path.join(ROOT, "docs", "scale")
MODES = ("sprayed", "ecmp", "gbn")
FAB = {
    256: ["--hosts", "256", "--hosts-per-leaf", "16", "--spines", "16", "--rate", "400"],
    1024: ["--hosts", "1024", "--hosts-per-leaf", "16", "--spines", "16", "--rate", "400"],
}
MIB = 1 << 20
BEFORE = os.path.join(OUT, "before")	# rows run on the code before (commit 2258b6b), for comparison
RTO_TUNED = ["--rto-low-us", "20", "--rto-high-us", "100"]	# beside the defaults, never instead


def cmd_of(args):
    return "build/mroce-sim " + " ".join(shlex.quote(a) for a in args)


def run(name, args, force=False):
    """One mroce-sim run; its JSON (with the command and wall time) as a dict."""
    js, dat = os.path.join(OUT, name + ".json"), os.path.join(OUT, name + ".dat")
    if not force and os.path.exists(js):
        with open(js) as f:
            j = json.load(f)
        if j.get("command") == cmd_of(args):
            return j
    t0 = time.time()
    p = subprocess.run([SIM, "--quiet", "--json", js, "--dat", dat] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(js) as f:
        j = json.load(f)
    j["command"] = cmd_of(args)
    j["exit"] = p.returncode
    with open(js, "w") as f:
        json.dump(j, f, indent=1)
    status = "ok" if j["ok"] else "FAILED: " + j["error"]
    print(f"  {name}: {j['completion_us']:.0f} us, ratio {j['ratio']:.3f} ({status}; "
          f"{time.time() - t0:.0f} s, {j['simulator']['frames_per_min']:.3g} frames/min)", flush=True)
    return j


def section(name, text):
    """Replace docs/scale.md's section of this study."""
    begin, end = f"<!-- study: {name} -->", f"<!-- /study {name} -->"
    with open(DOC) as f:
        doc = f.read()
    if begin not in doc:
        doc += f"\n{begin}\n{end}\n"
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(DOC, "w") as f:
        f.write(head + begin + "\n" + text.rstrip() + "\n" + end + tail)


def plot(script, png):
    if not shutil.which("gnuplot"):
        print("  (no gnuplot: plot skipped)")
        return
    subprocess.run(["gnuplot"], input=f"set terminal pngcairo size 900,520 font ',11'; "
                   f"set output '{png}'; " + script, text=True, check=False, cwd=OUT)


def fmt_size(b):
    return f"{b // MIB} MiB" if b >= MIB else f"{b // 1024} KiB"


def ratio_cell(j):
    return f"{j['ratio']:.2f}" if j["ok"] else "failed"


# ---- completion time against the ideal, sprayed / ECMP / go-back-N

def study_modes(hosts, sizes, force):
    rows, dat = [], []
    for work in ("alltoall", "allreduce"):
        for size in sizes:
            r = {}
            for m in MODES:
                args = FAB[hosts] + ["--workload", work, "--size", str(size), "--mode", m]
                r[m] = run(f"modes-{hosts}-{work}-{size // 1024}k-{m}", args, force)
            rows.append((work, size, r))
            dat.append(f"{work} {size / MIB:g} " + " ".join(
                f"{r[m]['ratio']:.4f}" if r[m]["ok"] else "nan" for m in MODES))
    name = f"modes-{hosts}"
    with open(os.path.join(OUT, name + ".dat"), "w") as f:
        f.write("# workload size_mib ratio_sprayed ratio_ecmp ratio_gbn\n" + "\n".join(dat) + "\n")
    png = name + ".png"
    plot(f"""set title 'Completion time / ideal, {hosts} hosts, 400 Gbit/s, 1:1 Clos ({FAB[hosts][5]} spines)'
set logscale x 2; set xlabel 'bytes per host (MiB)'; set ylabel 'completion / ideal'; set key top right
set yrange [0:*]
plot for [i=3:5] '< grep ^alltoall {name}.dat' using 2:i with linespoints title 'all-to-all '.word('sprayed ecmp gbn', i-2), \\
     for [i=3:5] '< grep ^allreduce {name}.dat' using 2:i with linespoints dashtype 2 title 'all-reduce '.word('sprayed ecmp gbn', i-2)""",
         png)
    t = [f"![{name}](scale/{png})", "",
         "| workload | bytes per host | sprayed (mroce) | single-path ECMP | go-back-N | sprayed: resends, timeouts, paths retired |",
         "|---|---|---|---|---|---|"]
    for work, size, r in rows:
        s = r["sprayed"]
        t.append(f"| {work} | {fmt_size(size)} | {ratio_cell(s)} | {ratio_cell(r['ecmp'])} | "
                 f"{ratio_cell(r['gbn'])} | {s['retransmissions']}, {s['timeouts']}, {s['paths_retired']} |")
    t += ["", "Each cell: completion time over the ideal (payload over the narrowest capacity it must "
          "cross)."]
    t[-1] += " Commands (one per cell; `--mode` sprayed, ecmp or gbn):"
    t += ["", "```"]
    for work in ("alltoall", "allreduce"):
        t.append(cmd_of(FAB[hosts] + ["--workload", work, "--size", "SIZE", "--mode", "MODE"]))
    t.append("```")
    section(name, "\n".join(t))


# ---- failures and loss: slowdown against the clean run

def before_fail(n, args):
    """A plane failure's run on the code before, if one with this very command is stored."""
    tag = args[args.index("--fail") + 1].replace(":", "-").replace("@", "-at")
    path = os.path.join(BEFORE, f"fail-planes{n}-{tag}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        b = json.load(f)
    return b if b.get("command") == cmd_of(args) else None


def study_failures(size, force):
    base = FAB[256] + ["--workload", "alltoall", "--size", str(size)]
    clean = run("fail-clean", base, force)
    t0 = int(clean["completion_us"] / 4)	# a quarter of the way into the clean run
    cases = [
        ("loss 0.1% (every frame)", "fail-loss-0.1", base + ["--loss", "0.1%"], None),
        ("loss 1%", "fail-loss-1", base + ["--loss", "1%"], None),
        ("loss 10%", "fail-loss-10", base + ["--loss", "10%"], None),
        ("one spine of 16 down", "fail-spine", base + ["--fail", f"spine:3@{t0}"], 0.05),
        # the floor: the leaves take the spine out of their ECMP groups 1 us after it fails,
        # so its capacity is lost but next to nothing is left for a transport to recover
        ("... the leaves routing around it within 1 us (floor: its capacity lost, next to "
         "nothing to recover)", "fail-spine-floor",
         base + ["--fail", f"spine:3@{t0}", "--detect-us", "1"], None),
        ("one spine of 16 down, single-path ECMP", "fail-spine-ecmp",
         base + ["--fail", f"spine:3@{t0}", "--mode", "ecmp"], None),
        ("a leaf-spine link flapping (100 us period, 20 times)", "fail-flap",
         base + ["--flap", f"link:0.5@{t0}:100:20"], None),
        ("loss 1%, QP timeouts 20/100 us (tuned, beside)", "fail-loss-1-rto",
         base + ["--loss", "1%"] + RTO_TUNED, None),
        ("one spine of 16 down, QP timeouts 20/100 us (tuned, beside)", "fail-spine-rto",
         base + ["--fail", f"spine:3@{t0}"] + RTO_TUNED, None),
    ]
    ecmp_clean = run("fail-clean-ecmp", base + ["--mode", "ecmp"], force)
    results = []
    for text, name, args, target in cases:
        results.append((text, name, args, target, run(name, args, force)))
    # as libmroce-coll runs: connections kept open, collectives one after another; the
    # spine fails a quarter of the way into the third, against the third's clean time
    kb = base + ["--keep-connections", "--iterations", "3"]
    kept_clean = run("fail-kept-clean", kb, force)
    its = kept_clean["iterations_us"]
    tk = int(its[0] + its[1] + its[2] / 4)
    kept_spine = run("fail-kept-spine", kb + ["--fail", f"spine:3@{tk}"], force)
    kept_floor = run("fail-kept-spine-floor", kb + ["--fail", f"spine:3@{tk}", "--detect-us", "1"],
                     force)
    planes = []
    for n in (2, 4, 8):
        pb = base + ["--planes", str(n)]
        c = run(f"fail-planes{n}-clean", pb, force)
        downs = []
        # a quarter of the way in, as the rest; an eighth and a half beside (a single flow's
        # luck sets the result, and the moment decides which flows are in flight)
        for frac, tag in ((4, ""), (8, "-early"), (2, "-late")):
            tp = int(c["completion_us"] / frac)
            downs.append((tp, run(f"fail-planes{n}-down{tag}", pb + ["--fail", f"plane:1@{tp}"],
                                  force)))
        # the first plane, where every connection starts and proves the others from
        tp = int(c["completion_us"] / 4)
        first = (tp, run(f"fail-planes{n}-down-first", pb + ["--fail", f"plane:0@{tp}"], force))
        planes.append((n, pb, c, downs, first))
    t = [f"All-to-all, {fmt_size(size)} per host, 256 hosts (16 leaves x 16, 16 spines, 400 Gbit/s), "
         f"mroce's defaults with 16 paths; failures at {t0} us, a quarter of the clean run "
         f"({clean['completion_us']:.0f} us, {clean['ratio']:.2f}x the ideal).", "",
         "| case | completion (us) | slowdown vs clean | target | met | resends | timeouts | tail probes | paths retired |",
         "|---|---|---|---|---|---|---|---|---|"]

    def plane_floor(n, tp, c):
        """What losing one plane of n at tp costs by itself, if the clean run moved its bytes at
        the planes' full rate: the rest at (n-1)/n of it (nothing lost, nothing to recover)."""
        rest = max(0.0, 1 - tp / c["completion_us"])
        return f"floor {rest * (n / (n - 1) - 1) * 100:+.0f}%"

    def row(text, j, ref, target, at_most=False):
        slow = j["completion_us"] / ref["completion_us"] - 1 if j["ok"] else float("nan")
        ok = j["ok"] and (slow <= target if at_most else slow < target) if target is not None else False
        met = "" if target is None else ("met" if ok else "missed")
        tgt = "" if target is None else f"{'<=' if at_most else '<'} {target * 100:g}%"
        t.append(f"| {text} | {j['completion_us']:.0f}{'' if j['ok'] else ' (failed)'} | "
                 f"{slow * 100:+.1f}% | {tgt} | {met} | {j['retransmissions']} | {j['timeouts']} | "
                 f"{j.get('tail_probes', '-')} | {j['paths_retired']} |")

    for text, name, args, target, j in results:
        row(text, j, ecmp_clean if "ecmp" in name else clean, target)
    row(f"connections kept, three all-to-alls in a row: the third, clean (the first two "
        f"{its[0]:.0f} and {its[1]:.0f} us)", kept_clean, kept_clean, None)
    row(f"... one spine of 16 down a quarter into the third (at {tk} us)", kept_spine,
        kept_clean, 0.05)
    row("... the leaves routing around it within 1 us (floor)", kept_floor, kept_clean, None)
    for n, pb, c, downs, first in planes:
        row(f"{n} planes, clean ({c['completion_us']:.0f} us)", c, c, None)
        for i, (tp, d) in enumerate(downs):
            when = ["a quarter", "an eighth", "half"][i]
            row(f"one plane of {n} down at {tp} us ({when} of the way; {plane_floor(n, tp, c)})", d, c,
                1.0 / n, True)
        row(f"... the first plane (plane 0) down at {first[0]} us instead ({plane_floor(n, first[0], c)})",
            first[1], c, 1.0 / n, True)
    # "leave a failed plane as fast as today": each plane failure against the same run, same
    # moment, on the code before planes carried data from the first packet (docs/scale/before/)
    t += ["", "Each plane failure against the same command on the code before planes carried data "
          "from a connection's first packet (commit 2258b6b, `docs/scale/before/`): a failed plane "
          "is to be left at least as fast as it was.", "",
          "| planes | plane down | at (us) | before (us) | after (us) | after / before | as fast | met |",
          "|---|---|---|---|---|---|---|---|"]
    fast_met = fast_all = 0
    for n, pb, c, downs, first in planes:
        for i, (tp, d) in enumerate(downs + [first]):
            which = "0 (the first)" if i == len(downs) else "1"
            arg = f"plane:{0 if i == len(downs) else 1}@{tp}"
            b = before_fail(n, pb + ["--fail", arg])
            if b is None:
                t.append(f"| {n} | {which} | {tp} | n/a | {d['completion_us']:.0f} | | | |")
                continue
            fast_all += 1
            ok = d["ok"] and b["ok"] and d["completion_us"] <= b["completion_us"]
            fast_met += ok
            t.append(f"| {n} | {which} | {tp} | {b['completion_us']:.0f}"
                     f"{'' if b['ok'] else ' (failed)'} | {d['completion_us']:.0f} | "
                     f"{d['completion_us'] / b['completion_us']:.2f} | <= 1 | "
                     f"{'met' if ok else 'missed'} |")
    t += ["", f"As fast as before: {fast_met} of {fast_all} met."]
    t += ["", "The floor rows take the dead spine out of the leaves' ECMP groups 1 us after it "
          "fails (`--detect-us 1`; the default, 1000 us, leaves it a black hole for the rest of the "
          "run): the spine's capacity is lost, but almost no packet is, so they show what losing it "
          "costs before any transport recovers anything."]
    t += ["", "A plane's floor: the slowdown the lost capacity costs by itself when the clean run "
          "moves its bytes at the planes' full rate (the surviving n-1 planes carry the rest at "
          "(n-1)/n of it); a clean run held back by something else (round trips, a window) loses "
          "less. The targets (at most 1/n) were set when planes added little bandwidth: at a "
          "quarter of the way, 2 planes' floor is +75% and 4 planes' +25%, at or above them."]
    t += ["", "The planes' failures at a quarter of their own clean runs are the rows the targets are "
          "for; an eighth and half of the way are beside them, since the moment decides which "
          "flows are caught. The plane that fails is plane 1, except in the rows of the first "
          "plane: a connection uses every plane from its first packet, the others within an "
          "allowance each until their probe nonces come back, while the first needs no proof, so "
          "a connection opened after plane 0 failed, before its device knew, loses its first "
          "packets there; once the device holds plane 0 for dead, new connections wait for a "
          "probe's echo instead (docs/scale.md point 21; protocol.md, \"Planes\").", "",
          "Commands:", "", "```"]
    t.append(cmd_of(base) + "    # clean")
    for text, name, args, target, j in results:
        t.append(cmd_of(args))
    t.append(cmd_of(kb) + "    # clean, connections kept")
    t.append(cmd_of(kb + ["--fail", f"spine:3@{tk}"]))
    t.append(cmd_of(kb + ["--fail", f"spine:3@{tk}", "--detect-us", "1"]))
    for n, pb, c, downs, first in planes:
        t.append(cmd_of(pb) + "    # clean")
        for tp, d in downs:
            t.append(cmd_of(pb + ["--fail", f"plane:1@{tp}"]))
        t.append(cmd_of(pb + ["--fail", f"plane:0@{first[0]}"]))
    t.append("```")
    png = "failures.png"
    plot(f"""set title 'Delivered into hosts, all-to-all {fmt_size(size)} per host, 256 hosts'
set xlabel 'us'; set ylabel 'Tbit/s (all hosts)'; set key bottom right
plot 'fail-clean.dat' using 1:($2/1000) with lines title 'clean', \\
     'fail-spine.dat' using 1:($2/1000) with lines title 'spine 3 down at {t0} us', \\
     'fail-spine-ecmp.dat' using 1:($2/1000) with lines title '... single-path ECMP', \\
     'fail-loss-1.dat' using 1:($2/1000) with lines title '1% loss'""", png)
    t.insert(0, f"![failures](scale/{png})\n")
    section("failures", "\n".join(t))


# ---- planes: throughput against one plane

PLANE_TARGET = {16 * MIB: 0.8, 64 * MIB: 0.9}	# P planes give >= this x P times one plane's throughput


def study_planes(sizes, force):
    """All-to-all on 256 hosts over 1, 2, 4 and 8 planes: each plane a fabric of its own; beside
    each row the same run on the code before (docs/scale/before/, commit 2258b6b)."""
    t = ["| bytes per host | planes | before (us) | after (us) | ratio to its ideal | throughput vs 1 plane, "
         "before | after | target | met | resends | planes given up |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    cmds, verdicts, dat = [], [], []
    for size in sizes:
        one = one_before = None
        for n in (1, 2, 4, 8):
            args = FAB[256] + ["--workload", "alltoall", "--size", str(size), "--planes", str(n)]
            j = run(f"planes-{size // MIB}m-p{n}", args, force)
            path = os.path.join(BEFORE, f"planes-{size // MIB}m-p{n}.json")
            b = json.load(open(path)) if os.path.exists(path) else None
            cmds.append(cmd_of(args))
            if n == 1:
                one, one_before = j, b
            gain = one["completion_us"] / j["completion_us"] if j["ok"] and one["ok"] else float("nan")
            bgain = (one_before["completion_us"] / b["completion_us"]
                     if b and one_before and b["ok"] and one_before["ok"] else float("nan"))
            want = PLANE_TARGET.get(size, 0) * n if n > 1 else None
            met = "" if want is None else ("met" if j["ok"] and gain >= want else "missed")
            if want is not None:
                verdicts.append(f"{met}: {n} planes at {fmt_size(size)} on 256 hosts >= {want:.1f}x one "
                                f"plane's throughput: {gain:.2f}x (before {bgain:.2f}x)")
            dat.append(f"{size // MIB} {n} {bgain:.4f} {gain:.4f}")
            t.append(f"| {fmt_size(size)} | {n} | {b['completion_us'] if b else float('nan'):.0f} | "
                     f"{j['completion_us']:.0f}{'' if j['ok'] else ' (failed)'} | "
                     f"{ratio_cell(j)} | {bgain:.2f}x | {gain:.2f}x | "
                     f"{'' if want is None else f'>= {want:.1f}x'} | {met} | "
                     f"{j['retransmissions']} | {j.get('plane_downs', '-')} |")
    with open(os.path.join(OUT, "planes.dat"), "w") as f:
        f.write("# size_mib planes gain_before gain_after\n" + "\n".join(dat) + "\n")
    plot("""set title 'All-to-all, 256 hosts: throughput over planes, against one plane'
set xlabel 'planes'; set ylabel 'throughput / one plane'; set key top left; set xtics (1, 2, 4, 8)
plot x title 'linear' dashtype 3, \\
     '< grep "^16 " planes.dat' using 2:3 with linespoints dashtype 2 title '16 MiB before', \\
     '< grep "^16 " planes.dat' using 2:4 with linespoints lw 2 title '16 MiB after', \\
     '< grep "^64 " planes.dat' using 2:3 with linespoints dashtype 2 title '64 MiB before', \\
     '< grep "^64 " planes.dat' using 2:4 with linespoints lw 2 title '64 MiB after'""", "planes.png")
    t = ["![planes](scale/planes.png)", ""] + t
    t += ["", "Throughput vs 1 plane: the 1-plane run's completion time over this one's, at the same size. "
          "Targets: P planes give at least 0.9 P times one plane's throughput at 64 MiB and 0.8 P at "
          "16 MiB. *Before*: the same command on the code before planes carried data from a "
          "connection's first packet (commit 2258b6b). Commands:", "", "```"] + cmds + ["```", ""]
    t += [f"- {v}" for v in verdicts]
    section("planes", "\n".join(t))
    for v in verdicts:
        print(v)


# ---- incast

def study_incast(size, force):
    base = FAB[256] + ["--workload", "incast", "--incast", "128", "--size", str(size)]
    t = ["| congestion control | completion / ideal | time to 90% of the receiver's link (us) | "
         "Jain fairness | slowest sender (Gbit/s; fair share 3.1) | peak queue at the receiver (KiB) | "
         "drops | resends | timeouts |", "|---|---|---|---|---|---|---|---|---|"]
    runs = []
    cases = (("none", []), ("ecn", []), ("none, QP timeouts 20/100 us (tuned, beside)", RTO_TUNED))
    for cc, extra in cases:
        name = f"incast-{cc.split(',')[0]}" + ("-rto" if extra else "")
        args = base + ["--cc", cc.split(",")[0]] + extra
        j = run(name, args, force)
        conv = None
        with open(os.path.join(OUT, name + ".dat")) as f:
            for line in f:
                if line.startswith("#"):
                    continue
                tus, _, busiest = line.split()[:3]
                if float(busiest) >= 0.9 * 400 and conv is None:
                    conv = float(tus)
        runs.append((cc, name, args, j))
        t.append(f"| {cc}{' (the library default)' if cc == 'none' else ''} | {ratio_cell(j)} | "
                 f"{'never' if conv is None else f'{conv:.0f}'} | {j['flows']['jain']:.3f} | "
                 f"{j['flows']['goodput_gbps_min']:.2f} | {j['peak_queue_bytes']['leaf_host'] / 1024:.0f} | "
                 f"{j['drops']['buffer']} | {j['retransmissions']} | {j['timeouts']} |")
    t += ["", f"128 senders, {fmt_size(size)} each, into host 0 of 256 (400 Gbit/s links, 1 MiB port "
          "buffers). Time to 90%: the first 10 us sample in which host 0 received at 90% of its "
          "link (wire bytes): the first burst reaches it at once; whether the rate stays there is "
          "what the completion time and the plot show.", "", "```"] + [cmd_of(a) for _, _, a, _ in runs] + ["```"]
    png = "incast.png"
    plot("""set title '128-to-1 incast, 400 Gbit/s'; set xlabel 'us'; set ylabel 'Gbit/s into the receiver'
set y2label 'queue at its leaf port (KiB)'; set y2tics; set ytics nomirror; set key bottom right
plot 'incast-none.dat' using 1:3 with lines title 'rate, library defaults', \\
     'incast-none.dat' using 1:($5/1024) axes x1y2 with lines dashtype 2 title 'queue, library defaults', \\
     'incast-ecn.dat' using 1:3 with lines title 'rate, --cc ecn', \\
     'incast-ecn.dat' using 1:($5/1024) axes x1y2 with lines dashtype 2 title 'queue, --cc ecn', \\
     'incast-none-rto.dat' using 1:3 with lines title 'rate, RTO 20/100 us'""", png)
    t.insert(0, f"![incast](scale/{png})\n")
    section("incast", "\n".join(t))


# ---- state and the simulator's cost

# ---- the collectives at scale: the library's algorithms against the ideal, before and after

COLL_TARGETS = {	# (workload, MiB): the completion time over the ideal at most this
    ("allreduce", 1): 4.0, ("allreduce", 16): 1.3, ("allreduce", 64): 1.3,
    ("alltoall", 1): 5.0, ("alltoall", 4): 1.5, ("alltoall", 16): 1.2, ("alltoall", 64): 1.2,
}


def before_of(hosts, work, size):
    """The row's run on the code before (its JSON, with the command that made it), or None."""
    name = f"modes-{hosts}-{'allreduce-ring' if work == 'allreduce' else work}-{size // 1024}k-sprayed"
    path = os.path.join(BEFORE, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


# Rows that take about an hour of wall clock here (1024 hosts' 1023 connections each, opened
# and closed as the window moves): run with --slow.
SLOW = {(1024, "alltoall", 64 * MIB)}


def study_collectives(sizes, force, slow=False):
    """All-reduce and all-to-all on 256 and 1024 hosts as libmroce-coll's table runs them
    (the library's defaults), beside the ring pinned (all-reduce: the algorithm before) and the
    figures of the code before. Prints every target met or missed."""
    rows, dat, verdicts, skipped = [], [], [], []
    for hosts in (256, 1024):
        for work in ("allreduce", "alltoall"):
            for size in sizes:
                base = FAB[hosts] + ["--workload", work, "--size", str(size)]
                tag = f"coll-{hosts}-{work}-{size // 1024}k"
                if (hosts, work, size) in SLOW and not slow and not os.path.exists(
                        os.path.join(OUT, tag + ".json")):
                    skipped.append(cmd_of(base))
                    continue
                after = run(tag, base, force)
                ring = run(tag + "-ring", base + ["--algo", "ring"], force) if work == "allreduce" else None
                before = before_of(hosts, work, size)
                rows.append((hosts, work, size, before, ring, after))
                dat.append(f"{hosts} {work} {size / MIB:g} "
                           f"{before['ratio'] if before else 'nan'} {ring['ratio'] if ring and ring['ok'] else 'nan'} "
                           f"{after['ratio'] if after['ok'] else 'nan'}")
                t = COLL_TARGETS.get((work, size // MIB))
                if t is not None:
                    ok = after["ok"] and after["ratio"] <= t
                    verdicts.append(f"{'met' if ok else 'missed'}: {work} on {hosts} hosts at "
                                    f"{fmt_size(size)} <= {t}x the ideal: {ratio_cell(after)}x")
    with open(os.path.join(OUT, "collectives.dat"), "w") as f:
        f.write("# hosts workload size_mib ratio_before ratio_ring_pinned ratio_after\n" + "\n".join(dat) + "\n")
    for hosts in (256, 1024):
        png = f"collectives-{hosts}.png"
        plot(f"""set title 'Collectives, {hosts} hosts, 400 Gbit/s: completion / ideal, before and after'
set logscale x 2; set logscale y; set xlabel 'bytes per host (MiB)'; set ylabel 'completion / ideal'
set key top right
plot '< grep "^{hosts} allreduce" collectives.dat' using 3:4 with linespoints dashtype 2 title 'all-reduce before (ring)', \\
     '< grep "^{hosts} allreduce" collectives.dat' using 3:6 with linespoints lw 2 title 'all-reduce after (the table)', \\
     '< grep "^{hosts} alltoall" collectives.dat' using 3:4 with linespoints dashtype 2 title 'all-to-all before', \\
     '< grep "^{hosts} alltoall" collectives.dat' using 3:6 with linespoints lw 2 title 'all-to-all after'""", png)
    t = ["![collectives, 256 hosts](scale/collectives-256.png) ![collectives, 1024 hosts](scale/collectives-1024.png)", "",
         "| hosts | collective | bytes per host | before | ring pinned, now | after: algorithm | after | target |",
         "|---|---|---|---|---|---|---|---|"]
    for hosts, work, size, before, ring, after in rows:
        tg = COLL_TARGETS.get((work, size // MIB))
        met = "" if tg is None else (f"<= {tg}: " + ("met" if after["ok"] and after["ratio"] <= tg else "missed"))
        t.append(f"| {hosts} | {work} | {fmt_size(size)} | {ratio_cell(before) if before else 'n/a'} | "
                 f"{ratio_cell(ring) if ring else ''} | {after.get('algo', '?')} | {ratio_cell(after)} | {met} |")
    t += ["", "Each cell: completion time over the ideal. *Before*: the same row on the code before the "
          "algorithms for scale (commit 2258b6b: the ring, and the simulator's own all-to-all), from its saved run in "
          "`docs/scale/before/` (each JSON holds its command). *Ring pinned*: the library's ring on "
          "today's engine (`--algo ring`). *After*: the library's table as a user gets it. Commands:",
          "", "```"]
    t.append(cmd_of(FAB[256] + ["--workload", "allreduce", "--size", "SIZE"]) + "   # after; HOSTS 256 or 1024")
    t.append(cmd_of(FAB[256] + ["--workload", "allreduce", "--size", "SIZE", "--algo", "ring"]) + "   # ring pinned")
    t.append(cmd_of(FAB[256] + ["--workload", "alltoall", "--size", "SIZE"]))
    t += ["```", ""] + [f"- {v}" for v in verdicts]
    if skipped:
        t += ["", "Not run (about an hour of wall clock each on this machine; `--slow` runs them): "
              + ", ".join(f"`{c}`" for c in skipped) + "."]
    section("collectives", "\n".join(t))
    for v in verdicts:
        print(v)


def study_state(force):
    t = ["| run | hosts | frames | wall (s) | frames per minute | ns per frame | max RSS (MiB) | "
         "state per host (B) | per connection end (B) |", "|---|---|---|---|---|---|---|---|---|"]
    names = [n for n in sorted(os.listdir(OUT)) if n.endswith(".json")]
    for n in names:
        with open(os.path.join(OUT, n)) as f:
            j = json.load(f)
        if j["frames"] < 1000000:
            continue
        sm = j["simulator"]
        t.append(f"| {n[:-5]} | {j['config']['hosts']} | {j['frames']} | {sm['wall_s']:.1f} | "
                 f"{sm['frames_per_min']:.3g} | {sm['ns_per_frame']:.0f} | {sm['max_rss_kib'] // 1024} | "
                 f"{j['state_bytes']['per_host']} | {j['state_bytes']['per_connection_end']} |")
    big = [n for n in names if n.startswith("modes-1024-alltoall")]
    if big:
        with open(os.path.join(OUT, big[0])) as f:
            j = json.load(f)
        host, conn = j["state_bytes"]["per_host"], j["state_bytes"]["per_connection_end"]
        t += ["", f"A host of a 1024-host job connected to every peer: {host} + 1023 x {conn} = "
              f"{(host + 1023 * conn) / MIB:.0f} MiB of transport state (the simulator keeps only a "
              "window of connections per host; see above)."]
    t += ["", "Every run above with at least 10^6 frames; frames are counted where they enter the "
          "fabric (data, ACKs, probes); wall time on this machine, one core."]
    section("state", "\n".join(t))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=("modes-256", "modes-1024", "collectives", "failures", "planes",
                                       "incast", "state"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--slow", action="store_true", help="also the rows of an hour or more")
    a = ap.parse_args()
    if not os.access(SIM, os.X_OK):
        sys.exit(f"studies: {SIM} is not built (make all)")
    os.makedirs(OUT, exist_ok=True)
    q = a.quick
    todo = [a.only] if a.only else ["modes-256", "modes-1024", "collectives", "failures", "planes",
                                    "incast", "state"]
    for s in todo:
        print(f"studies: {s}", flush=True)
        if s == "modes-256":
            study_modes(256, [MIB, 4 * MIB] if q else [MIB, 4 * MIB, 16 * MIB, 64 * MIB], a.force)
        elif s == "modes-1024":
            study_modes(1024, [MIB] if q else [MIB, 4 * MIB, 16 * MIB, 64 * MIB], a.force)
        elif s == "collectives":
            study_collectives([MIB, 4 * MIB] if q else [MIB, 4 * MIB, 16 * MIB, 64 * MIB], a.force,
                              a.slow)
        elif s == "failures":
            study_failures(4 * MIB if q else 16 * MIB, a.force)
        elif s == "planes":
            study_planes([4 * MIB] if q else [16 * MIB, 64 * MIB], a.force)
        elif s == "incast":
            study_incast(256 * 1024 if q else MIB, a.force)
        else:
            study_state(a.force)
    print(f"studies: {DOC} written")


if __name__ == "__main__":
    main()
