/* Elementwise operators on arrays (binary, binary with a scalar, unary,
 * axpy), each a cached elementwise kernel built from an expression. */
#include <stdio.h>

#include "algo/ops/op_names.h"
#include "algo/ops/ops_internal.h"
#include "algo/ops/complex.h"
#include "algo/prim/prim.h"
#include "base/error.h"

/* float16 arithmetic on every device: arrays are passed as their ushort
 * bits, each element read is widened with kiln_h2f, the operation runs in
 * float and the result is rounded once with kiln_f2h (round to nearest
 * even), as CuPy and PyTorch do without half hardware. */

/* The text that reads element i of array `name` of dtype d. */
static const char *read_elem(kiln_dtype d, const char *name, char *buf, size_t cap) {
    snprintf(buf, cap, d == KILN_FLOAT16 ? "kiln_h2f(%s[i])" : "%s[i]", name);
    return buf;
}

/* The statement that stores expr into z[i] of dtype d. */
static void store_elem(kiln_dtype d, const char *expr, char *buf, size_t cap) {
    if (d == KILN_FLOAT16)
        snprintf(buf, cap, "z[i] = kiln_f2h((float)(%s))", expr);
    else
        snprintf(buf, cap, "z[i] = (%s)(%s)", kiln__compute_type(d), expr);
}

/* The expression of op on operands A and B (text), or NULL. Integer
 * division by zero gives 0 and INT_MIN / -1 wraps, instead of trapping. */
const char *kiln__binary_expr(kiln_binary_op op, kiln_dtype d, const char *A, const char *B,
                              char *buf, size_t cap) {
    /* the ops whose text is one format of A then B */
    static const char *const forms[] = {
        [KILN_OP_ADD] = "%s + %s",           [KILN_OP_SUB] = "%s - %s",
        [KILN_OP_MUL] = "%s * %s",           [KILN_OP_EQ] = "(%s == %s ? 1 : 0)",
        [KILN_OP_NE] = "(%s != %s ? 1 : 0)", [KILN_OP_LT] = "(%s < %s ? 1 : 0)",
        [KILN_OP_LE] = "(%s <= %s ? 1 : 0)", [KILN_OP_GT] = "(%s > %s ? 1 : 0)",
        [KILN_OP_GE] = "(%s >= %s ? 1 : 0)"
    };
    if ((unsigned)op < sizeof forms / sizeof *forms && forms[op]) {
        snprintf(buf, cap, forms[op], A, B);
        return buf;
    }
    switch (op) {
    case KILN_OP_DIV:
        if (kiln__is_float_dtype(d))
            snprintf(buf, cap, "%s / %s", A, B);
        else if (kiln__is_signed_dtype(d))
            snprintf(buf, cap, "(%s == 0 ? 0 : (%s == -1 ? 0 - %s : %s / %s))", B, B, A, A, B);
        else
            snprintf(buf, cap, "(%s == 0 ? 0 : %s / %s)", B, A, B);
        break;
    /* NaN propagates, whatever the argument order (NumPy's maximum and
     * minimum): B is taken if it wins or is NaN; a NaN A never loses. */
    case KILN_OP_MIN:
    case KILN_OP_MAX:
        if (kiln__is_float_dtype(d))
            snprintf(buf, cap, "((%s %c %s || %s != %s) ? %s : %s)", B,
                     op == KILN_OP_MIN ? '<' : '>', A, B, B, B, A);
        else
            snprintf(buf, cap, "(%s %c %s ? %s : %s)", B, op == KILN_OP_MIN ? '<' : '>', A, B, A);
        break;
    default: /* the ops of issue 42 (array_optab.c) */
        return kiln__binary_expr_ext(op, d, A, B, buf, cap);
    }
    return buf;
}

int kiln__binary_text(kiln_binary_op op, kiln_dtype da, kiln_dtype db, kiln_dtype dout, char *args,
                      size_t acap, char *opt, size_t ocap, char *pre_buf, size_t pcap,
                      const char **pre) {
    kiln_dtype p = kiln_dtype_promote(da, db);
    char X[32], Y[32], CX[480], CY[480], expr[1024];
    *pre = kiln__binary_preamble(op, p, pre_buf, pcap);
    kiln__cast_value(da, p, read_elem(da, "x", X, sizeof X), CX, sizeof CX);
    kiln__cast_value(db, p, read_elem(db, "y", Y, sizeof Y), CY, sizeof CY);
    if (!kiln__binary_expr(op, p, CX, CY, expr, sizeof expr))
        return 0;
    snprintf(args, acap, "const %s *x, const %s *y, %s *z", kiln__bits_type(da),
             kiln__bits_type(db), kiln__bits_type(dout));
    store_elem(dout, expr, opt, ocap);
    return 1;
}

/* Launches ew over the output (the last of v), then drops ew. */
static kiln_status launch_ew(kiln_queue *q, const char *what, kiln_elementwise *ew, size_t nv,
                             const kiln_arg *v, size_t num_wait, kiln_event *const *wait,
                             kiln_event **event) {
    kiln_status st =
        kiln_elementwise_launch(q, ew, v[nv - 1].value.array->size, nv, v, num_wait, wait, event);
    kiln_elementwise_release(ew);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    return st;
}

/* launch_ew once the build (st) went well; either way the two operands'
 * broadcast views go. */
static kiln_status launch_views(kiln_queue *q, const char *what, kiln_status st,
                                kiln_elementwise *ew, size_t nv, const kiln_arg *v,
                                kiln_array **views, size_t num_wait, kiln_event *const *wait,
                                kiln_event **event) {
    if (st == KILN_OK)
        st = launch_ew(q, what, ew, nv, v, num_wait, wait, event);
    else
        st = kiln__error_prefix(st, "%s", what);
    kiln_array_release(views[0]);
    kiln_array_release(views[1]);
    return st;
}

/* The elementwise an operation remembered under its fast key (the
 * operation and its dtypes: ctxcache.c), or NULL: then the caller builds
 * its source and caches it with cache_ew. */
static kiln_elementwise *fast_ew(kiln_queue *q, const unsigned char *key, size_t len) {
    return (kiln_elementwise *)kiln__gen_fast_find(kiln_queue_context(q), key, len);
}

/* Every operator here writes z[i] from its operands' [i] on every item:
 * GPUs may run it in lanes (KILN__ELEMENTWISE_LANES). */
static kiln_status ops_cached(kiln_queue *q, const char *args, const char *op, const char *name,
                              const char *pre, kiln_elementwise **ew) {
    return kiln__elementwise_cached_ex(kiln_queue_context(q), args, op, name, pre,
                                       KILN__ELEMENTWISE_LANES, ew);
}

static kiln_status cache_ew(kiln_queue *q, const unsigned char *key, size_t len, const char *args,
                            const char *op, const char *name, const char *pre,
                            kiln_elementwise **ew) {
    kiln_status st = ops_cached(q, args, op, name, pre, ew);
    if (st == KILN_OK)
        kiln__gen_fast_put(kiln_queue_context(q), key, len, (kiln__gen *)*ew);
    return st;
}

static kiln_status run_ew(kiln_queue *q, const char *what, const char *args, const char *op,
                          const char *name, const char *pre, size_t nv, const kiln_arg *v,
                          size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    kiln_elementwise *ew = NULL;
    kiln_status st = ops_cached(q, args, op, name, pre, &ew);
    /* the range: the output, always the last argument */
    if (st == KILN_OK)
        st = kiln_elementwise_launch(q, ew, v[nv - 1].value.array->size, nv, v, num_wait, wait,
                                     event);
    kiln_elementwise_release(ew);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    return st;
}

/* The operands of an operator: queue and context, shapes and dtypes.
 * b_name names a required second array operand ("b", "y"); NULL when the
 * operator has none (b is then NULL). */
static kiln_status check_operands(kiln_queue *q, kiln_binary_op op, kiln_array *out, kiln_array *a,
                                  kiln_array *b, const char *b_name, const char *what) {
    kiln_status st = kiln__array_check_queue(q, out, what);
    if (st == KILN_OK)
        st = kiln__array_check_queue(q, a, what);
    if (st == KILN_OK && b_name && !b)
        st = kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what, b_name);
    if (st == KILN_OK && b)
        st = kiln__array_check_queue(q, b, what);
    if (st != KILN_OK)
        return st;
    if ((b && (a->dtype != b->dtype || !kiln__array_same_shape(a, b))) ||
        !kiln__array_same_shape(a, out) ||
        (kiln__binary_bool_result(op) ? kiln__is_complex_dtype(out->dtype)
                                      : out->dtype != a->dtype))
        return kiln__array_mismatch(what, out, a, b);
    return KILN_OK;
}

/* Mixed dtypes compute in NumPy's promoted dtype (kiln_dtype_promote);
 * shapes broadcast (array_broadcast.c). */
kiln_status kiln_array_binary_out(kiln_queue *q, kiln_binary_op op, kiln_array *out, kiln_array *a,
                                  kiln_array *b, size_t num_wait, kiln_event *const *wait,
                                  kiln_event **event) {
    const char *what = "kiln_array_binary_out";
    if (event)
        *event = NULL;
    if (a && kiln__is_complex_dtype(a->dtype))
        return kiln__complex_binary(q, op, out, a, b, NULL, num_wait, wait, event);
    kiln_status st = kiln__array_check_queues(q, what, 3, (const kiln_array *const[]){ out, a, b });
    if (st != KILN_OK)
        return st;
    kiln_dtype p = kiln_dtype_promote(a->dtype, b->dtype);
    st = kiln__binary_check(what, (kiln_binary_op)op, p);
    if (st != KILN_OK)
        return st;
    if (kiln__is_complex_dtype(p))
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: %s of %s and %s: convert the real operand to %s first "
                               "(kiln_array_complex_cast_out)",
                               what, kiln__binary_op_name(op), kiln_dtype_name(a->dtype),
                               kiln_dtype_name(b->dtype), kiln_dtype_name(p));
    int to_bool = kiln__binary_bool_result(op);
    if (to_bool ? kiln__is_complex_dtype(out->dtype) : out->dtype != p)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: out has dtype %s, but %s of %s and %s gives "
                               "%s (NumPy's promotion)",
                               what, kiln_dtype_name(out->dtype), kiln__binary_op_name(op),
                               kiln_dtype_name(a->dtype), kiln_dtype_name(b->dtype),
                               kiln_dtype_name(to_bool ? KILN_BOOL : p));
    /* the source depends on the op and the dtypes only */
    const unsigned char key[5] = { 'b', (unsigned char)op, (unsigned char)a->dtype,
                                   (unsigned char)b->dtype, (unsigned char)out->dtype };
    int keyed = (unsigned)op < 256;
    kiln_elementwise *ew = keyed ? fast_ew(q, key, sizeof key) : NULL;
    char args[128], opt[1100], pre_buf[1024];
    const char *pre = NULL;
    if (!ew && !kiln__binary_text(op, a->dtype, b->dtype, out->dtype, args, sizeof args, opt,
                                  sizeof opt, pre_buf, sizeof pre_buf, &pre))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown op %d", what, (int)op);
    kiln_array *ops[2] = { a, b }, *views[2];
    static const char *const names[2] = { "a", "b" };
    st = kiln__broadcast_operands(what, out, 2, ops, names, views);
    if (st != KILN_OK) {
        kiln_elementwise_release(ew);
        return st;
    }
    if (!ew)
        st = keyed ? cache_ew(q, key, sizeof key, args, opt, "kiln_binary", pre, &ew)
                   : ops_cached(q, args, opt, "kiln_binary", pre, &ew);
    kiln_arg v[3] = { KILN_ARG_ARRAY(views[0]), KILN_ARG_ARRAY(views[1]), KILN_ARG_ARRAY(out) };
    return launch_views(q, what, st, ew, 3, v, views, num_wait, wait, event);
}

kiln_status kiln_array_binary_scalar_out(kiln_queue *q, kiln_binary_op op, kiln_array *out,
                                         kiln_array *a, kiln_arg scalar, size_t num_wait,
                                         kiln_event *const *wait, kiln_event **event) {
    const char *what = "kiln_array_binary_scalar_out";
    if (event)
        *event = NULL;
    if (a && kiln__is_complex_dtype(a->dtype)) {
        double parts[2];
        kiln_status cst = kiln__scalar_to_element(scalar, KILN_COMPLEX128, parts, what);
        return cst != KILN_OK
                   ? cst
                   : kiln__complex_binary(q, op, out, a, NULL, parts, num_wait, wait, event);
    }
    kiln_status st = check_operands(q, op, out, a, NULL, NULL, what);
    if (st == KILN_OK) /* the scalar is weak: the op computes in a's dtype */
        st = kiln__binary_check(what, op, a->dtype);
    kiln_arg s = { 0 };
    if (st == KILN_OK)
        st = kiln__weak_scalar(scalar, a->dtype, &s, what);
    if (st != KILN_OK)
        return st;
    int f16 = a->dtype == KILN_FLOAT16;
    const unsigned char key[4] = { 's', (unsigned char)op, (unsigned char)a->dtype,
                                   (unsigned char)out->dtype };
    int keyed = (unsigned)op < 256;
    kiln_elementwise *ew = keyed ? fast_ew(q, key, sizeof key) : NULL;
    if (!ew) {
        char expr[256], args[128], opt[320], X[32], pre_buf[1024];
        const char *pre = kiln__binary_preamble(op, a->dtype, pre_buf, sizeof pre_buf);
        if (!kiln__binary_expr(op, a->dtype, read_elem(a->dtype, "x", X, sizeof X), "s", expr,
                               sizeof expr))
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown op %d", what,
                                   (int)op);
        const char *t = kiln__bits_type(a->dtype);
        snprintf(args, sizeof args, "const %s *x, %s s, %s *z", t, f16 ? "float" : t,
                 kiln__bits_type(out->dtype));
        store_elem(out->dtype, expr, opt, sizeof opt);
        st = keyed ? cache_ew(q, key, sizeof key, args, opt, "kiln_binary_scalar", pre, &ew)
                   : ops_cached(q, args, opt, "kiln_binary_scalar", pre, &ew);
        if (st != KILN_OK)
            return kiln__error_prefix(st, "%s", what);
    }
    kiln_arg v[3] = { KILN_ARG_ARRAY(a), s, KILN_ARG_ARRAY(out) };
    return launch_ew(q, what, ew, 3, v, num_wait, wait, event);
}

int kiln__unary_text(kiln_unary_op op, kiln_dtype da, kiln_dtype dout, char *args, size_t acap,
                     char *opt, size_t ocap) {
    const char *t = kiln__bits_type(da);
    int fl = kiln__is_float_dtype(da);
    /* f: a function (or "-") applied to the element; whole: an integer
     * expression used as is (the first seven ops: their text as before
     * issue 42); ext: the later ops (array_optab.c). */
    const char *f = NULL, *whole = NULL;
    char X[32], expr[256], fx[64];
    static const char *const fns[] = {
        [KILN_OP_NEG] = "-",   [KILN_OP_SQRT] = "sqrt", [KILN_OP_EXP] = "exp",
        [KILN_OP_LOG] = "log", [KILN_OP_SIN] = "sin",   [KILN_OP_COS] = "cos"
    };
    read_elem(da, "x", X, sizeof X);
    if (op == KILN_OP_ABS && fl)
        f = "fabs";
    else if (op == KILN_OP_ABS)
        whole = kiln__is_signed_dtype(da) ? "(x[i] < 0 ? -x[i] : x[i])" : "x[i]";
    else if ((unsigned)op < sizeof fns / sizeof *fns && fns[op])
        f = fns[op];
    else if (kiln__unary_expr_ext(op, da, X, expr, sizeof expr))
        whole = expr;
    else
        return 0;
    if (f)
        snprintf(fx, sizeof fx, "%s(%s)", f, X);
    snprintf(args, acap, "const %s *x, %s *z", t, kiln__bits_type(dout));
    store_elem(dout, f ? fx : whole, opt, ocap);
    return 1;
}

kiln_status kiln_array_unary_out(kiln_queue *q, kiln_unary_op op, kiln_array *out, kiln_array *a,
                                 size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    const char *what = "kiln_array_unary_out";
    if (event)
        *event = NULL;
    if (a && kiln__is_complex_dtype(a->dtype))
        return kiln__complex_unary(q, op, out, a, num_wait, wait, event);
    kiln_status st = kiln__array_check_queue(q, out, what);
    if (st == KILN_OK)
        st = kiln__array_check_queue(q, a, what);
    if (st == KILN_OK)
        st = kiln__unary_check(what, op, a->dtype);
    if (st != KILN_OK)
        return st;
    int to_bool = kiln__unary_bool_result(op);
    if (!kiln__array_same_shape(a, out) ||
        (to_bool ? kiln__is_complex_dtype(out->dtype) : out->dtype != a->dtype)) {
        char to[96], ta[96];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: %s: shapes or dtypes do not match (out %s, a %s; the "
                               "result is %s)",
                               what, kiln__unary_op_name(op),
                               kiln__array_describe(out, to, sizeof to),
                               kiln__array_describe(a, ta, sizeof ta),
                               kiln_dtype_name(to_bool ? KILN_BOOL : a->dtype));
    }
    kiln_arg v[2] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(out) };
    const unsigned char key[4] = { 'u', (unsigned char)op, (unsigned char)a->dtype,
                                   (unsigned char)out->dtype };
    int keyed = (unsigned)op < 256;
    kiln_elementwise *ew = keyed ? fast_ew(q, key, sizeof key) : NULL;
    if (ew)
        return launch_ew(q, what, ew, 2, v, num_wait, wait, event);
    char args[128], opt[400];
    if (!kiln__unary_text(op, a->dtype, out->dtype, args, sizeof args, opt, sizeof opt))
        return kiln__error_set(KILN_ERROR_INTERNAL, 0, "%s: no text for %s", what,
                               kiln__unary_op_name(op));
    if (!keyed)
        return run_ew(q, what, args, opt, "kiln_unary", NULL, 2, v, num_wait, wait, event);
    st = cache_ew(q, key, sizeof key, args, opt, "kiln_unary", NULL, &ew);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    return launch_ew(q, what, ew, 2, v, num_wait, wait, event);
}

kiln_status kiln__check_promoted(const char *what, const kiln_array *z, const char *zn,
                                 const kiln_array *x, const char *xn, const kiln_array *y,
                                 const char *yn, kiln_dtype *p) {
    *p = kiln_dtype_promote(x->dtype, y->dtype);
    if (z->dtype != *p)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: %s has dtype %s, but %s %s with %s %s gives "
                               "%s (NumPy's promotion)",
                               what, zn, kiln_dtype_name(z->dtype), xn, kiln_dtype_name(x->dtype),
                               yn, kiln_dtype_name(y->dtype), kiln_dtype_name(*p));
    return KILN_OK;
}

/* x and y promoted and broadcast as in kiln_array_binary_out; alpha in the
 * promoted dtype (for FLOAT16 rounded to the nearest half first). */
kiln_status kiln_array_axpy_out(kiln_queue *q, kiln_array *z, kiln_arg alpha, kiln_array *x,
                                kiln_array *y, size_t num_wait, kiln_event *const *wait,
                                kiln_event **event) {
    const char *what = "kiln_array_axpy_out";
    if (event)
        *event = NULL;
    if (x && kiln__is_complex_dtype(x->dtype))
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "%s: complex arrays: use kiln_blas_axpy",
                               what);
    kiln_dtype p = (kiln_dtype)0;
    kiln_status st = kiln__array_check_queues(q, what, 3, (const kiln_array *const[]){ z, x, y });
    if (st == KILN_OK)
        st = kiln__check_promoted(what, z, "z", x, "x", y, "y", &p);
    if (st != KILN_OK)
        return st;
    if (p == KILN_BOOL) /* bool is not numeric (the array API standard) */
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: axpy does not take bool (it takes numeric dtypes)", what);
    if (kiln__is_complex_dtype(p))
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: %s with %s: complex arrays: use kiln_blas_axpy", what,
                               kiln_dtype_name(x->dtype), kiln_dtype_name(y->dtype));
    kiln_arg a = { 0 };
    st = kiln__weak_scalar(alpha, p, &a, what);
    if (st != KILN_OK)
        return st;
    kiln_array *ops[2] = { x, y }, *views[2];
    static const char *const names[2] = { "x", "y" };
    st = kiln__broadcast_operands(what, z, 2, ops, names, views);
    if (st != KILN_OK)
        return st;
    int f16 = p == KILN_FLOAT16;
    /* the source depends on the dtypes only: built once per context */
    const unsigned char key[3] = { 'a', (unsigned char)x->dtype, (unsigned char)y->dtype };
    kiln_elementwise *ew = fast_ew(q, key, sizeof key);
    if (!ew) {
        char args[160], X[32], Y[32], CX[480], CY[480], op[1100];
        snprintf(args, sizeof args, "%s a, const %s *x, const %s *y, %s *z",
                 f16 ? "float" : kiln__bits_type(p), kiln__bits_type(x->dtype),
                 kiln__bits_type(y->dtype), kiln__bits_type(p));
        kiln__cast_value(x->dtype, p, read_elem(x->dtype, "x", X, sizeof X), CX, sizeof CX);
        kiln__cast_value(y->dtype, p, read_elem(y->dtype, "y", Y, sizeof Y), CY, sizeof CY);
        snprintf(op, sizeof op, f16 ? "z[i] = kiln_f2h(a*%s + %s)" : "z[i] = a*%s + %s", CX, CY);
        st = cache_ew(q, key, sizeof key, args, op, "kiln_axpy", NULL, &ew);
    }
    kiln_arg v[4] = { a, KILN_ARG_ARRAY(views[0]), KILN_ARG_ARRAY(views[1]), KILN_ARG_ARRAY(z) };
    return launch_views(q, what, st, ew, 4, v, views, num_wait, wait, event);
}
