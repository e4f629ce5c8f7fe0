#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Point-to-point targets: mroce with the library's defaults against the bare datapath and kernel TCP.

    selftests/bench/targets.py [--rounds N] [--secs S] [--mtu 3498|9000] [--out docs/benchmarks.md]

Root. One veth pair between two namespaces, as bench.py sets it up: MTU 3498
(3512-byte frames, the largest before jumbo frames) or 9000 (jumbo frames,
AF_XDP multi-buffer). mroce runs as a user runs it, `mroce-perf client --test T
--size S` and nothing else (no window, path or progress options), its datapath
attached on both ends beforehand, as a deployment does (`mroce attach`).

The contenders, per round, interleaved (this VM's speed drifts up to 2x
between runs, so each ratio compares figures taken seconds apart):

- `xsk_raw` (selftests/bench/xsk_raw.c), the bare datapath: copy-mode AF_XDP,
  one sender blasting frames of mroce's size (MTU + 14), one receiver behind
  its own XDP redirect counting them, no transport. It runs before and after
  each of mroce's WRITE, READ and SEND at 1 MiB (X W X R X S X); each of
  mroce's figures is compared with the mean of the two xsk_raw runs beside
  it. Its Gbit/s count whole frames, as it prints them.
- kernel TCP (iperf3, one stream) as it runs on a host without mroce: the
  datapath detached from both ends (`mroce detach`, checked with `ip -d link
  show`). Beside it, for the tax the attached datapath puts on the host's
  other traffic, the same iperf3 with the datapath attached, right after.
- 8-byte WRITE latency (mroce-perf's write_lat, which busy-polls by default;
  on the library's progress thread for information) against sockperf's TCP
  ping-pong (its smallest message, 14 B), datapath detached for sockperf.
- 8-byte WRITE rate (write_bw --size 8) against xsk_raw's 64-byte frame rate.
- For information, beside the targets: xsk_raw whose receiver copies each
  payload out (`rx --copy`), the bare datapath plus the one copy any receiver
  that delivers data makes; and WRITE from the UMEM's transmit pool
  (`--memory umem`, no library copy on transmit) against WRITE from the heap.

At MTU 9000 xsk_raw does not run (its UMEM frames are 4 KiB: no multi-buffer):
its targets say n/a there.

CPU per byte counts every CPU of the machine, both ends and the kernel's work
for them (/proc/stat, busy = everything but idle and iowait, sampled every
20 ms), over the transfer only, not its start-up: for xsk_raw from its first
to its last received frame; for mroce-perf and iperf3 from the end of their
first 1-second interval to the end of their last (the intervals' bytes over
the CPU in between), so connecting, registering memory and the first
second's ramp are outside. Throughput is each tool's own figure over its
whole transfer (mroce-perf's average, iperf3's received, xsk_raw's first to
last frame).

Prints each target as met or missed with the median of the rounds' ratios and
every round's ratio, and the commands; with --out, replaces the section between
<!-- targets: targets.py --> and <!-- /targets --> of the report (or appends it).
"""
import argparse, json, os, re, signal, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402  (the namespaces, the servers, the tools' paths)

BEGIN, END = "<!-- targets: targets.py -->", "<!-- /targets -->"
MAC_B = None	# the receiver's MAC, for xsk_raw's frames


# ---- CPU over all CPUs, sampled (bench.py's) -------------------------------------

cpu_busy_s, Sampler, live = B.cpu_busy_s, B.Sampler, B.live


SAMPLER = None


def steady_cpu(lines, pattern, to_bytes):
    """CPU s per GB from the end of the first interval line to the end of the last, and its Gbit/s."""
    iv = [(t, m) for t, l in lines for m in [re.search(pattern, l)] if m]
    if len(iv) < 2:
        return None, None
    t0, t1 = iv[0][0], iv[-1][0]
    nbytes = sum(to_bytes(m) for _, m in iv[1:])
    secs = sum(float(m.group(2)) - float(m.group(1)) for _, m in iv[1:])
    cpu = SAMPLER.cpu(t0, t1)
    return cpu / (nbytes / 1e9), nbytes * 8 / secs / 1e9


# ---- the contenders ------------------------------------------------------------

def server(ns, args, ready):
    return B.start_in(ns, args, ready)


def mroce_bw(test, size, secs, extra=(), srv_extra=()):
    """mroce-perf as a user runs it; CPU over its intervals after the first."""
    srv = server(B.NS_B, [B.PERF, "server", "--dev", "vb", "--addr", B.IP_B] + list(srv_extra), "listening")
    try:
        lines = live(B.NS_A, [B.PERF, "client", "--dev", "va", "--addr", B.IP_B, "--test", test,
                              "--size", str(size), "--duration", str(secs)] + list(extra))
    finally:
        B.stop(srv)
    text = "\n".join(l for _, l in lines)
    m = re.search(r"^\w+ \d+ B: ([\d.]+) Gbit/s in ([\d.]+) s, sent (\d+) retx (\d+)", text, re.M)
    if not m:
        raise RuntimeError(f"mroce-perf: no result line in:\n{text[-2000:]}")
    cpu, steady = steady_cpu(lines, r"\[\s*([\d.]+)-\s*([\d.]+) s\]\s+(\d+) bytes", lambda x: int(x.group(3)))
    return {"gbps": float(m.group(1)), "retx": int(m.group(4)), "cpu_s_per_gb": cpu, "steady_gbps": steady}


def mroce_json(test, size, secs, extra=()):
    srv = server(B.NS_B, [B.PERF, "server", "--dev", "vb", "--addr", B.IP_B], "listening")
    try:
        out = B.run_in(B.NS_A, [B.PERF, "client", "--dev", "va", "--addr", B.IP_B, "--json", "--test", test,
                                "--size", str(size), "--duration", str(secs)] + list(extra), timeout=300)
    finally:
        B.stop(srv)
    r = [json.loads(l) for l in out.splitlines() if l.startswith("{")][0]
    return {"gbps": r["gbit_s"], "mops": r["mops"], "p50": r["lat_us"]["p50"]}


IPERF_UNIT = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def tcp_bulk(secs):
    """iperf3, one stream, whatever the datapath's state (the caller sets it)."""
    srv = server(B.NS_B, ["iperf3", "-s", "-1", "-B", B.IP_B], None)
    try:
        lines = live(B.NS_A, ["iperf3", "-c", B.IP_B, "-t", str(secs), "-i", "1", "--forceflush", "-f", "g"])
    finally:
        B.stop(srv)
    text = "\n".join(l for _, l in lines)
    m = re.search(r"([\d.]+) Gbits/sec\s+receiver", text)
    if not m:
        raise RuntimeError(f"iperf3: no receiver line in:\n{text[-2000:]}")
    # interval lines (not the summary's, which end in sender/receiver)
    pat = r"^\[\s*\d+\]\s+([\d.]+)-([\d.]+)\s+sec\s+([\d.]+) ([KMGT]?)Bytes\s+[\d.]+ Gbits/sec(?:\s+\d+\s+\S+ \S+)?\s*$"
    cpu, steady = steady_cpu(lines, pat, lambda x: float(x.group(3)) * IPERF_UNIT.get(x.group(4), 1))
    return {"gbps": float(m.group(1)), "cpu_s_per_gb": cpu, "steady_gbps": steady}


def xsk_raw(size, secs, copy=False):
    """The bare datapath: xsk_raw tx on va into xsk_raw rx on vb, mroce detached from both.

    copy: the receiver copies each payload out (rx --copy), as any receiver that delivers data must.
    """
    token = str(int.from_bytes(os.urandom(8), "little"))
    for attempt in range(3):	# the socket of the run before may still be held by the kernel (EBUSY)
        try:
            srv = server(B.NS_B, [B.RAW, "rx", "--dev", "vb", "--seconds", str(secs), "--token", token]
                         + (["--copy"] if copy else []), "ready")
            break
        except RuntimeError:
            if attempt == 2:
                raise
            time.sleep(1)
    try:
        B.run_in(B.NS_A, [B.RAW, "tx", "--dev", "va", "--dst-mac", MAC_B, "--src", B.IP_A, "--dst", B.IP_B,
                          "--size", str(size), "--seconds", str(secs), "--token", token], timeout=secs + 60)
        srv.wait(30)
        log = [l for p, l in B.procs if p is srv][0]
        log.seek(0)
        text = log.read()
    finally:
        B.stop(srv)
    m = re.search(r"rx: \d+ frames (\d+) bytes in [\d.]+ s: ([\d.]+) Mpps, ([\d.]+) Gbit/s", text)
    w = re.search(r"rx: window ([\d.]+) ([\d.]+)", text)
    if not (m and w):
        raise RuntimeError(f"xsk_raw: no figure:\n{text[-2000:]}")
    cpu = SAMPLER.cpu(float(w.group(1)), float(w.group(2)))
    return {"mpps": float(m.group(2)), "gbps": float(m.group(3)), "cpu_s_per_gb": cpu / (int(m.group(1)) / 1e9)}


def detached(f):
    """f() with mroce's datapath off on both ends, and on again after."""
    B.xdp(False)
    try:
        return f()
    finally:
        B.xdp(True)


def sockperf(secs):
    return detached(lambda: B.sockperf(secs))


# ---- one round ------------------------------------------------------------------

def again(f):
    """f(), once more if it fails (a server's socket still held by the kernel, a launch lost):
    the retry is said, and a second failure ends the run."""
    try:
        return f()
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"targets: a run failed, once more: {str(e).splitlines()[0]}", flush=True)
        time.sleep(1)
        return f()


def one_round(secs, mtu):
    raw = mtu == B.MTU	# xsk_raw has no multi-buffer: frames up to 4 KiB
    frame = mtu + 14
    dm = ["--memory", "dm"]
    # (key, run): X W X R X S X, TCP detached then attached (the tax on other traffic), WRITE on
    # device memory (beside, not instead: XDP places the WRITEs there), the 8-byte latency
    # against sockperf, the 8-byte rate against xsk_raw's 64-byte frames
    runs = [
        ("x0", lambda: detached(lambda: xsk_raw(frame, secs))),
        ("w", lambda: mroce_bw("write_bw", "1m", secs)),
        ("x1", lambda: detached(lambda: xsk_raw(frame, secs))),
        ("rd", lambda: mroce_bw("read_bw", "1m", secs)),
        ("x2", lambda: detached(lambda: xsk_raw(frame, secs))),
        ("sd", lambda: mroce_bw("send_bw", "1m", secs)),
        ("x3", lambda: detached(lambda: xsk_raw(frame, secs))),
        ("t", lambda: detached(lambda: tcp_bulk(secs))),
        ("ta", lambda: tcp_bulk(secs)),
        ("wh", lambda: mroce_bw("write_bw", "1m", secs, dm, dm)),
        ("l", lambda: mroce_json("write_lat", 8, secs)),	# mroce-perf's default for latency: busy-polling
        ("s", lambda: sockperf(secs)),
        ("lt", lambda: mroce_json("write_lat", 8, secs, ["--progress", "thread"])),
        ("m", lambda: mroce_json("write_bw", 8, secs)),
        ("x64", lambda: detached(lambda: xsk_raw(64, secs))),
        # beside, not instead: the bare datapath with the receiver's one copy, and WRITE sent
        # from the UMEM's transmit pool
        ("xc", lambda: detached(lambda: xsk_raw(frame, secs, copy=True))),
        ("wu", lambda: mroce_bw("write_bw", "1m", secs, ["--memory", "umem"], ["--memory", "umem"])),
    ]
    return {k: again(f) for k, f in runs if raw or not k.startswith("x")}


# ---- the targets ------------------------------------------------------------------

def near(r, key):
    """xsk_raw's figure beside mroce's test `key`: the mean of the runs before and after it."""
    i = {"w": 0, "rd": 1, "sd": 2}[key]
    a, b = r.get(f"x{i}"), r.get(f"x{i + 1}")
    return None if not (a and b) else {k: (a[k] + b[k]) / 2 for k in ("gbps", "cpu_s_per_gb")}


def ratio(a, b):
    return None if a is None or not b else a / b


CMD_M = "`mroce-perf client --dev va --addr B --test {t} --size {s}` (server: `mroce-perf server --dev vb --addr B`)"
CMD_X = ("`xsk_raw rx --dev vb` / `xsk_raw tx --dev va --size {f}`, mroce detached "
         "(X W X R X S X: the mean of the runs beside)")


def targets(mtu):
    """(text, measure(round), met(x) or None for information, unit[, judged])."""
    f = mtu + 14
    T = []
    for key, test, name in (("w", "write_bw", "WRITE"), ("rd", "read_bw", "READ"), ("sd", "send_bw", "SEND")):
        cmd = CMD_M.format(t=test, s="1m") + "; " + CMD_X.format(f=f)
        T.append((f"mroce {name} 1 MiB throughput >= 0.95x xsk_raw's ({f} B frames): {cmd}",
                  lambda r, k=key: ratio(r[k]["gbps"], (near(r, k) or {}).get("gbps")), lambda x: x >= 0.95, "x"))
        T.append((f"mroce {name} 1 MiB CPU per byte (all CPUs, over the transfer) <= 1.15x xsk_raw's",
                  lambda r, k=key: ratio(r[k]["cpu_s_per_gb"], (near(r, k) or {}).get("cpu_s_per_gb")),
                  lambda x: x <= 1.15, "x"))
    T += [
        ("mroce WRITE 1 MiB throughput / kernel TCP's (iperf3, datapath detached: `mroce detach va`, "
         "`mroce detach vb`; `iperf3 -c B -t S`)", lambda r: ratio(r["w"]["gbps"], r["t"]["gbps"]), None, "x"),
        ("mroce WRITE 1 MiB CPU per byte / kernel TCP's (detached)",
         lambda r: ratio(r["w"]["cpu_s_per_gb"], r["t"]["cpu_s_per_gb"]), None, "x"),
        ("the attached datapath's tax on kernel TCP: iperf3 throughput attached / detached (the same round)",
         lambda r: ratio(r["ta"]["gbps"], r["t"]["gbps"]), None, "x"),
        ("... its CPU per byte attached / detached",
         lambda r: ratio(r["ta"]["cpu_s_per_gb"], r["t"]["cpu_s_per_gb"]), None, "x"),
        ("8-byte WRITE p50 latency <= sockperf TCP ping-pong's (detached; 14 B, its smallest): "
         + CMD_M.format(t="write_lat", s="8") + " (busy-polls, mroce-perf's default); "
         "`sockperf ping-pong --tcp -m 14`", lambda r: ratio(r["l"]["p50"], r["s"]["p50"]), lambda x: x <= 1.0, "x"),
        ("... the same on the library's progress thread (`--progress thread`, as sockperf does not busy-poll)",
         lambda r: ratio(r["lt"]["p50"], r["s"]["p50"]), None, "x"),
        ("8-byte WRITE rate >= 0.5x xsk_raw's 64 B frame rate: " + CMD_M.format(t="write_bw", s="8")
         + "; `xsk_raw tx --size 64`", lambda r: ratio(r["m"]["mops"], (r.get("x64") or {}).get("mpps")),
         lambda x: x >= 0.5, "x"),
        ("mroce WRITE 1 MiB throughput / xsk_raw's with the receiver copying each payload out "
         "(`xsk_raw rx --copy`: the bare datapath plus the one copy a receiver must make)",
         lambda r: ratio(r["w"]["gbps"], (r.get("xc") or {}).get("gbps")), None, "x"),
        ("... its CPU per byte / that one's",
         lambda r: ratio(r["w"]["cpu_s_per_gb"], (r.get("xc") or {}).get("cpu_s_per_gb")), None, "x"),
        ("WRITE 1 MiB from the UMEM's transmit pool (`--memory umem`, no library copy) / from the heap",
         lambda r: ratio(r["wu"]["gbps"], r["w"]["gbps"]), None, "x"),
        # the earlier point-to-point targets, against TCP: printed, no longer judged (the bare datapath
        # itself is about 1.1x kernel TCP here, so 2x TCP is out of physical reach on veth)
        ("earlier target: WRITE 1 MiB throughput >= 2.0x iperf3's (detached)",
         lambda r: ratio(r["w"]["gbps"], r["t"]["gbps"]), lambda x: x >= 2.0, "x", False),
        ("earlier target: WRITE CPU per byte <= 0.5x kernel TCP's (detached)",
         lambda r: ratio(r["w"]["cpu_s_per_gb"], r["t"]["cpu_s_per_gb"]), lambda x: x <= 0.5, "x", False),
        ("earlier target: READ 1 MiB within 10% of WRITE", lambda r: ratio(r["rd"]["gbps"], r["w"]["gbps"]),
         lambda x: x >= 0.9, "x", False),
    ]
    if mtu != B.MTU:	# no xsk_raw: its targets are n/a, the others stay
        T = [t for t in T if "xsk_raw" not in t[0] and not t[0].startswith("... its CPU per byte / that")]
    return T


def markers(mtu):
    """The report section's markers: the default MTU keeps the original ones."""
    if mtu == B.MTU:
        return BEGIN, END
    return f"<!-- targets: targets.py mtu={mtu} -->", f"<!-- /targets mtu={mtu} -->"


def fmt(d, k, nd=2):
    return B.fmt(d.get(k) if d else None, nd)


def report(rounds, mtu, secs):
    begin, end = markers(mtu)
    raw = mtu == B.MTU
    L = [begin, f"## Point-to-point targets, MTU {mtu} (`selftests/bench/targets.py --mtu {mtu}`)\n",
         f"Generated on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: "
         f"`selftests/bench/targets.py --rounds {len(rounds)} --secs {secs:g} --mtu {mtu}`, {len(rounds)} rounds, "
         "contenders interleaved, mroce with the library's defaults (`mroce-perf client --test T --size S`, "
         "its datapath attached on both ends), kernel TCP with it detached from both (as on a host without "
         "mroce). CPU per byte over all CPUs from /proc/stat, over the transfer (not start-up). "
         "The ratio is the median of the rounds'.\n"]
    if not raw:
        L.append("xsk_raw has no multi-buffer (4 KiB UMEM frames): the targets against it are measured at "
                 "MTU 3498 only.\n")
    L += ["| target | measured (median) | each round | met |", "|---|---|---|---|"]
    rows, met_all = B.target_rows(rounds, targets(mtu))
    L += rows
    L.append("")
    L.append("Gbit/s, CPU s per GB in each round (xsk_raw: whole frames; mroce: payload; TCP: iperf3's received):\n")
    cols = (["xsk_raw (4 runs)"] if raw else []) + [
        "mroce WRITE 1 MiB", "READ 1 MiB", "SEND 1 MiB", "WRITE on device memory (`--memory dm`)",
        "WRITE from the transmit pool (`--memory umem`)",
        "iperf3, detached", "iperf3, attached", "WRITE 8 B p50 us, busy-polling / progress thread",
        "sockperf p50 us (detached)", "WRITE 8 B M/s"] + (["xsk_raw 64 B Mpps", "xsk_raw rx --copy"] if raw else [])
    L.append("| round | " + " | ".join(cols) + " |")
    L.append("|---|" + "---|" * len(cols))
    gc = lambda d: f"{fmt(d, 'gbps')}, {fmt(d, 'cpu_s_per_gb')}"
    for i, r in enumerate(rounds):
        c = ([" / ".join(gc(r[f"x{k}"]) for k in range(4))] if raw else []) + [
            gc(r["w"]), gc(r["rd"]), gc(r["sd"]), gc(r["wh"]), gc(r["wu"]), gc(r["t"]), gc(r["ta"]),
            f"{fmt(r['l'], 'p50')} / {fmt(r['lt'], 'p50')}", fmt(r["s"], "p50"), fmt(r["m"], "mops", 3)] + \
            ([fmt(r["x64"], "mpps", 3), gc(r.get("xc"))] if raw else [])
        L.append(f"| {i + 1} | " + " | ".join(c) + " |")
    L.append(end)
    return "\n".join(L) + "\n", met_all


def main():
    global MAC_B, SAMPLER
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=float, default=4, help="each run's length (the first 1 s is not in CPU per byte)")
    ap.add_argument("--mtu", type=int, default=B.MTU, choices=(B.MTU, 9000))
    ap.add_argument("--out", help="the report to put the section in (docs/benchmarks.md)")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("targets: needs root (network namespaces, XDP)")
    if a.secs < 3:
        sys.exit("targets: --secs 3 or more (CPU is counted over the intervals after the first second)")
    for t in (B.PERF, B.MROCE, B.RAW, "iperf3", "sockperf"):
        if not (os.access(t, os.X_OK) or B.shutil.which(t)):
            sys.exit(f"targets: {t} is missing (make bench builds and installs the tools)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    SAMPLER = Sampler()
    rounds = []
    try:
        MAC_B = B.veth_pair(a.mtu)
        for i in range(a.rounds):
            print(f"targets: round {i + 1} of {a.rounds}", flush=True)
            rounds.append(one_round(a.secs, a.mtu))
    finally:
        B.cleanup()
        SAMPLER.stop.set()
    text, met_all = report(rounds, a.mtu, a.secs)
    begin, end = markers(a.mtu)
    B.publish("targets", text, a.out, begin, end)
    B.print_verdicts(targets(a.mtu), rounds, ":")


if __name__ == "__main__":
    main()
