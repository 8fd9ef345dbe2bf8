/* Arrays and host memory: whole-array reads and writes (dense C order on
 * the host; strided arrays go through a dense temporary and the copy
 * kernel), and copies between arrays. */
#include <stdio.h>
#include <stdlib.h>

#include "algo/array_internal.h"
#include "algo/builtin.h"
#include "base/error.h"

/* Copy kernel over any layout: y[i] = x[i]. float16 travels as ushort. */
kiln_status kiln__array_copy_kernel(kiln_queue *q, kiln_array *dst,
                                    kiln_array *src, size_t num_wait,
                                    kiln_event *const *wait,
                                    kiln_event **event) {
    char args[96];
    const char *t = kiln__bits_type(src->dtype);
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

/* Strided arrays: a dense temporary and the copy kernel, in the order the
 * direction needs (write: host -> tmp -> a; read: a -> tmp -> host). */
static kiln_status transfer_strided(kiln_queue *q, kiln_array *a, void *host,
                                    int to_device, size_t num_wait,
                                    kiln_event *const *wait,
                                    kiln_event **event) {
    size_t bytes = a->size * kiln_dtype_size(a->dtype);
    kiln_array *tmp = NULL;
    kiln_event *e1 = NULL;
    kiln_status st = kiln_array_empty(a->context, a->dtype, a->ndim,
                                      a->shape, &tmp);
    if (st == KILN_OK && to_device) {
        st = kiln_buffer_write_async(q, tmp->buffer, 0, bytes, host, num_wait,
                                     wait, &e1);
        if (st == KILN_OK)
            st = kiln__array_copy_kernel(q, a, tmp, 1, &e1, event);
    } else if (st == KILN_OK) {
        st = kiln__array_copy_kernel(q, tmp, a, num_wait, wait, &e1);
        if (st == KILN_OK)
            st = kiln_buffer_read_async(q, tmp->buffer, 0, bytes, host, 1,
                                        &e1, event);
    }
    kiln__event_drop(&e1);
    kiln_array_release(tmp); /* queued work holds its buffer */
    return st;
}

/* One body for both directions of the host transfer of all of a. */
static kiln_status transfer(const char *what, kiln_queue *q, kiln_array *a,
                            void *host, int to_device, size_t num_wait,
                            kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    kiln_status st = kiln__array_check_queue(q, a, what);
    if (st != KILN_OK)
        return st;
    if (!host && a->size)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: host is NULL",
                               what);
    size_t es = kiln_dtype_size(a->dtype);
    if (a->size == 0)
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    if (!kiln__array_contiguous(a))
        return transfer_strided(q, a, host, to_device, num_wait, wait, event);
    if (to_device)
        return kiln_buffer_write_async(q, a->buffer, a->offset * es,
                                       a->size * es, host, num_wait, wait,
                                       event);
    return kiln_buffer_read_async(q, a->buffer, a->offset * es, a->size * es,
                                  host, num_wait, wait, event);
}

/* The blocking forms: the transfer, then a wait for it. */
static kiln_status transfer_blocking(const char *what, kiln_queue *q,
                                     kiln_array *a, void *host,
                                     int to_device) {
    kiln_event *e = NULL;
    kiln_status st = transfer(what, q, a, host, to_device, 0, NULL, &e);
    if (st == KILN_OK && e)
        st = kiln_event_wait(e);
    kiln__event_drop(&e);
    return st;
}

kiln_status kiln_array_read_async(kiln_queue *q, kiln_array *a, void *host,
                                  size_t num_wait, kiln_event *const *wait,
                                  kiln_event **event) {
    return transfer("kiln_array_read_async", q, a, host, 0, num_wait, wait,
                    event);
}

kiln_status kiln_array_read_future(kiln_queue *q, kiln_array *a,
                                   size_t num_wait, kiln_event *const *wait,
                                   kiln_future **future) {
    const char *fn = "kiln_array_read_future";
    if (future)
        *future = NULL;
    if (!future)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: future is NULL",
                               fn);
    kiln_status st = kiln__array_check_queue(q, a, fn);
    if (st != KILN_OK)
        return st;
    size_t bytes = kiln_array_size(a) * kiln_dtype_size(kiln_array_dtype(a));
    kiln_future *f = NULL;
    kiln_event *ev = NULL;
    st = kiln_future_create(kiln_queue_context(q), bytes, &f);
    if (st == KILN_OK)
        st = transfer(fn, q, a, kiln_future_data(f), 0, num_wait, wait, &ev);
    if (st == KILN_OK && (st = kiln_future_complete_after(f, ev)) != KILN_OK)
        (void)kiln_event_wait(ev); /* it writes into the future's storage */
    kiln_event_release(ev);
    if (st != KILN_OK) {
        kiln_future_release(f);
        return st;
    }
    *future = f;
    return KILN_OK;
}

kiln_status kiln_array_read(kiln_queue *q, kiln_array *a, void *host) {
    return transfer_blocking("kiln_array_read", q, a, host, 0);
}

kiln_status kiln_array_write_async(kiln_queue *q, kiln_array *a,
                                   const void *host, size_t num_wait,
                                   kiln_event *const *wait,
                                   kiln_event **event) {
    /* The write only reads host; the shared body takes it as void *. */
    return transfer("kiln_array_write_async", q, a, (void *)host, 1, num_wait,
                    wait, event);
}

kiln_status kiln_array_write(kiln_queue *q, kiln_array *a, const void *host) {
    return transfer_blocking("kiln_array_write", q, a, (void *)host, 1);
}

kiln_status kiln_array_copy(kiln_queue *q, kiln_array *dst, kiln_array *src,
                            size_t num_wait, kiln_event *const *wait,
                            kiln_event **event) {
    if (event)
        *event = NULL;
    kiln_status st = kiln__array_check_queue(q, dst, "kiln_array_copy");
    if (st == KILN_OK)
        st = kiln__array_check_queue(q, src, "kiln_array_copy");
    if (st != KILN_OK)
        return st;
    if (dst->dtype != src->dtype || !kiln__array_same_shape(dst, src)) {
        char td[96], ts[96];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_array_copy: shapes or dtypes differ "
                               "(dst %s, src %s)",
                               kiln__array_describe(dst, td, sizeof td),
                               kiln__array_describe(src, ts, sizeof ts));
    }
    size_t es = kiln_dtype_size(src->dtype);
    if (src->size == 0)
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    if (kiln__array_contiguous(src) && kiln__array_contiguous(dst))
        return kiln_buffer_copy(q, src->buffer, src->offset * es,
                                      dst->buffer, dst->offset * es,
                                      src->size * es, num_wait, wait, event);
    return kiln__array_copy_kernel(q, dst, src, num_wait, wait, event);
}

kiln_status kiln_array_copy_between(kiln_queue *dst_queue, kiln_array *dst,
                                    kiln_queue *src_queue, kiln_array *src) {
    kiln_status st = kiln__array_check_queue(dst_queue, dst, "kiln_array_copy_between");
    if (st == KILN_OK)
        st = kiln__array_check_queue(src_queue, src, "kiln_array_copy_between");
    if (st != KILN_OK)
        return st;
    if (dst->dtype != src->dtype || !kiln__array_same_shape(dst, src)) {
        char td[96], ts[96];
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_array_copy_between: shapes or dtypes "
                               "differ (dst %s, src %s)",
                               kiln__array_describe(dst, td, sizeof td),
                               kiln__array_describe(src, ts, sizeof ts));
    }
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
