#!/usr/bin/env python3
"""c = a + b on 1024 float32 from Python: kiln against PyTorch eager and
CuPy on the same GPU, in one run (issue 44's speed goal: <= torch eager
and <= 1/3 of CuPy). N calls with one synchronise at the end, rounds
interleaved, medians in microseconds per call; a peer that is not
installed is left out.

    KILN_DEVICE=cuda:0 python bench/bench_python_peers.py [--calls N] [--rounds R]
"""
import argparse
import statistics
import time

import numpy as np

import kiln


def timed(step, sync, calls):
    step()
    sync()
    t = time.perf_counter()
    for _ in range(calls):
        step()
    sync()
    return (time.perf_counter() - t) / calls * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    x = np.arange(1024, dtype=np.float32)
    sides = {}
    ka, kb = kiln.asarray(x), kiln.asarray(x)
    sides["kiln"] = (lambda: ka + kb, kiln.finish)
    try:
        import torch

        ta = torch.from_numpy(x).cuda()
        tb = ta.clone()
        sides["torch"] = (lambda: ta + tb, torch.cuda.synchronize)
    except Exception as e:  # no torch or no GPU
        print(f"torch left out: {e}")
    try:
        import cupy

        ca = cupy.asarray(x)
        cb = ca.copy()
        sides["cupy"] = (lambda: ca + cb, cupy.cuda.Device().synchronize)
    except Exception as e:
        print(f"cupy left out: {e}")
    got = {k: [] for k in sides}
    for _ in range(args.rounds):
        for name, (step, sync) in sides.items():
            got[name].append(timed(step, sync, args.calls))
    assert np.array_equal((ka + kb).get(), 2 * x)
    print(f"device: {kiln.get_default_queue().device}")
    print(f"c = a + b, 1024 float32, {args.calls} calls x {args.rounds} rounds (us/call, median)")
    med = {k: statistics.median(v) for k, v in got.items()}
    for k, v in med.items():
        print(f"  {k:6s} {v:8.2f}   (min {min(got[k]):.2f})")
    for k in med:
        if k != "kiln":
            print(f"  {k}/kiln = {med[k] / med['kiln']:.2f}")


if __name__ == "__main__":
    main()
