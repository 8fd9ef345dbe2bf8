/* Futures: a value the host will have, with the storage that holds it.
 *
 * A future is settled exactly once: complete (its value is there) or failed
 * (a status and the first error's message). Its `done` event is a kiln user
 * event that completes or fails with it, so device work can wait on a
 * future like on any event, and every continuation runs on kiln's callback
 * thread through kiln_event_on_complete (callback.c). No call here blocks
 * except kiln_future_wait / kiln_future_copy. */
#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "core/internal.h"

typedef enum { FUT_PENDING, FUT_COMPLETE, FUT_FAILED } fut_state;
/* What settles a future: cancel() may stop only what kiln itself runs. */
typedef enum { FUT_DEVICE, FUT_STEP, FUT_JOIN, FUT_HOST } fut_kind;

struct kiln_future {
    atomic_int refs;
    kiln_context *context;
    kiln_event *done; /* completes / fails when the future settles */
    pthread_mutex_t lock;
    fut_state state;
    fut_kind kind;
    int running; /* a step whose function has started: too late to cancel */
    kiln_status error;
    char message[512];
    void *value;
    size_t size;
};

static kiln_status future_new(kiln_context *ctx, size_t size, fut_kind kind, const char *fn,
                              kiln_future **out) {
    *out = NULL;
    kiln_future *f = kiln__calloc(1, sizeof *f);
    void *value = size ? kiln__malloc(size) : NULL;
    if (!f || (size && !value)) {
        free(f);
        free(value);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory for %zu bytes",
                               fn, size);
    }
    kiln_status st = kiln__event_user_new(ctx, &f->done);
    if (st != KILN_OK) {
        free(f);
        free(value);
        return kiln__error_prefix(st, "%s", fn);
    }
    atomic_store(&f->done->user_set, 1); /* settled by kiln, never by the user */
    atomic_init(&f->refs, 1);
    pthread_mutex_init(&f->lock, NULL);
    kiln_context_retain(ctx);
    f->context = ctx;
    f->kind = kind;
    f->value = value;
    f->size = size;
    *out = f;
    return KILN_OK;
}

kiln_status kiln_future_retain(kiln_future *future) {
    return kiln__ref_retain(future ? &future->refs : NULL, "kiln_future_retain", "future");
}

static void settle(kiln_future *f, kiln_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

void kiln_future_release(kiln_future *future) {
    if (!kiln__ref_release(future ? &future->refs : NULL))
        return;
    /* Nothing can settle it any more (the work that fills a future holds
     * a reference): fail its event, which others may hold and wait on, and
     * never release a backend user event unset (NVIDIA's OpenCL hangs in
     * clReleaseContext over one). */
    settle(future, KILN_ERROR_CANCELED, "the future was released before it settled");
    kiln_event_release(future->done);
    kiln_context_release(future->context);
    pthread_mutex_destroy(&future->lock);
    free(future->value);
    free(future);
}

/* Settles f once (later calls do nothing): complete when status is
 * KILN_OK, else failed with status and the formatted message. */
static void settle(kiln_future *f, kiln_status status, const char *fmt, ...) {
    pthread_mutex_lock(&f->lock);
    int first = f->state == FUT_PENDING;
    if (first) {
        f->state = status == KILN_OK ? FUT_COMPLETE : FUT_FAILED;
        f->error = status;
        if (fmt) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(f->message, sizeof f->message, fmt, ap);
            va_end(ap);
        }
    }
    pthread_mutex_unlock(&f->lock);
    if (first)
        kiln__event_user_end(f->done, status != KILN_OK);
}

/* Settles f with the outcome of src (already settled), taking its value. */
static void settle_from(kiln_future *f, kiln_future *src) {
    pthread_mutex_lock(&src->lock);
    assert(src->state != FUT_PENDING && "an outcome taken from a future that has not settled");
    kiln_status err = src->error;
    char msg[sizeof src->message];
    memcpy(msg, src->message, sizeof msg);
    void *value = NULL;
    size_t size = 0;
    if (src->state == FUT_COMPLETE) { /* a copy: src may have other readers */
        value = src->size ? kiln__malloc(src->size) : NULL;
        if (src->size && !value)
            err = KILN_ERROR_OUT_OF_HOST_MEMORY;
        else if (value)
            memcpy(value, src->value, src->size), size = src->size;
    }
    pthread_mutex_unlock(&src->lock);
    if (err == KILN_OK) {
        pthread_mutex_lock(&f->lock);
        if (f->state == FUT_PENDING) {
            free(f->value);
            f->value = value, f->size = size, value = NULL;
        }
        pthread_mutex_unlock(&f->lock);
        free(value);
        settle(f, KILN_OK, NULL);
    } else {
        free(value);
        settle(f, err, "%s", err == KILN_ERROR_OUT_OF_HOST_MEMORY && !*msg ? "out of memory" : msg);
    }
}

/* ------------------------------------------------------ device-filled values */

kiln_status kiln_future_create(kiln_context *context, size_t size, kiln_future **future) {
    if (future)
        *future = NULL;
    if (!context || !future)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_future_create: %s is NULL",
                               context ? "future" : "context");
    return future_new(context, size, FUT_DEVICE, "kiln_future_create", future);
}

void *kiln_future_data(kiln_future *future) {
    return future ? future->value : NULL;
}

static void device_done(kiln_event *event, kiln_event_state state, void *arg) {
    (void)event;
    kiln_future *f = arg;
    if (state == KILN_EVENT_COMPLETE)
        settle(f, KILN_OK, NULL);
    else
        settle(f, KILN_ERROR_EVENT_FAILED,
               "the command that fills the future (or one it waited for) failed");
    kiln_future_release(f);
}

kiln_status kiln_future_complete_after(kiln_future *future, kiln_event *event) {
    if (!future || !event)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_future_complete_after: %s is NULL",
                               future ? "event" : "future");
    if (future->kind != FUT_DEVICE)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_future_complete_after: the future was not made by "
                               "kiln_future_create");
    kiln_future_retain(future);
    kiln_status st = kiln_event_on_complete(event, device_done, future);
    if (st != KILN_OK)
        kiln_future_release(future);
    return st;
}

kiln_status kiln_buffer_read_future(kiln_queue *queue, kiln_buffer *buffer, size_t offset,
                                    size_t size, size_t num_wait, kiln_event *const *wait,
                                    kiln_future **future) {
    const char *fn = "kiln_buffer_read_future";
    if (future)
        *future = NULL;
    const char *missing = KILN__FIRST_NULL3(queue, buffer, future);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    kiln_future *f = NULL;
    kiln_status st = future_new(queue->context, size, FUT_DEVICE, fn, &f);
    if (st != KILN_OK)
        return st;
    kiln_event *ev = NULL;
    st = kiln_buffer_read_async(queue, buffer, offset, size, f->value, num_wait, wait, &ev);
    if (st == KILN_OK && (st = kiln_future_complete_after(f, ev)) != KILN_OK)
        (void)kiln_event_wait(ev); /* the read writes into f->value: let it end first */
    kiln_event_release(ev);
    if (st != KILN_OK) {
        kiln_future_release(f);
        return kiln__error_prefix(st, "%s", fn);
    }
    *future = f;
    return KILN_OK;
}

kiln_status kiln_future_ready(kiln_context *context, const void *value, size_t size,
                              kiln_future **future) {
    if (future)
        *future = NULL;
    if (!context || !future || (size && !value))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_future_ready: %s is NULL",
                               !context  ? "context"
                               : !future ? "future"
                                         : "value");
    kiln_status st = future_new(context, size, FUT_HOST, "kiln_future_ready", future);
    if (st != KILN_OK)
        return st;
    if (size)
        memcpy((*future)->value, value, size);
    settle(*future, KILN_OK, NULL);
    return KILN_OK;
}

/* ------------------------------------------------------------------ reading */

kiln_event *kiln_future_event(kiln_future *future) {
    return future ? future->done : NULL;
}

kiln_status kiln_future_get_state(kiln_future *future, kiln_event_state *state) {
    if (!future || !state)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_future_get_state: %s is NULL",
                               future ? "state" : "future");
    pthread_mutex_lock(&future->lock);
    fut_state s = future->state;
    pthread_mutex_unlock(&future->lock);
    *state = s == FUT_COMPLETE ? KILN_EVENT_COMPLETE
             : s == FUT_FAILED ? KILN_EVENT_ERROR
                               : KILN_EVENT_QUEUED;
    return KILN_OK;
}

const void *kiln_future_value(kiln_future *future, size_t *size) {
    if (size)
        *size = 0;
    if (!future)
        return NULL;
    pthread_mutex_lock(&future->lock);
    int ok = future->state == FUT_COMPLETE;
    pthread_mutex_unlock(&future->lock);
    if (!ok)
        return NULL;
    if (size)
        *size = future->size;
    return future->value;
}

kiln_status kiln_future_wait(kiln_future *future) {
    if (!future)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_future_wait: future is NULL");
    pthread_mutex_lock(&future->lock);
    fut_state s = future->state;
    pthread_mutex_unlock(&future->lock);
    /* the callback thread settles futures: waiting there for one that has
     * not settled would wait for itself */
    if (s == FUT_PENDING && kiln__on_callback_thread())
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_future_wait: called on kiln's callback thread (in a "
                               "callback or continuation) for a future that has not settled; "
                               "it would wait forever: chain with kiln_future_then instead");
    if (s == FUT_PENDING)
        (void)kiln_event_wait(future->done); /* the future's own status says why */
    pthread_mutex_lock(&future->lock);
    kiln_status err = future->state == FUT_COMPLETE ? KILN_OK : future->error;
    pthread_mutex_unlock(&future->lock);
    if (err != KILN_OK)
        return kiln__error_set(err, 0, "%s", future->message);
    return KILN_OK;
}

kiln_status kiln_future_copy(kiln_future *future, void *out, size_t size) {
    kiln_status st = kiln_future_wait(future);
    if (st != KILN_OK)
        return st;
    if (size != future->size)
        return kiln__error_set(
            KILN_ERROR_MISMATCH, 0,
            "kiln_future_copy: the value has %zu bytes, the caller asked for %zu", future->size,
            size);
    if (size && !out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_future_copy: out is NULL");
    if (size)
        memcpy(out, future->value, size);
    return KILN_OK;
}

/* ------------------------------------------------------------ continuations */

typedef struct step {
    kiln_future *from, *next;
    kiln_future_fn fn;
    void *user_data;
} step;

static void adopt_done(kiln_event *event, kiln_event_state state, void *arg) {
    (void)event, (void)state;
    step *s = arg; /* from: the future fn returned */
    settle_from(s->next, s->from);
    kiln_future_release(s->from);
    kiln_future_release(s->next);
    free(s);
}

static void step_run(kiln_event *event, kiln_event_state state, void *arg) {
    (void)event, (void)state;
    step *s = arg;
    kiln_future *from = s->from, *next = s->next;
    pthread_mutex_lock(&from->lock);
    assert(from->state != FUT_PENDING && "a continuation run before its future settled");
    int ok = from->state == FUT_COMPLETE;
    pthread_mutex_unlock(&from->lock);
    pthread_mutex_lock(&next->lock);
    assert(!next->running && "a continuation run twice");
    int canceled = next->state != FUT_PENDING;
    next->running = !canceled;
    pthread_mutex_unlock(&next->lock);
    kiln_future *inner = NULL;
    if (canceled) {
        /* canceled: fn never runs */
    } else if (!ok) {
        settle_from(next, from); /* the first error travels on */
    } else {
        kiln_status st = s->fn(from->value, from->size, s->user_data, &inner);
        if (st != KILN_OK) {
            kiln_future_release(inner);
            inner = NULL;
            settle(next, st, "a continuation returned %s: %s", kiln_status_name(st),
                   kiln_last_error_message());
        } else if (!inner) {
            settle(next, KILN_OK, NULL);
        }
    }
    kiln_future_release(from);
    if (inner) {         /* next settles when the future fn returned does */
        s->from = inner; /* fn's reference */
        kiln_status st = kiln_event_on_complete(inner->done, adopt_done, s);
        if (st == KILN_OK)
            return;
        settle(next, st, "kiln_future_then: %s", kiln_last_error_message());
        kiln_future_release(inner);
    }
    kiln_future_release(next);
    free(s);
}

kiln_status kiln_future_then(kiln_future *future, kiln_future_fn fn, void *user_data,
                             kiln_future **next) {
    if (next)
        *next = NULL;
    if (!future || !fn || !next)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_future_then: %s is NULL",
                               !future ? "future"
                               : !fn   ? "fn"
                                       : "next");
    step *s = kiln__calloc(1, sizeof *s);
    if (!s)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_future_then: out of memory");
    kiln_status st = future_new(future->context, 0, FUT_STEP, "kiln_future_then", &s->next);
    if (st != KILN_OK) {
        free(s);
        return st;
    }
    kiln_future_retain(future);
    kiln_future_retain(s->next);
    s->from = future, s->fn = fn, s->user_data = user_data;
    *next = s->next;
    st = kiln_event_on_complete(future->done, step_run, s);
    if (st != KILN_OK) {
        kiln_future_release(future);
        kiln_future_release(s->next);
        kiln_future_release(s->next);
        *next = NULL;
        free(s);
        return kiln__error_prefix(st, "kiln_future_then");
    }
    return KILN_OK;
}

kiln_status kiln_future_cancel(kiln_future *future) {
    if (!future)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_future_cancel: future is NULL");
    pthread_mutex_lock(&future->lock);
    fut_state s = future->state;
    int running = future->running;
    fut_kind kind = future->kind;
    pthread_mutex_unlock(&future->lock);
    if (s != FUT_PENDING)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0, "kiln_future_cancel: it has already %s",
                               s == FUT_COMPLETE ? "completed" : "failed");
    if (kind == FUT_DEVICE)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_future_cancel: its command is already with the driver, and "
                               "neither OpenCL nor CUDA can recall submitted work");
    if (running)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "kiln_future_cancel: its continuation is already running");
    settle(future, KILN_ERROR_CANCELED, "canceled before it ran (kiln_future_cancel)");
    return KILN_OK;
}

/* ------------------------------------------------------------- when_all/any */

typedef struct join {
    pthread_mutex_t lock;
    kiln_future *out;
    size_t left, failed, n;
    int any; /* when_any: the value is the index of the first to complete */
} join;

typedef struct join_arm {
    join *j;
    kiln_future *in;
    size_t index;
} join_arm;

static void join_one(kiln_event *event, kiln_event_state state, void *arg) {
    (void)event, (void)state;
    join_arm *a = arg;
    join *j = a->j;
    pthread_mutex_lock(&a->in->lock);
    assert(a->in->state != FUT_PENDING && "a join's arm run before its future settled");
    int ok = a->in->state == FUT_COMPLETE;
    pthread_mutex_unlock(&a->in->lock);
    pthread_mutex_lock(&j->lock);
    assert(j->left > 0 && j->failed < j->n && "a join's arm counted twice");
    size_t left = --j->left, failed = j->failed += !ok;
    pthread_mutex_unlock(&j->lock);
    if (j->any && ok) {
        pthread_mutex_lock(&j->out->lock);
        if (j->out->state == FUT_PENDING)
            memcpy(j->out->value, &a->index, sizeof a->index);
        pthread_mutex_unlock(&j->out->lock);
        settle(j->out, KILN_OK, NULL);
    } else if (!ok && (!j->any || failed == j->n)) {
        settle_from(j->out, a->in); /* when_all: the first failure; when_any: all failed */
    } else if (!j->any && left == 0) {
        settle(j->out, KILN_OK, NULL);
    }
    kiln_future_release(a->in);
    free(a);
    if (left == 0) {
        kiln_future_release(j->out);
        pthread_mutex_destroy(&j->lock);
        free(j);
    }
}

static kiln_status when(size_t n, kiln_future *const *futures, int any, kiln_future **out) {
    const char *fn = any ? "kiln_future_when_any" : "kiln_future_when_all";
    if (out)
        *out = NULL;
    if (!out || (n && !futures))
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn,
                               out ? "futures" : "out");
    if (n == 0) /* and no context to make a future in */
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: no futures; give at least one",
                               fn);
    for (size_t i = 0; i < n; i++)
        if (!futures[i])
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: futures[%zu] is NULL", fn, i);
    join *j = kiln__calloc(1, sizeof *j);
    if (!j)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    kiln_status st =
        future_new(futures[0]->context, any ? sizeof(size_t) : 0, FUT_JOIN, fn, &j->out);
    if (st != KILN_OK) {
        free(j);
        return st;
    }
    pthread_mutex_init(&j->lock, NULL);
    j->any = any, j->n = n, j->left = n;
    kiln_future_retain(j->out); /* the join's own reference, dropped with it */
    *out = j->out;
    for (size_t i = 0; i < n; i++) {
        join_arm *a = kiln__calloc(1, sizeof *a);
        st = a ? KILN_OK : KILN_ERROR_OUT_OF_HOST_MEMORY;
        if (a) {
            a->j = j, a->in = futures[i], a->index = i;
            kiln_future_retain(a->in);
            st = kiln_event_on_complete(a->in->done, join_one, a);
            if (st != KILN_OK) {
                kiln_future_release(a->in);
                free(a);
            }
        }
        if (st != KILN_OK) {
            /* the arms never armed: the join fails now and ends with the
             * arms already armed */
            settle(j->out, st, "%s: could not watch futures[%zu]", fn, i);
            pthread_mutex_lock(&j->lock);
            size_t left = j->left -= n - i;
            pthread_mutex_unlock(&j->lock);
            if (left == 0) {
                kiln_future_release(j->out);
                pthread_mutex_destroy(&j->lock);
                free(j);
            }
            break;
        }
    }
    return KILN_OK;
}

kiln_status kiln_future_when_all(size_t n, kiln_future *const *futures, kiln_future **all) {
    return when(n, futures, 0, all);
}

kiln_status kiln_future_when_any(size_t n, kiln_future *const *futures, kiln_future **any) {
    return when(n, futures, 1, any);
}
