/* Dtype kinds, NumPy's type promotion and conversions between dtypes:
 * kiln_dtype_promote, the conversion text of generated kernels, and
 * kiln_array_astype_out. All three are driven by one table of dtype traits
 * (kind and width): a new dtype is a new row there (complex: kind 'c', its
 * width the two parts', and a case in promote() and cast_text()). */
#include <stdio.h>
#include <string.h>

#include "algo/ops/ops_internal.h"
#include "algo/ops/complex.h"
#include "algo/prim/prim.h"
#include "algo/gen/knobs.h"
#include "base/error.h"

/* kind: 'b' bool, 'i' signed integer, 'u' unsigned integer, 'f' IEEE
 * float, 'c' complex (bits: both parts).
 * lo, hi: for integers, the smallest value and the largest + 1 as exact
 * float literals: a float at or beyond them saturates. */
typedef struct dtype_traits {
    kiln_dtype dtype;
    char kind;
    unsigned bits;
    const char *lo, *hi;
} dtype_traits;

static const dtype_traits traits[] = {
    { KILN_BOOL, 'b', 8, NULL, NULL },
    { KILN_INT8, 'i', 8, "-128.0f", "128.0f" },
    { KILN_UINT8, 'u', 8, "0.0f", "256.0f" },
    { KILN_INT16, 'i', 16, "-32768.0f", "32768.0f" },
    { KILN_UINT16, 'u', 16, "0.0f", "65536.0f" },
    { KILN_INT32, 'i', 32, "-2147483648.0f", "2147483648.0f" },
    { KILN_UINT32, 'u', 32, "0.0f", "4294967296.0f" },
    { KILN_INT64, 'i', 64, "-9223372036854775808.0f", "9223372036854775808.0f" },
    { KILN_UINT64, 'u', 64, "0.0f", "18446744073709551616.0f" },
    { KILN_FLOAT16, 'f', 16, NULL, NULL },
    { KILN_FLOAT32, 'f', 32, NULL, NULL },
    { KILN_FLOAT64, 'f', 64, NULL, NULL },
    { KILN_COMPLEX64, 'c', 64, NULL, NULL },
    { KILN_COMPLEX128, 'c', 128, NULL, NULL },
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

/* The bits of the smallest float that holds every value of t (an integer
 * or a float): 8-bit integers fit float16, 16-bit float32, wider ones
 * float64 (NumPy's table). */
static unsigned float_bits_for(const dtype_traits *t) {
    if (t->kind == 'f')
        return t->bits;
    return t->bits == 8 ? 16 : t->bits == 16 ? 32 : 64;
}

/* NumPy 2's promotion (np.promote_types / np.result_type of two arrays;
 * checked against NumPy's own table by tests/test_array_dtype.c). */
kiln_dtype kiln_dtype_promote(kiln_dtype a, kiln_dtype b) {
    const dtype_traits *ta = traits_of(a), *tb = traits_of(b);
    if (!ta || !tb)
        return (kiln_dtype)0;
    if (ta->kind == 'b')
        return b; /* bool is below every other kind */
    if (tb->kind == 'b')
        return a;
    if (ta->kind == tb->kind)
        return ta->bits >= tb->bits ? a : b;
    if (ta->kind == 'c' || tb->kind == 'c') {
        const dtype_traits *c = ta->kind == 'c' ? ta : tb;
        const dtype_traits *n = ta->kind == 'c' ? tb : ta;
        /* parts of float32 or float64, wide enough for the other one */
        unsigned part = c->bits / 2, need = float_bits_for(n);
        part = part > need ? part : need;
        return of_kind('c', part <= 32 ? 64 : 128);
    }
    if (ta->kind == 'f' || tb->kind == 'f') {
        const dtype_traits *f = ta->kind == 'f' ? ta : tb;
        const dtype_traits *n = ta->kind == 'f' ? tb : ta;
        unsigned need = float_bits_for(n);
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

/* NEP 50: a Python scalar is weak. Its kind (bool < integer < float <
 * complex) counts, not its width: of a kind not above the array's, the
 * array's dtype wins; above it, NumPy's default of the scalar's kind
 * (int64, float64, complex128), except that a complex scalar with a
 * float array keeps the array's precision (float16/float32: complex64). */
kiln_dtype kiln_dtype_promote_scalar(kiln_dtype array_dtype, kiln_dtype scalar_kind) {
    const dtype_traits *ta = traits_of(array_dtype), *ts = traits_of(scalar_kind);
    if (!ta || !ts)
        return (kiln_dtype)0;
    static const char order[] = "bifc"; /* 'u' ranks as 'i' */
    char ka = ta->kind == 'u' ? 'i' : ta->kind, ks = ts->kind == 'u' ? 'i' : ts->kind;
    if (strchr(order, ks) <= strchr(order, ka))
        return array_dtype;
    switch (ks) {
    case 'i':
        return KILN_INT64;
    case 'f':
        return KILN_FLOAT64;
    default: /* 'c' */
        return ka == 'f' ? of_kind('c', ta->bits <= 32 ? 64 : 128) : KILN_COMPLEX128;
    }
}

char kiln__dtype_kind(kiln_dtype d) {
    const dtype_traits *t = traits_of(d);
    return t ? t->kind : 0;
}

const char *kiln__compute_type(kiln_dtype d) {
    return d == KILN_FLOAT16 ? "float" : d == KILN_BOOL ? "uchar" : kiln_dtype_name(d);
}

const char *kiln__read_elem(kiln_dtype d, const char *name, const char *ix, char *buf, size_t cap) {
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
const char *kiln__cast_value(kiln_dtype from, kiln_dtype to, const char *x, char *buf, size_t cap) {
    const dtype_traits *tf = traits_of(from), *tt = traits_of(to);
    const char *ct = kiln__compute_type(to);
    if (from == to || (tf->kind == 'f' && to == KILN_FLOAT16 && from != KILN_FLOAT64))
        snprintf(buf, cap, "(%s)", x);
    else if (to == KILN_BOOL) /* NumPy: non-zero (NaN too) is true */
        snprintf(buf, cap, "((%s) != 0 ? (uchar)1 : (uchar)0)", x);
    else if (tf->kind == 'f' && tt->kind != 'f') {
        char mn[64], mx[64];
        /* the bounds are powers of two: exact in a float, compared in the
         * source's type (no double on a device without it) */
        const char *fs = from == KILN_FLOAT64 ? "" : "f";
        size_t lo_len = strlen(tt->lo) - 1, hi_len = strlen(tt->hi) - 1;
        snprintf(buf, cap,
                 "((%s) != (%s) ? (%s)0 : (%s) <= %.*s%s ? %s : (%s) >= "
                 "%.*s%s ? %s : (%s)(%s))",
                 x, x, ct, x, (int)lo_len, tt->lo, fs, kiln__dtype_min_literal(to, mn, sizeof mn),
                 x, (int)hi_len, tt->hi, fs, kiln__dtype_max_literal(to, mx, sizeof mx), ct, x);
    } else
        snprintf(buf, cap, "(%s)(%s)", ct, x);
    return buf;
}

const char *kiln__cast_store(kiln_dtype from, kiln_dtype to, const char *x, char *buf, size_t cap) {
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
const char kiln__d2h_preamble[] = "KILN_FUNC ushort kiln_d2h(double d)\n"
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

/* The vector path of astype: item i of the launch converts the four
 * elements 4i..4i+3 with one 16-byte load and one 8- or 16-byte store
 * (the scalar kernel issues a 4-byte load and a 2-byte store per element:
 * float32 -> float16 reached 63% of copy on an H200). Sources of 4 bytes,
 * results of 2 or 4; p must be aligned to the vector's size. OpenCL C: a
 * cast pointer, so the compiler may assume that alignment (vload4 would
 * assume only the element's); CUDA and the host backend (C) have the
 * vector types as structs, built with make_T4. The kernel checks the alignment of the
 * first elements: a CUDA buffer may wrap memory of another library (DLPack)
 * at any element boundary, and the quads then take the scalar loop. */
static const char vec_preamble[] =
    "#define KILN_AST_ALIGNED(p, a) (((ulong)(p) & ((a) - 1)) == 0)\n"
    "#if KILN_CUDA_C || defined(KILN_BACKEND_HOST)\n"
    "#define KILN_AST_LD4(T, p) (*(const T##4 *)(p))\n"
    "#define KILN_AST_ST4(T, p, a, b, c, d) \\\n"
    "    (*(T##4 *)(p) = make_##T##4((a), (b), (c), (d)))\n"
    "#else\n"
    "#define KILN_AST_LD4(T, p) (*(KILN_GLOBAL const T##4 *)(p))\n"
    "#define KILN_AST_ST4(T, p, a, b, c, d) \\\n"
    "    (*(KILN_GLOBAL T##4 *)(p) = (T##4)((a), (b), (c), (d)))\n"
    "#endif\n";

static int vec_dtypes(kiln_dtype from, kiln_dtype to) {
    size_t fs = kiln_dtype_size(from), ts = kiln_dtype_size(to);
    return from != to && !kiln__is_complex_dtype(from) && !kiln__is_complex_dtype(to) && fs == 4 &&
           (ts == 2 || ts == 4);
}

kiln_status kiln__astype_vec_kernel(kiln_context *ctx, kiln_dtype from, kiln_dtype to,
                                    kiln_elementwise **ew) {
    *ew = NULL;
    if (!vec_dtypes(from, to))
        return kiln__error_set(KILN_ERROR_INTERNAL, 0, "astype: no vector kernel for %s -> %s",
                               kiln_dtype_name(from), kiln_dtype_name(to));
    const char *ft = kiln__bits_type(from), *tt = kiln__bits_type(to);
    char args[128], lane[4][512], one[512], op[3072];
    snprintf(args, sizeof args, "const %s *x, %s *z, long ast_n", ft, tt);
    static const char *const comp[4] = { "kiln_v.x", "kiln_v.y", "kiln_v.z", "kiln_v.w" };
    for (int l = 0; l < 4; l++) /* a 4-byte source is its compute value */
        kiln__cast_store(from, to, comp[l], lane[l], sizeof lane[l]);
    kiln__cast_store(from, to, "x[kiln_k]", one, sizeof one);
    /* n here counts the quads; the last one may hold fewer than four */
    snprintf(op, sizeof op,
             "long kiln_j = 4 * i;\n"
             "if (kiln_j + 4 <= ast_n && KILN_AST_ALIGNED(x, 16) &&\n"
             "    KILN_AST_ALIGNED(z, %u)) {\n"
             "    %s4 kiln_v = KILN_AST_LD4(%s, x + kiln_j);\n"
             "    KILN_AST_ST4(%s, z + kiln_j, %s, %s, %s, %s);\n"
             "} else {\n"
             "    for (long kiln_k = kiln_j; kiln_k < ast_n; kiln_k++)\n"
             "        z[kiln_k] = %s;\n"
             "}",
             4 * (unsigned)kiln_dtype_size(to), ft, ft, tt, lane[0], lane[1], lane[2], lane[3],
             one);
    return kiln__elementwise_cached_ex(ctx, args, op, "kiln_astype4", vec_preamble, 0, ew);
}

/* Whether astype takes the vector path: dense arrays whose first elements
 * are aligned to four elements, on a GPU unless KILN_CAST_VEC says
 * otherwise. On PoCL's CPU device the per-element kernel's chunked loop
 * vectorises and the vector one took 2.3x as long (2^24 float32 to
 * float16: 3.8 ms, 8.7 ms). */
static int use_vec(kiln_queue *queue, const kiln_array *out, const kiln_array *a) {
    int knob = kiln__knobs_get()->cast_vec;
    if (!knob || !vec_dtypes(a->dtype, out->dtype) || !kiln__array_contiguous(a) ||
        !kiln__array_contiguous(out) || a->offset % 4 || out->offset % 4)
        return 0;
    kiln__plan plan;
    return knob == 2 || (kiln__plan_for(queue, &plan) == KILN_OK && !plan.cpu);
}

/* A 1-D header of ceil(size / 4) elements over a's (contiguous) layout:
 * what the launch of quads checks against its range. */
static kiln_array quad_header(const kiln_array *a) {
    kiln_array h = *a;
    h.ndim = 1;
    h.size = (a->size + 3) / 4;
    h.shape[0] = h.size;
    h.strides[0] = 1;
    return h;
}

kiln_status kiln_array_astype_out(kiln_queue *queue, kiln_array *out, kiln_array *a,
                                  size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_array_astype_out";
    kiln_status st = kiln__array_op_begin(queue, out, a, event, what);
    if (st != KILN_OK)
        return st;
    if (!kiln__array_same_shape(out, a)) {
        char to[96], ta[96];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: out is %s, a is %s: the shapes differ",
                               what, kiln__array_describe(out, to, sizeof to),
                               kiln__array_describe(a, ta, sizeof ta));
    }
    if (out->dtype == a->dtype)
        return kiln_array_copy_out(queue, out, a, num_wait, wait, event);
    if (kiln__is_complex_dtype(out->dtype) || kiln__is_complex_dtype(a->dtype))
        return kiln_array_complex_cast_out(queue, out, a, num_wait, wait, event);
    if (use_vec(queue, out, a)) {
        kiln_elementwise *ew = NULL;
        st = kiln__astype_vec_kernel(kiln_queue_context(queue), a->dtype, out->dtype, &ew);
        if (st == KILN_OK) {
            kiln_array qa = quad_header(a), qo = quad_header(out);
            kiln_arg v[3] = { KILN_ARG_ARRAY(&qa), KILN_ARG_ARRAY(&qo),
                              KILN_ARG_I64((int64_t)a->size) };
            st = kiln_elementwise_launch(queue, ew, qa.size, 3, v, num_wait, wait, event);
        }
        kiln_elementwise_release(ew);
        return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
    }
    char args[96], X[32], val[512], op[600];
    snprintf(args, sizeof args, "const %s *x, %s *z", kiln__bits_type(a->dtype),
             kiln__bits_type(out->dtype));
    kiln__cast_store(a->dtype, out->dtype, kiln__read_elem(a->dtype, "x", "i", X, sizeof X), val,
                     sizeof val);
    snprintf(op, sizeof op, "z[i] = %s", val);
    int d2h = a->dtype == KILN_FLOAT64 && out->dtype == KILN_FLOAT16;
    kiln_elementwise *ew = NULL;
    /* z[i] from x[i] on every item: lanes on GPUs */
    st = kiln__elementwise_cached_ex(kiln_queue_context(queue), args, op, "kiln_astype",
                                     d2h ? kiln__d2h_preamble : NULL, KILN__ELEMENTWISE_LANES, &ew);
    if (st == KILN_OK) {
        kiln_arg v[2] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(out) };
        st = kiln_elementwise_launch(queue, ew, a->size, 2, v, num_wait, wait, event);
    }
    kiln_elementwise_release(ew);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}
