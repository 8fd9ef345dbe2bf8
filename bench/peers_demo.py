#!/usr/bin/env python3
"""Peer benchmark for `kiln demo`: the same workloads with the libraries a
user would pick instead of kiln, side by side in one run.

  polygon mask (24-edge polygon, even-odd rule, pixel centres):
    PyOpenCL   the seeds' naive kernel (one work-item per pixel) on the same
               OpenCL device kiln used
    NumPy      a vectorised even-odd test (one pass per edge over the image)
    CuPy       the seeds' naive kernel as a RawKernel, and the NumPy code run
               with CuPy arrays (GPU machine only)
  pairwise distances (M points x D dims):
    SciPy      scipy.spatial.distance.cdist (computes in float64)
    PyTorch    torch.cdist on the GPU (float32 and float64; GPU machine only)

Times are wall-clock medians (launch + wait, no transfers), like the Time
column of `kiln demo`, and on the GPU also device times from CUDA events
(like kiln's Device column). A peer that is not installed (or has no GPU) is
skipped and named under the table. The kiln figures come from `kiln demo --json` run on
the same machine with the same sizes. Writes a markdown table to stdout and
to bench/results/<label>-<date>.md.

usage: bench/peers_demo.py [--kiln build/kiln] [--device SEL] [--sizes 1024,8192]
                           [--points 2048] [--dims 64] [--reps 5] [--label NAME]
                           [--host-max-seconds S] [--numpy-max-size N]
                           [--kiln-json FILE (reuse a kiln demo --json output)]
"""
import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# The seeds' kernel, ported to OpenCL as in the lecture: one work-item per
# pixel running insidePolygon. Pixel centres and the tie rule are those of
# `kiln demo` (tools/kiln/demo_work.h), so the results can be compared.
NAIVE_CL = r"""
%(pragma)s
__kernel void mask_naive(__global const REAL *vx, __global const REAL *vy,
                         int n, int width, int height, __global uchar *mask)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height) return;
    REAL px = (REAL)x + (REAL)0.5, py = (REAL)y + (REAL)0.5;
    int counter = 0, inside = -1;
    for (int i = 0; i < n && inside < 0; i++) {
        int j = i + 1 == n ? 0 : i + 1;
        REAL x1 = vx[i], y1 = vy[i], x2 = vx[j], y2 = vy[j];
        if (x1 == px && y1 == py) { inside = 1; break; }
        if (py > min(y1, y2) && py <= max(y1, y2) && px <= max(x1, x2) && y1 != y2) {
            REAL xinters = (py - y1) * (x2 - x1) / (y2 - y1) + x1;
            if (x1 == x2 || px <= xinters) counter++;
        }
    }
    mask[(ulong)y * width + x] = inside == 1 ? 1 : (counter & 1);
}
"""

NAIVE_CUDA = r"""
extern "C" __global__ void mask_naive(const REAL *vx, const REAL *vy, int n,
                                      int width, int height, unsigned char *mask)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    REAL px = (REAL)x + (REAL)0.5, py = (REAL)y + (REAL)0.5;
    int counter = 0;
    for (int i = 0; i < n; i++) {
        int j = i + 1 == n ? 0 : i + 1;
        REAL x1 = vx[i], y1 = vy[i], x2 = vx[j], y2 = vy[j];
        if (x1 == px && y1 == py) { mask[(size_t)y * width + x] = 1; return; }
        if (py > min(y1, y2) && py <= max(y1, y2) && px <= max(x1, x2) && y1 != y2) {
            REAL xinters = (py - y1) * (x2 - x1) / (y2 - y1) + x1;
            if (x1 == x2 || px <= xinters) counter++;
        }
    }
    mask[(size_t)y * width + x] = counter & 1;
}
"""


def median_time(fn, reps, budget=3.0, warm=True):
    if warm:
        fn()  # warm-up (compiles, allocates)
    times, spent = [], 0.0
    while len(times) < reps and (not times or spent < budget):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        times.append(dt)
        spent += dt
    return statistics.median(times)


def gpu_times(launch, reps, lib):
    """(wall s, device s) medians of launch() on the GPU: wall around launch
    + synchronize, device from CUDA events around the launch (like kiln's
    event profiling). lib: "cupy" or "torch"."""
    if lib == "cupy":
        import cupy as cp
        ev, sync = cp.cuda.Event, cp.cuda.runtime.deviceSynchronize
        elapsed = lambda a, b: cp.cuda.get_elapsed_time(a, b) / 1e3
    else:
        import torch
        ev, sync = (lambda: torch.cuda.Event(enable_timing=True)), torch.cuda.synchronize
        elapsed = lambda a, b: a.elapsed_time(b) / 1e3
    launch()
    sync()
    walls, devs, spent = [], [], 0.0
    while len(walls) < reps and (not walls or spent < 3.0):
        a, b = ev(), ev()
        t0 = time.perf_counter()
        a.record()
        launch()
        b.record()
        b.synchronize()
        walls.append(time.perf_counter() - t0)
        devs.append(elapsed(a, b))
        spent += walls[-1]
    return statistics.median(walls), statistics.median(devs)


def star_polygon(n, size, seed=20140211):
    """Same shape as kiln demo's (not the same random stream: the peers get
    their own polygon; the time of an even-odd test depends little on it)."""
    rng = np.random.default_rng(seed)
    ang = np.sort(rng.uniform(0, 2 * np.pi, n))
    r = 0.15 + 0.35 * rng.uniform(0, 1, n)
    return 0.5 * size + r * size * np.cos(ang), 0.5 * size + r * size * np.sin(ang)


def numpy_mask(vx, vy, width, height, xp=np):
    """Even-odd rule, vectorised over the pixels: one pass per edge (xp:
    numpy, or cupy for the GPU version)."""
    dt = vx.dtype
    px = xp.arange(width, dtype=dt) + dt.type(0.5)
    py = (xp.arange(height, dtype=dt) + dt.type(0.5))[:, None]
    inside = xp.zeros((height, width), dtype=bool)
    vertex = xp.zeros((height, width), dtype=bool)
    n = len(vx)
    for i in range(n):
        j = (i + 1) % n
        x1, y1, x2, y2 = (float(v) for v in (vx[i], vy[i], vx[j], vy[j]))
        x1, y1, x2, y2 = (dt.type(v) for v in (x1, y1, x2, y2))
        vertex |= (px == x1) & (py == y1)
        if y1 == y2:
            continue
        rows = (py > min(y1, y2)) & (py <= max(y1, y2))
        if x1 != x2:
            with np.errstate(divide="ignore", invalid="ignore"):
                xinters = (py - y1) * (x2 - x1) / (y2 - y1) + x1
            c = xp.minimum(xinters, max(x1, x2))
        else:
            c = xp.full_like(py, x1)
        inside ^= rows & (px <= c)
    return (inside | vertex).astype(xp.uint8)


def run_kiln(args):
    cmd = [args.kiln, "demo", "--json", "--reps", str(args.reps),
           "--sizes", args.sizes, "--points", str(args.points),
           "--dims", str(args.dims), "--out", args.kiln_out]
    for d in args.device or []:
        cmd += ["--device", d]
    if args.host_max_seconds:
        cmd += ["--host-max-seconds", str(args.host_max_seconds)]
    print("running:", " ".join(cmd), file=sys.stderr)
    res = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if not res.stdout.strip():
        sys.exit("kiln demo printed no JSON (exit %d)" % res.returncode)
    return json.loads(res.stdout)


def pyopencl_device(kiln_id):
    import pyopencl as cl
    parts = kiln_id.split(":")
    if len(parts) == 3 and parts[0] == "opencl":
        return cl.get_platforms()[int(parts[1])].get_devices()[int(parts[2])]
    return None


def peer_pyopencl_mask(dev, size, use_double, reps):
    import pyopencl as cl
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    real = "double" if use_double else "float"
    dt = np.float64 if use_double else np.float32
    src = "#define REAL %s\n" % real + NAIVE_CL % {
        "pragma": "#pragma OPENCL EXTENSION cl_khr_fp64 : enable" if use_double else ""}
    prg = cl.Program(ctx, src).build()
    knl = cl.Kernel(prg, "mask_naive")
    vx, vy = (a.astype(dt) for a in star_polygon(24, size))
    mf = cl.mem_flags
    bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=vx)
    by = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=vy)
    out = cl.Buffer(ctx, mf.WRITE_ONLY, size * size)
    g = ((size + 15) // 16 * 16,) * 2

    def go():
        knl(q, g, (16, 16), bx, by, np.int32(24), np.int32(size), np.int32(size), out).wait()
    t = median_time(go, reps)
    host = np.empty(size * size, np.uint8)
    cl.enqueue_copy(q, host, out)
    ok = np.array_equal(host.reshape(size, size), numpy_mask(vx, vy, size, size)) if size <= 2048 else None
    return t, ok


def machine_description(kj):
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    lines = ["- host: %s, %s, %d logical CPUs (%s), Python %s, NumPy %s" % (
        socket.gethostname(), platform.platform(), os.cpu_count(), cpu,
        platform.python_version(), np.__version__)]
    for d in kj.get("devices", []):
        lines.append("- kiln device %s: %s (%s compute units, fp64 %s%s)" % (
            d["id"], d["name"], d["compute_units"], "yes" if d["fp64"] else "no",
            "; distances: " + d["pdist"] if d.get("pdist") else ""))
    lines.append("- kiln %s; OpenMP threads %s" % (kj.get("kiln_version"), kj.get("openmp_threads")))
    return lines


def cupy_mask_peers(size, reps):
    """The seeds' naive kernel as a CuPy RawKernel and the vectorised
    even-odd test in CuPy, float32 and float64: [(name, prec, wall, dev)]."""
    import cupy as cp
    out_rows = []
    hx, hy = star_polygon(24, size)
    for use_double in (False, True):
        prec = "float64" if use_double else "float32"
        dt = cp.float64 if use_double else cp.float32
        k = cp.RawKernel("#define REAL %s\n" % ("double" if use_double else "float") + NAIVE_CUDA,
                         "mask_naive")
        vx_d, vy_d = cp.asarray(hx, dtype=dt), cp.asarray(hy, dtype=dt)
        out = cp.empty(size * size, cp.uint8)
        grid = ((size + 15) // 16, (size + 15) // 16)
        launch = lambda: k(grid, (16, 16), (vx_d, vy_d, np.int32(24), np.int32(size),
                                            np.int32(size), out))
        w, dv = gpu_times(launch, reps, "cupy")
        out_rows.append(("CuPy RawKernel, seeds' naive kernel", prec, w, dv))
        # 24 passes over the image with temporaries: the NumPy code on the GPU.
        w, dv = gpu_times(lambda: numpy_mask(vx_d, vy_d, size, size, cp), min(reps, 5), "cupy")
        out_rows.append(("CuPy vectorised even-odd", prec, w, dv))
        del out
    return out_rows


def torch_cdist_peer(x, reps):
    """torch.cdist on the GPU: (wall, dev, relerr vs a float64 difference
    based reference computed by torch itself)."""
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch has no CUDA device")
    xt = torch.from_numpy(x).cuda()
    w, dv = gpu_times(lambda: torch.cdist(xt, xt), reps, "torch")
    got = torch.cdist(xt, xt).double()
    x64 = xt.double()
    ref = torch.cdist(x64, x64, compute_mode="donot_use_mm_for_euclid_dist")
    rel = float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))
    del got, ref, x64, xt
    torch.cuda.empty_cache()
    return w, dv, rel


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kiln", default=os.path.join(HERE, "..", "build", "kiln"))
    ap.add_argument("--device", action="append")
    ap.add_argument("--sizes", default="1024,8192")
    ap.add_argument("--points", type=int, default=2048)
    ap.add_argument("--dims", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--label", default=socket.gethostname())
    ap.add_argument("--kiln-out", default="out")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--host-max-seconds", type=float, default=0.0,
                    help="passed to kiln demo (estimate long serial C cases)")
    ap.add_argument("--numpy-max-size", type=int, default=4096,
                    help="skip the NumPy mask above this size (slow: 24 passes)")
    ap.add_argument("--kiln-json", help="use this kiln demo --json output instead of running kiln")
    ap.add_argument("--rows-json", help="also write the comparison rows as JSON here")
    args = ap.parse_args()

    if args.kiln_json:
        with open(args.kiln_json) as f:
            kj = json.load(f)
    else:
        kj = run_kiln(args)
    res = [r for r in kj["results"] if "error" not in r]
    skipped = []
    # (workload, case, ours, ours wall ms, ours dev ms, theirs, theirs wall ms, theirs dev ms, note)
    rows = []

    def ours(workload, case_prefix, method_prefix):
        return [r for r in res if r["workload"] == workload
                and r["case"].startswith(case_prefix) and r["method"].startswith(method_prefix)]

    def best_of(rs):
        key = lambda r: r["device_ms"] if r.get("device_ms") else r["wall_ms"]
        return min(rs, key=key) if rs else None

    have_cupy = True
    sizes = [int(v) for v in args.sizes.split(",")]
    for size in sizes:
        case = "%dx%d" % (size, size)
        fast = ours("mask", case, "kiln fast")
        omp = ours("mask", case, "OpenMP")
        best = best_of(fast)
        for r in fast:
            name = "kiln fast on " + r["device"]
            use_double = "float32" not in r["method"]
            dev = None
            try:
                dev = pyopencl_device(r["device"].split()[0])
            except Exception as e:  # pyopencl missing or device absent
                skipped.append("PyOpenCL on %s: %s" % (r["device"].split()[0], e))
            if dev is not None:
                print("PyOpenCL naive kernel %s ..." % case, file=sys.stderr)
                t, ok = peer_pyopencl_mask(dev, size, use_double, args.reps)
                rows.append(("mask", case + (" float64" if use_double else " float32"), name,
                             r["wall_ms"], r.get("device_ms"), "PyOpenCL naive kernel (same device)%s" % (
                                 "" if ok in (None, True) else " [WRONG]"), 1e3 * t, None, ""))
            for o in omp:
                rows.append(("mask", case, name, r["wall_ms"], r.get("device_ms"),
                             o["method"] + ", host (from kiln demo)", o["wall_ms"], None, ""))
        if best is None:
            continue
        bname = "kiln fast on " + best["device"]
        if size <= args.numpy_max_size:
            print("NumPy even-odd %s ..." % case, file=sys.stderr)
            vx, vy = star_polygon(24, size)
            big = size > 2048
            t = median_time(lambda: numpy_mask(vx, vy, size, size), 1 if big else min(args.reps, 3),
                            warm=not big)
            rows.append(("mask", case + " float64", bname, best["wall_ms"], best.get("device_ms"),
                         "NumPy vectorised even-odd", 1e3 * t, None, ""))
        else:
            skipped.append("NumPy mask at %s (above --numpy-max-size %d)" % (case, args.numpy_max_size))
        if have_cupy:
            try:
                print("CuPy mask %s ..." % case, file=sys.stderr)
                for nm, prec, w, dv in cupy_mask_peers(size, args.reps):
                    rows.append(("mask", case + " " + prec, bname, best["wall_ms"],
                                 best.get("device_ms"), nm, 1e3 * w, 1e3 * dv, ""))
            except Exception as e:  # no cupy, no GPU, no NVRTC
                have_cupy = False
                skipped.append("CuPy: %s: %s" % (type(e).__name__, e))

    m, d = args.points, args.dims
    try:
        from scipy.spatial.distance import cdist
    except ImportError as e:
        cdist = None
        skipped.append("SciPy cdist: %s" % e)
    have_torch = True
    rng = np.random.default_rng(1)
    x32 = rng.random((m, d), dtype=np.float32)
    for prec in ("float64", "float32"):
        case = "%dx%d %s" % (m, d, prec)
        kr = ours("pdist", case, "kiln kernel")
        if not kr:
            continue
        x = x32.astype(np.float64) if prec == "float64" else x32
        # GPU devices report two kernels: with symmetry (each off-diagonal
        # block once, written twice: the same bits) and without (every
        # block, like torch.cdist(x, x)); each gets its row against the peers.
        groups = {}
        for r in kr:
            groups.setdefault(r.get("variant", ""), []).append(r)
        bests = [best_of(g) for _, g in sorted(groups.items(), key=lambda kv: kv[0] != "symmetric")]
        tt = None
        if have_torch:
            try:
                print("torch.cdist %s ..." % case, file=sys.stderr)
                tt = torch_cdist_peer(x, args.reps)
            except Exception as e:  # no torch, no CUDA
                have_torch = False
                skipped.append("torch.cdist: %s: %s" % (type(e).__name__, e))
        ts = None
        if cdist is not None:
            print("SciPy cdist %s ..." % case, file=sys.stderr)
            ts = median_time(lambda: cdist(x, x), min(args.reps, 3))
        for best in bests:
            name = best["method"] + " on " + best["device"]
            if ts is not None:
                rows.append(("pdist", case, name, best["wall_ms"], best.get("device_ms"),
                             "SciPy cdist (float64 inside)", 1e3 * ts, None, ""))
            if tt is not None:
                w, dv, rel = tt
                rows.append(("pdist", case, name, best["wall_ms"], best.get("device_ms"),
                             "torch.cdist (CUDA)", 1e3 * w, 1e3 * dv,
                             "torch rel. error %.1e, kiln %.1e" % (rel, best["relerr"])))

    if args.rows_json:
        keys = ("workload", "case", "ours", "ours_wall_ms", "ours_dev_ms", "theirs",
                "theirs_wall_ms", "theirs_dev_ms", "note")
        with open(args.rows_json, "w") as f:
            json.dump([dict(zip(keys, r)) for r in rows], f, indent=1)
    date = datetime.date.today().isoformat()
    out = ["# kiln demo vs peers — %s, %s" % (args.label, date), ""]
    out += machine_description(kj)
    out += ["", "Times in ms: wall = median wall-clock (launch + wait, no transfers); "
            "dev = device time from events (kiln: OpenCL/CUDA profiling; CuPy/torch: "
            "CUDA events). Ratio = theirs / ours (> 1: kiln is faster), on device "
            "times where both have one, else on wall times.", "",
            "| workload | case | ours | ours wall | ours dev | theirs | theirs wall | theirs dev | ratio | note |",
            "|---|---|---|---:|---:|---|---:|---:|---:|---|"]
    fmt = lambda v: "-" if v is None else "%.4f" % v
    for w, case, on, ow, od, th, tw, td, note in rows:
        if od and td:
            ratio = "%.2fx (dev)" % (td / od)
        else:
            ratio = "%.2fx" % (tw / ow)
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            w, case, on, fmt(ow), fmt(od), th, fmt(tw), fmt(td), ratio, note))
    if skipped:
        out += ["", "Peers not run: " + "; ".join(skipped) + "."]
    out += ["", "kiln demo's own table (wall ms, device ms, speed-up over serial C):", "",
            "| workload | case | method | device | wall ms | device ms | speed-up | check |",
            "|---|---|---|---|---:|---:|---:|---|"]
    for r in kj["results"]:
        if "error" in r:
            out.append("| %s | %s | %s | %s | - | - | - | %s |" % (
                r["workload"], r["case"], r["method"], r["device"], r["error"]))
            continue
        chk = ("%d pixels differ" % r["mismatches"]) if "mismatches" in r else ("rel. error %.1e" % r["relerr"])
        out.append("| %s | %s | %s | %s | %.4f | %s | %.1fx | %s%s |" % (
            r["workload"], r["case"], r["method"], r["device"], r["wall_ms"],
            "-" if r["device_ms"] is None else "%.4f" % r["device_ms"], r["speedup"],
            "ok, " if r["ok"] else "FAIL, ", chk))
    text = "\n".join(out) + "\n"
    print(text)
    os.makedirs(args.results, exist_ok=True)
    path = os.path.join(args.results, "%s-%s.md" % (args.label, date))
    with open(path, "w") as f:
        f.write(text)
    print("wrote", path, file=sys.stderr)


if __name__ == "__main__":
    main()
