#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Train a small MLP with DistributedDataParallel on synthetic data.

    tools/mroce-launch run -n 4 -- /usr/bin/python3 examples/ddp_train.py --backend mroce
    torchrun --nnodes 2 --node_rank I --nproc_per_node 1 --master_addr A \
        examples/ddp_train.py --backend mroce          (on each of 2 hosts)
    mpirun -np 2 -x MASTER_ADDR=A -x MASTER_PORT=P /usr/bin/python3 examples/ddp_train.py

Every rank builds the same model (seed --seed), draws its own batches
(seed --seed + 1000 * rank), and takes --steps SGD steps; DDP averages the
gradients with all_reduce. Rank 0 prints the loss and, with --save FILE,
writes every parameter (torch.save of the state_dict) so that two runs can be
compared bit for bit (selftests/test_torch.sh does, mroce against gloo).
--time prints the mean step time of the steps after the first two.
"""
import argparse
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="mroce", help="mroce (default) or gloo")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--width", type=int, default=256, help="hidden units")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--save", help="rank 0 writes the final parameters here")
    ap.add_argument("--time", action="store_true", help="print the mean step time")
    ap.add_argument("--timeout", type=float, default=60, help="process group timeout (s)")
    a = ap.parse_args()
    if a.steps < 1 or a.batch < 1 or a.width < 1:
        ap.error("--steps, --batch and --width must be positive")
    if a.backend == "mroce":
        import mroce_torch  # registers the backend "mroce"

        mroce_torch.env_from_mpi()  # under mpirun: RANK, WORLD_SIZE from its variables

    torch.set_num_threads(1)
    dist.init_process_group(a.backend, timeout=datetime.timedelta(seconds=a.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(a.seed)
    model = nn.Sequential(nn.Linear(64, a.width), nn.ReLU(), nn.Linear(a.width, a.width),
                          nn.ReLU(), nn.Linear(a.width, 10))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=a.lr, momentum=0.9)
    gen = torch.Generator().manual_seed(a.seed + 1000 * rank)
    target_w = torch.randn(64, 10, generator=torch.Generator().manual_seed(a.seed + 7))

    times = []
    for step in range(a.steps):
        x = torch.randn(a.batch, 64, generator=gen)
        y = (x @ target_w).argmax(dim=1)
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        if rank == 0 and (step == 0 or step == a.steps - 1):
            print(f"ddp_train: {a.backend} ranks {world} step {step + 1} loss {loss.item():.6f}",
                  flush=True)
    if a.time:
        t = times[2:] if len(times) > 2 else times
        mean = torch.tensor([sum(t) / len(t)], dtype=torch.float64)
        dist.all_reduce(mean, op=dist.ReduceOp.MAX)
        if rank == 0:
            print(f"ddp_train: {a.backend} ranks {world} step time {mean.item() * 1e3:.3f} ms",
                  flush=True)
    if a.save and rank == 0:
        torch.save({k: v.detach().clone() for k, v in model.state_dict().items()}, a.save)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
