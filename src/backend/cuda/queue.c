/* CUDA queues: one non-blocking stream for an in-order queue; an
 * out-of-order queue has KILN__CU_LANES streams ("lanes") and puts each
 * command on the next one, so commands that do not wait for each other may
 * overlap, as on an OpenCL out-of-order queue. Wait lists become
 * cross-stream event waits; markers and barriers join every lane. */
#include <stdlib.h>

#include "backend/cuda/cuda_internal.h"
#include "base/error.h"
#include "base/fault.h"

void kiln__cu_queue_ref(kiln__cu_queue *q) { atomic_fetch_add(&q->refs, 1); }

void kiln__cu_queue_unref(kiln__cu_queue *q)
{
    if (!q || atomic_fetch_sub(&q->refs, 1) != 1)
        return;
    int ok = kiln__cu_ctx_use(q->dev->ctx) == KILN_OK;
    kiln__cu_mem_queue_remove(q->ctx, q); /* before its streams go */
    while (q->pool) {
        kiln__cu_event *e = q->pool;
        q->pool = e->next_free;
        kiln__cu_event_free(e, ok);
    }
    if (ok) {
        /* cuStreamDestroy returns at once; the driver frees the stream when
         * its pending work is done */
        if (q->notify_stream)
            kiln__cu.cuStreamDestroy(q->notify_stream);
        if (!q->borrowed)
            for (int i = 0; i < q->nlanes; i++)
                kiln__cu.cuStreamDestroy(q->lanes[i]);
        if (q->base)
            kiln__cu.cuEventDestroy(q->base);
    }
    pthread_mutex_destroy(&q->lock);
    pthread_mutex_destroy(&q->pool_lock);
    kiln__cu_context_unref(q->ctx);
    free(q);
}

kiln_status kiln__cu_queue_create(void *context, const kiln__bdevice *device,
                             unsigned flags, void **queue)
{
    *queue = NULL;
    kiln__cu_context *c = context;
    int idx = kiln__cu_context_find(c, (int)(intptr_t)device->handle);
    if (idx < 0)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "device %s is not in the context",
                               device->info.id);
    kiln__cu_reap();
    kiln__cu_dev *d = &c->dev[idx];
    kiln_status st = kiln__cu_ctx_use(d->ctx);
    if (st != KILN_OK)
        return st;
    kiln__cu_queue *q = kiln__calloc(1, sizeof *q);
    if (!q)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    int lanes = (flags & KILN_QUEUE_OUT_OF_ORDER) ? KILN__CU_LANES : 1;
    CUresult r = CUDA_SUCCESS;
    for (q->nlanes = 0; q->nlanes < lanes; q->nlanes++)
        if ((r = kiln__cu.cuStreamCreate(&q->lanes[q->nlanes], CU_STREAM_NON_BLOCKING)) !=
            CUDA_SUCCESS)
            break;
    if (r != CUDA_SUCCESS) {
        while (q->nlanes > 0)
            kiln__cu.cuStreamDestroy(q->lanes[--q->nlanes]);
        free(q);
        return kiln__cu_fail("cuStreamCreate", r);
    }
    q->stream = q->lanes[0];
    atomic_init(&q->refs, 1);
    q->ctx = c;
    kiln__cu_context_ref(c);
    q->dev = d;
    q->profiling = (flags & KILN_QUEUE_PROFILING) != 0;
    pthread_mutex_init(&q->lock, NULL);
    pthread_mutex_init(&q->pool_lock, NULL);
    kiln__cu_mem_queue_add(c, q);
    if (q->profiling) {
        const char *call = "cuEventCreate";
        r = kiln__cu.cuEventCreate(&q->base, CU_EVENT_DEFAULT);
        if (r == CUDA_SUCCESS) {
            call = "cuEventRecord";
            r = kiln__cu.cuEventRecord(q->base, q->stream);
        }
        if (r == CUDA_SUCCESS) {
            call = "cuEventSynchronize";
            r = kiln__cu.cuEventSynchronize(q->base);
        }
        q->base_ns = kiln__cu_now_ns();
        if (r != CUDA_SUCCESS) {
            st = kiln__cu_fail(call, r);
            kiln__cu_queue_unref(q);
            return st;
        }
    }
    *queue = q;
    return KILN_OK;
}

void kiln__cu_queue_release(void *queue)
{
    if (!queue)
        return;
    kiln__cu_reap();
    kiln__cu_queue_unref(queue);
}

kiln_status kiln__cu_queue_finish(void *queue)
{
    kiln__cu_queue *q = queue;
    kiln__cu_reap();
    kiln_status st = kiln__cu_ctx_use(q->dev->ctx);
    if (st != KILN_OK)
        return st;
    for (int i = 0; i < q->nlanes; i++) {
        CUresult r = kiln__cu.cuStreamSynchronize(q->lanes[i]);
        if (r != CUDA_SUCCESS) {
            kiln__cu_fail("cuStreamSynchronize", r);
            return kiln__error_prefix(KILN_ERROR_EVENT_FAILED,
                                      "a command of the queue failed");
        }
    }
    return KILN_OK;
}

/* CUDA submits work as it is enqueued. */
kiln_status kiln__cu_queue_flush(void *queue) { return KILN_OK; }

kiln_status kiln__cu_cmd_begin(kiln__cu_cmd *c, void *queue, size_t num_wait,
                          void *const *wait, int want_event)
{
    kiln__cu_queue *q = queue;
    c->q = q;
    c->ev = NULL;
    kiln__cu_reap();
    kiln_status st = kiln__cu_ctx_use(q->dev->ctx);
    if (st != KILN_OK)
        return st;
    if (want_event) {
        st = kiln__cu_event_new(q, &c->ev);
        if (st != KILN_OK)
            return st;
    }
    pthread_mutex_lock(&q->lock);
    if (q->nlanes > 1) /* out of order: the next lane */
        q->stream = q->lanes[q->next_lane++ % (unsigned)q->nlanes];
    c->stream = q->stream;
    st = kiln__cu_wait_list(q, num_wait, wait, c->ev);
    if (st == KILN_OK && c->ev)
        st = kiln__cu_event_begin(q, c->ev);
    if (st != KILN_OK) {
        pthread_mutex_unlock(&q->lock);
        kiln__cu_event_release(c->ev);
        c->ev = NULL;
    }
    return st;
}

kiln_status kiln__cu_cmd_end(kiln__cu_cmd *c, kiln_status st, int blocking,
                        void **out_event)
{
    kiln__cu_queue *q = c->q;
    if (st == KILN_OK && c->ev)
        st = kiln__cu_event_end(q, c->ev);
    pthread_mutex_unlock(&q->lock);
    if (st != KILN_OK) {
        kiln__cu_event_release(c->ev);
        return st;
    }
    if (blocking) {
        if (c->ev) {
            void *one = c->ev;
            st = kiln__cu_event_wait(1, &one);
        } else {
            CUresult r = kiln__cu.cuStreamSynchronize(c->stream);
            if (r != CUDA_SUCCESS) {
                kiln__cu_fail("cuStreamSynchronize", r);
                st = kiln__error_prefix(KILN_ERROR_EVENT_FAILED,
                                        "the transfer failed");
            }
        }
        if (st != KILN_OK) {
            kiln__cu_event_release(c->ev);
            return st;
        }
    }
    if (out_event)
        *out_event = c->ev;
    else
        kiln__cu_event_release(c->ev);
    return KILN_OK;
}

/* Makes stream `to` wait for everything enqueued so far on `from`. */
static kiln_status lane_join(kiln__cu_queue *q, CUstream from, CUstream to)
{
    CUevent e = NULL;
    CUresult r = kiln__cu.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
    if (r == CUDA_SUCCESS)
        r = kiln__cu.cuEventRecord(e, from);
    if (r == CUDA_SUCCESS)
        r = kiln__cu.cuStreamWaitEvent(to, e, 0);
    if (e)
        kiln__cu.cuEventDestroy(e); /* destroyed once the wait has happened */
    (void)q;
    return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("joining the queue's streams", r);
}

/* In order: a marker and a barrier are the same recorded event. Out of
 * order, with no wait list, both wait for every command enqueued before
 * them (every lane joins the marker's lane first), and a barrier also
 * makes every later command wait for it (every lane waits on its lane). A
 * marker with a wait list waits only for that list. */
kiln_status kiln__cu_queue_marker(void *queue, int barrier, size_t num_wait,
                             void *const *wait, void **out_event)
{
    kiln__cu_queue *q = queue;
    kiln__cu_cmd c;
    kiln_status st = kiln__cu_cmd_begin(&c, queue, num_wait, wait, 1);
    if (st != KILN_OK)
        return st;
    if (q->nlanes > 1 && (num_wait == 0 || barrier)) {
        /* begin recorded the event's start on the lane: the joins come
         * after it, so the marker's time covers the wait for the others */
        for (int i = 0; i < q->nlanes && st == KILN_OK; i++)
            if (q->lanes[i] != c.stream)
                st = lane_join(q, q->lanes[i], c.stream);
    }
    st = kiln__cu_cmd_end(&c, st, 0, out_event);
    if (st == KILN_OK && q->nlanes > 1 && barrier) {
        pthread_mutex_lock(&q->lock);
        for (int i = 0; i < q->nlanes && st == KILN_OK; i++)
            if (q->lanes[i] != c.stream)
                st = lane_join(q, c.stream, q->lanes[i]);
        pthread_mutex_unlock(&q->lock);
    }
    return st;
}
