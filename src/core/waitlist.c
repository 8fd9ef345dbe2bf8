/* Wait lists: public events translated into backend events, with events
 * of other contexts bridged through the host. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "core/internal.h"

/* An event of another context (another device, or another backend) means
 * nothing to this context's driver: a user event of this context stands in
 * for it, completed from kiln's callback thread when the foreign event
 * ends. The callback holds one reference to the
 * stand-in, the wait list another until the command is enqueued. */
/* A failure does not cross the bridge: the stand-in completes normally
 * and the command behind it runs (as commands behind a failed user event
 * do on CUDA). Setting it to a failure instead made PoCL 3.1 abort
 * ("PTHREAD ERROR in pocl_update_event_failed") in tests/test_cross_context.
 * The foreign event itself still reports its failure. */
static void kiln__bridge_done(kiln_event *foreign, kiln_event_state state, void *user) {
    (void)foreign;
    (void)state;
    kiln_event *standin = user;
    kiln_event_set_complete(standin, KILN_EVENT_COMPLETE);
    kiln_event_release(standin);
}

static kiln_status kiln__bridge(kiln_context *context, kiln_event *foreign, kiln_event **out) {
    kiln_event *standin = NULL;
    kiln_status st = kiln_event_create_user(context, &standin);
    if (st != KILN_OK)
        return st;
    kiln_event_retain(standin); /* the callback's reference */
    st = kiln_event_on_complete(foreign, kiln__bridge_done, standin);
    if (st != KILN_OK) {
        kiln_event_release(standin);
        kiln_event_release(standin);
        return st;
    }
    *out = standin;
    return KILN_OK;
}

/* On PoCL a user event kiln failed (kiln__event_user_end) stands in a
 * wait list as a completed one, so the command behind it runs: PoCL 5
 * hangs a command wired to an event that has failed already, and then
 * every later wait on its queue (pocl/pocl#2214). A command enqueued
 * before the failure still fails with it; other drivers keep their rule
 * (NVIDIA's OpenCL fails the command, the CUDA backend records its event
 * failed without running it). */
static int kiln__failed_here(const kiln_context *context, kiln_event *ev) {
    return context->failed_wait_hangs && ev->context == context &&
           atomic_load_explicit(&ev->failed, memory_order_acquire);
}

/* A list longer than the stack storage, or one with stand-ins, is one
 * calloc'd block: num_wait backend handles, then num_wait stand-in events
 * (NULL where the event was the context's own). */
kiln_status kiln__wait_list(kiln_context *context, size_t num_wait, kiln_event *const *wait,
                            void **storage, void *const **out) {
    *out = NULL;
    if (num_wait == 0)
        return KILN_OK;
    if (!wait)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "the wait list is NULL but num_wait is %zu", num_wait);
    int foreign = 0;
    for (size_t i = 0; i < num_wait; i++) {
        if (!wait[i])
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                                   "wait[%zu] is NULL (a wait list holds %zu events, none NULL)", i,
                                   num_wait);
        if (wait[i]->graph) /* a call kiln__graph_of does not guard (an unmap) */
            return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                                   "wait[%zu] stands for a command recorded into a command graph: "
                                   "it never runs itself, and this call cannot be recorded",
                                   i);
        foreign |= wait[i]->context != context || kiln__failed_here(context, wait[i]);
    }
    void **list = storage;
    if (num_wait > KILN__STACK_ARGS || foreign) {
        list = num_wait <= SIZE_MAX / (2 * sizeof *list) ? kiln__calloc(2 * num_wait, sizeof *list)
                                                         : NULL;
        if (!list)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "out of memory for a wait list");
    }
    for (size_t i = 0; i < num_wait; i++) {
        kiln_event *ev = wait[i];
        if (kiln__failed_here(context, ev)) {
            kiln_event *done = NULL;
            kiln_status st = kiln__event_completed(context, &done);
            if (st != KILN_OK) {
                kiln__wait_list_free(list, storage, num_wait);
                return kiln__error_prefix(st, "wait[%zu] (a failed event)", i);
            }
            list[num_wait + i] = done;
            ev = done;
        } else if (ev->context != context) {
            kiln_event *standin = NULL;
            kiln_status st = kiln__bridge(context, ev, &standin);
            if (st != KILN_OK) {
                kiln__wait_list_free(list, storage, num_wait);
                return kiln__error_prefix(st, "wait[%zu] (an event of another context)", i);
            }
            list[num_wait + i] = standin;
            ev = standin;
        }
        list[i] = ev->handle;
    }
    *out = list;
    return KILN_OK;
}

void kiln__wait_list_free(void *const *list, void **storage, size_t num_wait) {
    if (!list || list == (void *const *)storage)
        return;
    for (size_t i = 0; i < num_wait; i++)
        kiln_event_release(list[num_wait + i]); /* NULL: no stand-in */
    free((void *)list);
}

kiln_status kiln__enqueue_begin(kiln__enqueue *e, const char *fn, kiln_queue *queue,
                                size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    e->wait = NULL;
    e->num_wait = num_wait;
    e->event = NULL;
    e->name = fn;
    e->enqueued_ns = kiln__trace_on() ? kiln__trace_now_ns() : 0;
    e->wrapper = NULL;
    e->nvtx = 0;
    /* the event is allocated before anything is enqueued (an enqueued
     * command is never reported failed for want of memory); a trace needs
     * one for every command */
    if (event || e->enqueued_ns) {
        e->wrapper =
            kiln__event_alloc(queue->context, NULL, (queue->flags & KILN_QUEUE_PROFILING) != 0);
        if (!e->wrapper) {
            kiln_status st =
                kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory for an event");
            return !fn ? st : kiln__error_prefix(st, "%s", fn);
        }
    }
    kiln_status st = kiln__wait_list(queue->context, num_wait, wait, e->storage, &e->wait);
    if (st != KILN_OK) {
        kiln__event_discard(e->wrapper);
        e->wrapper = NULL;
    } else {
        /* popped by kiln__enqueue_end; a launch (fn NULL) pushes its
         * kernel's name itself */
        e->nvtx = fn ? kiln__nvtx_push(fn) : 0;
    }
    return st == KILN_OK || !fn ? st : kiln__error_prefix(st, "%s", fn);
}

static void kiln__watch_add(kiln_queue *q, void *h);

kiln_status kiln__enqueue_end(kiln__enqueue *e, const char *fn, kiln_status st, kiln_queue *queue,
                              kiln_event **event) {
    if (e->nvtx)
        kiln__nvtx_pop();
    kiln__wait_list_free(e->wait, e->storage, e->num_wait);
    int keep = event || e->enqueued_ns; /* the caller's or the timeline's */
    if (st == KILN_OK && e->num_wait && e->event) {
        /* A command behind others can fail without a fault of its own:
         * watched for kiln_queue_finish. */
        if (keep)
            queue->backend->event_retain(e->event);
        kiln__watch_add(queue, e->event);
        if (!keep)
            e->event = NULL;
    }
    if (st != KILN_OK || !keep || !e->event) {
        kiln__event_discard(e->wrapper);
        return st == KILN_OK || !fn ? st : kiln__error_prefix(st, "%s", fn);
    }
    e->wrapper->handle = e->event;
    if (e->enqueued_ns)
        kiln__trace_command(queue, e->name, e->enqueued_ns, e->wrapper);
    if (event)
        *event = e->wrapper;
    else
        kiln_event_release(e->wrapper);
    return KILN_OK;
}

void **kiln__enqueue_out(kiln__enqueue *e, kiln_event **event) {
    return event || e->num_wait || e->enqueued_ns ? &e->event : NULL;
}

/* Drops watched events that completed without error (keeping the list
 * short on a queue that is never finished); remembers a failed one. Under
 * watch_lock. */
static void kiln__watch_prune(kiln_queue *q) {
    size_t keep = 0;
    for (size_t i = 0; i < q->num_watch; i++) {
        kiln_event_state s = KILN_EVENT_QUEUED;
        if (q->backend->event_state(q->watch[i], &s) == KILN_OK &&
            (s == KILN_EVENT_COMPLETE || s == KILN_EVENT_ERROR)) {
            if (s == KILN_EVENT_ERROR)
                q->watch_failed = 1;
            q->backend->event_release(q->watch[i]);
        } else {
            q->watch[keep++] = q->watch[i];
        }
    }
    q->num_watch = keep;
}

/* Takes over one reference to the backend event h. */
static void kiln__watch_add(kiln_queue *q, void *h) {
    pthread_mutex_lock(&q->watch_lock);
    if (q->num_watch == q->cap_watch)
        kiln__watch_prune(q);
    if (q->num_watch == q->cap_watch) {
        size_t cap = q->cap_watch ? 2 * q->cap_watch : 16;
        void **v = kiln__realloc(q->watch, cap * sizeof *v);
        if (!v) { /* unwatched: the finish then reports less, nothing worse */
            pthread_mutex_unlock(&q->watch_lock);
            q->backend->event_release(h);
            return;
        }
        q->watch = v;
        q->cap_watch = cap;
    }
    q->watch[q->num_watch++] = h;
    pthread_mutex_unlock(&q->watch_lock);
}

kiln_status kiln__queue_watch_check(kiln_queue *q) {
    pthread_mutex_lock(&q->watch_lock);
    kiln__watch_prune(q);
    int failed = q->watch_failed;
    pthread_mutex_unlock(&q->watch_lock);
    kiln__queue_watch_clear(q);
    if (failed)
        return kiln__error_set(KILN_ERROR_EVENT_FAILED, 0,
                               "kiln_queue_finish: a command on the queue did not run: a "
                               "command it waited for failed (its event says which)");
    return KILN_OK;
}

void kiln__queue_watch_clear(kiln_queue *q) {
    pthread_mutex_lock(&q->watch_lock);
    for (size_t i = 0; i < q->num_watch; i++)
        q->backend->event_release(q->watch[i]);
    q->num_watch = 0;
    q->watch_failed = 0;
    pthread_mutex_unlock(&q->watch_lock);
}

int kiln__queue_watch_pending(kiln_queue *q) {
    pthread_mutex_lock(&q->watch_lock);
    kiln__watch_prune(q);
    int pending = q->num_watch > 0;
    pthread_mutex_unlock(&q->watch_lock);
    return pending;
}
