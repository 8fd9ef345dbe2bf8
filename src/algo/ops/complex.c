/* Complex arrays: arithmetic, abs/exp/conj, real and imaginary views,
 * casts to and from real dtypes, and the complex reductions. Kernels use
 * the dialect's complex helpers (prelude_complex.h): kiln_cmulf on cfloat,
 * kiln_cmul on cdouble. */
#include <stdio.h>
#include <string.h>

#include "algo/ops/op_names.h"
#include "algo/ops/ops_internal.h"
#include "algo/prim/prim.h"
#include "algo/ops/complex.h"
#include "base/check.h"
#include "base/error.h"

/* "f" for the cfloat helpers, "" for the cdouble ones. */
static const char *sfx(kiln_dtype d) {
    return d == KILN_COMPLEX64 ? "f" : "";
}

/* The statement z[i] = value, value being a complex expression when
 * is_complex, else a real one, converted to z's dtype zd. */
static void store(kiln_dtype zd, const char *value, int is_complex, char *buf, size_t cap) {
    const char *zt = kiln_dtype_name(zd);
    if (kiln__is_complex_dtype(zd)) {
        const char *pt = kiln_dtype_name(kiln__complex_part_dtype(zd));
        if (is_complex) /* of zd's own type */
            snprintf(buf, cap, "z[i] = %s", value);
        else
            snprintf(buf, cap, "z[i] = kiln_%s_make((%s)(%s), (%s)0)", zt, pt, value, pt);
        return;
    }
    if (zd == KILN_BOOL) { /* NumPy: either part non-zero (NaN too) */
        if (is_complex)
            snprintf(buf, cap, "z[i] = ((%s).x != 0 || (%s).y != 0) ? 1 : 0", value, value);
        else
            snprintf(buf, cap, "z[i] = (%s) != 0 ? 1 : 0", value);
        return;
    }
    char real[200];
    snprintf(real, sizeof real, is_complex ? "(%s).x" : "%s", value);
    if (zd == KILN_FLOAT16)
        snprintf(buf, cap, "z[i] = kiln_f2h((float)(%s))", real);
    else
        snprintf(buf, cap, "z[i] = (%s)(%s)", zt, real);
}

/* The kernel of op over v; pre: the helpers' preamble (or NULL), freed. */
static kiln_status run_pre(kiln_queue *q, const char *what, const char *args, const char *op,
                           kiln__sb *pre, size_t nv, const kiln_arg *v, size_t num_wait,
                           kiln_event *const *wait, kiln_event **event) {
    kiln_elementwise *ew = NULL;
    kiln_status st = pre && pre->oom
                         ? kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what)
                         : kiln__elementwise_cached_ex(kiln_queue_context(q), args, op,
                                                       "kiln_complex", pre ? pre->p : NULL, 0, &ew);
    if (pre)
        kiln__sb_free(pre);
    if (st == KILN_OK)
        st = kiln_elementwise_launch(q, ew, v[nv - 1].value.array->size, nv, v, num_wait, wait,
                                     event);
    kiln_elementwise_release(ew);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

static kiln_status run(kiln_queue *q, const char *what, const char *args, const char *op, size_t nv,
                       const kiln_arg *v, size_t num_wait, kiln_event *const *wait,
                       kiln_event **event) {
    return run_pre(q, what, args, op, NULL, nv, v, num_wait, wait, event);
}

static kiln_status check_queue(kiln_queue *q, const char *what, kiln_array *out, kiln_array *a,
                               kiln_array *b) {
    kiln_status st = kiln__array_check_queue(q, out, what);
    if (st == KILN_OK)
        st = kiln__array_check_queue(q, a, what);
    if (st == KILN_OK && b)
        st = kiln__array_check_queue(q, b, what);
    return st;
}

/* The public entry points' start: no event yet, then the queue check. */
static kiln_status begin_public(kiln_queue *q, const char *what, kiln_array *out, kiln_array *a,
                                kiln_event **event) {
    if (event)
        *event = NULL;
    return check_queue(q, what, out, a, NULL);
}

/* st from the op table's check, else KILN_ERROR_UNSUPPORTED: an op the
 * table lets complex dtypes take without a kernel here. */
static kiln_status refuse(kiln_status st, const char *what, const char *name, kiln_dtype d) {
    return st != KILN_OK
               ? st
               : kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "%s: %s is not implemented for %s",
                                 what, name, kiln_dtype_name(d));
}

/* Element text of a real array x of dtype d, widened for float16. */
static const char *real_elem(kiln_dtype d) {
    return d == KILN_FLOAT16 ? "kiln_h2f(x[i])" : "x[i]";
}

kiln_status kiln__complex_binary(kiln_queue *q, kiln_binary_op op, kiln_array *out, kiln_array *a,
                                 kiln_array *b, const double *scalar, size_t num_wait,
                                 kiln_event *const *wait, kiln_event **event) {
    const char *what = scalar ? "kiln_array_binary_scalar_out" : "kiln_array_binary_out";
    kiln_status st = check_queue(q, what, out, a, b);
    if (st != KILN_OK)
        return st;
    if (!scalar && !b)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: b is NULL", what);
    int cmp = op == KILN_OP_EQ || op == KILN_OP_NE;
    if ((b && (a->dtype != b->dtype || !kiln__array_same_shape(a, b))) ||
        !kiln__array_same_shape(a, out) || !kiln__is_complex_dtype(a->dtype) ||
        (!cmp && out->dtype != a->dtype))
        return kiln__array_mismatch(what, out, a, b);
    const char *s = sfx(a->dtype), *t = kiln_dtype_name(a->dtype);
    const char *pt = kiln_dtype_name(kiln__complex_part_dtype(a->dtype));
    static const char *const fns[] = {
        [KILN_OP_ADD] = "cadd", [KILN_OP_SUB] = "csub", [KILN_OP_MUL] = "cmul",
        [KILN_OP_DIV] = "cdiv", [KILN_OP_EQ] = "ceq",   [KILN_OP_NE] = "ceq"
    };
    const char *fn;
    kiln__sb pre = { 0 };
    if ((unsigned)op < sizeof fns / sizeof *fns && fns[op])
        fn = fns[op];
    else if (op == KILN_OP_POW)
        fn = kiln__complex_fn(0, op, a->dtype, &pre) + strlen("kiln_");
    else /* ordering, bitwise, atan2 ...: not for complex numbers */
        return refuse(kiln__binary_check(what, op, a->dtype), what, kiln__binary_op_name(op),
                      a->dtype);
    char B[64], expr[160], args[160], opt[400];
    if (scalar)
        snprintf(B, sizeof B, "kiln_%s_make(s, si)", t);
    else
        snprintf(B, sizeof B, "y[i]");
    if (cmp)
        snprintf(expr, sizeof expr, "(kiln_%s%s(x[i], %s) ? %d : %d)", fn, s, B, op == KILN_OP_EQ,
                 op != KILN_OP_EQ);
    else
        snprintf(expr, sizeof expr, "kiln_%s%s(x[i], %s)", fn, s, B);
    store(out->dtype, expr, !cmp, opt, sizeof opt);
    const char *zt = kiln__bits_type(out->dtype);
    if (scalar) {
        snprintf(args, sizeof args, "const %s *x, %s s, %s si, %s *z", t, pt, pt, zt);
        kiln_arg v[4] = { KILN_ARG_ARRAY(a), KILN_ARG_F64(scalar[0]), KILN_ARG_F64(scalar[1]),
                          KILN_ARG_ARRAY(out) };
        return run_pre(q, what, args, opt, &pre, 4, v, num_wait, wait, event);
    }
    snprintf(args, sizeof args, "const %s *x, const %s *y, %s *z", t, t, zt);
    kiln_arg v[3] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(b), KILN_ARG_ARRAY(out) };
    return run_pre(q, what, args, opt, &pre, 3, v, num_wait, wait, event);
}

kiln_status kiln__complex_unary(kiln_queue *q, kiln_unary_op op, kiln_array *out, kiln_array *a,
                                size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    const char *what = "kiln_array_unary_out";
    kiln_status st = check_queue(q, what, out, a, NULL);
    if (st != KILN_OK)
        return st;
    int pred = op == KILN_OP_ISNAN || op == KILN_OP_ISINF || op == KILN_OP_ISFINITE;
    kiln_dtype want = op == KILN_OP_ABS ? kiln__complex_part_dtype(a->dtype) : a->dtype;
    if (!kiln__is_complex_dtype(a->dtype) || !kiln__array_same_shape(a, out) ||
        (pred ? kiln__is_complex_dtype(out->dtype) : out->dtype != want))
        return kiln__array_mismatch(what, out, a, NULL);
    if (pred || op == KILN_OP_POSITIVE || op == KILN_OP_SQUARE) {
        /* NumPy: a part NaN / infinite makes the value so; finite needs
         * both parts finite; square is x * x (the plain product) */
        char expr[160], args[128], opt[400];
        if (op == KILN_OP_POSITIVE)
            snprintf(expr, sizeof expr, "x[i]");
        else if (op == KILN_OP_SQUARE)
            snprintf(expr, sizeof expr, "kiln_cmul%s(x[i], x[i])", sfx(a->dtype));
        else
            snprintf(expr, sizeof expr, "(%s(x[i].x) %s %s(x[i].y) ? 1 : 0)",
                     op == KILN_OP_ISNAN   ? "isnan"
                     : op == KILN_OP_ISINF ? "isinf"
                                           : "isfinite",
                     op == KILN_OP_ISFINITE ? "&&" : "||",
                     op == KILN_OP_ISNAN   ? "isnan"
                     : op == KILN_OP_ISINF ? "isinf"
                                           : "isfinite");
        store(out->dtype, expr, !pred, opt, sizeof opt);
        snprintf(args, sizeof args, "const %s *x, %s *z", kiln_dtype_name(a->dtype),
                 kiln__bits_type(out->dtype));
        kiln_array x = *a, z = *out; /* float16 travels as ushort */
        if (z.dtype == KILN_FLOAT16)
            z.dtype = KILN_UINT16;
        kiln_arg v[2] = { KILN_ARG_ARRAY(&x), KILN_ARG_ARRAY(&z) };
        return run(q, what, args, opt, 2, v, num_wait, wait, event);
    }
    static const char *const fns[] = { [KILN_OP_NEG] = "cneg",
                                       [KILN_OP_ABS] = "cabs",
                                       [KILN_OP_EXP] = "cexp",
                                       [KILN_OP_SQRT] = "csqrt",
                                       [KILN_OP_LOG] = "clog" };
    const char *fn;
    kiln__sb pre = { 0 };
    if ((unsigned)op < sizeof fns / sizeof *fns && fns[op])
        fn = fns[op];
    else if ((fn = kiln__complex_fn(1, op, a->dtype, &pre)) != NULL)
        fn += strlen("kiln_");
    else /* floor, signbit ...: not for complex numbers */
        return refuse(kiln__unary_check(what, op, a->dtype), what, kiln__unary_op_name(op),
                      a->dtype);
    char expr[64], args[128], opt[320];
    snprintf(expr, sizeof expr, "kiln_%s%s(x[i])", fn, sfx(a->dtype));
    store(out->dtype, expr, op != KILN_OP_ABS, opt, sizeof opt);
    snprintf(args, sizeof args, "const %s *x, %s *z", kiln_dtype_name(a->dtype),
             kiln__bits_type(out->dtype));
    kiln_arg v[2] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(out) };
    return run_pre(q, what, args, opt, &pre, 2, v, num_wait, wait, event);
}

kiln_status kiln_array_conj_out(kiln_queue *q, kiln_array *out, kiln_array *a, size_t num_wait,
                                kiln_event *const *wait, kiln_event **event) {
    const char *what = "kiln_array_conj_out";
    kiln_status st = begin_public(q, what, out, a, event);
    if (st != KILN_OK)
        return st;
    if (out->dtype != a->dtype || !kiln__array_same_shape(a, out))
        return kiln__array_mismatch(what, out, a, NULL);
    if (!kiln__is_complex_dtype(a->dtype))
        return kiln_array_copy_out(q, out, a, num_wait, wait, event);
    char args[128], opt[320], expr[64];
    snprintf(expr, sizeof expr, "kiln_conj%s(x[i])", sfx(a->dtype));
    store(a->dtype, expr, 1, opt, sizeof opt);
    snprintf(args, sizeof args, "const %s *x, %s *z", kiln_dtype_name(a->dtype),
             kiln_dtype_name(a->dtype));
    kiln_arg v[2] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(out) };
    return run(q, what, args, opt, 2, v, num_wait, wait, event);
}

kiln_status kiln_array_complex_cast_out(kiln_queue *q, kiln_array *out, kiln_array *a,
                                        size_t num_wait, kiln_event *const *wait,
                                        kiln_event **event) {
    const char *what = "kiln_array_complex_cast_out";
    kiln_status st = begin_public(q, what, out, a, event);
    if (st != KILN_OK)
        return st;
    if (!kiln__array_same_shape(a, out))
        return kiln__array_mismatch(what, out, a, NULL);
    int ca = kiln__is_complex_dtype(a->dtype);
    if (!ca && !kiln__is_complex_dtype(out->dtype))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: neither %s nor %s is complex",
                               what, kiln_dtype_name(a->dtype), kiln_dtype_name(out->dtype));
    char args[128], opt[400];
    store(out->dtype, ca ? "x[i]" : real_elem(a->dtype), ca, opt, sizeof opt);
    if (ca && kiln__is_complex_dtype(out->dtype)) /* no helper call to name */
        snprintf(opt, sizeof opt, "z[i] = kiln_%s_make((%s)x[i].x, (%s)x[i].y)",
                 kiln_dtype_name(out->dtype), kiln_dtype_name(kiln__complex_part_dtype(out->dtype)),
                 kiln_dtype_name(kiln__complex_part_dtype(out->dtype)));
    snprintf(args, sizeof args, "const %s *x, %s *z", kiln__bits_type(a->dtype),
             kiln__bits_type(out->dtype));
    kiln_array x = *a, z = *out; /* headers: float16 travels as ushort */
    if (x.dtype == KILN_FLOAT16)
        x.dtype = KILN_UINT16;
    if (z.dtype == KILN_FLOAT16)
        z.dtype = KILN_UINT16;
    kiln_arg v[2] = { KILN_ARG_ARRAY(&x), KILN_ARG_ARRAY(&z) };
    return run(q, what, args, opt, 2, v, num_wait, wait, event);
}

/* A view of the parts: part 0 real, 1 imaginary. */
static kiln_status part_view(kiln_array *a, int part, const char *what, kiln_array **view) {
    if (view)
        *view = NULL;
    if (!a || !view)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what,
                               !a ? "array" : "view");
    int c = kiln__is_complex_dtype(a->dtype);
    if (!c && part)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: %s is not complex", what,
                               kiln_dtype_name(a->dtype));
    kiln_array *v = kiln__array_clone_header(a);
    if (!v)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    if (c) {
        v->dtype = kiln__complex_part_dtype(a->dtype);
        for (unsigned k = 0; k < KILN_ARRAY_MAX_DIMS; k++)
            v->strides[k] *= 2;
        v->offset = a->offset * 2 + (size_t)part;
    }
    *view = v;
    return KILN_OK;
}

kiln_status kiln_array_real(kiln_array *a, kiln_array **view) {
    return part_view(a, 0, "kiln_array_real", view);
}

kiln_status kiln_array_imag(kiln_array *a, kiln_array **view) {
    return part_view(a, 1, "kiln_array_imag", view);
}

kiln_status kiln__complex_reduce_desc(kiln_reduce_op op, kiln_dtype dtype, kiln_reduction_desc *d,
                                      const char **finish) {
    int f = dtype == KILN_COMPLEX64;
    *finish = NULL;
    d->arguments = f ? "const cfloat *x" : "const cdouble *x";
    d->map = "x[i]";
    switch (op) {
    case KILN_REDUCE_SUM:
    case KILN_REDUCE_PROD:
        d->out_type = f ? "cfloat" : "cdouble";
        d->neutral = op == KILN_REDUCE_SUM
                         ? (f ? "kiln_cfloat_make(0.0f, 0.0f)" : "kiln_cdouble_make(0.0, 0.0)")
                         : (f ? "kiln_cfloat_make(1.0f, 0.0f)" : "kiln_cdouble_make(1.0, 0.0)");
        d->reduce = op == KILN_REDUCE_SUM ? (f ? "kiln_caddf(a, b)" : "kiln_cadd(a, b)")
                                          : (f ? "kiln_cmulf(a, b)" : "kiln_cmul(a, b)");
        d->name = op == KILN_REDUCE_SUM ? "kiln_csum" : "kiln_cprod";
        return KILN_OK;
    case KILN_REDUCE_NORM1:
    case KILN_REDUCE_NORM2:
    case KILN_REDUCE_NORM_INF:
        d->out_type = f ? "float" : "double";
        d->neutral = "0";
        d->reduce = op == KILN_REDUCE_NORM_INF ? "(b > a || b != b) ? b : a" : "a+b";
        if (op == KILN_REDUCE_NORM2) {
            d->map = "x[i].x*x[i].x + x[i].y*x[i].y";
            *finish = "sqrt(a)";
        } else {
            d->map = f ? "kiln_cabsf(x[i])" : "kiln_cabs(x[i])";
        }
        d->name = "kiln_cnorm";
        return KILN_OK;
    default:
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "kiln_array_reduce: %s orders values; "
                               "complex numbers have no order",
                               kiln__reduce_op_name(op) ? kiln__reduce_op_name(op) : "the op");
    }
}

void kiln__complex_dot_desc(kiln_dtype dtype, int conj, kiln_reduction_desc *d) {
    int f = dtype == KILN_COMPLEX64;
    d->arguments = f ? "const cfloat *x, const cfloat *y" : "const cdouble *x, const cdouble *y";
    d->out_type = f ? "cfloat" : "cdouble";
    d->neutral = f ? "kiln_cfloat_make(0.0f, 0.0f)" : "kiln_cdouble_make(0.0, 0.0)";
    d->reduce = f ? "kiln_caddf(a, b)" : "kiln_cadd(a, b)";
    d->map = conj ? (f ? "kiln_cmulf(kiln_conjf(x[i]), y[i])" : "kiln_cmul(kiln_conj(x[i]), y[i])")
                  : (f ? "kiln_cmulf(x[i], y[i])" : "kiln_cmul(x[i], y[i])");
    d->name = conj ? "kiln_vdot" : "kiln_cdot";
}
