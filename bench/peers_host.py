#!/usr/bin/env python3
"""The host backend's algorithm goals (issue 45) against NumPy, interleaved:

    python3 bench/peers_host.py BUILD/bench/bench_host [--rounds R] [--per P]
        [--max N] [--devices host:0,opencl:0:0]

Starts `bench_host --serve` and alternates one round of it (every kiln
device, every size, P runs per cell) with one round of NumPy doing the same
work in this process (axpy as np.multiply + np.add into a preallocated
float32 out, np.sum and np.dot of float32 to a Python float, np.cumsum of
int32 with dtype=int32 into out), so a shared machine's load falls on all
columns alike. Prints one markdown table: per op and n, the median (of R*P
runs) of each kiln device and of NumPy in microseconds, the ratio NumPy /
host (> 1: host is faster), and at the largest n each one's bandwidth as a
percentage of a two-thread memcpy measured in the same rounds (bytes moved:
axpy 12n, sum 4n, dot 8n, scan 8n, memcpy 8n). Then the launch rows."""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

args = sys.argv[1:]
if not args:
    sys.exit(__doc__)
exe, rounds, per, max_n, devices = args.pop(0), 10, 10, 1 << 24, "host:0,opencl:0:0"
while args:
    a = args.pop(0)
    if a == "--rounds":
        rounds = int(args.pop(0))
    elif a == "--per":
        per = int(args.pop(0))
    elif a == "--max":
        max_n = int(args.pop(0), 0)
    elif a == "--devices":
        devices = args.pop(0)
    else:
        sys.exit(__doc__)
sizes = []
s = 1024
while s <= max_n:
    sizes.append(s)
    s *= 4

rng = np.random.default_rng(1)
X = rng.random(max_n, dtype=np.float32)
Y = rng.random(max_n, dtype=np.float32)
Z = np.empty(max_n, np.float32)
I = rng.integers(-2048, 2048, max_n, dtype=np.int32)
O = np.empty(max_n, np.int32)


def np_op(op, n):
    x, y, z, i, o = X[:n], Y[:n], Z[:n], I[:n], O[:n]
    t0 = time.perf_counter()
    if op == "axpy":
        np.multiply(x, np.float32(2), out=z)
        np.add(z, y, out=z)
    elif op == "sum":
        float(np.sum(x))
    elif op == "dot":
        float(np.dot(x, y))
    elif op == "scan_int32":
        np.cumsum(i, dtype=np.int32, out=o)
    return time.perf_counter() - t0


samples = {}
env = dict(os.environ)
proc = subprocess.Popen([exe, "--serve", "--rounds", str(rounds), "--per", str(per), "--max",
                         str(max_n), "--devices", devices], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, text=True, env=env)
names = {}
for r in range(rounds):
    proc.stdin.write("go\n")
    proc.stdin.flush()
    for line in proc.stdout:
        f = line.split()
        if not f:
            continue
        if f[0] == "DEVICE":
            names[f[1]] = " ".join(f[2:])
            continue
        if f[0] == "END":
            break
        if f[0] == "S":
            samples.setdefault((f[1], f[2], int(f[3])), []).extend(float(v) for v in f[4:])
    for n in sizes:
        for op in ("axpy", "sum", "dot", "scan_int32"):
            if r == 0:
                np_op(op, n)
                np_op(op, n)
            samples.setdefault(("numpy", op, n), []).extend(np_op(op, n) for _ in range(per))
proc.stdin.close()
proc.wait()
if proc.returncode:
    sys.exit("bench_host failed (%d)" % proc.returncode)

devs = devices.split(",")
med = {k: statistics.median(v) for k, v in samples.items()}
cols = devs + ["numpy"]
print("kiln devices: " + "; ".join("%s = %s" % (k, v) for k, v in names.items()))
print("NumPy %s (one thread for these ops; dot through its BLAS: %s threads)" %
      (np.__version__, os.environ.get("OPENBLAS_NUM_THREADS", "default")))
print("wall time from the call to a finished result, us, median of %d runs "
      "(%d interleaved rounds x %d)\n" % (rounds * per, rounds, per))
print("| op | n | " + " | ".join(cols) + " | NumPy / host | host <= NumPy |")
print("|---|---|" + "---|" * (len(cols) + 2))
bytes_per = {"axpy": 12, "sum": 4, "dot": 8, "scan_int32": 8}
for op in ("axpy", "sum", "dot", "scan_int32"):
    for n in sizes:
        row = [med.get((c, op, n)) for c in cols]
        h, npy = row[0], row[-1]
        print("| %s | 2^%d | %s | %.2f | %s |" % (
            op, n.bit_length() - 1, " | ".join("%.1f" % (v * 1e6) if v else "-" for v in row),
            npy / h, "yes" if h <= npy else "**no**"))
n = sizes[-1]
mc = med[("cpu", "memcpy2", n)]
bw_mc = 8 * n / mc
print("\nat n = 2^%d: two-thread memcpy %.1f us = %.2f GB/s (read + write); "
      "%% of it:\n" % (n.bit_length() - 1, mc * 1e6, bw_mc / 1e9))
print("| op | " + " | ".join(cols) + " |")
print("|---|" + "---|" * len(cols))
for op in ("axpy", "sum", "dot", "scan_int32"):
    print("| %s | %s |" % (op, " | ".join(
        "%.0f%%" % (100 * bytes_per[op] * n / med[(c, op, n)] / bw_mc) for c in cols)))
print("\nempty kernel, launch + event wait, us (median of %d):\n" % (rounds * per))
print("| | " + " | ".join(devs) + " |")
print("|---|" + "---|" * len(devs))
for op, what in (("launch1", "one work-item (calling thread)"),
                 ("launchall", "one group of 64 per compute unit (all cores)")):
    print("| %s | %s |" % (what, " | ".join("%.2f" % (med[(d, op, 1024)] * 1e6) for d in devs)))
