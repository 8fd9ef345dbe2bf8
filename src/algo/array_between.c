/* Copies between arrays of different contexts (other devices, other
 * backends) without blocking the host: a read into host memory on the
 * source queue, then a write on the destination queue that waits for the
 * read (the core bridges the event between contexts, src/core/event.c). */
#include <stdlib.h>

#include "algo/algo.h"
#include "core/error.h"

static void free_staging(kiln_event *event, kiln_event_state state,
                         void *host) {
    (void)event;
    (void)state;
    free(host);
}

kiln_status kiln_array_copy_between_async(kiln_queue *dst_queue,
                                          kiln_array *dst,
                                          kiln_queue *src_queue,
                                          kiln_array *src, size_t num_wait,
                                          kiln_event *const *wait,
                                          kiln_event **event) {
    static const char what[] = "kiln_array_copy_between_async";
    if (event)
        *event = NULL;
    if (!dst_queue || !src_queue || !dst || !src)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "%s: queues and arrays are required", what);
    if (kiln_queue_context(dst_queue) != dst->context ||
        kiln_queue_context(src_queue) != src->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: each array must belong to its queue's "
                               "context",
                               what);
    int same_shape = dst->ndim == src->ndim;
    for (unsigned d = 0; same_shape && d < src->ndim; d++)
        same_shape = dst->shape[d] == src->shape[d];
    if (dst->dtype != src->dtype || !same_shape)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: shapes or dtypes differ (%s vs %s)", what,
                               kiln_dtype_name(dst->dtype),
                               kiln_dtype_name(src->dtype));
    size_t bytes = src->size * kiln_dtype_size(src->dtype);
    if (!bytes) /* nothing to move: the event still follows the wait list */
        return event ? kiln_queue_marker(dst_queue, num_wait, wait, event)
                     : KILN_OK;
    void *host = malloc(bytes);
    if (!host)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "%s: staging %zu bytes", what, bytes);
    kiln_event *read = NULL, *written = NULL;
    kiln_status st =
        kiln_array_read_async(src_queue, src, host, num_wait, wait, &read);
    if (st != KILN_OK) {
        free(host);
        return kiln__error_prefix(st, "%s", what);
    }
    st = kiln_array_write_async(dst_queue, dst, host, 1, &read, &written);
    /* the staging block goes when the last command that touches it ends:
     * the write, or the read alone if the write was never enqueued */
    kiln_event *last = st == KILN_OK ? written : read;
    kiln_status cb = kiln_event_on_complete(last, free_staging, host);
    if (cb != KILN_OK) {
        /* no callback: wait here rather than free memory still in use */
        kiln_event_wait(last);
        free(host);
    }
    kiln_event_release(read);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", what);
    if (event)
        *event = written;
    else
        kiln_event_release(written);
    return KILN_OK;
}
