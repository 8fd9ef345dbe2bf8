/* kiln_array objects (include/kiln/array.h): typed strided views on a
 * buffer; creation, references, info and accessors. Views are in
 * array_view.c, transfers in array_transfer.c, operators in array_ops.c. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/array/array_internal.h"
#include "base/error.h"
#include "base/refcount.h"

int kiln__array_contiguous(const kiln_array *a) {
    if (a->size == 0)
        return 1;
    ptrdiff_t want = 1;
    for (unsigned d = a->ndim; d-- > 0;) {
        if (a->shape[d] != 1 && a->strides[d] != want)
            return 0;
        want *= (ptrdiff_t)a->shape[d];
    }
    return 1;
}

/* 1 when every element of a lies inside its buffer: the invariant every
 * constructor and view keeps, asserted where an array is handed to a
 * kernel or to a copy (the last points before memory is touched). */
int kiln__array_inside(const kiln_array *a) {
    if (!a->buffer || a->ndim > KILN_ARRAY_MAX_DIMS)
        return 0;
    if (a->size == 0)
        return 1;
    ptrdiff_t lo = (ptrdiff_t)a->offset, hi = lo, ext;
    if (a->offset > (size_t)PTRDIFF_MAX)
        return 0;
    for (unsigned d = 0; d < a->ndim; d++) {
        if (a->shape[d] - 1 > (size_t)PTRDIFF_MAX ||
            __builtin_mul_overflow((ptrdiff_t)(a->shape[d] - 1), a->strides[d], &ext) ||
            __builtin_add_overflow(ext < 0 ? lo : hi, ext, ext < 0 ? &lo : &hi))
            return 0;
    }
    size_t end;
    return lo >= 0 && !__builtin_mul_overflow((size_t)hi + 1, kiln_dtype_size(a->dtype), &end) &&
           end <= kiln_buffer_size(a->buffer);
}

int kiln__mul_size(size_t a, size_t b, size_t *r) {
    return !__builtin_mul_overflow(a, b, r);
}

int kiln__mul_stride(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r) {
    return !__builtin_mul_overflow(a, b, r);
}

int kiln__muladd_stride(ptrdiff_t a, ptrdiff_t b, ptrdiff_t c, ptrdiff_t *r) {
    ptrdiff_t p;
    return !__builtin_mul_overflow(a, b, &p) && !__builtin_add_overflow(p, c, r);
}

int kiln__shape_count(unsigned ndim, const size_t *shape, size_t elem, size_t *n, size_t *bytes) {
    size_t c = 1;
    int overflow = 0, zero = 0;
    for (unsigned d = 0; d < ndim; d++) {
        if (shape[d] == 0)
            zero = 1;
        if (!kiln__mul_size(c, shape[d], &c))
            overflow = 1;
    }
    if (zero) { /* a 0 anywhere: empty, whatever the other sizes */
        *n = 0;
        *bytes = 0;
        return 1;
    }
    size_t b = 0;
    if (overflow || !kiln__mul_size(c, elem, &b) || b > (size_t)PTRDIFF_MAX)
        return 0;
    *n = c;
    *bytes = b;
    return 1;
}

const char *kiln__shape_text(unsigned ndim, const size_t *shape, char *buf, size_t cap) {
    int at = snprintf(buf, cap, "(");
    for (unsigned d = 0; d < ndim && at > 0 && (size_t)at < cap; d++)
        at += snprintf(buf + at, cap - (size_t)at, "%s%zu", d ? ", " : "", shape[d]);
    if (at > 0 && (size_t)at < cap)
        snprintf(buf + at, cap - (size_t)at, "%s)", ndim == 1 ? "," : "");
    return buf;
}

kiln_status kiln__array_check_shape(const char *what, kiln_dtype dtype, unsigned ndim,
                                    const size_t *shape, size_t *size) {
    if (!kiln_dtype_size(dtype))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown dtype %d", what,
                               (int)dtype);
    if (ndim > KILN_ARRAY_MAX_DIMS)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: ndim %u is not in 0..%d (KILN_ARRAY_MAX_DIMS)", what, ndim,
                               KILN_ARRAY_MAX_DIMS);
    if (ndim && !shape)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: shape is NULL", what);
    /* Elements and bytes are both checked: n * dtype size must fit, or
     * the buffer would be allocated short. */
    size_t n, bytes;
    if (!kiln__shape_count(ndim, shape, kiln_dtype_size(dtype), &n, &bytes)) {
        char shown[220];
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: shape %s of %s overflows: its element count times %zu "
                               "bytes is more than %td bytes, more than memory can address",
                               what, kiln__shape_text(ndim, shape, shown, sizeof shown),
                               kiln_dtype_name(dtype), kiln_dtype_size(dtype), PTRDIFF_MAX);
    }
    *size = n;
    return KILN_OK;
}

static kiln_array *array_new(kiln_context *ctx, kiln_buffer *buf, kiln_dtype dtype) {
    kiln_array *a = kiln__calloc(1, sizeof *a);
    if (!a)
        return NULL;
    atomic_init(&a->refs, 1);
    kiln_context_retain(ctx);
    kiln_buffer_retain(buf);
    a->context = ctx;
    a->buffer = buf;
    a->dtype = dtype;
    return a;
}

kiln_array *kiln__array_new(kiln_buffer *buffer, kiln_dtype dtype) {
    return array_new(kiln_buffer_context(buffer), buffer, dtype);
}

void kiln__array_set_dense(kiln_array *a, unsigned ndim, const size_t *shape) {
    a->ndim = ndim;
    ptrdiff_t stride = 1;
    for (unsigned d = KILN_ARRAY_MAX_DIMS; d-- > 0;) {
        a->shape[d] = d < ndim ? shape[d] : 1;
        a->strides[d] = d < ndim ? stride : 0;
        /* checked: an empty array's other sizes may be huge (its strides
         * are then never used to address anything) */
        if (d < ndim && !kiln__mul_stride(stride, (ptrdiff_t)shape[d], &stride))
            stride = 0;
    }
}

kiln_status kiln__array_begin(const char *what, kiln_array **out, const void *in,
                              const char *in_name, kiln_dtype dtype, unsigned ndim,
                              const size_t *shape, size_t *n) {
    if (!out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: array is NULL", what);
    *out = NULL;
    if (!in)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what, in_name);
    return kiln__array_check_shape(what, dtype, ndim, shape, n);
}

kiln_status kiln__array_make(kiln_context *ctx, kiln_dtype dtype, unsigned ndim,
                             const size_t *shape, const void *host, const char *what,
                             kiln_array **out) {
    size_t n;
    kiln_status st = kiln__array_begin(what, out, ctx, "context", dtype, ndim, shape, &n);
    if (st != KILN_OK)
        return st;
    size_t bytes = n * kiln_dtype_size(dtype);
    kiln_buffer *buf = NULL;
    /* A zero-size array still has a (small) buffer: buffers need size > 0. */
    st = kiln_buffer_create(ctx, bytes ? bytes : 64, KILN_BUFFER_POOLED, bytes ? host : NULL, &buf);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    kiln_array *a = array_new(ctx, buf, dtype);
    kiln_buffer_release(buf);
    if (!a)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    kiln__array_set_dense(a, ndim, shape);
    a->size = n;
    *out = a;
    return KILN_OK;
}

kiln_array *kiln__array_clone_header(const kiln_array *a) {
    kiln_array *v = array_new(a->context, a->buffer, a->dtype);
    if (!v)
        return NULL;
    if (a->owner) /* the view keeps the foreign memory too */
        kiln__ref_take(&a->owner->refs);
    v->owner = a->owner;
    v->ndim = a->ndim;
    v->offset = a->offset;
    v->size = a->size;
    memcpy(v->shape, a->shape, sizeof v->shape);
    memcpy(v->strides, a->strides, sizeof v->strides);
    return v;
}

kiln_status kiln_array_empty(kiln_context *context, kiln_dtype dtype, unsigned ndim,
                             const size_t *shape, kiln_array **array) {
    return kiln__array_make(context, dtype, ndim, shape, NULL, "kiln_array_empty", array);
}

kiln_status kiln_array_from_host(kiln_context *context, kiln_dtype dtype, unsigned ndim,
                                 const size_t *shape, const void *host, kiln_array **array) {
    if (!host) {
        if (array)
            *array = NULL;
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_array_from_host: host is NULL");
    }
    return kiln__array_make(context, dtype, ndim, shape, host, "kiln_array_from_host", array);
}

kiln_status kiln_array_retain(kiln_array *a) {
    return kiln__ref_retain(a ? &a->refs : NULL, "kiln_array_retain", "array");
}

void kiln_array_release(kiln_array *a) {
    if (!kiln__ref_release(a ? &a->refs : NULL))
        return;
    kiln_buffer_release(a->buffer);
    kiln_context_release(a->context);
    kiln__array_owner *o = a->owner;
    free(a);
    if (o && kiln__ref_release(&o->refs)) {
        o->release(o->arg);
        free(o);
    }
}

/* The first version of kiln_array_info ends after contiguous. */
#define INFO_V1_SIZE (offsetof(kiln_array_info, contiguous) + sizeof(int))

kiln_status(kiln_array_get_info)(const kiln_array *a, kiln_array_info *info, size_t info_size) {
    if (!a || !info)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_array_get_info: %s is NULL",
                               a ? "info" : "array");
    if (info_size < INFO_V1_SIZE)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_array_get_info: info_size is %zu, less "
                               "than any version of kiln_array_info (call "
                               "it through the kiln_array_get_info macro)",
                               info_size);
    kiln_array_info full = { .dtype = a->dtype, .ndim = a->ndim };
    for (unsigned d = 0; d < KILN_ARRAY_MAX_DIMS; d++) {
        full.shape[d] = d < a->ndim ? a->shape[d] : 1;
        full.strides[d] = d < a->ndim ? a->strides[d] : 0;
    }
    full.offset = a->offset;
    full.size = a->size;
    full.contiguous = kiln__array_contiguous(a);
    /* An older caller's struct is a prefix of ours; a newer one's extra
     * members read 0. */
    size_t n = info_size < sizeof full ? info_size : sizeof full;
    memcpy(info, &full, n);
    memset((char *)info + n, 0, info_size - n);
    return KILN_OK;
}

size_t kiln_array_size(const kiln_array *a) {
    return a ? a->size : 0;
}
kiln_dtype kiln_array_dtype(const kiln_array *a) {
    return a ? a->dtype : (kiln_dtype)0;
}
kiln_buffer *kiln_array_buffer(const kiln_array *a) {
    return a ? a->buffer : NULL;
}
kiln_context *kiln_array_context(const kiln_array *a) {
    return a ? a->context : NULL;
}

kiln_status kiln__array_check_queue(kiln_queue *q, const kiln_array *a, const char *what) {
    if (!q || !a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", what,
                               !q ? "queue" : "array");
    if (kiln_queue_context(q) != a->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the array belongs to another context than "
                               "the queue",
                               what);
    return KILN_OK;
}

kiln_status kiln__array_check_queues(kiln_queue *q, const char *what, size_t n,
                                     const kiln_array *const *arrays) {
    kiln_status st = KILN_OK;
    for (size_t i = 0; i < n && st == KILN_OK; i++)
        st = kiln__array_check_queue(q, arrays[i], what);
    return st;
}

kiln_status kiln__array_op_begin(kiln_queue *q, const kiln_array *a, const kiln_array *b,
                                 kiln_event **event, const char *what) {
    if (event)
        *event = NULL;
    return kiln__array_check_queues(q, what, 2, (const kiln_array *const[]){ a, b });
}

int kiln__array_same_shape(const kiln_array *a, const kiln_array *b) {
    if (a->ndim != b->ndim)
        return 0;
    for (unsigned d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

const char *kiln__array_describe(const kiln_array *a, char *buf, size_t cap) {
    int at = snprintf(buf, cap, "%s ", kiln_dtype_name(a->dtype));
    if (at > 0 && (size_t)at < cap)
        kiln__shape_text(a->ndim, a->shape, buf + at, cap - (size_t)at);
    return buf;
}

kiln_status kiln__array_mismatch(const char *what, const kiln_array *out, const kiln_array *a,
                                 const kiln_array *b) {
    char to[96], ta[96], tb[96];
    return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                           "%s: shapes or dtypes do not match (out %s, a "
                           "%s%s%s)",
                           what, kiln__array_describe(out, to, sizeof to),
                           kiln__array_describe(a, ta, sizeof ta), b ? ", b " : "",
                           b ? kiln__array_describe(b, tb, sizeof tb) : "");
}
