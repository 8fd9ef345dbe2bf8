#!/usr/bin/env python3
"""Peer comparison for bench_sort: the same sorts with NumPy (np.sort,
np.argsort(kind='stable')), PyOpenCL's RadixSort (when importable), CuPy
(cp.sort, cp.argsort) and PyTorch (torch.sort, stable=True) when
importable.

    python3 bench/peers_sort.py BUILD/bench/bench_sort [n]
        [--devices SEL,SEL...] [--peers numpy,pyopencl,cupy,torch]

Runs bench_sort once per kiln device selector (KILN_DEVICE=SEL; default:
the environment's) and prints one markdown table: op, kiln's ms per
device, then each peer's ms and the ratio peer / first kiln device (> 1:
kiln is faster). Ops: sort_int32 (n uniform random int32 keys),
argsort_int32 (int64 indices, the peers' output), sort_int64 (n/2 int64
keys). Timing: median of 11 runs after 2 warm-ups; GPU peers with CUDA
events (results left on the device, like bench_sort's device-event
timing), CPU peers with wall time. A peer that cannot be imported is
skipped with a note."""
import os
import statistics
import subprocess
import sys
import time

RUNS = 11


def wall(f):
    for _ in range(2):
        f()
    ts = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def run_kiln(path, n, device=None):
    env = dict(os.environ)
    if device:
        env["KILN_DEVICE"] = device
    proc = subprocess.run([path, str(n)], capture_output=True, text=True,
                          env=env)
    sys.stderr.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        print(f"bench_sort on {device or 'default'} FAILED "
              f"(exit {proc.returncode})", file=sys.stderr)
    res = {}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            _, op, t = line.split()
            res[op] = float(t)
    return res


def keys(n):
    import numpy as np
    rng = np.random.default_rng(1)
    k32 = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    k64 = rng.integers(-2**63, 2**63 - 1, n // 2, dtype=np.int64)
    return k32, k64


def peer_numpy(n):
    import numpy as np
    k32, k64 = keys(n)
    return {"sort_int32": wall(lambda: np.sort(k32)),
            "argsort_int32": wall(lambda: np.argsort(k32, kind="stable")),
            "sort_int64": wall(lambda: np.sort(k64))}


def peer_pyopencl(n):
    import numpy as np
    import pyopencl as cl
    import pyopencl.array as cla
    from pyopencl.algorithm import RadixSort
    ctx = cl.create_some_context(interactive=False)
    q = cl.CommandQueue(ctx)
    k32, k64 = keys(n)
    out = {}
    for name, k, t in (("sort_int32", k32, "int"), ("sort_int64", k64, "long")):
        # RadixSort orders unsigned keys: compare on the same bits count
        s = RadixSort(ctx, f"{t} *ary", key_expr="ary[i]", sort_arg_names=["ary"],
                      key_dtype=np.uint32 if t == "int" else np.uint64)
        d = cla.to_device(q, k)

        def run():
            (r,), ev = s(d, key_bits=32 if t == "int" else 64)
            ev.wait()
        out[name] = wall(run)
    return out


def peer_cupy(n):
    import cupy as cp
    k32, k64 = keys(n)
    d32, d64 = cp.asarray(k32), cp.asarray(k64)
    a, b = cp.cuda.Event(), cp.cuda.Event()

    def t(f):
        ts = []
        for r in range(RUNS + 2):
            a.record()
            f()
            b.record()
            b.synchronize()
            if r >= 2:
                ts.append(cp.cuda.get_elapsed_time(a, b) * 1e-3)
        return statistics.median(ts)
    return {"sort_int32": t(lambda: cp.sort(d32)),
            "argsort_int32": t(lambda: cp.argsort(d32)),
            "sort_int64": t(lambda: cp.sort(d64))}


def peer_torch(n):
    import torch
    k32, k64 = keys(n)
    d32 = torch.from_numpy(k32).cuda()
    d64 = torch.from_numpy(k64).cuda()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)

    def t(f):
        ts = []
        for r in range(RUNS + 2):
            a.record()
            f()
            b.record()
            b.synchronize()
            if r >= 2:
                ts.append(a.elapsed_time(b) * 1e-3)
        return statistics.median(ts)
    # torch.sort returns values and int64 indices: the argsort row
    return {"argsort_int32": t(lambda: torch.sort(d32, stable=True)),
            "sort_int64": t(lambda: torch.sort(d64, stable=True)),
            "sort_int32": t(lambda: torch.sort(d32, stable=True))}


PEERS = {"numpy": peer_numpy, "pyopencl": peer_pyopencl, "cupy": peer_cupy,
         "torch": peer_torch}


def main():
    # --opt=VALUE or --opt VALUE
    args, opts, rest = [], {}, sys.argv[1:]
    while rest:
        a = rest.pop(0)
        if not a.startswith("--"):
            args.append(a)
        elif "=" in a:
            k, v = a[2:].split("=", 1)
            opts[k] = v
        elif rest:
            opts[a[2:]] = rest.pop(0)
    if not args:
        print(__doc__)
        return 2
    path = args[0]
    n = int(args[1], 0) if len(args) > 1 else 1 << 24
    devices = opts.get("devices", "").split(",") if opts.get("devices") else [None]
    names = opts.get("peers", "numpy,pyopencl,cupy,torch").split(",")
    kiln = [(d or "default", run_kiln(path, n, d)) for d in devices]
    peers = []
    for p in names:
        try:
            peers.append((p, PEERS[p](n)))
        except Exception as e:  # not importable, or no device for it
            print(f"note: peer {p} skipped: {type(e).__name__}: {e}",
                  file=sys.stderr)
    ops = ["sort_int32", "argsort_int32", "sort_int64"]
    head = ["op"] + [f"kiln {d} ms" for d, _ in kiln]
    for p, _ in peers:
        head += [f"{p} ms", f"{p}/kiln"]
    print(f"n = {n} (sort_int64: {n // 2})")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for op in ops:
        row = [op]
        for _, r in kiln:
            row.append(f"{r[op] * 1e3:.3f}" if op in r else "-")
        k0 = kiln[0][1].get(op)
        for _, r in peers:
            if op in r:
                row += [f"{r[op] * 1e3:.3f}",
                        f"{r[op] / k0:.2f}" if k0 else "-"]
            else:
                row += ["-", "-"]
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
