/* CUDA queues: one non-blocking stream for an in-order queue; an
 * out-of-order queue has KILN__CU_LANES streams ("lanes") and puts each
 * command on the next one, so commands that do not wait for each other may
 * overlap, as on an OpenCL out-of-order queue. Wait lists become
 * cross-stream event waits; markers and barriers join every lane.
 * kiln__cu_enqueue is the one way in for every command (gate.c may hold
 * it on the host first). */
#include <stdlib.h>

#include "base/refcount.h"
#include "backend/cuda/cuda_internal.h"
#include "base/error.h"
#include "base/fault.h"

void kiln__cu_queue_ref(kiln__cu_queue *q) {
    kiln__ref_take(&q->refs);
}

void kiln__cu_queue_unref(kiln__cu_queue *q) {
    if (!q || !kiln__ref_release(&q->refs))
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
    pthread_cond_destroy(&q->held_cond);
    pthread_mutex_destroy(&q->pool_lock);
    kiln__cu_context_unref(q->ctx);
    free(q);
}

kiln_status kiln__cu_queue_create(void *context, const kiln__bdevice *device, unsigned flags,
                                  void **queue) {
    *queue = NULL;
    kiln__cu_context *c = context;
    int idx = kiln__cu_context_find(c, (int)(intptr_t)device->handle);
    if (idx < 0)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "device %s is not in the context",
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
    pthread_cond_init(&q->held_cond, NULL);
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

void kiln__cu_queue_release(void *queue) {
    if (!queue)
        return;
    kiln__cu_reap();
    kiln__cu_queue_unref(queue);
}

kiln_status kiln__cu_queue_finish(void *queue) {
    kiln__cu_queue *q = queue;
    kiln__cu_reap();
    kiln_status st = kiln__cu_ctx_use(q->dev->ctx);
    if (st != KILN_OK)
        return st;
    pthread_mutex_lock(&q->lock); /* held commands reach the streams first */
    kiln__cu_gate_drain_wait(q);
    pthread_mutex_unlock(&q->lock);
    for (int i = 0; i < q->nlanes; i++) {
        CUresult r = kiln__cu.cuStreamSynchronize(q->lanes[i]);
        if (r != CUDA_SUCCESS) {
            kiln__cu_fail("cuStreamSynchronize", r);
            return kiln__error_prefix(KILN_ERROR_EVENT_FAILED, "a command of the queue failed");
        }
    }
    return KILN_OK;
}

/* CUDA submits work as it is enqueued. */
kiln_status kiln__cu_queue_flush(void *queue) {
    return KILN_OK;
}

kiln_status kiln__cu_submit(kiln__cu_queue *q, const kiln__cu_optype *type, void *args,
                            size_t num_wait, void *const *wait, kiln__cu_event *ev) {
    if (q->nlanes > 1) /* out of order: the next lane */
        q->stream = q->lanes[q->next_lane++ % (unsigned)q->nlanes];
    int failed = 0;
    kiln_status st = kiln__cu_wait_list(q, num_wait, wait, ev, &failed);
    if (st == KILN_OK && ev)
        st = kiln__cu_event_begin(q, ev);
    /* Something it waits for failed: the command does not run (as on
     * OpenCL); its event is still recorded, and reports the failure. */
    if (st == KILN_OK && !failed)
        st = type->run(q, args);
    if (st == KILN_OK && ev) {
        if (failed) {
            pthread_mutex_lock(&ev->lock);
            ev->failed = 1;
            pthread_mutex_unlock(&ev->lock);
        }
        st = kiln__cu_event_end(q, ev);
    }
    return st;
}

/* After the command went (or was held): the event out, or waited for. */
static kiln_status finish_command(kiln__cu_event *ev, CUstream stream, int blocking,
                                  void **out_event) {
    if (blocking) {
        kiln_status st = KILN_OK;
        if (ev) {
            void *one = ev;
            st = kiln__cu_event_wait(1, &one);
        } else {
            CUresult r = kiln__cu.cuStreamSynchronize(stream);
            if (r != CUDA_SUCCESS) {
                kiln__cu_fail("cuStreamSynchronize", r);
                st = kiln__error_prefix(KILN_ERROR_EVENT_FAILED, "the transfer failed");
            }
        }
        if (st != KILN_OK) {
            kiln__cu_event_release(ev);
            return st;
        }
    }
    if (out_event)
        *out_event = ev;
    else
        kiln__cu_event_release(ev);
    return KILN_OK;
}

kiln_status kiln__cu_enqueue(kiln__cu_queue *q, size_t num_wait, void *const *wait, int want_event,
                             int blocking, unsigned order, const kiln__cu_optype *type, void *args,
                             void **out_event) {
    kiln__cu_reap();
    kiln_status st = kiln__cu_ctx_use(q->dev->ctx);
    if (st != KILN_OK)
        return st;
    kiln__cu_event *ev = NULL;
    if (want_event || blocking) {
        st = kiln__cu_event_new(q, &ev);
        if (st != KILN_OK)
            return st;
    }
    pthread_mutex_lock(&q->lock);
    int hold;
    while ((hold = kiln__cu_gate_must_hold(q, order, num_wait, wait)) == 2) {
        /* a native queue waits for a held command: submit what is held */
        pthread_mutex_unlock(&q->lock);
        kiln__cu_gate_flush_all();
        pthread_mutex_lock(&q->lock);
    }
    if (hold) {
        st = kiln__cu_gate_hold(q, type, args, order, num_wait, wait, &ev);
        pthread_mutex_unlock(&q->lock);
        if (st != KILN_OK) {
            kiln__cu_event_release(ev);
            return st;
        }
        return finish_command(ev, NULL, blocking, out_event);
    }
    st = kiln__cu_submit(q, type, args, num_wait, wait, ev);
    CUstream stream = q->stream;
    pthread_mutex_unlock(&q->lock);
    if (st != KILN_OK) {
        kiln__cu_event_release(ev);
        return st;
    }
    return finish_command(ev, stream, blocking, out_event);
}

/* Makes stream `to` wait for everything enqueued so far on `from`. */
static kiln_status lane_join(kiln__cu_queue *q, CUstream from, CUstream to) {
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
typedef struct marker_args {
    int joins, barrier;
} marker_args;

static kiln_status marker_run(kiln__cu_queue *q, void *p) {
    const marker_args *a = p;
    kiln_status st = KILN_OK;
    CUstream at = q->stream;
    if (q->nlanes > 1 && a->joins)
        /* begin recorded the event's start on the lane: the joins come
         * after it, so the marker's time covers the wait for the others */
        for (int i = 0; i < q->nlanes && st == KILN_OK; i++)
            if (q->lanes[i] != at)
                st = lane_join(q, q->lanes[i], at);
    if (q->nlanes > 1 && a->barrier)
        for (int i = 0; i < q->nlanes && st == KILN_OK; i++)
            if (q->lanes[i] != at)
                st = lane_join(q, at, q->lanes[i]);
    return st;
}

static void *marker_hold(const void *p) {
    marker_args *a = kiln__malloc(sizeof *a);
    if (a)
        *a = *(const marker_args *)p;
    return a;
}

static const kiln__cu_optype marker_type = { marker_run, marker_hold, free };

kiln_status kiln__cu_queue_marker(void *queue, int barrier, size_t num_wait, void *const *wait,
                                  void **out_event) {
    kiln__cu_queue *q = queue;
    marker_args a = { num_wait == 0 || barrier, barrier };
    unsigned order = (a.joins ? KILN__CU_JOINS : 0) | (barrier ? KILN__CU_BARRIER : 0);
    return kiln__cu_enqueue(q, num_wait, wait, 1, 0, order, &marker_type, &a, out_event);
}
