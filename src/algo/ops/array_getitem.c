/* Indexing as NumPy users write it (issue 42 item 4): a[idx], a[idx] = v,
 * a[mask], a[mask] = v on N-d arrays, along the leading axes, and keys
 * that mix slices, integers and arrays on any axes. Built on the
 * flat take/put (array_index.c): an index into the first axis becomes the
 * flat indices of its row, expanded on the device by one cached
 * elementwise kernel. */
#include <stdint.h>
#include <string.h>
#include "algo/ops/ops_internal.h"
#include "algo/gen/builtin.h"
#include "algo/ops/complex.h"
#include "base/check.h"
#include "base/error.h"

/* Releases *r and sets it to NULL when st is a failure; returns st. */
static kiln_status drop_on_failure(kiln_status st, kiln_array **r) {
    if (st != KILN_OK) {
        kiln_array_release(*r);
        *r = NULL;
    }
    return st;
}

/* R = the elements of one row of a (the dims after the first k) */
static size_t row_size(const kiln_array *a, unsigned k) {
    size_t r = 1;
    for (unsigned d = k; d < a->ndim; d++)
        r *= a->shape[d];
    return r;
}

static kiln_status check_index_dtype(const char *what, const kiln_array *idx) {
    if (idx->dtype == KILN_BOOL || kiln__is_float_dtype(idx->dtype) ||
        kiln__is_complex_dtype(idx->dtype))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: indices have dtype %s; an integer dtype is needed (a "
                               "mask: kiln_array_index_mask)",
                               what, kiln_dtype_name(idx->dtype));
    return KILN_OK;
}

static kiln_status check_index(const char *what, kiln_queue *q, const kiln_array *a,
                               const kiln_array *idx) {
    if (!q || !a || !idx)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue, a and indices are required",
                               what);
    if (a->ndim == 0)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: a 0-d array has no axis to index (NumPy: too many "
                               "indices)",
                               what);
    kiln_status st = check_index_dtype(what, idx);
    if (st != KILN_OK)
        return st;
    if ((size_t)a->shape[0] > (size_t)PTRDIFF_MAX / (row_size(a, 1) ? row_size(a, 1) : 1))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: a is too large", what);
    if (idx->ndim + a->ndim - 1 > KILN_ARRAY_MAX_DIMS)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: indices of %u dimensions into %u give %u (at most %d)", what,
                               idx->ndim, a->ndim, idx->ndim + a->ndim - 1, KILN_ARRAY_MAX_DIMS);
    return KILN_OK;
}

/* *flat (INT64, idx->size * R) = the flat indices of the rows idx names:
 * idx[k] * R + j, with -n0..-1 counting from the end; any other index
 * becomes -(n0 * R) - 1, which the flat take/put's KILN_INDEX_ERROR mode
 * refuses (the event fails). */
static kiln_status expand(kiln_queue *q, const kiln_array *a, kiln_array *idx, size_t num_wait,
                          kiln_event *const *wait, kiln_event **event, kiln_array **flat) {
    size_t r = row_size(a, 1), n = idx->size * r;
    kiln_array *i64 = NULL, *dense = NULL;
    kiln_event *e = NULL;
    kiln_status st = kiln_array_astype(q, idx, KILN_INT64, num_wait, wait, &e, &i64);
    if (st == KILN_OK)
        st = kiln_array_reshape(i64, 1, &idx->size, &dense);
    if (st == KILN_OK)
        st = kiln_array_empty(a->context, KILN_INT64, 1, &n, flat);
    kiln_elementwise *ew = NULL;
    if (st == KILN_OK)
        st =
            kiln__elementwise_cached_ex(a->context, "long *f, const long *ix, long r, long n0",
                                        "long v = ix[i / r]; if (v < 0) v += n0; "
                                        "f[i] = v >= 0 && v < n0 ? v * r + i % r : -(n0 * r) - 1;",
                                        "kiln_index_expand", NULL, KILN_ELEMENTWISE_ANY_SHAPE, &ew);
    if (st == KILN_OK) {
        kiln_arg args[4] = { KILN_ARG_ARRAY(*flat), KILN_ARG_ARRAY(dense),
                             KILN_ARG_I64((int64_t)(r ? r : 1)),
                             KILN_ARG_I64((int64_t)a->shape[0]) };
        st = kiln_elementwise_launch(q, ew, n, 4, args, 1, &e, event);
    }
    kiln_elementwise_release(ew);
    kiln_event_release(e);
    kiln_array_release(i64);
    kiln_array_release(dense);
    return drop_on_failure(st, flat);
}

/* The result and the event are both required: a bad index fails the event. */
static kiln_status want_result_event(const char *what, kiln_event **event, kiln_array **result) {
    if (event)
        *event = NULL;
    if (result)
        *result = NULL;
    if (!result || !event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: the result and the event are required (a bad index "
                               "fails the event)",
                               what);
    return KILN_OK;
}

kiln_status kiln_array_index(kiln_queue *q, kiln_array *a, kiln_array *indices, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event, kiln_array **result) {
    static const char what[] = "kiln_array_index";
    kiln_status st = want_result_event(what, event, result);
    if (st == KILN_OK)
        st = check_index(what, q, a, indices);
    if (st != KILN_OK)
        return st;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    memcpy(shape, indices->shape, indices->ndim * sizeof *shape);
    for (unsigned d = 1; d < a->ndim; d++)
        shape[indices->ndim + d - 1] = a->shape[d];
    kiln_array *flat = NULL, *shaped = NULL;
    kiln_event *e = NULL;
    st = expand(q, a, indices, num_wait, wait, &e, &flat);
    if (st == KILN_OK)
        st = kiln_array_reshape(flat, indices->ndim + a->ndim - 1, shape, &shaped);
    if (st == KILN_OK)
        st = kiln_array_take(q, a, shaped, KILN_INDEX_ERROR, 1, &e, event, result);
    kiln_event_release(e);
    kiln_array_release(flat);
    kiln_array_release(shaped);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

/* The puts: the event is required (a bad index fails it); *event NULL. */
static kiln_status want_event(const char *what, kiln_event **event) {
    if (!event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: the event is required (a bad index fails it)", what);
    *event = NULL;
    return KILN_OK;
}

/* The puts write a dense a through flat indices. */
static kiln_status dense_target(const char *what, const kiln_array *a) {
    if (!kiln__array_contiguous(a))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: a must be dense (a strided view: copy it, assign, copy back)",
                               what);
    return KILN_OK;
}

/* *vals: values as the put of a[indices] reads them, one or one per
 * selected element (C order): values itself, or a view of it broadcast to
 * the selection's shape indices.shape + a.shape[1:] (NumPy's a[i] = v). */
static kiln_status put_values(const char *what, const kiln_array *a, const kiln_array *indices,
                              kiln_array *values, kiln_array **vals) {
    size_t want = indices->size * row_size(a, 1);
    unsigned nd = indices->ndim + a->ndim - 1;
    if (values->size == 1 || values->size == want) {
        kiln_array_retain(values);
        *vals = values;
        return KILN_OK;
    }
    if (nd > KILN_ARRAY_MAX_DIMS)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: %zu values for %zu indexed elements (give one value, or "
                               "one per element)",
                               what, values->size, want);
    size_t shape[KILN_ARRAY_MAX_DIMS];
    memcpy(shape, indices->shape, indices->ndim * sizeof *shape);
    memcpy(shape + indices->ndim, a->shape + 1, (a->ndim - 1) * sizeof *shape);
    return kiln__broadcast_to(what, "values", values, nd, shape, vals);
}

kiln_status kiln_array_index_put(kiln_queue *q, kiln_array *a, kiln_array *indices,
                                 kiln_array *values, size_t num_wait, kiln_event *const *wait,
                                 kiln_event **event) {
    static const char what[] = "kiln_array_index_put";
    kiln_status st = want_event(what, event);
    if (st != KILN_OK)
        return st;
    st = check_index(what, q, a, indices);
    if (st == KILN_OK && !values)
        st = kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: values is NULL", what);
    if (st != KILN_OK)
        return st;
    kiln_array *flat = NULL, *vals = NULL;
    kiln_event *e = NULL;
    st = put_values(what, a, indices, values, &vals);
    if (st == KILN_OK)
        st = expand(q, a, indices, num_wait, wait, &e, &flat);
    if (st == KILN_OK)
        st = kiln_array_put(q, a, flat, vals, KILN_INDEX_ERROR, KILN_PUT_ASSIGN_LAST, 1, &e, event);
    kiln_event_release(e);
    kiln_array_release(flat);
    kiln_array_release(vals);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

/* The indices of the true elements of mask (C order), right-sized INT64:
 * where(mask, arange, -1), then the non-negative ones. Blocks. */
static kiln_status nonzero(const char *what, kiln_queue *q, kiln_array *a, kiln_array *mask,
                           kiln_array **idx) {
    *idx = NULL;
    if (!q || !a || !mask)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue, a and mask are required",
                               what);
    int fits = mask->ndim >= 1 && mask->ndim <= a->ndim;
    for (unsigned d = 0; fits && d < mask->ndim; d++)
        fits = mask->shape[d] == a->shape[d];
    if (!fits)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the mask has %u dimensions that are not the first of a's "
                               "%u (NumPy's boolean index must match them)",
                               what, mask->ndim, a->ndim);
    size_t m = mask->size;
    int64_t none = -1;
    kiln_array *ar = NULL, *flat = NULL, *minus = NULL, *picked = NULL;
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, kiln_array_arange(q, KILN_INT64, m, 0, 1, 0, NULL, NULL, &ar));
    KILN__CHECK_CALL(&ck, kiln_array_reshape(mask, 1, &m, &flat));
    KILN__CHECK_CALL(&ck, kiln_array_from_host(a->context, KILN_INT64, 0, NULL, &none, &minus));
    KILN__CHECK_CALL(&ck, kiln_array_where(q, flat, ar, minus, 0, NULL, NULL, &picked));
    kiln_status st = KILN__CHECK_CALL(&ck, kiln_array_copy_if(q, picked, "x >= 0", idx));
    kiln_array_release(ar);
    kiln_array_release(flat);
    kiln_array_release(minus);
    kiln_array_release(picked);
    return st;
}

/* a viewed with its first k dims merged into one */
static kiln_status merged(kiln_array *a, unsigned k, kiln_array **view) {
    size_t shape[KILN_ARRAY_MAX_DIMS];
    shape[0] = 1;
    for (unsigned d = 0; d < k; d++)
        shape[0] *= a->shape[d];
    for (unsigned d = k; d < a->ndim; d++)
        shape[d - k + 1] = a->shape[d];
    return kiln_array_reshape(a, a->ndim - k + 1, shape, view);
}

kiln_status kiln_array_index_mask(kiln_queue *q, kiln_array *a, kiln_array *mask,
                                  kiln_array **result) {
    static const char what[] = "kiln_array_index_mask";
    if (!result)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: result is NULL", what);
    *result = NULL;
    kiln_array *idx = NULL, *view = NULL;
    kiln_event *e = NULL;
    kiln_status st = nonzero(what, q, a, mask, &idx);
    if (st == KILN_OK)
        st = merged(a, mask->ndim, &view);
    if (st == KILN_OK)
        st = kiln_array_index(q, view, idx, 0, NULL, &e, result);
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    kiln_array_release(idx);
    kiln_array_release(view);
    st = drop_on_failure(st, result);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

kiln_status kiln_array_index_mask_put(kiln_queue *q, kiln_array *a, kiln_array *mask,
                                      kiln_array *values) {
    static const char what[] = "kiln_array_index_mask_put";
    kiln_array *idx = NULL, *view = NULL;
    kiln_event *e = NULL;
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, nonzero(what, q, a, mask, &idx));
    KILN__CHECK(&ck, values != NULL, KILN_ERROR_NULL_HANDLE, "%s: values is NULL", what);
    KILN__CHECK_CALL(&ck, merged(a, mask->ndim, &view));
    if (kiln_array_size(idx))
        KILN__CHECK_CALL(&ck, kiln_array_index_put(q, view, idx, values, 0, NULL, &e));
    kiln_status st = e ? KILN__CHECK_CALL(&ck, kiln_event_wait(e)) : ck.st;
    kiln_event_release(e);
    kiln_array_release(idx);
    kiln_array_release(view);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", what);
}

/* ---- a[i0, ..., ik-1]: one integer index array per leading axis */

/* *dense: a itself (retained) when it is dense, else a dense copy, whose
 * event is *copied. */
static kiln_status dense_of(kiln_queue *q, kiln_array *a, size_t num_wait, kiln_event *const *wait,
                            kiln_event **copied, kiln_array **dense) {
    if (!kiln__array_contiguous(a))
        return kiln_array_copy(q, a, num_wait, wait, copied, dense);
    kiln_array_retain(a);
    *dense = a;
    return KILN_OK;
}

/* An index out of its axis's range: still negative after kiln_array_index
 * adds the merged axis's length, so the event fails as for one array. */
#define NOT_AN_INDEX (INT64_MIN / 2)

static kiln_status check_many(const char *what, kiln_queue *q, kiln_array *a, size_t k,
                              kiln_array *const *idx, unsigned *nd, size_t *shape) {
    if (!q || !a || !idx)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue, a and indices are required",
                               what);
    if (k == 0 || k > a->ndim)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: %zu index arrays for an array of %u dimensions (NumPy: too "
                               "many indices)",
                               what, k, a->ndim);
    *nd = 0;
    for (size_t j = 0; j < k; j++) {
        size_t got[KILN_ARRAY_MAX_DIMS];
        unsigned ng = 0;
        kiln_status st = idx[j] ? check_index_dtype(what, idx[j])
                                : kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                                                  "%s: indices[%zu] is NULL", what, j);
        if (st == KILN_OK)
            st = kiln_shape_broadcast(*nd, shape, idx[j]->ndim, idx[j]->shape, &ng, got);
        if (st != KILN_OK)
            return kiln__error_prefix(st, "%s: indices[%zu]", what, j);
        *nd = ng;
        memcpy(shape, got, ng * sizeof *got);
    }
    if (*nd + a->ndim - k > KILN_ARRAY_MAX_DIMS)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: the result would have %zu dimensions (at most %d)", what,
                               *nd + a->ndim - k, KILN_ARRAY_MAX_DIMS);
    return KILN_OK;
}

/* One axis folded into the merged index: c = c * n + v (v = ix, -n..-1
 * from the end), NOT_AN_INDEX once any axis's index is out of range. */
static kiln_status fold_axis(kiln_queue *q, kiln_array *c, kiln_array *ix, size_t n,
                             kiln_event **e) {
    kiln_array *view = NULL, *i64 = NULL;
    kiln_elementwise *ew = NULL;
    kiln_event *cast = NULL;
    static const char *const names[] = { "indices" };
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck,
                     kiln__broadcast_operands("kiln_array_index_many", c, 1, &ix, names, &view));
    KILN__CHECK_CALL(&ck, kiln_array_astype(q, view, KILN_INT64, 1, e, &cast, &i64));
    KILN__CHECK_CALL(&ck, kiln__elementwise_cached_ex(
                              c->context, "long *c, const long *ix, long len, long bad",
                              "long v = ix[i]; if (v < 0) v += len; "
                              "c[i] = c[i] >= 0 && v >= 0 && v < len ? c[i] * len + v : bad;",
                              "kiln_index_fold", NULL, 0, &ew));
    kiln_event_release(*e);
    *e = NULL;
    kiln_arg args[4] = { KILN_ARG_ARRAY(c), KILN_ARG_ARRAY(i64), KILN_ARG_I64((int64_t)n),
                         KILN_ARG_I64(NOT_AN_INDEX) };
    kiln_status st =
        KILN__CHECK_CALL(&ck, kiln_elementwise_launch(q, ew, c->size, 4, args, 1, &cast, e));
    kiln_elementwise_release(ew);
    kiln_event_release(cast);
    kiln_array_release(view);
    kiln_array_release(i64);
    return st;
}

/* *merged_index (INT64, the indices' broadcast shape): the index into a's
 * first k dims merged into one (merged()). */
static kiln_status merge_indices(kiln_queue *q, kiln_array *a, size_t k, kiln_array *const *idx,
                                 unsigned nd, const size_t *shape, size_t num_wait,
                                 kiln_event *const *wait, kiln_event **e,
                                 kiln_array **merged_index) {
    kiln_status st = kiln_array_zeros(q, KILN_INT64, nd, shape, num_wait, wait, e, merged_index);
    for (size_t j = 0; st == KILN_OK && j < k; j++)
        st = fold_axis(q, *merged_index, idx[j], a->shape[j], e);
    return drop_on_failure(st, merged_index);
}

kiln_status kiln_array_index_many(kiln_queue *q, kiln_array *a, size_t num_indices,
                                  kiln_array *const *indices, size_t num_wait,
                                  kiln_event *const *wait, kiln_event **event,
                                  kiln_array **result) {
    static const char what[] = "kiln_array_index_many";
    unsigned nd;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    kiln_status st = want_result_event(what, event, result);
    if (st == KILN_OK)
        st = check_many(what, q, a, num_indices, indices, &nd, shape);
    if (st != KILN_OK)
        return st;
    kiln_array *dense = NULL, *view = NULL, *c = NULL;
    kiln_event *copied = NULL, *e = NULL;
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, dense_of(q, a, num_wait, wait, &copied, &dense));
    KILN__CHECK_CALL(&ck, merged(dense, (unsigned)num_indices, &view));
    KILN__CHECK_CALL(&ck, merge_indices(q, a, num_indices, indices, nd, shape,
                                        copied ? 1 : num_wait, copied ? &copied : wait, &e, &c));
    KILN__CHECK_CALL(&ck, kiln_array_index(q, view, c, 1, &e, event, result));
    kiln_event_release(copied);
    kiln_event_release(e);
    kiln_array_release(dense);
    kiln_array_release(view);
    kiln_array_release(c);
    return ck.st == KILN_OK ? KILN_OK : kiln__error_prefix(ck.st, "%s", what);
}

kiln_status kiln_array_index_many_put(kiln_queue *q, kiln_array *a, size_t num_indices,
                                      kiln_array *const *indices, kiln_array *values,
                                      size_t num_wait, kiln_event *const *wait,
                                      kiln_event **event) {
    static const char what[] = "kiln_array_index_many_put";
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, want_event(what, event));
    unsigned nd = 0;
    size_t shape[KILN_ARRAY_MAX_DIMS];
    KILN__CHECK_CALL(&ck, check_many(what, q, a, num_indices, indices, &nd, shape));
    kiln_array *view = NULL, *c = NULL;
    kiln_event *e = NULL;
    KILN__CHECK_CALL(&ck, dense_target(what, a));
    KILN__CHECK_CALL(&ck, merged(a, (unsigned)num_indices, &view));
    KILN__CHECK_CALL(&ck,
                     merge_indices(q, a, num_indices, indices, nd, shape, num_wait, wait, &e, &c));
    KILN__CHECK_CALL(&ck, kiln_array_index_put(q, view, c, values, 1, &e, event));
    kiln_event_release(e);
    kiln_array_release(view);
    kiln_array_release(c);
    return ck.st == KILN_OK ? KILN_OK : kiln__error_prefix(ck.st, "%s", what);
}

/* ---- a[k0, ..., kn-1]: slices, integers and integer arrays mixed */

/* A key read against a's shape: the result's shape, where the broadcast
 * block of the integers and arrays stands in it, and each slice axis's
 * place and range. */
typedef struct key_plan {
    unsigned nd; /* the result's rank */
    size_t shape[KILN_ARRAY_MAX_DIMS];
    unsigned block_at, block_nd; /* the block's first axis in the result, its rank */
    size_t block[KILN_ARRAY_MAX_DIMS];
    unsigned pos[KILN_ARRAY_MAX_DIMS]; /* slice axis d: its axis in the result */
    ptrdiff_t first[KILN_ARRAY_MAX_DIMS], len[KILN_ARRAY_MAX_DIMS];
    int64_t integer[KILN_ARRAY_MAX_DIMS]; /* integer axis d: its index, from 0 */
} key_plan;

static kiln_index_key key_at(size_t num_keys, const kiln_index_key *keys, unsigned d) {
    return d < num_keys ? keys[d] : KILN_KEY_ALL;
}

/* Checks key d and folds it into p; *advanced: it is an integer or an array. */
static kiln_status plan_axis(const char *what, const kiln_array *a, kiln_index_key k, unsigned d,
                             key_plan *p, int *advanced) {
    ptrdiff_t n = (ptrdiff_t)a->shape[d];
    *advanced = k.kind != KILN_INDEX_SLICE;
    if (k.kind == KILN_INDEX_SLICE) {
        if (k.slice.step == 0)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: keys[%u] is a slice with step 0", what, d);
        p->len[d] = kiln__slice_len(k.slice, n, &p->first[d]);
        return KILN_OK;
    }
    if (k.kind == KILN_INDEX_INTEGER) {
        if (k.integer < -(int64_t)n || k.integer >= (int64_t)n)
            return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                                   "%s: keys[%u]: index %lld is out of range for axis %u of "
                                   "size %td",
                                   what, d, (long long)k.integer, d, n);
        p->integer[d] = k.integer < 0 ? k.integer + n : k.integer;
        return KILN_OK;
    }
    if (k.kind != KILN_INDEX_ARRAY)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: keys[%u] has kind %d (KILN_INDEX_SLICE, _INTEGER or _ARRAY)",
                               what, d, (int)k.kind);
    if (!k.array)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: keys[%u]'s array is NULL", what, d);
    kiln_status st = check_index_dtype(what, k.array);
    size_t got[KILN_ARRAY_MAX_DIMS];
    unsigned ng = 0;
    if (st == KILN_OK)
        st = kiln_shape_broadcast(p->block_nd, p->block, k.array->ndim, k.array->shape, &ng, got);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s: keys[%u]", what, d);
    p->block_nd = ng;
    memcpy(p->block, got, ng * sizeof *got);
    return KILN_OK;
}

static kiln_status plan_key(const char *what, kiln_queue *q, const kiln_array *a, size_t num_keys,
                            const kiln_index_key *keys, key_plan *p) {
    if (!q || !a || (num_keys && !keys))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue, a and keys are required",
                               what);
    if (num_keys > a->ndim)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: %zu keys for an array of %u dimensions (NumPy: too many "
                               "indices)",
                               what, num_keys, a->ndim);
    memset(p, 0, sizeof *p);
    int first_adv = -1, last_adv = -1, adjacent = 1;
    unsigned slices_before = 0, num_slices = 0;
    for (unsigned d = 0; d < a->ndim; d++) {
        int adv = 0;
        kiln_status st = plan_axis(what, a, key_at(num_keys, keys, d), d, p, &adv);
        if (st != KILN_OK)
            return st;
        if (!adv) {
            num_slices++;
            continue;
        }
        adjacent &= last_adv < 0 || last_adv == (int)d - 1;
        if (first_adv < 0) {
            first_adv = (int)d;
            slices_before = num_slices;
        }
        last_adv = (int)d;
    }
    if (num_slices + p->block_nd > KILN_ARRAY_MAX_DIMS)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: the result would have %u dimensions (at most %d)", what,
                               num_slices + p->block_nd, KILN_ARRAY_MAX_DIMS);
    /* NumPy: the block stands where the first integer or array stands when
     * they are adjacent, before every slice axis when they are not */
    p->block_at = adjacent ? slices_before : 0;
    p->nd = num_slices + p->block_nd;
    memcpy(p->shape + p->block_at, p->block, p->block_nd * sizeof *p->block);
    for (unsigned d = 0, j = 0; d < a->ndim; d++)
        if (key_at(num_keys, keys, d).kind == KILN_INDEX_SLICE) {
            p->pos[d] = j < p->block_at ? j : j + p->block_nd;
            p->shape[p->pos[d]] = (size_t)p->len[d];
            j++;
        }
    return KILN_OK;
}

/* *term: axis d's index into a for every element of the result, shaped
 * to broadcast against it (a slice's range on its own axis, the integer
 * as 0-d, an array on the block's trailing axes). Waits on *e and
 * replaces it with its own event where it enqueues work. */
static kiln_status key_term(kiln_queue *q, const key_plan *p, kiln_index_key k, unsigned d,
                            kiln_event **e, kiln_array **term) {
    size_t ones[KILN_ARRAY_MAX_DIMS];
    for (unsigned j = 0; j < p->nd; j++)
        ones[j] = 1;
    kiln_array *made = NULL;
    kiln_event *done = NULL;
    kiln_status st;
    if (k.kind == KILN_INDEX_INTEGER) {
        st = kiln_array_full(q, KILN_INT64, 0, NULL, KILN_ARG_I64(p->integer[d]), 1, e, &done,
                             &made);
    } else if (k.kind == KILN_INDEX_SLICE) {
        ones[p->pos[d]] = (size_t)p->len[d];
        st = kiln_array_arange(q, KILN_INT64, (size_t)p->len[d], (double)p->first[d],
                               (double)k.slice.step, 1, e, &done, &made);
    } else {
        unsigned m = k.array->ndim;
        memcpy(ones + p->block_at + p->block_nd - m, k.array->shape, m * sizeof *ones);
        if (kiln__array_contiguous(k.array)) {
            kiln_array_retain(k.array);
            made = k.array;
            st = KILN_OK;
        } else {
            st = kiln_array_copy(q, k.array, 1, e, &done, &made);
        }
    }
    if (done) {
        kiln_event_release(*e);
        *e = done;
    }
    if (st == KILN_OK)
        st = kiln_array_reshape(made, p->nd, ones, term);
    kiln_array_release(made);
    return st;
}

/* NumPy refuses an index out of its axis's range also where the result is
 * empty because a slice selects nothing (not where the block itself is
 * empty): no element reads the indices then, so they are checked here,
 * folded over the block alone and their minimum read back (this case
 * blocks). A failing check event with commands chained behind it is what
 * PoCL 5 mishandles (pocl/pocl#2216), so the answer comes back at once. */
static kiln_status check_block(const char *what, kiln_queue *q, const kiln_array *a,
                               size_t num_keys, const kiln_index_key *keys, const key_plan *p,
                               kiln_event **e) {
    kiln_array *c = NULL;
    kiln_event *made = NULL;
    kiln_status st = kiln_array_zeros(q, KILN_INT64, p->block_nd, p->block, 1, e, &made, &c);
    if (made) {
        kiln_event_release(*e);
        *e = made;
    }
    for (unsigned d = 0; st == KILN_OK && d < a->ndim; d++) {
        kiln_index_key k = key_at(num_keys, keys, d);
        if (k.kind == KILN_INDEX_ARRAY)
            st = fold_axis(q, c, k.array, a->shape[d], e);
    }
    int64_t least = 0;
    if (st == KILN_OK)
        st = kiln_event_wait(*e);
    if (st == KILN_OK)
        st = kiln_array_reduce(q, KILN_REDUCE_MIN, c, &least);
    kiln_array_release(c);
    if (st == KILN_OK && least < 0)
        st = kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                             "%s: an index is out of range for its axis (the selection is "
                             "empty, but NumPy checks the indices)",
                             what);
    return st;
}

/* *flat (INT64, the result's shape): the C-order flat index into a of
 * every element of a[key]; NOT_AN_INDEX where an array's index is out of
 * range. */
static kiln_status key_flat_index(const char *what, kiln_queue *q, const kiln_array *a,
                                  size_t num_keys, const kiln_index_key *keys, const key_plan *p,
                                  size_t num_wait, kiln_event *const *wait, kiln_event **e,
                                  kiln_array **flat) {
    kiln_status st = kiln_array_zeros(q, KILN_INT64, p->nd, p->shape, num_wait, wait, e, flat);
    size_t block = 1;
    for (unsigned j = 0; j < p->block_nd; j++)
        block *= p->block[j];
    if (st == KILN_OK && kiln_array_size(*flat) == 0 && block > 0)
        st = check_block(what, q, a, num_keys, keys, p, e);
    for (unsigned d = 0; st == KILN_OK && d < a->ndim; d++) {
        kiln_index_key k = key_at(num_keys, keys, d);
        kiln_array *t = NULL;
        st = key_term(q, p, k, d, e, &t);
        if (st == KILN_OK)
            st = fold_axis(q, *flat, t, a->shape[d], e);
        kiln_array_release(t);
    }
    return drop_on_failure(st, flat);
}

kiln_status kiln_array_index_key(kiln_queue *q, kiln_array *a, size_t num_keys,
                                 const kiln_index_key *keys, size_t num_wait,
                                 kiln_event *const *wait, kiln_event **event, kiln_array **result) {
    static const char what[] = "kiln_array_index_key";
    key_plan p;
    kiln_status st = want_result_event(what, event, result);
    if (st == KILN_OK)
        st = plan_key(what, q, a, num_keys, keys, &p);
    if (st != KILN_OK)
        return st;
    /* the flat indices, and a dense a (a copy of a strided one), both
     * after the caller's wait list; the take after both */
    kiln_array *c = NULL, *dense = NULL, *flat_a = NULL;
    kiln_event *deps[2] = { NULL, NULL };
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck,
                     key_flat_index(what, q, a, num_keys, keys, &p, num_wait, wait, &deps[0], &c));
    KILN__CHECK_CALL(&ck, dense_of(q, a, num_wait, wait, &deps[1], &dense));
    size_t n = a->size;
    KILN__CHECK_CALL(&ck, kiln_array_reshape(dense, 1, &n, &flat_a));
    KILN__CHECK_CALL(&ck, kiln_array_index(q, flat_a, c, deps[1] ? 2 : 1, deps, event, result));
    kiln_event_release(deps[0]);
    kiln_event_release(deps[1]);
    kiln_array_release(dense);
    kiln_array_release(flat_a);
    kiln_array_release(c);
    return ck.st == KILN_OK ? KILN_OK : kiln__error_prefix(ck.st, "%s", what);
}

kiln_status kiln_array_index_key_put(kiln_queue *q, kiln_array *a, size_t num_keys,
                                     const kiln_index_key *keys, kiln_array *values,
                                     size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    static const char what[] = "kiln_array_index_key_put";
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, want_event(what, event));
    key_plan p;
    KILN__CHECK_CALL(&ck, plan_key(what, q, a, num_keys, keys, &p));
    KILN__CHECK_CALL(&ck, dense_target(what, a));
    kiln_array *view = NULL, *c = NULL;
    kiln_event *e = NULL;
    size_t n = ck.st == KILN_OK ? a->size : 0;
    KILN__CHECK_CALL(&ck, kiln_array_reshape(a, 1, &n, &view));
    KILN__CHECK_CALL(&ck, key_flat_index(what, q, a, num_keys, keys, &p, num_wait, wait, &e, &c));
    KILN__CHECK_CALL(&ck, kiln_array_index_put(q, view, c, values, 1, &e, event));
    kiln_event_release(e);
    kiln_array_release(view);
    kiln_array_release(c);
    return ck.st == KILN_OK ? KILN_OK : kiln__error_prefix(ck.st, "%s", what);
}
