/* concatenate and stack: each input copied (kiln__array_copy_kernel, any
 * layouts) into its slice of a new dense array; stack's inputs get a new
 * axis of length 1 (a header change, no copy) and are concatenated. */
#include <stdlib.h>
#include <string.h>

#include "algo/gen/algo.h"
#include "algo/ops/ops_internal.h"
#include "base/error.h"

/* a with a dimension of length 1 inserted at ax (<= a->ndim). */
static kiln_array *expand(const kiln_array *a, unsigned ax) {
    kiln_array *e = kiln__array_clone_header(a);
    if (!e)
        return NULL;
    for (unsigned d = a->ndim; d > ax; d--) {
        e->shape[d] = a->shape[d - 1];
        e->strides[d] = a->strides[d - 1];
    }
    e->shape[ax] = 1;
    e->strides[ax] = 0;
    e->ndim = a->ndim + 1;
    return e;
}

static kiln_status join(kiln_queue *queue, size_t n, kiln_array *const *in, unsigned ax,
                        size_t num_wait, kiln_event *const *wait, kiln_event **event,
                        kiln_array **out, const char *what) {
    const kiln_array *a0 = in[0];
    size_t shape[KILN_ARRAY_MAX_DIMS];
    memcpy(shape, a0->shape, sizeof shape);
    shape[ax] = 0;
    for (size_t k = 0; k < n; k++) {
        const kiln_array *a = in[k];
        int same = a->ndim == a0->ndim && a->dtype == a0->dtype;
        for (unsigned d = 0; same && d < a->ndim; d++)
            same = d == ax || a->shape[d] == a0->shape[d];
        if (!same) {
            char t0[96], t1[96];
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "%s: array %zu is %s, array 0 is %s: they "
                                   "must have one dtype and the same shape "
                                   "but along axis %u",
                                   what, k, kiln__array_describe(a, t1, sizeof t1),
                                   kiln__array_describe(a0, t0, sizeof t0), ax);
        }
        if (__builtin_add_overflow(shape[ax], a->shape[ax], &shape[ax]))
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: the lengths along axis %u overflow", what, ax);
    }
    kiln_status st =
        kiln__array_make(kiln_queue_context(queue), a0->dtype, a0->ndim, shape, NULL, what, out);
    kiln_event **evs = kiln__calloc(n + 1, sizeof *evs);
    if (st == KILN_OK && !evs)
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    size_t ne = 0, at = 0;
    for (size_t k = 0; st == KILN_OK && k < n; k++) {
        size_t len = in[k]->shape[ax];
        if (!len || !in[k]->size) {
            at += len;
            continue;
        }
        /* the slice [at, at + len) of out along ax */
        kiln_array *dst = kiln__array_clone_header(*out);
        if (!dst) {
            st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
            break;
        }
        dst->offset += at * (size_t)dst->strides[ax];
        dst->shape[ax] = len;
        dst->size = in[k]->size;
        st = kiln__array_copy_kernel(queue, dst, in[k], num_wait, wait, &evs[ne]);
        if (evs[ne])
            ne++;
        kiln_array_release(dst);
        at += len;
    }
    if (st == KILN_OK && event)
        st = ne ? kiln_queue_marker(queue, ne, evs, event)
                : kiln_queue_marker(queue, num_wait, wait, event);
    for (size_t k = 0; evs && k < ne; k++)
        kiln_event_release(evs[k]);
    free(evs);
    if (st != KILN_OK) {
        kiln_array_release(*out);
        *out = NULL;
    }
    return st;
}

/* The checks both calls share; *ax: axis, counted from 0, of a result of
 * the inputs' dimensions and extra more. */
static kiln_status join_begin(kiln_queue *queue, size_t n, kiln_array *const *arrays, int axis,
                              int extra, kiln_event **event, kiln_array **out, const char *what,
                              unsigned *ax) {
    if (event)
        *event = NULL;
    if (!out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: out is required", what);
    *out = NULL;
    if (!n)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: no arrays to join (n = 0)",
                               what);
    if (!arrays)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: arrays is NULL", what);
    for (size_t k = 0; k < n; k++) {
        kiln_status st = kiln__array_check_queue(queue, arrays[k], what);
        if (st != KILN_OK)
            return st;
    }
    int nd = (int)arrays[0]->ndim + extra;
    if (axis < -nd || axis >= nd)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: axis %d is out of range for %s %d dimensions", what, axis,
                               extra ? "a result of" : "arrays of", nd);
    *ax = (unsigned)(axis < 0 ? axis + nd : axis);
    return KILN_OK;
}

kiln_status kiln_array_concatenate(kiln_queue *queue, size_t n, kiln_array *const *arrays, int axis,
                                   size_t num_wait, kiln_event *const *wait, kiln_event **event,
                                   kiln_array **out) {
    static const char what[] = "kiln_array_concatenate";
    unsigned ax;
    kiln_status st = join_begin(queue, n, arrays, axis, 0, event, out, what, &ax);
    if (st != KILN_OK)
        return st;
    return join(queue, n, arrays, ax, num_wait, wait, event, out, what);
}

kiln_status kiln_array_stack(kiln_queue *queue, size_t n, kiln_array *const *arrays, int axis,
                             size_t num_wait, kiln_event *const *wait, kiln_event **event,
                             kiln_array **out) {
    static const char what[] = "kiln_array_stack";
    unsigned ax;
    kiln_status st = join_begin(queue, n, arrays, axis, 1, event, out, what, &ax);
    if (st != KILN_OK)
        return st;
    int nd = (int)arrays[0]->ndim + 1;
    if (nd > KILN_ARRAY_MAX_DIMS)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: stacking %d-D arrays gives %d dimensions, more than "
                               "KILN_ARRAY_MAX_DIMS (%d)",
                               what, nd - 1, nd, KILN_ARRAY_MAX_DIMS);
    /* every input must have the shape of the first (stack's rule) */
    for (size_t k = 1; k < n; k++)
        if (!kiln__array_same_shape(arrays[k], arrays[0])) {
            char t0[96], t1[96];
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "%s: array %zu is %s, array 0 is %s: stack needs one shape",
                                   what, k, kiln__array_describe(arrays[k], t1, sizeof t1),
                                   kiln__array_describe(arrays[0], t0, sizeof t0));
        }
    kiln_array **ex = kiln__calloc(n, sizeof *ex);
    if (!ex)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    for (size_t k = 0; st == KILN_OK && k < n; k++)
        if (!(ex[k] = expand(arrays[k], ax)))
            st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    if (st == KILN_OK)
        st = join(queue, n, ex, ax, num_wait, wait, event, out, what);
    for (size_t k = 0; k < n; k++)
        kiln_array_release(ex[k]);
    free(ex);
    return st;
}
