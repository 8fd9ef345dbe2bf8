/* CUDA queues: one non-blocking stream each, in-order only. */
#include <stdlib.h>

#include "backend/cuda/cuda_internal.h"
#include "core/error.h"

void kcu_queue_ref(kcu_queue *q) { atomic_fetch_add(&q->refs, 1); }

void kcu_queue_unref(kcu_queue *q)
{
    if (!q || atomic_fetch_sub(&q->refs, 1) != 1)
        return;
    int ok = kcu_ctx_use(q->dev->ctx) == KILN_OK;
    while (q->pool) {
        kcu_event *e = q->pool;
        q->pool = e->next_free;
        if (ok) {
            if (e->start)
                kcu.cuEventDestroy(e->start);
            kcu.cuEventDestroy(e->end);
        }
        pthread_mutex_destroy(&e->lock);
        pthread_cond_destroy(&e->cond);
        free(e->deps);
        free(e);
    }
    if (ok) {
        /* cuStreamDestroy returns at once; the driver frees the stream when
         * its pending work is done */
        if (q->notify_stream)
            kcu.cuStreamDestroy(q->notify_stream);
        kcu.cuStreamDestroy(q->stream);
        if (q->base)
            kcu.cuEventDestroy(q->base);
    }
    pthread_mutex_destroy(&q->lock);
    pthread_mutex_destroy(&q->pool_lock);
    kcu_context_unref(q->ctx);
    free(q);
}

kiln_status kcu_queue_create(void *context, const kiln__bdevice *device,
                             unsigned flags, void **queue)
{
    *queue = NULL;
    kcu_context *c = context;
    if (flags & KILN_QUEUE_OUT_OF_ORDER)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "out-of-order queues are not supported on "
                               "CUDA: a queue is one in-order stream; for "
                               "concurrency create several queues and order "
                               "them with events");
    int idx = kcu_context_find(c, (int)(intptr_t)device->handle);
    if (idx < 0)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "device %s is not in the context",
                               device->info.id);
    kcu_reap();
    kcu_dev *d = &c->dev[idx];
    kiln_status st = kcu_ctx_use(d->ctx);
    if (st != KILN_OK)
        return st;
    kcu_queue *q = calloc(1, sizeof *q);
    if (!q)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    CUresult r = kcu.cuStreamCreate(&q->stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        free(q);
        return kcu_fail("cuStreamCreate", r);
    }
    atomic_init(&q->refs, 1);
    q->ctx = c;
    kcu_context_ref(c);
    q->dev = d;
    q->profiling = (flags & KILN_QUEUE_PROFILING) != 0;
    pthread_mutex_init(&q->lock, NULL);
    pthread_mutex_init(&q->pool_lock, NULL);
    if (q->profiling) {
        const char *call = "cuEventCreate";
        r = kcu.cuEventCreate(&q->base, CU_EVENT_DEFAULT);
        if (r == CUDA_SUCCESS) {
            call = "cuEventRecord";
            r = kcu.cuEventRecord(q->base, q->stream);
        }
        if (r == CUDA_SUCCESS) {
            call = "cuEventSynchronize";
            r = kcu.cuEventSynchronize(q->base);
        }
        q->base_ns = kcu_now_ns();
        if (r != CUDA_SUCCESS) {
            st = kcu_fail(call, r);
            kcu_queue_unref(q);
            return st;
        }
    }
    *queue = q;
    return KILN_OK;
}

void kcu_queue_release(void *queue)
{
    if (!queue)
        return;
    kcu_reap();
    kcu_queue_unref(queue);
}

kiln_status kcu_queue_finish(void *queue)
{
    kcu_queue *q = queue;
    kcu_reap();
    kiln_status st = kcu_ctx_use(q->dev->ctx);
    if (st != KILN_OK)
        return st;
    CUresult r = kcu.cuStreamSynchronize(q->stream);
    if (r != CUDA_SUCCESS) {
        kcu_fail("cuStreamSynchronize", r);
        return kiln__error_prefix(KILN_ERROR_EVENT_FAILED,
                                  "a command of the queue failed");
    }
    return KILN_OK;
}

/* CUDA submits work as it is enqueued. */
kiln_status kcu_queue_flush(void *queue) { return KILN_OK; }

kiln_status kcu_cmd_begin(kcu_cmd *c, void *queue, size_t num_wait,
                          void *const *wait, int want_event)
{
    kcu_queue *q = queue;
    c->q = q;
    c->ev = NULL;
    kcu_reap();
    kiln_status st = kcu_ctx_use(q->dev->ctx);
    if (st != KILN_OK)
        return st;
    if (want_event) {
        st = kcu_event_new(q, &c->ev);
        if (st != KILN_OK)
            return st;
    }
    pthread_mutex_lock(&q->lock);
    st = kcu_wait_list(q, num_wait, wait, c->ev);
    if (st == KILN_OK && c->ev)
        st = kcu_event_begin(q, c->ev);
    if (st != KILN_OK) {
        pthread_mutex_unlock(&q->lock);
        kcu_event_release(c->ev);
        c->ev = NULL;
    }
    return st;
}

kiln_status kcu_cmd_end(kcu_cmd *c, kiln_status st, int blocking,
                        void **out_event)
{
    kcu_queue *q = c->q;
    if (st == KILN_OK && c->ev)
        st = kcu_event_end(q, c->ev);
    pthread_mutex_unlock(&q->lock);
    if (st != KILN_OK) {
        kcu_event_release(c->ev);
        return st;
    }
    if (blocking) {
        if (c->ev) {
            void *one = c->ev;
            st = kcu_event_wait(1, &one);
        } else {
            CUresult r = kcu.cuStreamSynchronize(q->stream);
            if (r != CUDA_SUCCESS) {
                kcu_fail("cuStreamSynchronize", r);
                st = kiln__error_prefix(KILN_ERROR_EVENT_FAILED,
                                        "the transfer failed");
            }
        }
        if (st != KILN_OK) {
            kcu_event_release(c->ev);
            return st;
        }
    }
    if (out_event)
        *out_event = c->ev;
    else
        kcu_event_release(c->ev);
    return KILN_OK;
}

/* In-order streams: a marker and a barrier are the same recorded event. */
kiln_status kcu_queue_marker(void *queue, int barrier, size_t num_wait,
                             void *const *wait, void **out_event)
{
    kcu_cmd c;
    kiln_status st = kcu_cmd_begin(&c, queue, num_wait, wait, 1);
    if (st != KILN_OK)
        return st;
    return kcu_cmd_end(&c, KILN_OK, 0, out_event);
}
