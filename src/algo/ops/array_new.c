/* The new-array forms (docs/api.md rule 21): kiln_X_V(queue, operands, ...,
 * &result) makes its result and runs kiln_X_V_out into it. Each works out
 * the result's dtype and shape the way its _out form checks them, makes a
 * dense array of the queue's context, and releases it again when the _out
 * form fails (*result is NULL then). Queued work holds its arrays (rule 5),
 * so nothing waits here, except the selections, whose size is the count. */
#include <string.h>
#include "algo/ops/ops_internal.h"
#include "base/error.h"

static kiln_status start(const char *what, kiln_queue *q, kiln_array **result, size_t n,
                         const kiln_array *const *ops, kiln_event **event) {
    if (event)
        *event = NULL;
    if (result)
        *result = NULL;
    if (!result || !q)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what,
                               q ? "the result pointer" : "queue");
    for (size_t i = 0; i < n; i++)
        if (!ops[i])
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: operand %zu is NULL", what,
                                   i + 1);
    return KILN_OK;
}

static kiln_status make(kiln_queue *q, kiln_dtype dtype, unsigned ndim, const size_t *shape,
                        kiln_array **result) {
    return kiln_array_empty(kiln_queue_context(q), dtype, ndim, shape, result);
}

/* Keeps *result when st is KILN_OK, else releases it. */
static kiln_status finish(kiln_status st, kiln_array **result) {
    if (st != KILN_OK && result) {
        kiln_array_release(*result);
        *result = NULL;
    }
    return st;
}

static kiln_status like(kiln_queue *q, const kiln_array *a, kiln_dtype dtype, kiln_array **r) {
    return make(q, dtype, a->ndim, a->shape, r);
}

/* Where the result dtype is 0 (the op does not take the dtypes), the
 * array is made with the operands' dtype and the _out form refuses the
 * call with its own message; nothing of the caller's is written. */
static kiln_dtype or_else(kiln_dtype dt, kiln_dtype fallback) {
    return dt ? dt : fallback;
}

/* a op b (b NULL: a op scalar, weak: a's dtype) */
static kiln_status binary_new(const char *what, kiln_queue *q, kiln_binary_op op, kiln_array *a,
                              kiln_array *b, kiln_arg scalar, size_t num_wait,
                              kiln_event *const *wait, kiln_event **event, kiln_array **out) {
    const kiln_array *ops[2] = { a, b };
    kiln_status st = start(what, q, out, b ? 2 : 1, ops, event);
    if (st != KILN_OK)
        return st;
    kiln_array *bb = b ? b : a;
    kiln_dtype dt = or_else(kiln_dtype_binary_result(op, a->dtype, bb->dtype),
                            or_else(kiln_dtype_promote(a->dtype, bb->dtype), a->dtype));
    unsigned nd;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    st = kiln_shape_broadcast(a->ndim, a->shape, bb->ndim, bb->shape, &nd, shape);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    st = make(q, dt, nd, shape, out);
    if (st == KILN_OK)
        st = b ? kiln_array_binary_out(q, op, *out, a, b, num_wait, wait, event)
               : kiln_array_binary_scalar_out(q, op, *out, a, scalar, num_wait, wait, event);
    return finish(st, out);
}

/* start, then *result like ops[shape_of] (its shape) of dtype (0: ops[0]'s) */
static kiln_status start_like(const char *what, kiln_queue *q, kiln_array **result, size_t n,
                              const kiln_array *const *ops, kiln_event **event, size_t shape_of,
                              kiln_dtype dtype) {
    kiln_status st = start(what, q, result, n, ops, event);
    if (st == KILN_OK)
        st = like(q, ops[shape_of], dtype ? dtype : ops[0]->dtype, result);
    return st;
}

/* out = fn(a) for the _out forms of one operand and no parameter */
typedef kiln_status (*one_out)(kiln_queue *, kiln_array *, kiln_array *, size_t,
                               kiln_event *const *, kiln_event **);
static kiln_status one_new(const char *what, one_out fn, kiln_queue *q, kiln_array *a,
                           kiln_dtype dtype, size_t num_wait, kiln_event *const *wait,
                           kiln_event **event, kiln_array **out) {
    const kiln_array *ops[1] = { a };
    kiln_status st = start_like(what, q, out, 1, ops, event, 0, dtype);
    if (st == KILN_OK)
        st = fn(q, *out, a, num_wait, wait, event);
    return finish(st, out);
}

kiln_status kiln_array_binary(kiln_queue *q, kiln_binary_op op, kiln_array *a, kiln_array *b,
                              size_t num_wait, kiln_event *const *wait, kiln_event **event,
                              kiln_array **out) {
    if (!b) {
        if (event)
            *event = NULL;
        if (out)
            *out = NULL;
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_array_binary: b is NULL");
    }
    return binary_new("kiln_array_binary", q, op, a, b, KILN_ARG_I32(0), num_wait, wait, event,
                      out);
}

kiln_status kiln_array_binary_scalar(kiln_queue *q, kiln_binary_op op, kiln_array *a,
                                     kiln_arg scalar, size_t num_wait, kiln_event *const *wait,
                                     kiln_event **event, kiln_array **out) {
    return binary_new("kiln_array_binary_scalar", q, op, a, NULL, scalar, num_wait, wait, event,
                      out);
}

kiln_status kiln_array_unary(kiln_queue *q, kiln_unary_op op, kiln_array *a, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event, kiln_array **out) {
    static const char what[] = "kiln_array_unary";
    const kiln_array *ops[1] = { a };
    kiln_status st = start(what, q, out, 1, ops, event);
    if (st != KILN_OK)
        return st;
    kiln_dtype dt = or_else(kiln_dtype_unary_result(op, a->dtype), a->dtype);
    st = like(q, a, dt, out);
    if (st == KILN_OK)
        st = kiln_array_unary_out(q, op, *out, a, num_wait, wait, event);
    return finish(st, out);
}

kiln_status kiln_array_astype(kiln_queue *q, kiln_array *a, kiln_dtype dtype, size_t num_wait,
                              kiln_event *const *wait, kiln_event **event, kiln_array **out) {
    return one_new("kiln_array_astype", kiln_array_astype_out, q, a, dtype, num_wait, wait, event,
                   out);
}

kiln_status kiln_array_copy(kiln_queue *q, kiln_array *a, size_t num_wait, kiln_event *const *wait,
                            kiln_event **event, kiln_array **out) {
    return one_new("kiln_array_copy", kiln_array_copy_out, q, a, a ? a->dtype : 0, num_wait, wait,
                   event, out);
}

kiln_status kiln_array_where(kiln_queue *q, kiln_array *cond, kiln_array *a, kiln_array *b,
                             size_t num_wait, kiln_event *const *wait, kiln_event **event,
                             kiln_array **out) {
    static const char what[] = "kiln_array_where";
    const kiln_array *ops[3] = { cond, a, b };
    kiln_status st = start(what, q, out, 3, ops, event);
    if (st != KILN_OK)
        return st;
    unsigned nd;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    st = kiln_shape_broadcast(a->ndim, a->shape, b->ndim, b->shape, &nd, shape);
    if (st == KILN_OK)
        st = kiln_shape_broadcast(cond->ndim, cond->shape, nd, shape, &nd, shape);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    kiln_dtype dt = or_else(kiln_dtype_promote(a->dtype, b->dtype), a->dtype);
    st = make(q, dt, nd, shape, out);
    if (st == KILN_OK)
        st = kiln_array_where_out(q, *out, cond, a, b, num_wait, wait, event);
    return finish(st, out);
}

kiln_status kiln_array_clip(kiln_queue *q, kiln_array *a, kiln_arg lo, kiln_arg hi, size_t num_wait,
                            kiln_event *const *wait, kiln_event **event, kiln_array **out) {
    const kiln_array *ops[1] = { a };
    kiln_status st = start_like("kiln_array_clip", q, out, 1, ops, event, 0, 0);
    if (st == KILN_OK)
        st = kiln_array_clip_out(q, *out, a, lo, hi, num_wait, wait, event);
    return finish(st, out);
}

kiln_status kiln_array_take(kiln_queue *q, kiln_array *a, kiln_array *indices, kiln_index_mode mode,
                            size_t num_wait, kiln_event *const *wait, kiln_event **event,
                            kiln_array **out) {
    const kiln_array *ops[2] = { a, indices };
    kiln_status st = start_like("kiln_array_take", q, out, 2, ops, event, 1, 0);
    if (st == KILN_OK)
        st = kiln_array_take_out(q, *out, a, indices, mode, num_wait, wait, event);
    return finish(st, out);
}

static kiln_status cum(const char *what, int prod, kiln_queue *q, kiln_array *a, int exclusive,
                       size_t num_wait, kiln_event *const *wait, kiln_event **event,
                       kiln_array **out) {
    const kiln_array *ops[1] = { a };
    kiln_status st = start_like(what, q, out, 1, ops, event, 0, 0);
    if (st == KILN_OK)
        st = prod ? kiln_array_cumprod_out(q, *out, a, exclusive, num_wait, wait, event)
                  : kiln_array_cumsum_out(q, *out, a, exclusive, num_wait, wait, event);
    return finish(st, out);
}

kiln_status kiln_array_cumsum(kiln_queue *q, kiln_array *a, int exclusive, size_t num_wait,
                              kiln_event *const *wait, kiln_event **event, kiln_array **out) {
    return cum("kiln_array_cumsum", 0, q, a, exclusive, num_wait, wait, event, out);
}

kiln_status kiln_array_cumprod(kiln_queue *q, kiln_array *a, int exclusive, size_t num_wait,
                               kiln_event *const *wait, kiln_event **event, kiln_array **out) {
    return cum("kiln_array_cumprod", 1, q, a, exclusive, num_wait, wait, event, out);
}

kiln_status kiln_array_conj(kiln_queue *q, kiln_array *a, size_t num_wait, kiln_event *const *wait,
                            kiln_event **event, kiln_array **out) {
    return one_new("kiln_array_conj", kiln_array_conj_out, q, a, a ? a->dtype : 0, num_wait, wait,
                   event, out);
}

/* ---- sorting */

kiln_status kiln_array_sort(kiln_queue *q, kiln_array *a, const kiln_sort_desc *desc,
                            size_t num_wait, kiln_event *const *wait, kiln_event **event,
                            kiln_array **out) {
    const kiln_array *ops[1] = { a };
    kiln_status st = start_like("kiln_array_sort", q, out, 1, ops, event, 0, 0);
    if (st == KILN_OK)
        st = kiln_array_sort_out(q, *out, NULL, a, NULL, desc, num_wait, wait, event);
    return finish(st, out);
}

kiln_status kiln_array_argsort(kiln_queue *q, kiln_array *a, const kiln_sort_desc *desc,
                               size_t num_wait, kiln_event *const *wait, kiln_event **event,
                               kiln_array **out) {
    const kiln_array *ops[1] = { a };
    kiln_status st = start_like("kiln_array_argsort", q, out, 1, ops, event, 0, KILN_INT64);
    if (st == KILN_OK)
        st = kiln_array_argsort_out(q, *out, a, desc, num_wait, wait, event);
    return finish(st, out);
}

kiln_status kiln_array_searchsorted(kiln_queue *q, kiln_array *sorted, kiln_array *v, int right,
                                    size_t num_wait, kiln_event *const *wait, kiln_event **event,
                                    kiln_array **out) {
    const kiln_array *ops[2] = { sorted, v };
    kiln_status st = start_like("kiln_array_searchsorted", q, out, 2, ops, event, 1, KILN_INT64);
    if (st == KILN_OK)
        st = kiln_array_searchsorted_out(q, *out, sorted, v, right, num_wait, wait, event);
    return finish(st, out);
}

/* ---- linear algebra */

kiln_status kiln_linalg_matmul(kiln_queue *q, kiln_array *a, kiln_array *b, size_t num_wait,
                               kiln_event *const *wait, kiln_event **event, kiln_array **out) {
    static const char what[] = "kiln_linalg_matmul";
    const kiln_array *ops[2] = { a, b };
    kiln_status st = start(what, q, out, 2, ops, event);
    if (st != KILN_OK)
        return st;
    if (a->ndim < 2 || b->ndim < 2)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: a has %u and b %u dimensions; both need 2 or more", what,
                               a->ndim, b->ndim);
    /* the batch dimensions are those of the operand that has them */
    const kiln_array *big = a->ndim >= b->ndim ? a : b;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    memcpy(shape, big->shape, sizeof shape);
    shape[big->ndim - 2] = a->shape[a->ndim - 2];
    shape[big->ndim - 1] = b->shape[b->ndim - 1];
    st = make(q, a->dtype, big->ndim, shape, out);
    if (st == KILN_OK)
        st = kiln_linalg_matmul_out(q, *out, a, b, num_wait, wait, event);
    return finish(st, out);
}

/* ---- selections: right-sized results (Blocks: the count sizes them) */

/* *out = the first count elements of full, as a dense array of their own
 * (full is released). */
static kiln_status right_size(kiln_queue *q, kiln_array *full, int64_t count, kiln_array **out) {
    kiln_slice s = KILN_SLICE(0, (ptrdiff_t)count, 1);
    kiln_array *view = NULL;
    kiln_status st = kiln_array_view(full, &s, &view);
    if (st == KILN_OK && (size_t)count == full->size) {
        *out = view;
        kiln_array_release(full);
        return KILN_OK;
    }
    if (st == KILN_OK)
        st = kiln_array_copy(q, view, 0, NULL, NULL, out);
    kiln_array_release(view);
    kiln_array_release(full);
    return st;
}

static kiln_status wait_event(kiln_status st, kiln_event *e) {
    if (st == KILN_OK && e)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    return st;
}

kiln_status kiln_array_copy_if(kiln_queue *q, kiln_array *a, const char *predicate,
                               kiln_array **out) {
    const kiln_array *ops[1] = { a };
    kiln_status st = start("kiln_array_copy_if", q, out, 1, ops, NULL);
    if (st != KILN_OK)
        return st;
    size_t n = a->size;
    kiln_array *full = NULL;
    kiln_event *e = NULL;
    int64_t count = 0;
    st = make(q, a->dtype, 1, &n, &full);
    if (st == KILN_OK)
        st = kiln_array_copy_if_out(q, full, NULL, &count, a, predicate, 0, NULL, &e);
    st = wait_event(st, e);
    if (st != KILN_OK) {
        kiln_array_release(full);
        return st;
    }
    return right_size(q, full, count, out);
}

kiln_status kiln_array_unique(kiln_queue *q, kiln_array *a, kiln_array **out, kiln_array **counts) {
    const kiln_array *ops[1] = { a };
    kiln_status st = start("kiln_array_unique", q, out, 1, ops, NULL);
    if (st != KILN_OK)
        return st;
    if (counts)
        *counts = NULL;
    size_t n = a->size;
    kiln_array *full = NULL, *full_counts = NULL;
    kiln_event *e = NULL;
    int64_t count = 0;
    st = make(q, a->dtype, 1, &n, &full);
    if (st == KILN_OK && counts)
        st = make(q, KILN_INT64, 1, &n, &full_counts);
    if (st == KILN_OK)
        st = kiln_array_unique_out(q, full, full_counts, NULL, &count, a, 0, NULL, &e);
    st = wait_event(st, e);
    if (st != KILN_OK) {
        kiln_array_release(full);
        kiln_array_release(full_counts);
        return st;
    }
    if (counts) {
        st = right_size(q, full_counts, count, counts);
        if (st != KILN_OK) {
            kiln_array_release(full);
            return st;
        }
    }
    st = right_size(q, full, count, out);
    if (st != KILN_OK && counts) {
        kiln_array_release(*counts);
        *counts = NULL;
    }
    return st;
}

/* ---- reductions over axes with NumPy's initial= */

kiln_status kiln_array_reduce_axes_initial(kiln_queue *q, kiln_reduce_op op, kiln_array *a,
                                           size_t naxes, const int *axes, kiln_arg initial,
                                           int keepdims, size_t num_wait, kiln_event *const *wait,
                                           kiln_event **event, kiln_array **out) {
    static const char what[] = "kiln_array_reduce_axes_initial";
    const kiln_array *ops[1] = { a };
    kiln_status st = start(what, q, out, 1, ops, event);
    if (st != KILN_OK)
        return st;
    /* op(initial, r): the binary op that joins two partial results */
    static const struct {
        kiln_reduce_op reduce;
        kiln_binary_op join;
    } joins[] = {
        { KILN_REDUCE_SUM, KILN_OP_ADD },        { KILN_REDUCE_PROD, KILN_OP_MUL },
        { KILN_REDUCE_MIN, KILN_OP_MIN },        { KILN_REDUCE_MAX, KILN_OP_MAX },
        { KILN_REDUCE_ANY, KILN_OP_LOGICAL_OR }, { KILN_REDUCE_ALL, KILN_OP_LOGICAL_AND }
    };
    kiln_binary_op combine = 0;
    for (size_t k = 0; k < sizeof joins / sizeof *joins; k++)
        if (joins[k].reduce == op)
            combine = joins[k].join;
    if (!combine)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: op %d takes no initial value (SUM, PROD, MIN, MAX, ANY "
                               "and ALL do)",
                               what, (int)op);
    kiln_dtype rd = kiln_dtype_reduce_axis_result(op, a->dtype);
    kiln_array *init = NULL, *r = NULL;
    kiln_event *e = NULL;
    if (!rd) /* it says why */
        return kiln_array_reduce_axes(q, op, a, naxes, axes, keepdims, num_wait, wait, event, out);
    uint64_t element[2];
    st = kiln__scalar_to_element(initial, rd, element, what);
    if (st != KILN_OK)
        return st;
    if (!a->size) {
        /* every result element reduces nothing (or there is none): the
         * shape and the axes' checks come from a SUM of the empty array */
        kiln_array *shape_of = NULL;
        st = kiln_array_reduce_axes(q, KILN_REDUCE_SUM, a, naxes, axes, keepdims, num_wait, wait,
                                    &e, &shape_of);
        if (st == KILN_OK)
            st =
                kiln_array_full(q, rd, shape_of->ndim, shape_of->shape, initial, 1, &e, event, out);
        kiln_event_release(e);
        kiln_array_release(shape_of);
        return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
    }
    st = kiln_array_from_host(kiln_queue_context(q), rd, 0, NULL, element, &init);
    if (st == KILN_OK)
        st = kiln_array_reduce_axes(q, op, a, naxes, axes, keepdims, num_wait, wait, &e, &r);
    if (st == KILN_OK)
        st = kiln_array_binary_out(q, combine, r, r, init, 1, &e, event);
    kiln_event_release(e);
    kiln_array_release(init);
    *out = r;
    st = finish(st, out);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

kiln_status kiln_array_reduce_axis_initial(kiln_queue *q, kiln_reduce_op op, kiln_array *a,
                                           int axis, kiln_arg initial, int keepdims,
                                           size_t num_wait, kiln_event *const *wait,
                                           kiln_event **event, kiln_array **out) {
    return kiln_array_reduce_axes_initial(q, op, a, 1, &axis, initial, keepdims, num_wait, wait,
                                          event, out);
}
