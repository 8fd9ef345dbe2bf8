/* CUDA events: command events (a CUevent recorded after each command, and
 * one before it on profiling queues), user events, notifications.
 *
 * User events and streams: a stream cannot cuStreamWaitEvent on something
 * the host completes. Each user event owns a 32-bit word in pinned, mapped
 * host memory (cuMemHostAlloc PORTABLE | DEVICEMAP); a stream that must wait
 * for it enqueues cuStreamWaitValue32 (GEQ target) on the word's device
 * address, which cuMemHostGetDevicePointer gives for the queue's context
 * (stream memory operations take device pointers only), and
 * kiln_event_set_complete writes the target. The words live in slabs that
 * are never freed, and whose primary context kiln keeps for the process
 * (releasing the last reference to a primary context destroys its
 * allocations); each word's target only grows, so a stream still polling a
 * word after its event was released can never miss its value or read freed
 * memory. The wait is the V2 memop, available by default since CUDA 11.7
 * (no CAN_USE_STREAM_MEM_OPS attribute to check; GEQ needs none of the
 * optional flags). If the driver still refuses it (or the device cannot map
 * host memory), the stream instead runs a host function that blocks until
 * the event is set (cuLaunchHostFunc), which is correct but holds a driver
 * callback thread.
 *
 * Since host gating (gate.c) a command never reaches a stream while a
 * user event it waits for is unset: it is held on the host, and its event
 * is "held" (no CUevent recorded yet: every query here checks that
 * first). So the memop wait above is only a fallback.
 *
 * Failure: a command whose wait list holds a failed event does not run;
 * its event is recorded and reports KILN_EVENT_ERROR (the failure is
 * inherited through wait lists).
 *
 * Notifications for command events use cuStreamAddCallback on a per-queue
 * side stream that waits for the event: unlike cuLaunchHostFunc it is
 * called even when the context has failed (with the error), so a
 * notification fires exactly once either way. It runs on a driver thread,
 * where CUDA calls are forbidden: objects whose last reference drops there
 * go to a list that the next ordinary backend call destroys (kiln__cu_reap). */
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
#include "backend/cuda/cuda_internal.h"
#include "base/error.h"
#include "base/fault.h"

_Thread_local int kiln__cu_in_callback;

typedef struct kiln__cu_notify {
    kiln__cu_event *ev;
    kiln__notify_fn fn;
    void *arg;
    struct kiln__cu_notify *next;
} kiln__cu_notify;

/* ---- pinned flag words for user events -------------------------------- */

#define KILN__CU_SLAB_WORDS 1024
#define KILN__CU_MAX_SLABS 1024
static pthread_mutex_t kiln__cu_slot_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *kiln__cu_slabs[KILN__CU_MAX_SLABS];
static size_t kiln__cu_num_slabs;
static uint32_t *kiln__cu_slot_target; /* last target handed out, per word */
static int *kiln__cu_free_slots;
static size_t kiln__cu_num_free;

static volatile uint32_t *kiln__cu_slot_word(int slot) {
    return &kiln__cu_slabs[slot / KILN__CU_SLAB_WORDS][slot % KILN__CU_SLAB_WORDS];
}

static kiln_status kiln__cu_slot_get(kiln__cu_dev *d, int *slot, uint32_t *target) {
    pthread_mutex_lock(&kiln__cu_slot_lock);
    if (kiln__cu_num_free == 0) {
        if (kiln__cu_num_slabs == KILN__CU_MAX_SLABS) {
            pthread_mutex_unlock(&kiln__cu_slot_lock);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "too many live user events");
        }
        size_t words = (kiln__cu_num_slabs + 1) * KILN__CU_SLAB_WORDS;
        uint32_t *t = kiln__realloc(kiln__cu_slot_target, words * sizeof *t);
        int *f = t ? kiln__realloc(kiln__cu_free_slots, words * sizeof *f) : NULL;
        if (t)
            kiln__cu_slot_target = t;
        if (f)
            kiln__cu_free_slots = f;
        if (!t || !f) {
            pthread_mutex_unlock(&kiln__cu_slot_lock);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "realloc");
        }
        void *p = NULL;
        kiln_status st = kiln__cu_ctx_use(d->ctx);
        if (st == KILN_OK) /* the slab outlives kiln's contexts */
            st = kiln__cu_pinned_alloc(d, KILN__CU_SLAB_WORDS * sizeof(uint32_t),
                                       CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP, &p,
                                       NULL);
        if (st != KILN_OK) {
            pthread_mutex_unlock(&kiln__cu_slot_lock);
            return st;
        }
        memset(p, 0, KILN__CU_SLAB_WORDS * sizeof(uint32_t));
        size_t base = kiln__cu_num_slabs * KILN__CU_SLAB_WORDS;
        kiln__cu_slabs[kiln__cu_num_slabs++] = p;
        for (size_t i = 0; i < KILN__CU_SLAB_WORDS; i++) {
            kiln__cu_slot_target[base + i] = 0;
            kiln__cu_free_slots[kiln__cu_num_free++] = (int)(base + KILN__CU_SLAB_WORDS - 1 - i);
        }
    }
    *slot = kiln__cu_free_slots[--kiln__cu_num_free];
    uint32_t t = kiln__cu_slot_target[*slot] + 1;
    if (t == 0) /* never use 0: a fresh word holds it */
        t = 1;
    kiln__cu_slot_target[*slot] = t;
    *target = t;
    pthread_mutex_unlock(&kiln__cu_slot_lock);
    return KILN_OK;
}

static void kiln__cu_slot_put(int slot) {
    pthread_mutex_lock(&kiln__cu_slot_lock);
    kiln__cu_free_slots[kiln__cu_num_free++] = slot;
    pthread_mutex_unlock(&kiln__cu_slot_lock);
}

/* ---- deferred destruction -------------------------------------------- */

static pthread_mutex_t kiln__cu_grave_lock = PTHREAD_MUTEX_INITIALIZER;
static kiln__cu_event *kiln__cu_grave;

/* User events created and not yet completed: while there are any, a
 * stream may be waiting for the host, and a call that synchronises a
 * context could wait for ever (kiln__cu_buffer_release defers then). */
static atomic_int kiln__cu_unset_user_events;

int kiln__cu_user_events_unset(void) {
    return atomic_load(&kiln__cu_unset_user_events);
}
static atomic_int kiln__cu_grave_nonempty;

static void kiln__cu_event_destroy_now(kiln__cu_event *e);

void kiln__cu_reap(void) {
    if (kiln__cu_in_callback || !atomic_load(&kiln__cu_grave_nonempty))
        return;
    pthread_mutex_lock(&kiln__cu_grave_lock);
    kiln__cu_event *list = kiln__cu_grave;
    kiln__cu_grave = NULL;
    atomic_store(&kiln__cu_grave_nonempty, 0);
    pthread_mutex_unlock(&kiln__cu_grave_lock);
    while (list) {
        kiln__cu_event *next = list->next_free;
        kiln__cu_event_destroy_now(list);
        list = next;
    }
}

/* ---- event objects ----------------------------------------------------- */

static void kiln__cu_fire_notes(kiln__cu_notify *n, int failed) {
    while (n) {
        kiln__cu_notify *next = n->next;
        n->fn(n->arg, failed);
        free(n);
        n = next;
    }
}

void kiln__cu_event_free(kiln__cu_event *e, int destroy_cuda_events) {
    if (destroy_cuda_events) {
        if (e->start)
            kiln__cu.cuEventDestroy(e->start);
        kiln__cu.cuEventDestroy(e->end);
    }
    pthread_mutex_destroy(&e->lock);
    pthread_cond_destroy(&e->cond);
    free(e->deps);
    free(e);
}

static void kiln__cu_event_destroy_now(kiln__cu_event *e) {
    for (size_t i = 0; i < e->num_deps; i++)
        kiln__cu_event_release(e->deps[i]);
    e->num_deps = 0;
    if (e->is_user) {
        kiln__cu_notify *notes = NULL;
        pthread_mutex_lock(&e->lock);
        if (!e->done) {
            /* Abandoned unset: complete it as failed so that streams
             * waiting on its word go on and the word can be reused. */
            e->done = 1;
            e->failed = 1;
            __atomic_store_n(kiln__cu_slot_word(e->slot), e->target, __ATOMIC_RELEASE);
            notes = e->notes;
            e->notes = NULL;
            pthread_mutex_unlock(&e->lock);
            kiln__cu_gate_kick(); /* what was held behind it fails */
            atomic_fetch_sub(&kiln__cu_unset_user_events, 1);
        } else {
            pthread_mutex_unlock(&e->lock);
        }
        kiln__cu_fire_notes(notes, 1);
        kiln__cu_slot_put(e->slot);
        kiln__cu_context_unref(e->ctx);
        kiln__cu_event_free(e, 0); /* no CUDA events */
        return;
    }
    kiln__cu_queue *q = e->queue;
    pthread_mutex_lock(&q->pool_lock);
    int keep = q->pool_size < 64;
    if (keep) {
        e->next_free = q->pool;
        q->pool = e;
        q->pool_size++;
    }
    pthread_mutex_unlock(&q->pool_lock);
    if (!keep)
        kiln__cu_event_free(e, kiln__cu_ctx_use(q->dev->ctx) == KILN_OK);
    kiln__cu_queue_unref(q);
}

void kiln__cu_event_retain(void *ev) {
    kiln__ref_take(&((kiln__cu_event *)ev)->refs);
}

void kiln__cu_event_release(void *ev) {
    kiln__cu_event *e = ev;
    if (!e || !kiln__ref_release(&e->refs))
        return;
    if (kiln__cu_in_callback) {
        pthread_mutex_lock(&kiln__cu_grave_lock);
        e->next_free = kiln__cu_grave;
        kiln__cu_grave = e;
        atomic_store(&kiln__cu_grave_nonempty, 1);
        pthread_mutex_unlock(&kiln__cu_grave_lock);
        return;
    }
    kiln__cu_reap();
    kiln__cu_event_destroy_now(e);
}

kiln_status kiln__cu_event_new(kiln__cu_queue *q, kiln__cu_event **out) {
    *out = NULL;
    kiln__cu_event *e = NULL;
    pthread_mutex_lock(&q->pool_lock);
    if (q->pool) {
        e = q->pool;
        q->pool = e->next_free;
        q->pool_size--;
    }
    pthread_mutex_unlock(&q->pool_lock);
    if (!e) {
        e = kiln__calloc(1, sizeof *e);
        if (!e)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
        unsigned flags = q->profiling ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
        CUresult r = kiln__cu.cuEventCreate(&e->end, flags);
        if (r == CUDA_SUCCESS && q->profiling) {
            r = kiln__cu.cuEventCreate(&e->start, CU_EVENT_DEFAULT);
            if (r != CUDA_SUCCESS)
                kiln__cu.cuEventDestroy(e->end);
        }
        if (r != CUDA_SUCCESS) {
            free(e);
            return kiln__cu_fail("cuEventCreate", r);
        }
        pthread_mutex_init(&e->lock, NULL);
        pthread_cond_init(&e->cond, NULL);
    }
    atomic_init(&e->refs, 1);
    e->is_user = 0;
    e->queue = q;
    e->ctx = NULL;
    e->queued_ns = 0;
    e->num_deps = 0;
    e->done = 0;
    e->failed = 0;
    e->held = 0;
    e->notes = NULL;
    e->next_free = NULL;
    kiln__cu_queue_ref(q);
    *out = e;
    return KILN_OK;
}

static kiln_status kiln__cu_add_dep(kiln__cu_event *ev, kiln__cu_event *u) {
    for (size_t i = 0; i < ev->num_deps; i++)
        if (ev->deps[i] == u)
            return KILN_OK;
    if (ev->num_deps == ev->cap_deps) {
        size_t cap = ev->cap_deps ? ev->cap_deps * 2 : 4;
        kiln__cu_event **d = kiln__realloc(ev->deps, cap * sizeof *d);
        if (!d)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "realloc");
        ev->deps = d;
        ev->cap_deps = cap;
    }
    kiln__cu_event_retain(u);
    ev->deps[ev->num_deps++] = u;
    return KILN_OK;
}

static void kiln__cu_block_on_user(void *p) {
    kiln__cu_event *u = p;
    kiln__cu_in_callback = 1;
    pthread_mutex_lock(&u->lock);
    while (!u->done)
        pthread_cond_wait(&u->cond, &u->lock);
    pthread_mutex_unlock(&u->lock);
    kiln__cu_event_release(u);
    kiln__cu_in_callback = 0;
}

int kiln__cu_event_pending(kiln__cu_event *e) {
    pthread_mutex_lock(&e->lock);
    int pending = e->is_user ? !e->done : e->held;
    pthread_mutex_unlock(&e->lock);
    return pending;
}

kiln_status kiln__cu_wait_list(kiln__cu_queue *q, size_t num_wait, void *const *wait,
                               kiln__cu_event *ev, int *any_failed) {
    int dummy;
    if (!any_failed)
        any_failed = &dummy;
    *any_failed = 0;
    for (size_t i = 0; i < num_wait; i++) {
        kiln__cu_event *w = wait[i];
        if (!w)
            continue;
        if (w->is_user) {
            pthread_mutex_lock(&w->lock);
            int done = w->done, failed = w->failed;
            pthread_mutex_unlock(&w->lock);
            if (failed)
                *any_failed = 1;
            if (ev && failed)
                ev->failed = 1;
            if (done)
                continue;
            if (ev) {
                kiln_status st = kiln__cu_add_dep(ev, w);
                if (st != KILN_OK)
                    return st;
            }
            CUdeviceptr word = 0;
            CUresult r = kiln__cu.cuMemHostGetDevicePointer(
                &word, (void *)(uintptr_t)kiln__cu_slot_word(w->slot), 0);
            if (r == CUDA_SUCCESS)
                r = kiln__cu.cuStreamWaitValue32(q->stream, word, w->target,
                                                 CU_STREAM_WAIT_VALUE_GEQ);
            if (r != CUDA_SUCCESS) {
                /* no memop (or no mapping): block a host function instead */
                kiln__cu_event_retain(w);
                r = kiln__cu.cuLaunchHostFunc(q->stream, kiln__cu_block_on_user, w);
                if (r != CUDA_SUCCESS) {
                    kiln__cu_event_release(w);
                    return kiln__cu_fail("cuLaunchHostFunc (wait for user event)", r);
                }
            }
            continue;
        }
        if (w->stream != q->stream) {
            CUresult r = kiln__cu.cuStreamWaitEvent(q->stream, w->end, 0);
            if (r != CUDA_SUCCESS)
                return kiln__cu_fail("cuStreamWaitEvent", r);
        }
        /* a command event failed already (it did not run, or a user
         * event it waited for failed): inherit that */
        pthread_mutex_lock(&w->lock);
        int failed = w->failed;
        for (size_t k = 0; k < w->num_deps && !failed; k++) {
            kiln__cu_event *u = w->deps[k];
            pthread_mutex_lock(&u->lock);
            failed = u->done && u->failed;
            pthread_mutex_unlock(&u->lock);
        }
        if (failed)
            *any_failed = 1;
        kiln_status st = KILN_OK;
        if (ev) {
            /* inherit the user events w depends on */
            if (failed)
                ev->failed = 1;
            for (size_t k = 0; k < w->num_deps && st == KILN_OK; k++)
                st = kiln__cu_add_dep(ev, w->deps[k]);
        }
        pthread_mutex_unlock(&w->lock);
        if (st != KILN_OK)
            return st;
    }
    return KILN_OK;
}

kiln_status kiln__cu_event_begin(kiln__cu_queue *q, kiln__cu_event *ev) {
    if (!ev->queued_ns) /* a held command keeps its enqueue time */
        ev->queued_ns = kiln__cu_now_ns();
    ev->stream = q->stream;
    if (q->profiling) {
        CUresult r = kiln__cu.cuEventRecord(ev->start, q->stream);
        if (r != CUDA_SUCCESS)
            return kiln__cu_fail("cuEventRecord", r);
    }
    return KILN_OK;
}

kiln_status kiln__cu_event_end(kiln__cu_queue *q, kiln__cu_event *ev) {
    CUresult r = kiln__cu.cuEventRecord(ev->end, q->stream);
    return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuEventRecord", r);
}

/* Failure of a command event whose CUevent ended with r. Host-only (safe in
 * driver callbacks). */
static int kiln__cu_resolve(kiln__cu_event *e, CUresult r) {
    pthread_mutex_lock(&e->lock);
    if (!e->done) {
        int failed = e->failed || r != CUDA_SUCCESS;
        for (size_t i = 0; i < e->num_deps && !failed; i++) {
            kiln__cu_event *u = e->deps[i];
            pthread_mutex_lock(&u->lock);
            failed = u->done && u->failed;
            pthread_mutex_unlock(&u->lock);
        }
        e->failed = failed;
        e->done = 1;
    }
    int f = e->failed;
    pthread_mutex_unlock(&e->lock);
    return f;
}

kiln_status kiln__cu_event_wait(size_t num, void *const *events) {
    kiln__cu_reap();
    kiln_status result = KILN_OK;
    for (size_t i = 0; i < num; i++) {
        kiln__cu_event *e = events[i];
        if (!e)
            continue;
        int failed;
        CUresult r = CUDA_SUCCESS;
        if (e->is_user) {
            pthread_mutex_lock(&e->lock);
            while (!e->done)
                pthread_cond_wait(&e->cond, &e->lock);
            failed = e->failed;
            pthread_mutex_unlock(&e->lock);
        } else {
            pthread_mutex_lock(&e->lock); /* held: until it is submitted */
            while (e->held)
                pthread_cond_wait(&e->cond, &e->lock);
            pthread_mutex_unlock(&e->lock);
            kiln_status st = kiln__cu_ctx_use(e->queue->dev->ctx);
            if (st != KILN_OK)
                return st;
            r = kiln__cu.cuEventSynchronize(e->end);
            failed = kiln__cu_resolve(e, r);
        }
        if (failed && result == KILN_OK) {
            if (r != CUDA_SUCCESS) {
                kiln__cu_fail("cuEventSynchronize", r);
                result =
                    kiln__error_prefix(KILN_ERROR_EVENT_FAILED, "a command failed on the device");
            } else {
                result =
                    kiln__error_set(KILN_ERROR_EVENT_FAILED, 0, "%s",
                                    e->is_user ? "the user event was completed with an error"
                                               : "a user event this command waited for failed");
            }
        }
    }
    return result;
}

kiln_status kiln__cu_event_state(void *event, kiln_event_state *state) {
    kiln__cu_event *e = event;
    if (e->is_user) {
        pthread_mutex_lock(&e->lock);
        *state = !e->done    ? KILN_EVENT_SUBMITTED
                 : e->failed ? KILN_EVENT_ERROR
                             : KILN_EVENT_COMPLETE;
        pthread_mutex_unlock(&e->lock);
        return KILN_OK;
    }
    if (kiln__cu_event_pending(e)) {
        *state = KILN_EVENT_QUEUED; /* held on the host */
        return KILN_OK;
    }
    kiln_status st = kiln__cu_ctx_use(e->queue->dev->ctx);
    if (st != KILN_OK)
        return st;
    CUresult r = kiln__cu.cuEventQuery(e->end);
    if (r == CUDA_ERROR_NOT_READY) {
        *state = KILN_EVENT_SUBMITTED;
        if (e->start && kiln__cu.cuEventQuery(e->start) == CUDA_SUCCESS)
            *state = KILN_EVENT_RUNNING;
        return KILN_OK;
    }
    *state = kiln__cu_resolve(e, r) ? KILN_EVENT_ERROR : KILN_EVENT_COMPLETE;
    return KILN_OK;
}

/* queued: host clock at enqueue. submitted: the same (CUDA submits at
 * enqueue). started/ended: base_ns + elapsed(base, start|end) from the
 * queue's base CUevent, so every time is CLOCK_MONOTONIC ns. Durations come
 * from elapsed(start, end) and keep CUDA's ~0.5 us resolution; absolute
 * times lose precision as the queue ages (float ms: ~1 us after 10 s). */
kiln_status kiln__cu_event_times(void *event, kiln_event_times *t) {
    kiln__cu_event *e = event;
    if (e->is_user || !e->queue->profiling)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "profiling times need a command event of a "
                               "queue created with KILN_QUEUE_PROFILING");
    kiln__cu_queue *q = e->queue;
    kiln_status st = kiln__cu_ctx_use(q->dev->ctx);
    if (st != KILN_OK)
        return st;
    CUresult r = kiln__cu_event_pending(e) ? CUDA_ERROR_NOT_READY : kiln__cu.cuEventQuery(e->end);
    if (r == CUDA_ERROR_NOT_READY)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0, "the event has not completed yet");
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuEventQuery", r);
    float from_base = 0, dur = 0;
    r = kiln__cu.elapsed(&from_base, q->base, e->start);
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuEventElapsedTime", r);
    r = kiln__cu.elapsed(&dur, e->start, e->end);
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuEventElapsedTime", r);
    double s = (double)q->base_ns + (double)from_base * 1e6;
    uint64_t started = s < 0 ? 0 : (uint64_t)s;
    uint64_t d = dur > 0 ? (uint64_t)((double)dur * 1e6) : 0;
    /* started/ended stay exactly base + device clock, so the difference
     * of two events of this queue is what the device measured. The host
     * and GPU clocks drift apart (tens of ppm: ~0.1 ms some seconds after
     * the base), so a mapped start can come out before the host's enqueue
     * time: then queued/submitted move back to it to keep the four times
     * ordered. (Clamping started instead shortened every interval that
     * began at a clamped event: a marker before a sum or an FFT gave 0.24
     * ms for a 1 GiB read on an H100.) */
    t->started = started;
    t->ended = started + d;
    t->queued = e->queued_ns < started ? e->queued_ns : started;
    t->submitted = t->queued;
    return KILN_OK;
}

static void CUDA_CB kiln__cu_note_cb(CUstream s, CUresult status, void *p) {
    kiln__cu_notify *n = p;
    kiln__cu_in_callback = 1;
    int failed = kiln__cu_resolve(n->ev, status);
    n->fn(n->arg, failed);
    kiln__cu_event_release(n->ev);
    free(n);
    kiln__cu_in_callback = 0;
}

kiln_status kiln__cu_event_notify(void *event, kiln__notify_fn fn, void *arg) {
    kiln__cu_event *e = event;
    kiln__cu_reap();
    pthread_mutex_lock(&e->lock);
    if (e->is_user && e->done) {
        int failed = e->failed;
        pthread_mutex_unlock(&e->lock);
        fn(arg, failed);
        return KILN_OK;
    }
    if (e->is_user || e->held) {
        /* kept on the event: a user event's fire when it is set, a held
         * command's are registered for real once it is submitted */
        kiln__cu_notify *n = kiln__malloc(sizeof *n);
        if (n) {
            n->ev = e;
            n->fn = fn;
            n->arg = arg;
            n->next = e->notes;
            e->notes = n;
        }
        pthread_mutex_unlock(&e->lock);
        return n ? KILN_OK : kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
    }
    pthread_mutex_unlock(&e->lock);
    kiln__cu_queue *q = e->queue;
    kiln_status st = kiln__cu_ctx_use(q->dev->ctx);
    if (st != KILN_OK)
        return st;
    CUresult r = kiln__cu.cuEventQuery(e->end);
    if (r != CUDA_ERROR_NOT_READY) {
        fn(arg, kiln__cu_resolve(e, r));
        return KILN_OK;
    }
    kiln__cu_notify *n = kiln__malloc(sizeof *n);
    if (!n)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
    n->ev = e;
    n->fn = fn;
    n->arg = arg;
    n->next = NULL;
    kiln__cu_event_retain(e);
    pthread_mutex_lock(&q->lock);
    r = CUDA_SUCCESS;
    const char *call = "cuStreamCreate (notify stream)";
    if (!q->notify_stream)
        r = kiln__cu.cuStreamCreate(&q->notify_stream, CU_STREAM_NON_BLOCKING);
    if (r == CUDA_SUCCESS) {
        call = "cuStreamWaitEvent";
        r = kiln__cu.cuStreamWaitEvent(q->notify_stream, e->end, 0);
    }
    if (r == CUDA_SUCCESS) {
        call = "cuStreamAddCallback";
        r = kiln__cu.cuStreamAddCallback(q->notify_stream, kiln__cu_note_cb, n, 0);
    }
    pthread_mutex_unlock(&q->lock);
    if (r != CUDA_SUCCESS) {
        kiln__cu_event_release(e);
        free(n);
        return kiln__cu_fail(call, r);
    }
    return KILN_OK;
}

void kiln__cu_event_attach_notes(kiln__cu_event *e) {
    pthread_mutex_lock(&e->lock);
    kiln__cu_notify *n = e->notes;
    e->notes = NULL;
    pthread_mutex_unlock(&e->lock);
    /* registered in the order they were asked for */
    kiln__cu_notify *rev = NULL;
    while (n) {
        kiln__cu_notify *next = n->next;
        n->next = rev;
        rev = n;
        n = next;
    }
    while (rev) {
        kiln__cu_notify *next = rev->next;
        if (kiln__cu_event_notify(e, rev->fn, rev->arg) != KILN_OK)
            rev->fn(rev->arg, 1); /* could not watch it: said failed */
        free(rev);
        rev = next;
    }
}

kiln_status kiln__cu_user_event_create(void *context, void **event) {
    *event = NULL;
    kiln__cu_context *c = context;
    kiln__cu_reap();
    kiln__cu_event *e = kiln__calloc(1, sizeof *e);
    if (!e)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    kiln_status st = kiln__cu_slot_get(&c->dev[0], &e->slot, &e->target);
    if (st != KILN_OK) {
        free(e);
        return st;
    }
    atomic_init(&e->refs, 1);
    e->is_user = 1;
    atomic_fetch_add(&kiln__cu_unset_user_events, 1);
    e->ctx = c;
    kiln__cu_context_ref(c);
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->cond, NULL);
    e->queued_ns = kiln__cu_now_ns();
    *event = e;
    return KILN_OK;
}

kiln_status kiln__cu_user_event_set(void *event, int failed) {
    kiln__cu_event *e = event;
    if (!e->is_user)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "only user events can be completed by the host");
    pthread_mutex_lock(&e->lock);
    if (e->done) {
        pthread_mutex_unlock(&e->lock);
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0, "the user event was already completed");
    }
    e->done = 1;
    e->failed = failed ? 1 : 0;
    __atomic_store_n(kiln__cu_slot_word(e->slot), e->target, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&e->cond);
    kiln__cu_notify *notes = e->notes;
    e->notes = NULL;
    pthread_mutex_unlock(&e->lock);
    kiln__cu_gate_kick(); /* what was held behind it goes (or fails) */
    atomic_fetch_sub(&kiln__cu_unset_user_events, 1);
    kiln__cu_fire_notes(notes, failed ? 1 : 0);
    return KILN_OK;
}
