/* Events, wait lists, user events, callbacks and continuations.
 *
 * Callbacks: the backend's notification (often on a driver thread) only
 * appends a node to a mutex+condvar work queue; ONE kiln-owned thread named
 * "kiln-callback", started on first use, drains it and calls the user's
 * callbacks one at a time, in completion order. The event is retained from
 * registration until its callback has run. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* ------------------------------------------------------------ wrapping */

static kiln_event *kiln__event_alloc(kiln_context *context, void *handle, int profiling) {
    kiln_event *ev = malloc(sizeof *ev);
    if (!ev)
        return NULL;
    atomic_init(&ev->refs, 1);
    ev->backend = context->backend;
    ev->handle = handle;
    ev->context = context;
    ev->profiling = (unsigned char)(profiling != 0);
    ev->user = 0;
    atomic_init(&ev->user_set, 0);
    kiln__context_retain(context);
    return ev;
}

kiln_status kiln__event_wrap(kiln_context *context, void *handle, int profiling,
                             kiln_event **event) {
    kiln_event *ev = kiln__event_alloc(context, handle, profiling);
    if (!ev) {
        context->backend->event_release(handle);
        *event = NULL;
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory for an event");
    }
    *event = ev;
    return KILN_OK;
}

/* A backend user event on the context, wrapped; not yet completed. */
static kiln_status kiln__event_user_new(kiln_context *context, kiln_event **event) {
    void *h = NULL;
    kiln_status st = context->backend->user_event_create(context->handle, &h);
    if (st != KILN_OK) {
        *event = NULL;
        return st;
    }
    return kiln__event_wrap(context, h, 0, event);
}

kiln_status kiln__event_completed(kiln_context *context, kiln_event **event) {
    kiln_status st = kiln__event_user_new(context, event);
    if (st != KILN_OK)
        return st;
    atomic_store(&(*event)->user_set, 1); /* not for the user to complete */
    st = context->backend->user_event_set((*event)->handle, 0);
    if (st != KILN_OK) {
        kiln_event_release(*event);
        *event = NULL;
    }
    return st;
}

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
                                   "wait[%zu] is NULL (a wait list holds %zu events, none NULL)",
                                   i, num_wait);
        foreign |= wait[i]->context != context;
    }
    void **list = storage;
    if (num_wait > KILN__STACK_ARGS || foreign) {
        list = num_wait <= SIZE_MAX / (2 * sizeof *list) ? calloc(2 * num_wait, sizeof *list)
                                                          : NULL;
        if (!list)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory for a wait list");
    }
    for (size_t i = 0; i < num_wait; i++) {
        kiln_event *ev = wait[i];
        if (ev->context != context) {
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

/* The event of an operation with nothing to do (zero bytes, an empty
 * range): complete at once, unless it has a wait list, whose events it must
 * still follow (a marker over them). */
kiln_status kiln__nothing_done(kiln_queue *queue, size_t num_wait, kiln_event *const *wait,
                               kiln_event **event) {
    if (num_wait) /* also checks the list, even when no event is asked for */
        return kiln_queue_marker(queue, num_wait, wait, event);
    return event ? kiln__event_completed(queue->context, event) : KILN_OK;
}

/* ------------------------------------------------------------ basics */

kiln_status kiln_event_retain(kiln_event *event) {
    if (!event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_retain: event is NULL");
    atomic_fetch_add_explicit(&event->refs, 1, memory_order_relaxed);
    return KILN_OK;
}

void kiln_event_release(kiln_event *event) {
    if (!event || atomic_fetch_sub_explicit(&event->refs, 1, memory_order_acq_rel) != 1)
        return;
    event->backend->event_release(event->handle);
    kiln__context_unref(event->context);
    free(event);
}

kiln_status kiln_event_wait(kiln_event *event) {
    if (!event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_wait: event is NULL");
    kiln_status st = event->backend->event_wait(1, &event->handle);
    return st == KILN_OK ? st : kiln__error_prefix(st, "kiln_event_wait");
}

kiln_status kiln_events_wait(size_t num, kiln_event *const *events) {
    if (num == 0)
        return KILN_OK;
    if (!events)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_events_wait: events is NULL but num is %zu", num);
    void *storage[KILN__STACK_ARGS];
    void **list = storage;
    if (num > KILN__STACK_ARGS) {
        list = malloc(num * sizeof *list);
        if (!list)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_events_wait: out of memory");
    }
    /* One driver call when all events share a context (OpenCL's
     * clWaitForEvents requires it), else one per event. */
    const kiln__backend *be = NULL;
    const kiln_context *ctx = NULL;
    int mixed = 0;
    size_t n = 0;
    for (size_t i = 0; i < num; i++) {
        if (!events[i])
            continue;
        if (ctx && events[i]->context != ctx)
            mixed = 1;
        ctx = events[i]->context;
        be = events[i]->backend;
        list[n++] = events[i]->handle;
    }
    kiln_status st = KILN_OK;
    if (n && !mixed) {
        st = be->event_wait(n, list);
    } else if (n) {
        for (size_t i = 0; i < num; i++) {
            if (!events[i])
                continue;
            kiln_status s = events[i]->backend->event_wait(1, &events[i]->handle);
            if (s != KILN_OK && st == KILN_OK)
                st = s;
        }
    }
    if (list != storage)
        free(list);
    return st == KILN_OK ? st : kiln__error_prefix(st, "kiln_events_wait");
}

kiln_status kiln_event_get_state(kiln_event *event, kiln_event_state *state) {
    if (!event || !state)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_get_state: %s is NULL",
                               event ? "state" : "event");
    kiln_status st = event->backend->event_state(event->handle, state);
    return st == KILN_OK ? st : kiln__error_prefix(st, "kiln_event_get_state");
}

kiln_status kiln_event_get_times(kiln_event *event, kiln_event_times *times) {
    if (!event || !times)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_get_times: %s is NULL",
                               event ? "times" : "event");
    if (!event->profiling)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_event_get_times: the event %s; create the queue with "
                               "KILN_QUEUE_PROFILING",
                               event->user ? "is a user event, which has no profiling times"
                                           : "comes from a queue made without profiling");
    kiln_event_state s;
    kiln_status st = event->backend->event_state(event->handle, &s);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "kiln_event_get_times");
    if (s != KILN_EVENT_COMPLETE)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_event_get_times: the event has not completed (state %d); "
                               "wait for it first", (int)s);
    st = event->backend->event_times(event->handle, times);
    return st == KILN_OK ? st : kiln__error_prefix(st, "kiln_event_get_times");
}

kiln_status kiln_event_create_user(kiln_context *context, kiln_event **event) {
    if (!event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_create_user: event is NULL");
    *event = NULL;
    if (!context)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_create_user: context is NULL");
    kiln_status st = kiln__event_user_new(context, event);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "kiln_event_create_user");
    (*event)->user = 1;
    return KILN_OK;
}

kiln_status kiln_event_set_complete(kiln_event *event, kiln_event_state state) {
    if (!event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_set_complete: event is NULL");
    if (!event->user)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_event_set_complete: not a user event "
                               "(only kiln_event_create_user events are completed by the host)");
    if (state != KILN_EVENT_COMPLETE && state != KILN_EVENT_ERROR)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_event_set_complete: state must be KILN_EVENT_COMPLETE or "
                               "KILN_EVENT_ERROR, got %d", (int)state);
    if (atomic_exchange(&event->user_set, 1))
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_event_set_complete: the user event was completed already");
    kiln_status st = event->backend->user_event_set(event->handle, state == KILN_EVENT_ERROR);
    if (st != KILN_OK) {
        atomic_store(&event->user_set, 0);
        return kiln__error_prefix(st, "kiln_event_set_complete");
    }
    return KILN_OK;
}

/* ------------------------------------------------------------ callback thread */

typedef struct kiln__cb_node {
    struct kiln__cb_node *next;
    kiln_event *event;            /* retained until the callback ran */
    kiln_event_callback callback; /* either a callback ... */
    void *user_data;
    kiln_continuation fn;         /* ... or a continuation completing next_event */
    kiln_event *next_event;       /* retained until completed */
    int failed;
} kiln__cb_node;

static pthread_once_t kiln__cb_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t kiln__cb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kiln__cb_cond = PTHREAD_COND_INITIALIZER;
static kiln__cb_node *kiln__cb_head, *kiln__cb_tail;
static int kiln__cb_started;

static void kiln__cb_run(kiln__cb_node *node) {
    /* Some drivers (PoCL) report CL_COMPLETE to a callback registered on an
     * event that had already failed: ask the event itself. */
    if (!node->failed) {
        kiln_event_state s = KILN_EVENT_COMPLETE;
        if (node->event->backend->event_state(node->event->handle, &s) == KILN_OK &&
            s == KILN_EVENT_ERROR)
            node->failed = 1;
    }
    kiln_event_state state = node->failed ? KILN_EVENT_ERROR : KILN_EVENT_COMPLETE;
    if (node->callback) {
        node->callback(node->event, state, node->user_data);
    } else {
        kiln_status r = node->fn(state, node->user_data);
        kiln_event *next = node->next_event;
        next->backend->user_event_set(next->handle, node->failed || r != KILN_OK);
        kiln_event_release(next);
    }
    kiln_event_release(node->event);
    free(node);
}

static void *kiln__cb_main(void *arg) {
    (void)arg;
#if defined(__linux__)
    pthread_setname_np(pthread_self(), "kiln-callback");
#endif
    for (;;) {
        pthread_mutex_lock(&kiln__cb_lock);
        while (!kiln__cb_head)
            pthread_cond_wait(&kiln__cb_cond, &kiln__cb_lock);
        kiln__cb_node *node = kiln__cb_head;
        kiln__cb_head = node->next;
        if (!kiln__cb_head)
            kiln__cb_tail = NULL;
        pthread_mutex_unlock(&kiln__cb_lock);
        kiln__cb_run(node);
    }
    return NULL;
}

static void kiln__cb_start(void) {
    pthread_t thread;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attr, kiln__cb_main, NULL) == 0)
        kiln__cb_started = 1;
    pthread_attr_destroy(&attr);
}

/* The backend's notification: queue the node for the callback thread. */
static void kiln__cb_notify(void *arg, int failed) {
    kiln__cb_node *node = arg;
    node->failed = failed;
    node->next = NULL;
    pthread_mutex_lock(&kiln__cb_lock);
    if (kiln__cb_tail)
        kiln__cb_tail->next = node;
    else
        kiln__cb_head = node;
    kiln__cb_tail = node;
    pthread_cond_signal(&kiln__cb_cond);
    pthread_mutex_unlock(&kiln__cb_lock);
}

static kiln_status kiln__cb_register(kiln_event *event, kiln__cb_node *node) {
    pthread_once(&kiln__cb_once, kiln__cb_start);
    if (!kiln__cb_started)
        return kiln__error_set(KILN_ERROR_INTERNAL, 0, "could not start the kiln-callback thread");
    kiln_event_retain(event);
    node->event = event;
    kiln_status st = event->backend->event_notify(event->handle, kiln__cb_notify, node);
    if (st != KILN_OK) {
        kiln_event_release(event);
        return st;
    }
    return KILN_OK;
}

kiln_status kiln_event_on_complete(kiln_event *event, kiln_event_callback callback,
                                   void *user_data) {
    if (!event || !callback)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_on_complete: %s is NULL",
                               event ? "callback" : "event");
    kiln__cb_node *node = calloc(1, sizeof *node);
    if (!node)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_event_on_complete: out of memory");
    node->callback = callback;
    node->user_data = user_data;
    kiln_status st = kiln__cb_register(event, node);
    if (st != KILN_OK) {
        free(node);
        return kiln__error_prefix(st, "kiln_event_on_complete");
    }
    return KILN_OK;
}

kiln_status kiln_event_then(kiln_event *event, kiln_continuation fn, void *user_data,
                            kiln_event **next) {
    if (!next)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_then: next is NULL");
    *next = NULL;
    if (!event || !fn)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_then: %s is NULL",
                               event ? "fn" : "event");
    kiln__cb_node *node = calloc(1, sizeof *node);
    if (!node)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_event_then: out of memory");
    kiln_event *ne = NULL;
    kiln_status st = kiln__event_user_new(event->context, &ne);
    if (st != KILN_OK) {
        free(node);
        return kiln__error_prefix(st, "kiln_event_then");
    }
    atomic_store(&ne->user_set, 1); /* completed by kiln, not by the user */
    kiln_event_retain(ne);          /* the node's reference */
    node->fn = fn;
    node->user_data = user_data;
    node->next_event = ne;
    st = kiln__cb_register(event, node);
    if (st != KILN_OK) {
        free(node);
        kiln_event_release(ne);
        kiln_event_release(ne);
        return kiln__error_prefix(st, "kiln_event_then");
    }
    *next = ne;
    return KILN_OK;
}
