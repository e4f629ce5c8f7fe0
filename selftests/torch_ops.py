#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks of the torch.distributed backend "mroce", run on every rank of a
tools/mroce-launch job (selftests/test_torch.sh starts them).

    torch_ops.py ops          every op and dtype against values computed here
    torch_ops.py gloo-order   float sums bit for bit equal to gloo's (also in the job)
    torch_ops.py async        many operations in flight, wait(), futures, is_completed()
    torch_ops.py errors       bad arguments raise at once and leave the group usable
    torch_ops.py a2a-mismatch all_to_all_single splits that disagree: both ranks raise
    torch_ops.py timeout      rank 1 never joins an all_reduce: the others raise in time
    torch_ops.py dead         all_reduces until the launcher kills a rank: the others raise

Prints "torch_ops: rank R: MODE ok" and exits 0, or the first mismatch and exits 1.
"""
import datetime
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import mroce_torch  # noqa: E402,F401

R = dist.ReduceOp
FAILS = []


def expect(cond, what):
    if not cond:
        FAILS.append(what)
        print(f"torch_ops: rank {RANK}: MISMATCH {what}", file=sys.stderr, flush=True)


def same(a, b, what):
    ok = a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if not ok:
        d = (a.double() - b.double()).abs().max().item() if a.shape == b.shape else "shape"
        what = f"{what}: got {a.flatten()[:6].tolist()} want {b.flatten()[:6].tolist()} (max diff {d})"
    expect(ok, what)


def vals(r, n, dtype, kind="small"):
    """Rank r's input: exact in every dtype, so any summation order gives the same."""
    i = torch.arange(n, dtype=torch.int64)
    if kind == "prod":
        v = (i + r) % 3 + 1
    elif kind == "signed" and dtype not in (torch.uint8,):
        v = (i * 7 + r * 5) % 11 - 5
    else:
        v = (i % 7 + 1) * (r + 1)
    return v.to(dtype)


def reduce_ref(xs, op):
    acc = xs[0].clone()
    for x in xs[1:]:
        if op == R.SUM:
            acc += x
        elif op == R.PRODUCT:
            acc *= x
        elif op == R.MIN:
            acc = torch.minimum(acc, x)
        else:
            acc = torch.maximum(acc, x)
    return acc


DTYPES = [torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8,
          torch.bfloat16, torch.float16, torch.int8, torch.int16]
MOVE_DTYPES = DTYPES + [torch.bool, torch.complex64]


def t_ops():
    n = WORLD
    for dtype in DTYPES:
        for op, kind in ((R.SUM, "small"), (R.PRODUCT, "prod"), (R.MIN, "signed"), (R.MAX, "signed")):
            for count in (0, 1, 5, 1000, 70001):
                xs = [vals(r, count, dtype, kind) for r in range(n)]
                t = xs[RANK].clone()
                dist.all_reduce(t, op=op)
                same(t, reduce_ref(xs, op), f"all_reduce {dtype} {op} count {count}")
    # a non-contiguous tensor is reduced in place all the same
    base = vals(RANK, 64, torch.float32).view(8, 8)
    t = base.t()
    dist.all_reduce(t)
    same(t.contiguous(), reduce_ref([vals(r, 64, torch.float32).view(8, 8).t() for r in range(n)],
                                    R.SUM).contiguous(), "all_reduce non-contiguous")
    # coalesced
    ts = [vals(RANK, 10, torch.float32), vals(RANK, 3, torch.float32).view(3, 1)]
    dist.all_reduce_coalesced(ts)
    same(ts[0], reduce_ref([vals(r, 10, torch.float32) for r in range(n)], R.SUM), "coalesced 0")
    same(ts[1], reduce_ref([vals(r, 3, torch.float32).view(3, 1) for r in range(n)], R.SUM), "coalesced 1")

    for dtype in MOVE_DTYPES:
        for count in (0, 1, 333, 300000):
            root = n - 1
            want = vals(root, count, torch.int64).to(dtype)
            t = want.clone() if RANK == root else torch.zeros(count, dtype=dtype)
            dist.broadcast(t, src=root)
            same(t, want, f"broadcast {dtype} count {count} root {root}")
            outs = [torch.zeros(count, dtype=dtype) for _ in range(n)]
            dist.all_gather(outs, vals(RANK, count, torch.int64).to(dtype))
            for r in range(n):
                same(outs[r], vals(r, count, torch.int64).to(dtype), f"all_gather {dtype} {count} from {r}")
            flat = torch.zeros(n * count, dtype=dtype)
            dist.all_gather_into_tensor(flat, vals(RANK, count, torch.int64).to(dtype))
            same(flat, torch.cat([vals(r, count, torch.int64).to(dtype) for r in range(n)]),
                 f"all_gather_into_tensor {dtype} {count}")

    for dtype in (torch.float32, torch.int64, torch.bfloat16, torch.uint8):
        for count in (0, 1, 4097):
            # the input list of rank r: block j is vals(r * n + j)
            ins = [vals(RANK * n + j, count, dtype) for j in range(n)]
            out = torch.zeros(count, dtype=dtype)
            dist.reduce_scatter(out, ins, op=R.SUM)
            same(out, reduce_ref([vals(r * n + RANK, count, dtype) for r in range(n)], R.SUM),
                 f"reduce_scatter {dtype} {count}")
            out = torch.zeros(count, dtype=dtype)
            dist.reduce_scatter_tensor(out, torch.cat(ins), op=R.MAX)
            same(out, reduce_ref([vals(r * n + RANK, count, dtype) for r in range(n)], R.MAX),
                 f"reduce_scatter_tensor {dtype} {count}")

    # send/recv round a ring: even ranks send first, odd ones receive first, so a
    # message larger than the inboxes (it waits for its receive) closes no cycle
    to, frm = (RANK + 1) % n, (RANK - 1) % n
    for dtype, count in ((torch.float32, 0), (torch.int64, 1), (torch.bfloat16, 333),
                         (torch.float64, 300000), (torch.float32, (5 << 20) // 4 + 3)):
        out = torch.zeros(count, dtype=dtype)
        if RANK % 2 == 0:
            dist.send(vals(RANK, count, torch.int64).to(dtype), dst=to, tag=count % 7)
            dist.recv(out, src=frm, tag=count % 7)
        else:
            dist.recv(out, src=frm, tag=count % 7)
            dist.send(vals(RANK, count, torch.int64).to(dtype), dst=to, tag=count % 7)
        same(out, vals(frm, count, torch.int64).to(dtype), f"send/recv {dtype} count {count}")
    # non-blocking, into a non-contiguous tensor
    out = torch.zeros(6, 4).t()
    reqs = [dist.isend(vals(RANK, 24, torch.float32).view(4, 6), dst=to),
            dist.irecv(out, src=frm)]
    for q in reqs:
        q.wait()
    same(out, vals(frm, 24, torch.float32).view(4, 6), "isend/irecv non-contiguous")

    # all_to_all_single, even: block j of rank r holds 1000 * r + j
    for dtype in (torch.float32, torch.int64, torch.uint8, torch.float16):
        for blk in (0, 1, 100, 70000):
            inp = torch.cat([torch.full((blk,), (10 * RANK + j) % 250, dtype=dtype) for j in range(n)])
            out = torch.zeros(n * blk, dtype=dtype)
            dist.all_to_all_single(out, inp)
            same(out, torch.cat([torch.full((blk,), (10 * r + RANK) % 250, dtype=dtype) for r in range(n)]),
                 f"all_to_all_single even {dtype} {blk}")
    # uneven splits, rows of 3: rank r sends (r + 2 * j) % 5 rows to rank j, some empty
    def rows(src, dst):
        return (src + 2 * dst) % 5 + (1000 if (src, dst) == (0, n - 1) else 0)
    isplit = [rows(RANK, j) for j in range(n)]
    osplit = [rows(r, RANK) for r in range(n)]
    inp = torch.cat([torch.arange(rows(RANK, j) * 3, dtype=torch.float32).view(-1, 3) + 100000 * RANK + 1000 * j
                     for j in range(n)])
    out = torch.full((sum(osplit), 3), -1.0)
    dist.all_to_all_single(out, inp, output_split_sizes=osplit, input_split_sizes=isplit)
    want = torch.cat([torch.arange(rows(r, RANK) * 3, dtype=torch.float32).view(-1, 3) + 100000 * r + 1000 * RANK
                      for r in range(n)])
    same(out, want, f"all_to_all_single uneven splits {isplit} -> {osplit}")
    # all_to_all with lists of different sizes
    ins = [torch.full((RANK + j + 1,), RANK * 10 + j, dtype=torch.int32) for j in range(n)]
    outs = [torch.zeros(r + RANK + 1, dtype=torch.int32) for r in range(n)]
    dist.all_to_all(outs, ins)
    for r in range(n):
        same(outs[r], torch.full((r + RANK + 1,), r * 10 + RANK, dtype=torch.int32), f"all_to_all list from {r}")

    # uneven splits with empty blocks and blocks on both sides of the inbox size
    # (16 KiB) in one call; rows of 4 float32: 0, 1 or thousands per pair
    def big_rows(src, dst):
        return 0 if (src + dst) % 3 == 0 else ((src * 5 + dst * 3) % 4) * 3000 + 1

    def block(src, dst):
        return (torch.arange(big_rows(src, dst) * 4, dtype=torch.float32).view(-1, 4)
                + 1e6 * src + 1e4 * dst)
    isplit = [big_rows(RANK, j) for j in range(n)]
    osplit = [big_rows(r, RANK) for r in range(n)]
    inp = torch.cat([block(RANK, j) for j in range(n)])
    want = torch.cat([block(r, RANK) for r in range(n)])
    out = torch.full((sum(osplit), 4), -1.0)
    dist.all_to_all_single(out, inp, output_split_sizes=osplit, input_split_sizes=isplit)
    same(out, want, f"all_to_all_single uneven, zeros, large {isplit} -> {osplit}")
    # non-contiguous input and output (transposed views): the same values
    inp_nc = inp.t().contiguous().t()
    out_nc = torch.full((4, sum(osplit)), -1.0).t()
    dist.all_to_all_single(out_nc, inp_nc, output_split_sizes=osplit, input_split_sizes=isplit)
    expect(not inp_nc.is_contiguous() and not out_nc.is_contiguous(), "the views are contiguous")
    same(out_nc, want, "all_to_all_single non-contiguous")
    # in place, even split, blocks past the inbox size
    x = torch.cat([torch.full((5000,), 100.0 * RANK + j) for j in range(n)])
    dist.all_to_all_single(x, x)
    same(x, torch.cat([torch.full((5000,), 100.0 * r + RANK) for r in range(n)]), "all_to_all_single in place")
    # lists: separate tensors of every size class, some non-contiguous, some empty
    ins = [block(RANK, j) if j % 2 else block(RANK, j).t().contiguous().t() for j in range(n)]
    outs = [torch.full((big_rows(r, RANK), 4), -1.0) if r % 2 == 0 else
            torch.full((4, big_rows(r, RANK)), -1.0).t() for r in range(n)]
    dist.all_to_all(outs, ins)
    for r in range(n):
        same(outs[r], block(r, RANK), f"all_to_all list, mixed layouts, from {r}")
    dist.barrier()


def t_gloo_order():
    gloo = dist.new_group(backend="gloo")
    # (gloo 1.13 has no bfloat16 or float16 all_reduce on CPU to compare with)
    for dtype in (torch.float32, torch.float64):
        for count in (1, 3, 7, 33, 1000, 4097, 100003, 1 << 20, 3000001):
            if dtype != torch.float32 and count > 100003:
                continue
            g = torch.Generator().manual_seed(11 + RANK * 7919 + count)
            x = (torch.randn(count, generator=g, dtype=torch.float64) *
                 torch.exp(torch.randn(count, generator=g, dtype=torch.float64) * 4)).to(dtype)
            a, b = x.clone(), x.clone()
            dist.all_reduce(a, group=gloo)
            dist.all_reduce(b)
            same(b, a, f"{dtype} sum of {count} against gloo")
    dist.destroy_process_group(gloo)


def t_async():
    n = WORLD
    ts = [vals(RANK, 20000 + k, torch.float32) for k in range(16)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    futs = [w.get_future() for w in works]
    for k, w in enumerate(works):
        w.wait()
        expect(w.is_completed() and w.is_success(), f"work {k} completed")
        same(ts[k], reduce_ref([vals(r, 20000 + k, torch.float32) for r in range(n)], R.SUM), f"async {k}")
    for k, f in enumerate(futs):
        v = f.wait()
        same(v[0], ts[k], f"future value {k}")
    outs = [torch.zeros(5, dtype=torch.int64) for _ in range(n)]
    w = dist.all_gather(outs, torch.full((5,), RANK, dtype=torch.int64), async_op=True)
    w.wait(timeout=datetime.timedelta(seconds=10))
    for r in range(n):
        same(outs[r], torch.full((5,), r, dtype=torch.int64), f"async all_gather {r}")
    dist.barrier(async_op=True).wait()


def t_errors():
    def raises(fn, what, text):
        try:
            fn()
        except (RuntimeError, ValueError) as e:
            expect(text in str(e), f"{what}: message '{e}' lacks '{text}'")
            return
        expect(False, f"{what}: no exception")
    t = torch.ones(4)
    raises(lambda: dist.all_reduce(t, op=R.BAND), "BAND", "not supported")
    raises(lambda: dist.all_reduce(torch.ones(4, dtype=torch.bool)), "bool sum", "no reduction for dtype")
    raises(lambda: dist.all_gather([torch.ones(3)] * WORLD, torch.ones(4)), "all_gather sizes", "match")
    raises(lambda: dist.all_to_all_single(torch.ones(WORLD), torch.ones(WORLD),
                                          input_split_sizes=[WORLD] + [0] * (WORLD - 2)), "splits", "splits")
    # an output smaller than the input, even split: refused, nothing written past it
    base = torch.full((4 * WORLD,), -1.0)
    raises(lambda: dist.all_to_all_single(base[:WORLD], torch.ones(2 * WORLD)), "all_to_all_single sizes",
           "same size")
    same(base, torch.full((4 * WORLD,), -1.0), "all_to_all_single: nothing written on a size error")
    raises(lambda: dist.all_to_all_single(torch.ones(WORLD, 2), torch.ones(WORLD, 3)), "all_to_all_single rows",
           "rows differ")
    raises(lambda: dist.recv(torch.ones(4)), "recv from any source", "source rank is required")
    # mpirun's variables: copied only where RANK is unset
    env = {"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "1"}
    expect(mroce_torch.env_from_mpi(env), "env_from_mpi: Open MPI's variables not taken")
    expect((env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"]) == ("3", "4", "1"), f"env_from_mpi: {env}")
    env = {"RANK": "0", "OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4"}
    expect(not mroce_torch.env_from_mpi(env) and env["RANK"] == "0", "env_from_mpi overrode RANK")
    env = {"PMI_RANK": "1", "PMI_SIZE": "2"}
    expect(mroce_torch.env_from_mpi(env) and env == {"PMI_RANK": "1", "PMI_SIZE": "2", "RANK": "1",
                                                     "WORLD_SIZE": "2", "LOCAL_RANK": "0"}, f"env_from_mpi: {env}")
    expect(not mroce_torch.env_from_mpi({"OMPI_COMM_WORLD_RANK": "1"}), "env_from_mpi: a rank without a size")
    # nothing was sent: the group still works
    t = torch.full((3,), float(RANK))
    dist.all_reduce(t)
    same(t, torch.full((3,), float(sum(range(WORLD)))), "all_reduce after argument errors")


def t_timeout():
    big = torch.ones(1 << 20)
    dist.all_reduce(big)
    if RANK == 1:
        time.sleep(6)  # never joins the next all_reduce
        os._exit(0)
    t0 = time.time()
    try:
        dist.all_reduce(big)
    except RuntimeError as e:
        print(f"torch_ops: rank {RANK}: all_reduce raised after {time.time() - t0:.2f} s: {e}", flush=True)
        os._exit(3)
    print(f"torch_ops: rank {RANK}: all_reduce returned without rank 1", flush=True)
    os._exit(1)


def t_dead():
    big = torch.ones(4 << 20)
    for k in range(100000):
        try:
            work = dist.all_reduce(big, async_op=True)
            work.wait()
        except RuntimeError as e:
            print(f"torch_ops: rank {RANK}: allreduce {k} failed at {time.time():.3f}: {e}", flush=True)
            os._exit(3)
    os._exit(1)


def t_a2a_mismatch():
    """Rank 0 sends rank 1 two rows, rank 1 expects one: both raise (in the
    all_to_all_single or the next call), nothing lands past rank 1's output."""
    isplit, osplit = [1] * WORLD, [1] * WORLD
    if RANK == 0:
        isplit[1] = 2
    inp = torch.arange(sum(isplit) * 3, dtype=torch.float32).view(-1, 3)
    buf = torch.full((sum(osplit) + 4, 3), -1.0)
    out = buf[:sum(osplit)]
    msgs = []
    for fn in (lambda: dist.all_to_all_single(out, inp, output_split_sizes=osplit, input_split_sizes=isplit),
               lambda: dist.barrier()):
        try:
            fn()
        except RuntimeError as e:
            msgs.append(str(e))
    print(f"torch_ops: rank {RANK}: mismatched splits raised: {msgs}", flush=True)
    if RANK in (0, 1):
        expect(any("Bad message" in m for m in msgs), f"rank {RANK}: no 'Bad message' error: {msgs}")
    else:
        expect(msgs, "the barrier after a broken all_to_all succeeded")
    same(buf[sum(osplit):], torch.full((4, 3), -1.0), "written past the output")
    print(f"torch_ops: rank {RANK}: a2a-mismatch {'ok' if not FAILS else 'FAILED (%d)' % len(FAILS)}",
          flush=True)
    # Rank 0 holds the rendezvous store: the others may still be polling its
    # barrier from init_process_group when ranks 0 and 1 are done (the
    # mismatch is found at once). Everyone is done before anyone leaves, and
    # rank 0, the store, leaves last: the others say so and touch it no more.
    store = dist.distributed_c10d._get_default_store()
    store.add("a2a_mismatch_done", 1)
    deadline = time.monotonic() + 30
    while store.add("a2a_mismatch_done", 0) < WORLD and time.monotonic() < deadline:
        time.sleep(0.01)
    if RANK:
        store.add("a2a_mismatch_left", 1)
    else:
        while store.add("a2a_mismatch_left", 0) < WORLD - 1 and time.monotonic() < deadline:
            time.sleep(0.01)
    os._exit(1 if FAILS else 0)


MODES = {"ops": t_ops, "gloo-order": t_gloo_order, "async": t_async, "errors": t_errors,
         "timeout": t_timeout, "dead": t_dead, "a2a-mismatch": t_a2a_mismatch}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in MODES:
        print(f"usage: torch_ops.py {'|'.join(MODES)}", file=sys.stderr)
        sys.exit(2)
    mode = sys.argv[1]
    secs = float(os.environ.get("TORCH_OPS_TIMEOUT", "60"))
    torch.set_num_threads(1)
    dist.init_process_group("mroce", timeout=datetime.timedelta(seconds=secs))
    RANK, WORLD = dist.get_rank(), dist.get_world_size()
    MODES[mode]()
    print(f"torch_ops: rank {RANK}: {mode} {'ok' if not FAILS else 'FAILED (%d)' % len(FAILS)}", flush=True)
    dist.destroy_process_group()
    sys.exit(1 if FAILS else 0)
