#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""torch.distributed: the mroce backend beside gloo, on the same namespaces.

    selftests/bench/torch_bench.py [--ranks 2,4] [--rounds N] [--iters N] [--steps N]

(`make bench-torch`.) Root; needs python3-torch and `make pytorch`.

Per rank count and round, two tools/mroce-launch jobs (a bridge, MTU 3498, one
rank per namespace), one per backend, interleaved A B A B (gloo first in even
rounds, mroce first in odd ones): gloo (TCP on eth0) runs in a job where
mroce's datapath was never attached, as on a host without mroce (an attached
XDP program costs TCP its GSO/GRO on veth; the worker checks `ip -d link show
eth0`), and mroce in its own job. Each job measures:
- all_reduce (float32 sum) and all_to_all_single at 1 MiB and 16 MiB:
  bus bandwidth, the nccl-tests way (all-reduce: size / time * 2(n-1)/n,
  all-to-all: size / time * (n-1)/n), time the slowest rank's mean;
- the step time of examples/ddp_train.py's model under
  DistributedDataParallel (one model per backend, same seed).
Each figure is the median over the rounds; the target is mroce >= 1.2x gloo's
bus bandwidth for all_reduce and all_to_all, printed as met or missed; the DDP
step time ratio (gloo's over mroce's) is printed for information (that DDP's
digests equal gloo's is selftests/test_torch.sh's, in make test). Both run in every
job's default group (gloo) only for rendezvous, barriers and the slowest
rank's time.
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAUNCH = os.path.join(ROOT, "tools", "mroce-launch")
TARGET = 1.2
SIZES = ((1 << 20, "1 MiB"), (16 << 20, "16 MiB"))


def worker(a):
    sys.path.insert(0, os.path.join(ROOT, "torch"))
    import torch
    import torch.distributed as dist
    import torch.nn as nn

    torch.set_num_threads(1)
    b = a.backend
    if b == "gloo":
        # TCP as on a host without mroce: no XDP program on the interface
        shown = subprocess.run(["ip", "-d", "link", "show", "eth0"], text=True, stdout=subprocess.PIPE).stdout
        if "prog/xdp" in shown:
            print(f"torch_bench: an XDP program is attached to eth0 for gloo:\n{shown}", file=sys.stderr)
            return 1
    else:
        import mroce_torch  # noqa: F401
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank, n = dist.get_rank(), dist.get_world_size()
    groups = {b: dist.new_group(backend=b)}
    res = {}  # (metric, backend) -> [per round]

    def timed(fn, group, iters):
        fn(group)  # warm-up, also of the buffers
        dist.barrier(group=group)
        t0 = time.perf_counter()
        for _ in range(iters):
            fn(group)
        t = torch.tensor([(time.perf_counter() - t0) / iters], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest rank, over gloo
        return t.item()

    models = {}
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, a.width), nn.ReLU(), nn.Linear(a.width, a.width),
                      nn.ReLU(), nn.Linear(a.width, 10))
    ddp = nn.parallel.DistributedDataParallel(m, process_group=groups[b])
    models[b] = (ddp, torch.optim.SGD(ddp.parameters(), lr=0.01))
    gen = torch.Generator().manual_seed(rank)
    x = torch.randn(32, 64, generator=gen)
    y = torch.randint(0, 10, (32,), generator=gen)

    def step(b):
        ddp, opt = models[b]
        opt.zero_grad()
        nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()

    for size, label in SIZES:
        buf = torch.ones(size // 4)
        out = torch.empty_like(buf)
        iters = a.iters if size <= (1 << 20) else max(2, a.iters // 4)
        t = timed(lambda g: dist.all_reduce(buf, group=g), groups[b], iters)
        res.setdefault(("all_reduce " + label, b), []).append(size / t * 2 * (n - 1) / n)
        t = timed(lambda g: dist.all_to_all_single(out, buf, group=g), groups[b], iters)
        res.setdefault(("all_to_all " + label, b), []).append(size / t * (n - 1) / n)
    t = timed(lambda g: step(b), groups[b], a.steps)
    res.setdefault(("DDP step", b), []).append(t)
    if rank == 0:
        for (metric, b), v in res.items():
            print(f"RESULT {n} {metric.replace(' ', '~')} {b} {statistics.median(v):.6g}", flush=True)
    for g in groups.values():
        dist.destroy_process_group(g)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", default="2,4", help="rank counts, comma separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=8, help="iterations per 1 MiB figure")
    ap.add_argument("--steps", type=int, default=10, help="DDP steps per figure")
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--backend", choices=("gloo", "mroce"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    try:
        ranks = [int(r) for r in a.ranks.split(",")]
    except ValueError:
        ap.error("--ranks: comma-separated integers")
    if any(r < 2 or r > 8 for r in ranks) or a.rounds < 1 or a.iters < 1 or a.steps < 1:
        ap.error("--ranks 2..8, --rounds, --iters, --steps >= 1")
    if os.geteuid() != 0:
        print("torch_bench: needs root (network namespaces, XDP)", file=sys.stderr)
        return 1
    env = dict(os.environ)
    build = os.path.abspath(env.get("BUILD", os.path.join(ROOT, "build")))
    env["BUILD"] = build
    print(f"# torch.distributed, mroce against gloo, {a.rounds} interleaved rounds (median),"
          f" bridge MTU 3498, gloo with mroce's datapath never attached")
    print(f"# {'ranks':>5} {'metric':<18} {'gloo':>12} {'mroce':>12} {'ratio':>7}  target {TARGET}x")
    missed = 0
    for n in ranks:
        per = {}  # (metric, backend) -> [per round]
        for rnd in range(a.rounds):
            for b in ("gloo", "mroce") if rnd % 2 == 0 else ("mroce", "gloo"):
                cmd = [LAUNCH, "run", "-n", str(n), "--name", f"htorchb{os.getpid() % 10000}",
                       "--mtu", "3498", "--timeout", "600", "--env", "GLOO_SOCKET_IFNAME=eth0",
                       "--env", f"BUILD={build}", "--", "/usr/bin/python3", os.path.abspath(__file__),
                       "--worker", "--backend", b, "--iters", str(a.iters),
                       "--steps", str(a.steps), "--width", str(a.width)]
                p = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
                if p.returncode != 0:
                    print(f"torch_bench: the {n}-rank {b} job failed (exit {p.returncode}):", file=sys.stderr)
                    print(p.stderr[-3000:], file=sys.stderr)
                    return 1
                for line in p.stdout.splitlines():
                    f = line.split()
                    if len(f) == 5 and f[0] == "RESULT":
                        per.setdefault((f[2].replace("~", " "), f[3]), []).append(float(f[4]))
        r = {k: statistics.median(v) for k, v in per.items()}
        for metric in [m + " " + s for m in ("all_reduce", "all_to_all") for _, s in SIZES] + ["DDP step"]:
            g, m = r.get((metric, "gloo")), r.get((metric, "mroce"))
            if g is None or m is None:
                print(f"torch_bench: no figure for {metric} on {n} ranks", file=sys.stderr)
                return 1
            if metric == "DDP step":
                ratio, gs, ms = g / m, f"{g * 1e3:.3f} ms", f"{m * 1e3:.3f} ms"
            else:
                ratio, gs, ms = m / g, f"{g / 1e9 * 8:.3f} Gb/s", f"{m / 1e9 * 8:.3f} Gb/s"
            ok = ratio >= TARGET
            judged = metric != "DDP step"
            missed += judged and not ok
            print(f"  {n:>5} {metric:<18} {gs:>12} {ms:>12} {ratio:>6.2f}x  "
                  f"{('met' if ok else 'missed') if judged else 'info'}", flush=True)
    print(f"torch_bench: {missed} target(s) missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
