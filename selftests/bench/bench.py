#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""mroce's benchmark suite: mroce next to what users would pick instead, in one run.

    selftests/bench/bench.py [--runs N] [--quick] [--out docs/benchmarks.md]

(`make bench` installs the tools and runs it.) Root. Every case runs between
two network namespaces on a veth pair (MTU 3498, the largest frame native XDP
takes here without multi-buffer), the impaired cases on the emulated fabric
(4 paths delayed 10/20/50/100 us, loss 0-5%). Each figure is the median of
--runs runs; the targets are printed as ratios measured in this same run.
Writes the markdown report, gnuplot PNGs beside it, and raw JSON results.
Everything created (namespaces, fabric, processes) is removed on any exit.
"""
import argparse, json, os, platform, re, shutil, signal, statistics, subprocess, sys, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
PERF = os.path.join(BUILD, "mroce-perf")
MROCE = os.path.join(BUILD, "mroce")
RAW = os.path.join(BUILD, "selftests", "xsk_raw")
FABRIC_SH = os.path.join(ROOT, "selftests", "fabric", "fabric.sh")
NS_A, NS_B = f"mrb-a-{os.getpid()}", f"mrb-b-{os.getpid()}"
IP_A, IP_B = "198.18.0.1", "198.18.0.2"
FAB = f"b{os.getpid()}"
MTU = 3498
WINDOW = ["--window", "896"]	# the largest the receive window allows: loss recovery needs room
procs = []


def sh(cmd, check=True, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), check=check, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)


def ns_cmd(ns, args):
    return ["ip", "netns", "exec", ns] + args


def run_in(ns, args, timeout=120, env=None):
    e = dict(os.environ, **(env or {}))
    p = subprocess.run(ns_cmd(ns, args), text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout, env=e)
    if p.returncode:
        raise RuntimeError(f"{' '.join(args)} exited {p.returncode}:\n{p.stdout[-2000:]}")
    return p.stdout


def start_in(ns, args, ready=None, env=None):
    """A background server; waits until its output shows `ready` (or 1 s)."""
    log = open(f"/tmp/{ns}-{len(procs)}.log", "w+")
    p = subprocess.Popen(ns_cmd(ns, args), stdout=log, stderr=subprocess.STDOUT, text=True,
                         env=dict(os.environ, **(env or {})), start_new_session=True)
    procs.append((p, log))
    for _ in range(300):
        log.seek(0)
        if ready is None or ready in log.read():
            break
        if p.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"{args[0]} ended early:\n{log.read()[-2000:]}")
        time.sleep(0.02)
    if ready is None:
        time.sleep(1)
    return p


def stop(p):
    for q, log in list(procs):
        if q is p:
            try:
                os.killpg(q.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                q.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(q.pid, signal.SIGKILL)
            log.close()
            procs.remove((q, log))


def target_rows(rounds, targets):
    """The rows of a targets table: (text, measure(round), met(x), unit[, judged]) each, judged on
    the median of the rounds' measures; a row with judged False is printed for information ("info
    (would be met)") and does not count, nor does one with met None ("info"). Returns (rows, every judged target met)."""
    rows, met_all = [], True
    for text, f, ok, unit, *judged in targets:
        judged = judged[0] if judged else True
        xs = [x for x in (f(r) for r in rounds) if x is not None]
        m = statistics.median(xs) if xs else None
        met = m is not None and ok is not None and ok(m)
        if ok is None:	# a figure beside the targets, with nothing to meet
            verdict = "info"
        elif judged:
            met_all &= met
            verdict = "met" if met else "missed"
        else:
            verdict = f"info (would be {'met' if met else 'missed'})"
        rows.append(f"| {text} | {'n/a' if m is None else f'{m:.2f}{unit}'} | "
                    f"{', '.join(f'{x:.2f}' for x in xs)} | {verdict} |")
    return rows, met_all


def replace_section(path, begin, end, text):
    """Put text in place of the report's section between the begin and end markers (or append it)."""
    old = open(path).read() if os.path.exists(path) else ""
    if begin in old and end in old:
        new = old[:old.index(begin)] + text.rstrip("\n") + old[old.index(end) + len(end):]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    with open(path, "w") as f:
        f.write(new)


def publish(name, text, out, begin, end):
    """Print a report's table lines; with out, put the report in that file's section."""
    for line in text.splitlines():
        if line.startswith("|"):
            print(line)
    if out:
        replace_section(out, begin, end, text)
        print(f"{name}: section written to {out}")


def interp(samples, t):
    """A cumulative count at t from (t, count) samples in time order, interpolated linearly."""
    prev = None
    for ts, v in samples:
        if ts >= t:
            if prev is None or ts == prev[0]:
                return v if prev is None else prev[1]
            return prev[1] + (v - prev[1]) * (t - prev[0]) / (ts - prev[0])
        prev = (ts, v)
    return prev[1] if prev else 0


def cleanup():
    for p, _ in list(procs):
        stop(p)
    for ns in (NS_A, NS_B):
        for pid in sh(["ip", "netns", "pids", ns], check=False).stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        sh(["ip", "netns", "del", ns], check=False)
    sh([FABRIC_SH, "down", FAB], check=False)


def veth_pair(mtu, queues=1):
    """va in NS_A, vb in NS_B, `queues` receive and transmit queues each end (veth delivers a
    frame on the peer's queue it left from), the datapath attached; returns vb's MAC."""
    cleanup()
    sh(["ip", "netns", "add", NS_A])
    sh(["ip", "netns", "add", NS_B])
    nq = ["numtxqueues", str(queues), "numrxqueues", str(queues)]
    sh(["ip", "link", "add", "va", "netns", NS_A] + nq + ["type", "veth", "peer", "name", "vb", "netns", NS_B] + nq)
    for ns, dev, ip in ((NS_A, "va", IP_A), (NS_B, "vb", IP_B)):
        run_in(ns, ["ip", "link", "set", "lo", "up"])
        run_in(ns, ["ip", "link", "set", dev, "mtu", str(mtu), "up"])
        run_in(ns, ["ip", "addr", "add", ip + "/24", "dev", dev])
    mac_b = re.search(r"link/ether (\S+)", run_in(NS_B, ["ip", "-o", "link", "show", "vb"])).group(1)
    run_in(NS_A, ["ping", "-c", "1", "-W", "2", IP_B])
    # The datapath goes on once, as a deployment does (`mroce attach`): loading
    # it (verifier, device memory pool) is no part of any measured run.
    for ns, dev in ((NS_A, "va"), (NS_B, "vb")):
        run_in(ns, [MROCE, "attach", dev])
    return mac_b


def xdp(attach, ends=None):
    """mroce's datapath on (`mroce attach`) or off (`mroce detach`) on both ends, checked.

    Kernel traffic (TCP, UCX and libfabric over TCP or UDP, xsk_raw's own XDP
    program) is measured with it off, as on a host without mroce: on veth an
    attached XDP program costs TCP its GSO/GRO. ends: (namespace, device)
    pairs, bench.py's veth pair by default. Detaching what is not attached,
    or attaching what is, is no error: the state after is what is checked.
    """
    for ns, dev in ends or ((NS_A, "va"), (NS_B, "vb")):
        run_in_any(ns, [MROCE, "attach" if attach else "detach", dev])
        shown = run_in(ns, ["ip", "-d", "link", "show", dev])
        if attach != ("prog/xdp" in shown):
            raise RuntimeError(f"XDP {'not ' if attach else 'still '}attached on {dev} in {ns}:\n{shown}")


def cpu_busy_s():
    """Busy CPU seconds of the whole machine so far (all CPUs)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = v
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class Sampler:
    """(CLOCK_MONOTONIC, busy CPU s) every 20 ms, on a thread: CPU over any span after the fact."""

    def __init__(self):
        self.samples, self.stop = [], threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop.is_set():
            self.samples.append((time.monotonic(), cpu_busy_s()))
            self.stop.wait(0.02)

    def cpu(self, t0, t1):
        time.sleep(0.05)	# a sample after t1
        s = list(self.samples)
        return interp(s, t1) - interp(s, t0)


def live(ns, args, timeout=300):
    """Run a client, stamping each line of its output as it arrives: [(monotonic, line)]."""
    p = subprocess.Popen(ns_cmd(ns, args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         bufsize=1)
    lines, killer = [], threading.Timer(timeout, p.kill)
    killer.start()
    try:
        for line in p.stdout:
            lines.append((time.monotonic(), line.rstrip("\n")))
        p.wait()
    finally:
        killer.cancel()
    if p.returncode:
        raise RuntimeError(f"{' '.join(args)} exited {p.returncode}:\n" + "\n".join(l for _, l in lines[-30:]))
    return lines


def run_in_any(ns, args, timeout=120):
    """run_in, whatever the exit code (the caller checks the outcome)."""
    return subprocess.run(ns_cmd(ns, args), text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=timeout).stdout


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def repeat(n, f):
    return [f() for _ in range(n)]


# ---- the cases ---------------------------------------------------------------

def raw_ceiling(mac_b, size, secs):
    # Each run's frames carry their own token: the receiver counts only those.
    token = str(int.from_bytes(os.urandom(8), "little"))
    # The socket of the run before may still be held by the kernel (EBUSY): try again.
    for attempt in range(3):
        try:
            srv = start_in(NS_B, [RAW, "rx", "--dev", "vb", "--seconds", str(secs), "--token", token], ready="ready")
            break
        except RuntimeError:
            if attempt == 2:
                raise
            time.sleep(1)
    run_in(NS_A, [RAW, "tx", "--dev", "va", "--dst-mac", mac_b, "--src", IP_A, "--dst", IP_B,
                  "--size", str(size), "--seconds", str(secs), "--token", token])
    srv.wait(30)
    log = [l for p, l in procs if p is srv][0]
    log.seek(0)
    m = re.search(r"rx: \d+ frames \d+ bytes in [\d.]+ s: ([\d.]+) Mpps, ([\d.]+) Gbit/s", log.read())
    stop(srv)
    return {"mpps": float(m.group(1)), "gbps": float(m.group(2))} if m else None


def memcpy_ceiling(size, secs):
    """One core copying `size` bytes at a time, beyond the caches: what one more copy of each byte costs."""
    m = re.search(r"memcpy: \d+-byte copies: ([\d.]+) Gbit/s", sh([RAW, "memcpy", "--size", str(size),
                                                                  "--seconds", str(secs)]).stdout)
    return float(m.group(1)) if m else None


def mroce_perf(ns_srv, ns_cli, dev_srv, dev_cli, ip_srv, args):
    srv = start_in(ns_srv, [PERF, "server", "--dev", dev_srv, "--addr", ip_srv], ready="listening")
    try:
        out = run_in(ns_cli, [PERF, "client", "--dev", dev_cli, "--addr", ip_srv, "--json"] + args, timeout=300)
    except RuntimeError as e:
        # the server's side of a failure is in its log: say it, not only the client's
        log = next((l for q, l in procs if q is srv), None)
        if log:
            log.seek(0)
            raise RuntimeError(f"{e}\nthe server's output:\n{log.read()[-2000:]}") from None
        raise
    finally:
        stop(srv)
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def iperf3(ns_srv, ns_cli, ip_srv, secs, streams=1):
    srv = start_in(ns_srv, ["iperf3", "-s", "-1", "-B", ip_srv], ready=None)
    try:
        d = json.loads(run_in(ns_cli, ["iperf3", "-c", ip_srv, "-t", str(secs), "-J"]
                              + (["-P", str(streams)] if streams > 1 else [])))
    finally:
        stop(srv)
    return d["end"]["sum_received"]["bits_per_second"] / 1e9


def sockperf(secs):
    srv = start_in(NS_B, ["sockperf", "server", "--tcp", "-i", IP_B, "-p", "11111"], ready=None)
    try:
        out = run_in(NS_A, ["sockperf", "ping-pong", "--tcp", "-i", IP_B, "-p", "11111", "-m", "14", "-t", str(secs)])
    finally:
        stop(srv)
    pct = {float(a): float(b) for a, b in re.findall(r"percentile ([\d.]+) =\s*([\d.]+)", out)}
    return {"p50": pct.get(50.0), "p99": pct.get(99.0), "p999": pct.get(99.9)}


def ucx_put_bw(size):
    srv = start_in(NS_B, ["ucx_perftest", "-p", "13337"], env={"UCX_TLS": "tcp", "UCX_NET_DEVICES": "vb"})
    try:
        out = run_in(NS_A, ["ucx_perftest", IP_B, "-p", "13337", "-t", "ucp_put_bw", "-s", str(size), "-n", "2000"],
                     env={"UCX_TLS": "tcp", "UCX_NET_DEVICES": "va"})
    finally:
        stop(srv)
    m = re.search(r"Final:\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)", out)
    return float(m.group(1)) * 2**20 * 8 / 1e9 if m else None


def fi_pingpong(provider, ep, size, iters):
    args = ["fi_pingpong", "-p", provider, "-e", ep, "-S", str(size), "-I", str(iters)]
    srv = start_in(NS_B, args)
    try:
        out = run_in(NS_A, args + [IP_B], timeout=120)
    finally:
        stop(srv)
    m = re.search(r"\n\S+\s+\d+\s+=\d+\s+\S+\s+[\d.]+s\s+([\d.]+)\s+([\d.]+)", out)
    # MB/sec counts both directions of the ping-pong; usec/xfer is one transfer.
    return {"gbps": float(m.group(1)) * 1e6 * 8 / 1e9 / 2, "usec": float(m.group(2))} if m else None


def rss_256_qps():
    """An endpoint with 256 QPs (128 connections of a control and a data QP), RSS before and after sizes up to 64 MiB."""
    out = mroce_perf(NS_B, NS_A, "vb", "va", IP_B,
                     ["--test", "write_bw", "--qps", "128", "--size", "8", "--iters", "2000"])
    small = out[-1]["rss_kb"]
    out = mroce_perf(NS_B, NS_A, "vb", "va", IP_B,
                     ["--test", "write_bw", "--qps", "128", "--size", "64m", "--iters", "200"])
    return {"qps": 256, "rss_kb_8B": small, "rss_kb_64MiB": out[-1]["rss_kb"]}


def perf_profile(secs):
    """Where the time goes: perf record of mroce-perf's client during write_bw 1 MiB."""
    if not shutil.which("perf"):
        return None
    srv = start_in(NS_B, [PERF, "server", "--dev", "vb", "--addr", IP_B], ready="listening")
    data = f"/tmp/mroce-bench-{os.getpid()}.perf"
    try:
        # -D: skip the tool's start-up (buffer allocation, page faults): the steady state only.
        run_in(NS_A, ["perf", "record", "-q", "-F", "999", "-g", "-D", "1500", "-o", data, "--", PERF, "client",
                      "--dev", "va", "--addr", IP_B, "--test", "write_bw", "--size", "1m", "--duration", str(secs + 2)]
               + WINDOW, timeout=120)
    except RuntimeError as e:
        return f"(perf record failed: {str(e).splitlines()[0]})"
    finally:
        stop(srv)
    rep = sh(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso,symbol", "-g", "none",
              "--percent-limit", "1.5"], check=False).stdout
    os.unlink(data)
    return "\n".join(l for l in rep.splitlines() if l.strip() and not l.startswith("#"))[:4000]


# ---- both directions at once: mroce-perf -b beside iperf3 --bidir ------------------

BIDIR_BEGIN, BIDIR_END = "<!-- targets: bench.py bidir -->", "<!-- /targets bidir -->"
BIDIR_SECS = 4	# per run; the first second (connecting, ramp) is outside CPU per byte
BIDIR_MROCE = ["--test", "write_bw", "-b", "--size", "1m"]	# the library's defaults, as targets.py's
BIDIR_TCP = ["--bidir"]


def steady(lines, pattern, span_bytes, sampler):
    """CPU s per GB over the steady part of a run: from the first interval line's arrival to the
    last's; bytes: span_bytes(t0, t1, the interval matches after the first)."""
    iv = [(t, m) for t, l in lines for m in [re.search(pattern, l)] if m]
    if len(iv) < 2:
        return None
    t0, t1 = iv[0][0], iv[-1][0]
    nbytes = span_bytes(t0, t1, [m for _, m in iv[1:]])
    return sampler.cpu(t0, t1) / (nbytes / 1e9) if nbytes else None


def bidir_mroce(secs, sampler):
    """`mroce-perf client --test write_bw -b --size 1m`: both ends WRITE each other at once.

    Its per-second lines are the client's direction; the server's bytes over the same span are
    taken at the server's average rate (mroce-perf reports it at the end)."""
    srv = start_in(NS_B, [PERF, "server", "--dev", "vb", "--addr", IP_B], ready="listening")
    try:
        lines = live(NS_A, [PERF, "client", "--dev", "va", "--addr", IP_B] + BIDIR_MROCE + ["--duration", str(secs)])
    finally:
        stop(srv)
    text = "\n".join(l for _, l in lines)
    m = re.search(r"both ways: client->server ([\d.]+) Gbit/s \((\d+) in ([\d.]+) s\), server->client ([\d.]+) "
                  r"Gbit/s \((\d+) in ([\d.]+) s\), total ([\d.]+) Gbit/s; (.*)$", text, re.M)
    if not m or m.group(8) != "each end held the other's data":
        raise RuntimeError(f"mroce-perf -b: no verified result line in:\n{text[-2000:]}")
    c2s, s2c = float(m.group(1)), float(m.group(4))
    cpu = steady(lines, r"\[\s*([\d.]+)-\s*([\d.]+) s\]\s+(\d+) bytes",
                 lambda t0, t1, ms: sum(int(x.group(3)) for x in ms) + s2c * 1e9 / 8 * (t1 - t0), sampler)
    return {"gbps": float(m.group(7)), "c2s": c2s, "s2c": s2c, "cpu_s_per_gb": cpu}


def bidir_tcp(secs, sampler):
    """`iperf3 -c B --bidir`: a stream each way at once; the caller detaches mroce's datapath."""
    srv = start_in(NS_B, ["iperf3", "-s", "-1", "-B", IP_B], ready=None)
    try:
        lines = live(NS_A, ["iperf3", "-c", IP_B, "-t", str(secs), "-i", "1", "--forceflush", "-f", "g"] + BIDIR_TCP)
    finally:
        stop(srv)
    text = "\n".join(l for _, l in lines)
    rx = {role: float(g) for role, g in
          re.findall(r"\]\[(TX-C|RX-C)\]\s+[\d.]+-[\d.]+\s+sec\s+[\d.]+ \w+\s+([\d.]+) Gbits/sec.*receiver", text)}
    if set(rx) != {"TX-C", "RX-C"}:
        raise RuntimeError(f"iperf3 --bidir: no receiver lines in:\n{text[-2000:]}")
    # interval lines of both streams (not the summary's): each second's rate times its length
    pat = r"^\[\s*\d+\]\[(?:TX|RX)-C\]\s+([\d.]+)-([\d.]+)\s+sec\s+[\d.]+ \w+\s+([\d.]+) Gbits/sec(?!.*(?:sender|receiver))"
    cpu = steady(lines, pat, lambda t0, t1, ms: sum(float(x.group(3)) * 1e9 / 8 * (float(x.group(2)) - float(x.group(1)))
                                                    for x in ms[1:]), sampler)
    return {"gbps": rx["TX-C"] + rx["RX-C"], "c2s": rx["TX-C"], "s2c": rx["RX-C"], "cpu_s_per_gb": cpu}


def bidir_rounds(runs, secs):
    """Interleaved, A B A B: mroce -b (datapath attached), then iperf3 --bidir (detached), per round."""
    sampler, rounds = Sampler(), []
    try:
        for i in range(runs):
            print(f"bench: bidirectional, round {i + 1} of {runs}", flush=True)
            r = {"mroce": bidir_mroce(secs, sampler)}
            xdp(False)	# TCP as on a host without mroce
            try:
                r["tcp"] = bidir_tcp(secs, sampler)
            finally:
                xdp(True)
            rounds.append(r)
    finally:
        sampler.stop.set()
    return rounds


def ratio(a, b):
    return None if a is None or not b else a / b


def bidir_targets():
    """(text, measure(round), met(x) or None, unit[, judged]), as target_rows() takes them."""
    return [
        ("mroce WRITE 1 MiB both ways at once (`mroce-perf client --test write_bw -b --size 1m`), total "
         "throughput >= 1.0x kernel TCP's both ways (`iperf3 -c B --bidir`, datapath detached), the "
         "one-way line's target (WRITE 1 MiB >= kernel TCP)",
         lambda r: ratio(r["mroce"]["gbps"], r["tcp"]["gbps"]), lambda x: x >= 1.0, "x"),
        ("... CPU per byte (all CPUs, over the transfer) / kernel TCP's",
         lambda r: ratio(r["mroce"]["cpu_s_per_gb"], r["tcp"]["cpu_s_per_gb"]), None, "x"),
        ("... the slower direction's share of mroce's total (0.5: even)",
         lambda r: ratio(min(r["mroce"]["c2s"], r["mroce"]["s2c"]), r["mroce"]["gbps"]), None, ""),
        ("earlier target (targets.py): WRITE throughput >= 2.0x iperf3's, here both ways",
         lambda r: ratio(r["mroce"]["gbps"], r["tcp"]["gbps"]), lambda x: x >= 2.0, "x", False),
        ("earlier target (targets.py): WRITE CPU per byte <= 0.5x kernel TCP's, here both ways",
         lambda r: ratio(r["mroce"]["cpu_s_per_gb"], r["tcp"]["cpu_s_per_gb"]), lambda x: x <= 0.5, "x", False),
    ]


def bidir_report(rounds, secs):
    L = [BIDIR_BEGIN, "## Both directions at once (`selftests/bench/bench.py --bidir`)\n",
         f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {len(rounds)} rounds of {secs:g} s, "
         "interleaved (mroce, then TCP, each round), on bench.py's veth pair (MTU 3498). mroce: "
         "`mroce-perf client --dev va --addr B --test write_bw -b --size 1m --duration S` (server: `mroce-perf "
         "server --dev vb --addr B`), the library's defaults, its datapath attached on both ends; both ends "
         "WRITE each other over the same connection, and each checks it holds the other's bytes. TCP: "
         "`iperf3 -c B --bidir -t S`, a stream each way, mroce's datapath detached from both ends (`mroce "
         "detach`). Throughput: both directions summed (mroce-perf's total; iperf3's two receiver "
         "figures). CPU per byte over all CPUs from /proc/stat, from the end of the first second to the "
         "last interval, over both directions' bytes (mroce: the client's intervals plus the server's "
         "direction at its average rate). The ratio is the median of the rounds'.\n",
         "| target | measured (median) | each round | met |", "|---|---|---|---|"]
    rows, met_all = target_rows(rounds, bidir_targets())
    L += rows
    L += ["", "Gbit/s (client to server + server to client = total), CPU s per GB, each round:\n",
          "| round | mroce `write_bw -b` 1 MiB | iperf3 `--bidir` |", "|---|---|---|"]
    f = lambda d: (f"{fmt(d['c2s'])} + {fmt(d['s2c'])} = {fmt(d['gbps'])}, {fmt(d['cpu_s_per_gb'])}")
    for i, r in enumerate(rounds):
        L.append(f"| {i + 1} | {f(r['mroce'])} | {f(r['tcp'])} |")
    L.append(BIDIR_END)
    return "\n".join(L) + "\n", met_all


def bidir_publish(rounds, secs, out):
    text, _ = bidir_report(rounds, secs)
    publish("bidir", text, out, BIDIR_BEGIN, BIDIR_END)
    print_verdicts(bidir_targets(), rounds, " (`")


def print_verdicts(targets, rounds, cut):
    """One line per judged target (as target_rows() takes them): met or missed, the median of the
    rounds and each round's figure; the target's text up to cut names it."""
    for t in targets:
        if t[2] is not None and (len(t) < 5 or t[4]):
            xs = [x for x in (t[1](r) for r in rounds) if x is not None]
            m = median(xs)
            print(f"{'met' if m is not None and t[2](m) else 'missed'}: {t[0].split(cut)[0]}: "
                  f"{fmt(m)}x (rounds: {', '.join(f'{x:.2f}' for x in xs)})")


# ---- the impaired cases on the emulated fabric ---------------------------------

def fabric_host(i):
    return f"mrf-{FAB}-h{i}"


def fabric_run(loss_pct, runs, secs):
    sh([FABRIC_SH, "down", FAB], check=False)
    sh([FABRIC_SH, "up", FAB, "--hosts", "2", "--paths", "4"])
    try:
        for p, d in enumerate((10, 20, 50, 100)):
            sh([FABRIC_SH, "ctl", FAB, "path", str(p), f"delay={d}", f"loss={loss_pct}%"])
        h0, h1, ip1 = fabric_host(0), fabric_host(1), "198.18.1.2"
        res = {}
        res["mroce"] = median(repeat(runs, lambda: mroce_perf(h1, h0, "eth0", "eth0", ip1,
                              ["--test", "write_bw", "--size", "1m", "--paths", "8", "--duration", str(secs)] + WINDOW)[0]["gbit_s"]))
        res["mroce_gbn"] = median(repeat(runs, lambda: mroce_perf(h1, h0, "eth0", "eth0", ip1,
                                  ["--test", "write_bw", "--size", "1m", "--paths", "1", "--gbn", "--duration", str(secs)] + WINDOW)[0]["gbit_s"]))
        xdp(False, ((h0, "eth0"), (h1, "eth0")))	# TCP as on hosts without mroce
        res["tcp"] = median(repeat(runs, lambda: iperf3(h1, h0, ip1, secs)))
        return res
    finally:
        sh([FABRIC_SH, "down", FAB], check=False)


# ---- report ----------------------------------------------------------------------

def fmt(x, nd=2):
    return "n/a" if x is None else f"{x:.{nd}f}"


def plots(r, outdir):
    if not shutil.which("gnuplot"):
        return []
    made = []
    dat = os.path.join(outdir, "throughput_vs_size.dat")
    with open(dat, "w") as f:
        for row in r["sweep"]:
            f.write(f"{row['size']} {row['gbit_s']:.4f} {row.get('gbn', 0):.4f}\n")
    png = os.path.join(outdir, "throughput_vs_size.png")
    script = f"""set terminal pngcairo size 900,520; set output '{png}'
set logscale x 2; set xlabel 'message size (bytes)'; set ylabel 'Gbit/s'; set key top left; set grid
set xtics ("8" 8, "64" 64, "512" 512, "4K" 4096, "64K" 65536, "1M" 1048576, "16M" 16777216, "64M" 67108864)
set title 'WRITE throughput against message size (veth, MTU {MTU}, one run per point)'
plot '{dat}' u 1:2 w lp lw 2 t 'mroce write\\_bw (selective repeat)', \\
     '{dat}' u 1:3 w lp lw 2 t 'mroce write\\_bw (go-back-N)', \\
     {r['tcp_gbps'] or 0} w l dt 2 lw 2 t 'kernel TCP (iperf3, bulk)', \\
     {r['raw_big']['gbps'] if r['raw_big'] else 0} w l dt 3 lw 2 t 'raw AF\\_XDP ceiling (3512 B frames)'
"""
    sh(["gnuplot"], input=script, check=False)
    made.append(png)
    dat = os.path.join(outdir, "goodput_vs_loss.dat")
    with open(dat, "w") as f:
        for loss, v in sorted(r["fabric"].items(), key=lambda kv: float(kv[0])):
            f.write(f"{loss} {v['mroce'] or 0:.4f} {v['mroce_gbn'] or 0:.4f} {v['tcp'] or 0:.4f}\n")
    png = os.path.join(outdir, "goodput_vs_loss.png")
    script = f"""set terminal pngcairo size 900,520; set output '{png}'
set xlabel 'random loss on every path (%)'; set ylabel 'goodput, Gbit/s'; set key top right; set grid
set title 'Goodput against loss, 4 paths delayed 10/20/50/100 us (emulated fabric)'
plot '{dat}' u 1:2 w lp lw 2 t 'mroce, sprayed, selective repeat', \\
     '{dat}' u 1:3 w lp lw 2 t 'mroce, go-back-N, one path', \\
     '{dat}' u 1:4 w lp lw 2 t 'kernel TCP (iperf3)'
"""
    sh(["gnuplot"], input=script, check=False)
    made.append(png)
    return made


def report(r, out):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    big, small = r["raw_big"], r["raw_small"]
    w1m, lat, tcp = r["write_1m"], r["write_lat"], r["tcp_lat"]
    L = []
    L.append("# Benchmarks\n")
    L.append(f"Generated by `make bench` (`selftests/bench/bench.py --runs {r['runs']}`) on {r['date']}. "
             "Figures are medians of the runs, except the raw AF_XDP ceiling, the best of its runs; ratios "
             "compare figures from this same run.\n")
    L.append(f"Machine: {cpu}, {os.cpu_count()} cores, kernel {platform.release()}; veth in network namespaces, "
             f"copy-mode AF_XDP (veth has no zero-copy), MTU {MTU} (3512-byte frames) unless noted. "
             "Everything, the sender, the receiver and for the impaired cases the fabric's switch, shares the 2 cores.\n")
    L.append("## Targets, measured\n")
    L.append("| target | measured | met |\n|---|---|---|")
    def row(name, val, ok):
        L.append(f"| {name} | {val} | {'yes' if ok else 'no'} |")
    if w1m and big:
        row("WRITE goodput at 1 MiB >= 90% of the raw AF_XDP ceiling (same frame size)",
            f"{fmt(w1m)} of {fmt(big['gbps'])} Gbit/s = {w1m / big['gbps']:.0%}", w1m >= 0.9 * big["gbps"])
    if w1m and r["tcp_gbps"]:
        row("... and >= kernel TCP on the same veth pair", f"{fmt(w1m)} vs {fmt(r['tcp_gbps'])} Gbit/s = {w1m / r['tcp_gbps']:.0%}",
            w1m >= r["tcp_gbps"])
    if lat and tcp and tcp["p50"]:
        row("8-byte WRITE latency p50 <= half of TCP ping-pong's", f"{fmt(lat['p50'])} vs {fmt(tcp['p50'])} us = {lat['p50'] / tcp['p50']:.2f}x",
            lat["p50"] <= tcp["p50"] / 2)
        row("... p99 no worse than TCP's", f"{fmt(lat['p99'])} vs {fmt(tcp['p99'])} us", lat["p99"] <= tcp["p99"])
    if r["rate_8b"] and small:
        row("8-byte WRITE message rate >= 80% of the raw AF_XDP packet rate",
            f"{fmt(r['rate_8b'], 3)} vs {fmt(small['mpps'], 3)} M/s = {r['rate_8b'] / small['mpps']:.0%}", r["rate_8b"] >= 0.8 * small["mpps"])
    f0, f1 = r["fabric"].get("0"), r["fabric"].get("1")
    if f0 and f1 and f0["mroce"]:
        row("goodput at 1% loss with reordering >= 90% of the clean figure (fabric)",
            f"{fmt(f1['mroce'])} vs {fmt(f0['mroce'])} Gbit/s = {f1['mroce'] / f0['mroce']:.0%}", f1["mroce"] >= 0.9 * f0["mroce"])
    if r.get("rss"):
        m = r["rss"]
        row("resident size of an endpoint with 256 QPs; no growth with message size",
            f"{m['rss_kb_8B'] / 1024:.0f} MiB after 8 B messages, {m['rss_kb_64MiB'] / 1024:.0f} MiB after 64 MiB messages "
            "(both include the tool's 64 MiB buffer)", m["rss_kb_64MiB"] <= m["rss_kb_8B"] * 1.05)
    L.append("")
    L.append("## Side by side on one veth pair\n")
    L.append("| what | throughput | latency (half round trip, us) p50 / p99 / p99.9 | message rate |\n|---|---|---|---|")
    if big:
        L.append(f"| raw AF_XDP, no transport (`xsk_raw`), 3512 B frames / 64 B frames | {fmt(big['gbps'])} Gbit/s | | {fmt(small['mpps'] if small else None, 3)} Mpps (64 B) |")
    L.append(f"| one core's memcpy of 3456 B (a packet's payload) between 256 MiB buffers (`xsk_raw memcpy`) | {fmt(r.get('memcpy_gbps'))} Gbit/s | | |")
    L.append(f"| mroce WRITE 1 MiB, selective repeat, 4 paths, window 896 | {fmt(w1m)} Gbit/s | {fmt(lat['p50'] if lat else None)} / {fmt(lat['p99'] if lat else None)} / {fmt(lat['p999'] if lat else None)} (8 B WRITE_IMM ping-pong) | {fmt(r['rate_8b'], 3)} M WRITEs/s (8 B, 4 QPs x 64 deep) |")
    L.append(f"| mroce WRITE 1 MiB, go-back-N, 1 path, window 896 | {fmt(r['write_1m_gbn'])} Gbit/s | | |")
    L.append(f"| mroce READ 1 MiB | {fmt(r['read_1m'])} Gbit/s | {fmt(r['read_lat']['p50'] if r['read_lat'] else None)} / {fmt(r['read_lat']['p99'] if r['read_lat'] else None)} / - (8 B READ, whole operation) | |")
    L.append(f"| kernel TCP: iperf3 bulk; sockperf ping-pong 14 B | {fmt(r['tcp_gbps'])} Gbit/s | {fmt(tcp['p50'] if tcp else None)} / {fmt(tcp['p99'] if tcp else None)} / {fmt(tcp['p999'] if tcp else None)} | |")
    L.append(f"| UCX 1.13 `ucx_perftest ucp_put_bw` 1 MiB over TCP | {fmt(r['ucx'])} Gbit/s | | |")
    for name, v in r["fi"].items():
        L.append(f"| libfabric 1.17 `fi_pingpong` {name}, 1 MiB ping-pong | {fmt(v['gbps'] if v else None)} Gbit/s (one message in flight) | {fmt(v['usec'] / 2 if v else None)} (1 MiB, half of one transfer) | |")
    L.append("")
    L.append("## mroce against message size\n")
    L.append("One run of 1 s per size (the medians are in the table above).\n")
    L.append("| size | write_bw Gbit/s (selective repeat) | write_bw Gbit/s (go-back-N) | Mop/s | CPU s/GB | resent |\n|---|---|---|---|---|---|")
    for row_ in r["sweep"]:
        L.append(f"| {row_['size']} | {row_['gbit_s']:.3f} | {row_.get('gbn', 0):.3f} | {row_['mops']:.4f} | {row_['cpu_s_per_gb']:.2f} | {row_['retransmitted']} |")
    L.append("\n![throughput against size](bench/throughput_vs_size.png)\n")
    L.append("## Loss and reordering (emulated fabric, 4 paths delayed 10/20/50/100 us, MTU 1500)\n")
    L.append("| loss on every path | mroce sprayed (8 slots, window 896) | mroce go-back-N (1 path, window 896) | kernel TCP (iperf3) |\n|---|---|---|---|")
    for loss, v in sorted(r["fabric"].items(), key=lambda kv: float(kv[0])):
        L.append(f"| {loss}% | {fmt(v['mroce'])} Gbit/s | {fmt(v['mroce_gbn'])} Gbit/s | {fmt(v['tcp'])} Gbit/s |")
    L.append("\nThe fabric's own ceiling is about 2.5 Gbit/s of 1500-byte frames (docs/fabric.md): the clean "
             "figures here are the emulator's, the ratios under loss are the transports'.\n")
    L.append("![goodput against loss](bench/goodput_vs_loss.png)\n")
    if r.get("profile"):
        L.append("## Where the time goes (`perf record` of the client, write_bw 1 MiB)\n")
        L.append("```\n" + r["profile"] + "\n```\n")
    L.append(open(os.path.join(ROOT, "selftests", "bench", "analysis.md")).read())
    # The sections of the other scripts (coll_bench.py, targets.py, loss_targets.py...) and the
    # notes between them are theirs: keep everything from the first of them on.
    old = open(out).read() if os.path.exists(out) else ""
    starts = [i for i in (old.find("<!-- collectives: "), old.find("<!-- targets: ")) if i >= 0]
    if starts:
        L.append(old[min(starts):].rstrip("\n") + "\n")
    with open(out, "w") as f:
        f.write("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1 run, short durations (a smoke test of the suite)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--bidir", action="store_true",
                    help="only both directions at once: mroce-perf -b beside iperf3 --bidir (its section of --out)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("bench: needs root (network namespaces, XDP)")
    for t in (PERF, MROCE) + (() if a.bidir else (RAW,)):
        if not os.access(t, os.X_OK):
            sys.exit(f"bench: {t} is not built (run make)")
    if a.bidir and not shutil.which("iperf3"):
        sys.exit("bench: iperf3 is missing (make bench installs it)")
    runs, secs = (1, 1) if a.quick else (a.runs, 2)
    if a.bidir:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
        try:
            veth_pair(MTU)
            rounds = bidir_rounds(runs, BIDIR_SECS)
        finally:
            cleanup()
        bidir_publish(rounds, BIDIR_SECS, a.out)
        return
    outdir = os.path.join(os.path.dirname(os.path.abspath(a.out)), "bench")
    os.makedirs(outdir, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    r = {"runs": runs, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    try:
        mac_b = veth_pair(MTU)
        say = lambda m: print(f"bench: {m}", flush=True)
        say("raw AF_XDP ceiling")
        # A ceiling: the best of the runs (everything else is a median).
        # xsk_raw's receiver attaches its own XDP program: mroce's is off for it
        xdp(False)
        r["raw_big"] = {k: max([x[k] for x in repeat(runs, lambda: raw_ceiling(mac_b, 3512, secs)) if x]) for k in ("mpps", "gbps")}
        r["raw_small"] = {k: max([x[k] for x in repeat(runs, lambda: raw_ceiling(mac_b, 64, secs)) if x]) for k in ("mpps", "gbps")}
        xdp(True)
        r["memcpy_gbps"] = max([x for x in repeat(runs, lambda: memcpy_ceiling(3456, secs)) if x] or [None])
        say("mroce")
        pf = lambda args: mroce_perf(NS_B, NS_A, "vb", "va", IP_B, args)
        r["write_1m"] = median(repeat(runs, lambda: pf(["--test", "write_bw", "--size", "1m", "--duration", str(secs)] + WINDOW)[0]["gbit_s"]))
        r["write_1m_gbn"] = median(repeat(runs, lambda: pf(["--test", "write_bw", "--size", "1m", "--gbn", "--paths", "1", "--duration", str(secs)] + WINDOW)[0]["gbit_s"]))
        r["read_1m"] = median(repeat(runs, lambda: pf(["--test", "read_bw", "--size", "1m", "--duration", str(secs)] + WINDOW)[0]["gbit_s"]))
        lats = repeat(runs, lambda: pf(["--test", "write_lat", "--size", "8", "--duration", str(secs)])[0]["lat_us"])
        r["write_lat"] = {k: median([x[k] for x in lats]) for k in ("p50", "p99", "p999")}
        lats = repeat(runs, lambda: pf(["--test", "read_lat", "--size", "8", "--duration", str(secs)])[0]["lat_us"])
        r["read_lat"] = {k: median([x[k] for x in lats]) for k in ("p50", "p99", "p999")}
        r["rate_8b"] = median(repeat(runs, lambda: pf(["--test", "write_bw", "--size", "8", "--qps", "4", "--depth", "64",
                                                      "--progress", "poll", "--duration", str(secs)])[0]["mops"]))
        sweep = pf(["--test", "write_bw", "--sweep", "--duration", str(max(1, secs / 2))] + WINDOW)
        gbn = pf(["--test", "write_bw", "--sweep", "--gbn", "--paths", "1", "--duration", str(max(1, secs / 2))] + WINDOW)
        for row_, g in zip(sweep, gbn):
            row_["gbn"] = g["gbit_s"]
        r["sweep"] = sweep
        r["rss"] = rss_256_qps()
        say("kernel TCP, UCX, libfabric (mroce's datapath detached, as on a host without it)")
        xdp(False)
        r["tcp_gbps"] = median(repeat(runs, lambda: iperf3(NS_B, NS_A, IP_B, secs)))
        tl = repeat(runs, lambda: sockperf(secs))
        r["tcp_lat"] = {k: median([x[k] for x in tl]) for k in ("p50", "p99", "p999")}
        r["ucx"] = median(repeat(runs, lambda: ucx_put_bw(1 << 20))) if shutil.which("ucx_perftest") else None
        r["fi"] = {}
        if shutil.which("fi_pingpong"):
            for name, prov, ep in (("udp;ofi_rxd (reliable datagrams over UDP)", "udp;ofi_rxd", "rdm"), ("tcp", "tcp", "msg")):
                v = [x for x in repeat(runs, lambda: fi_pingpong(prov, ep, 1 << 20, 100 if a.quick else 300)) if x]
                r["fi"][name] = {k: median([x[k] for x in v]) for k in ("gbps", "usec")} if v else None
        xdp(True)
        say("both directions at once")
        r["bidir"] = bidir_rounds(runs, BIDIR_SECS)
        say("profile")
        r["profile"] = perf_profile(secs)
        cleanup()
        say("emulated fabric: loss 0, 0.1, 1, 5%")
        r["fabric"] = {}
        for loss in ("0", "0.1", "1", "5"):
            r["fabric"][loss] = fabric_run(loss, runs, secs)
    finally:
        cleanup()
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(r, f, indent=1)
    plots(r, outdir)
    report(r, a.out)
    bidir_publish(r["bidir"], BIDIR_SECS, a.out)
    print(open(a.out).read().split("## Side by side")[0])
    print(f"bench: report in {a.out}, plots and results.json in {outdir}")


if __name__ == "__main__":
    main()
