/* Completion callbacks and continuations.
 *
 * The backend's notification (often on a driver thread) only appends a
 * node to a mutex+condvar work queue; ONE kiln-owned thread named
 * "kiln-callback", started on first use, drains it and calls the user's
 * callbacks one at a time, in completion order. The event is retained from
 * registration until its callback has run. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "base/thread.h"
#include "core/internal.h"

/* ------------------------------------------------------------ callback thread */

typedef struct kiln__cb_node {
    kiln__fifo_link link;         /* first: the callback thread's FIFO node */
    kiln_event *event;            /* retained until the callback ran */
    kiln_event_callback callback; /* either a callback ... */
    void *user_data;
    kiln_continuation fn;   /* ... or a continuation completing next_event */
    kiln_event *next_event; /* retained until completed */
    int failed;
} kiln__cb_node;

static pthread_once_t kiln__cb_once = PTHREAD_ONCE_INIT;
static kiln__fifo kiln__cb_fifo = KILN__FIFO_INITIALIZER;
static int kiln__cb_started;
static _Thread_local int kiln__cb_this_thread; /* 1 on the kiln-callback thread */

int kiln__on_callback_thread(void) {
    return kiln__cb_this_thread;
}

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
    assert((node->callback != NULL) != (node->fn != NULL) && "a completion runs one function");
    assert((node->fn == NULL || node->next_event) && "a continuation has its next event");
    if (node->callback) {
        node->callback(node->event, state, node->user_data);
    } else {
        kiln_status r = node->fn(state, node->user_data);
        kiln_event *next = node->next_event;
        kiln__event_user_end(next, node->failed || r != KILN_OK);
        kiln_event_release(next);
    }
    kiln_event_release(node->event);
    free(node);
}

static void *kiln__cb_main(void *arg) {
    (void)arg;
    kiln__thread_name("kiln-callback");
    kiln__cb_this_thread = 1;
    for (;;)
        kiln__cb_run((kiln__cb_node *)kiln__fifo_wait_pop(&kiln__cb_fifo));
    return NULL;
}

static void kiln__cb_start(void) {
    kiln__cb_started = kiln__thread_detached(kiln__cb_main, NULL);
}

/* The backend's notification: queue the node for the callback thread. */
static void kiln__cb_notify(void *arg, int failed) {
    kiln__cb_node *node = arg;
    node->failed = failed;
    kiln__fifo_push(&kiln__cb_fifo, &node->link);
}

static kiln_status kiln__cb_register(kiln_event *event, kiln__cb_node *node) {
    pthread_once(&kiln__cb_once, kiln__cb_start);
    if (!kiln__cb_started)
        return kiln__error_set(KILN_ERROR_INTERNAL, 0, "could not start the kiln-callback thread");
    if (event->graph)
        return kiln__graph_refuse(event->graph, "a callback, continuation or future",
                                  KILN__RECORDED_WHY);
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
    kiln__cb_node *node = kiln__calloc(1, sizeof *node);
    if (!node)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_event_on_complete: out of memory");
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
    kiln__cb_node *node = kiln__calloc(1, sizeof *node);
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
