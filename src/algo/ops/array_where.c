/* Element-wise selection: kiln_array_where_out (NumPy's where, with promotion
 * and broadcasting) and kiln_array_clip_out. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "algo/ops/ops_internal.h"
#include "algo/prim/prim.h"
#include "base/error.h"

/* Text that is true where element i of array c (dtype d) is non-zero:
 * NaN is true and -0.0 false, as NumPy's bool(). */
static const char *truth(kiln_dtype d, const char *c, char *buf, size_t cap) {
    if (d == KILN_FLOAT16)
        snprintf(buf, cap, "((%s[i] & 0x7fff) != 0)", c);
    else
        snprintf(buf, cap, "(%s[i] != 0)", c);
    return buf;
}

static kiln_status run_cached(kiln_queue *q, const char *what, const char *args, const char *op,
                              const char *name, size_t nv, const kiln_arg *v, size_t n,
                              size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    kiln_elementwise *ew = NULL;
    /* where and clip write z[i] from their operands' [i] on every item */
    kiln_status st = kiln__elementwise_cached_ex(kiln_queue_context(q), args, op, name, NULL,
                                                 KILN__ELEMENTWISE_LANES, &ew);
    if (st == KILN_OK)
        st = kiln_elementwise_launch(q, ew, n, nv, v, num_wait, wait, event);
    kiln_elementwise_release(ew);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

kiln_status kiln_array_where_out(kiln_queue *queue, kiln_array *out, kiln_array *cond,
                                 kiln_array *a, kiln_array *b, size_t num_wait,
                                 kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_array_where_out";
    if (event)
        *event = NULL;
    kiln_array *ops[3] = { cond, a, b };
    static const char *const names[3] = { "cond", "a", "b" };
    kiln_dtype p = (kiln_dtype)0;
    kiln_status st =
        kiln__array_check_queues(queue, what, 4, (const kiln_array *const[]){ out, cond, a, b });
    if (st == KILN_OK)
        st = kiln__check_promoted(what, out, "out", a, "a", b, "b", &p);
    if (st != KILN_OK)
        return st;
    kiln_array *views[3];
    st = kiln__broadcast_operands(what, out, 3, ops, names, views);
    if (st != KILN_OK)
        return st;
    char args[160], op[1200], C[48], X[32], Y[32], CX[480], CY[480];
    snprintf(args, sizeof args, "const %s *c, const %s *x, const %s *y, %s *z",
             kiln__bits_type(cond->dtype), kiln__bits_type(a->dtype), kiln__bits_type(b->dtype),
             kiln__bits_type(p));
    truth(cond->dtype, "c", C, sizeof C);
    /* both operands loaded before the choice: a select, not a branch
     * that mispredicts on random conditions */
    if (a->dtype == p && b->dtype == p) {
        /* a bit copy: NaN payloads and float16 bits kept */
        snprintf(op, sizeof op,
                 "%s kiln_xv = x[i], kiln_yv = y[i]; z[i] = %s ? kiln_xv : "
                 "kiln_yv",
                 kiln__bits_type(p), C);
    } else {
        kiln__cast_value(a->dtype, p, kiln__read_elem(a->dtype, "x", "i", X, sizeof X), CX,
                         sizeof CX);
        kiln__cast_value(b->dtype, p, kiln__read_elem(b->dtype, "y", "i", Y, sizeof Y), CY,
                         sizeof CY);
        const char *ct = kiln__compute_type(p);
        snprintf(op, sizeof op,
                 "%s kiln_xv = %s; %s kiln_yv = %s; z[i] = %s%s ? kiln_xv : "
                 "kiln_yv%s",
                 ct, CX, ct, CY, p == KILN_FLOAT16 ? "kiln_f2h(" : "", C,
                 p == KILN_FLOAT16 ? ")" : "");
    }
    kiln_arg v[4] = { KILN_ARG_ARRAY(views[0]), KILN_ARG_ARRAY(views[1]), KILN_ARG_ARRAY(views[2]),
                      KILN_ARG_ARRAY(out) };
    st = run_cached(queue, what, args, op, "kiln_where", 4, v, out->size, num_wait, wait, event);
    for (int k = 0; k < 3; k++)
        kiln_array_release(views[k]);
    return st;
}

/* A bound of clip for an integer dtype: the integers in [lo, hi] are
 * [ceil(lo), floor(hi)], saturated to the dtype's range. */
static kiln_arg int_bound(kiln_dtype d, double x, int upper) {
    unsigned bits = 8 * (unsigned)kiln_dtype_size(d);
    x = upper ? floor(x) : ceil(x);
    if (kiln__dtype_kind(d) == 'u') {
        uint64_t mx = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
        uint64_t u = x <= 0 ? 0 : x >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)x;
        return KILN_ARG_U64(u > mx ? mx : u);
    }
    int64_t mx = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
    int64_t s = x <= -9223372036854775808.0  ? INT64_MIN
                : x >= 9223372036854775808.0 ? INT64_MAX
                                             : (int64_t)x;
    return KILN_ARG_I64(s > mx ? mx : s < -mx - 1 ? -mx - 1 : s);
}

kiln_status kiln_array_clip_out(kiln_queue *queue, kiln_array *out, kiln_array *a, kiln_arg lo_arg,
                                kiln_arg hi_arg, size_t num_wait, kiln_event *const *wait,
                                kiln_event **event) {
    static const char what[] = "kiln_array_clip_out";
    if (event)
        *event = NULL;
    double lo = 0, hi = 0;
    kiln_status st = kiln__scalar_to_double(lo_arg, &lo, "kiln_array_clip_out: lo");
    if (st == KILN_OK)
        st = kiln__scalar_to_double(hi_arg, &hi, "kiln_array_clip_out: hi");
    if (st == KILN_OK)
        st = kiln__array_check_queues(queue, what, 2, (const kiln_array *const[]){ out, a });
    if (st != KILN_OK)
        return st;
    if (out->dtype != a->dtype)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "%s: out has dtype %s, a has %s", what,
                               kiln_dtype_name(out->dtype), kiln_dtype_name(a->dtype));
    int fl = kiln__dtype_kind(a->dtype) == 'f';
    if (!fl && (lo != lo || hi != hi))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: a NaN bound for an integer array (%s)", what,
                               kiln_dtype_name(a->dtype));
    kiln_array *view;
    static const char *const names[1] = { "a" };
    st = kiln__broadcast_operands(what, out, 1, &a, names, &view);
    if (st != KILN_OK)
        return st;
    const char *t = kiln__bits_type(a->dtype), *ct = kiln__compute_type(a->dtype);
    char args[128], X[32], mx[256], op[640];
    snprintf(args, sizeof args, "const %s *x, %s lo, %s hi, %s *z", t, ct, ct, t);
    /* NumPy: minimum(maximum(a, lo), hi), NaN propagating from either */
    kiln__binary_expr(KILN_OP_MAX, a->dtype, kiln__read_elem(a->dtype, "x", "i", X, sizeof X), "lo",
                      mx, sizeof mx);
    char paren[270], mn[560];
    snprintf(paren, sizeof paren, "(%s)", mx);
    kiln__binary_expr(KILN_OP_MIN, a->dtype, paren, "hi", mn, sizeof mn);
    if (a->dtype == KILN_FLOAT16)
        snprintf(op, sizeof op, "z[i] = kiln_f2h(%s)", mn);
    else
        snprintf(op, sizeof op, "z[i] = %s", mn);
    kiln_arg v[4] = { KILN_ARG_ARRAY(view), KILN_ARG_F64(lo), KILN_ARG_F64(hi),
                      KILN_ARG_ARRAY(out) };
    if (a->dtype == KILN_FLOAT16) {
        v[1] = KILN_ARG_F64(kiln__round_to_half(lo));
        v[2] = KILN_ARG_F64(kiln__round_to_half(hi));
    } else if (!fl) {
        v[1] = int_bound(a->dtype, lo, 0);
        v[2] = int_bound(a->dtype, hi, 1);
    }
    st = run_cached(queue, what, args, op, "kiln_clip", 4, v, out->size, num_wait, wait, event);
    kiln_array_release(view);
    return st;
}
