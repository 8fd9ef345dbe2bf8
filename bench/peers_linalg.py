#!/usr/bin/env python3
"""Peer comparison for bench_linalg: the same matmuls and FFTs with NumPy
(CPU: OpenBLAS and pocketfft) and, when importable and a GPU is there,
PyTorch (cuBLAS and cuFFT; TF32 off).

    python3 bench/peers_linalg.py BUILD/bench/bench_linalg [--gpu]
        [--devices SEL,SEL...]

Runs bench_linalg once per kiln device selector (KILN_DEVICE=SEL; default:
the environment's) with its default sizes for the device type (--gpu: the
GPU sizes, also for the peers), times the peers (median of 7 runs after 2
warm-ups; torch with CUDA events, NumPy with wall time) and prints one
markdown table: op, kiln's ms per device, each peer's ms and the ratio
peer time / kiln time on the first device (> 1: kiln is faster)."""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

RUNS = 7


def med(f):
    for _ in range(2):
        f()
    ts = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def run_kiln(path, device, gpu):
    env = dict(os.environ)
    if device:
        env["KILN_DEVICE"] = device
    out = subprocess.run([path], env=env, capture_output=True, text=True,
                         check=True).stdout
    sys.stderr.write(out)
    return {l.split()[1]: float(l.split()[2]) for l in out.splitlines()
            if l.startswith("RESULT ")}


def sizes(gpu):
    if gpu:
        return [("matmul_f32_8192", "mm", np.float32, 8192),
                ("matmul_f64_4096", "mm", np.float64, 4096),
                ("fft_c64_1x16777216", "fft", 1, 1 << 24),
                ("fft_c64_4096x4096", "fft", 4096, 4096)]
    return [("matmul_f32_2048", "mm", np.float32, 2048),
            ("fft_c64_1x1048576", "fft", 1, 1 << 20),
            ("fft_c64_256x4096", "fft", 256, 4096)]


def numpy_peer(kind, a, n):
    rng = np.random.default_rng(1)
    if kind == "mm":
        x = rng.random((n, n), dtype=np.float64).astype(a)
        return med(lambda: x @ x)
    x = (rng.random((a, n)) + 1j * rng.random((a, n))).astype(np.complex64)
    return med(lambda: np.fft.fft(x, axis=-1))


def torch_peer(kind, a, n):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda"
    if kind == "mm":
        x = torch.rand((n, n), dtype=torch.float32 if a == np.float32
                       else torch.float64, device=dev)
        f = lambda: torch.matmul(x, x)
    else:
        x = torch.rand((a, n), dtype=torch.complex64, device=dev)
        f = lambda: torch.fft.fft(x, dim=-1)
    for _ in range(2):
        f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(RUNS):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(
            enable_timing=True)
        s.record()
        f()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) * 1e-3)
    return statistics.median(ts)


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    path, gpu, devices = args[0], "--gpu" in args, [None]
    if "--devices" in args:
        devices = args[args.index("--devices") + 1].split(",")
    kiln = [run_kiln(path, d, gpu) for d in devices]
    peers = [("numpy", numpy_peer)]
    if gpu:
        try:
            import torch  # noqa: F401
            peers.append(("torch", torch_peer))
        except ImportError:
            print("(torch not importable: left out)", file=sys.stderr)
    head = ["op"] + ["kiln %s ms" % (d or "default") for d in devices]
    for name, _ in peers:
        head += ["%s ms" % name, "%s / kiln" % name]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key, kind, a, n in sizes(gpu):
        row = [key]
        for k in kiln:
            row.append("%.3f" % (k[key] * 1e3) if key in k else "-")
        for name, fn in peers:
            if name == "numpy" and gpu and kind == "mm" and n > 4096:
                row += ["-", "-"]  # minutes on a CPU: not a peer there
                continue
            t = fn(kind, a, n)
            base = kiln[0].get(key)
            row += ["%.3f" % (t * 1e3), "%.2f" % (t / base) if base else "-"]
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
