#!/usr/bin/env python3
"""Peer comparison for bench_select: the same selections with NumPy
(boolean indexing), PyOpenCL's copy_if (same OpenCL device), CuPy and
PyTorch (masked selection, unique_consecutive), each when importable;
sort_unique_i32 (the keys shuffled, then sorted and made unique) against
np.unique, cp.unique and torch.unique (sorted=True), which sort too.

    python3 bench/peers_select.py BUILD/bench/bench_select [n]
        [--devices SEL,SEL...] [--peers numpy,pyopencl,cupy,torch]

Inputs as bench_select's: uniform float32 in [0, 1) (x[x > 0.5] keeps
half), sorted int32 with runs of 4 on average. Runs bench_select once per
kiln device selector (KILN_DEVICE=SEL), times each peer (median of 11 runs
after 2 warm-ups: CuPy and torch on CUDA with CUDA events, results left on
the device; NumPy, PyOpenCL and torch on the CPU with wall time to a
finished result) and prints one markdown table: op, for each kiln device
its ms, for each peer its ms and the ratio peer time / time on the first
kiln device (> 1 means kiln is faster). A peer that cannot be imported is
skipped with a note. PyOpenCL uses PYOPENCL_CTX when set, else the first
device (PoCL here)."""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

RUNS = 11
OPS = ["copy", "copy_if_f32", "unique_i32", "unique_counts_i32",
       "sort_unique_i32"]


def wall(f):
    for _ in range(2):
        f()
    ts = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def inputs(n):
    rng = np.random.default_rng(2026)
    x = rng.random(n, dtype=np.float32)
    k = np.cumsum(rng.random(n) < 0.25).astype(np.int32)
    return x, k


def shuffled(k):
    return np.random.default_rng(2027).permutation(k)


def run_kiln(path, n, device=None):
    env = dict(os.environ)
    if device:
        env["KILN_DEVICE"] = device
    proc = subprocess.run([path, str(n)], capture_output=True, text=True,
                          env=env)
    sys.stderr.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        print(f"bench_select on {device or 'default device'} FAILED "
              f"(exit {proc.returncode})", file=sys.stderr)
    res = {}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            _, op, t = line.split()
            res[op] = float(t)
        elif line.startswith("device:"):
            res["_device"] = line
    return res


def numpy_peer(n):
    x, k = inputs(n)
    ks = shuffled(k)
    z = np.empty_like(x)

    def uniq_counts():
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        return k[starts], np.diff(np.r_[starts, n])

    return {
        "copy": wall(lambda: np.copyto(z, x)),
        "copy_if_f32": wall(lambda: x[x > 0.5]),
        "unique_i32": wall(lambda: k[np.r_[True, k[1:] != k[:-1]]]),
        "unique_counts_i32": wall(uniq_counts),
        "sort_unique_i32": wall(lambda: np.unique(ks)),
        "_device": "host CPU (NumPy)",
    }


def pyopencl_peer(n):
    import pyopencl as cl
    import pyopencl.array as cla
    from pyopencl.algorithm import copy_if, unique

    if os.environ.get("PYOPENCL_CTX"):
        ctx = cl.create_some_context(interactive=False)
    else:
        ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
    q = cl.CommandQueue(ctx)
    xh, kh = inputs(n)
    x = cla.to_device(q, xh)
    k = cla.to_device(q, kh)
    z = cla.empty_like(x)

    def copy():
        cl.enqueue_copy(q, z.data, x.data)
        q.finish()

    def sel():
        # Array.finish() waits only for events the array tracks, which
        # copy_if's result does not: wait for the queue
        copy_if(x, "ary[i] > 0.5f", queue=q)
        q.finish()

    def uniq():
        # pyopencl.algorithm.unique: consecutive duplicates, like ours
        unique(k, queue=q)
        q.finish()

    res = {"copy": wall(copy), "copy_if_f32": wall(sel),
           "unique_i32": wall(uniq)}
    res["_device"] = ctx.devices[0].name + " (PyOpenCL)"
    return res


def cuda_events(sync, event, f):
    for _ in range(2):
        f()
    sync()
    ts = []
    for _ in range(RUNS):
        start, end = event(), event()
        start.record()
        f()
        end.record()
        end.synchronize()
        ts.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(ts)


def cupy_peer(n):
    import cupy as cp
    xh, kh = inputs(n)
    x, k = cp.asarray(xh), cp.asarray(kh)
    ks = cp.asarray(shuffled(kh))
    z = cp.empty_like(x)

    class Ev:
        def __init__(self):
            self.e = cp.cuda.Event()

        def record(self):
            self.e.record()

        def synchronize(self):
            self.e.synchronize()

        def elapsed_time(self, end):
            return cp.cuda.get_elapsed_time(self.e, end.e)

    def uniq():
        m = cp.empty(n, dtype=cp.bool_)
        m[0] = True
        cp.not_equal(k[1:], k[:-1], out=m[1:])
        return k[m]

    def uniq_counts():
        m = cp.empty(n, dtype=cp.bool_)
        m[0] = True
        cp.not_equal(k[1:], k[:-1], out=m[1:])
        starts = cp.flatnonzero(m)
        return k[starts], cp.diff(cp.concatenate([starts, cp.array([n])]))

    t = lambda f: cuda_events(cp.cuda.Stream.null.synchronize, Ev, f)  # noqa
    res = {"copy": t(lambda: cp.copyto(z, x)),
           "copy_if_f32": t(lambda: x[x > 0.5]),
           "unique_i32": t(uniq), "unique_counts_i32": t(uniq_counts),
           "sort_unique_i32": t(lambda: cp.unique(ks))}
    res["_device"] = (cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
                      + " (CuPy)")
    return res


def torch_peer(n):
    import torch
    xh, kh = inputs(n)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    x, k = torch.from_numpy(xh).to(dev), torch.from_numpy(kh).to(dev)
    ks = torch.from_numpy(shuffled(kh)).to(dev)
    z = torch.empty_like(x)
    if dev == "cuda":
        t = lambda f: cuda_events(torch.cuda.synchronize,  # noqa: E731
                                  lambda: torch.cuda.Event(enable_timing=True),
                                  f)
        name = torch.cuda.get_device_name(0)
    else:
        t, name = wall, "host CPU"
    res = {"copy": t(lambda: z.copy_(x)),
           "copy_if_f32": t(lambda: x[x > 0.5]),
           "unique_i32": t(lambda: torch.unique_consecutive(k)),
           "unique_counts_i32": t(
               lambda: torch.unique_consecutive(k, return_counts=True)),
           "sort_unique_i32": t(lambda: torch.unique(ks, sorted=True))}
    res["_device"] = name + " (torch)"
    return res


def main():
    args = list(sys.argv[1:])
    devices, wanted = [None], ["numpy", "pyopencl", "cupy", "torch"]
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
    makers = {"numpy": ("NumPy", numpy_peer),
              "pyopencl": ("PyOpenCL", pyopencl_peer),
              "cupy": ("CuPy", cupy_peer), "torch": ("torch", torch_peer)}
    peers = []
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
        head.append(f"kiln {d or ''} ms".replace("  ", " "))
    for name, _ in peers:
        head += [f"{name} ms", f"ratio {name}/kiln"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    k0 = kilns[0][1]
    for op in OPS:
        row = [op]
        for _, k in kilns:
            row.append(f"{k[op]*1e3:.3f}" if op in k else "FAILED")
        for _, p in peers:
            if op in p:
                row += [f"{p[op]*1e3:.3f}",
                        f"{p[op]/k0[op]:.2f}" if op in k0 else "-"]
            else:
                row += ["-", "-"]
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
