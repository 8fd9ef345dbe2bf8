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
PyOpenCL uses PYOPENCL_CTX when set, else the first device (PoCL here).
With KILN_BENCH_VERIFY=last in the environment bench_algo verifies the
warm-ups and its last timed run only, so its timed runs follow each other
as the peers' do (bench_algo.c says why); the table says which.

    python3 bench/peers_algo.py BUILD/bench/bench_algo --sweep [max_n]
        [--devices ...] [--peers ...] [--chart FILE.png]

Size sweep (issue 16): runs `bench_algo --sweep [max_n]` per kiln device
(n = 2^10, 2^12, ... up to max_n; without max_n, bench_algo's default for
the device type: 2^28 on a GPU, 2^24 on a CPU device), times the peers on
the sizes of the first kiln device, and prints one markdown table per op:
rows n, columns the time per op in microseconds of kiln (device time:
marker to end; wall: enqueue to completion) and of each peer. NumPy and
PyOpenCL give wall time to a finished result (in the sweep PyOpenCL's scan
runs out of place and its reductions leave their result on the device, as
kiln's do); CuPy and PyTorch give both the CUDA-event device time and the
wall time from the first event's record to the synchronize, since small
sizes are dominated by launch overhead. Median of 11 runs after 2
warm-ups, of 5 above n = 2^24 (as bench_algo). --chart FILE.png also draws
a log-log chart (one subplot per op, one line per implementation and
clock) with matplotlib; without matplotlib the chart is skipped with a
note."""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

RUNS = 11


def runs_for(n):
    """Timed runs at size n: RUNS, 5 above 2^24 (as bench_algo --sweep)."""
    return RUNS if n <= 1 << 24 else 5


def timeit(f, runs=RUNS):
    for _ in range(2):
        f()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def events_times(f, new_event, elapsed_ms, sync, runs=RUNS):
    """Median device time of f in seconds between two CUDA events (CuPy's
    or torch's: new_event makes one, elapsed_ms(start, end) reads them),
    after 2 warm-ups; results stay on the device. Returns (device, wall):
    wall is the host time from just before the first event's record to the
    end of the synchronize on the second (launch overhead included)."""
    start, end = new_event(), new_event()
    for _ in range(2):
        f()
    sync()
    ts, ws = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        start.record()
        f()
        end.record()
        end.synchronize()
        ws.append(time.perf_counter() - t0)
        ts.append(elapsed_ms(start, end) * 1e-3)
    return statistics.median(ts), statistics.median(ws)


def events_median(f, new_event, elapsed_ms, sync, runs=RUNS):
    return events_times(f, new_event, elapsed_ms, sync, runs)[0]


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


def numpy_peer(n, sweep=False):
    x = (np.arange(n) % 1000).astype(np.float32) * np.float32(0.001)
    y = np.ones(n, np.float32)
    z = np.empty_like(x)
    xi = (np.arange(n) % 7).astype(np.int32)
    oi = np.empty_like(xi)
    a = np.float32(2.0)

    def axpy():
        np.multiply(x, a, out=z)
        np.add(z, y, out=z)

    r = runs_for(n)
    return {
        "copy": timeit(lambda: np.copyto(z, x), r),
        "axpy": timeit(axpy, r),
        "sum": timeit(lambda: x.sum(), r),
        "dot": timeit(lambda: np.dot(x, y), r),
        "scan_int32": timeit(lambda: np.cumsum(xi, out=oi), r),
        "_device": "host CPU",
    }


_PYOPENCL = {}


def pyopencl_peer(n, sweep=False):
    """sweep: the scan runs out of place (no copy to subtract) and sum and
    dot leave their result on the device (finish, no .get()), as kiln's
    do; the single-n mode keeps its original form."""
    import pyopencl as cl
    import pyopencl.array as cla
    from pyopencl.reduction import ReductionKernel
    from pyopencl.scan import InclusiveScanKernel

    if "ctx" not in _PYOPENCL:  # one context and queue for a whole sweep
        if os.environ.get("PYOPENCL_CTX"):
            ctx = cl.create_some_context(interactive=False)
        else:
            ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
        _PYOPENCL["ctx"], _PYOPENCL["q"] = ctx, cl.CommandQueue(ctx)
    ctx, q = _PYOPENCL["ctx"], _PYOPENCL["q"]
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

    if sweep:
        # mul_add allocates its result; the sweep writes z in place, as
        # kiln's axpy does (one kernel)
        from pyopencl.elementwise import ElementwiseKernel
        axpy_k = _PYOPENCL.get("axpy_k")
        if axpy_k is None:
            axpy_k = _PYOPENCL["axpy_k"] = ElementwiseKernel(
                ctx, "float a, __global const float *x, "
                     "__global const float *y, __global float *z",
                "z[i] = a*x[i] + y[i]", "axpy")

        def axpy():  # noqa: F811 - the sweep's in-place form
            axpy_k(np.float32(2.0), x, y, z, queue=q)
            q.finish()

        def scan_out():
            scan_k(xi, oi, queue=q)
            q.finish()

        def on_device(f):
            def g():
                f()
                q.finish()
            return g

        r = runs_for(n)
        res = {
            "copy": timeit(copy, r),
            "axpy": timeit(axpy, r),
            "sum": timeit(on_device(lambda: sum_k(x, queue=q)), r),
            "dot": timeit(on_device(lambda: dot_k(x, y, queue=q)), r),
            "scan_int32": timeit(scan_out, r),
        }
        # every sweep result is checked once (the timing runs are not)
        hx, hy = x.get(), y.get()
        ok = (np.array_equal(oi.get(), np.cumsum(xi.get(), dtype=np.int32))
              and np.allclose(z.get(), 2 * hx + hy, rtol=1e-6)
              and abs(float(sum_k(x, queue=q).get()) - float(hx.sum(
                  dtype=np.float64))) <= 1e-4 * abs(float(hx.sum())) + 1e-3)
        if not ok:
            raise RuntimeError(f"PyOpenCL gave a wrong result at n = {n}")
        res["_device"] = ctx.devices[0].name
        return res
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


def cupy_peer(n, sweep=False):
    import cupy as cp
    x = (cp.arange(n) % 1000).astype(cp.float32) * cp.float32(0.001)
    y = cp.ones(n, cp.float32)
    z = cp.empty_like(x)
    xi = (cp.arange(n) % 7).astype(cp.int32)
    oi = cp.empty_like(xi)

    walls = {}

    def ev(f, op):
        dev, walls[op] = events_times(f, cp.cuda.Event,
                                      cp.cuda.get_elapsed_time,
                                      cp.cuda.Stream.null.synchronize,
                                      runs_for(n) if sweep else RUNS)
        return dev

    axpy_k = cp.ElementwiseKernel("float32 a, float32 x, float32 y",
                                  "float32 z", "z = a*x + y", "axpy")
    res = {
        "copy": ev(lambda: cp.copyto(z, x), "copy"),
        "axpy": ev(lambda: axpy_k(cp.float32(2), x, y, z), "axpy"),
        "sum": ev(lambda: x.sum(), "sum"),
        "dot": ev(lambda: cp.dot(x, y), "dot"),
        "scan_int32": ev(lambda: cp.cumsum(xi, out=oi), "scan_int32"),
    }
    res["_wall"] = walls
    res["_device"] = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    return res


def torch_peer(n, sweep=False):
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

    walls = {}

    def ev(f, op):
        dev, walls[op] = events_times(
            f, lambda: torch.cuda.Event(enable_timing=True),
            lambda a, b: a.elapsed_time(b), torch.cuda.synchronize,
            runs_for(n) if sweep else RUNS)
        return dev

    res = {
        "copy": ev(lambda: z.copy_(x), "copy"),
        "axpy": ev(lambda: torch.add(y, x, alpha=2, out=z), "axpy"),
        "sum": ev(lambda: x.sum(), "sum"),
        "dot": ev(lambda: torch.dot(x, y), "dot"),
        # int32 in, int32 out (torch's default for integer cumsum is int64)
        "scan_int32": ev(lambda: torch.cumsum(xi, 0, dtype=torch.int32,
                                              out=oi), "scan_int32"),
    }
    res["_wall"] = walls
    res["_device"] = torch.cuda.get_device_name(0)
    return res


BYTES = {"copy": 8, "axpy": 12, "sum": 4, "dot": 8, "scan_int32": 8}
OPS = ["copy", "axpy", "sum", "dot", "scan_int32"]


def frac(res, op):
    """% of the same run's copy bandwidth."""
    return BYTES[op] / 8 * res["copy"] / res[op] * 100


def run_kiln_sweep(path, max_n, device=None):
    """bench_algo --sweep: {op: {n: (device_s, wall_s)}} and '_device'."""
    env = dict(os.environ)
    if device:
        env["KILN_DEVICE"] = device
    cmd = [path, "--sweep"] + ([str(max_n)] if max_n else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    sys.stderr.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        print(f"bench_algo --sweep on {device or 'default device'} FAILED "
              f"(exit {proc.returncode}): {proc.stderr.strip()}",
              file=sys.stderr)
    res = {}
    for line in proc.stdout.splitlines():
        if line.startswith("SWEEP "):
            _, op, n, t, w = line.split()
            res.setdefault(op, {})[int(n)] = (float(t), float(w))
        elif line.startswith("device:"):
            res["_device"] = line
    return res


def us(t):
    return "-" if t is None else f"{t * 1e6:.1f}"


def chart(path, sizes, series):
    """series: [(label, style, {op: {n: seconds}})]; log-log, one subplot
    per op. Returns False (with a note) when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print(f"note: matplotlib not importable ({e}); chart {path} "
              "skipped", file=sys.stderr)
        return False
    fig, axes = plt.subplots(2, 3, figsize=(12, 7))
    axes = axes.ravel()
    for ax, op in zip(axes, OPS):
        for label, style, data in series:
            pts = sorted((n, t) for n, t in data.get(op, {}).items()
                         if t is not None and t > 0)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] * 1e6 for p in pts],
                        style, label=label, markersize=3)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(op)
        ax.set_xlabel("n (elements)")
        ax.set_ylabel("time per op (us)")
        ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    axes[-1].axis("off")
    axes[-1].legend(handles, labels, loc="center", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    print(f"chart written to {path}", file=sys.stderr)
    return True


def sweep_main(path, max_n, devices, wanted, chart_path):
    kilns = [(d, run_kiln_sweep(path, max_n, d)) for d in devices]
    sizes = sorted({n for op in OPS for n in kilns[0][1].get(op, {})})
    if not sizes:
        print("bench_algo --sweep gave no results", file=sys.stderr)
        return 1
    makers = {"pyopencl": ("PyOpenCL", pyopencl_peer),
              "numpy": ("NumPy", numpy_peer), "cupy": ("CuPy", cupy_peer),
              "torch": ("PyTorch", torch_peer)}
    peers = []  # (name, {n: result of the peer at n})
    for w in wanted:
        name, fn = makers[w]
        per_n = {}
        try:
            for n in sizes:
                per_n[n] = fn(n, sweep=True)
        except ImportError as e:
            print(f"{name} skipped: not importable ({e})", file=sys.stderr)
            continue
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"{name} stopped at n = {n}: {e}", file=sys.stderr)
        if per_n:
            peers.append((name, per_n))
    print(f"sweep n = {sizes[0]} .. {sizes[-1]}; time per op in "
          "microseconds (median of 11 runs, of 5 above 2^24)")
    for d, k in kilns:
        dev = k.get("_device", "").replace("device: ", "", 1)
        print(f"kiln {d or '(default device)'}: {dev}")
    for name, p in peers:
        print(f"{name} device: {next(iter(p.values())).get('_device', '?')}")
    # columns: (heading, {op: {n: seconds}}, chart style)
    cols = []
    for i, (d, k) in enumerate(kilns):
        tag = f"kiln {d}" if d else "kiln"
        mark = "os^vD"[i % 5]
        cols.append((f"{tag} device", {op: {n: tw[0] for n, tw in
                                            k.get(op, {}).items()}
                                       for op in OPS}, f"-{mark}"))
        cols.append((f"{tag} wall", {op: {n: tw[1] for n, tw in
                                          k.get(op, {}).items()}
                                     for op in OPS}, f"--{mark}"))
    for name, p in peers:
        has_dev = any("_wall" in r for r in p.values())
        mark = {"PyOpenCL": "x", "NumPy": "+", "CuPy": "*",
                "PyTorch": "P"}.get(name, ".")
        if has_dev:
            cols.append((f"{name} device (events)",
                         {op: {n: r[op] for n, r in p.items()} for op in OPS},
                         f"-{mark}"))
            cols.append((f"{name} wall",
                         {op: {n: r["_wall"][op] for n, r in p.items()}
                          for op in OPS}, f"--{mark}"))
        else:
            cols.append((f"{name} wall",
                         {op: {n: r[op] for n, r in p.items()}
                          for op in OPS}, f"--{mark}"))
    for op in OPS:
        print()
        print(f"**{op}** (us)")
        print()
        print("| n | " + " | ".join(c[0] for c in cols) + " |")
        print("|---:|" + "---:|" * len(cols))
        for n in sizes:
            row = [str(n)] + [us(c[1][op].get(n)) for c in cols]
            print("| " + " | ".join(row) + " |")
    if chart_path:
        chart(chart_path, sizes, [(c[0], c[2], c[1]) for c in cols])
    failed = any(not any(k.get(op) for op in OPS) for _, k in kilns)
    return 1 if failed else 0


def main():
    args = [a for a in sys.argv[1:]]
    sweep, max_n, chart_path = False, None, None
    if "--chart" in args:
        k = args.index("--chart")
        chart_path = args[k + 1]
        del args[k:k + 2]
    if "--sweep" in args:
        k = args.index("--sweep")
        sweep = True
        if k + 1 < len(args) and args[k + 1].isdigit():
            max_n = int(args[k + 1])
            del args[k + 1]
        del args[k]
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
    if sweep:
        return sweep_main(args[0], max_n, devices, wanted, chart_path)
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
    if os.environ.get("KILN_BENCH_VERIFY") == "last":
        print("kiln: warm-ups and the last timed run verified "
              "(KILN_BENCH_VERIFY=last: timed runs back to back)")
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
