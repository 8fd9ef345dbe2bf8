/* A scalar (kiln_arg) as one element of an array's dtype: the one rule by
 * which fill values, scalar operands' targets and initial values become
 * elements (docs/api.md section 4; kiln_array_fill's comment). */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/array/array_internal.h"
#include "base/error.h"

/* A scalar's value, read once: exactly one of the forms is meant. */
typedef enum { VAL_SIGNED, VAL_UNSIGNED, VAL_FLOAT, VAL_COMPLEX } value_form;
typedef struct {
    value_form form;
    int64_t s;
    uint64_t u;
    double re, im; /* VAL_FLOAT: re; VAL_COMPLEX: both */
} scalar_value;

double kiln__half_bits_to_double(uint16_t h) {
    int e = (h >> 10) & 31, f = h & 1023;
    double m = e == 0 ? ldexp(f, -24) : e == 31 ? (f ? NAN : INFINITY) : ldexp(1024 + f, e - 25);
    return (h & 0x8000) ? -m : m;
}

uint16_t kiln__double_to_half_bits(double v) {
    double r = kiln__round_to_half(v);
    uint16_t sign = signbit(r) ? 0x8000 : 0;
    if (isnan(r))
        return sign | 0x7e00;
    r = fabs(r);
    if (isinf(r))
        return sign | 0x7c00;
    if (r < 0x1p-14) /* subnormal (or zero): an exact multiple of 2^-24 */
        return sign | (uint16_t)(r * 0x1p24);
    int e;
    double m = frexp(r, &e); /* r = m * 2^e, m in [0.5, 1) */
    return sign | (uint16_t)((e + 14) << 10) | (uint16_t)((m * 2 - 1) * 1024);
}

/* The dtype as the user names it (KILN_INT8: "int8"; kiln_dtype_name gives
 * the kernel type, "char"). */
static const char *user_name(kiln_dtype d) {
    static const char *const names[] = {
        [KILN_BOOL] = "bool",           [KILN_INT8] = "int8",
        [KILN_UINT8] = "uint8",         [KILN_INT16] = "int16",
        [KILN_UINT16] = "uint16",       [KILN_INT32] = "int32",
        [KILN_UINT32] = "uint32",       [KILN_INT64] = "int64",
        [KILN_UINT64] = "uint64",       [KILN_FLOAT16] = "float16",
        [KILN_FLOAT32] = "float32",     [KILN_FLOAT64] = "float64",
        [KILN_COMPLEX64] = "complex64", [KILN_COMPLEX128] = "complex128",
    };
    unsigned i = (unsigned)d;
    return i < sizeof names / sizeof *names && names[i] ? names[i] : "an unknown dtype";
}

static int read_value(kiln_arg v, scalar_value *x) {
    memset(x, 0, sizeof *x);
    size_t size = kiln_dtype_size(v.dtype);
    if (v.dtype == KILN_BOOL) {
        x->form = VAL_SIGNED;
        x->s = v.value.b != 0;
    } else if (kiln__is_signed_dtype(v.dtype)) {
        x->form = VAL_SIGNED;
        x->s = size == 1   ? v.value.i8
               : size == 2 ? v.value.i16
               : size == 4 ? v.value.i32
                           : v.value.i64;
    } else if (v.dtype == KILN_UINT8 || v.dtype == KILN_UINT16 || v.dtype == KILN_UINT32 ||
               v.dtype == KILN_UINT64) {
        x->form = VAL_UNSIGNED;
        x->u = size == 1   ? v.value.u8
               : size == 2 ? v.value.u16
               : size == 4 ? v.value.u32
                           : v.value.u64;
    } else if (kiln__is_float_dtype(v.dtype)) {
        x->form = VAL_FLOAT;
        x->re = size == 2   ? kiln__half_bits_to_double(v.value.f16_bits)
                : size == 4 ? v.value.f32
                            : v.value.f64;
    } else if (kiln__is_complex_dtype(v.dtype)) {
        x->form = VAL_COMPLEX;
        x->re = size == 8 ? v.value.c64[0] : v.value.c128[0];
        x->im = size == 8 ? v.value.c64[1] : v.value.c128[1];
    } else {
        return 0;
    }
    return 1;
}

/* d rounded to float; past float's range, what rounding to nearest gives
 * (FLT_MAX or an infinity) without C's undefined conversion. */
static float to_float(double d) {
    if (isfinite(d) && fabs(d) > FLT_MAX)
        return fabs(d) >= 0x1.ffffffp127 ? (float)copysign(INFINITY, d)
                                         : (float)copysign(FLT_MAX, d);
    return (float)d;
}

/* v with the fewest digits that read back as v ("2147483648", "0.1"). */
static const char *number_text(double v, char *buf, size_t cap) {
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, cap, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

static double as_double(const scalar_value *x) {
    return x->form == VAL_SIGNED ? (double)x->s : x->form == VAL_UNSIGNED ? (double)x->u : x->re;
}

/* The value as an integer of dtype d (bits wide, signed or not) into *out
 * (two's complement bits), or an error naming it. */
static kiln_status to_integer(const scalar_value *x, kiln_dtype d, uint64_t *out,
                              const char *what) {
    int bits = (int)kiln_dtype_size(d) * 8, sgn = kiln__is_signed_dtype(d);
    /* the range as doubles (exact) and as integers */
    double lo = sgn ? -ldexp(1, bits - 1) : 0, hi_excl = ldexp(1, bits - sgn);
    int64_t slo = sgn ? (bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1))) : 0;
    uint64_t uhi =
        bits == 64 ? (sgn ? (uint64_t)INT64_MAX : UINT64_MAX) : ((uint64_t)1 << (bits - sgn)) - 1;
    switch (x->form) {
    case VAL_COMPLEX:
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: a complex value (%g%+gj) cannot become an element of a %s "
                               "array (take its real part first)",
                               what, x->re, x->im, user_name(d));
    case VAL_FLOAT: {
        double t = trunc(x->re);
        char text[32];
        if (!isfinite(t) || t < lo || t >= hi_excl)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: the value %s does not fit %s", what,
                                   number_text(x->re, text, sizeof text), user_name(d));
        *out = t < 0 ? (uint64_t)(int64_t)t : (uint64_t)t;
        return KILN_OK;
    }
    case VAL_UNSIGNED:
        if (x->u > uhi)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: the value %" PRIu64 " does not fit %s", what, x->u,
                                   user_name(d));
        *out = x->u;
        return KILN_OK;
    case VAL_SIGNED:
        if (x->s < slo || (x->s > 0 && (uint64_t)x->s > uhi))
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: the value %" PRId64 " does not fit %s", what, x->s,
                                   user_name(d));
        *out = (uint64_t)x->s;
        return KILN_OK;
    }
    return KILN_OK;
}

kiln_status kiln__scalar_to_element(kiln_arg v, kiln_dtype d, void *out, const char *what) {
    scalar_value x;
    if (v.kind != KILN_ARG_SCALAR || !read_value(v, &x))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: the value is not a scalar (kiln_arg kind %d, dtype %d): build "
                               "it with a KILN_ARG_* scalar macro such as KILN_ARG_F64(x)",
                               what, (int)v.kind, (int)v.dtype);
    size_t size = kiln_dtype_size(d);
    if (!size)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown dtype %d", what,
                               (int)d);
    if (v.dtype == d && d != KILN_BOOL) { /* the bits as they are (NaN payloads too) */
        memcpy(out, &v.value, size);
        return KILN_OK;
    }
    if (d == KILN_BOOL) {
        uint8_t b = x.form == VAL_COMPLEX ? (x.re != 0 || x.im != 0) : as_double(&x) != 0;
        if (x.form == VAL_UNSIGNED)
            b = x.u != 0; /* exact, also past 2^53 */
        memcpy(out, &b, 1);
        return KILN_OK;
    }
    if (kiln__is_complex_dtype(d)) {
        double re = as_double(&x), im = x.form == VAL_COMPLEX ? x.im : 0;
        if (d == KILN_COMPLEX64) {
            float p[2] = { to_float(re), to_float(im) };
            memcpy(out, p, sizeof p);
        } else {
            double p[2] = { re, im };
            memcpy(out, p, sizeof p);
        }
        return KILN_OK;
    }
    if (kiln__is_float_dtype(d)) {
        if (x.form == VAL_COMPLEX)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: a complex value (%g%+gj) cannot become an element of a "
                                   "%s array (take its real part first)",
                                   what, x.re, x.im, user_name(d));
        double f = as_double(&x);
        if (d == KILN_FLOAT16) {
            uint16_t h = kiln__double_to_half_bits(f);
            memcpy(out, &h, 2);
        } else if (d == KILN_FLOAT32) {
            float g = to_float(f);
            memcpy(out, &g, 4);
        } else {
            memcpy(out, &f, 8);
        }
        return KILN_OK;
    }
    uint64_t bits = 0;
    kiln_status st = to_integer(&x, d, &bits, what);
    if (st != KILN_OK)
        return st;
    /* the value narrowed to the element's width (two's complement) */
    uint8_t b8 = (uint8_t)bits;
    uint16_t b16 = (uint16_t)bits;
    uint32_t b32 = (uint32_t)bits;
    memcpy(out,
           size == 1   ? (const void *)&b8
           : size == 2 ? (const void *)&b16
           : size == 4 ? (const void *)&b32
                       : (const void *)&bits,
           size);
    return KILN_OK;
}

kiln_status kiln__weak_scalar(kiln_arg v, kiln_dtype d, kiln_arg *out, const char *what) {
    uint64_t element[2] = { 0, 0 };
    kiln_dtype computes = v.kind == KILN_ARG_SCALAR ? kiln_dtype_promote_scalar(d, v.dtype) : d;
    if (computes && computes != d)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: a %s scalar with a %s array computes in %s (NumPy 2, NEP 50): "
                               "convert the array first (kiln_array_astype)",
                               what, user_name(v.dtype), user_name(d), user_name(computes));
    kiln_status st = kiln__scalar_to_element(v, d, element, what);
    if (st != KILN_OK)
        return st;
    kiln_arg r = { .kind = KILN_ARG_SCALAR, .dtype = d };
    memcpy(&r.value, element, kiln_dtype_size(d));
    if (d == KILN_BOOL) /* kernels read bool as uchar */
        r = KILN_ARG_U8(r.value.b);
    else if (d == KILN_FLOAT16) /* float16 operations compute in float */
        r = KILN_ARG_F32((float)kiln__half_bits_to_double(r.value.f16_bits));
    *out = r;
    return KILN_OK;
}

kiln_status kiln__scalar_to_double(kiln_arg v, double *out, const char *what) {
    scalar_value x;
    if (v.kind != KILN_ARG_SCALAR || !read_value(v, &x))
        return kiln__scalar_to_element(v, KILN_FLOAT64, out, what); /* says why */
    if (x.form == VAL_COMPLEX)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: a complex value (%g%+gj) where a real one is needed", what,
                               x.re, x.im);
    *out = as_double(&x);
    return KILN_OK;
}
