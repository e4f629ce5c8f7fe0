#!/usr/bin/env python3
# Goodput recovery after a path failure, from an rdma_test --timeline file
# ("t_ns acked_bytes" and then the first QP's counters, every millisecond)
# and the failure's time (t_ns the fabric printed when the path went down).
#
#   recovery.py TIMELINE T_DOWN_NS [BOUND_MS [SERVER_TIMELINE]] [--fraction F] [--ref-ns T]
#
# Goodput at t is what was acknowledged over the WINDOW_MS before t. The
# pre-failure level is the goodput over the 50 ms before the failure (or
# before --ref-ns T: a plane's return is measured against the level before
# it failed). The recovery time is how long after the event the windowed
# goodput first reaches 80% (--fraction) of that level again (the window's
# own lag included). Exits 1
# if that takes longer than BOUND_MS (default 50) or never happens, and then
# prints both ends' counters (the server's from SERVER_TIMELINE, rdma_test
# server --timeline) over the failure, to read why.
import sys

WINDOW_MS = 5
PRE_MS = 50
FRACTION = 0.8

def rate_between(samples, t0, t1):
    """Bytes per second acknowledged between t0 and t1 (interpolating the cumulative count)."""
    def acked_at(t):
        prev = samples[0]
        for s in samples:
            if s[0] >= t:
                if s[0] == prev[0]:
                    return s[1]
                return prev[1] + (s[1] - prev[1]) * (t - prev[0]) / (s[0] - prev[0])
            prev = s
        return samples[-1][1]
    return (acked_at(t1) - acked_at(t0)) / ((t1 - t0) / 1e9)

def main():
    global FRACTION
    args, ref = [], None
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--fraction":
            FRACTION = float(next(it))
        elif a == "--ref-ns":
            ref = int(next(it))
        else:
            args.append(a)
    sys.argv = [sys.argv[0]] + args
    if len(sys.argv) < 3:
        sys.exit("usage: recovery.py TIMELINE T_DOWN_NS [BOUND_MS [SERVER_TIMELINE]] [--fraction F] [--ref-ns T]")
    samples = [tuple(map(int, l.split()[:2])) for l in open(sys.argv[1]) if l.strip()]
    t_down, bound_ms = int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 50.0
    ref = t_down if ref is None else ref
    if len(samples) < 2 or samples[0][0] > ref - PRE_MS * 1e6 or samples[-1][0] < t_down:
        print(f"recovery: the timeline does not cover {PRE_MS} ms before the reference and the event itself")
        return 1
    pre = rate_between(samples, ref - PRE_MS * 1e6, ref)
    low, recovered = None, None
    t = t_down + WINDOW_MS * 1e6
    while t <= samples[-1][0]:
        g = rate_between(samples, t - WINDOW_MS * 1e6, t)
        low = g if low is None or g < low else low
        if g >= FRACTION * pre:
            recovered = (t - t_down) / 1e6
            break
        t += 0.5e6
    print(f"recovery: goodput before the failure {pre * 8 / 1e9:.2f} Gbit/s; lowest {WINDOW_MS} ms window "
          f"after it {(low or 0) * 8 / 1e9:.2f} Gbit/s; back to >= {FRACTION:.0%} after "
          f"{'never' if recovered is None else f'{recovered:.1f} ms'} (bound {bound_ms:g} ms)")
    if recovered is not None and recovered <= bound_ms:
        return 0
    # Too slow: show what each end did, millisecond by millisecond.
    lines = []
    for who, path in (("client", sys.argv[1]), ("server", sys.argv[4] if len(sys.argv) > 4 else None)):
        for l in open(path) if path else ():
            f = l.split()
            if len(f) > 2 and t_down - 2e6 <= int(f[0]) <= t_down + (bound_ms + 20) * 1e6:
                what = f"acked {int(f[1]) >> 20} MiB " + " ".join(f[2:]) if who == "client" else " ".join(f[1:])
                lines.append((int(f[0]), f"recovery: +{(int(f[0]) - t_down) / 1e6:7.2f} ms {who} {what}"))
    for _, l in sorted(lines):
        print(l)
    return 1

if __name__ == "__main__":
    sys.exit(main())
