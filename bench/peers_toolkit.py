#!/usr/bin/env python3
"""Peer comparison for bench_toolkit: take, put, put_add, astype and where
with NumPy (host) and, when importable, PyTorch and CuPy (cuda:0).

    python3 bench/peers_toolkit.py BUILD/bench/bench_toolkit [n]
        [--devices SEL,SEL...] [--peers numpy,torch,cupy]

Runs bench_toolkit once per kiln device selector (KILN_DEVICE=SEL), times
the peers on the same work (median of 11 runs after 2 warm-ups; torch and
CuPy with CUDA events, NumPy with wall time) and prints a markdown table:
op, kiln ms per device, each peer's ms and the ratio peer / first kiln
device (> 1: kiln is faster). Work, as bench_toolkit: float32 data;
take = x[idx] with n random int64 indices (torch.index_select, cupy.take,
np.take); put = y[perm] = x (index_copy_, cupy/np item assignment);
put_add = add x at n random indices into n/16 targets (index_add_,
cupyx.scatter_add, np.add.at); astype float32 -> float16; where with a
bool (uint8 in kiln) condition."""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

RUNS = 11
OPS = ["copy", "take", "put", "put_add", "astype", "where"]


def timeit(f):
    for _ in range(2):
        f()
    ts = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


_host_data = {}


def host_data(n):
    """The inputs as NumPy arrays, made once per n (at 2^28 making them
    takes tens of seconds: every peer shares one copy)."""
    if n not in _host_data:
        t0 = time.perf_counter()
        rng = np.random.default_rng(1)
        _host_data[n] = (
            (np.arange(n) % 1024).astype(np.float32) / 1024,
            -(np.arange(n) % 7).astype(np.float32),
            rng.integers(0, 2, n).astype(bool),
            rng.integers(0, n, n),
            rng.permutation(n),
            rng.integers(0, max(n // 16, 1), n))
        print(f"note: inputs made in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)
    return _host_data[n]


def data(xp, n):
    return tuple(xp.asarray(a) for a in host_data(n))


def numpy_peer(n):
    x, y, c, idx, perm, add = data(np, n)
    o = np.empty_like(x)
    acc = np.zeros(max(n // 16, 1), np.float32)

    def put_add():
        acc.fill(0)
        np.add.at(acc, add, x)

    def put():
        o[perm] = x

    return {"copy": timeit(lambda: np.copyto(o, x)),
            "take": timeit(lambda: np.take(x, idx, out=o)),
            "put": timeit(put), "put_add": timeit(put_add),
            "astype": timeit(lambda: x.astype(np.float16)),
            "where": timeit(lambda: np.where(c, x, y)), "_device": "host CPU"}


def elapsed_ms(a, b):
    """ms between two recorded CUDA events: torch's Event.elapsed_time, or
    CuPy's cupy.cuda.get_elapsed_time (its Event has no such method)."""
    if hasattr(a, "elapsed_time"):
        return a.elapsed_time(b)
    import cupy
    return cupy.cuda.get_elapsed_time(a, b)


def cuda_events(sync, event, f):
    for _ in range(2):
        f()
    sync()
    ts = []
    for _ in range(RUNS):
        s, e = event(), event()
        s.record()
        f()
        e.record()
        e.synchronize()
        ts.append(elapsed_ms(s, e) * 1e-3)
    return statistics.median(ts)


def torch_peer(n):
    import torch
    x, y, c, idx, perm, add = (torch.as_tensor(a).cuda()
                               for a in data(np, n))
    o = torch.empty_like(x)
    acc = torch.zeros(max(n // 16, 1), device="cuda")

    def ev(f):
        return cuda_events(torch.cuda.synchronize,
                           lambda: torch.cuda.Event(enable_timing=True), f)

    def put_add():
        acc.zero_()
        acc.index_add_(0, add, x)

    return {"copy": ev(lambda: o.copy_(x)),
            "take": ev(lambda: torch.index_select(x, 0, idx, out=o)),
            "put": ev(lambda: o.index_copy_(0, perm, x)),
            "put_add": ev(put_add),
            "astype": ev(lambda: x.to(torch.float16)),
            "where": ev(lambda: torch.where(c, x, y)),
            "_device": torch.cuda.get_device_name(0)}


def cupy_peer(n):
    import cupy as cp
    import cupyx
    x, y, c, idx, perm, add = data(cp, n)
    o = cp.empty_like(x)
    acc = cp.zeros(max(n // 16, 1), cp.float32)

    def ev(f):
        return cuda_events(cp.cuda.Stream.null.synchronize, cp.cuda.Event, f)

    def put():
        o[perm] = x

    def put_add():
        acc.fill(0)
        cupyx.scatter_add(acc, add, x)

    return {"copy": ev(lambda: cp.copyto(o, x)),
            "take": ev(lambda: cp.take(x, idx, out=o)), "put": ev(put),
            "put_add": ev(put_add),
            "astype": ev(lambda: x.astype(cp.float16)),
            "where": ev(lambda: cp.where(c, x, y)),
            "_device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}


def run_kiln(path, n, device=None):
    env = dict(os.environ)
    if device:
        env["KILN_DEVICE"] = device
    proc = subprocess.run([path, str(n)], capture_output=True, text=True,
                          env=env)
    sys.stderr.write(proc.stdout + proc.stderr)
    res = {}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            _, op, t = line.split()
            res[op] = float(t)
    return res


def main():
    args = sys.argv[1:]
    devices, wanted = [None], ["numpy", "torch", "cupy"]
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
    t0 = time.perf_counter()
    kilns = [(d or "default", run_kiln(args[0], n, d)) for d in devices]
    print(f"note: kiln runs took {time.perf_counter() - t0:.1f} s",
          file=sys.stderr)
    makers = {"numpy": numpy_peer, "torch": torch_peer, "cupy": cupy_peer}
    peers = []
    for name in wanted:
        try:
            t0 = time.perf_counter()
            peers.append((name, makers[name](n)))
            print(f"note: peer {name} took {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr)
        except Exception as e:  # not importable here, or no GPU
            print(f"note: peer {name} skipped: {e}", file=sys.stderr)
    head = ["op"] + [f"kiln {d} ms" for d, _ in kilns]
    for name, _ in peers:
        head += [f"{name} ms", f"ratio {name}/kiln"]
    print(f"n = {n}")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for op in OPS:
        row = [op] + [f"{r[op] * 1e3:.3f}" if op in r else "-"
                      for _, r in kilns]
        first = kilns[0][1].get(op)
        for _, p in peers:
            row.append(f"{p[op] * 1e3:.3f}")
            row.append(f"{p[op] / first:.2f}" if first else "-")
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
