#!/usr/bin/env python3
"""Peer comparison for bench_toolkit_b: the same work with NumPy and, when
importable (with a GPU), PyTorch and CuPy.

    python3 bench/peers_toolkit_b.py BUILD/bench/bench_toolkit_b
        [rows cols n nh] [--peers numpy,torch,cupy]

Runs bench_toolkit_b once (device: $KILN_DEVICE), times the peers on the
same sizes and input patterns (median of 11 runs after 2 warm-ups: PyTorch
and CuPy with CUDA events, results left on the device; NumPy with wall
time) and prints one markdown table: op, kiln's ms, each peer's ms and the
ratio peer time / kiln time (> 1: kiln is faster).
Ops: sum_axis0 / sum_axis1 of a rows x cols float32 matrix; hist_uniform
and hist_skewed (90% of the values in one bin), 256 bins over [0, 1] of n
float32 values (torch.histc, cupy/numpy.histogram); bincount of n int32
values in [0, 256); hash_build / hash_lookup of nh uint32 keys (half of
them inserted): no peer has a hash table, so the peers do the sort-based
equivalent: build = sort the keys (with their values), lookup =
searchsorted + a compare and a gather."""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

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


def elapsed_ms(a, b):
    """ms between two recorded CUDA events: torch's Event.elapsed_time, or
    CuPy's cupy.cuda.get_elapsed_time (its Event has no such method)."""
    if hasattr(a, "elapsed_time"):
        return a.elapsed_time(b)
    import cupy
    return cupy.cuda.get_elapsed_time(a, b)


def cuda_events(f, new_event, sync):
    for _ in range(2):
        f()
    sync()
    ts = []
    for _ in range(RUNS):
        a, b = new_event(), new_event()
        a.record()
        f()
        b.record()
        b.synchronize()
        ts.append(elapsed_ms(a, b) / 1e3)
    return statistics.median(ts)


def run_kiln(path, args):
    proc = subprocess.run([path] + [str(a) for a in args],
                          capture_output=True, text=True)
    sys.stderr.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"bench_toolkit_b FAILED (exit {proc.returncode})")
    res = {}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            _, op, t = line.split()
            res[op] = float(t)
        elif line.startswith("device:"):
            res["_device"] = line
    return res


def inputs(rows, cols, n, nh):
    rng = np.random.default_rng(1)
    m = rng.random((rows, cols), dtype=np.float32) - 0.5
    u = rng.random(n, dtype=np.float32)
    s = u.copy()
    s[np.arange(n) % 10 != 0] = np.float32(0.5009765625)  # 90% in bin 128
    b = rng.integers(0, 256, n, dtype=np.int32)
    keys = (np.arange(nh, dtype=np.uint64) * 2654435761 & 0x7FFFFFFF).astype(
        np.uint32)
    return m, u, s, b, keys


def ops_for(xp, m, u, s, b, keys, histc=None, searchsorted=None, sort=None):
    """The peer ops over arrays of module xp (numpy, cupy or torch)."""
    ins = keys[0::2]
    vals = ins + 1
    ops = {
        "sum_axis0": lambda: m.sum(0),
        "sum_axis1": lambda: m.sum(1),
        "hist_uniform": (lambda: histc(u)),
        "hist_skewed": (lambda: histc(s)),
        "bincount": lambda: xp.bincount(b, minlength=256),
    }
    state = {}

    def build():
        order = sort(ins)
        state["k"], state["v"] = ins[order], vals[order]

    def lookup():
        pos = searchsorted(state["k"], keys).clip(max=len(ins) - 1)
        hit = state["k"][pos] == keys
        return xp.where(hit, state["v"][pos], 0xFFFFFFFF)

    ops["hash_build"] = build
    build()
    ops["hash_lookup"] = lookup
    return ops


def main():
    # --peers=LIST or --peers LIST (the second form used to be taken for a
    # size, leaving every peer on, NumPy's 2^26-key sort included)
    argv, peers, rest = [], "numpy,torch,cupy", sys.argv[1:]
    while rest:
        a = rest.pop(0)
        if a.startswith("--peers="):
            peers = a.split("=", 1)[1]
        elif a == "--peers" and rest:
            peers = rest.pop(0)
        elif not a.startswith("--"):
            argv.append(a)
    if not argv:
        sys.exit(__doc__)
    path = argv[0]
    given = [int(x) for x in argv[1:5]]
    rows, cols, n, nh = given + [4096, 4096, 1 << 24, 1 << 22][len(given):]
    kiln = run_kiln(path, [rows, cols, n, nh])
    m, u, s, b, keys = inputs(rows, cols, n, nh)
    results = {}
    if "numpy" in peers:
        ops = ops_for(np, m, u, s, b, keys,
                      histc=lambda x: np.histogram(x, 256, (0.0, 1.0))[0],
                      searchsorted=np.searchsorted,
                      sort=lambda k: np.argsort(k, kind="stable"))
        results["numpy"] = {k: wall(f) for k, f in ops.items()}
    if "torch" in peers:
        try:
            import torch
            if not torch.cuda.is_available():
                raise ImportError("no CUDA device")
            dev = "cuda"
            T = {k: torch.from_numpy(v.astype(np.int64) if v.dtype == np.uint32
                                     else v).to(dev)
                 for k, v in (("m", m), ("u", u), ("s", s), ("b", b),
                              ("keys", keys))}
            ops = ops_for(torch, T["m"], T["u"], T["s"], T["b"], T["keys"],
                          histc=lambda x: torch.histc(x, 256, 0.0, 1.0),
                          searchsorted=torch.searchsorted,
                          sort=lambda k: torch.sort(k).indices)
            results["torch"] = {
                k: cuda_events(f, lambda: torch.cuda.Event(enable_timing=True),
                               torch.cuda.synchronize)
                for k, f in ops.items()}
        except ImportError as e:
            print(f"torch skipped: {e}", file=sys.stderr)
    if "cupy" in peers:
        try:
            import cupy as cp
            C = [cp.asarray(v) for v in (m, u, s, b, keys)]
            ops = ops_for(cp, *C,
                          histc=lambda x: cp.histogram(x, 256, (0.0, 1.0))[0],
                          searchsorted=cp.searchsorted,
                          sort=cp.argsort)
            results["cupy"] = {
                k: cuda_events(f, lambda: cp.cuda.Event(),
                               cp.cuda.runtime.deviceSynchronize)
                for k, f in ops.items()}
        except ImportError as e:
            print(f"cupy skipped: {e}", file=sys.stderr)
    print(kiln.get("_device", ""))
    print(f"rows x cols = {rows} x {cols}, n = {n}, nh = {nh}")
    head = "| op | kiln ms |" + "".join(f" {p} ms | {p}/kiln |" for p in results)
    print(head)
    print("|" + "---|" * (2 + 2 * len(results)))
    for op in ["sum_axis0", "sum_axis1", "hist_uniform", "hist_skewed",
               "bincount", "hash_build", "hash_lookup"]:
        k = kiln.get(op)
        line = f"| {op} | {k * 1e3:.3f} |" if k else f"| {op} | - |"
        for p, r in results.items():
            t = r.get(op)
            line += f" {t * 1e3:.3f} | {t / k:.2f} |" if t and k else " - | - |"
        print(line)


if __name__ == "__main__":
    main()
