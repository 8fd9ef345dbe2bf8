/* kiln_array: typed strided views on a buffer, their transfers and the
 * elementwise operators built on the elementwise generator. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "algo/builtin.h"
#include "base/error.h"

/* ------------------------------------------------------------- literals */

const char *kiln__dtype_max_literal(kiln_dtype d, char *buf, size_t cap) {
    const char *s = "0";
    switch (d) {
    case KILN_INT8: s = "(char)127"; break;
    case KILN_UINT8: s = "(uchar)255"; break;
    case KILN_INT16: s = "(short)32767"; break;
    case KILN_UINT16: s = "(ushort)65535"; break;
    case KILN_INT32: s = "(int)2147483647"; break;
    case KILN_UINT32: s = "(uint)4294967295u"; break;
    case KILN_INT64: s = "(long)9223372036854775807L"; break;
    case KILN_UINT64: s = "(ulong)18446744073709551615UL"; break;
    case KILN_FLOAT32: s = "(float)INFINITY"; break;
    case KILN_FLOAT64: s = "(double)INFINITY"; break;
    default: break;
    }
    snprintf(buf, cap, "%s", s);
    return buf;
}

const char *kiln__dtype_min_literal(kiln_dtype d, char *buf, size_t cap) {
    const char *s = "0";
    switch (d) {
    case KILN_INT8: s = "(char)(-128)"; break;
    case KILN_INT16: s = "(short)(-32768)"; break;
    case KILN_INT32: s = "(int)(-2147483647-1)"; break;
    case KILN_INT64: s = "(long)(-9223372036854775807L-1L)"; break;
    case KILN_UINT8: s = "(uchar)0"; break;
    case KILN_UINT16: s = "(ushort)0"; break;
    case KILN_UINT32: s = "(uint)0"; break;
    case KILN_UINT64: s = "(ulong)0"; break;
    case KILN_FLOAT32: s = "(float)(-INFINITY)"; break;
    case KILN_FLOAT64: s = "(double)(-INFINITY)"; break;
    default: break;
    }
    snprintf(buf, cap, "%s", s);
    return buf;
}

/* --------------------------------------------------------------- objects */

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

static kiln_status check_shape(const char *what, kiln_dtype dtype,
                               unsigned ndim, const size_t *shape,
                               size_t *size) {
    if (!kiln_dtype_size(dtype))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: unknown dtype %d", what, (int)dtype);
    if (ndim < 1 || ndim > KILN_ARRAY_MAX_DIMS)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: ndim %u is not in 1..%d", what, ndim,
                               KILN_ARRAY_MAX_DIMS);
    if (!shape)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: shape is NULL",
                               what);
    size_t n = 1;
    for (unsigned d = 0; d < ndim; d++) {
        if (shape[d] && n > (SIZE_MAX / 16) / shape[d])
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: shape too large", what);
        n *= shape[d];
    }
    *size = n;
    return KILN_OK;
}

static kiln_array *array_new(kiln_context *ctx, kiln_buffer *buf,
                             kiln_dtype dtype) {
    kiln_array *a = calloc(1, sizeof *a);
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

static kiln_status make_array(kiln_context *ctx, kiln_dtype dtype,
                              unsigned ndim, const size_t *shape,
                              const void *host, const char *what,
                              kiln_array **out) {
    if (!out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: array is NULL",
                               what);
    *out = NULL;
    if (!ctx)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: context is NULL", what);
    size_t n;
    kiln_status st = check_shape(what, dtype, ndim, shape, &n);
    if (st != KILN_OK)
        return st;
    size_t es = kiln_dtype_size(dtype), bytes = n * es;
    kiln_buffer *buf = NULL;
    /* A zero-size array still has a (small) buffer: buffers need size > 0. */
    st = kiln_buffer_create(ctx, bytes ? bytes : 64, KILN_BUFFER_READ_WRITE,
                            bytes ? host : NULL, &buf);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    kiln_array *a = array_new(ctx, buf, dtype);
    kiln_buffer_release(buf);
    if (!a)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", what);
    a->ndim = ndim;
    a->size = n;
    ptrdiff_t stride = 1;
    for (unsigned d = KILN_ARRAY_MAX_DIMS; d-- > 0;) {
        a->shape[d] = d < ndim ? shape[d] : 1;
        if (d < ndim) {
            a->strides[d] = stride;
            stride *= (ptrdiff_t)shape[d];
        }
    }
    *out = a;
    return KILN_OK;
}

kiln_status kiln_array_empty(kiln_context *context, kiln_dtype dtype,
                             unsigned ndim, const size_t *shape,
                             kiln_array **array) {
    return make_array(context, dtype, ndim, shape, NULL, "kiln_array_empty",
                      array);
}

kiln_status kiln_array_from_host(kiln_context *context, kiln_dtype dtype,
                                 unsigned ndim, const size_t *shape,
                                 const void *host, kiln_array **array) {
    if (!host) {
        if (array)
            *array = NULL;
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_from_host: host is NULL");
    }
    return make_array(context, dtype, ndim, shape, host,
                      "kiln_array_from_host", array);
}

kiln_status kiln_array_full(kiln_queue *queue, kiln_dtype dtype, unsigned ndim,
                            const size_t *shape, const void *value,
                            kiln_event **event, kiln_array **array) {
    if (event)
        *event = NULL;
    if (array)
        *array = NULL;
    if (!queue || !value)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_full: queue and value are required");
    kiln_array *a;
    kiln_status st = make_array(kiln_queue_context(queue), dtype, ndim, shape,
                                NULL, "kiln_array_full", &a);
    if (st != KILN_OK)
        return st;
    st = kiln_array_fill(queue, a, value, 0, NULL, event);
    if (st != KILN_OK) {
        kiln_array_release(a);
        return st;
    }
    *array = a;
    return KILN_OK;
}

kiln_status kiln_array_zeros(kiln_queue *queue, kiln_dtype dtype,
                             unsigned ndim, const size_t *shape,
                             kiln_event **event, kiln_array **array) {
    static const uint64_t zero = 0;
    return kiln_array_full(queue, dtype, ndim, shape, &zero, event, array);
}

kiln_status kiln_array_arange(kiln_queue *queue, kiln_dtype dtype, size_t n,
                              double start, double step, kiln_event **event,
                              kiln_array **array) {
    if (event)
        *event = NULL;
    if (array)
        *array = NULL;
    if (!queue || !array)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_arange: queue and array are "
                               "required");
    kiln_array *a;
    kiln_status st = make_array(kiln_queue_context(queue), dtype, 1, &n, NULL,
                                "kiln_array_arange", &a);
    if (st != KILN_OK)
        return st;
    kiln__plan plan;
    st = kiln__plan_for(queue, &plan);
    const char *t = kiln_dtype_name(dtype);
    const char *ft = plan.fp64 ? "double" : "float";
    char args[128], op[128];
    if (dtype == KILN_FLOAT16) {
        /* float16 stored as its bits, rounded from the float value */
        snprintf(args, sizeof args, "ushort *y, %s s0, %s ds", ft, ft);
        snprintf(op, sizeof op, "y[i] = kiln_f2h((float)(s0 + (%s)i * ds))",
                 ft);
    } else {
        snprintf(args, sizeof args, "%s *y, %s s0, %s ds", t, ft, ft);
        snprintf(op, sizeof op, "y[i] = (%s)(s0 + (%s)i * ds)", t, ft);
    }
    kiln_elementwise *ew = NULL;
    if (st == KILN_OK)
        st = kiln__elementwise_cached(kiln_queue_context(queue), args, op,
                                      "kiln_arange", &ew);
    if (st == KILN_OK) {
        kiln_arg v[3] = {KILN_ARG_ARRAY(a), KILN_ARG_F64(start),
                         KILN_ARG_F64(step)};
        st = kiln_elementwise_launch(queue, ew, a->size, 3, v, 0, NULL, event);
    }
    kiln_elementwise_release(ew);
    if (st != KILN_OK) {
        kiln_array_release(a);
        return kiln__error_prefix(st, "kiln_array_arange");
    }
    *array = a;
    return KILN_OK;
}

kiln_status kiln_array_retain(kiln_array *a) {
    if (!a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_retain: array is NULL");
    atomic_fetch_add(&a->refs, 1);
    return KILN_OK;
}

void kiln_array_release(kiln_array *a) {
    if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
        return;
    kiln_buffer_release(a->buffer);
    kiln_context_release(a->context);
    free(a);
}

kiln_status kiln_array_get_info(const kiln_array *a, kiln_array_info *info) {
    if (!a || !info)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_get_info: array and info are "
                               "required");
    memset(info, 0, sizeof *info);
    info->dtype = a->dtype;
    info->ndim = a->ndim;
    for (unsigned d = 0; d < KILN_ARRAY_MAX_DIMS; d++) {
        info->shape[d] = d < a->ndim ? a->shape[d] : 1;
        info->strides[d] = d < a->ndim ? a->strides[d] : 0;
    }
    info->offset = a->offset;
    info->size = a->size;
    info->contiguous = kiln__array_contiguous(a);
    return KILN_OK;
}

size_t kiln_array_size(const kiln_array *a) { return a ? a->size : 0; }
kiln_dtype kiln_array_dtype(const kiln_array *a) {
    return a ? a->dtype : (kiln_dtype)0;
}
kiln_buffer *kiln_array_buffer(const kiln_array *a) {
    return a ? a->buffer : NULL;
}
kiln_context *kiln_array_context(const kiln_array *a) {
    return a ? a->context : NULL;
}

static kiln_array *clone_header(const kiln_array *a) {
    kiln_array *v = array_new(a->context, a->buffer, a->dtype);
    if (!v)
        return NULL;
    v->ndim = a->ndim;
    v->offset = a->offset;
    v->size = a->size;
    memcpy(v->shape, a->shape, sizeof v->shape);
    memcpy(v->strides, a->strides, sizeof v->strides);
    return v;
}

kiln_status kiln_array_view(kiln_array *a, const kiln_slice *slices,
                            kiln_array **view) {
    if (!view)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_view: view is NULL");
    *view = NULL;
    if (!a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_view: array is NULL");
    size_t shape[KILN_ARRAY_MAX_DIMS];
    ptrdiff_t strides[KILN_ARRAY_MAX_DIMS];
    ptrdiff_t off = (ptrdiff_t)a->offset;
    size_t size = 1;
    for (unsigned d = 0; d < a->ndim; d++) {
        kiln_slice s = slices ? slices[d] : KILN_SLICE_ALL;
        ptrdiff_t n = (ptrdiff_t)a->shape[d];
        if (s.step == 0)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "kiln_array_view: dimension %u has step 0",
                                   d);
        ptrdiff_t b = s.start, e = s.stop, len;
        if (s.step > 0) {
            if (b < 0)
                b = b < -n ? 0 : b + n;
            if (b > n)
                b = n;
            if (e < 0)
                e = e < -n ? 0 : e + n;
            if (e > n)
                e = n;
            len = e > b ? (e - b + s.step - 1) / s.step : 0;
        } else {
            if (b < 0)
                b = b < -n ? -1 : b + n;
            if (b > n - 1)
                b = n - 1;
            if (e < 0)
                e = e < -n ? -1 : e + n;
            if (e > n - 1)
                e = n - 1;
            len = b > e ? (b - e + (-s.step) - 1) / (-s.step) : 0;
        }
        shape[d] = (size_t)len;
        strides[d] = a->strides[d] * s.step;
        if (len > 0)
            off += b * a->strides[d];
        size *= (size_t)len;
    }
    kiln_array *v = clone_header(a);
    if (!v)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_array_view");
    for (unsigned d = 0; d < a->ndim; d++) {
        v->shape[d] = shape[d];
        v->strides[d] = strides[d];
    }
    v->offset = size ? (size_t)off : a->offset;
    v->size = size;
    *view = v;
    return KILN_OK;
}

kiln_status kiln_array_swapaxes(kiln_array *a, unsigned d0, unsigned d1,
                                kiln_array **view) {
    if (!view)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_swapaxes: view is NULL");
    *view = NULL;
    if (!a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_swapaxes: array is NULL");
    if (d0 >= a->ndim || d1 >= a->ndim)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_array_swapaxes: dimensions %u, %u of a "
                               "%u-D array",
                               d0, d1, a->ndim);
    kiln_array *v = clone_header(a);
    if (!v)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_array_swapaxes");
    size_t s = v->shape[d0];
    v->shape[d0] = v->shape[d1];
    v->shape[d1] = s;
    ptrdiff_t t = v->strides[d0];
    v->strides[d0] = v->strides[d1];
    v->strides[d1] = t;
    *view = v;
    return KILN_OK;
}

kiln_status kiln_array_reshape(kiln_array *a, unsigned ndim,
                               const size_t *shape, kiln_array **view) {
    if (!view)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_reshape: view is NULL");
    *view = NULL;
    if (!a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_reshape: array is NULL");
    size_t n;
    kiln_status st = check_shape("kiln_array_reshape", a->dtype, ndim, shape,
                                 &n);
    if (st != KILN_OK)
        return st;
    if (n != a->size)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_array_reshape: %zu elements into a shape "
                               "of %zu",
                               a->size, n);
    if (!kiln__array_contiguous(a))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_array_reshape: the array is a strided "
                               "view; copy it first");
    kiln_array *v = clone_header(a);
    if (!v)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_array_reshape");
    v->ndim = ndim;
    ptrdiff_t stride = 1;
    for (unsigned d = KILN_ARRAY_MAX_DIMS; d-- > 0;) {
        v->shape[d] = d < ndim ? shape[d] : 1;
        v->strides[d] = d < ndim ? stride : 0;
        if (d < ndim)
            stride *= (ptrdiff_t)shape[d];
    }
    *view = v;
    return KILN_OK;
}

/* ------------------------------------------------------------- transfers */

static kiln_status check_queue(kiln_queue *q, const kiln_array *a,
                               const char *what) {
    if (!q || !a)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: queue and array are required", what);
    if (kiln_queue_context(q) != a->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the array belongs to another context than "
                               "the queue",
                               what);
    return KILN_OK;
}

/* An element-type name that copies the bits of dtype (float16 as ushort). */
static const char *bits_type(kiln_dtype d) {
    return d == KILN_FLOAT16 ? "ushort" : kiln_dtype_name(d);
}

/* Copy kernel over any layout: y[i] = x[i]. float16 travels as ushort. */
static kiln_status copy_kernel(kiln_queue *q, kiln_array *dst, kiln_array *src,
                               size_t num_wait, kiln_event *const *wait,
                               kiln_event **event) {
    char args[96];
    const char *t = bits_type(src->dtype);
    snprintf(args, sizeof args, "%s *y, const %s *x", t, t);
    kiln_array d2 = *dst, s2 = *src; /* headers only, for the dtype trick */
    if (src->dtype == KILN_FLOAT16) {
        d2.dtype = KILN_UINT16;
        s2.dtype = KILN_UINT16;
    }
    kiln_elementwise *ew = NULL;
    kiln_status st = kiln__elementwise_cached(
        kiln_queue_context(q), args, "y[i] = x[i]", "kiln_copy", &ew);
    if (st == KILN_OK) {
        kiln_arg v[2] = {KILN_ARG_ARRAY(&d2), KILN_ARG_ARRAY(&s2)};
        st = kiln_elementwise_launch(q, ew, d2.size, 2, v, num_wait, wait,
                                     event);
    }
    kiln_elementwise_release(ew);
    return st;
}

kiln_status kiln_array_read_async(kiln_queue *q, kiln_array *a, void *host,
                                  size_t num_wait, kiln_event *const *wait,
                                  kiln_event **event) {
    if (event)
        *event = NULL;
    kiln_status st = check_queue(q, a, "kiln_array_read_async");
    if (st != KILN_OK)
        return st;
    if (!host && a->size)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_read_async: host is NULL");
    size_t es = kiln_dtype_size(a->dtype);
    if (a->size == 0)
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    if (kiln__array_contiguous(a))
        return kiln_buffer_read_async(q, a->buffer, a->offset * es,
                                      a->size * es, host, num_wait, wait,
                                      event);
    /* Gather into a dense temporary, then read it. */
    kiln_array *tmp = NULL;
    kiln_event *e1 = NULL;
    st = kiln_array_empty(a->context, a->dtype, a->ndim, a->shape, &tmp);
    if (st == KILN_OK)
        st = copy_kernel(q, tmp, a, num_wait, wait, &e1);
    if (st == KILN_OK)
        st = kiln_buffer_read_async(q, tmp->buffer, 0, a->size * es, host, 1,
                                    &e1, event);
    kiln__event_drop(&e1);
    kiln_array_release(tmp);
    return st;
}

kiln_status kiln_array_read(kiln_queue *q, kiln_array *a, void *host) {
    kiln_event *e = NULL;
    kiln_status st = kiln_array_read_async(q, a, host, 0, NULL, &e);
    if (st == KILN_OK && e)
        st = kiln_event_wait(e);
    kiln__event_drop(&e);
    return st;
}

kiln_status kiln_array_write_async(kiln_queue *q, kiln_array *a,
                                   const void *host, size_t num_wait,
                                   kiln_event *const *wait,
                                   kiln_event **event) {
    if (event)
        *event = NULL;
    kiln_status st = check_queue(q, a, "kiln_array_write_async");
    if (st != KILN_OK)
        return st;
    if (!host && a->size)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_write_async: host is NULL");
    size_t es = kiln_dtype_size(a->dtype);
    if (a->size == 0)
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    if (kiln__array_contiguous(a))
        return kiln_buffer_write_async(q, a->buffer, a->offset * es,
                                       a->size * es, host, num_wait, wait,
                                       event);
    kiln_array *tmp = NULL;
    kiln_event *e1 = NULL;
    st = kiln_array_empty(a->context, a->dtype, a->ndim, a->shape, &tmp);
    if (st == KILN_OK)
        st = kiln_buffer_write_async(q, tmp->buffer, 0, a->size * es, host,
                                     num_wait, wait, &e1);
    if (st == KILN_OK)
        st = copy_kernel(q, a, tmp, 1, &e1, event);
    kiln__event_drop(&e1);
    kiln_array_release(tmp);
    return st;
}

kiln_status kiln_array_write(kiln_queue *q, kiln_array *a, const void *host) {
    kiln_event *e = NULL;
    kiln_status st = kiln_array_write_async(q, a, host, 0, NULL, &e);
    if (st == KILN_OK && e)
        st = kiln_event_wait(e);
    kiln__event_drop(&e);
    return st;
}

static kiln_arg arg_from_bytes(kiln_dtype d, const void *p) {
    kiln_arg a = {.kind = KILN_ARG_SCALAR, .dtype = d};
    memcpy(&a.value, p, kiln_dtype_size(d));
    return a;
}

kiln_status kiln_array_fill(kiln_queue *q, kiln_array *a, const void *value,
                            size_t num_wait, kiln_event *const *wait,
                            kiln_event **event) {
    if (event)
        *event = NULL;
    kiln_status st = check_queue(q, a, "kiln_array_fill");
    if (st != KILN_OK)
        return st;
    if (!value)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_array_fill: value is NULL");
    size_t es = kiln_dtype_size(a->dtype);
    if (a->size == 0)
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    if (kiln__array_contiguous(a))
        return kiln_buffer_fill(q, a->buffer, value, es, a->offset * es,
                                      a->size * es, num_wait, wait, event);
    const char *t = bits_type(a->dtype);
    char args[96];
    snprintf(args, sizeof args, "%s *y, %s v", t, t);
    kiln_array h = *a;
    kiln_dtype bd = a->dtype == KILN_FLOAT16 ? KILN_UINT16 : a->dtype;
    h.dtype = bd;
    kiln_elementwise *ew = NULL;
    st = kiln__elementwise_cached(a->context, args, "y[i] = v", "kiln_fill",
                                  &ew);
    if (st == KILN_OK) {
        kiln_arg v[2] = {KILN_ARG_ARRAY(&h), arg_from_bytes(bd, value)};
        st = kiln_elementwise_launch(q, ew, h.size, 2, v, num_wait, wait,
                                     event);
    }
    kiln_elementwise_release(ew);
    return st;
}

static int same_shape(const kiln_array *a, const kiln_array *b) {
    if (a->ndim != b->ndim)
        return 0;
    for (unsigned d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

kiln_status kiln_array_copy(kiln_queue *q, kiln_array *dst, kiln_array *src,
                            size_t num_wait, kiln_event *const *wait,
                            kiln_event **event) {
    if (event)
        *event = NULL;
    kiln_status st = check_queue(q, dst, "kiln_array_copy");
    if (st == KILN_OK)
        st = check_queue(q, src, "kiln_array_copy");
    if (st != KILN_OK)
        return st;
    if (dst->dtype != src->dtype || !same_shape(dst, src))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_array_copy: shapes or dtypes differ "
                               "(%s vs %s)",
                               kiln_dtype_name(dst->dtype),
                               kiln_dtype_name(src->dtype));
    size_t es = kiln_dtype_size(src->dtype);
    if (src->size == 0)
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    if (kiln__array_contiguous(src) && kiln__array_contiguous(dst))
        return kiln_buffer_copy(q, src->buffer, src->offset * es,
                                      dst->buffer, dst->offset * es,
                                      src->size * es, num_wait, wait, event);
    return copy_kernel(q, dst, src, num_wait, wait, event);
}

kiln_status kiln_array_copy_between(kiln_queue *dst_queue, kiln_array *dst,
                                    kiln_queue *src_queue, kiln_array *src) {
    kiln_status st = check_queue(dst_queue, dst, "kiln_array_copy_between");
    if (st == KILN_OK)
        st = check_queue(src_queue, src, "kiln_array_copy_between");
    if (st != KILN_OK)
        return st;
    if (dst->dtype != src->dtype || !same_shape(dst, src))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_array_copy_between: shapes or dtypes "
                               "differ");
    size_t bytes = src->size * kiln_dtype_size(src->dtype);
    if (!bytes)
        return KILN_OK;
    void *host = malloc(bytes);
    if (!host)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_array_copy_between: staging %zu bytes",
                               bytes);
    st = kiln_array_read(src_queue, src, host);
    if (st == KILN_OK)
        st = kiln_array_write(dst_queue, dst, host);
    free(host);
    return st;
}

/* ------------------------------------------------------------ operators */

static int is_float_dtype(kiln_dtype d) {
    return d == KILN_FLOAT16 || d == KILN_FLOAT32 || d == KILN_FLOAT64;
}

/* float16 arithmetic on every device: arrays are passed as their ushort
 * bits, each element read is widened with kiln_h2f, the operation runs in
 * float and the result is rounded once with kiln_f2h (round to nearest
 * even), as CuPy and PyTorch do without half hardware. */

/* The text that reads element i of array `name` of dtype d. */
static const char *read_elem(kiln_dtype d, const char *name, char *buf,
                             size_t cap) {
    if (d == KILN_FLOAT16)
        snprintf(buf, cap, "kiln_h2f(%s[i])", name);
    else
        snprintf(buf, cap, "%s[i]", name);
    return buf;
}

/* The statement that stores expr into z[i] of dtype d. */
static void store_elem(kiln_dtype d, const char *expr, char *buf,
                       size_t cap) {
    if (d == KILN_FLOAT16)
        snprintf(buf, cap, "z[i] = kiln_f2h((float)(%s))", expr);
    else
        snprintf(buf, cap, "z[i] = (%s)(%s)", kiln_dtype_name(d), expr);
}

/* A scalar for a float16 operation: rounded to the nearest half (ties to
 * even; beyond 65504 to inf), as the scalar of any dtype is converted to
 * that dtype first. The result is exact as a float. */
static double round_to_half(double v) {
    if (v != v || v == 0 || fabs(v) == INFINITY)
        return v;
    int e;
    frexp(v, &e); /* |v| = m * 2^e, m in [0.5, 1) */
    if (e < -13)
        e = -13; /* subnormals: a fixed quantum of 2^-24 */
    double q = ldexp(1.0, e - 11);
    double r = nearbyint(v / q) * q; /* the default mode: to nearest even */
    return fabs(r) > 65504.0 ? copysign(INFINITY, v) : r;
}
static int is_signed_dtype(kiln_dtype d) {
    return d == KILN_INT8 || d == KILN_INT16 || d == KILN_INT32 ||
           d == KILN_INT64;
}

/* The expression of op on operands A and B (text), or NULL. Integer
 * division by zero gives 0 and INT_MIN / -1 wraps, instead of trapping. */
static const char *binary_expr(kiln_binary_op op, kiln_dtype d, const char *A,
                               const char *B, char *buf, size_t cap) {
    switch (op) {
    case KILN_OP_ADD: snprintf(buf, cap, "%s + %s", A, B); break;
    case KILN_OP_SUB: snprintf(buf, cap, "%s - %s", A, B); break;
    case KILN_OP_MUL: snprintf(buf, cap, "%s * %s", A, B); break;
    case KILN_OP_DIV:
        if (is_float_dtype(d))
            snprintf(buf, cap, "%s / %s", A, B);
        else if (is_signed_dtype(d))
            snprintf(buf, cap,
                     "(%s == 0 ? 0 : (%s == -1 ? 0 - %s : %s / %s))", B, B, A,
                     A, B);
        else
            snprintf(buf, cap, "(%s == 0 ? 0 : %s / %s)", B, A, B);
        break;
    case KILN_OP_MIN: snprintf(buf, cap, "(%s < %s ? %s : %s)", B, A, B, A); break;
    case KILN_OP_MAX: snprintf(buf, cap, "(%s > %s ? %s : %s)", B, A, B, A); break;
    case KILN_OP_EQ: snprintf(buf, cap, "(%s == %s ? 1 : 0)", A, B); break;
    case KILN_OP_NE: snprintf(buf, cap, "(%s != %s ? 1 : 0)", A, B); break;
    case KILN_OP_LT: snprintf(buf, cap, "(%s < %s ? 1 : 0)", A, B); break;
    case KILN_OP_LE: snprintf(buf, cap, "(%s <= %s ? 1 : 0)", A, B); break;
    case KILN_OP_GT: snprintf(buf, cap, "(%s > %s ? 1 : 0)", A, B); break;
    case KILN_OP_GE: snprintf(buf, cap, "(%s >= %s ? 1 : 0)", A, B); break;
    default: return NULL;
    }
    return buf;
}

static kiln_status run_ew(kiln_queue *q, const char *what, const char *args,
                          const char *op, const char *name, size_t nv,
                          const kiln_arg *v, size_t num_wait,
                          kiln_event *const *wait, kiln_event **event) {
    kiln_elementwise *ew = NULL;
    kiln_status st = kiln__elementwise_cached(kiln_queue_context(q), args,
                                              op, name, &ew);
    /* the range: the output, always the last argument */
    if (st == KILN_OK)
        st = kiln_elementwise_launch(q, ew, v[nv - 1].value.array->size, nv,
                                     v, num_wait, wait, event);
    kiln_elementwise_release(ew);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    return st;
}

static kiln_status check_binary(kiln_queue *q, kiln_binary_op op,
                                kiln_array *out, kiln_array *a, kiln_array *b,
                                const char *what) {
    kiln_status st = check_queue(q, out, what);
    if (st == KILN_OK)
        st = check_queue(q, a, what);
    if (st == KILN_OK && b)
        st = check_queue(q, b, what);
    if (st != KILN_OK)
        return st;
    if ((b && (a->dtype != b->dtype || !same_shape(a, b))) ||
        !same_shape(a, out) ||
        (op < KILN_OP_EQ && out->dtype != a->dtype))
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: shapes or dtypes do not match (out %s, a "
                               "%s%s%s)",
                               what, kiln_dtype_name(out->dtype),
                               kiln_dtype_name(a->dtype), b ? ", b " : "",
                               b ? kiln_dtype_name(b->dtype) : "");
    return KILN_OK;
}

kiln_status kiln_array_binary(kiln_queue *q, kiln_binary_op op,
                              kiln_array *out, kiln_array *a, kiln_array *b,
                              size_t num_wait, kiln_event *const *wait,
                              kiln_event **event) {
    const char *what = "kiln_array_binary";
    if (event)
        *event = NULL;
    kiln_status st = check_binary(q, op, out, a, b, what);
    if (st == KILN_OK && !b)
        st = kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: b is NULL", what);
    if (st != KILN_OK)
        return st;
    char expr[256], args[128], opt[320], X[32], Y[32];
    if (!binary_expr(op, a->dtype, read_elem(a->dtype, "x", X, sizeof X),
                     read_elem(a->dtype, "y", Y, sizeof Y), expr, sizeof expr))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: unknown op %d", what, (int)op);
    const char *t = bits_type(a->dtype);
    snprintf(args, sizeof args, "const %s *x, const %s *y, %s *z", t, t,
             bits_type(out->dtype));
    store_elem(out->dtype, expr, opt, sizeof opt);
    kiln_arg v[3] = {KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(b),
                       KILN_ARG_ARRAY(out)};
    return run_ew(q, what, args, opt, "kiln_binary", 3, v, num_wait, wait,
                  event);
}

kiln_status kiln_array_binary_scalar(kiln_queue *q, kiln_binary_op op,
                                     kiln_array *out, kiln_array *a,
                                     double scalar, size_t num_wait,
                                     kiln_event *const *wait,
                                     kiln_event **event) {
    const char *what = "kiln_array_binary_scalar";
    if (event)
        *event = NULL;
    kiln_status st = check_binary(q, op, out, a, NULL, what);
    if (st != KILN_OK)
        return st;
    char expr[256], args[128], opt[320], X[32];
    if (!binary_expr(op, a->dtype, read_elem(a->dtype, "x", X, sizeof X), "s",
                     expr, sizeof expr))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: unknown op %d", what, (int)op);
    int f16 = a->dtype == KILN_FLOAT16;
    const char *t = bits_type(a->dtype);
    snprintf(args, sizeof args, "const %s *x, %s s, %s *z", t,
             f16 ? "float" : t, bits_type(out->dtype));
    store_elem(out->dtype, expr, opt, sizeof opt);
    if (f16)
        scalar = round_to_half(scalar);
    kiln_arg v[3] = {KILN_ARG_ARRAY(a), KILN_ARG_F64(scalar),
                       KILN_ARG_ARRAY(out)};
    return run_ew(q, what, args, opt, "kiln_binary_scalar", 3, v, num_wait,
                  wait, event);
}

kiln_status kiln_array_unary(kiln_queue *q, kiln_unary_op op, kiln_array *out,
                             kiln_array *a, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event) {
    const char *what = "kiln_array_unary";
    if (event)
        *event = NULL;
    kiln_status st = check_binary(q, KILN_OP_ADD, out, a, NULL, what);
    if (st != KILN_OK)
        return st;
    const char *t = bits_type(a->dtype);
    int fl = is_float_dtype(a->dtype);
    /* f: a function (or "-") applied to the element; whole: an integer
     * expression used as is. */
    const char *f = NULL, *whole = NULL;
    switch (op) {
    case KILN_OP_NEG: f = "-"; break;
    case KILN_OP_ABS:
        if (fl)
            f = "fabs";
        else
            whole = is_signed_dtype(a->dtype) ? "(x[i] < 0 ? -x[i] : x[i])"
                                              : "x[i]";
        break;
    case KILN_OP_SQRT: f = fl ? "sqrt" : NULL; break;
    case KILN_OP_EXP: f = fl ? "exp" : NULL; break;
    case KILN_OP_LOG: f = fl ? "log" : NULL; break;
    case KILN_OP_SIN: f = fl ? "sin" : NULL; break;
    case KILN_OP_COS: f = fl ? "cos" : NULL; break;
    default:
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: unknown op %d", what, (int)op);
    }
    if (!f && !whole)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: op %d needs a float dtype, not %s", what,
                               (int)op, kiln_dtype_name(a->dtype));
    char args[128], opt[160], X[32], expr[64];
    if (f)
        snprintf(expr, sizeof expr, "%s(%s)", f,
                 read_elem(a->dtype, "x", X, sizeof X));
    else
        snprintf(expr, sizeof expr, "%s", whole);
    snprintf(args, sizeof args, "const %s *x, %s *z", t, t);
    store_elem(a->dtype, expr, opt, sizeof opt);
    kiln_arg v[2] = {KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(out)};
    return run_ew(q, what, args, opt, "kiln_unary", 2, v, num_wait, wait,
                  event);
}

kiln_status kiln_array_axpy(kiln_queue *q, kiln_array *z, double alpha,
                            kiln_array *x, kiln_array *y, size_t num_wait,
                            kiln_event *const *wait, kiln_event **event) {
    const char *what = "kiln_array_axpy";
    if (event)
        *event = NULL;
    kiln_status st = check_binary(q, KILN_OP_ADD, z, x, y, what);
    if (st == KILN_OK && !y)
        st = kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: y is NULL", what);
    if (st != KILN_OK)
        return st;
    int f16 = x->dtype == KILN_FLOAT16;
    const char *t = bits_type(x->dtype);
    char args[128];
    snprintf(args, sizeof args, "%s a, const %s *x, const %s *y, %s *z",
             f16 ? "float" : t, t, t, t);
    if (f16)
        alpha = round_to_half(alpha);
    kiln_arg v[4] = {KILN_ARG_F64(alpha), KILN_ARG_ARRAY(x),
                       KILN_ARG_ARRAY(y), KILN_ARG_ARRAY(z)};
    return run_ew(q, what, args,
                  f16 ? "z[i] = kiln_f2h(a*kiln_h2f(x[i]) + kiln_h2f(y[i]))"
                      : "z[i] = a*x[i] + y[i]",
                  "kiln_axpy", 4, v, num_wait, wait, event);
}
