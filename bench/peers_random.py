#!/usr/bin/env python3
"""Peers for bench_random, n float32 (median of 11 after 2 warm-ups).
Usage: python3 bench/peers_random.py [n] [--peers torch,cupy,numpy,pyopencl]
(prints `PEER name seconds`; default peers: torch,cupy).
- torch.rand / torch.randn and CuPy's random / standard_normal on the GPU,
  timed with CUDA events, plus a torch fill of the same bytes (the floor);
- NumPy (one thread): default_rng().random / standard_normal with
  dtype=float32 into a preallocated out= (PCG64; normals by ziggurat), and
  Generator(Philox) for the same generator as kiln's default;
- PyOpenCL's clrandom (Random123 Philox4x32-10, Box-Muller normals) on the
  first device of the first platform or PYOPENCL_CTX (PoCL here), wall time
  to a finished queue, plus enqueue_fill_buffer of the same bytes.
A peer that cannot be imported is a note, not a failure."""
import os
import statistics
import sys
import time

n, peers, argv = 1 << 28, ["torch", "cupy"], sys.argv[1:]
while argv:
    a = argv.pop(0)
    if a == "--peers":
        peers = argv.pop(0).split(",")
    elif a.startswith("--peers="):
        peers = a.split("=", 1)[1].split(",")
    else:
        n = int(a, 0)


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


def wall(fn):
    times = []
    for k in range(13):
        t0 = time.perf_counter()
        fn()
        if k >= 2:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


if "torch" in peers:
    try:
        import torch
        out = torch.empty(n, dtype=torch.float32, device="cuda")
        ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
        sy = torch.cuda.synchronize
        print("PEER torch.fill_ %.6e" % timed(lambda: out.fill_(1.0), sy, ev))
        print("PEER torch.rand %.6e" % timed(lambda: torch.rand(n, out=out), sy, ev))
        print("PEER torch.randn %.6e" % timed(lambda: torch.randn(n, out=out), sy, ev))
    except Exception as e:  # a missing peer is a note, not a failure
        print("torch: not measured (%s)" % e)
if "cupy" in peers:
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
if "numpy" in peers:
    try:
        import numpy as np
        out = np.empty(n, dtype=np.float32)
        g = np.random.default_rng(1)
        gp = np.random.Generator(np.random.Philox(1))
        print("PEER numpy.random %.6e" % wall(lambda: g.random(dtype=np.float32, out=out)))
        print("PEER numpy.standard_normal %.6e" % wall(lambda: g.standard_normal(dtype=np.float32, out=out)))
        print("PEER numpy.philox.random %.6e" % wall(lambda: gp.random(dtype=np.float32, out=out)))
    except Exception as e:
        print("numpy: not measured (%s)" % e)
if "pyopencl" in peers:
    try:
        import numpy as np
        import pyopencl as cl
        import pyopencl.array as cla
        import pyopencl.clrandom as clr
        if os.environ.get("PYOPENCL_CTX"):
            ctx = cl.create_some_context(interactive=False)
        else:
            ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
        q = cl.CommandQueue(ctx)
        ary = cla.empty(q, n, np.float32)
        gen = clr.PhiloxGenerator(ctx, seed=1)
        pat = np.float32(0.25)

        def fill():
            cl.enqueue_fill_buffer(q, ary.data, pat, 0, n * 4)
            q.finish()

        def uni():
            gen.fill_uniform(ary, queue=q)
            q.finish()

        def nrm():
            gen.fill_normal(ary, queue=q)
            q.finish()
        print("PEER pyopencl.fill %.6e" % wall(fill))
        print("PEER pyopencl.clrandom.uniform %.6e" % wall(uni))
        print("PEER pyopencl.clrandom.normal %.6e" % wall(nrm))
    except Exception as e:
        print("pyopencl: not measured (%s)" % e)
