/* Events: wrapping backend events, waits, states, profiling times and
 * user events. Wait lists are in waitlist.c, callbacks and continuations in
 * callback.c. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fault.h"
#include "core/internal.h"

/* ------------------------------------------------------------ wrapping */

kiln_event *kiln__event_alloc(kiln_context *context, void *handle, int profiling) {
    kiln_event *ev = kiln__malloc(sizeof *ev);
    if (!ev)
        return NULL;
    atomic_init(&ev->refs, 1);
    ev->backend = context->backend;
    ev->handle = handle;
    ev->context = context;
    ev->profiling = (unsigned char)(profiling != 0);
    ev->user = 0;
    atomic_init(&ev->user_set, 0);
    atomic_init(&ev->failed, 0);
    ev->label[0] = '\0';
    ev->graph = NULL;
    ev->node = 0;
    kiln__context_retain(context);
    return ev;
}

void kiln__event_discard(kiln_event *event) {
    if (!event)
        return;
    kiln__context_unref(event->context);
    free(event);
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
kiln_status kiln__event_user_new(kiln_context *context, kiln_event **event) {
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
    assert(!(*event)->user && "an event kiln completes is never a user's");
    atomic_store(&(*event)->user_set, 1); /* not for the user to complete */
    st = context->backend->user_event_set((*event)->handle, 0);
    if (st != KILN_OK) {
        kiln_event_release(*event);
        *event = NULL;
    }
    return st;
}

kiln_status kiln__event_user_end(kiln_event *event, int failed) {
    if (failed)
        atomic_store(&event->failed, 1);
    return event->backend->user_event_set(event->handle, failed);
}

/* ------------------------------------------------------------ basics */

kiln_status kiln_event_retain(kiln_event *event) {
    return kiln__ref_retain(event ? &event->refs : NULL, "kiln_event_retain", "event");
}

void kiln_event_release(kiln_event *event) {
    if (!kiln__ref_release(event ? &event->refs : NULL))
        return;
    /* A user event released unset can never complete: fail it, so the
     * work behind it fails instead of waiting for ever (and NVIDIA's
     * OpenCL, which hangs in clReleaseContext over an unset user event,
     * can let the context go). */
    if (event->user && !atomic_exchange(&event->user_set, 1))
        (void)kiln__event_user_end(event, 1);
    assert((!event->graph || !event->handle) && "a recorded command's event has no handle");
    if (event->graph)
        kiln__graph_unref(event->graph); /* a recorded command's: no handle */
    else
        event->backend->event_release(event->handle);
    kiln__context_unref(event->context);
    free(event);
}

/* The failure of a wait on event, prefixed with fn and, for a launch, the
 * kernel's name: a fault inside a kernel often reaches the host only as a
 * driver code (CL_UNKNOWN_ERROR on NVIDIA's OpenCL, an illegal address on
 * CUDA) that names nothing. */
static kiln_status kiln__wait_failed(const char *fn, const kiln_event *event, kiln_status st) {
    if (!event || !event->label[0])
        return kiln__error_prefix(st, "%s", fn);
    if (st == KILN_ERROR_DRIVER)
        return kiln__error_prefix(st,
                                  "%s: %s ended with a device error (a fault inside the "
                                  "kernel, such as an out-of-bounds access, or a lost device)",
                                  fn, event->label);
    return kiln__error_prefix(st, "%s: %s", fn, event->label);
}

kiln_status kiln_event_wait(kiln_event *event) {
    if (!event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_wait: event is NULL");
    if (event->graph)
        return kiln__graph_refuse(event->graph, "kiln_event_wait", KILN__RECORDED_WHY);
    assert(event->handle && "a live event that is not a recorded command's has a handle");
    kiln_status st = event->backend->event_wait(1, &event->handle);
    return st == KILN_OK ? st : kiln__wait_failed("kiln_event_wait", event, st);
}

static uint64_t kiln__now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Polls the event's state, sleeping 20 us at first and doubling up to
 * 1 ms: no driver offers a wait with a timeout on an event (clWaitForEvents
 * and cuEventSynchronize have none), and a callback would outlive a wait
 * that timed out. */
kiln_status kiln_event_wait_timeout(kiln_event *event, uint64_t timeout_ms) {
    if (!event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_wait_timeout: event is NULL");
    if (event->graph)
        return kiln__graph_refuse(event->graph, "kiln_event_wait_timeout", KILN__RECORDED_WHY);
    uint64_t start = kiln__now_ns(), nap = 20000;
    uint64_t limit = timeout_ms > UINT64_MAX / 1000000u ? UINT64_MAX : timeout_ms * 1000000u;
    for (;;) {
        kiln_event_state state;
        kiln_status st = event->backend->event_state(event->handle, &state);
        if (st != KILN_OK) /* NVIDIA's OpenCL: the state query itself
                            * fails after a fault in the kernel */
            return kiln__wait_failed("kiln_event_wait_timeout", event, st);
        if (state == KILN_EVENT_COMPLETE || state == KILN_EVENT_ERROR) {
            /* ended: the plain wait returns at once, with the failure's
             * status and message if it failed */
            st = event->backend->event_wait(1, &event->handle);
            return st == KILN_OK ? st : kiln__wait_failed("kiln_event_wait_timeout", event, st);
        }
        uint64_t spent = kiln__now_ns() - start;
        if (spent >= limit)
            return kiln__error_set(KILN_ERROR_TIMEOUT, 0,
                                   "kiln_event_wait_timeout: the event is still pending "
                                   "after %llu ms; its work goes on",
                                   (unsigned long long)timeout_ms);
        uint64_t sleep = nap < limit - spent ? nap : limit - spent;
        struct timespec ts = { (time_t)(sleep / 1000000000u), (long)(sleep % 1000000000u) };
        nanosleep(&ts, NULL);
        if (nap < 1000000)
            nap *= 2;
    }
}

kiln_status kiln_event_wait_all(size_t num, kiln_event *const *events) {
    if (num == 0)
        return KILN_OK;
    if (!events)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_event_wait_all: events is NULL but num is %zu", num);
    void *storage[KILN__STACK_ARGS];
    void **list = storage;
    if (num > KILN__STACK_ARGS) {
        list = kiln__malloc(num * sizeof *list);
        if (!list)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "kiln_event_wait_all: out of memory");
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
        if (events[i]->graph) {
            if (list != storage)
                free(list);
            return kiln__graph_refuse(events[i]->graph, "kiln_event_wait_all", KILN__RECORDED_WHY);
        }
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
    if (st == KILN_OK)
        return st;
    /* Name the first launch among the events that ended with an error. */
    const kiln_event *failed = NULL;
    for (size_t i = 0; i < num && !failed; i++) {
        kiln_event_state state;
        if (events[i] && events[i]->label[0] &&
            events[i]->backend->event_state(events[i]->handle, &state) == KILN_OK &&
            state == KILN_EVENT_ERROR)
            failed = events[i];
    }
    return kiln__wait_failed("kiln_event_wait_all", failed, st);
}

/* The checks of the calls that query an event: event and out not NULL
 * (out named out_name), and the event not a recorded (graph) one. */
static kiln_status check_query(const char *fn, const kiln_event *event, const void *out,
                               const char *out_name) {
    if (!event || !out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn,
                               event ? out_name : "event");
    if (event->graph)
        return kiln__graph_refuse(event->graph, fn, KILN__RECORDED_WHY);
    return KILN_OK;
}

kiln_status kiln_event_get_state(kiln_event *event, kiln_event_state *state) {
    kiln_status st = check_query("kiln_event_get_state", event, state, "state");
    if (st != KILN_OK)
        return st;
    st = event->backend->event_state(event->handle, state);
    return st == KILN_OK ? st : kiln__error_prefix(st, "kiln_event_get_state");
}

kiln_status kiln_event_get_times(kiln_event *event, kiln_event_times *times) {
    kiln_status st = check_query("kiln_event_get_times", event, times, "times");
    if (st != KILN_OK)
        return st;
    if (!event->profiling)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_event_get_times: the event %s; create the queue with "
                               "KILN_QUEUE_PROFILING",
                               event->user ? "is a user event, which has no profiling times"
                                           : "comes from a queue made without profiling");
    kiln_event_state s;
    st = event->backend->event_state(event->handle, &s);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "kiln_event_get_times");
    if (s != KILN_EVENT_COMPLETE)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_event_get_times: the event has not completed (state %d); "
                               "wait for it first",
                               (int)s);
    st = event->backend->event_times(event->handle, times);
    return st == KILN_OK ? st : kiln__error_prefix(st, "kiln_event_get_times");
}

kiln_status kiln_event_create_user(kiln_context *context, kiln_event **event) {
    if (!event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_event_create_user: event is NULL");
    *event = NULL;
    if (!context)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                               "kiln_event_create_user: context is NULL");
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
                               "KILN_EVENT_ERROR, got %d",
                               (int)state);
    assert(event->handle && !event->graph && "a user event has a backend event");
    if (atomic_exchange(&event->user_set, 1))
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_event_set_complete: the user event was completed already");
    kiln_status st = kiln__event_user_end(event, state == KILN_EVENT_ERROR);
    if (st != KILN_OK) {
        atomic_store(&event->user_set, 0);
        return kiln__error_prefix(st, "kiln_event_set_complete");
    }
    return KILN_OK;
}
