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

Where NumPy raises or leaves a result undefined kiln's documented choice
is written instead (docs/api.md, "Element-wise functions"): an integer
power with a negative exponent gives the integer part of the exact result
(1 for base 1, +-1 for base -1, else 0).
"""
import sys
import warnings

import numpy as np

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
    ("power", "KILN_OP_POW", 2, INT + FLOAT, "same", 1),
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
    ("sign", "KILN_OP_SIGN", 1, INT + FLOAT, "same", 0),
    ("sqrt", "KILN_OP_SQRT", 1, FLOAT, "same", 1),
    ("exp", "KILN_OP_EXP", 1, FLOAT, "same", 1),
    ("log", "KILN_OP_LOG", 1, FLOAT, "same", 1),
    ("sin", "KILN_OP_SIN", 1, FLOAT, "same", 1),
    ("cos", "KILN_OP_COS", 1, FLOAT, "same", 1),
    ("tan", "KILN_OP_TAN", 1, FLOAT, "same", 1),
    ("arcsin", "KILN_OP_ASIN", 1, FLOAT, "same", 1),
    ("arccos", "KILN_OP_ACOS", 1, FLOAT, "same", 1),
    ("arctan", "KILN_OP_ATAN", 1, FLOAT, "same", 1),
    ("sinh", "KILN_OP_SINH", 1, FLOAT, "same", 1),
    ("cosh", "KILN_OP_COSH", 1, FLOAT, "same", 1),
    ("tanh", "KILN_OP_TANH", 1, FLOAT, "same", 1),
    ("arcsinh", "KILN_OP_ASINH", 1, FLOAT, "same", 1),
    ("arccosh", "KILN_OP_ACOSH", 1, FLOAT, "same", 1),
    ("arctanh", "KILN_OP_ATANH", 1, FLOAT, "same", 1),
    ("log1p", "KILN_OP_LOG1P", 1, FLOAT, "same", 1),
    ("expm1", "KILN_OP_EXPM1", 1, FLOAT, "same", 1),
    ("log2", "KILN_OP_LOG2", 1, FLOAT, "same", 1),
    ("log10", "KILN_OP_LOG10", 1, FLOAT, "same", 1),
    ("floor", "KILN_OP_FLOOR", 1, INT + FLOAT, "same", 0),
    ("ceil", "KILN_OP_CEIL", 1, INT + FLOAT, "same", 0),
    ("trunc", "KILN_OP_TRUNC", 1, INT + FLOAT, "same", 0),
    ("round", "KILN_OP_ROUND", 1, INT + FLOAT, "same", 0),
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


main()
