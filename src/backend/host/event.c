/* Events: a state under the backend's lock, profiling times, and the
 * notifications to call once when the event ends. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
#include "backend/host/host.h"
#include "base/fault.h"
#include "base/strbuf.h"

kiln__lock kiln__host_lock = KILN__LOCK_INITIALIZER;
pthread_cond_t kiln__host_cond = PTHREAD_COND_INITIALIZER;

kiln__hevent *kiln__host_event_new(int user, int profiling) {
    kiln__hevent *ev = kiln__calloc(1, sizeof *ev);
    if (!ev)
        return NULL;
    atomic_init(&ev->refs, 1);
    ev->user = user;
    ev->profiling = profiling;
    ev->state = user ? KILN_EVENT_SUBMITTED : KILN_EVENT_QUEUED;
    /* the clock only where someone may read it (kiln__host_event_times):
     * three reads a command were a tenth of a small reduction's call */
    if (profiling)
        ev->t[0] = ev->t[1] = kiln__host_now_ns();
    return ev;
}

void kiln__host_event_put(kiln__hevent *ev) {
    if (!ev)
        return;
    if (kiln__ref_release(&ev->refs)) {
        kiln__hnotify *n = ev->notify;
        while (n) {
            kiln__hnotify *next = n->next;
            free(n);
            n = next;
        }
        free(ev);
    }
}

void kiln__host_event_end(kiln__hevent *ev, int failed) {
    kiln__lock_acquire(&kiln__host_lock);
    if (ev->state <= KILN_EVENT_COMPLETE) {
        kiln__lock_release(&kiln__host_lock);
        return;
    }
    if (ev->profiling) {
        uint64_t now = kiln__host_now_ns();
        if (!ev->t[2])
            ev->t[2] = now;
        ev->t[3] = now;
    }
    assert(atomic_load(&ev->refs) > 0 && "an event ended after its last release");
    ev->state = failed ? KILN_EVENT_ERROR : KILN_EVENT_COMPLETE;
    kiln__hnotify *n = ev->notify;
    ev->notify = NULL;
    kiln__ref_take(&ev->refs);
    pthread_cond_broadcast(&kiln__host_cond);
    kiln__lock_release(&kiln__host_lock);
    /* oldest first */
    kiln__hnotify *rev = NULL;
    while (n) {
        kiln__hnotify *next = n->next;
        n->next = rev;
        rev = n;
        n = next;
    }
    while (rev) {
        kiln__hnotify *next = rev->next;
        rev->fn(rev->arg, failed);
        free(rev);
        rev = next;
    }
    kiln__host_event_put(ev);
}

kiln_status kiln__host_event_wait(size_t num, void *const *events) {
    int failed = -1;
    kiln__lock_acquire(&kiln__host_lock);
    for (size_t i = 0; i < num; i++) {
        kiln__hevent *ev = events[i];
        while (ev->state > KILN_EVENT_COMPLETE)
            kiln__lock_wait(&kiln__host_cond, &kiln__host_lock);
        if (ev->state < 0 && failed < 0)
            failed = (int)i;
    }
    kiln__lock_release(&kiln__host_lock);
    if (failed >= 0)
        return kiln__error_set(KILN_ERROR_EVENT_FAILED, 0,
                               "host: event %d of %zu ended with an error", failed, num);
    return KILN_OK;
}

kiln_status kiln__host_event_state(void *event, kiln_event_state *state) {
    kiln__hevent *ev = event;
    kiln__lock_acquire(&kiln__host_lock);
    *state = (kiln_event_state)ev->state;
    kiln__lock_release(&kiln__host_lock);
    return KILN_OK;
}

kiln_status kiln__host_event_times(void *event, kiln_event_times *times) {
    kiln__hevent *ev = event;
    kiln__lock_acquire(&kiln__host_lock);
    int ended = ev->state <= KILN_EVENT_COMPLETE;
    uint64_t t[4];
    memcpy(t, ev->t, sizeof t);
    int prof = ev->profiling;
    kiln__lock_release(&kiln__host_lock);
    if (!ended || !prof || ev->user)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "host: no profiling times: the event has not completed, is a user "
                               "event, or its queue was made without profiling");
    times->queued = t[0];
    times->submitted = t[1];
    times->started = t[2];
    times->ended = t[3];
    return KILN_OK;
}

kiln_status kiln__host_event_notify(void *event, kiln__notify_fn fn, void *arg) {
    kiln__hevent *ev = event;
    kiln__hnotify *n = kiln__malloc(sizeof *n);
    if (!n)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "host event notify: out of memory");
    n->fn = fn;
    n->arg = arg;
    kiln__lock_acquire(&kiln__host_lock);
    if (ev->state <= KILN_EVENT_COMPLETE) {
        int failed = ev->state < 0;
        kiln__lock_release(&kiln__host_lock);
        free(n);
        fn(arg, failed);
        return KILN_OK;
    }
    n->next = ev->notify;
    ev->notify = n;
    kiln__lock_release(&kiln__host_lock);
    return KILN_OK;
}

kiln_status kiln__host_user_event_create(void *context, void **event) {
    (void)context;
    kiln__hevent *ev = kiln__host_event_new(1, 0);
    if (!ev)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host user event: out of memory");
    *event = ev;
    return KILN_OK;
}

kiln_status kiln__host_user_event_set(void *event, int failed) {
    kiln__hevent *ev = event;
    kiln__lock_acquire(&kiln__host_lock);
    int ended = ev->state <= KILN_EVENT_COMPLETE;
    kiln__lock_release(&kiln__host_lock);
    if (ended)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0, "host: the user event was already set");
    kiln__host_event_end(ev, failed);
    return KILN_OK;
}

void kiln__host_event_retain(void *event) {
    kiln__ref_take(&((kiln__hevent *)event)->refs);
}

void kiln__host_event_release(void *event) {
    kiln__host_event_put(event);
}
