#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Throughput with 1, 2 and 4 receive queues, a QP per queue, against the cores there are.

    selftests/bench/queues_targets.py [--rounds N] [--secs S] [--out docs/benchmarks.md]

Root. One veth pair between two namespaces, as bench.py sets it up (MTU 3498,
`mroce attach` on both ends beforehand), but with 4 receive and 4 transmit
queues on each end. veth delivers a frame on the peer's queue it was sent
from, so the process on queue q of one end talks to the process on queue q
of the other. For N = 1, 2, 4: N servers in B, server i
`mroce-perf server --dev vb --addr B --port 18515+i --queue i`, then N
clients in A started together, client i `mroce-perf client --dev va --addr B
--port 18515+i --queue i --test write_bw --size 1m --duration S`: a process
and a QP per queue on each end. Before the clients start, `mroce status vb
--json` must show queue i served by server i's pid.

As a user runs it: the servers busy-poll (mroce-perf's default for a server),
the clients run the library's progress thread (its default for bandwidth
tests). Beside it, labelled as tuned and never instead, the same with the
servers on the library's thread too (`--progress thread`): with more
busy-polling processes than cores, the spinning ones take the CPU the
others' transfers need.

Throughput is the sum of the clients' own results (each over its whole
transfer). CPU per byte counts every CPU of the machine (/proc/stat, busy =
everything but idle and iowait, sampled every 20 ms by bench.py's Sampler)
over the clients' common transfer window only: from the latest of the
clients' first per-second interval lines to the earliest of their last ones,
the bytes in it interpolated from each client's interval lines, so starting
up and the first second's ramp are outside. Rounds are interleaved (1q 2q 4q
defaults, 1q 2q 4q tuned; then again), as this VM's speed drifts between
runs; each ratio compares figures of one round.

Every run must leave wrong_queue and no_xsk where they were on both ends
(`mroce status --json`): a frame of these processes that met a queue its
device does not serve, or no socket at all, fails the run.

Prints each target as met or missed on the median of the rounds' ratios,
with every round's, and the ceiling the 2 cores allow; with --out, replaces
the section between <!-- targets: queues_targets.py --> and
<!-- /targets queues --> of the report (or appends it).
"""
import argparse, json, os, re, signal, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (the namespaces, the servers, the tools' paths, CPU sampling)

BEGIN, END = "<!-- targets: queues_targets.py -->", "<!-- /targets queues -->"
QUEUES = (1, 2, 4)
PORT = 18515
INTERVAL = r"\[\s*([\d.]+)-\s*([\d.]+) s\]\s+(\d+) bytes"
RESULT = r"^write_bw \d+ B: ([\d.]+) Gbit/s in ([\d.]+) s, sent (\d+) retx (\d+)"
STRAYS = ("wrong_queue", "no_xsk")


class StrayFrames(Exception):
    """A run's frames met a queue nobody (or another device) serves: the run fails, no retry."""


SPLIT = ("user", "system", "irq+softirq", "steal", "idle")


def cpu_split():
    """Seconds of all CPUs so far, as SPLIT names them (user + nice, system, irq + softirq, steal,
    idle + iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    hz = os.sysconf("SC_CLK_TCK")
    return tuple(x / hz for x in (v[0] + v[1], v[2], v[5] + v[6], v[7], v[3] + v[4]))


class SplitSampler(B.Sampler):
    """bench.py's Sampler, and beside its busy seconds where they went (user, system, interrupts)."""

    def __init__(self):
        self.split = []
        super().__init__()

    def run(self):
        while not self.stop.is_set():
            t = time.monotonic()
            self.samples.append((t, B.cpu_busy_s()))
            self.split.append((t, cpu_split()))
            self.stop.wait(0.02)

    def shares(self, t0, t1):
        """Fractions of all CPUs' time over [t0, t1], as SPLIT names them."""
        s = list(self.split)
        d = [B.interp([(t, v[k]) for t, v in s], t1) - B.interp([(t, v[k]) for t, v in s], t0)
             for k in range(len(SPLIT))]
        tot = sum(d)
        return [x / tot for x in d] if tot else None


SAMPLER = None


def strays():
    """wrong_queue and no_xsk of both ends, from `mroce status --json`."""
    out = {}
    for ns, dev in ((B.NS_A, "va"), (B.NS_B, "vb")):
        c = json.loads(B.run_in(ns, [B.MROCE, "status", dev, "--json"]))["counters"]
        out.update({f"{dev} {k}": c[k] for k in STRAYS})
    return out


def served_by(pids):
    """Check `mroce status vb` shows queue i served by pids[i]."""
    st = json.loads(B.run_in(B.NS_B, [B.MROCE, "status", "vb", "--json"]))
    got = {q["queue"]: q["pid"] for q in st.get("queues", [])}
    want = {i: p for i, p in enumerate(pids)}
    if any(got.get(i) != p for i, p in want.items()):
        raise RuntimeError(f"mroce status vb: queues served {got}, expected {want}")


def run(n, secs, tuned):
    """n servers in B and n clients in A started together, pair i on queue i. Returns the figures."""
    before = strays()
    srvs = []
    try:
        for i in range(n):
            srvs.append(B.start_in(B.NS_B, [B.PERF, "server", "--dev", "vb", "--addr", B.IP_B, "--port",
                                            str(PORT + i), "--queue", str(i)]
                                   + (["--progress", "thread"] if tuned else []), ready="listening"))
        served_by([p.pid for p in srvs])
        lines, errors = [None] * n, []

        def client(i):
            try:
                lines[i] = B.live(B.NS_A, [B.PERF, "client", "--dev", "va", "--addr", B.IP_B, "--port",
                                           str(PORT + i), "--queue", str(i), "--test", "write_bw", "--size",
                                           "1m", "--duration", str(secs)], timeout=secs + 120)
            except Exception as e:  # noqa: BLE001  (said below, with the servers' side)
                errors.append(f"client {i}: {e}")

        ts = [threading.Thread(target=client, args=(i,)) for i in range(n)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for i, p in enumerate(srvs if errors else ()):
            log = next((l for q, l in B.procs if q is p), None)
            if log:
                log.seek(0)
                errors.append(f"server {i}:\n{log.read()[-1000:]}")
    finally:
        for p in srvs:
            B.stop(p)
    # first, as a failed client may be its outcome: frames that met the wrong queue, or none
    after = strays()
    grew = {k: after[k] - before[k] for k in after if after[k] != before[k]}
    if grew:
        raise StrayFrames(f"{n} queue(s){' (tuned)' if tuned else ''}: frames counted as {grew} "
                          "(a queue not served by the device, or by none)" + "".join("\n" + e for e in errors))
    if errors:
        raise RuntimeError("\n".join(errors))
    gbps, firsts, lasts, cum = [], [], [], []
    for i, ls in enumerate(lines):
        text = "\n".join(l for _, l in ls)
        m = re.search(RESULT, text, re.M)
        if not m:
            raise RuntimeError(f"client {i}: no result line in:\n{text[-2000:]}")
        gbps.append(float(m.group(1)))
        iv = [(t, int(x.group(3))) for t, l in ls for x in [re.search(INTERVAL, l)] if x]
        if len(iv) < 2:
            raise RuntimeError(f"client {i}: fewer than 2 interval lines:\n{text[-2000:]}")
        c, acc = [], 0
        for t, b in iv:
            acc += b
            c.append((t, acc))
        firsts.append(iv[0][0])
        lasts.append(iv[-1][0])
        cum.append(c)
    # the common window: every client past its first second, none yet done
    t0, t1 = max(firsts), min(lasts)
    window = t1 - t0
    nbytes = sum(B.interp(c, t1) - B.interp(c, t0) for c in cum) if window > 0.5 else 0
    cpu = SAMPLER.cpu(t0, t1) if nbytes else None
    return {"gbps": sum(gbps), "each": gbps, "window_s": window,
            "window_gbps": nbytes * 8 / window / 1e9 if nbytes else None,
            "cpu_s_per_gb": cpu / (nbytes / 1e9) if nbytes else None,
            "busy": cpu / window / os.cpu_count() if nbytes else None,
            "split": SAMPLER.shares(t0, t1) if nbytes else None}


def again(f):
    """f(), once more if it fails (a server's socket still held by the kernel, a launch lost):
    the retry is said, and a second failure ends the run. Stray frames are never retried."""
    try:
        return f()
    except (RuntimeError, B.subprocess.TimeoutExpired) as e:
        print(f"queues_targets: a run failed, once more: {str(e).splitlines()[0]}", flush=True)
        time.sleep(1)
        return f()


def one_round(secs):
    r = {}
    for tuned in (False, True):
        for n in QUEUES:
            k = f"{'t' if tuned else 'd'}{n}"
            r[k] = again(lambda: run(n, secs, tuned))
            x = r[k]
            print(f"  {n} queue(s){', servers on their thread (tuned)' if tuned else ''}: "
                  f"{x['gbps']:.2f} Gbit/s ({' + '.join(f'{g:.2f}' for g in x['each'])}), "
                  f"{B.fmt(x['cpu_s_per_gb'])} CPU s/GB, {B.fmt(x['busy'] * 100 if x['busy'] else None, 0)}% "
                  "of the CPUs busy", flush=True)
    return r


def ratio(a, b):
    return None if a is None or not b else a / b


def targets():
    """(text, measure(round), met(x) or None, unit[, judged]), as bench.py's target_rows() takes them."""
    T = []
    for v, label, judged in (("d", "defaults (servers busy-poll)", True),
                             ("t", "tuned (servers `--progress thread`), for information", False)):
        pre = "" if judged else "tuned: "
        T += [
            (f"{pre}2 queues >= 1.3x one queue's WRITE 1 MiB throughput, {label}",
             lambda r, v=v: ratio(r[f"{v}2"]["gbps"], r[f"{v}1"]["gbps"]), lambda x: x >= 1.3, "x", judged),
            (f"{pre}4 queues >= 0.9x 2 queues' throughput (no collapse past the cores; 10% for the VM's "
             f"noise), {label}",
             lambda r, v=v: ratio(r[f"{v}4"]["gbps"], r[f"{v}2"]["gbps"]), lambda x: x >= 0.9, "x", judged),
            (f"... 4 queues / one queue's throughput, {label}",
             lambda r, v=v: ratio(r[f"{v}4"]["gbps"], r[f"{v}1"]["gbps"]), None, "x"),
            (f"... CPU per byte, 2 queues / one queue's, {label}",
             lambda r, v=v: ratio(r[f"{v}2"]["cpu_s_per_gb"], r[f"{v}1"]["cpu_s_per_gb"]), None, "x"),
            (f"... CPU per byte, 4 queues / one queue's, {label}",
             lambda r, v=v: ratio(r[f"{v}4"]["cpu_s_per_gb"], r[f"{v}1"]["cpu_s_per_gb"]), None, "x"),
        ]
    T += [
        ("the CPUs' share busy with one queue, tuned (the defaults' busy-polling servers spin: "
         "their share is no measure of the work)", lambda r: r["t1"]["busy"], None, ""),
        ("the ceiling at one queue's CPU per byte: 1 / that share, tuned (more only if CPU per byte "
         "falls with more queues)", lambda r: ratio(1.0, r["t1"]["busy"]), None, "x"),
        ("the CPUs' share busy with 2 queues, defaults (1.00: nothing left for more queues)",
         lambda r: r["d2"]["busy"], None, ""),
        ("... with 4 queues, defaults", lambda r: r["d4"]["busy"], None, ""),
        ("tuned / defaults, 4 queues' throughput",
         lambda r: ratio(r["t4"]["gbps"], r["d4"]["gbps"]), None, "x"),
    ]
    return T


def report(rounds, secs):
    ncpu = os.cpu_count()
    L = [BEGIN, "## Receive queues: 1, 2 and 4, a QP per queue (`selftests/bench/queues_targets.py`)\n",
         f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: `selftests/bench/queues_targets.py "
         f"--rounds {len(rounds)} --secs {secs:g}`, {len(rounds)} rounds, interleaved (1, 2, 4 queues with "
         "the defaults, then 1, 2, 4 tuned, each round). One veth pair with 4 receive and 4 transmit "
         "queues on each end, MTU 3498, mroce's datapath attached on both (`mroce attach`). For N queues, N "
         "servers in B, server i `mroce-perf server --dev vb --addr B --port 18515+i --queue i`, and N "
         "clients in A started together, client i `mroce-perf client --dev va --addr B --port 18515+i "
         f"--queue i --test write_bw --size 1m --duration {secs:g}`: a process and a QP per queue on each "
         "end (veth delivers a frame on the peer's queue it left from). Defaults as a user runs them: the "
         "servers busy-poll, the clients use the library's progress thread; tuned, beside: the servers on "
         "the library's thread too (`--progress thread`). Throughput: the sum of the clients' results. "
         "CPU per byte over all CPUs from /proc/stat, over the clients' common transfer window (the latest "
         "first interval line to the earliest last one: no start-up, no first second). Every run left "
         "`wrong_queue` and `no_xsk` unchanged on both ends (`mroce status --json`), and `mroce status` "
         "showed queue i served by server i's pid. The ratio is the median of the rounds'.\n",
         f"Ceiling: this machine has {ncpu} CPUs, shared by both ends, their kernels' work and the "
         "copy-mode veth path (where the sender's `sendto()` runs the receiving end's XDP and its copy "
         "into the receiver's UMEM). N queues can gain over one queue at most what the CPUs one queue "
         "leaves idle allow: at one queue's CPU per byte, 1 / (the share of the CPUs one queue keeps "
         f"busy), and never more than {ncpu}x; more than the first only if CPU per byte falls with more "
         "queues (fewer sleeps and wake-ups per byte). Once every CPU is busy, more queues can at best "
         "hold the figure: 4 queues on 2 CPUs cannot double 2 queues'.\n",
         "| target | measured (median) | each round | met |", "|---|---|---|---|"]
    rows, met_all = B.target_rows(rounds, targets())
    L += rows
    L += ["", "Total Gbit/s (each client's), CPU s per GB, the CPUs' time over the common window "
          f"({' / '.join(SPLIT)}), each round:\n",
          "| round | queues | defaults (servers busy-poll) | tuned (servers `--progress thread`) |",
          "|---|---|---|---|"]

    def cell(x):
        s = x.get("split")
        sp = " / ".join(f"{v * 100:.0f}%" for v in s) if s else "n/a"
        return (f"{x['gbps']:.2f} ({', '.join(f'{g:.2f}' for g in x['each'])}), "
                f"{B.fmt(x['cpu_s_per_gb'])} s/GB, {sp}")
    for i, r in enumerate(rounds):
        for n in QUEUES:
            L.append(f"| {i + 1} | {n} | {cell(r[f'd{n}'])} | {cell(r[f't{n}'])} |")
    L.append(END)
    return "\n".join(L) + "\n", met_all


def main():
    global SAMPLER
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=float, default=4, help="each run's length (the first 1 s is not in CPU per byte)")
    ap.add_argument("--out", help="the report to put the section in (docs/benchmarks.md)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("queues_targets: needs root (network namespaces, XDP)")
    if a.secs < 3:
        sys.exit("queues_targets: --secs 3 or more (CPU is counted over the intervals after the first second)")
    for t in (B.PERF, B.MROCE):
        if not os.access(t, os.X_OK):
            sys.exit(f"queues_targets: {t} is not built (run make)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    SAMPLER = SplitSampler()
    rounds = []
    try:
        B.veth_pair(B.MTU, queues=max(QUEUES))
        for i in range(a.rounds):
            print(f"queues_targets: round {i + 1} of {a.rounds}", flush=True)
            rounds.append(one_round(a.secs))
    finally:
        B.cleanup()
        SAMPLER.stop.set()
    text, _ = report(rounds, a.secs)
    B.publish("queues_targets", text, a.out, BEGIN, END)
    busy = B.median([r["t1"]["busy"] for r in rounds])
    busy2 = B.median([r["d2"]["busy"] for r in rounds])
    print(f"ceiling: {os.cpu_count()} CPUs; one queue (tuned) kept {B.fmt(busy and busy * 100, 0)}% of them "
          f"busy: at its CPU per byte N queues gain at most {B.fmt(busy and 1 / busy)}x over one (never more "
          f"than {os.cpu_count()}x); 2 queues (defaults) kept {B.fmt(busy2 and busy2 * 100, 0)}% busy")
    B.print_verdicts(targets(), rounds, " (")


if __name__ == "__main__":
    main()
