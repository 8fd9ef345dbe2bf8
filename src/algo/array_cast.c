/* Dtype kinds, NumPy's type promotion and conversions between dtypes:
 * kiln_promote_types, the conversion text of generated kernels, and
 * kiln_array_astype. All three are driven by one table of dtype traits
 * (kind and width): a new dtype is a new row there (complex: kind 'c', its
 * width the two parts', and a case in promote() and cast_text()). */
#include <stdio.h>
#include <string.h>

#include "algo/array_internal.h"
#include "algo/linalg_internal.h"
#include "algo/builtin.h"
#include "base/error.h"

/* kind: 'i' signed integer, 'u' unsigned integer, 'f' IEEE float.
 * lo, hi: for integers, the smallest value and the largest + 1 as exact
 * float literals: a float at or beyond them saturates. */
typedef struct dtype_traits {
    kiln_dtype dtype;
    char kind;
    unsigned bits;
    const char *lo, *hi;
} dtype_traits;

static const dtype_traits traits[] = {
    {KILN_INT8, 'i', 8, "-128.0f", "128.0f"},
    {KILN_UINT8, 'u', 8, "0.0f", "256.0f"},
    {KILN_INT16, 'i', 16, "-32768.0f", "32768.0f"},
    {KILN_UINT16, 'u', 16, "0.0f", "65536.0f"},
    {KILN_INT32, 'i', 32, "-2147483648.0f", "2147483648.0f"},
    {KILN_UINT32, 'u', 32, "0.0f", "4294967296.0f"},
    {KILN_INT64, 'i', 64, "-9223372036854775808.0f", "9223372036854775808.0f"},
    {KILN_UINT64, 'u', 64, "0.0f", "18446744073709551616.0f"},
    {KILN_FLOAT16, 'f', 16, NULL, NULL},
    {KILN_FLOAT32, 'f', 32, NULL, NULL},
    {KILN_FLOAT64, 'f', 64, NULL, NULL},
};
enum { NTRAITS = sizeof traits / sizeof traits[0] };

static const dtype_traits *traits_of(kiln_dtype d) {
    for (size_t k = 0; k < NTRAITS; k++)
        if (traits[k].dtype == d)
            return &traits[k];
    return NULL;
}

static kiln_dtype of_kind(char kind, unsigned bits) {
    for (size_t k = 0; k < NTRAITS; k++)
        if (traits[k].kind == kind && traits[k].bits == bits)
            return traits[k].dtype;
    return (kiln_dtype)0;
}

/* NumPy's promotion (np.promote_types / np.result_type of two arrays). */
kiln_dtype kiln_promote_types(kiln_dtype a, kiln_dtype b) {
    const dtype_traits *ta = traits_of(a), *tb = traits_of(b);
    if (!ta || !tb)
        return (kiln_dtype)0;
    if (ta->kind == tb->kind)
        return ta->bits >= tb->bits ? a : b;
    if (ta->kind == 'f' || tb->kind == 'f') {
        const dtype_traits *f = ta->kind == 'f' ? ta : tb;
        const dtype_traits *n = ta->kind == 'f' ? tb : ta;
        /* the float wide enough for every value of the integer: 8-bit
         * integers fit float16, 16-bit float32, wider ones float64 */
        unsigned need = n->bits == 8 ? 16 : n->bits == 16 ? 32 : 64;
        return of_kind('f', f->bits > need ? f->bits : need);
    }
    /* signed and unsigned: a signed type wider than the unsigned one, or
     * float64 when there is none (int64 with uint64) */
    const dtype_traits *s = ta->kind == 'i' ? ta : tb;
    const dtype_traits *u = ta->kind == 'i' ? tb : ta;
    if (s->bits > u->bits)
        return s->dtype;
    return u->bits < 64 ? of_kind('i', 2 * u->bits) : KILN_FLOAT64;
}

char kiln__dtype_kind(kiln_dtype d) {
    const dtype_traits *t = traits_of(d);
    return t ? t->kind : 0;
}

const char *kiln__compute_type(kiln_dtype d) {
    return d == KILN_FLOAT16 ? "float" : kiln_dtype_name(d);
}

const char *kiln__read_elem(kiln_dtype d, const char *name, const char *ix,
                            char *buf, size_t cap) {
    if (d == KILN_FLOAT16)
        snprintf(buf, cap, "kiln_h2f(%s[%s])", name, ix);
    else
        snprintf(buf, cap, "%s[%s]", name, ix);
    return buf;
}

/* x, a compute value of from, as a compute value of to (float16's is a
 * float). NumPy's rules: integers wrap, integers and floats round to
 * nearest; float to integer truncates, and where C (and NumPy) leave it
 * undefined kiln saturates: NaN gives 0, values at or beyond the
 * integer's range its smallest / largest value. */
const char *kiln__cast_value(kiln_dtype from, kiln_dtype to, const char *x,
                             char *buf, size_t cap) {
    const dtype_traits *tf = traits_of(from), *tt = traits_of(to);
    const char *ct = kiln__compute_type(to);
    if (from == to || (tf->kind == 'f' && to == KILN_FLOAT16 &&
                       from != KILN_FLOAT64))
        snprintf(buf, cap, "(%s)", x);
    else if (tf->kind == 'f' && tt->kind != 'f') {
        char mn[64], mx[64];
        /* the bounds are powers of two: exact in a float, compared in the
         * source's type (no double on a device without it) */
        const char *fs = from == KILN_FLOAT64 ? "" : "f";
        size_t lo_len = strlen(tt->lo) - 1, hi_len = strlen(tt->hi) - 1;
        snprintf(buf, cap,
                 "((%s) != (%s) ? (%s)0 : (%s) <= %.*s%s ? %s : (%s) >= "
                 "%.*s%s ? %s : (%s)(%s))",
                 x, x, ct, x, (int)lo_len, tt->lo, fs,
                 kiln__dtype_min_literal(to, mn, sizeof mn), x, (int)hi_len,
                 tt->hi, fs, kiln__dtype_max_literal(to, mx, sizeof mx), ct,
                 x);
    } else
        snprintf(buf, cap, "(%s)(%s)", ct, x);
    return buf;
}

const char *kiln__cast_store(kiln_dtype from, kiln_dtype to, const char *x,
                             char *buf, size_t cap) {
    if (to != KILN_FLOAT16)
        return kiln__cast_value(from, to, x, buf, cap);
    if (from == KILN_FLOAT64)
        snprintf(buf, cap, "kiln_d2h(%s)", x);
    else
        snprintf(buf, cap, "kiln_f2h((float)(%s))", x);
    return buf;
}

/* double to half bits rounded once: to float toward zero with the lost
 * bits kept as a sticky last bit (round to odd), then to half. The
 * float has 13 more bits than the half, so the second rounding is exact
 * (a plain (float) first would round twice). */
const char kiln__d2h_preamble[] =
    "KILN_FUNC ushort kiln_d2h(double d)\n"
    "{\n"
    "#if KILN_CUDA_C\n"
    "    float f = __double2float_rz(d);\n"
    "#else\n"
    "    float f = convert_float_rtz(d);\n"
    "#endif\n"
    "    if (f - f == 0.0f && (double)f != d)\n"
    "        f = kiln_as_float(kiln_as_uint(f) | 1u);\n"
    "    return kiln_f2h(f);\n"
    "}\n";

kiln_status kiln_array_astype(kiln_queue *queue, kiln_array *out,
                              kiln_array *a, size_t num_wait,
                              kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_array_astype";
    if (event)
        *event = NULL;
    kiln_status st = kiln__array_check_queue(queue, out, what);
    if (st == KILN_OK)
        st = kiln__array_check_queue(queue, a, what);
    if (st != KILN_OK)
        return st;
    if (!kiln__array_same_shape(out, a)) {
        char to[96], ta[96];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: out is %s, a is %s: the shapes differ",
                               what, kiln__array_describe(out, to, sizeof to),
                               kiln__array_describe(a, ta, sizeof ta));
    }
    if (out->dtype == a->dtype)
        return kiln_array_copy(queue, out, a, num_wait, wait, event);
    if (kiln__is_complex_dtype(out->dtype) || kiln__is_complex_dtype(a->dtype))
        return kiln_array_complex_cast(queue, out, a, num_wait, wait, event);
    char args[96], X[32], val[512], op[600];
    snprintf(args, sizeof args, "const %s *x, %s *z",
             kiln__bits_type(a->dtype), kiln__bits_type(out->dtype));
    kiln__cast_store(a->dtype, out->dtype,
                     kiln__read_elem(a->dtype, "x", "i", X, sizeof X), val,
                     sizeof val);
    snprintf(op, sizeof op, "z[i] = %s", val);
    int d2h = a->dtype == KILN_FLOAT64 && out->dtype == KILN_FLOAT16;
    kiln_elementwise *ew = NULL;
    st = kiln__elementwise_cached_ex(kiln_queue_context(queue), args, op,
                                     "kiln_astype",
                                     d2h ? kiln__d2h_preamble : NULL, 0, &ew);
    if (st == KILN_OK) {
        kiln_arg v[2] = {KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(out)};
        st = kiln_elementwise_launch(queue, ew, a->size, 2, v, num_wait, wait,
                                     event);
    }
    kiln_elementwise_release(ew);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}
