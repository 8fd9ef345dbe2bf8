/* Queues: creation, finish/flush, markers and barriers. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "core/internal.h"

/* ------------------------------------------------------------------ queues */

/* make for kiln_queue_create: a new backend queue. */
static kiln_status kiln__queue_make_backend(const void *arg, kiln_context *context,
                                            kiln_device *device, unsigned flags, void **handle) {
    kiln_status st = context->backend->queue_create(context->handle, &device->b, flags, handle);
    return st == KILN_OK ? st : kiln__error_prefix(st, "kiln_queue_create(%s)", device->b.info.id);
}

kiln_status kiln__queue_new(const char *fn, kiln_context *context, size_t slot, unsigned flags,
                            kiln__queue_make make, const void *arg, kiln_queue **queue) {
    *queue = NULL;
    kiln_queue *q = kiln__calloc(1, sizeof *q);
    if (!q)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    kiln_device *device = context->devices[slot];
    /* a trace wants device times of every queue made while it is on */
    unsigned backend_flags = flags | (kiln__trace_on() ? KILN_QUEUE_PROFILING : 0);
    kiln_status st = make(arg, context, device, backend_flags, &q->handle);
    if (st != KILN_OK) {
        free(q);
        return st;
    }
    static atomic_uint serials;
    atomic_init(&q->refs, 1);
    q->serial = atomic_fetch_add(&serials, 1) + 1;
    pthread_mutex_init(&q->watch_lock, NULL);
    q->backend = context->backend;
    q->context = context;
    kiln_context_retain(context); /* a queue is a handle: it can start work */
    q->device = device;
    q->device_slot = slot;
    q->flags = flags;
    kiln__pool_queue_add(q);
    *queue = q;
    return KILN_OK;
}

kiln_status kiln_queue_create(kiln_context *context, kiln_device *device, unsigned flags,
                              kiln_queue **queue) {
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_queue_create: queue is NULL");
    *queue = NULL;
    if (!context || !device)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_queue_create: %s is NULL",
                               context ? "device" : "context");
    if (flags & ~(unsigned)(KILN_QUEUE_OUT_OF_ORDER | KILN_QUEUE_PROFILING))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_queue_create: unknown flags 0x%x", flags);
    size_t slot = context->num_devices;
    for (size_t i = 0; i < context->num_devices; i++)
        if (context->devices[i] == device)
            slot = i;
    if (slot == context->num_devices)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_queue_create: device %s is not one of the context's devices",
                               device->b.info.id);
    return kiln__queue_new("kiln_queue_create", context, slot, flags, kiln__queue_make_backend,
                           NULL, queue);
}

kiln_status kiln_queue_create_default(const char *selector, unsigned flags, kiln_queue **queue) {
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_queue_create_default: queue is NULL");
    *queue = NULL;
    kiln_device *dev = NULL;
    kiln_status st = kiln_device_select(selector, &dev);
    if (st != KILN_OK)
        return st;
    kiln_context *ctx = NULL;
    st = kiln_context_create(&dev, 1, &ctx);
    if (st != KILN_OK)
        return st;
    st = kiln_queue_create(ctx, dev, flags, queue);
    kiln_context_release(ctx); /* the queue holds it */
    return st;
}

kiln_status kiln_queue_retain(kiln_queue *queue) {
    return kiln__ref_retain(queue ? &queue->refs : NULL, "kiln_queue_retain", "queue");
}

static void kiln__queue_free(kiln_queue *queue) {
    kiln__queue_watch_clear(queue);
    free(queue->watch);
    pthread_mutex_destroy(&queue->watch_lock);
    kiln__pool_queue_remove(queue);
    assert(!queue->pool_next && atomic_load(&queue->refs) == 0 && "a freed queue is unlinked");
    queue->backend->queue_release(queue->handle);
    kiln_context_release(queue->context);
    free(queue);
}

static void kiln__queue_free_later(kiln_event *marker, kiln_event_state state, void *queue) {
    (void)marker;
    (void)state;
    kiln__queue_free(queue);
}

void kiln_queue_release(kiln_queue *queue) {
    if (!kiln__ref_release(queue ? &queue->refs : NULL))
        return;
    /* Work behind a wait list that has not ended (behind a user event not
     * yet completed, say): some drivers block in the queue's release until
     * it has (NVIDIA's OpenCL, for ever if the event never completes), and
     * OpenCL leaves releasing objects such work uses undefined. The release
     * then waits, off the caller's thread, for a marker after that work. */
    if (kiln__queue_watch_pending(queue)) {
        void *m = NULL;
        kiln_event *marker = NULL;
        if (queue->backend->queue_marker(queue->handle, 0, 0, NULL, &m) == KILN_OK && m &&
            kiln__event_wrap(queue->context, m, 0, &marker) == KILN_OK) {
            queue->backend->queue_flush(queue->handle);
            kiln_status st = kiln_event_on_complete(marker, kiln__queue_free_later, queue);
            kiln_event_release(marker);
            if (st == KILN_OK)
                return;
        }
    }
    kiln__queue_free(queue);
}

kiln_context *kiln_queue_context(const kiln_queue *queue) {
    return queue ? queue->context : NULL;
}
kiln_device *kiln_queue_device(const kiln_queue *queue) {
    return queue ? queue->device : NULL;
}
unsigned kiln_queue_get_flags(const kiln_queue *queue) {
    return queue ? queue->flags : 0;
}

kiln_status kiln_queue_finish(kiln_queue *queue) {
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_queue_finish: queue is NULL");
    if (kiln__queue_rec(queue))
        return kiln__graph_refuse(kiln__queue_rec(queue), "kiln_queue_finish",
                                  "it blocks until the queue's work has ended, and a recording "
                                  "queue runs nothing");
    kiln_status st = queue->backend->queue_finish(queue->handle);
    if (st != KILN_OK) {
        kiln__queue_watch_clear(queue);
        return kiln__error_prefix(st, "kiln_queue_finish");
    }
    return kiln__queue_watch_check(queue);
}

kiln_status kiln_queue_flush(kiln_queue *queue) {
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_queue_flush: queue is NULL");
    kiln_status st = queue->backend->queue_flush(queue->handle);
    return st == KILN_OK ? st : kiln__error_prefix(st, "kiln_queue_flush");
}

/* kiln__command's halves for a marker (arg: barrier, an int). */
static kiln_status marker_record(struct kiln_graph *graph, kiln_queue *queue, const void *arg,
                                 size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    return kiln__graph_add_marker(graph, queue, *(const int *)arg, num_wait, wait, event);
}

static kiln_status marker_run(kiln_queue *queue, const void *arg, size_t num_wait,
                              void *const *wait, void **out) {
    return queue->backend->queue_marker(queue->handle, *(const int *)arg, num_wait, wait, out);
}

static kiln_status kiln__marker(kiln_queue *queue, int barrier, size_t num_wait,
                                kiln_event *const *wait, kiln_event **event) {
    const char *fn = barrier ? "kiln_queue_barrier" : "kiln_queue_marker";
    if (event)
        *event = NULL;
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue is NULL", fn);
    return kiln__command(fn, queue, marker_record, marker_run, &barrier, num_wait, wait, event);
}

kiln_status kiln_queue_marker(kiln_queue *queue, size_t num_wait, kiln_event *const *wait,
                              kiln_event **event) {
    return kiln__marker(queue, 0, num_wait, wait, event);
}

kiln_status kiln_queue_barrier(kiln_queue *queue, size_t num_wait, kiln_event *const *wait,
                               kiln_event **event) {
    return kiln__marker(queue, 1, num_wait, wait, event);
}

/* The event of an operation with nothing to do (zero bytes, an empty
 * range): complete at once, unless it has a wait list, whose events it must
 * still follow (a marker over them). */
kiln_status kiln__nothing_done(kiln_queue *queue, size_t num_wait, kiln_event *const *wait,
                               kiln_event **event) {
    if (num_wait || kiln__queue_rec(queue)) /* also checks the list, even when no event
                                             * is asked for; a recording queue records
                                             * a marker */
        return kiln_queue_marker(queue, num_wait, wait, event);
    return event ? kiln__event_completed(queue->context, event) : KILN_OK;
}
