#!/usr/bin/env python3
"""GPU peers for bench_random: torch.rand / torch.randn and CuPy's random
and standard_normal, n float32, timed with CUDA events (median of 11 after
2 warm-ups), plus a torch fill of the same bytes (the write floor).
Usage: python3 bench/peers_random.py [n]   (prints `PEER name seconds`)"""
import statistics
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 28


def timed(fn, sync, event):
    times = []
    for k in range(13):
        a, b = event(), event()
        a.record()
        fn()
        b.record()
        sync()
        if k >= 2:
            times.append(a.elapsed_time(b) / 1e3)
    return statistics.median(times)


try:
    import torch
    out = torch.empty(n, dtype=torch.float32, device="cuda")
    ev = lambda: torch.cuda.Event(enable_timing=True)
    sy = torch.cuda.synchronize
    print("PEER torch.fill_ %.6e" % timed(lambda: out.fill_(1.0), sy, ev))
    print("PEER torch.rand %.6e" % timed(lambda: torch.rand(n, out=out), sy, ev))
    print("PEER torch.randn %.6e" % timed(lambda: torch.randn(n, out=out), sy, ev))
except Exception as e:  # a missing peer is a note, not a failure
    print("torch: not measured (%s)" % e)
try:
    import cupy
    g = cupy.random.default_rng(1)
    sy = cupy.cuda.Device().synchronize

    class cev:  # torch.cuda.Event's interface over CuPy's events
        def __init__(self):
            self.e = cupy.cuda.Event()

        def record(self):
            self.e.record()

        def elapsed_time(self, other):
            return cupy.cuda.get_elapsed_time(self.e, other.e)
    print("PEER cupy.random %.6e" % timed(lambda: g.random(n, dtype=cupy.float32), sy, cev))
    print("PEER cupy.standard_normal %.6e" % timed(lambda: g.standard_normal(n, dtype=cupy.float32), sy, cev))
except Exception as e:
    print("cupy: not measured (%s)" % e)
