/* Jobs: the collectives whose MPI calls block (the sort, redistribution,
 * user-defined reductions) as events. One thread per kiln_mpi
 * ("kiln-mpi-job") runs them one after another in the order they were
 * called, which every rank keeps, so their MPI calls on m->direct start
 * in the same order everywhere. A job:
 *   1. on the caller's queue: a marker over its wait list (ready) and a
 *      barrier on a gate (a user event), so work queued after the call
 *      waits for the job; the gate is the event returned (not the
 *      barrier: a queue may fail the barrier as soon as ready fails,
 *      before the job has recorded why);
 *   2. on the job thread: waits for ready, runs the blocking body with
 *      its device work on m->job_q (the caller's queue is held behind the
 *      gate), records a failure for kiln_mpi_wait, sets the gate.
 * A wait list that failed still runs the body (the other ranks wait in its
 * exchanges) and fails the job with KILN_ERROR_EVENT_FAILED. The blocking
 * forms are a job and kiln_mpi_wait, so they keep the same order. */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

typedef struct kmpi_job {
    struct kmpi_job *next;
    kiln_mpi *m;
    const char *call;
    kmpi_job_fn fn;
    void *arg;
    void (*drop)(void *);
    kiln_event *ready, *gate;
} kmpi_job;

static void job_free(kmpi_job *j) {
    if (j->drop)
        j->drop(j->arg);
    kiln_event_release(j->ready);
    kiln_event_release(j->gate);
    free(j);
}

static void job_run(kmpi_job *j) {
    kiln_mpi *m = j->m;
    kiln_status waited = kiln_event_wait(j->ready);
    kiln_status st = j->fn(m, m->job_q, j->arg);
    if (st == KILN_OK && waited != KILN_OK)
        st = kmpi_error(KILN_ERROR_EVENT_FAILED,
                        "%s: a command it waited for (its wait list) failed; it went on with the "
                        "other ranks",
                        j->call);
    if (st == KILN_OK && (st = kiln_queue_finish(m->job_q)) != KILN_OK)
        kmpi_error_kiln(st, j->call);
    /* recorded before the event fails: kiln_mpi_wait finds it */
    if (st != KILN_OK)
        kmpi_record_failure(m, j->gate, st, kiln_mpi_last_error_message());
    kiln_event_set_complete(j->gate, st == KILN_OK ? KILN_EVENT_COMPLETE : KILN_EVENT_ERROR);
}

static void *job_main(void *arg) {
    kiln_mpi *m = arg;
    for (;;) {
        pthread_mutex_lock(&m->job_lock);
        while (!m->job_head && !m->jobs_stopping)
            pthread_cond_wait(&m->job_cond, &m->job_lock);
        kmpi_job *j = m->job_head;
        if (j) {
            m->job_head = j->next;
            if (!m->job_head)
                m->job_tail = NULL;
        }
        pthread_mutex_unlock(&m->job_lock);
        if (!j)
            break; /* stopping, and every job run */
        job_run(j);
        job_free(j);
    }
    return NULL;
}

int kmpi_jobs_start(kiln_mpi *m) {
    if (kiln_queue_create(m->ctx, m->device, KILN_QUEUE_IN_ORDER, &m->job_q) != KILN_OK)
        return 0;
    return m->job_thread_started = kmpi_start_named(&m->job_thread, job_main, m, "kiln-mpi-job");
}

void kmpi_jobs_stop(kiln_mpi *m) {
    kmpi_stop_named(m->job_thread, &m->job_lock, &m->job_cond, &m->jobs_stopping,
                    &m->job_thread_started);
    if (m->job_q) {
        kiln_queue_finish(m->job_q);
        kiln_queue_release(m->job_q);
        m->job_q = NULL;
    }
}

kiln_status kmpi_job_submit(kiln_mpi *m, kiln_queue *q, const char *call, kmpi_job_fn fn, void *arg,
                            void (*drop)(void *), size_t nw, kiln_event *const *wait,
                            kiln_event **event) {
    if (event)
        *event = NULL;
    if (!q)
        q = m->queue;
    kmpi_job *j = calloc(1, sizeof *j);
    if (!j) {
        if (drop)
            drop(arg);
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    }
    j->m = m;
    j->call = call;
    j->fn = fn;
    j->arg = arg;
    j->drop = drop;
    kiln_status st = kiln_queue_marker(q, nw, wait, &j->ready);
    if (st == KILN_OK)
        st = kiln_event_create_user(m->ctx, &j->gate);
    kiln_event *barrier = NULL;
    if (st == KILN_OK)
        st = kiln_queue_barrier(q, 1, &j->gate, &barrier);
    kiln_event_release(barrier);
    if (st != KILN_OK) {
        /* a gate made but never set fails what waits for it */
        kmpi_error_kiln(st, call);
        job_free(j);
        return st;
    }
    if (event) {
        kiln_event_retain(j->gate);
        *event = j->gate;
    }
    pthread_mutex_lock(&m->job_lock);
    *(m->job_tail ? &m->job_tail->next : &m->job_head) = j;
    m->job_tail = j;
    pthread_cond_signal(&m->job_cond);
    pthread_mutex_unlock(&m->job_lock);
    return KILN_OK;
}

/* An _async form's start: *event NULL until the job is queued. */
static kiln_status job_begin(kiln_event **event, kiln_status checked) {
    if (event)
        *event = NULL;
    return checked;
}

/* A job and its wait: the blocking forms. */
static kiln_status wait_job(kiln_mpi *m, kiln_status st, kiln_event *ev) {
    if (st == KILN_OK)
        st = kiln_mpi_wait(m, ev);
    kiln_event_release(ev);
    return st;
}

static void drop_darray(void *d) {
    kiln_mpi_darray_release(d);
}

kiln_status kiln_mpi_darray_sort_async(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *d, size_t nw,
                                       kiln_event *const *wait, kiln_event **event) {
    kiln_status st = job_begin(event, kmpi_sort_check(m, q, d));
    if (st != KILN_OK)
        return st;
    kmpi_darray_retain(d);
    return kmpi_job_submit(m, q, "kiln_mpi_darray_sort", kmpi_sort_run, d, drop_darray, nw, wait,
                           event);
}

kiln_status kiln_mpi_darray_sort(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *d) {
    kiln_event *ev = NULL;
    kiln_status st = kiln_mpi_darray_sort_async(m, q, d, 0, NULL, &ev);
    return wait_job(m, st, ev);
}

typedef struct redist_arg {
    kiln_mpi_darray *src, *dst;
} redist_arg;

static kiln_status redist_job(kiln_mpi *m, kiln_queue *q, void *arg) {
    redist_arg *a = arg;
    return kmpi_redistribute_run(m, q, a->src, a->dst);
}

static void redist_drop(void *arg) {
    redist_arg *a = arg;
    kiln_mpi_darray_release(a->src);
    kiln_mpi_darray_release(a->dst);
    free(a);
}

kiln_status kiln_mpi_darray_redistribute_async(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *src,
                                               kiln_mpi_darray *dst, size_t nw,
                                               kiln_event *const *wait, kiln_event **event) {
    static const char call[] = "kiln_mpi_darray_redistribute";
    kiln_status st = job_begin(event, kmpi_redistribute_check(m, q, src, dst));
    if (st != KILN_OK)
        return st;
    redist_arg *a = malloc(sizeof *a);
    if (!a)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    kmpi_darray_retain(src);
    kmpi_darray_retain(dst);
    a->src = src;
    a->dst = dst;
    return kmpi_job_submit(m, q, call, redist_job, a, redist_drop, nw, wait, event);
}

kiln_status kiln_mpi_darray_redistribute(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *src,
                                         kiln_mpi_darray *dst) {
    kiln_event *ev = NULL;
    kiln_status st = kiln_mpi_darray_redistribute_async(m, q, src, dst, 0, NULL, &ev);
    return wait_job(m, st, ev);
}

/* A user reduction's job: its own copy of the arguments, the arrays and
 * buffers among them retained. */
typedef struct reduce_arg {
    kiln_mpi_reduction *r;
    size_t n, nargs;
    void *host_result;
    kiln_arg args[];
} reduce_arg;

static kiln_status reduce_job(kiln_mpi *m, kiln_queue *q, void *arg) {
    reduce_arg *a = arg;
    return kmpi_reduction_run(m, q, a->r, a->n, a->nargs, a->args, a->host_result);
}

static void reduce_drop(void *arg) {
    reduce_arg *a = arg;
    for (size_t i = 0; i < a->nargs; i++)
        if (a->args[i].kind == KILN_ARG_ARRAY)
            kiln_array_release(a->args[i].value.array);
        else if (a->args[i].kind == KILN_ARG_BUFFER)
            kiln_buffer_release(a->args[i].value.buffer);
    kiln_mpi_reduction_release(a->r);
    free(a);
}

kiln_status kiln_mpi_reduction_allreduce_async(kiln_mpi *m, kiln_queue *q, kiln_mpi_reduction *r,
                                               size_t n, size_t nargs, const kiln_arg *args,
                                               void *host_result, size_t nw,
                                               kiln_event *const *wait, kiln_event **event) {
    static const char call[] = "kiln_mpi_reduction_allreduce";
    kiln_status st = job_begin(event, kmpi_reduction_check(m, q, r, host_result));
    if (st != KILN_OK)
        return st;
    if (nargs && !args)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: args is NULL with num_args %zu", call,
                          nargs);
    if (nargs > (SIZE_MAX - sizeof(reduce_arg)) / sizeof(kiln_arg))
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT, "%s: num_args %zu", call, nargs);
    reduce_arg *a = malloc(sizeof *a + nargs * sizeof(kiln_arg));
    if (!a)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    kmpi_reduction_retain(r);
    a->r = r;
    a->n = n;
    a->nargs = nargs;
    a->host_result = host_result;
    for (size_t i = 0; i < nargs; i++) {
        a->args[i] = args[i];
        if (args[i].kind == KILN_ARG_ARRAY && args[i].value.array)
            kiln_array_retain(args[i].value.array);
        else if (args[i].kind == KILN_ARG_BUFFER && args[i].value.buffer)
            kiln_buffer_retain(args[i].value.buffer);
    }
    return kmpi_job_submit(m, q, call, reduce_job, a, reduce_drop, nw, wait, event);
}

kiln_status kiln_mpi_reduction_allreduce(kiln_mpi *m, kiln_queue *q, kiln_mpi_reduction *r,
                                         size_t n, size_t nargs, const kiln_arg *args,
                                         void *host_result) {
    kiln_event *ev = NULL;
    kiln_status st =
        kiln_mpi_reduction_allreduce_async(m, q, r, n, nargs, args, host_result, 0, NULL, &ev);
    return wait_job(m, st, ev);
}
