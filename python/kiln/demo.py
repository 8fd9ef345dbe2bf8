"""The seeds' two workloads from Python: ``python -m kiln.demo``.

A polygon mask (which pixels of a grid lie inside a star polygon, the
even-odd rule) and the pairwise Euclidean distances of n points, each
computed with NumPy, with kiln (on the default device, or --device) and,
when it is installed, with PyOpenCL (the same kernel text through
pyopencl.elementwise on its first device), checked against each other,
timed (best of --repeat), printed as a speed-up table and written as
pictures (PNG, no plotting library needed). Beside them, as the seeds
compare: the loops in Cython with OpenMP (prange) and the same loop
bodies offloaded from Cython through kiln's C API (kiln/_demo_cython.pyx,
compiled on first use), and Numba's parallel kernels; a peer that is not
installed is named in the table with the reason.

    python -m kiln.demo [--size N] [--points N] [--repeat K] [--out DIR]
"""
import argparse
import math
import os
import struct
import sys
import time
import zlib

import numpy as np

MASK_ARGS = ("unsigned char *mask, const float *vx, const float *vy, int nv, int width, "
             "float x0, float y0, float step")
# One pixel per item: the crossing number of a ray to the right (PNPOLY).
MASK_OP = """
    float x = x0 + step * (float)(i % width), y = y0 + step * (float)(i / width);
    int inside = 0;
    for (int k = 0, j = nv - 1; k < nv; j = k++) {
        if (((vy[k] > y) != (vy[j] > y)) &&
            (x < (vx[j] - vx[k]) * (y - vy[k]) / (vy[j] - vy[k]) + vx[k]))
            inside = !inside;
    }
    mask[i] = (unsigned char)inside;
"""
DIST_ARGS = "float *d, const float *p, int npts, int dim"
DIST_OP = """
    int r = i / npts, c = i % npts;
    float s = 0.0f;
    for (int k = 0; k < dim; k++) {
        float t = p[r * dim + k] - p[c * dim + k];
        s += t * t;
    }
    d[i] = sqrt(s);
"""


def star(points=7, r_out=0.9, r_in=0.4):
    """A star polygon's vertices (float32 x, y) around the origin."""
    t = np.arange(2 * points) * math.pi / points
    r = np.where(np.arange(2 * points) % 2 == 0, r_out, r_in)
    return (r * np.cos(t)).astype(np.float32), (r * np.sin(t)).astype(np.float32)


def grid(size):
    """The pixel grid over [-1, 1]^2: origin and step."""
    step = np.float32(2.0 / size)
    return np.float32(-1.0) + step / 2, step


def mask_numpy(vx, vy, size):
    """The same even-odd rule, vectorised over pixels, one edge at a time."""
    x0, step = grid(size)
    coords = x0 + step * np.arange(size, dtype=np.float32)
    x, y = coords[None, :], coords[:, None]
    inside = np.zeros((size, size), dtype=bool)
    nv = len(vx)
    for k in range(nv):
        j = k - 1 if k else nv - 1
        with np.errstate(divide="ignore", invalid="ignore"):
            xc = (vx[j] - vx[k]) * (y - vy[k]) / (vy[j] - vy[k]) + vx[k]
        inside ^= ((vy[k] > y) != (vy[j] > y)) & (x < xc)
    return inside.astype(np.uint8)


def dist_numpy(p):
    diff = p[:, None, :] - p[None, :, :]
    return np.sqrt((diff * diff).sum(axis=-1))


def best_of(fn, repeat):
    """(result, best seconds) of repeat calls of fn."""
    best, out = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def write_png(path, pixels):
    """pixels: uint8 array (h, w) gray or (h, w, 3) RGB."""
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    h, w = pixels.shape[:2]
    colour = 2 if pixels.ndim == 3 else 0
    rows = pixels.reshape(h, -1)
    raw = b"".join(b"\x00" + rows[r].tobytes() for r in range(h))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 6)))
        f.write(chunk(b"IEND", b""))


def heat(values):
    """A distance matrix as an RGB picture: dark blue (near) to yellow (far)."""
    v = values / max(float(values.max()), 1e-30)
    r, g, b = np.clip(1.5 * v, 0, 1), v, np.clip(1 - 1.5 * v, 0, 1) * 0.6
    return (np.stack([r, g, b], axis=-1) * 255).astype(np.uint8)


def _time_pair(mask, dist, mask_out, dist_out, repeat):
    """Warms both up (compiles, builds), then (mask, distances, mask s,
    distance s) with the best of repeat calls each."""
    mask()
    dist()
    _, t_mask = best_of(mask, repeat)
    _, t_dist = best_of(dist, repeat)
    return mask_out(), dist_out(), t_mask, t_dist


def pyopencl_times(vx, vy, size, pts, repeat):
    """The kernels through PyOpenCL's ElementwiseKernel on its first device,
    or the reason it cannot run."""
    try:
        import pyopencl as cl
        import pyopencl.array as cla
        from pyopencl.elementwise import ElementwiseKernel
    except ImportError:
        return "not installed"
    try:
        ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
    except (cl.Error, IndexError):
        return "no device"
    q = cl.CommandQueue(ctx)
    x0, step = grid(size)
    points, dim = pts.shape
    mask_k = ElementwiseKernel(ctx, MASK_ARGS, MASK_OP, "demo_mask")
    dist_k = ElementwiseKernel(ctx, DIST_ARGS, DIST_OP, "demo_dist")
    dvx, dvy = cla.to_device(q, vx), cla.to_device(q, vy)
    dmask = cla.empty(q, size * size, np.uint8)
    dpts = cla.to_device(q, np.ascontiguousarray(pts.ravel()))
    ddist = cla.empty(q, points * points, np.float32)
    return _time_pair(
        lambda: mask_k(dmask, dvx, dvy, np.int32(len(vx)), np.int32(size), x0, x0, step).wait(),
        lambda: dist_k(ddist, dpts, np.int32(points), np.int32(dim)).wait(),
        lambda: dmask.get().reshape(size, size), lambda: ddist.get().reshape(points, points),
        repeat)


def cython_module():
    """kiln/_demo_cython.pyx compiled (once per source, Python and kiln
    version, kept under $KILN_CACHE_DIR or ~/.cache/kiln), or the reason
    it cannot be."""
    import hashlib
    import importlib.util
    import subprocess

    import kiln

    try:
        import Cython  # noqa: F401
        import setuptools  # noqa: F401
    except ImportError:
        return "Cython not installed"
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_demo_cython.pyx")
    text = open(src, "rb").read()
    key = hashlib.sha256(text + kiln.__version__.encode() + sys.version.encode()
                         + kiln.get_library_dir().encode()).hexdigest()[:16]
    base = os.environ.get("KILN_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                           "kiln")
    where = os.path.join(base, "demo-cython", key)
    built = [f for f in os.listdir(where) if f.endswith(".so")] if os.path.isdir(where) else []
    if not built:
        os.makedirs(where, exist_ok=True)
        with open(os.path.join(where, "_demo_cython.pyx"), "wb") as f:
            f.write(text)
        setup = (
            "from Cython.Build import cythonize\n"
            "from setuptools import Extension, setup\n"
            "import kiln\n"
            "d = kiln.get_library_dir()\n"
            "e = Extension('_demo_cython', ['_demo_cython.pyx'], include_dirs=[kiln.get_include()],"
            " library_dirs=[d], libraries=['kiln'], runtime_library_dirs=[d],"
            " extra_compile_args=['-O3', '-fopenmp'], extra_link_args=['-fopenmp'])\n"
            "setup(name='kiln-demo-cython', ext_modules=cythonize([e], quiet=True),"
            " script_args=['build_ext', '--inplace'])\n")
        r = subprocess.run([sys.executable, "-c", setup], cwd=where, capture_output=True,
                           text=True)
        built = [f for f in os.listdir(where) if f.endswith(".so")]
        if r.returncode != 0 or not built:
            return "could not be built: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    spec = importlib.util.spec_from_file_location("_demo_cython", os.path.join(where, built[0]))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cython_openmp_times(mod, vx, vy, size, pts, repeat):
    """The loops as the Cython/OpenMP seed writes them (prange, nogil)."""
    x0, step = grid(size)
    mask = np.zeros((size, size), np.uint8)
    dist = np.zeros((len(pts), len(pts)), np.float32)
    return _time_pair(lambda: mod.mask_openmp(vx, vy, mask, x0, step),
                      lambda: mod.dist_openmp(pts, dist), lambda: mask, lambda: dist, repeat)


def cython_offload_times(mod, vx, vy, size, pts, repeat, device):
    """The same loop bodies offloaded from Cython through kiln's C API (to/
    from data maps in a nogil block): each call moves its data both ways."""
    x0, step = grid(size)
    off = mod.Offload(device)
    mask = np.zeros((size, size), np.uint8)
    dist = np.zeros((len(pts), len(pts)), np.float32)
    return _time_pair(lambda: off.mask(vx, vy, mask, x0, step), lambda: off.dist(pts, dist),
                      lambda: mask, lambda: dist, repeat)


def numba_times(vx, vy, size, pts, repeat):
    """The loops as Numba kernels (njit, parallel prange), or the reason."""
    try:
        import numba
    except ImportError:
        return "not installed"

    @numba.njit(parallel=True)
    def mask_nb(vx, vy, out, x0, step):
        n, nv = out.shape[0], vx.shape[0]
        for i in numba.prange(n):
            y = x0 + step * np.float32(i)
            for j in range(n):
                x = x0 + step * np.float32(j)
                inside, m = 0, nv - 1
                for k in range(nv):
                    if ((vy[k] > y) != (vy[m] > y)) and \
                            (x < (vx[m] - vx[k]) * (y - vy[k]) / (vy[m] - vy[k]) + vx[k]):
                        inside = 1 - inside
                    m = k
                out[i, j] = inside

    @numba.njit(parallel=True)
    def dist_nb(p, out):
        n, dim = p.shape
        for i in numba.prange(n):
            for j in range(n):
                s = np.float32(0.0)
                for k in range(dim):
                    t = p[i, k] - p[j, k]
                    s += t * t
                out[i, j] = np.sqrt(s)

    x0, step = grid(size)
    mask = np.zeros((size, size), np.uint8)
    dist = np.zeros((len(pts), len(pts)), np.float32)
    return _time_pair(lambda: mask_nb(vx, vy, mask, x0, step), lambda: dist_nb(pts, dist),
                      lambda: mask, lambda: dist, repeat)


def _peers(vx, vy, size, pts, repeat, device):
    """[(name, (mask, dist, t_mask, t_dist) or the reason it did not run)]."""
    mod = cython_module()
    built = not isinstance(mod, str)
    return [
        ("Cython + OpenMP", cython_openmp_times(mod, vx, vy, size, pts, repeat) if built else mod),
        ("Cython + kiln offload",
         cython_offload_times(mod, vx, vy, size, pts, repeat, device) if built else mod),
        ("Numba (parallel)", numba_times(vx, vy, size, pts, repeat)),
        ("PyOpenCL", pyopencl_times(vx, vy, size, pts, repeat)),
    ]


def _print_table(rows, stream):
    """rows: (name, mask s, distance s, why it did not run or None)."""
    t_np_mask, t_np_dist = rows[0][1], rows[0][2]
    print(f"{'implementation':<24}{'mask ms':>10}{'x NumPy':>9}{'distances ms':>14}"
          f"{'x NumPy':>9}", file=stream)
    for name, tm, td, why in rows:
        if why:
            print(f"{name:<24}  ({why})", file=stream)
            continue
        print(f"{name:<24}{tm * 1e3:>10.3f}{t_np_mask / tm:>8.2f}x{td * 1e3:>14.3f}"
              f"{t_np_dist / td:>8.2f}x", file=stream)
    print("x NumPy: NumPy's time over the row's (above 1: faster than NumPy); best of the "
          "runs after a warm-up call (compiles and builds excluded)", file=stream)


def run(size=512, points=1024, dim=3, repeat=3, out=".", device=None, stream=sys.stdout):
    """Runs both workloads; returns a dict of results (the tests read it)."""
    import kiln

    queue = kiln.Queue(device=device) if device else kiln.get_default_queue()
    ctx = queue.context
    vx, vy = star()
    x0, step = grid(size)
    mask_k = kiln.ElementwiseKernel(ctx, MASK_ARGS, MASK_OP, "demo_mask", any_shape=True)
    dist_k = kiln.ElementwiseKernel(ctx, DIST_ARGS, DIST_OP, "demo_dist", any_shape=True)
    dvx, dvy = kiln.asarray(vx, queue=queue), kiln.asarray(vy, queue=queue)
    dmask = kiln.empty(size * size, np.uint8, queue=queue)
    rng = np.random.default_rng(12345)
    pts = rng.random((points, dim), dtype=np.float32)
    pts = pts[np.argsort(pts[:, 0], kind="stable")]  # sorted along x: the picture shows structure
    dpts = kiln.asarray(pts.ravel(), queue=queue)
    ddist = kiln.empty(points * points, np.float32, queue=queue)

    ref_mask, t_np_mask = best_of(lambda: mask_numpy(vx, vy, size), repeat)
    ref_dist, t_np_dist = best_of(lambda: dist_numpy(pts), repeat)
    got_mask, got_dist, t_kiln_mask, t_kiln_dist = _time_pair(
        lambda: mask_k(dmask, dvx, dvy, len(vx), size, x0, x0, step, queue=queue).wait(),
        lambda: dist_k(ddist, dpts, points, dim, queue=queue).wait(),
        lambda: dmask.get().reshape(size, size), lambda: ddist.get().reshape(points, points),
        repeat)
    peers = _peers(vx, vy, size, pts, repeat, device)
    # pixels on an edge may round either way: count disagreements
    mask_diff = int(np.count_nonzero(got_mask != ref_mask))
    dist_err = float(np.max(np.abs(got_dist - ref_dist))) if points else 0.0

    os.makedirs(out, exist_ok=True)
    mask_png = os.path.join(out, "polygon_mask.png")
    dist_png = os.path.join(out, "pairwise_distances.png")
    write_png(mask_png, got_mask[::-1] * 255)  # y up
    show = got_dist[: min(points, 512), : min(points, 512)]
    write_png(dist_png, heat(show) if show.size else np.zeros((1, 1), np.uint8))

    dev = queue.device.name
    print(f"kiln demo on {dev}: polygon mask {size}x{size} ({len(vx)} vertices), "
          f"pairwise distances of {points} points in {dim}-D; best of {repeat}", file=stream)
    rows = [("NumPy", t_np_mask, t_np_dist, None)]
    checks = {}
    for name, res in peers:
        if isinstance(res, str):
            rows.append((name, None, None, res))
            continue
        rows.append((name, res[2], res[3], None))
        checks[name] = (int(np.count_nonzero(res[0] != ref_mask)),
                        float(np.max(np.abs(res[1] - ref_dist))) if points else 0.0)
    rows.append(("kiln ElementwiseKernel", t_kiln_mask, t_kiln_dist, None))
    _print_table(rows, stream)
    print(f"kiln (ElementwiseKernel on {dev}) speed-up over each: "
          + ", ".join(f"{n} {tm / t_kiln_mask:.2f}x / {td / t_kiln_dist:.2f}x"
                      for n, tm, td, why in rows[:-1] if not why), file=stream)
    for name, (md, de) in checks.items():
        print(f"{name}'s check: {md} mask pixels differ from NumPy's, largest distance "
              f"difference {de:.2e}", file=stream)
    print(f"check: {mask_diff} mask pixels differ from NumPy's (edge rounding), "
          f"largest distance difference {dist_err:.2e}", file=stream)
    print(f"pictures: {mask_png}, {dist_png}", file=stream)
    times = {"numpy_mask": t_np_mask, "kiln_mask": t_kiln_mask, "numpy_dist": t_np_dist,
             "kiln_dist": t_kiln_dist}
    return {"mask": got_mask, "mask_ref": ref_mask, "mask_diff": mask_diff, "dist": got_dist,
            "dist_ref": ref_dist, "dist_err": dist_err, "pictures": [mask_png, dist_png],
            "pyopencl": checks.get("PyOpenCL"), "peers": checks,
            "skipped": {r[0]: r[3] for r in rows if r[3]}, "times": times}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m kiln.demo", description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=1024, help="mask grid side (default 1024)")
    ap.add_argument("--points", type=int, default=2048, help="points for the distances (2048)")
    ap.add_argument("--dim", type=int, default=3, help="dimensions of a point (3)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs, best kept (5)")
    ap.add_argument("--device", default=None, help="a kiln device selector (default: KILN_DEVICE)")
    ap.add_argument("--out", default=".", help="where the pictures go (.)")
    a = ap.parse_args(argv)
    if a.size < 1 or a.points < 1 or a.dim < 1 or a.repeat < 1:
        ap.error("--size, --points, --dim and --repeat must be at least 1")
    r = run(a.size, a.points, a.dim, a.repeat, a.out, a.device)
    # a wrong answer is a failure, not a picture
    bad = r["mask_diff"] > max(8, a.size // 16) or r["dist_err"] > 1e-4
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
