#!/usr/bin/env python3
"""Writes tests/numpy_tables.h: NumPy's answers that tests/test_array_dtype.c
checks kiln against (issue 42, items 2-3). NumPy is a test-time dependency
only: the table is checked in, and this script regenerates it:

    python3 -m venv /tmp/np-venv && /tmp/np-venv/bin/pip install numpy
    /tmp/np-venv/bin/python scripts/gen-numpy-tables.py > tests/numpy_tables.h

Contents:
  * np_promote: np.promote_types for every pair of kiln's 14 dtypes;
  * np_weak: np.result_type(array of dtype, Python scalar) for a Python
    bool, int, float and complex (NEP 50: the scalar is weak);
  * for each dtype a set of awkward values (NaN, +-inf, +-0, the extremes,
    INT_MIN, -1, shift counts around the width) and, per element-wise
    function, NumPy's result for every value (unary) or every pair of
    values (binary, row-major: a = v[i / n], b = v[i % n]), as raw bits.

With --shapes it writes tests/numpy_shapes.h instead, NumPy's answers for
the shape logic that tests/test_prop_shapes.c checks kiln against (issue
41, item 16), random cases from a fixed seed:

    /tmp/np-venv/bin/python scripts/gen-numpy-tables.py --shapes > tests/numpy_shapes.h

  * np_bcast: np.broadcast_shapes of two shapes (rank 0..5), or an error;
  * np_view: a[s0, s1, ...] then [t0, t1, ...] (two slicings in a row,
    Python slices with negative, out-of-range and extreme bounds and
    steps) of a C-order array: shape, strides and offset in elements;
  * np_reshape: a.reshape(new) of a C-order array: ok or not, strides;
  * np_permute: a.transpose(axes) with negative, repeated and out-of-range
    axes: ok (and the kind of error), shape and strides;
  * np_axis: a.sum(axis, keepdims) with axes -ndim-2..ndim+1: ok, shape;
  * np_strided: np.lib.stride_tricks.as_strided over a buffer (strides
    negative or 0, an offset): whether every element lies inside it
    (np.lib.array_utils.byte_bounds), for kiln_array_from_buffer.

With --index-keys it writes tests/numpy_index_keys.h: a[key] and a[key] = v
for random keys mixing slices, integers and integer arrays (NumPy's
advanced indexing), which tests/test_array_index_key.c checks
kiln_array_index_key(_put) against:

    /tmp/np-venv/bin/python scripts/gen-numpy-tables.py --index-keys > tests/numpy_index_keys.h

Where NumPy raises or leaves a result undefined kiln's documented choice
is written instead (docs/api.md, "Element-wise functions"): an integer
power with a negative exponent gives the integer part of the exact result
(1 for base 1, +-1 for base -1, else 0).
"""
import sys
import warnings

import numpy as np
from numpy.lib import array_utils

warnings.simplefilter("ignore")

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
# dtypes the op tables cover (int16/uint16 behave as int8/uint8 in C's
# promotion and as int32 in width; the promotion table covers all)
OP_DTYPES = ["bool", "int8", "uint8", "int32", "uint32", "int64", "uint64",
             "float16", "float32", "float64", "complex64"]


def values(dt):
    t = np.dtype(dt)
    if t.kind == "b":
        return [False, True]
    if t.kind == "i":
        n = t.itemsize * 8
        i = np.iinfo(t)
        return [0, 1, -1, 2, -3, 7, n - 1, n, -n, int(i.min), int(i.min) + 1, int(i.max)]
    if t.kind == "u":
        n = t.itemsize * 8
        i = np.iinfo(t)
        return [0, 1, 2, 3, 7, n - 1, n, n + 1, int(i.max) - 1, int(i.max)]
    if t.kind == "c":
        nan, inf = float("nan"), float("inf")
        return [complex(0, 0), complex(-0.0, 0), complex(1, 0), complex(0, 1), complex(-2.5, 0.5),
                complex(3, -4), complex(inf, 0), complex(0, -inf), complex(nan, 0),
                complex(0, nan), complex(inf, nan), complex(1e30, 1)]
    large = {"float16": 65504.0, "float32": 3.0e38, "float64": 1.0e308}[dt]
    small = {"float16": 6.0e-8, "float32": 1.0e-30, "float64": 5.0e-324}[dt]
    return [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1.0, -1.0, 0.5, -0.75, -2.5,
            3.0, 100.25, large, small]


def bits(x, dt):
    t = np.dtype(dt)
    if isinstance(x, np.generic):
        a = np.array([x]).astype(dt)
    elif t.kind in "iu":
        a = np.array([int(x) % (1 << (8 * t.itemsize))], dtype=np.uint64).astype(dt)
    else:
        a = np.array([x], dtype=dt)
    if t.kind == "b":
        return int(a.view(np.uint8)[0])
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[t.itemsize]
    return int(a.view(u)[0])


INT = "iu"
FLOAT = "f"
BOOL = "b"
CPLX = "c"
# name: (kiln op, arity, kinds allowed, result: 'same' | 'bool', approx)
OPS = [
    ("add", "KILN_OP_ADD", 2, INT + FLOAT + CPLX, "same", 0),
    ("subtract", "KILN_OP_SUB", 2, INT + FLOAT + CPLX, "same", 0),
    ("multiply", "KILN_OP_MUL", 2, INT + FLOAT + CPLX, "same", 0),
    ("divide", "KILN_OP_DIV", 2, FLOAT, "same", 0),
    ("minimum", "KILN_OP_MIN", 2, INT + FLOAT, "same", 0),
    ("maximum", "KILN_OP_MAX", 2, INT + FLOAT, "same", 0),
    ("equal", "KILN_OP_EQ", 2, BOOL + INT + FLOAT + CPLX, "bool", 0),
    ("not_equal", "KILN_OP_NE", 2, BOOL + INT + FLOAT + CPLX, "bool", 0),
    ("less", "KILN_OP_LT", 2, INT + FLOAT, "bool", 0),
    ("less_equal", "KILN_OP_LE", 2, INT + FLOAT, "bool", 0),
    ("greater", "KILN_OP_GT", 2, INT + FLOAT, "bool", 0),
    ("greater_equal", "KILN_OP_GE", 2, INT + FLOAT, "bool", 0),
    ("power", "KILN_OP_POW", 2, INT + FLOAT + CPLX, "same", 1),
    ("floor_divide", "KILN_OP_FLOOR_DIVIDE", 2, INT + FLOAT, "same", 0),
    ("remainder", "KILN_OP_REMAINDER", 2, INT + FLOAT, "same", 0),
    ("bitwise_and", "KILN_OP_BITWISE_AND", 2, BOOL + INT, "same", 0),
    ("bitwise_or", "KILN_OP_BITWISE_OR", 2, BOOL + INT, "same", 0),
    ("bitwise_xor", "KILN_OP_BITWISE_XOR", 2, BOOL + INT, "same", 0),
    ("left_shift", "KILN_OP_LEFT_SHIFT", 2, INT, "same", 0),
    ("right_shift", "KILN_OP_RIGHT_SHIFT", 2, INT, "same", 0),
    ("logical_and", "KILN_OP_LOGICAL_AND", 2, BOOL, "bool", 0),
    ("logical_or", "KILN_OP_LOGICAL_OR", 2, BOOL, "bool", 0),
    ("logical_xor", "KILN_OP_LOGICAL_XOR", 2, BOOL, "bool", 0),
    ("arctan2", "KILN_OP_ATAN2", 2, FLOAT, "same", 1),
    ("hypot", "KILN_OP_HYPOT", 2, FLOAT, "same", 1),
    ("copysign", "KILN_OP_COPYSIGN", 2, FLOAT, "same", 0),
    ("logaddexp", "KILN_OP_LOGADDEXP", 2, FLOAT, "same", 1),
    ("negative", "KILN_OP_NEG", 1, INT + FLOAT + CPLX, "same", 0),
    ("positive", "KILN_OP_POSITIVE", 1, INT + FLOAT + CPLX, "same", 0),
    ("absolute", "KILN_OP_ABS", 1, INT + FLOAT + CPLX, "same", 1),
    ("square", "KILN_OP_SQUARE", 1, INT + FLOAT + CPLX, "same", 0),
    ("sign", "KILN_OP_SIGN", 1, INT + FLOAT + CPLX, "same", 0),
    ("sqrt", "KILN_OP_SQRT", 1, FLOAT + CPLX, "same", 1),
    ("exp", "KILN_OP_EXP", 1, FLOAT + CPLX, "same", 1),
    ("log", "KILN_OP_LOG", 1, FLOAT + CPLX, "same", 1),
    ("sin", "KILN_OP_SIN", 1, FLOAT + CPLX, "same", 1),
    ("cos", "KILN_OP_COS", 1, FLOAT + CPLX, "same", 1),
    ("tan", "KILN_OP_TAN", 1, FLOAT + CPLX, "same", 1),
    ("arcsin", "KILN_OP_ASIN", 1, FLOAT + CPLX, "same", 1),
    ("arccos", "KILN_OP_ACOS", 1, FLOAT + CPLX, "same", 1),
    ("arctan", "KILN_OP_ATAN", 1, FLOAT + CPLX, "same", 1),
    ("sinh", "KILN_OP_SINH", 1, FLOAT + CPLX, "same", 1),
    ("cosh", "KILN_OP_COSH", 1, FLOAT + CPLX, "same", 1),
    ("tanh", "KILN_OP_TANH", 1, FLOAT + CPLX, "same", 1),
    ("arcsinh", "KILN_OP_ASINH", 1, FLOAT + CPLX, "same", 1),
    ("arccosh", "KILN_OP_ACOSH", 1, FLOAT + CPLX, "same", 1),
    ("arctanh", "KILN_OP_ATANH", 1, FLOAT + CPLX, "same", 1),
    ("log1p", "KILN_OP_LOG1P", 1, FLOAT + CPLX, "same", 1),
    ("expm1", "KILN_OP_EXPM1", 1, FLOAT + CPLX, "same", 1),
    ("log2", "KILN_OP_LOG2", 1, FLOAT + CPLX, "same", 1),
    ("log10", "KILN_OP_LOG10", 1, FLOAT + CPLX, "same", 1),
    ("floor", "KILN_OP_FLOOR", 1, INT + FLOAT, "same", 0),
    ("ceil", "KILN_OP_CEIL", 1, INT + FLOAT, "same", 0),
    ("trunc", "KILN_OP_TRUNC", 1, INT + FLOAT, "same", 0),
    ("round", "KILN_OP_ROUND", 1, INT + FLOAT + CPLX, "same", 0),
    ("invert", "KILN_OP_BITWISE_INVERT", 1, BOOL + INT, "same", 0),
    ("logical_not", "KILN_OP_LOGICAL_NOT", 1, BOOL, "bool", 0),
    ("isnan", "KILN_OP_ISNAN", 1, INT + FLOAT + CPLX, "bool", 0),
    ("isinf", "KILN_OP_ISINF", 1, INT + FLOAT + CPLX, "bool", 0),
    ("isfinite", "KILN_OP_ISFINITE", 1, INT + FLOAT + CPLX, "bool", 0),
    ("signbit", "KILN_OP_SIGNBIT", 1, FLOAT, "bool", 0),
]


def int_power(a, b, dt):
    if b < 0:
        return 1 if a == 1 else (-1 if b % 2 else 1) if a == -1 else 0
    return np.power(np.array([a], dtype=dt), np.array([b], dtype=dt))[0]


def compute(name, dt, a, b=None):
    t = np.dtype(dt)
    if name == "power" and t.kind in "iu":
        return int_power(a, b, dt)
    f = getattr(np, name)  # np.round: half to even, integers as they are
    x = np.array([a], dtype=dt)
    if b is None:
        r = f(x)
    else:
        r = f(x, np.array([b], dtype=dt))
    return r[0]


def main():
    out = sys.stdout
    w = out.write
    w("/* Generated by scripts/gen-numpy-tables.py with NumPy %s: do not edit. */\n"
      % np.__version__)
    w("/* clang-format off */\n")
    w("#ifndef KILN_TESTS_NUMPY_TABLES_H\n#define KILN_TESTS_NUMPY_TABLES_H\n")
    w("#include <stdint.h>\n#include <stddef.h>\n\n")
    w('#define NP_TABLES_NUMPY_VERSION "%s"\n\n' % np.__version__)
    w("/* np.promote_types(a, b) */\n")
    w("static const struct { const char *a, *b, *r; } np_promote[] = {\n")
    for a in DTYPES:
        for b in DTYPES:
            w('    { "%s", "%s", "%s" },\n' % (a, b, np.promote_types(a, b).name))
    w("};\n\n")
    w("/* np.result_type(np.empty(0, a), scalar) for a Python scalar of kind s:\n"
      " * 'b' bool, 'i' int, 'f' float, 'c' complex (NEP 50) */\n")
    w("static const struct { const char *a; char s; const char *r; } np_weak[] = {\n")
    for a in DTYPES:
        for s, v in (("b", True), ("i", 1), ("f", 1.0), ("c", 1j)):
            w('    { "%s", \'%s\', "%s" },\n' % (a, s, np.result_type(np.empty(0, a), v).name))
    w("};\n\n")
    for dt in OP_DTYPES:
        vs = values(dt)
        w("static const uint64_t np_vals_%s[] = {" % dt)
        w(", ".join("0x%xull" % bits(v, dt) for v in vs))
        w("};\n")
    w("\n")
    cases = []
    for name, kop, arity, kinds, res, approx in OPS:
        for dt in OP_DTYPES:
            if np.dtype(dt).kind not in kinds:
                continue
            vs = values(dt)
            rs = []
            if arity == 1:
                rs = [compute(name, dt, v) for v in vs]
            else:
                rs = [compute(name, dt, a, b) for a in vs for b in vs]
            odt = "bool" if res == "bool" else dt
            if name == "absolute" and np.dtype(dt).kind == "c":
                odt = {"complex64": "float32", "complex128": "float64"}[dt]
            arr = "np_z_%s_%s" % (name, dt)
            w("static const uint64_t %s[] = {" % arr)
            w(", ".join("0x%xull" % bits(r, odt) for r in rs))
            w("};\n")
            # abs is exact but for complex (a hypot)
            ap = 0 if name == "absolute" and np.dtype(dt).kind != "c" else approx
            cases.append('    { "%s", %s, %d, "%s", "%s", %d, np_vals_%s, %d, %s },\n'
                         % (name, kop, arity, dt, odt, ap, dt, len(vs), arr))
    w("\ntypedef struct np_case {\n"
      "    const char *name; /* NumPy's name */\n"
      "    int op;           /* kiln's kiln_binary_op or kiln_unary_op */\n"
      "    int arity;\n"
      "    const char *dtype, *out_dtype;\n"
      "    int approx; /* 1: a libm function (compared within ulps) */\n"
      "    const uint64_t *vals;\n"
      "    size_t nvals;\n"
      "    const uint64_t *z; /* nvals results, or nvals^2 for arity 2 */\n"
      "} np_case;\n\n")
    w("static const np_case np_cases[] = {\n")
    for c in cases:
        w(c)
    w("};\n\n#endif\n/* clang-format on */\n")


# ---- the shape logic (--shapes) ------------------------------------------

PMAX, PMIN = 2**63 - 1, -2**63


def c_int(v):
    if v == PMAX:
        return "PTRDIFF_MAX"
    if v == PMIN:
        return "PTRDIFF_MIN"
    return "%d" % v


def c_list(vs, n, conv=str):
    vs = list(vs) + [0] * (n - len(vs))
    return "{ " + ", ".join(conv(v) for v in vs) + " }"


def rand_shape(rng, lo=0, hi=5, dims=(0, 1, 1, 2, 3, 5, 7)):
    nd = int(rng.integers(lo, hi + 1))
    return [int(rng.choice(dims)) for _ in range(nd)]


def rand_slice(rng, n):
    pick = int(rng.integers(0, 10))
    if pick == 0:
        return (0, PMAX, 1)  # KILN_SLICE_ALL
    if pick == 1:
        return (PMAX, PMIN, -1)  # KILN_SLICE_REVERSED
    ends = [PMAX, PMIN, 0, 1, -1, n, -n, n + 3, -n - 3, 2, -2]
    start = int(rng.choice(ends)) if rng.random() < 0.4 else int(rng.integers(-n - 2, n + 3))
    stop = int(rng.choice(ends)) if rng.random() < 0.4 else int(rng.integers(-n - 2, n + 3))
    step = int(rng.choice([1, 1, 2, 3, -1, -1, -2, -3, 7, -7, PMAX, PMIN + 1]))
    return (start, stop, step)


def elem_strides(a):
    return [st // a.itemsize for st in a.strides]


def elem_offset(a, base):
    return (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // a.itemsize


def slices_c(sls):
    body = ", ".join("{ %s, %s, %s }" % (c_int(x.start), c_int(x.stop), c_int(x.step)) for x in sls)
    pad = ", ".join(["{ 0, 0, 0 }"] * (4 - len(sls)))
    return "{ " + ", ".join(x for x in (body, pad) if x) + " }"


def emit(w, rows, per_line=25):
    """The entries, many to a line (scripts/check-duplicates.py compares
    lines: one entry per line would repeat there)."""
    for i in range(0, len(rows), per_line):
        w("    " + ", ".join(rows[i:i + per_line]) + ",\n")
    w("};\n\n")


def shapes_bcast(rng, w):
    w("/* np.broadcast_shapes(a, b); ok 0: ValueError */\n")
    w("static const struct { unsigned na; size_t a[5]; unsigned nb; size_t b[5]; int ok;"
      " unsigned nr; size_t r[5]; } np_bcast[] = {\n")
    rows = []
    for _ in range(1500):
        a = rand_shape(rng, dims=(0, 1, 1, 1, 2, 3))
        b = rand_shape(rng, dims=(0, 1, 1, 1, 2, 3))
        if rng.random() < 0.5 and a:  # many that broadcast
            b = [x if rng.random() < 0.6 else 1 for x in a[int(rng.integers(0, len(a) + 1)):]]
        try:
            r, ok = list(np.broadcast_shapes(tuple(a), tuple(b))), 1
        except ValueError:
            r, ok = [], 0
        rows.append("{ %d, %s, %d, %s, %d, %d, %s }" % (len(a), c_list(a, 5), len(b), c_list(b, 5), ok,
                                                  len(r), c_list(r, 5)))
    emit(w, rows)


def shapes_view(rng, w):
    w("/* a = np.empty(shape) (C order); v = a[s][t] (each a tuple of slices, one\n"
      " * per dimension: start, stop, step); v's shape, strides and offset in\n"
      " * elements (offset 0 when v is empty) */\n")
    w("static const struct { unsigned nd; size_t shape[4]; ptrdiff_t s[4][3], t[4][3];"
      " size_t vshape[4]; ptrdiff_t vstrides[4]; size_t voffset; } np_view[] = {\n")
    rows = []
    for _ in range(1200):
        shape = rand_shape(rng, 1, 4, dims=(0, 1, 2, 3, 4, 5, 8, 13))
        base = np.empty(shape, dtype=np.float32)
        ss = tuple(slice(*rand_slice(rng, n)) for n in shape)
        v1 = base[ss]
        ts = tuple(slice(*rand_slice(rng, n)) for n in v1.shape)
        v = v1[ts]
        off = elem_offset(v, base) if v.size else 0
        rows.append("{ %d, %s, %s, %s, %s, %s, %d }" % (
            len(shape), c_list(shape, 4), slices_c(ss), slices_c(ts), c_list(v.shape, 4),
            c_list(elem_strides(v), 4), off))
    emit(w, rows)


def shapes_reshape(rng, w):
    w("/* np.empty(shape).reshape(new); ok 0: ValueError; strides in elements */\n")
    w("static const struct { unsigned nd; size_t shape[5]; unsigned nn; size_t nshape[5]; int ok;"
      " ptrdiff_t strides[5]; } np_reshape[] = {\n")
    rows = []
    for _ in range(600):
        shape = rand_shape(rng, 0, 5, dims=(0, 1, 2, 3, 4, 6))
        if rng.random() < 0.6:  # a factorisation of the same size
            left, new = int(np.prod(shape)), []
            for _ in range(int(rng.integers(0, 5))):
                d = int(rng.choice([x for x in (1, 2, 3, 4, 6) if left % x == 0] or [1]))
                new.append(d)
                left //= d
            if left != 1 or not new:
                new.append(left)
        else:
            new = rand_shape(rng, 0, 5, dims=(0, 1, 2, 3, 4, 6))
        try:
            r, ok = np.empty(shape, dtype=np.float32).reshape(new), 1
            st = elem_strides(r)
        except ValueError:
            ok, st = 0, []
        rows.append("{ %d, %s, %d, %s, %d, %s }" % (len(shape), c_list(shape, 5), len(new),
                                              c_list(new, 5), ok, c_list(st, 5)))
    emit(w, rows)


def shapes_permute(rng, w):
    w("/* np.empty(shape).transpose(axes); ok: 1, or 0 for AxisError (an axis out\n"
      " * of range), -1 for ValueError (a repeated axis) */\n")
    w("static const struct { unsigned nd; size_t shape[5]; int axes[5]; int ok; size_t pshape[5];"
      " ptrdiff_t pstrides[5]; } np_permute[] = {\n")
    rows = []
    for _ in range(600):
        shape = rand_shape(rng, 1, 5, dims=(1, 2, 3, 4, 5))
        nd = len(shape)
        axes = [int(x) for x in rng.permutation(nd)]
        axes = [x - nd if rng.random() < 0.4 else x for x in axes]
        if rng.random() < 0.25:
            axes[int(rng.integers(0, nd))] = int(rng.choice([nd, -nd - 1, nd + 3]))
        if rng.random() < 0.2 and nd > 1:
            axes[0] = axes[1] if rng.random() < 0.5 else axes[1] - (nd if axes[1] >= 0 else -nd)
        try:
            p = np.empty(shape, dtype=np.float32).transpose(axes)
            ok, ps, pst = 1, list(p.shape), elem_strides(p)
        except np.exceptions.AxisError:
            ok, ps, pst = 0, [], []
        except ValueError:
            ok, ps, pst = -1, [], []
        rows.append("{ %d, %s, %s, %d, %s, %s }" % (nd, c_list(shape, 5), c_list(axes, 5), ok,
                                              c_list(ps, 5), c_list(pst, 5)))
    emit(w, rows)


def shapes_axis(rng, w):
    w("/* np.zeros(shape).sum(axis=axis, keepdims=k); ok 0: AxisError */\n")
    w("static const struct { unsigned nd; size_t shape[4]; int axis, keepdims, ok; unsigned rn;"
      " size_t rshape[4]; } np_axis[] = {\n")
    rows = []
    for _ in range(160):
        shape = rand_shape(rng, 1, 4, dims=(0, 1, 2, 3, 5))
        nd = len(shape)
        axis = int(rng.integers(-nd - 2, nd + 2))
        k = int(rng.integers(0, 2))
        try:
            r = np.sum(np.zeros(shape, dtype=np.float32), axis=axis, keepdims=bool(k))
            ok, rs = 1, list(np.shape(r))
        except np.exceptions.AxisError:
            ok, rs = 0, []
        rows.append("{ %d, %s, %d, %d, %d, %d, %s }" % (nd, c_list(shape, 4), axis, k, ok, len(rs),
                                                  c_list(rs, 4)))
    emit(w, rows, 40)


def shapes_strided(rng, w):
    w("/* as_strided(a buffer of bufsize bytes from offset bytes in, shape, strides\n"
      " * in elements of itemsize bytes): inside 1 if every element lies within\n"
      " * the buffer (by np.lib.array_utils.byte_bounds), else 0 */\n")
    w("static const struct { unsigned nd; size_t shape[4]; ptrdiff_t strides[4]; size_t itemsize,"
      " offset, bufsize; int inside; } np_strided[] = {\n")
    rows = []
    for _ in range(800):
        shape = rand_shape(rng, 1, 4, dims=(0, 1, 2, 3, 5, 7))
        nd = len(shape)
        item = int(rng.choice([1, 2, 4, 8, 16]))
        strides = [int(rng.choice([0, 1, -1, 2, -2, 3, 5, -7, 8, 12, -13, 40])) for _ in shape]
        buf_elems = int(rng.integers(0, 120))
        off_elems = int(rng.integers(0, buf_elems + 3)) if rng.random() < 0.8 else 0
        bufsize, offset = buf_elems * item, off_elems * item
        if int(np.prod(shape)) == 0:
            inside = 1 if offset <= bufsize else 0
        else:
            # as_strided over a scratch buffer with room on both sides, then
            # byte_bounds measured from the start of the kiln buffer
            pad = 4096 * item
            scratch = np.zeros(2 * pad + bufsize + 16, dtype=np.uint8)
            v = np.lib.stride_tricks.as_strided(scratch[pad + offset:], shape=shape,
                                                strides=[st * item for st in strides])
            lo, hi = array_utils.byte_bounds(v)  # hi: one past the last byte of a 1-byte view
            base = scratch.__array_interface__["data"][0] + pad
            lo, hi = lo - base, hi - base + (item - 1)
            inside = 1 if lo >= 0 and hi <= bufsize else 0
        rows.append("{ %d, %s, %s, %d, %d, %d, %d }" % (nd, c_list(shape, 4), c_list(strides, 4), item,
                                                  offset, bufsize, inside))
    emit(w, rows)


def table_header(w, flag, guard, prefix):
    """The opening of a generated header: who made it, the include guard,
    and the NumPy version as PREFIX_NUMPY_VERSION."""
    w("/* Generated by scripts/gen-numpy-tables.py %s with NumPy %s: do not edit. */\n"
      % (flag, np.__version__))
    w("/* clang-format off */\n")
    w("#ifndef KILN_TESTS_%s_H\n#define KILN_TESTS_%s_H\n" % (guard, guard))
    w("#include <stddef.h>\n#include <stdint.h>\n\n")
    w('#define %s_NUMPY_VERSION "%s"\n\n' % (prefix, np.__version__))


def main_shapes():
    rng = np.random.default_rng(41)
    w = sys.stdout.write
    table_header(w, "--shapes", "NUMPY_SHAPES", "NP_SHAPES")
    for part in (shapes_bcast, shapes_view, shapes_reshape, shapes_permute, shapes_axis,
                 shapes_strided):
        part(rng, w)
    w("#endif\n/* clang-format on */\n")


# ---- mixed index keys (--index-keys) --------------------------------------

def index_key_case(rng):
    """A random key of slices, integers and integer arrays for a random
    shape: (shape, keys) with keys as ("s", (start, stop, step)),
    ("i", int) or ("a", index array)."""
    shape = rand_shape(rng, 1, 4, dims=(0, 1, 2, 3, 4))
    nk = int(rng.integers(0, len(shape) + 1))
    bshape = rand_shape(rng, 0, 2, dims=(1, 2, 3))
    keys = []
    for d in range(nk):
        n = shape[d]
        pick = int(rng.integers(0, 3))
        bad = rng.random() < 0.05
        if pick == 0:
            keys.append(("s", rand_slice(rng, n)))
        elif pick == 1:
            v = int(rng.integers(-n, n)) if n and not bad else int(rng.choice([n, -n - 1]))
            keys.append(("i", v))
        else:
            ish = [x if rng.random() < 0.6 else 1 for x in bshape[int(rng.integers(0, len(bshape) + 1)):]]
            lo, hi = (-n, n) if n and not bad else (n, n + 2)
            keys.append(("a", rng.integers(lo, hi, size=ish).astype(np.int64)))
    return shape, keys


def main_index_keys():
    rng = np.random.default_rng(42)
    w = sys.stdout.write
    table_header(w, "--index-keys", "NUMPY_INDEX_KEYS", "NP_INDEX_KEYS")
    cases, ivals, rvals = [], [], []
    for _ in range(400):
        shape, keys = index_key_case(rng)
        a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        key = tuple(slice(*k[1]) if k[0] == "s" else k[1] for k in keys)
        try:
            r = a[key] if keys else a[()]
            r = np.asarray(r)
            put = np.zeros(shape, dtype=np.int64)
            put[key if keys else ()] = np.arange(1, r.size + 1, dtype=np.int64).reshape(r.shape)
            ok = 1
        except IndexError:
            r, put, ok = np.zeros(0, np.int64), np.zeros(0, np.int64), 0
        kinds, sl, ints, ind, ish, ioff = [], [], [], [], [], []
        for k in keys:
            kinds.append({"s": 0, "i": 1, "a": 2}[k[0]])
            sl.append(k[1] if k[0] == "s" else (0, 0, 0))
            ints.append(k[1] if k[0] == "i" else 0)
            arr = k[1] if k[0] == "a" else np.zeros(0, np.int64)
            ind.append(arr.ndim if k[0] == "a" else 0)
            ish.append(list(arr.shape) if k[0] == "a" else [])
            ioff.append(len(ivals))
            ivals.extend(int(x) for x in arr.reshape(-1)) if k[0] == "a" else None
        sls = "{ " + ", ".join("{ %s, %s, %s }" % tuple(c_int(x) for x in t) for t in sl + [(0, 0, 0)] * (4 - len(sl))) + " }"
        cases.append("{ %d, %s, %d, %s, %s, %s, %s, { %s }, %s, %d, %d, %s, %d }" % (
            len(shape), c_list(shape, 4), len(keys), c_list(kinds, 4), sls, c_list(ints, 4), c_list(ind, 4),
            ", ".join(c_list(x, 2) for x in ish + [[]] * (4 - len(ish))), c_list(ioff, 4), ok, r.ndim,
            c_list(r.shape, 8), len(rvals)))
        rvals.extend(int(x) for x in r.reshape(-1))
        rvals.extend(int(x) for x in put.reshape(-1))
    w("/* a = np.arange(size).reshape(shape) (int64); r = a[key] with key's entries\n"
      " * a slice (kind 0: start, stop, step), an integer (1) or an integer array\n"
      " * (2: ndim, shape, its values at np_key_ivals[ioff]); ok 0: IndexError.\n"
      " * np_key_rvals[roff] holds r (C order), then a zero array of a's shape\n"
      " * after z[key] = arange(1, r.size + 1).reshape(r.shape) */\n")
    w("static const struct { unsigned nd; size_t shape[4]; unsigned nk; int kind[4];"
      " ptrdiff_t slice[4][3]; int64_t integer[4]; unsigned ind[4]; size_t ishape[4][2];"
      " size_t ioff[4]; int ok; unsigned rnd; size_t rshape[8]; size_t roff; } np_key[] = {\n")
    emit(w, cases, per_line=4)
    w("static const int64_t np_key_ivals[] = {\n")
    emit(w, [str(v) for v in ivals] or ["0"], per_line=30)
    w("static const int64_t np_key_rvals[] = {\n")
    emit(w, [str(v) for v in rvals] or ["0"], per_line=30)
    w("#endif\n/* clang-format on */\n")


if "--shapes" in sys.argv[1:]:
    main_shapes()
elif "--index-keys" in sys.argv[1:]:
    main_index_keys()
else:
    main()
