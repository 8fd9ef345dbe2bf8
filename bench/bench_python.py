#!/usr/bin/env python3
"""Per-call overhead of kiln's Python binding against kiln's C API, on the
same device in one run (KILN_DEVICE picks it).

    python bench/bench_python.py [--launches N] [--adds N] [--rounds R]

1. Empty kernel launch with 3 arguments (a buffer, an int, a float), as
   bench/bench_launch.c: N launches without waiting, one finish; from
   Python (kernel(queue, global, None, buf, 3, 1.5), which returns an
   Event as PyOpenCL's does) and from C (kiln_kernel_launch, no event, and
   with an event released at once, the Python call's C work).
2. c = a + b on 1024 float32: N calls, one finish at the end; from Python
   (the operator: a new array each call) and from C (kiln_array_empty +
   kiln_array_binary_out + kiln_array_release).
3. Large operations, 2^24 float32 (--big): c = a + b and kiln.sort(a)
   against the same C calls (kiln_array_binary_out into a new array,
   kiln_array_sort), a few calls and one finish each (issue 44: within 5%).
The C side is a small shared library compiled here against the installed
package's header and libkiln (kiln.get_include(), kiln.get_library_dir())
and called through ctypes on the Python side's own queue, kernel and
arrays (int_ptr), so both run the same library, context and memory pool. Rounds interleave Python and C; the
figures are medians over rounds, in microseconds per call. PyOpenCL's
launch is measured beside them when pyopencl is importable.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import kiln

KERNEL = "KILN_KERNEL void empty3(KILN_GLOBAL float *x, int n, float s) { }\n"

C_SOURCE = r"""
#include <kiln.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + t.tv_nsec * 1e-9; }
/* us per launch; -1 on failure. event: 0 none, 1 made and released */
double c_launch(kiln_queue *q, kiln_kernel *k, kiln_array *buf, long n, size_t g, int event) {
    kiln_arg args[3] = { KILN_ARG_BUF(kiln_array_buffer(buf)), KILN_ARG_I32(3), KILN_ARG_F32(1.5f) };
    for (int i = 0; i < 200; i++)
        if (kiln_kernel_launch(q, k, 1, &g, NULL, 3, args, 0, NULL, NULL)) return -1;
    if (kiln_queue_finish(q)) return -1;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        kiln_event *e = NULL;
        if (kiln_kernel_launch(q, k, 1, &g, NULL, 3, args, 0, NULL, event ? &e : NULL)) return -1;
        kiln_event_release(e);
    }
    if (kiln_queue_finish(q)) return -1;
    return (now() - t0) / n * 1e6;
}
/* c = a + b: kiln_array_empty + kiln_array_binary_out + kiln_array_release;
 * keep: the previous c is released after the next one is made, as
 * Python's `c = a + b` does */
double c_add(kiln_queue *q, kiln_array *a, kiln_array *b, long n, int keep) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t shape = kiln_array_size(a);
    for (int i = 0; i < 200; i++) {
        kiln_array *c;
        if (kiln_array_empty(ctx, KILN_FLOAT32, 1, &shape, &c)) return -1;
        if (kiln_array_binary_out(q, KILN_OP_ADD, c, a, b, 0, NULL, NULL)) return -1;
        kiln_array_release(c);
    }
    if (kiln_queue_finish(q)) return -1;
    double t0 = now();
    kiln_array *prev = NULL;
    for (long i = 0; i < n; i++) {
        kiln_array *c;
        if (kiln_array_empty(ctx, KILN_FLOAT32, 1, &shape, &c)) return -1;
        if (kiln_array_binary_out(q, KILN_OP_ADD, c, a, b, 0, NULL, NULL)) return -1;
        if (keep) {
            kiln_array_release(prev);
            prev = c;
        } else {
            kiln_array_release(c);
        }
    }
    kiln_array_release(prev);
    if (kiln_queue_finish(q)) return -1;
    return (now() - t0) / n * 1e6;
}
/* sorted copies of a (kiln_array_sort, a new array each call) */
double c_sort(kiln_queue *q, kiln_array *a, long n) {
    for (int i = 0; i < 2; i++) {
        kiln_array *r;
        if (kiln_array_sort(q, a, NULL, 0, NULL, NULL, &r)) return -1;
        kiln_array_release(r);
    }
    if (kiln_queue_finish(q)) return -1;
    double t0 = now();
    kiln_array *prev = NULL;
    for (long i = 0; i < n; i++) {
        kiln_array *r;
        if (kiln_array_sort(q, a, NULL, 0, NULL, NULL, &r)) return -1;
        kiln_array_release(prev);
        prev = r;
    }
    kiln_array_release(prev);
    if (kiln_queue_finish(q)) return -1;
    return (now() - t0) / n * 1e6;
}
"""


def build_c(tmp):
    """The C side as a shared library loaded into this process: it runs on
    the same queue, context and memory pool as the Python side."""
    import ctypes

    src = os.path.join(tmp, "bench_c.c")
    so = os.path.join(tmp, "libbench_c.so")
    with open(src, "w") as f:
        f.write(C_SOURCE)
    lib = kiln.get_library_dir()
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-O2", "-std=c11", "-D_GNU_SOURCE", "-shared", "-fPIC", src, "-o", so, "-I", kiln.get_include(),
                    "-L", lib, "-lkiln", f"-Wl,-rpath,{lib}"], check=True)
    L = ctypes.CDLL(so)  # calls release the GIL
    vp, sz = ctypes.c_void_p, ctypes.c_size_t
    L.c_launch.argtypes = [vp, vp, vp, ctypes.c_long, sz, ctypes.c_int]
    L.c_launch.restype = ctypes.c_double
    L.c_add.argtypes = [vp, vp, vp, ctypes.c_long, ctypes.c_int]
    L.c_add.restype = ctypes.c_double
    L.c_sort.argtypes = [vp, vp, ctypes.c_long]
    L.c_sort.restype = ctypes.c_double
    return L


def checked(v):
    if v < 0:
        raise RuntimeError("the C side failed")
    return v


def py_launch(q, knl, buf, n, g=1):
    for _ in range(200):
        knl(q, g, None, buf, 3, 1.5)
    q.finish()
    t0 = time.perf_counter()
    for _ in range(n):
        knl(q, g, None, buf, 3, 1.5)
    q.finish()
    return (time.perf_counter() - t0) / n * 1e6


def py_add(q, a, b, n):
    for _ in range(200):
        c = a + b
    q.finish()
    t0 = time.perf_counter()
    for _ in range(n):
        c = a + b
    q.finish()
    del c
    return (time.perf_counter() - t0) / n * 1e6


def py_sort(q, a, n):
    for _ in range(2):
        c = kiln.sort(a)
    q.finish()
    t0 = time.perf_counter()
    for _ in range(n):
        c = kiln.sort(a)
    q.finish()
    del c
    return (time.perf_counter() - t0) / n * 1e6


def pyopencl_launch(n):
    try:
        import pyopencl as cl
    except ImportError:
        return None
    ctx = cl.create_some_context(interactive=False)
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, "__kernel void empty3(__global float *x, int n, float s) { }").build()
    k = prg.empty3
    k.set_scalar_arg_dtypes([None, np.int32, np.float32])
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096)
    for _ in range(200):
        k(q, (1,), None, buf, 3, 1.5)
    q.finish()
    t0 = time.perf_counter()
    for _ in range(n):
        k(q, (1,), None, buf, 3, 1.5)
    q.finish()
    return (time.perf_counter() - t0) / n * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=20000)
    ap.add_argument("--adds", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--big", type=int, default=0, help="calls of the 2^24 operations (0: left out)")
    ap.add_argument("--json", help="write the medians here")
    args = ap.parse_args()

    q = kiln.get_default_queue()
    dev = q.device.info()
    prg = kiln.Program(q.context, KERNEL).build()
    knl = prg.empty3
    buf = kiln.empty(1024, np.float32, queue=q)
    a = kiln.zeros(1024, np.float32, queue=q)
    b = kiln.zeros(1024, np.float32, queue=q)
    a0 = kiln.zeros(0, np.float32, queue=q)
    b0 = kiln.zeros(0, np.float32, queue=q)
    if args.big:
        rng = np.random.default_rng(1)
        big_a = kiln.asarray(rng.random(1 << 24, dtype=np.float32), queue=q)
        big_b = kiln.asarray(rng.random(1 << 24, dtype=np.float32), queue=q)
    res = {k: [] for k in ("py_launch", "c_launch", "c_launch_event", "py_add", "c_add",
                           "pyopencl_launch", "py_launch0", "c_launch0", "py_add0", "c_add0", "c_add_keep",
                           "py_add_big", "c_add_big", "py_sort_big", "c_sort_big")}
    with tempfile.TemporaryDirectory() as tmp:
        L = build_c(tmp)
        qp, kp, bp = q.int_ptr, knl.int_ptr, buf.int_ptr
        for _ in range(args.rounds):
            res["py_launch"].append(py_launch(q, knl, buf, args.launches))
            res["c_launch"].append(checked(L.c_launch(qp, kp, bp, args.launches, 1, 0)))
            res["c_launch_event"].append(checked(L.c_launch(qp, kp, bp, args.launches, 1, 1)))
            res["py_add"].append(py_add(q, a, b, args.adds))
            res["c_add"].append(checked(L.c_add(qp, a.int_ptr, b.int_ptr, args.adds, 0)))
            res["c_add_keep"].append(checked(L.c_add(qp, a.int_ptr, b.int_ptr, args.adds, 1)))
            res["py_launch0"].append(py_launch(q, knl, buf, args.launches, 0))
            res["c_launch0"].append(checked(L.c_launch(qp, kp, bp, args.launches, 0, 1)))
            res["py_add0"].append(py_add(q, a0, b0, args.adds))
            res["c_add0"].append(checked(L.c_add(qp, a0.int_ptr, b0.int_ptr, args.adds, 1)))
            if args.big:
                res["py_add_big"].append(py_add(q, big_a, big_b, args.big))
                res["c_add_big"].append(checked(L.c_add(qp, big_a.int_ptr, big_b.int_ptr, args.big, 1)))
                res["py_sort_big"].append(py_sort(q, big_a, args.big))
                res["c_sort_big"].append(checked(L.c_sort(qp, big_a.int_ptr, args.big)))
            p = pyopencl_launch(args.launches)
            if p is not None:
                res["pyopencl_launch"].append(p)
    med = {k: statistics.median(v) for k, v in res.items() if v}
    print(f"device: {dev['id']} {dev['name']} ({dev['platform']}); {args.rounds} interleaved rounds, medians")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, kiln {kiln.__version__}")
    print(f"empty kernel, 3 args, {args.launches} launches + finish (us per launch):")
    print(f"  kiln Python  knl(q, 1, None, buf, 3, 1.5) -> Event   {med['py_launch']:8.3f}")
    print(f"  kiln C       kiln_kernel_launch, event released      {med['c_launch_event']:8.3f}")
    print(f"  kiln C       kiln_kernel_launch, no event            {med['c_launch']:8.3f}")
    print(f"  Python - C (with event)                              {med['py_launch'] - med['c_launch_event']:8.3f}")
    if "pyopencl_launch" in med:
        print(f"  PyOpenCL     knl(q, (1,), None, buf, 3, 1.5)        {med['pyopencl_launch']:8.3f}")
    else:
        print("  PyOpenCL     (not installed)")
    print(f"c = a + b, 1024 float32, {args.adds} calls + finish (us per call):")
    print(f"  kiln Python  c = a + b                               {med['py_add']:8.3f}")
    print(f"  kiln C       empty + kiln_array_binary_out + release     {med['c_add']:8.3f}")
    print(f"  kiln C       the same, previous c released after    {med['c_add_keep']:8.3f}")
    print(f"               the next is made (Python's order)")
    print(f"  Python - C (same order)                              {med['py_add'] - med['c_add_keep']:8.3f}")
    print("host path only (nothing reaches the device: global size 0, arrays of 0 elements):")
    print(f"  launch  Python {med['py_launch0']:7.3f}   C {med['c_launch0']:7.3f}   "
          f"Python - C {med['py_launch0'] - med['c_launch0']:7.3f}")
    print(f"  a + b   Python {med['py_add0']:7.3f}   C {med['c_add0']:7.3f}   "
          f"Python - C {med['py_add0'] - med['c_add0']:7.3f}")
    if args.big:
        print(f"2^24 float32, {args.big} calls + finish (us per call; Python / C):")
        for name, py, c in (("c = a + b", "py_add_big", "c_add_big"), ("kiln.sort(a)", "py_sort_big", "c_sort_big")):
            print(f"  {name:13s} Python {med[py]:10.1f}   C {med[c]:10.1f}   ratio {med[py] / med[c]:6.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": dev["id"], "medians_us": med, "rounds": res}, f, indent=1)


if __name__ == "__main__":
    main()
