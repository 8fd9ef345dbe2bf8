/* Dtype facts for generated kernel text: literals of the extreme values,
 * the bit-carrying type of a dtype, and the float16 rounding of scalars. */
#include <math.h>
#include <stdio.h>

#include "algo/array/array_internal.h"

/* The extreme values of each dtype as kernel literals, {min, max}; "0" for
 * the dtypes without one. */
static const struct {
    const char *min, *max;
} literals[] = {
    [KILN_INT8] = { "(char)(-128)", "(char)127" },
    [KILN_UINT8] = { "(uchar)0", "(uchar)255" },
    [KILN_BOOL] = { "(uchar)0", "(uchar)1" },
    [KILN_INT16] = { "(short)(-32768)", "(short)32767" },
    [KILN_UINT16] = { "(ushort)0", "(ushort)65535" },
    [KILN_INT32] = { "(int)(-2147483647-1)", "(int)2147483647" },
    [KILN_UINT32] = { "(uint)0", "(uint)4294967295u" },
    [KILN_INT64] = { "(long)(-9223372036854775807L-1L)", "(long)9223372036854775807L" },
    [KILN_UINT64] = { "(ulong)0", "(ulong)18446744073709551615UL" },
    [KILN_FLOAT32] = { "(float)(-INFINITY)", "(float)INFINITY" },
    [KILN_FLOAT64] = { "(double)(-INFINITY)", "(double)INFINITY" },
};

const char *kiln__dtype_max_literal(kiln_dtype d, char *buf, size_t cap) {
    unsigned i = (unsigned)d;
    int known = i < sizeof literals / sizeof *literals && literals[i].max;
    snprintf(buf, cap, "%s", known ? literals[i].max : "0");
    return buf;
}

const char *kiln__dtype_min_literal(kiln_dtype d, char *buf, size_t cap) {
    unsigned i = (unsigned)d;
    int known = i < sizeof literals / sizeof *literals && literals[i].min;
    snprintf(buf, cap, "%s", known ? literals[i].min : "0");
    return buf;
}

const char *kiln__bits_type(kiln_dtype d) {
    return d == KILN_FLOAT16 ? "ushort" : d == KILN_BOOL ? "uchar" : kiln_dtype_name(d);
}

int kiln__is_float_dtype(kiln_dtype d) {
    return d == KILN_FLOAT16 || d == KILN_FLOAT32 || d == KILN_FLOAT64;
}

int kiln__is_signed_dtype(kiln_dtype d) {
    return d == KILN_INT8 || d == KILN_INT16 || d == KILN_INT32 || d == KILN_INT64;
}

/* A scalar for a float16 operation is rounded to the nearest half first,
 * as the scalar of any dtype is converted to that dtype. */
double kiln__round_to_half(double v) {
    if (v != v || v == 0 || fabs(v) == INFINITY)
        return v;
    int e;
    frexp(v, &e); /* |v| = m * 2^e, m in [0.5, 1) */
    if (e < -13)
        e = -13; /* subnormals: a fixed quantum of 2^-24 */
    double q = ldexp(1.0, e - 11);
    double r = nearbyint(v / q) * q; /* the default mode: to nearest even */
    return fabs(r) > 65504.0 ? copysign(INFINITY, v) : r;
}

/* ---- complex dtypes (kept with the other dtype facts, below the
 * operations that read them: ops/complex.c, ops/array_fill.c, ...) */

int kiln__is_complex_dtype(kiln_dtype d) {
    return d == KILN_COMPLEX64 || d == KILN_COMPLEX128;
}

kiln_dtype kiln__complex_part_dtype(kiln_dtype d) {
    return d == KILN_COMPLEX64 ? KILN_FLOAT32 : d == KILN_COMPLEX128 ? KILN_FLOAT64 : d;
}

kiln_dtype kiln__complex_of(kiln_dtype d) {
    return d == KILN_FLOAT32 ? KILN_COMPLEX64 : d == KILN_FLOAT64 ? KILN_COMPLEX128 : (kiln_dtype)0;
}
