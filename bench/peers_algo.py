#!/usr/bin/env python3
"""Peer comparison for bench_algo: the same work with PyOpenCL (on the same
OpenCL device), NumPy and, when importable, CuPy.

    python3 bench/peers_algo.py BUILD/bench/bench_algo [n]

Runs bench_algo (it honours KILN_DEVICE), times the peers the same way
(median of 11 runs after 2 warm-ups, wall time to a finished result; for
reductions the result is on the host) and prints one markdown table:
op, kiln, peer, ratio (peer time / kiln time: > 1 means kiln is faster).
PyOpenCL uses PYOPENCL_CTX when set, else the first device (PoCL here)."""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

RUNS = 11


def timeit(f):
    for _ in range(2):
        f()
    ts = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def run_kiln(path, n):
    out = subprocess.run([path, str(n)], check=True, capture_output=True,
                         text=True).stdout
    res = {}
    for line in out.splitlines():
        if line.startswith("RESULT "):
            _, op, t = line.split()
            res[op] = float(t)
        elif line.startswith("device:"):
            res["_device"] = line
    return res


def numpy_peer(n):
    x = (np.arange(n) % 1000).astype(np.float32) * np.float32(0.001)
    y = np.ones(n, np.float32)
    z = np.empty_like(x)
    xi = (np.arange(n) % 7).astype(np.int32)
    oi = np.empty_like(xi)
    a = np.float32(2.0)

    def axpy():
        np.multiply(x, a, out=z)
        np.add(z, y, out=z)

    return {
        "copy": timeit(lambda: np.copyto(z, x)),
        "axpy": timeit(axpy),
        "sum": timeit(lambda: x.sum()),
        "dot": timeit(lambda: np.dot(x, y)),
        "scan_int32": timeit(lambda: np.cumsum(xi, out=oi)),
    }


def pyopencl_peer(n):
    import pyopencl as cl
    import pyopencl.array as cla
    from pyopencl.reduction import ReductionKernel
    from pyopencl.scan import InclusiveScanKernel

    if os.environ.get("PYOPENCL_CTX"):
        ctx = cl.create_some_context(interactive=False)
    else:
        ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
    q = cl.CommandQueue(ctx)
    x = cla.to_device(q, (np.arange(n) % 1000).astype(np.float32) *
                      np.float32(0.001))
    y = cla.to_device(q, np.ones(n, np.float32))
    z = cla.empty_like(x)
    xi = cla.to_device(q, (np.arange(n) % 7).astype(np.int32))
    oi = cla.empty_like(xi)
    sum_k = ReductionKernel(ctx, np.float32, neutral="0",
                            reduce_expr="a+b", map_expr="x[i]",
                            arguments="__global const float *x")
    dot_k = ReductionKernel(ctx, np.float32, neutral="0",
                            reduce_expr="a+b", map_expr="x[i]*y[i]",
                            arguments="__global const float *x, "
                                      "__global const float *y")
    scan_k = InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")

    def copy():
        cl.enqueue_copy(q, z.data, x.data)
        q.finish()

    def axpy():
        x.mul_add(2.0, y, 1.0, queue=q)  # one kernel: 2*x + 1*y
        q.finish()

    def scan():
        cl.enqueue_copy(q, oi.data, xi.data)
        scan_k(oi, queue=q)
        q.finish()

    res = {
        "copy": timeit(copy),
        "axpy": timeit(axpy),
        "sum": timeit(lambda: sum_k(x, queue=q).get()),
        "dot": timeit(lambda: dot_k(x, y, queue=q).get()),
        "scan_int32": timeit(scan),
    }
    # The scan includes a device copy (InclusiveScanKernel works in place);
    # take its time out so the scan alone is compared.
    res["scan_int32"] = max(res["scan_int32"] - res["copy"], 1e-9)
    res["_device"] = ctx.devices[0].name
    return res


def cupy_peer(n):
    import cupy as cp
    x = (cp.arange(n) % 1000).astype(cp.float32) * cp.float32(0.001)
    y = cp.ones(n, cp.float32)
    z = cp.empty_like(x)
    xi = (cp.arange(n) % 7).astype(cp.int32)
    oi = cp.empty_like(xi)
    sync = cp.cuda.Stream.null.synchronize

    def w(f):
        def g():
            f()
            sync()
        return g

    axpy_k = cp.ElementwiseKernel("float32 a, float32 x, float32 y",
                                  "float32 z", "z = a*x + y", "axpy")
    return {
        "copy": timeit(w(lambda: cp.copyto(z, x))),
        "axpy": timeit(w(lambda: axpy_k(cp.float32(2), x, y, z))),
        "sum": timeit(lambda: float(x.sum())),
        "dot": timeit(lambda: float(cp.dot(x, y))),
        "scan_int32": timeit(w(lambda: cp.cumsum(xi, out=oi))),
    }


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 24
    kiln = run_kiln(sys.argv[1], n)
    peers = []
    try:
        peers.append(("PyOpenCL", pyopencl_peer(n)))
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"PyOpenCL skipped: {e}", file=sys.stderr)
    peers.append(("NumPy", numpy_peer(n)))
    try:
        import cupy  # noqa: F401
        peers.append(("CuPy", cupy_peer(n)))
    except ImportError:
        pass
    except Exception as e:  # noqa: BLE001
        print(f"CuPy skipped: {e}", file=sys.stderr)
    print(f"kiln {kiln.get('_device', '')}; n = {n}")
    for name, p in peers:
        if "_device" in p:
            print(f"{name} device: {p['_device']}")
    print()
    print("| op | kiln ms | kiln % of copy | peer | peer ms | ratio (peer/kiln) |")
    print("|---|---|---|---|---|---|")
    for op in ["copy", "axpy", "sum", "dot", "scan_int32"]:
        k = kiln[op]
        frac = {"copy": 8, "axpy": 12, "sum": 4, "dot": 8,
                "scan_int32": 8}[op] / 8 * kiln["copy"] / k * 100
        for name, p in peers:
            print(f"| {op} | {k*1e3:.3f} | {frac:.0f}% | {name} | "
                  f"{p[op]*1e3:.3f} | {p[op]/k:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
