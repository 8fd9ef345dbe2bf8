/* Events: wait, state, profiling times, completion notification, user
 * events. The backend handle is the cl_event itself. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "backend/opencl/ocl.h"
#include "base/fault.h"
#include "base/thread.h"

kiln_status kiln__ocl_event_wait(size_t num, void *const *events) {
    if (num == 0)
        return KILN_OK;
    cl_int err = kiln__cl.clWaitForEvents((cl_uint)num, (const cl_event *)events);
    if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        return kiln__ocl_fail_as(err, KILN_ERROR_EVENT_FAILED, "clWaitForEvents",
                                 "a command waited on ended with an error");
    if (err != CL_SUCCESS)
        return kiln__ocl_fail(err, "clWaitForEvents");
    /* NVIDIA's clWaitForEvents returns CL_SUCCESS for a user event set to
     * an error status (and for events that ended with one): ask each
     * event. One clGetEventInfo per event, after the wait. */
    for (size_t i = 0; i < num; i++) {
        cl_int s = CL_COMPLETE;
        cl_int e = kiln__cl.clGetEventInfo((cl_event)events[i], CL_EVENT_COMMAND_EXECUTION_STATUS,
                                           sizeof s, &s, NULL);
        if (e == CL_SUCCESS && s < 0)
            return kiln__error_set(KILN_ERROR_EVENT_FAILED, s,
                                   "clWaitForEvents: event %zu of %zu ended "
                                   "with an error (status %s, %d)",
                                   i, num, kiln__ocl_error_name(s), (int)s);
    }
    return KILN_OK;
}

kiln_status kiln__ocl_event_state(void *event, kiln_event_state *state) {
    cl_int s = 0;
    cl_int err = kiln__cl.clGetEventInfo((cl_event)event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                         sizeof s, &s, NULL);
    if (err != CL_SUCCESS)
        return kiln__ocl_fail(err, "clGetEventInfo");
    /* indexed by the statuses CL_COMPLETE (0) to CL_QUEUED (3); a negative
     * one: failed */
    static const kiln_event_state states[] = { [CL_COMPLETE] = KILN_EVENT_COMPLETE,
                                               [CL_RUNNING] = KILN_EVENT_RUNNING,
                                               [CL_SUBMITTED] = KILN_EVENT_SUBMITTED,
                                               [CL_QUEUED] = KILN_EVENT_QUEUED };
    *state = s >= 0 && (size_t)s < sizeof states / sizeof *states ? states[s] : KILN_EVENT_ERROR;
    return KILN_OK;
}

kiln_status kiln__ocl_event_times(void *event, kiln_event_times *times) {
    static const cl_profiling_info what[4] = { CL_PROFILING_COMMAND_QUEUED,
                                               CL_PROFILING_COMMAND_SUBMIT,
                                               CL_PROFILING_COMMAND_START,
                                               CL_PROFILING_COMMAND_END };
    cl_ulong v[4] = { 0, 0, 0, 0 };
    for (int i = 0; i < 4; i++) {
        cl_int err =
            kiln__cl.clGetEventProfilingInfo((cl_event)event, what[i], sizeof v[i], &v[i], NULL);
        if (err == CL_PROFILING_INFO_NOT_AVAILABLE)
            return kiln__ocl_fail_as(err, KILN_ERROR_WRONG_STATE, "clGetEventProfilingInfo",
                                     "the event has not completed, or its queue was made without "
                                     "profiling");
        if (err != CL_SUCCESS)
            return kiln__ocl_fail(err, "clGetEventProfilingInfo");
    }
    times->queued = v[0];
    times->submitted = v[1];
    times->started = v[2];
    times->ended = v[3];
    return KILN_OK;
}

/* Completion notification.
 *
 * clSetEventCallback(CL_COMPLETE) should also fire when a command fails,
 * but PoCL (3.x) never calls it for a negative status (a failed user event
 * and everything waiting on it), so such callbacks would be lost. Each
 * record therefore also sits on a list that a backend thread, the watcher,
 * polls: a record whose event has gone negative without its callback gets
 * fired by the watcher. An atomic flag keeps every notification to exactly
 * one call, whoever gets there first.
 *
 * Lifetime: the driver's trampoline takes no lock and frees nothing (it
 * may run inside the driver with the event locked); it only marks the
 * record done. The watcher alone unlinks records, releases their retained
 * events and frees them. A record the watcher fired itself is kept a while
 * in case a conforming driver still calls the trampoline late. */
typedef struct ocl_notify {
    kiln__notify_fn fn;
    void *arg;
    cl_event event;          /* retained until the record is freed */
    atomic_int fired;        /* fn has been called (or claimed) */
    atomic_int driver_done;  /* the driver will not touch it again */
    uint64_t born_ns;        /* monotonic time of registration */
    uint64_t fired_by_us_ns; /* when the watcher fired it; 0 if not */
    struct ocl_notify *next;
} ocl_notify;

static pthread_mutex_t watch_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cv = PTHREAD_COND_INITIALIZER;
static ocl_notify *watch_list; /* guarded by watch_mu */
static int watch_started;      /* guarded by watch_mu */
static int watch_idle;         /* the watcher waits untimed; signal it */

enum {
    KILN__WATCH_PERIOD_NS = 2000000,  /* poll every 2 ms */
    KILN__WATCH_MIN_AGE_NS = 2000000, /* leave young records alone */
};
#define KILN__WATCH_ZOMBIE_NS 30000000000ull /* keep self-fired ones 30 s */
#define KILN__WATCH_LATE_NS 200000000ull     /* a callback 200 ms late */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fire(ocl_notify *n, int failed) {
    if (atomic_exchange(&n->fired, 1) == 0)
        n->fn(n->arg, failed);
}

static void CL_CALLBACK notify_trampoline(cl_event ev, cl_int status, void *user) {
    ocl_notify *n = user;
    (void)ev;
    fire(n, status < 0);
    atomic_store_explicit(&n->driver_done, 1, memory_order_release);
}

/* One pass over the records. Returns 1 if some remain. */
static int watch_pass(void) {
    ocl_notify *list, *keep = NULL, *gone = NULL;
    uint64_t t = now_ns();

    pthread_mutex_lock(&watch_mu);
    list = watch_list;
    watch_list = NULL;
    pthread_mutex_unlock(&watch_mu);

    while (list) {
        ocl_notify *n = list;
        int drop = 0;
        list = n->next;
        if (atomic_load_explicit(&n->driver_done, memory_order_acquire)) {
            drop = 1;
        } else if (n->fired_by_us_ns) {
            drop = t - n->fired_by_us_ns > KILN__WATCH_ZOMBIE_NS;
        } else if (t - n->born_ns > KILN__WATCH_MIN_AGE_NS) {
            cl_int s = CL_QUEUED;
            cl_int err = kiln__cl.clGetEventInfo(n->event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                                 sizeof s, &s, NULL);
            if (err != CL_SUCCESS || s < 0) {
                fire(n, 1);
                n->fired_by_us_ns = t;
            } else if (s == CL_COMPLETE && t - n->born_ns > KILN__WATCH_LATE_NS) {
                /* Complete, yet the driver has not called back for a
                 * long while: do not let the notification be lost. */
                fire(n, 0);
                n->fired_by_us_ns = t;
            }
        }
        if (drop) {
            n->next = gone;
            gone = n;
        } else {
            n->next = keep;
            keep = n;
        }
    }
    while (gone) {
        ocl_notify *n = gone;
        gone = n->next;
        kiln__cl.clReleaseEvent(n->event);
        free(n);
    }
    pthread_mutex_lock(&watch_mu);
    if (keep) {
        ocl_notify *tail = keep;
        while (tail->next)
            tail = tail->next;
        tail->next = watch_list;
        watch_list = keep;
    }
    int more = watch_list != NULL;
    pthread_mutex_unlock(&watch_mu);
    return more;
}

static void *watcher_main(void *unused) {
    (void)unused;
    for (;;) {
        int more = watch_pass();
        pthread_mutex_lock(&watch_mu);
        if (!more && !watch_list) {
            watch_idle = 1;
            while (!watch_list)
                pthread_cond_wait(&watch_cv, &watch_mu);
            watch_idle = 0;
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += KILN__WATCH_PERIOD_NS;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&watch_cv, &watch_mu, &ts);
        }
        pthread_mutex_unlock(&watch_mu);
    }
    return NULL;
}

kiln_status kiln__ocl_event_notify(void *event, kiln__notify_fn fn, void *arg) {
    ocl_notify *n = kiln__calloc(1, sizeof *n);
    if (!n)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "event notify: out of host memory");
    n->fn = fn;
    n->arg = arg;
    n->event = (cl_event)event;
    n->born_ns = now_ns();
    kiln__cl.clRetainEvent(n->event);

    cl_int err = kiln__cl.clSetEventCallback(n->event, CL_COMPLETE, notify_trampoline, n);
    if (err != CL_SUCCESS) {
        kiln__cl.clReleaseEvent(n->event);
        free(n);
        return kiln__ocl_fail(err, "clSetEventCallback");
    }
    /* On the list only once the driver has it (it may already have fired:
     * the watcher then just frees it). */
    pthread_mutex_lock(&watch_mu);
    if (!watch_started)
        watch_started = kiln__thread_detached(watcher_main, NULL);
    n->next = watch_list;
    watch_list = n;
    if (watch_idle)
        pthread_cond_signal(&watch_cv);
    pthread_mutex_unlock(&watch_mu);
    return KILN_OK;
}

kiln_status kiln__ocl_user_event_create(void *context, void **event) {
    cl_int err = CL_SUCCESS;
    cl_event ev = kiln__cl.clCreateUserEvent((cl_context)context, &err);
    *event = NULL;
    if (!ev || err != CL_SUCCESS)
        return kiln__ocl_fail(err != CL_SUCCESS ? err : CL_INVALID_CONTEXT, "clCreateUserEvent");
    *event = ev;
    return KILN_OK;
}

kiln_status kiln__ocl_user_event_set(void *event, int failed) {
    /* Any negative status marks failure; this one reads well in logs. */
    cl_int status = failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_COMPLETE;
    cl_int err = kiln__cl.clSetUserEventStatus((cl_event)event, status);
    if (err == CL_INVALID_OPERATION)
        return kiln__ocl_fail_as(err, KILN_ERROR_WRONG_STATE, "clSetUserEventStatus",
                                 "the user event was already completed");
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, "clSetUserEventStatus");
}

void kiln__ocl_event_retain(void *event) {
    if (event)
        kiln__cl.clRetainEvent((cl_event)event);
}

void kiln__ocl_event_release(void *event) {
    if (event)
        kiln__cl.clReleaseEvent((cl_event)event);
}
