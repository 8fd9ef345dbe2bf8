/* CUDA events: command events (a CUevent recorded after each command, and
 * one before it on profiling queues), user events, notifications.
 *
 * User events and streams: a stream cannot cuStreamWaitEvent on something
 * the host completes. Each user event owns a 32-bit word in pinned, mapped
 * host memory; a stream that must wait for it enqueues cuStreamWaitValue32
 * (GEQ target) on that word, and kiln_event_set_complete writes the target.
 * The words live in slabs that are never freed, and each word's target only
 * grows, so a stream still polling a word after its event was released can
 * never miss its value or read freed memory. If the driver refuses stream
 * memory operations, the stream instead runs a host function that blocks
 * until the event is set (cuLaunchHostFunc), which is correct but holds a
 * driver callback thread.
 *
 * Failure: commands that waited on a user event completed with
 * KILN_EVENT_ERROR report KILN_EVENT_ERROR too (the failure is inherited
 * through wait lists), but on CUDA they still run: a stream cannot skip an
 * enqueued command.
 *
 * Notifications for command events use cuStreamAddCallback on a per-queue
 * side stream that waits for the event: unlike cuLaunchHostFunc it is
 * called even when the context has failed (with the error), so a
 * notification fires exactly once either way. It runs on a driver thread,
 * where CUDA calls are forbidden: objects whose last reference drops there
 * go to a list that the next ordinary backend call destroys (kcu_reap). */
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "core/error.h"

_Thread_local int kcu_in_callback;

typedef struct kcu_notify {
    kcu_event *ev;
    kiln__notify_fn fn;
    void *arg;
    struct kcu_notify *next;
} kcu_notify;

/* ---- pinned flag words for user events -------------------------------- */

#define KCU_SLAB_WORDS 1024
#define KCU_MAX_SLABS 1024
static pthread_mutex_t kcu_slot_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *kcu_slabs[KCU_MAX_SLABS];
static size_t kcu_num_slabs;
static uint32_t *kcu_slot_target; /* last target handed out, per word */
static int *kcu_free_slots;
static size_t kcu_num_free;

static volatile uint32_t *kcu_slot_word(int slot)
{
    return &kcu_slabs[slot / KCU_SLAB_WORDS][slot % KCU_SLAB_WORDS];
}

static kiln_status kcu_slot_get(CUcontext ctx, int *slot, uint32_t *target)
{
    pthread_mutex_lock(&kcu_slot_lock);
    if (kcu_num_free == 0) {
        if (kcu_num_slabs == KCU_MAX_SLABS) {
            pthread_mutex_unlock(&kcu_slot_lock);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "too many live user events");
        }
        size_t words = (kcu_num_slabs + 1) * KCU_SLAB_WORDS;
        uint32_t *t = realloc(kcu_slot_target, words * sizeof *t);
        int *f = t ? realloc(kcu_free_slots, words * sizeof *f) : NULL;
        if (t)
            kcu_slot_target = t;
        if (f)
            kcu_free_slots = f;
        if (!t || !f) {
            pthread_mutex_unlock(&kcu_slot_lock);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "realloc");
        }
        void *p = NULL;
        kiln_status st = kcu_ctx_use(ctx);
        CUresult r = CUDA_SUCCESS;
        if (st == KILN_OK)
            r = kcu.cuMemHostAlloc(&p, KCU_SLAB_WORDS * sizeof(uint32_t),
                                   CU_MEMHOSTALLOC_PORTABLE |
                                       CU_MEMHOSTALLOC_DEVICEMAP);
        if (st == KILN_OK && r != CUDA_SUCCESS)
            st = kcu_fail("cuMemHostAlloc (user event flags)", r);
        if (st != KILN_OK) {
            pthread_mutex_unlock(&kcu_slot_lock);
            return st;
        }
        memset(p, 0, KCU_SLAB_WORDS * sizeof(uint32_t));
        size_t base = kcu_num_slabs * KCU_SLAB_WORDS;
        kcu_slabs[kcu_num_slabs++] = p;
        for (size_t i = 0; i < KCU_SLAB_WORDS; i++) {
            kcu_slot_target[base + i] = 0;
            kcu_free_slots[kcu_num_free++] = (int)(base + KCU_SLAB_WORDS - 1 - i);
        }
    }
    *slot = kcu_free_slots[--kcu_num_free];
    uint32_t t = kcu_slot_target[*slot] + 1;
    if (t == 0) /* never use 0: a fresh word holds it */
        t = 1;
    kcu_slot_target[*slot] = t;
    *target = t;
    pthread_mutex_unlock(&kcu_slot_lock);
    return KILN_OK;
}

static void kcu_slot_put(int slot)
{
    pthread_mutex_lock(&kcu_slot_lock);
    kcu_free_slots[kcu_num_free++] = slot;
    pthread_mutex_unlock(&kcu_slot_lock);
}

/* ---- deferred destruction -------------------------------------------- */

static pthread_mutex_t kcu_grave_lock = PTHREAD_MUTEX_INITIALIZER;
static kcu_event *kcu_grave;
static atomic_int kcu_grave_nonempty;

static void kcu_event_destroy_now(kcu_event *e);

void kcu_reap(void)
{
    if (kcu_in_callback || !atomic_load(&kcu_grave_nonempty))
        return;
    pthread_mutex_lock(&kcu_grave_lock);
    kcu_event *list = kcu_grave;
    kcu_grave = NULL;
    atomic_store(&kcu_grave_nonempty, 0);
    pthread_mutex_unlock(&kcu_grave_lock);
    while (list) {
        kcu_event *next = list->next_free;
        kcu_event_destroy_now(list);
        list = next;
    }
}

/* ---- event objects ----------------------------------------------------- */

static void kcu_fire_notes(kcu_notify *n, int failed)
{
    while (n) {
        kcu_notify *next = n->next;
        n->fn(n->arg, failed);
        free(n);
        n = next;
    }
}

static void kcu_event_destroy_now(kcu_event *e)
{
    for (size_t i = 0; i < e->num_deps; i++)
        kcu_event_release(e->deps[i]);
    e->num_deps = 0;
    if (e->is_user) {
        kcu_notify *notes = NULL;
        pthread_mutex_lock(&e->lock);
        if (!e->done) {
            /* Abandoned unset: complete it as failed so that streams
             * waiting on its word go on and the word can be reused. */
            e->done = 1;
            e->failed = 1;
            __atomic_store_n(kcu_slot_word(e->slot), e->target,
                             __ATOMIC_RELEASE);
            notes = e->notes;
            e->notes = NULL;
        }
        pthread_mutex_unlock(&e->lock);
        kcu_fire_notes(notes, 1);
        kcu_slot_put(e->slot);
        kcu_context_unref(e->ctx);
        pthread_mutex_destroy(&e->lock);
        pthread_cond_destroy(&e->cond);
        free(e->deps);
        free(e);
        return;
    }
    kcu_queue *q = e->queue;
    pthread_mutex_lock(&q->pool_lock);
    int keep = q->pool_size < 64;
    if (keep) {
        e->next_free = q->pool;
        q->pool = e;
        q->pool_size++;
    }
    pthread_mutex_unlock(&q->pool_lock);
    if (!keep) {
        if (kcu_ctx_use(q->dev->ctx) == KILN_OK) {
            if (e->start)
                kcu.cuEventDestroy(e->start);
            kcu.cuEventDestroy(e->end);
        }
        pthread_mutex_destroy(&e->lock);
        pthread_cond_destroy(&e->cond);
        free(e->deps);
        free(e);
    }
    kcu_queue_unref(q);
}

void kcu_event_retain(void *ev) { atomic_fetch_add(&((kcu_event *)ev)->refs, 1); }

void kcu_event_release(void *ev)
{
    kcu_event *e = ev;
    if (!e || atomic_fetch_sub(&e->refs, 1) != 1)
        return;
    if (kcu_in_callback) {
        pthread_mutex_lock(&kcu_grave_lock);
        e->next_free = kcu_grave;
        kcu_grave = e;
        atomic_store(&kcu_grave_nonempty, 1);
        pthread_mutex_unlock(&kcu_grave_lock);
        return;
    }
    kcu_reap();
    kcu_event_destroy_now(e);
}

kiln_status kcu_event_new(kcu_queue *q, kcu_event **out)
{
    *out = NULL;
    kcu_event *e = NULL;
    pthread_mutex_lock(&q->pool_lock);
    if (q->pool) {
        e = q->pool;
        q->pool = e->next_free;
        q->pool_size--;
    }
    pthread_mutex_unlock(&q->pool_lock);
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
        unsigned flags = q->profiling ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
        CUresult r = kcu.cuEventCreate(&e->end, flags);
        if (r == CUDA_SUCCESS && q->profiling) {
            r = kcu.cuEventCreate(&e->start, CU_EVENT_DEFAULT);
            if (r != CUDA_SUCCESS)
                kcu.cuEventDestroy(e->end);
        }
        if (r != CUDA_SUCCESS) {
            free(e);
            return kcu_fail("cuEventCreate", r);
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
    e->notes = NULL;
    e->next_free = NULL;
    kcu_queue_ref(q);
    *out = e;
    return KILN_OK;
}

static kiln_status kcu_add_dep(kcu_event *ev, kcu_event *u)
{
    for (size_t i = 0; i < ev->num_deps; i++)
        if (ev->deps[i] == u)
            return KILN_OK;
    if (ev->num_deps == ev->cap_deps) {
        size_t cap = ev->cap_deps ? ev->cap_deps * 2 : 4;
        kcu_event **d = realloc(ev->deps, cap * sizeof *d);
        if (!d)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "realloc");
        ev->deps = d;
        ev->cap_deps = cap;
    }
    kcu_event_retain(u);
    ev->deps[ev->num_deps++] = u;
    return KILN_OK;
}

static void kcu_block_on_user(void *p)
{
    kcu_event *u = p;
    kcu_in_callback = 1;
    pthread_mutex_lock(&u->lock);
    while (!u->done)
        pthread_cond_wait(&u->cond, &u->lock);
    pthread_mutex_unlock(&u->lock);
    kcu_event_release(u);
    kcu_in_callback = 0;
}

kiln_status kcu_wait_list(kcu_queue *q, size_t num_wait, void *const *wait,
                          kcu_event *ev)
{
    for (size_t i = 0; i < num_wait; i++) {
        kcu_event *w = wait[i];
        if (!w)
            continue;
        if (w->is_user) {
            pthread_mutex_lock(&w->lock);
            int done = w->done, failed = w->failed;
            pthread_mutex_unlock(&w->lock);
            if (ev && failed)
                ev->failed = 1;
            if (done)
                continue;
            if (ev) {
                kiln_status st = kcu_add_dep(ev, w);
                if (st != KILN_OK)
                    return st;
            }
            CUdeviceptr word = (CUdeviceptr)(uintptr_t)kcu_slot_word(w->slot);
            CUresult r = kcu.cuStreamWaitValue32(q->stream, word, w->target,
                                                 CU_STREAM_WAIT_VALUE_GEQ);
            if (r != CUDA_SUCCESS) {
                kcu_event_retain(w);
                r = kcu.cuLaunchHostFunc(q->stream, kcu_block_on_user, w);
                if (r != CUDA_SUCCESS) {
                    kcu_event_release(w);
                    return kcu_fail("cuLaunchHostFunc (wait for user event)", r);
                }
            }
            continue;
        }
        if (w->queue->stream != q->stream) {
            CUresult r = kcu.cuStreamWaitEvent(q->stream, w->end, 0);
            if (r != CUDA_SUCCESS)
                return kcu_fail("cuStreamWaitEvent", r);
        }
        if (ev) {
            /* inherit the user events w depends on */
            pthread_mutex_lock(&w->lock);
            kiln_status st = KILN_OK;
            if (w->failed)
                ev->failed = 1;
            for (size_t k = 0; k < w->num_deps && st == KILN_OK; k++)
                st = kcu_add_dep(ev, w->deps[k]);
            pthread_mutex_unlock(&w->lock);
            if (st != KILN_OK)
                return st;
        }
    }
    return KILN_OK;
}

kiln_status kcu_event_begin(kcu_queue *q, kcu_event *ev)
{
    ev->queued_ns = kcu_now_ns();
    if (q->profiling) {
        CUresult r = kcu.cuEventRecord(ev->start, q->stream);
        if (r != CUDA_SUCCESS)
            return kcu_fail("cuEventRecord", r);
    }
    return KILN_OK;
}

kiln_status kcu_event_end(kcu_queue *q, kcu_event *ev)
{
    CUresult r = kcu.cuEventRecord(ev->end, q->stream);
    return r == CUDA_SUCCESS ? KILN_OK : kcu_fail("cuEventRecord", r);
}

/* Failure of a command event whose CUevent ended with r. Host-only (safe in
 * driver callbacks). */
static int kcu_resolve(kcu_event *e, CUresult r)
{
    pthread_mutex_lock(&e->lock);
    if (!e->done) {
        int failed = e->failed || r != CUDA_SUCCESS;
        for (size_t i = 0; i < e->num_deps && !failed; i++) {
            kcu_event *u = e->deps[i];
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

kiln_status kcu_event_wait(size_t num, void *const *events)
{
    kcu_reap();
    kiln_status result = KILN_OK;
    for (size_t i = 0; i < num; i++) {
        kcu_event *e = events[i];
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
            kiln_status st = kcu_ctx_use(e->queue->dev->ctx);
            if (st != KILN_OK)
                return st;
            r = kcu.cuEventSynchronize(e->end);
            failed = kcu_resolve(e, r);
        }
        if (failed && result == KILN_OK) {
            if (r != CUDA_SUCCESS) {
                kcu_fail("cuEventSynchronize", r);
                result = kiln__error_prefix(KILN_ERROR_EVENT_FAILED,
                                            "a command failed on the device");
            } else {
                result = kiln__error_set(KILN_ERROR_EVENT_FAILED, 0,
                                         "%s", e->is_user
                                                   ? "the user event was completed with an error"
                                                   : "a user event this command waited for failed");
            }
        }
    }
    return result;
}

kiln_status kcu_event_state(void *event, kiln_event_state *state)
{
    kcu_event *e = event;
    if (e->is_user) {
        pthread_mutex_lock(&e->lock);
        *state = !e->done ? KILN_EVENT_SUBMITTED
                          : e->failed ? KILN_EVENT_ERROR : KILN_EVENT_COMPLETE;
        pthread_mutex_unlock(&e->lock);
        return KILN_OK;
    }
    kiln_status st = kcu_ctx_use(e->queue->dev->ctx);
    if (st != KILN_OK)
        return st;
    CUresult r = kcu.cuEventQuery(e->end);
    if (r == CUDA_ERROR_NOT_READY) {
        *state = KILN_EVENT_SUBMITTED;
        if (e->start && kcu.cuEventQuery(e->start) == CUDA_SUCCESS)
            *state = KILN_EVENT_RUNNING;
        return KILN_OK;
    }
    *state = kcu_resolve(e, r) ? KILN_EVENT_ERROR : KILN_EVENT_COMPLETE;
    return KILN_OK;
}

/* queued: host clock at enqueue. submitted: the same (CUDA submits at
 * enqueue). started/ended: base_ns + elapsed(base, start|end) from the
 * queue's base CUevent, so every time is CLOCK_MONOTONIC ns. Durations come
 * from elapsed(start, end) and keep CUDA's ~0.5 us resolution; absolute
 * times lose precision as the queue ages (float ms: ~1 us after 10 s). */
kiln_status kcu_event_times(void *event, kiln_event_times *t)
{
    kcu_event *e = event;
    if (e->is_user || !e->queue->profiling)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "profiling times need a command event of a "
                               "queue created with KILN_QUEUE_PROFILING");
    kcu_queue *q = e->queue;
    kiln_status st = kcu_ctx_use(q->dev->ctx);
    if (st != KILN_OK)
        return st;
    CUresult r = kcu.cuEventQuery(e->end);
    if (r == CUDA_ERROR_NOT_READY)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "the event has not completed yet");
    if (r != CUDA_SUCCESS)
        return kcu_fail("cuEventQuery", r);
    float from_base = 0, dur = 0;
    r = kcu.elapsed(&from_base, q->base, e->start);
    if (r != CUDA_SUCCESS)
        return kcu_fail("cuEventElapsedTime", r);
    r = kcu.elapsed(&dur, e->start, e->end);
    if (r != CUDA_SUCCESS)
        return kcu_fail("cuEventElapsedTime", r);
    double s = (double)q->base_ns + (double)from_base * 1e6;
    uint64_t started = s < 0 ? 0 : (uint64_t)s;
    uint64_t d = dur > 0 ? (uint64_t)((double)dur * 1e6) : 0;
    t->queued = e->queued_ns;
    t->submitted = e->queued_ns;
    /* the base is read just after its CUevent completed, so device times
     * are late by at most that latency; keep the four times ordered */
    t->started = started < t->submitted ? t->submitted : started;
    t->ended = t->started + d;
    return KILN_OK;
}

static void CUDA_CB kcu_note_cb(CUstream s, CUresult status, void *p)
{
    kcu_notify *n = p;
    kcu_in_callback = 1;
    int failed = kcu_resolve(n->ev, status);
    n->fn(n->arg, failed);
    kcu_event_release(n->ev);
    free(n);
    kcu_in_callback = 0;
}

kiln_status kcu_event_notify(void *event, kiln__notify_fn fn, void *arg)
{
    kcu_event *e = event;
    kcu_reap();
    if (e->is_user) {
        pthread_mutex_lock(&e->lock);
        if (e->done) {
            int failed = e->failed;
            pthread_mutex_unlock(&e->lock);
            fn(arg, failed);
            return KILN_OK;
        }
        kcu_notify *n = malloc(sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&e->lock);
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
        }
        n->ev = e;
        n->fn = fn;
        n->arg = arg;
        n->next = e->notes;
        e->notes = n;
        pthread_mutex_unlock(&e->lock);
        return KILN_OK;
    }
    kcu_queue *q = e->queue;
    kiln_status st = kcu_ctx_use(q->dev->ctx);
    if (st != KILN_OK)
        return st;
    CUresult r = kcu.cuEventQuery(e->end);
    if (r != CUDA_ERROR_NOT_READY) {
        fn(arg, kcu_resolve(e, r));
        return KILN_OK;
    }
    kcu_notify *n = malloc(sizeof *n);
    if (!n)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
    n->ev = e;
    n->fn = fn;
    n->arg = arg;
    n->next = NULL;
    kcu_event_retain(e);
    pthread_mutex_lock(&q->lock);
    r = CUDA_SUCCESS;
    const char *call = "cuStreamCreate (notify stream)";
    if (!q->notify_stream)
        r = kcu.cuStreamCreate(&q->notify_stream, CU_STREAM_NON_BLOCKING);
    if (r == CUDA_SUCCESS) {
        call = "cuStreamWaitEvent";
        r = kcu.cuStreamWaitEvent(q->notify_stream, e->end, 0);
    }
    if (r == CUDA_SUCCESS) {
        call = "cuStreamAddCallback";
        r = kcu.cuStreamAddCallback(q->notify_stream, kcu_note_cb, n, 0);
    }
    pthread_mutex_unlock(&q->lock);
    if (r != CUDA_SUCCESS) {
        kcu_event_release(e);
        free(n);
        return kcu_fail(call, r);
    }
    return KILN_OK;
}

kiln_status kcu_user_event_create(void *context, void **event)
{
    *event = NULL;
    kcu_context *c = context;
    kcu_reap();
    kcu_event *e = calloc(1, sizeof *e);
    if (!e)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    kiln_status st = kcu_slot_get(c->dev[0].ctx, &e->slot, &e->target);
    if (st != KILN_OK) {
        free(e);
        return st;
    }
    atomic_init(&e->refs, 1);
    e->is_user = 1;
    e->ctx = c;
    kcu_context_ref(c);
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->cond, NULL);
    e->queued_ns = kcu_now_ns();
    *event = e;
    return KILN_OK;
}

kiln_status kcu_user_event_set(void *event, int failed)
{
    kcu_event *e = event;
    if (!e->is_user)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "only user events can be completed by the host");
    pthread_mutex_lock(&e->lock);
    if (e->done) {
        pthread_mutex_unlock(&e->lock);
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "the user event was already completed");
    }
    e->done = 1;
    e->failed = failed ? 1 : 0;
    __atomic_store_n(kcu_slot_word(e->slot), e->target, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&e->cond);
    kcu_notify *notes = e->notes;
    e->notes = NULL;
    pthread_mutex_unlock(&e->lock);
    kcu_fire_notes(notes, e->failed);
    return KILN_OK;
}
