/* Serial C references for the array toolkit tests (test_array_promote.c,
 * test_array_where.c, test_array_index.c, test_array_lanes.c): elements of
 * every dtype as exact values (64-bit integers stay integers), float16
 * bits, NumPy's conversions with kiln's saturation, the binary operators,
 * and random data with the awkward values (NaN, infinities, -0.0,
 * out-of-range floats). */
#ifndef KILN_TESTS_TOOLKIT_REF_H
#define KILN_TESTS_TOOLKIT_REF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"

static const kiln_dtype tr_all[11] = { KILN_INT8,    KILN_UINT8,   KILN_INT16,  KILN_UINT16,
                                       KILN_INT32,   KILN_UINT32,  KILN_INT64,  KILN_UINT64,
                                       KILN_FLOAT16, KILN_FLOAT32, KILN_FLOAT64 };
#define TR_N 11

static inline int tr_is_float(kiln_dtype d) {
    return d == KILN_FLOAT16 || d == KILN_FLOAT32 || d == KILN_FLOAT64;
}
static inline int tr_is_unsigned(kiln_dtype d) {
    return d == KILN_UINT8 || d == KILN_UINT16 || d == KILN_UINT32 || d == KILN_UINT64 ||
           d == KILN_BOOL;
}

/* float16 bits <-> double (exact / rounded to nearest even). */
static inline double tr_h2d(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}
static inline uint16_t tr_d2h(double v) {
    if (v != v)
        return 0x7e00;
    uint16_t s = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    int e;
    frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    if (a == 0)
        return s;
    if (e < -13)
        e = -13;
    double q = ldexp(1.0, e - 11);
    double r = nearbyint(a / q) * q;
    if (r > 65504.0)
        return s | 0x7c00;
    if (r < ldexp(1.0, -14))
        return s | (uint16_t)(r / ldexp(1.0, -24));
    frexp(r, &e);
    int m = (int)(r / ldexp(1.0, e - 11)) - 1024;
    return s | (uint16_t)((e + 14) << 10) | (uint16_t)m;
}

/* One element: integers in i (signed) or u (unsigned), floats in f. */
typedef struct tr_val {
    int64_t i;
    uint64_t u;
    double f;
} tr_val;

static inline tr_val tr_load(kiln_dtype d, const void *p, size_t k) {
    tr_val v = { 0, 0, 0 };
    switch (d) {
    case KILN_INT8:
        v.i = ((const int8_t *)p)[k];
        break;
    case KILN_UINT8:
    case KILN_BOOL: /* any / all results */
        v.u = ((const uint8_t *)p)[k];
        break;
    case KILN_INT16:
        v.i = ((const int16_t *)p)[k];
        break;
    case KILN_UINT16:
        v.u = ((const uint16_t *)p)[k];
        break;
    case KILN_INT32:
        v.i = ((const int32_t *)p)[k];
        break;
    case KILN_UINT32:
        v.u = ((const uint32_t *)p)[k];
        break;
    case KILN_INT64:
        v.i = ((const int64_t *)p)[k];
        break;
    case KILN_UINT64:
        v.u = ((const uint64_t *)p)[k];
        break;
    case KILN_FLOAT16:
        v.f = tr_h2d(((const uint16_t *)p)[k]);
        break;
    case KILN_FLOAT32:
        v.f = ((const float *)p)[k];
        break;
    case KILN_FLOAT64:
        v.f = ((const double *)p)[k];
        break;
    default:
        break;
    }
    return v;
}

/* Stores v (already of dtype d: integers wrap here, floats round). */
static inline void tr_store(kiln_dtype d, void *p, size_t k, tr_val v) {
    uint64_t w = tr_is_unsigned(d) ? v.u : (uint64_t)v.i;
    switch (d) {
    case KILN_INT8:
        ((int8_t *)p)[k] = (int8_t)w;
        break;
    case KILN_UINT8:
    case KILN_BOOL:
        ((uint8_t *)p)[k] = (uint8_t)w;
        break;
    case KILN_INT16:
        ((int16_t *)p)[k] = (int16_t)w;
        break;
    case KILN_UINT16:
        ((uint16_t *)p)[k] = (uint16_t)w;
        break;
    case KILN_INT32:
        ((int32_t *)p)[k] = (int32_t)w;
        break;
    case KILN_UINT32:
        ((uint32_t *)p)[k] = (uint32_t)w;
        break;
    case KILN_INT64:
        ((int64_t *)p)[k] = (int64_t)w;
        break;
    case KILN_UINT64:
        ((uint64_t *)p)[k] = w;
        break;
    case KILN_FLOAT16:
        ((uint16_t *)p)[k] = tr_d2h(v.f);
        break;
    case KILN_FLOAT32:
        ((float *)p)[k] = (float)v.f;
        break;
    case KILN_FLOAT64:
        ((double *)p)[k] = v.f;
        break;
    default:
        break;
    }
}

/* Integer range of d as doubles: [lo, hi_excl). */
static inline void tr_range(kiln_dtype d, double *lo, double *hi) {
    int bits = 8 * (int)kiln_dtype_size(d);
    *lo = tr_is_unsigned(d) ? 0 : -ldexp(1, bits - 1);
    *hi = tr_is_unsigned(d) ? ldexp(1, bits) : ldexp(1, bits - 1);
}

/* v of dtype from as dtype to: NumPy's astype, with kiln's saturation of
 * NaN and out-of-range floats. */
static inline tr_val tr_cast(kiln_dtype from, kiln_dtype to, tr_val v) {
    tr_val r = { 0, 0, 0 };
    if (tr_is_float(from)) {
        double f = v.f;
        if (to == KILN_FLOAT32)
            f = (float)f;
        if (tr_is_float(to)) {
            r.f = f;
            return r;
        }
        double lo, hi;
        tr_range(to, &lo, &hi);
        if (f != f)
            return r;
        /* only in-range values are converted (C leaves the rest undefined) */
        if (tr_is_unsigned(to))
            r.u = f <= 0    ? 0
                  : f >= hi ? (hi == ldexp(1, 64) ? UINT64_MAX : (uint64_t)hi - 1)
                            : (uint64_t)f;
        else
            r.i = f <= lo   ? (int64_t)lo
                  : f >= hi ? (hi == ldexp(1, 63) ? INT64_MAX : (int64_t)hi - 1)
                            : (int64_t)f;
        return r;
    }
    int su = tr_is_unsigned(from);
    if (tr_is_float(to)) {
        /* float32 rounds the integer once, as the device does */
        if (to == KILN_FLOAT32)
            r.f = su ? (double)(float)v.u : (double)(float)v.i;
        else
            r.f = su ? (double)v.u : (double)v.i;
        return r;
    }
    /* integer to integer: the bits, wrapped on store */
    r.u = su ? v.u : (uint64_t)v.i;
    r.i = (int64_t)r.u;
    return r;
}

/* 1 if the elements k of p and q (dtype d) are equal (NaN equals NaN). */
static inline int tr_same(kiln_dtype d, const void *p, const void *q, size_t k) {
    tr_val a = tr_load(d, p, k), b = tr_load(d, q, k);
    if (tr_is_float(d))
        return (a.f != a.f && b.f != b.f) || a.f == b.f;
    return a.i == b.i && a.u == b.u;
}

/* Random element k of dtype d: integers over their whole range (or small
 * when small != 0); floats in [-1000, 1000) with NaN, infinities, -0.0
 * and values beyond every integer range mixed in. */
static inline void tr_random(kiln_dtype d, void *p, size_t k, int small) {
    uint64_t r = kt_rand_u64();
    tr_val v = { 0, 0, 0 };
    if (tr_is_float(d)) {
        switch (r % 16) {
        case 0:
            v.f = NAN;
            break;
        case 1:
            v.f = INFINITY;
            break;
        case 2:
            v.f = -INFINITY;
            break;
        case 3:
            v.f = -0.0;
            break;
        case 4:
            v.f = small ? 3.0 : ldexp(kt_rand_unit() - 0.5, 70);
            break;
        default:
            v.f = small ? (double)(int)(kt_rand_u64() % 9) - 4 : (kt_rand_unit() - 0.5) * 2000;
        }
        if (small && v.f != v.f)
            v.f = 1;
        if (small && isinf(v.f))
            v.f = -2;
    } else if (small) {
        v.u = r % 9;
        v.i = tr_is_unsigned(d) ? (int64_t)v.u : (int64_t)(r % 9) - 4;
    } else {
        v.u = r;
        v.i = (int64_t)r;
    }
    tr_store(d, p, k, v);
}

/* kiln_array_binary_out's op on x and y, already cast to the promoted dtype p
 * (comparisons give 0/1): C arithmetic in p, integers wrapping, integer
 * division by zero 0 and INT_MIN / -1 wrapped, NaN-propagating min/max. */
static inline tr_val tr_binary(kiln_binary_op op, kiln_dtype p, tr_val x, tr_val y) {
    tr_val r = { 0, 0, 0 };
    int cmp = op >= KILN_OP_EQ;
    if (tr_is_float(p)) {
        double a = x.f, b = y.f;
        if (p == KILN_FLOAT32 || p == KILN_FLOAT16) {
            float fa = (float)a, fb = (float)b, fr = 0;
            switch (op) {
            case KILN_OP_ADD:
                fr = fa + fb;
                break;
            case KILN_OP_SUB:
                fr = fa - fb;
                break;
            case KILN_OP_MUL:
                fr = fa * fb;
                break;
            case KILN_OP_DIV:
                fr = fa / fb;
                break;
            default:
                break;
            }
            r.f = fr;
        } else {
            switch (op) {
            case KILN_OP_ADD:
                r.f = a + b;
                break;
            case KILN_OP_SUB:
                r.f = a - b;
                break;
            case KILN_OP_MUL:
                r.f = a * b;
                break;
            case KILN_OP_DIV:
                r.f = a / b;
                break;
            default:
                break;
            }
        }
        if (op == KILN_OP_MIN || op == KILN_OP_MAX)
            r.f = (a != a || b != b) ? NAN : op == KILN_OP_MIN ? (b < a ? b : a) : (b > a ? b : a);
        if (cmp) {
            int t = op == KILN_OP_EQ   ? a == b
                    : op == KILN_OP_NE ? a != b
                    : op == KILN_OP_LT ? a < b
                    : op == KILN_OP_LE ? a <= b
                    : op == KILN_OP_GT ? a > b
                                       : a >= b;
            r.i = t;
            r.u = (uint64_t)t;
        }
        return r;
    }
    int u = tr_is_unsigned(p);
    unsigned bits = 8 * (unsigned)kiln_dtype_size(p);
    /* operands as exact values of p (already cast), wrapped arithmetic */
    uint64_t A = u ? x.u : (uint64_t)x.i, B = u ? y.u : (uint64_t)y.i;
    int64_t sa = x.i, sb = y.i;
    uint64_t w = 0;
    switch (op) {
    case KILN_OP_ADD:
        w = A + B;
        break;
    case KILN_OP_SUB:
        w = A - B;
        break;
    case KILN_OP_MUL:
        w = A * B;
        break;
    case KILN_OP_DIV:
        if (B == 0)
            w = 0;
        else if (u)
            w = A / B;
        else if (sb == -1)
            w = 0 - A;
        else
            w = (uint64_t)(sa / sb);
        break;
    case KILN_OP_MIN:
        w = u ? (B < A ? B : A) : (uint64_t)(sb < sa ? sb : sa);
        break;
    case KILN_OP_MAX:
        w = u ? (B > A ? B : A) : (uint64_t)(sb > sa ? sb : sa);
        break;
    default: {
        int lt = u ? A < B : sa < sb, eq = A == B;
        int t = op == KILN_OP_EQ   ? eq
                : op == KILN_OP_NE ? !eq
                : op == KILN_OP_LT ? lt
                : op == KILN_OP_LE ? lt || eq
                : op == KILN_OP_GT ? !lt && !eq
                                   : !lt;
        w = (uint64_t)t;
    }
    }
    (void)bits;
    r.u = w;
    r.i = (int64_t)w;
    return r;
}

#endif
