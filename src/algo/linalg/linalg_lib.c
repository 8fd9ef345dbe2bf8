/* Library loading, native-call ordering and host tasks for the BLAS and
 * FFT providers (linalg_lib.h). */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/refcount.h"
#include "algo/linalg/linalg_lib.h"
#include "base/error.h"

kiln_status kiln__lib_load(kiln__lib *lib, size_t n, const char *const *names, void **fns) {
    pthread_mutex_lock(&lib->lock);
    if (lib->state == 0) {
        for (size_t k = 0; lib->sonames[k] && !lib->handle; k++)
            lib->handle = dlopen(lib->sonames[k], RTLD_NOW | RTLD_LOCAL);
        lib->state = lib->handle ? 1 : -1;
    }
    int state = lib->state;
    pthread_mutex_unlock(&lib->lock);
    if (state < 0)
        return kiln__error_set(KILN_ERROR_NO_RUNTIME, 0,
                               "%s (%s) could not be loaded: install the "
                               "Debian package %s",
                               lib->what, lib->sonames[0], lib->package);
    for (size_t k = 0; k < n; k++) {
        fns[k] = dlsym(lib->handle, names[k]);
        if (!fns[k])
            return kiln__error_set(KILN_ERROR_NO_RUNTIME, 0,
                                   "%s (%s) has no %s: too old? install a "
                                   "newer %s",
                                   lib->what, lib->sonames[0], names[k], lib->package);
    }
    return KILN_OK;
}

int kiln__lib_serves(const char *name, unsigned languages, int host, const char *env,
                     const kiln_device_info *info) {
    const char *want = getenv(env);
    if (languages && !(info->languages & languages))
        return 0;
    if (host && info->type != KILN_DEVICE_CPU)
        return 0;
    return !(want && *want && strcasecmp(want, name) != 0);
}

/* The barrier that ends this thread's last host task of the call between
 * kiln__native_begin and _end (NULL if none): the next host task and the
 * call's closing barrier wait for it explicitly (a host task then never
 * runs before the one before it, on any queue). */
static _Thread_local kiln_event *kiln__last_task;

/* The outcome of this thread's current call's host tasks, shared with them
 * (NULL until the call's first host task). A host task that fails on the
 * callback thread (a host allocation there) records it here and still
 * completes its gate normally: PoCL 3.1 aborts ("PTHREAD ERROR in
 * pocl_lock_events_inorder") or never completes a dependent when a user
 * event with enqueued dependents is set to a failure (the algorithms' fault
 * walk, issue 41). The call's event is then a continuation that reports
 * the outcome, and a later host task of the call skips its work. */
typedef struct call_outcome {
    atomic_int refs;
    atomic_int failed;
} call_outcome;
static _Thread_local call_outcome *kiln__call;

static void outcome_unref(call_outcome *c) {
    if (c && kiln__ref_release(&c->refs))
        free(c);
}

static call_outcome *outcome_ref(void) {
    if (!kiln__call) {
        kiln__call = kiln__calloc(1, sizeof *kiln__call);
        if (!kiln__call)
            return NULL;
        atomic_init(&kiln__call->refs, 1);
    }
    kiln__ref_take(&kiln__call->refs);
    return kiln__call;
}

static void forget_last_task(void) {
    kiln_event_release(kiln__last_task);
    kiln__last_task = NULL;
}

void kiln__native_abandon(void) {
    forget_last_task();
    outcome_unref(kiln__call);
    kiln__call = NULL;
}

/* Only CPU devices run BLAS/FFT as host tasks that need the explicit wait
 * below. On a GPU the library's calls go straight into the queue's native
 * stream, and a barrier there waiting for a command held behind an unset
 * user event is suspected of the hang test_gate_native hit on cuda:0 (H200,
 * 2026-12-02; not re-run since: README, "Failed commands"). */
static int on_cpu(kiln_queue *q) {
    kiln_device_info info;
    memset(&info, 0, sizeof info);
    return kiln_device_get_info(kiln_queue_device(q), &info) == KILN_OK &&
           info.type == KILN_DEVICE_CPU;
}

static kiln_status begin_barrier(kiln_queue *q, size_t num_wait, kiln_event *const *wait) {
    forget_last_task();
    kiln_event *b = NULL;
    kiln_status st = kiln_queue_barrier(q, num_wait, wait, &b);
    /* With a wait list, the call's first host task and its closing barrier
     * wait for this barrier explicitly: a wait that failed then fails them
     * on every backend (the host backend does not fail a command that only
     * follows a failed one in an in-order queue, so kiln_linalg_matmul_out
     * behind a failed user event ran and said KILN_OK there; found by
     * tests/test_gate_native.c, issue 41 item 12). */
    if (st == KILN_OK && num_wait && on_cpu(q))
        kiln__last_task = b;
    else
        kiln_event_release(b);
    return st;
}

kiln_status kiln__native_begin(kiln_queue *q, size_t num_wait, kiln_event *const *wait) {
    kiln__native_abandon();
    return begin_barrier(q, num_wait, wait);
}

static kiln_status outcome_check(kiln_event_state state, void *user) {
    call_outcome *c = user;
    int failed = atomic_load(&c->failed);
    outcome_unref(c);
    if (state != KILN_EVENT_COMPLETE || failed)
        return kiln__error_set(KILN_ERROR_EVENT_FAILED, 0,
                               "a host BLAS/FFT call failed on kiln's callback thread");
    return KILN_OK;
}

kiln_status kiln__native_end(kiln_queue *q, kiln_event **event) {
    kiln_event *b = NULL, *last = kiln__last_task;
    call_outcome *call = kiln__call;
    kiln__last_task = NULL;
    kiln__call = NULL;
    kiln_status st = kiln_queue_barrier(q, last ? 1 : 0, last ? &last : NULL, &b);
    kiln_event_release(last);
    /* with host tasks, the event says whether they succeeded */
    if (st == KILN_OK && event && call) {
        kiln_event *next = NULL;
        st = kiln_event_then(b, outcome_check, call, &next);
        if (st == KILN_OK)
            call = NULL; /* the continuation's reference */
        kiln_event_release(b);
        b = next;
    }
    outcome_unref(call);
    if (event && st == KILN_OK)
        *event = b;
    else
        kiln_event_release(b);
    return st;
}

kiln_status kiln__native_step(kiln_queue *q) {
    if (!(kiln_queue_get_flags(q) & KILN_QUEUE_OUT_OF_ORDER))
        return KILN_OK;
    return begin_barrier(q, 0, NULL);
}

typedef struct host_task {
    kiln_queue *q;    /* retained */
    kiln_event *gate; /* user event the queue waits for; retained */
    size_t nbuf;
    kiln_buffer **bufs; /* retained */
    kiln__host_fn run;
    void *user;
    void (*free_user)(void *);
    call_outcome *call; /* held */
} host_task;

static void task_free(host_task *t) {
    outcome_unref(t->call);
    kiln_event_release(t->gate);
    kiln_queue_release(t->q);
    if (t->free_user)
        t->free_user(t->user);
    for (size_t k = 0; k < t->nbuf; k++)
        kiln_buffer_release(t->bufs[k]);
    free(t->bufs);
    free(t);
}

/* On kiln's callback thread: map through a queue of our own (q waits
 * behind the gate), run, unmap, open the gate. */
static kiln_status task_run(kiln_event_state state, void *arg) {
    host_task *t = arg;
    kiln_status st = state == KILN_EVENT_COMPLETE
                         ? KILN_OK
                         : kiln__error_set(KILN_ERROR_EVENT_FAILED, 0,
                                           "a host BLAS/FFT call: an event "
                                           "it waited for failed");
    if (st == KILN_OK && atomic_load(&t->call->failed))
        st = KILN_ERROR_EVENT_FAILED; /* the call's earlier host task failed */
    kiln_queue *mq = NULL;
    void **host = kiln__calloc(t->nbuf ? t->nbuf : 1, sizeof *host);
    if (st == KILN_OK && !host)
        st = KILN_ERROR_OUT_OF_HOST_MEMORY;
    if (st == KILN_OK)
        st = kiln_queue_create(kiln_queue_context(t->q), kiln_queue_device(t->q), 0, &mq);
    size_t mapped = 0;
    for (; st == KILN_OK && mapped < t->nbuf; mapped++)
        st = kiln_buffer_map(mq, t->bufs[mapped], KILN_MAP_READ | KILN_MAP_WRITE, 0,
                             kiln_buffer_size(t->bufs[mapped]), &host[mapped]);
    if (st != KILN_OK && mapped > 0)
        mapped--; /* the failed one is not mapped */
    if (st == KILN_OK)
        st = t->run(t->user, host);
    for (size_t k = 0; k < mapped; k++)
        kiln_buffer_unmap(mq, t->bufs[k], host[k], 0, NULL, NULL);
    if (mq) {
        kiln_queue_finish(mq);
        kiln_queue_release(mq);
    }
    free(host);
    if (st != KILN_OK)
        atomic_store(&t->call->failed, 1);
    kiln_event_set_complete(t->gate, KILN_EVENT_COMPLETE); /* see call_outcome */
    task_free(t);
    return st;
}

kiln_status kiln__host_task(kiln_queue *q, size_t nbuf, kiln_buffer *const *bufs, kiln__host_fn run,
                            void *user, void (*free_user)(void *), size_t num_wait,
                            kiln_event *const *wait, kiln_event **event) {
    host_task *t = kiln__calloc(1, sizeof *t);
    kiln_buffer **bs = kiln__calloc(nbuf ? nbuf : 1, sizeof *bs);
    call_outcome *call = t && bs ? outcome_ref() : NULL;
    if (!call) {
        free(t);
        free(bs);
        if (free_user)
            free_user(user);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "a host BLAS/FFT call");
    }
    t->q = q;
    kiln_queue_retain(q);
    t->call = call;
    t->bufs = bs;
    for (size_t k = 0; k < nbuf; k++) {
        kiln_buffer_retain(bufs[k]);
        bs[k] = bufs[k];
        t->nbuf++;
    }
    t->run = run;
    t->user = user;
    t->free_user = free_user;
    kiln_event *ready = NULL, *done = NULL, *next = NULL;
    /* after this call's previous host task, explicitly (see kiln__last_task) */
    kiln_event *after[2];
    size_t na = 0;
    if (num_wait == 1 && wait)
        after[na++] = wait[0];
    if (kiln__last_task)
        after[na++] = kiln__last_task;
    kiln_status st = num_wait > 1 ? kiln_queue_marker(q, num_wait, wait, &ready)
                                  : kiln_queue_marker(q, na, na ? after : NULL, &ready);
    if (st == KILN_OK)
        st = kiln_event_create_user(kiln_queue_context(q), &t->gate);
    if (st == KILN_OK)
        st = kiln_queue_barrier(q, 1, &t->gate, &done);
    if (st == KILN_OK)
        st = kiln_event_then(ready, task_run, t, &next);
    kiln_event_release(ready);
    kiln_event_release(next);
    if (st != KILN_OK) {
        if (t->gate) /* q may already wait for it: let it go on (the call fails) */
            kiln_event_set_complete(t->gate, KILN_EVENT_COMPLETE);
        kiln_event_release(done);
        task_free(t);
        return st;
    }
    kiln_event_release(kiln__last_task);
    kiln_event_retain(done);
    kiln__last_task = done;
    return kiln__event_give(event, done);
}
