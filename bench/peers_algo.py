#!/usr/bin/env python3
"""Peer comparison for bench_algo: the same work with PyOpenCL (on the same
OpenCL device), NumPy and, when importable, CuPy and PyTorch.

    python3 bench/peers_algo.py BUILD/bench/bench_algo [n]
        [--devices SEL,SEL...] [--peers pyopencl,numpy,cupy,torch]

Runs bench_algo once per kiln device selector (KILN_DEVICE=SEL; default: the
environment's), times the peers (median of 11 runs after 2 warm-ups: CuPy
with CUDA events and its results left on the device, like bench_algo's
device-event timing, and PyTorch the same way; PyOpenCL and NumPy with wall time to a finished
result) and prints one markdown table: op, for each kiln device its ms and
% of its own copy bandwidth, for each peer its ms, its % of its own copy
bandwidth and the ratio peer time / time on the first kiln device (> 1
means kiln is faster). A peer that cannot be imported (PyOpenCL needs mako;
the GPU machine has neither) is skipped with a note.
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


def events_median(f, new_event, elapsed_ms, sync):
    """Median device time of f in seconds between two CUDA events (CuPy's
    or torch's: new_event makes one, elapsed_ms(start, end) reads them),
    after 2 warm-ups; results stay on the device."""
    start, end = new_event(), new_event()
    for _ in range(2):
        f()
    sync()
    ts = []
    for _ in range(RUNS):
        start.record()
        f()
        end.record()
        end.synchronize()
        ts.append(elapsed_ms(start, end) * 1e-3)
    return statistics.median(ts)


def run_kiln(path, n, device=None):
    env = dict(os.environ)
    if device:
        env["KILN_DEVICE"] = device
    proc = subprocess.run([path, str(n)], capture_output=True, text=True,
                          env=env)
    out = proc.stdout
    sys.stderr.write(out + proc.stderr)
    if proc.returncode != 0:
        print(f"bench_algo on {device or 'default device'} FAILED "
              f"(exit {proc.returncode}): {proc.stderr.strip()}",
              file=sys.stderr)
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
        "_device": "host CPU",
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

    def ev(f):
        return events_median(f, cp.cuda.Event, cp.cuda.get_elapsed_time,
                             cp.cuda.Stream.null.synchronize)

    axpy_k = cp.ElementwiseKernel("float32 a, float32 x, float32 y",
                                  "float32 z", "z = a*x + y", "axpy")
    res = {
        "copy": ev(lambda: cp.copyto(z, x)),
        "axpy": ev(lambda: axpy_k(cp.float32(2), x, y, z)),
        "sum": ev(lambda: x.sum()),
        "dot": ev(lambda: cp.dot(x, y)),
        "scan_int32": ev(lambda: cp.cumsum(xi, out=oi)),
    }
    res["_device"] = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    return res


def torch_peer(n):
    """PyTorch on the first CUDA device, timed like CuPy (CUDA events,
    results left on the device). axpy is torch.add(y, x, alpha=2, out=z),
    the form issue 16 measured."""
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch has no CUDA device here")
    dev = torch.device("cuda")
    x = (torch.arange(n, device=dev) % 1000).to(torch.float32) * 0.001
    y = torch.ones(n, dtype=torch.float32, device=dev)
    z = torch.empty_like(x)
    xi = (torch.arange(n, device=dev) % 7).to(torch.int32)
    oi = torch.empty_like(xi)

    def ev(f):
        return events_median(f, lambda: torch.cuda.Event(enable_timing=True),
                             lambda a, b: a.elapsed_time(b),
                             torch.cuda.synchronize)

    res = {
        "copy": ev(lambda: z.copy_(x)),
        "axpy": ev(lambda: torch.add(y, x, alpha=2, out=z)),
        "sum": ev(lambda: x.sum()),
        "dot": ev(lambda: torch.dot(x, y)),
        # int32 in, int32 out (torch's default for integer cumsum is int64)
        "scan_int32": ev(lambda: torch.cumsum(xi, 0, dtype=torch.int32,
                                              out=oi)),
    }
    res["_device"] = torch.cuda.get_device_name(0)
    return res


BYTES = {"copy": 8, "axpy": 12, "sum": 4, "dot": 8, "scan_int32": 8}
OPS = ["copy", "axpy", "sum", "dot", "scan_int32"]


def frac(res, op):
    """% of the same run's copy bandwidth."""
    return BYTES[op] / 8 * res["copy"] / res[op] * 100


def main():
    args = [a for a in sys.argv[1:]]
    devices, wanted = [None], ["pyopencl", "numpy", "cupy", "torch"]
    for opt in ("--devices", "--peers"):
        if opt in args:
            k = args.index(opt)
            val = args[k + 1].split(",")
            del args[k:k + 2]
            if opt == "--devices":
                devices = val
            else:
                wanted = val
    if not args:
        print(__doc__)
        return 2
    n = int(args[1]) if len(args) > 1 else 1 << 24
    kilns = [(d, run_kiln(args[0], n, d)) for d in devices]
    peers = []
    makers = {"pyopencl": ("PyOpenCL", pyopencl_peer),
              "numpy": ("NumPy", numpy_peer), "cupy": ("CuPy", cupy_peer),
              "torch": ("PyTorch", torch_peer)}
    for w in wanted:
        name, fn = makers[w]
        try:
            peers.append((name, fn(n)))
        except ImportError as e:
            print(f"{name} skipped: not importable ({e})", file=sys.stderr)
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"{name} skipped: {e}", file=sys.stderr)
    print(f"n = {n}")
    for d, k in kilns:
        print(f"kiln {d or '(default device)'}: {k.get('_device', '')}")
    for name, p in peers:
        print(f"{name} device: {p.get('_device', '?')}")
    print()
    head = ["op"]
    for d, _ in kilns:
        head += [f"kiln {d or ''} ms".replace("  ", " "),
                 f"kiln {d or ''} % of copy".replace("  ", " ")]
    for name, _ in peers:
        head += [f"{name} ms", f"{name} % of copy",
                 f"ratio {name}/kiln"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for op in OPS:
        row = [op]
        for _, k in kilns:
            if op in k and "copy" in k:
                row += [f"{k[op]*1e3:.3f}", f"{frac(k, op):.0f}%"]
            else:
                row += ["FAILED", "-"]
        for _, p in peers:
            k0 = kilns[0][1]
            row += [f"{p[op]*1e3:.3f}", f"{frac(p, op):.0f}%",
                    f"{p[op]/k0[op]:.2f}" if op in k0 else "-"]
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
