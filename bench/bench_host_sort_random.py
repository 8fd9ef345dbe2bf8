#!/usr/bin/env python3
"""Issue 45's sort and random targets on the host backend, NumPy in the same
run: sort of 2^24 float32 (kiln.sort against np.sort) and float32 random
fills (kiln.random.Generator(philox) uniform / normal against NumPy's
Generator(Philox) random / standard_normal, both writing into float32).
Wall time from the call to a finished result, interleaved rounds, medians;
every kiln result checked (sorted equal to np.sort; fills within [0, 1) and
with the expected mean and spread).

    python bench/bench_host_sort_random.py [--n 24] [--rounds 7] [--device host:0]
"""
import argparse
import statistics
import time

import numpy as np

import kiln
import kiln.random as kr


def wall(fn, sync):
    t = time.perf_counter()
    r = fn()
    sync()
    return time.perf_counter() - t, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=24, help="log2 of the element count")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--device", default="host:0")
    args = ap.parse_args()
    n = 1 << args.n
    q = kiln.Queue(device=args.device)
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    kx = kiln.asarray(x, queue=q)
    kg = kr.Generator(7, "philox", queue=q)
    ng = np.random.Generator(np.random.Philox(7))
    out32 = np.empty(n, np.float32)
    cases = {
        "sort f32": (lambda: kiln.sort(kx), lambda: np.sort(x)),
        "uniform f32": (lambda: kg.random(n, dtype=np.float32),
                        lambda: ng.random(n, dtype=np.float32, out=out32)),
        "normal f32": (lambda: kg.normal(size=n, dtype=np.float32),
                       lambda: ng.standard_normal(n, dtype=np.float32, out=out32)),
    }
    times = {c: ([], []) for c in cases}
    ref_sorted = np.sort(x)
    for r in range(args.rounds + 1):  # round 0 warms up (builds, caches)
        for c, (kfn, nfn) in cases.items():
            tk, res = wall(kfn, q.finish)
            tn, _ = wall(nfn, lambda: None)
            if r == 0:
                got = res.get()
                if c.startswith("sort"):
                    assert np.array_equal(got, ref_sorted), c
                elif c.startswith("uniform"):
                    assert got.min() >= 0 and got.max() < 1 and abs(got.mean() - 0.5) < 1e-3, c
                else:
                    assert abs(got.mean()) < 2e-3 and abs(got.std() - 1) < 2e-3, c
                continue
            times[c][0].append(tk)
            times[c][1].append(tn)
    dev = q.device.info()
    print(f"device {dev['id']} {dev['name']}; NumPy {np.__version__}; n = 2^{args.n}; "
          f"{args.rounds} interleaved rounds, medians (ms)")
    try:
        simd = np.show_config(mode="dicts")["SIMD Extensions"]
        print(f"NumPy SIMD: baseline {simd.get('baseline')}, found {simd.get('found')}")
    except Exception:  # older NumPy: no dict mode
        pass
    for c, (tk, tn) in times.items():
        mk, mn = statistics.median(tk) * 1e3, statistics.median(tn) * 1e3
        print(f"  {c:12s} kiln {mk:9.2f}   numpy {mn:9.2f}   numpy/kiln {mn / mk:5.2f}")


if __name__ == "__main__":
    main()
