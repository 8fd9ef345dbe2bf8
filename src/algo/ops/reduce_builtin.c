/* The built-in reductions over arrays (kiln_array_reduce / _dot and their
 * _async twins): reduction generators from the context's cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/gen/algo.h"
#include "algo/ops/ops_internal.h"
#include "algo/prim/prim.h"
#include "algo/ops/complex.h"
#include "base/error.h"

kiln_dtype kiln_dtype_reduce_result(kiln_reduce_op op, kiln_dtype dtype) {
    if (!kiln_dtype_size(dtype))
        return (kiln_dtype)0;
    /* float16 accumulates in float32 and gives a float32 result (as CuPy
     * does, for accuracy). */
    if (dtype == KILN_FLOAT16)
        dtype = KILN_FLOAT32;
    if (op == KILN_REDUCE_ANY || op == KILN_REDUCE_ALL)
        return KILN_BOOL; /* its bytes, so a UINT8 result array fits too */
    if (dtype == KILN_BOOL && (op == KILN_REDUCE_SUM || op == KILN_REDUCE_PROD))
        return KILN_INT64;             /* NumPy: the trues counted in the default int */
    if (kiln__is_complex_dtype(dtype)) /* no order: no min, max, arg* */
        return op == KILN_REDUCE_SUM || op == KILN_REDUCE_PROD ? dtype
               : op == KILN_REDUCE_NORM1 || op == KILN_REDUCE_NORM2 || op == KILN_REDUCE_NORM_INF
                   ? kiln__complex_part_dtype(dtype)
                   : (kiln_dtype)0;
    int fl = dtype == KILN_FLOAT32 || dtype == KILN_FLOAT64;
    switch (op) {
    case KILN_REDUCE_SUM:
    case KILN_REDUCE_PROD:
    case KILN_REDUCE_MIN:
    case KILN_REDUCE_MAX:
        return dtype;
    case KILN_REDUCE_NORM1:
    case KILN_REDUCE_NORM2:
    case KILN_REDUCE_NORM_INF:
        return fl ? dtype : KILN_FLOAT64;
    case KILN_REDUCE_ARGMIN:
    case KILN_REDUCE_ARGMAX:
        return KILN_INT64;
    case KILN_REDUCE_ANY:
    case KILN_REDUCE_ALL:
        break; /* above */
    }
    return (kiln_dtype)0;
}

static kiln_status red_make(void *arg, kiln__gen **gen) {
    const kiln__reduction_make_arg *a = arg;
    kiln_status st = kiln__reduction_make(arg, gen);
    /* every built-in map reads its arrays at [i] only; argmin/argmax also
     * use i as a value (kiln_argpair_make(x[i], i)) */
    if (st == KILN_OK && !strstr(a->d->map, "kiln_argpair_make"))
        kiln__reduction_allow_lanes((kiln_reduction *)*gen);
    return st;
}

static kiln_status builtin_cached(kiln_context *ctx, const char *what, const kiln_reduction_desc *d,
                                  const char *finish, const char *final_type, size_t final_size,
                                  kiln__gen **gen);
static kiln_status run_found(kiln_queue *queue, const char *what, kiln__gen *gen, size_t nv,
                             const kiln_arg *vals, kiln_array *result, void *host_result,
                             size_t num_wait, kiln_event *const *wait, kiln_event **event);

/* fk, fklen: the operation's short binary key (op and dtypes, at most 16
 * bytes; NULL: none), under which the reduction is found again without
 * building its long string key (kiln__gen_fast_find). */
static kiln_status run_builtin(kiln_queue *queue, const char *what, const unsigned char *fk,
                               size_t fklen, const kiln_reduction_desc *d, const char *finish,
                               const char *final_type, size_t final_size, size_t nv,
                               const kiln_arg *vals, kiln_array *result, void *host_result,
                               size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    /* The built-in reduction comes from the context's cache: no source is
     * generated or hashed after the first call. */
    kiln_context *ctx = kiln_queue_context(queue);
    kiln__gen *gen = fk ? kiln__gen_fast_find(ctx, fk, fklen) : NULL;
    kiln_status st = KILN_OK;
    if (!gen) {
        st = builtin_cached(ctx, what, d, finish, final_type, final_size, &gen);
        if (st == KILN_OK && fk)
            kiln__gen_fast_put(ctx, fk, fklen, gen);
    }
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    return run_found(queue, what, gen, nv, vals, result, host_result, num_wait, wait, event);
}

/* The reduction gen (a reference, released here) over vals. */
static kiln_status run_found(kiln_queue *queue, const char *what, kiln__gen *gen, size_t nv,
                             const kiln_arg *vals, kiln_array *result, void *host_result,
                             size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    /* the range: every element of the first array */
    kiln_status st =
        kiln_reduction_run_async(queue, (kiln_reduction *)gen, vals[0].value.array->size, nv, vals,
                                 result, host_result, num_wait, wait, event);
    kiln__gen_release(gen);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    return st;
}

/* The reduction of d from the context's cache under its string key. */
static kiln_status builtin_cached(kiln_context *ctx, const char *what, const kiln_reduction_desc *d,
                                  const char *finish, const char *final_type, size_t final_size,
                                  kiln__gen **gen) {
    kiln__sb key = { 0 };
    kiln__sb_addf(&key, "reduction|%s|%s|%s|%zu|%s|%s|%s|%s|%s|%s|%zu|%s",
                  d->initial ? d->initial : "", d->arguments, d->out_type, d->out_size, d->neutral,
                  d->reduce, d->map, d->preamble ? d->preamble : "", finish ? finish : "",
                  final_type ? final_type : "", final_size, d->name ? d->name : "");
    if (key.oom) {
        kiln__sb_free(&key);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    }
    kiln__reduction_make_arg ma = { ctx, d, finish, final_type, final_size };
    kiln_status st = kiln__gen_cached(ctx, key.p, red_make, &ma, gen);
    kiln__sb_free(&key);
    return st;
}

void kiln__arg_desc(int mx, kiln_dtype et, const char *X, kiln__arg_text *tx,
                    kiln_reduction_desc *d) {
    const char *t = kiln_dtype_name(et);
    snprintf(tx->pre, sizeof tx->pre,
             "typedef struct { %s v; long i; } kiln_argpair;\n"
             "KILN_FUNC kiln_argpair kiln_argpair_make(%s v, long i)\n"
             "{ kiln_argpair p; p.v = v; p.i = i; return p; }\n"
             "KILN_FUNC kiln_argpair kiln_argpair_pick(kiln_argpair a, "
             "kiln_argpair b)\n"
             "{\n"
             "    /* a NaN wins (NumPy): the first NaN's index */\n"
             "    if (b.v != b.v || a.v != a.v)\n"
             "        return (b.v != b.v && (a.v == a.v || b.i < a.i)) ? b : a;\n"
             "    return (b.v %c a.v || (b.v == a.v && b.i < a.i)) ? b : a;\n"
             "}\n",
             t, t, mx ? '>' : '<');
    char lit[96];
    if (mx)
        kiln__dtype_min_literal(et, lit, sizeof lit);
    else
        kiln__dtype_max_literal(et, lit, sizeof lit);
    snprintf(tx->neutral, sizeof tx->neutral, "kiln_argpair_make(%s, 9223372036854775807L)", lit);
    snprintf(tx->map, sizeof tx->map, "kiln_argpair_make(%s, i)", X);
    d->preamble = tx->pre;
    d->out_type = "kiln_argpair";
    d->out_size = 16;
    d->neutral = tx->neutral;
    d->reduce = "kiln_argpair_pick(a, b)";
    d->map = tx->map;
    d->name = mx ? "kiln_argmax" : "kiln_argmin";
}

/* The reduction op of a complex array a (kiln__complex_reduce_desc). */
static kiln_status reduce_complex(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                  kiln_array *result, void *host_result, size_t num_wait,
                                  kiln_event *const *wait, kiln_event **event) {
    kiln_reduction_desc cd = KILN_REDUCTION_DESC(.name = NULL);
    const char *cfin = NULL;
    kiln_status cst = kiln__complex_reduce_desc(op, a->dtype, &cd, &cfin);
    kiln_arg cv = KILN_ARG_ARRAY(a);
    const unsigned char fk[3] = { 'R', (unsigned char)op, (unsigned char)a->dtype };
    return cst != KILN_OK ? cst
                          : run_builtin(queue, "kiln_array_reduce", (unsigned)op < 256 ? fk : NULL,
                                        sizeof fk, &cd, cfin, NULL, 0, 1, &cv, result, host_result,
                                        num_wait, wait, event);
}

/* The result dtype *rd of op over a real array a, or the error of an
 * unknown op or of a min or max with no identity. */
static kiln_status reduce_result(kiln_reduce_op op, const kiln_array *a, const void *initial,
                                 kiln_dtype *rd) {
    *rd = kiln_dtype_reduce_result(op, a->dtype);
    if (!*rd) /* every dtype has every op: the op is unknown */
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "kiln_array_reduce: unknown op %d",
                               (int)op);
    /* NumPy: min and max of nothing raise (no identity) unless initial=
     * gives one */
    if ((op == KILN_REDUCE_MIN || op == KILN_REDUCE_MAX) && a->size == 0 && !initial)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_array_reduce: %s of an empty array has no identity "
                               "(as in NumPy); give an initial value "
                               "(kiln_array_reduce_initial)",
                               op == KILN_REDUCE_MIN ? "min" : "max");
    return KILN_OK;
}

/* The built-in reduction op of a; initial: NULL, or one element of the
 * result dtype folded in once (kiln_reduction_desc.initial). */
static kiln_status reduce_array(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                const void *initial, kiln_array *result, void *host_result,
                                size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    if (!queue || !a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_reduce: queue and array are "
                               "required");
    if (kiln__is_complex_dtype(a->dtype))
        return reduce_complex(queue, op, a, result, host_result, num_wait, wait, event);
    kiln_dtype rd;
    kiln_status st = reduce_result(op, a, initial, &rd);
    if (st != KILN_OK)
        return st;
    /* float16 is read as its ushort bits and widened to float: the element
     * type t is then float and X the widened element. */
    int f16 = a->dtype == KILN_FLOAT16;
    /* a bool array is read as its uchar bytes */
    kiln_dtype et = f16 ? KILN_FLOAT32 : a->dtype == KILN_BOOL ? KILN_UINT8 : a->dtype;
    const char *t = kiln_dtype_name(et);
    const char *rt = kiln__bits_type(rd);
    const char *X = f16 ? "kiln_h2f(x[i])" : "x[i]";
    char args[64], map[160], neutral[160];
    kiln__arg_text tx;
    snprintf(args, sizeof args, "const %s *x%s%s%s", f16 ? "ushort" : t, initial ? ", " : "",
             initial ? rt : "", initial ? " initial" : "");
    kiln_reduction_desc d = KILN_REDUCTION_DESC(.arguments = args, .out_type = rt, .neutral = "0",
                                                .reduce = "a+b", .map = X, .name = "kiln_sum");
    const char *finish = NULL, *final_type = NULL;
    size_t final_size = 0;
    switch (op) {
    case KILN_REDUCE_SUM:
        break;
    case KILN_REDUCE_PROD:
        d.neutral = "1";
        d.reduce = "a*b";
        d.name = "kiln_prod";
        break;
    case KILN_REDUCE_MIN:
        d.neutral = kiln__dtype_max_literal(et, neutral, sizeof neutral);
        d.reduce = kiln__is_float_dtype(et) ? "(b < a || b != b) ? b : a" : "b < a ? b : a";
        d.name = "kiln_min";
        break;
    case KILN_REDUCE_MAX:
        d.neutral = kiln__dtype_min_literal(et, neutral, sizeof neutral);
        d.reduce = kiln__is_float_dtype(et) ? "(b > a || b != b) ? b : a" : "b > a ? b : a";
        d.name = "kiln_max";
        break;
    case KILN_REDUCE_NORM1:
    case KILN_REDUCE_NORM2:
    case KILN_REDUCE_NORM_INF:
        if (op == KILN_REDUCE_NORM2) {
            snprintf(map, sizeof map, "(%s)%s*(%s)%s", rt, X, rt, X);
            finish = "sqrt(a)";
            d.name = "kiln_norm2";
        } else {
            snprintf(map, sizeof map, "fabs((%s)%s)", rt, X);
            d.name = op == KILN_REDUCE_NORM1 ? "kiln_norm1" : "kiln_norminf";
        }
        d.map = map;
        if (op == KILN_REDUCE_NORM_INF)
            d.reduce = "(b > a || b != b) ? b : a"; /* NaN propagates */
        break;
    case KILN_REDUCE_ANY:
    case KILN_REDUCE_ALL:
        /* NaN != 0: a NaN is true, as in NumPy */
        snprintf(map, sizeof map, "(uchar)(%s != 0)", X);
        d.map = map;
        d.neutral = op == KILN_REDUCE_ANY ? "0" : "1";
        d.reduce = op == KILN_REDUCE_ANY ? "a | b" : "a & b";
        d.name = op == KILN_REDUCE_ANY ? "kiln_any" : "kiln_all";
        break;
    case KILN_REDUCE_ARGMIN:
    case KILN_REDUCE_ARGMAX:
        if (initial)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "kiln_array_reduce: argmin/argmax take no initial value");
        kiln__arg_desc(op == KILN_REDUCE_ARGMAX, et, X, &tx, &d);
        finish = "a.i == 9223372036854775807L ? -1L : a.i";
        final_type = "long";
        final_size = 8;
        break;
    default:
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "kiln_array_reduce: unknown op %d",
                               (int)op);
    }
    kiln_arg v[2] = { KILN_ARG_ARRAY(a),
                      { .kind = KILN_ARG_SCALAR, .dtype = rd == KILN_BOOL ? KILN_UINT8 : rd } };
    if (initial) {
        memcpy(&v[1].value, initial, kiln_dtype_size(rd));
        d.initial = "initial";
    }
    const unsigned char fk[4] = { 'r', (unsigned char)op, (unsigned char)a->dtype,
                                  initial != NULL };
    return run_builtin(queue, "kiln_array_reduce", (unsigned)op < 256 ? fk : NULL, sizeof fk, &d,
                       finish, final_type, final_size, initial ? 2 : 1, v, result, host_result,
                       num_wait, wait, event);
}

kiln_status kiln_array_reduce_async(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                    kiln_array *result, void *host_result, size_t num_wait,
                                    kiln_event *const *wait, kiln_event **event) {
    return reduce_array(queue, op, a, NULL, result, host_result, num_wait, wait, event);
}

kiln_status kiln_array_reduce_initial_async(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                            kiln_arg initial, kiln_array *result, void *host_result,
                                            size_t num_wait, kiln_event *const *wait,
                                            kiln_event **event) {
    uint64_t element[2] = { 0, 0 };
    kiln_dtype rd = a ? kiln_dtype_reduce_result(op, a->dtype) : (kiln_dtype)0;
    kiln_status st = rd ? kiln__scalar_to_element(initial, rd, element, "kiln_array_reduce_initial")
                        : KILN_OK; /* no array or no such op: reduce_array says which */
    if (st != KILN_OK) {
        if (event)
            *event = NULL;
        return st;
    }
    return reduce_array(queue, op, a, element, result, host_result, num_wait, wait, event);
}

/* sum a*b, or sum conj(a)*b when conj (kiln_array_vdot). */
static kiln_status dot_async(kiln_queue *queue, kiln_array *a, kiln_array *b, int conj,
                             kiln_array *result, void *host_result, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    if (!queue || !a || !b)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_dot: queue and arrays are required");
    if (a->dtype != b->dtype)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "kiln_array_dot: dtypes %s and %s differ",
                               kiln_dtype_name(a->dtype), kiln_dtype_name(b->dtype));
    if (a->dtype == KILN_BOOL) /* vecdot takes numeric dtypes (the array API) */
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_array_dot: bool is not numeric (convert it first)");
    if (kiln__is_complex_dtype(a->dtype)) {
        kiln_reduction_desc cd = KILN_REDUCTION_DESC(.name = NULL);
        kiln__complex_dot_desc(a->dtype, conj, &cd);
        kiln_arg cv[2] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(b) };
        const unsigned char fk[3] = { 'D', (unsigned char)a->dtype, (unsigned char)(conj != 0) };
        return run_builtin(queue, conj ? "kiln_array_vdot" : "kiln_array_dot", fk, sizeof fk, &cd,
                           NULL, NULL, 0, 2, cv, result, host_result, num_wait, wait, event);
    }
    kiln_arg v[2] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(b) };
    const unsigned char fk[2] = { 'd', (unsigned char)a->dtype };
    /* found again: no descriptor to write (its snprintf was a few percent
     * of a small dot's call) */
    kiln__gen *found = kiln__gen_fast_find(kiln_queue_context(queue), fk, sizeof fk);
    if (found)
        return run_found(queue, "kiln_array_dot", found, 2, v, result, host_result, num_wait, wait,
                         event);
    /* float16: products and sum in float, a float32 result */
    int f16 = a->dtype == KILN_FLOAT16;
    const char *t = f16 ? "float" : kiln_dtype_name(a->dtype);
    char args[96];
    snprintf(args, sizeof args, "const %s *x, const %s *y", f16 ? "ushort" : t, f16 ? "ushort" : t);
    kiln_reduction_desc d =
        KILN_REDUCTION_DESC(.arguments = args, .out_type = t, .neutral = "0", .reduce = "a+b",
                            .map = f16 ? "kiln_h2f(x[i])*kiln_h2f(y[i])" : "x[i]*y[i]",
                            .name = "kiln_dot");
    return run_builtin(queue, "kiln_array_dot", fk, sizeof fk, &d, NULL, NULL, 0, 2, v, result,
                       host_result, num_wait, wait, event);
}

kiln_status kiln_array_dot_async(kiln_queue *queue, kiln_array *a, kiln_array *b,
                                 kiln_array *result, void *host_result, size_t num_wait,
                                 kiln_event *const *wait, kiln_event **event) {
    return dot_async(queue, a, b, 0, result, host_result, num_wait, wait, event);
}

kiln_status kiln_array_vdot_async(kiln_queue *queue, kiln_array *a, kiln_array *b,
                                  kiln_array *result, void *host_result, size_t num_wait,
                                  kiln_event *const *wait, kiln_event **event) {
    return dot_async(queue, a, b, 1, result, host_result, num_wait, wait, event);
}

/* Blocking forms: the asynchronous one, then a wait for its event. */
static kiln_status wait_for(kiln_status st, kiln_event *e) {
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    return st;
}

kiln_status kiln_array_reduce(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                              void *host_result) {
    if (!host_result)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_array_reduce: host_result is NULL");
    kiln_event *e = NULL;
    kiln_status st = kiln_array_reduce_async(queue, op, a, NULL, host_result, 0, NULL, &e);
    return wait_for(st, e);
}

kiln_status kiln_array_reduce_initial(kiln_queue *queue, kiln_reduce_op op, kiln_array *a,
                                      kiln_arg initial, void *host_result) {
    if (!host_result)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_reduce_initial: host_result is "
                               "NULL");
    kiln_event *e = NULL;
    kiln_status st =
        kiln_array_reduce_initial_async(queue, op, a, initial, NULL, host_result, 0, NULL, &e);
    return wait_for(st, e);
}

typedef kiln_status (*dot_async_fn)(kiln_queue *, kiln_array *, kiln_array *, kiln_array *, void *,
                                    size_t, kiln_event *const *, kiln_event **);

/* The blocking dot and vdot: their async form into host_result, waited for. */
static kiln_status dot_blocking(dot_async_fn async, const char *what, kiln_queue *queue,
                                kiln_array *a, kiln_array *b, void *host_result) {
    if (!host_result)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: host_result is NULL", what);
    kiln_event *e = NULL;
    kiln_status st = async(queue, a, b, NULL, host_result, 0, NULL, &e);
    return wait_for(st, e);
}

kiln_status kiln_array_dot(kiln_queue *queue, kiln_array *a, kiln_array *b, void *host_result) {
    return dot_blocking(kiln_array_dot_async, "kiln_array_dot", queue, a, b, host_result);
}

kiln_status kiln_array_vdot(kiln_queue *queue, kiln_array *a, kiln_array *b, void *host_result) {
    return dot_blocking(kiln_array_vdot_async, "kiln_array_vdot", queue, a, b, host_result);
}
