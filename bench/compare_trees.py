#!/usr/bin/env python3
"""Runs two or more builds of one benchmark in alternation and prints, per
line key, each build's median and its ratio to the first build's.

    bench/compare_trees.py --rounds 15 -- OLD/bench/bench_algo NEW/bench/bench_algo -- --enqueue

Every run's lines "KEY NAME SECONDS" (the ENQUEUE / TIME lines the C
benchmarks print) are collected; builds alternate run by run, and the
order flips every round, so that a drift of the machine's speed falls on
both alike."""
import argparse
import statistics
import subprocess
import sys
import time


def run(binary, args, keys):
    out = subprocess.run([binary] + args, capture_output=True, text=True, check=True).stdout
    got = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] in keys:
            try:
                got[f[0] + " " + f[1]] = float(f[2])
            except ValueError:
                pass
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--seconds", type=float, default=0,
                    help="stop after the round that ends past this many seconds (an even "
                         "number of rounds, at least 2; --rounds stays the most)")
    ap.add_argument("--keys", default="ENQUEUE,TIME", help="line keys to collect")
    ap.add_argument("rest", nargs=argparse.REMAINDER, help="-- BINARY... -- ARGS...")
    a = ap.parse_args()
    rest = a.rest[1:] if a.rest[:1] == ["--"] else a.rest
    if "--" in rest:
        i = rest.index("--")
        bins, args = rest[:i], rest[i + 1:]
    else:
        bins, args = rest, []
    if len(bins) < 2:
        sys.exit("compare_trees.py: give two or more benchmark binaries")
    keys = set(a.keys.split(","))
    samples = [dict() for _ in bins]
    start = time.monotonic()
    rounds = 0
    for r in range(a.rounds):
        if a.seconds and r >= 2 and r % 2 == 0 and time.monotonic() - start > a.seconds:
            break
        rounds += 1
        order = range(len(bins)) if r % 2 == 0 else reversed(range(len(bins)))
        for b in order:
            for k, v in run(bins[b], args, keys).items():
                samples[b].setdefault(k, []).append(v)
    names = sorted(set().union(*[s.keys() for s in samples]), key=lambda k: list(samples[0]).index(k)
                   if k in samples[0] else 1 << 30)
    print(f"{rounds} rounds, {time.monotonic() - start:.0f} s, args {' '.join(args)}")
    print(f"{'':28}" + "".join(f"{'build ' + str(b):>14}" for b in range(len(bins))) + "   ratios to build 0")
    for k in names:
        med = [statistics.median(s[k]) if k in s else float("nan") for s in samples]
        ratios = " ".join(f"{m / med[0]:.3f}" for m in med[1:])
        print(f"{k:28}" + "".join(f"{m * 1e6:12.3f}us" for m in med) + "   " + ratios)
    for b, path in enumerate(bins):
        print(f"build {b}: {path}")


if __name__ == "__main__":
    main()
