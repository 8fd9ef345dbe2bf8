/* The progress engine: one thread per kiln_mpi ("kiln-mpi") makes every MPI
 * call of kiln's collectives. Collectives run one after another in the
 * order they were made (every rank makes them in the same order, so their
 * MPI calls start in the same order everywhere); sends and receives run
 * beside them on a communicator of their own. An operation:
 *   1. the ranks exchange headers (call, dtype, count, op, root) and
 *      compare them: a disagreement fails it on every rank at once;
 *   2. for each chunk whose copy into staging has ended (the device's
 *      event), its non-blocking MPI call starts; when MPI completes it, the
 *      chunk's gate (a user event the copy back waits for) is set;
 *   3. once every chunk is done, `done` is set and the staging memory is
 *      unmapped when the device commands that use it have ended.
 * Past its deadline an operation fails with KILN_ERROR_TIMEOUT and the
 * communicator is broken; its MPI requests are kept (with the staging
 * memory they write) until MPI completes them or the kiln_mpi goes. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_internal.h"

uint64_t kmpi_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

kmpi_op *kmpi_op_new(kiln_mpi *m, kmpi_kind kind, const char *call) {
    kmpi_op *op = calloc(1, sizeof *op);
    if (!op)
        return NULL;
    op->m = m;
    op->kind = kind;
    op->call = call;
    op->hreq[0] = op->hreq[1] = MPI_REQUEST_NULL;
    op->mdt = MPI_DATATYPE_NULL;
    op->mop = MPI_OP_NULL;
    op->root = -1;
    op->peer = -1;
    op->status = KILN_OK;
    return op;
}

static void release_events(kiln_event **ev, size_t n) {
    if (!ev)
        return;
    for (size_t i = 0; i < n; i++)
        kiln_event_release(ev[i]);
    free(ev);
}

typedef struct cleanup {
    kiln_queue *q;
    kiln_buffer *stage;
    void *host;
    atomic_size_t left; /* events still to end */
} cleanup;

static void cleanup_cb(kiln_event *ev, kiln_event_state state, void *arg) {
    (void)ev;
    (void)state;
    cleanup *c = arg;
    if (atomic_fetch_sub(&c->left, 1) != 1)
        return;
    if (c->stage && c->host)
        kiln_buffer_unmap(c->q, c->stage, c->host, 0, NULL, NULL);
    kiln_buffer_release(c->stage);
    kiln_queue_release(c->q);
    free(c);
}

/* Unmaps and releases op's staging once the device commands that use it
 * (ready, after) have ended, failed or not, without blocking: a callback
 * on each (a marker over them would hold up the staging queue behind a
 * failed one). */
static void stage_release_later(kmpi_op *op) {
    if (!op->stage)
        return;
    kiln_mpi *m = op->m;
    cleanup *c = calloc(1, sizeof *c);
    if (!c) { /* out of memory: wait here */
        for (size_t i = 0; op->ready && i < op->nchunks; i++)
            if (op->ready[i])
                kiln_event_wait(op->ready[i]);
        for (size_t i = 0; i < op->nafter; i++)
            if (op->after[i])
                kiln_event_wait(op->after[i]);
        kiln_buffer_unmap(m->stage_q, op->stage, op->host, 0, NULL, NULL);
        kiln_buffer_release(op->stage);
        op->stage = NULL;
        return;
    }
    c->q = m->stage_q;
    kiln_queue_retain(c->q);
    c->stage = op->stage;
    c->host = op->host;
    op->stage = NULL;
    op->host = NULL;
    size_t n = 1; /* this function's own, dropped last */
    for (size_t i = 0; op->ready && i < op->nchunks; i++)
        n += op->ready[i] != NULL;
    for (size_t i = 0; i < op->nafter; i++)
        n += op->after[i] != NULL;
    atomic_store(&c->left, n);
    for (size_t i = 0; op->ready && i < op->nchunks; i++)
        if (op->ready[i] && kiln_event_on_complete(op->ready[i], cleanup_cb, c) != KILN_OK) {
            kiln_event_wait(op->ready[i]);
            cleanup_cb(NULL, KILN_EVENT_COMPLETE, c);
        }
    for (size_t i = 0; i < op->nafter; i++)
        if (op->after[i] && kiln_event_on_complete(op->after[i], cleanup_cb, c) != KILN_OK) {
            kiln_event_wait(op->after[i]);
            cleanup_cb(NULL, KILN_EVENT_COMPLETE, c);
        }
    cleanup_cb(NULL, KILN_EVENT_COMPLETE, c);
}

void kmpi_op_free(kmpi_op *op) {
    if (!op)
        return;
    stage_release_later(op);
    for (size_t i = 0; op->gate && i < op->nchunks; i++)
        if (op->gate[i])
            kiln_event_set_complete(op->gate[i], KILN_EVENT_ERROR); /* no-op if set */
    if (op->done)
        kiln_event_set_complete(op->done, KILN_EVENT_ERROR);
    if (op->ret)
        kmpi_pending_remove(op->m, op->ret);
    if (op->dl)
        op->dl->deleter(op->dl);
    release_events(op->ready, op->nchunks);
    release_events(op->gate, op->nchunks);
    release_events(op->after, op->nafter);
    kiln_event_release(op->done);
    kiln_event_release(op->watch);
    kiln_buffer_release(op->nccl_send);
    kiln_buffer_release(op->nccl_recv);
    kiln_event_release(op->ret);
    free(op->req);
    free(op->cstate);
    free(op->hall);
    free(op->counts);
    free(op->displs);
    free(op);
}

int kmpi_pending_add(kiln_mpi *m, kiln_event *event) {
    pthread_mutex_lock(&m->lock);
    if (m->npending == m->pending_cap) {
        size_t cap = m->pending_cap ? 2 * m->pending_cap : 16;
        kiln_event **p = realloc(m->pending, cap * sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&m->lock);
            return 0;
        }
        m->pending = p;
        m->pending_cap = cap;
    }
    m->pending[m->npending++] = event;
    pthread_mutex_unlock(&m->lock);
    return 1;
}

void kmpi_pending_remove(kiln_mpi *m, kiln_event *event) {
    if (!event)
        return;
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->npending; i++)
        if (m->pending[i] == event) {
            m->pending[i] = m->pending[--m->npending];
            pthread_cond_broadcast(&m->ended);
            break;
        }
    pthread_mutex_unlock(&m->lock);
}

void kmpi_record_failure(kiln_mpi *m, kiln_event *event, kiln_status st, const char *msg) {
    pthread_mutex_lock(&m->lock);
    kmpi_failure *f = &m->failures[m->nfail % KMPI_FAILURES];
    kiln_event_release(f->event);
    f->event = event;
    if (event)
        kiln_event_retain(event);
    f->status = st;
    snprintf(f->msg, sizeof f->msg, "%s", msg);
    m->nfail++;
    pthread_mutex_unlock(&m->lock);
}

void kmpi_submit(kiln_mpi *m, kmpi_op *op) {
    atomic_fetch_add(&m->in_flight, 1);
    pthread_mutex_lock(&m->lock);
    if (m->submitted_tail)
        m->submitted_tail->next = op;
    else
        m->submitted_head = op;
    m->submitted_tail = op;
    op->next = NULL;
    pthread_cond_signal(&m->cond);
    pthread_mutex_unlock(&m->lock);
}

/* ------------------------------------------------------------ one operation */

static void op_fail(kmpi_op *op, kiln_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void op_fail(kmpi_op *op, kiln_status st, const char *fmt, ...) {
    if (op->status != KILN_OK)
        return;
    op->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op->msg, sizeof op->msg, fmt, ap);
    va_end(ap);
}

static const char *dtname(int64_t d) {
    return kiln_dtype_size((kiln_dtype)d) ? kiln_dtype_name((kiln_dtype)d) : "?";
}

static void hdr_describe(const kmpi_op *op, const int64_t *h, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "%s of %lld %s elements", kmpi_kind_name((int)h[0]), (long long)h[2],
                     dtname(h[1]));
    if (n < 0 || (size_t)n >= cap)
        return;
    if (h[3])
        n += snprintf(buf + n, cap - (size_t)n, ", op %s", kmpi_op_name((kiln_mpi_op)h[3]));
    if (n >= 0 && (size_t)n < cap && h[4] >= 0 && !op->p2p)
        n += snprintf(buf + n, cap - (size_t)n, ", root %lld", (long long)h[4]);
    if (n >= 0 && (size_t)n < cap && op->p2p)
        snprintf(buf + n, cap - (size_t)n, ", tag %lld", (long long)h[5]);
}

/* Starts the header exchange (returns 0 on an MPI error). */
static int hdr_start(kmpi_op *op) {
    kiln_mpi *m = op->m;
    int rc;
    if (op->p2p) {
        op->hall = calloc(KMPI_HDR, sizeof *op->hall);
        if (!op->hall)
            return 0;
        /* tags: 4t the sender's header, 4t+1 the receiver's, 4t+2 the data
         * (a rank may send to and receive from one peer with one tag at once) */
        int snd = op->hdr[0] == KMPI_SEND;
        int ts = 4 * op->tag + (snd ? 0 : 1), tr = 4 * op->tag + (snd ? 1 : 0);
        rc = MPI_Isend(op->hdr, KMPI_HDR, MPI_INT64_T, op->peer, ts, m->p2p, &op->hreq[0]);
        if (rc == MPI_SUCCESS)
            rc = MPI_Irecv(op->hall, KMPI_HDR, MPI_INT64_T, op->peer, tr, m->p2p, &op->hreq[1]);
    } else {
        op->hall = calloc((size_t)m->size * KMPI_HDR, sizeof *op->hall);
        if (!op->hall)
            return 0;
        rc = MPI_Iallgather(op->hdr, KMPI_HDR, MPI_INT64_T, op->hall, KMPI_HDR, MPI_INT64_T,
                            m->coll, &op->hreq[0]);
    }
    return rc == MPI_SUCCESS;
}

/* Compares the exchanged headers. */
static void hdr_check(kmpi_op *op) {
    kiln_mpi *m = op->m;
    char a[200], b[200];
    if (op->p2p) {
        /* the peer's header: its kind is the opposite one, its peer is us */
        const int64_t *h = op->hall;
        int want_kind = op->hdr[0] == KMPI_SEND ? KMPI_RECV : KMPI_SEND;
        if (h[0] != want_kind || h[1] != op->hdr[1] || h[2] != op->hdr[2] || h[5] != op->hdr[5]) {
            hdr_describe(op, op->hdr, a, sizeof a);
            hdr_describe(op, h, b, sizeof b);
            op_fail(op, KILN_ERROR_MISMATCH,
                    "%s: the ranks disagree: rank %d has %s, rank %d has %s", op->call, m->rank, a,
                    op->peer, b);
        }
        return;
    }
    for (int r = 1; r < m->size; r++) {
        const int64_t *h0 = op->hall, *h = op->hall + (size_t)r * KMPI_HDR;
        if (memcmp(h0, h, KMPI_HDR * sizeof *h) != 0) {
            hdr_describe(op, h0, a, sizeof a);
            hdr_describe(op, h, b, sizeof b);
            op_fail(op, KILN_ERROR_MISMATCH,
                    "%s: the ranks disagree: rank 0 has %s, rank %d has %s", op->call, a, r, b);
            return;
        }
    }
}

/* Starts chunk i's MPI call. */
static int chunk_start(kmpi_op *op, size_t i) {
    kiln_mpi *m = op->m;
    size_t o = i * op->chunk_elems;
    size_t len = op->count - o < op->chunk_elems ? op->count - o : op->chunk_elems;
    char *p = op->host + o * op->esize;
    int n = (int)len, rc = MPI_ERR_OTHER;
    MPI_Request *r = &op->req[i];
    int t = 4 * op->tag + 2;
    switch (op->kind) {
    case KMPI_ALLREDUCE:
        rc = MPI_Iallreduce(MPI_IN_PLACE, p, n, op->mdt, op->mop, m->coll, r);
        break;
    case KMPI_BCAST:
        rc = MPI_Ibcast(p, n, op->mdt, op->root, m->coll, r);
        break;
    case KMPI_ALLGATHER:
        rc = MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, op->host, (int)op->count, op->mdt,
                            m->coll, r);
        break;
    case KMPI_REDSCAT:
        rc = MPI_Ireduce_scatter_block(op->host, op->host + op->count * (size_t)m->size * op->esize,
                                       (int)op->count, op->mdt, op->mop, m->coll, r);
        break;
    case KMPI_SEND:
        rc = MPI_Isend(op->host, (int)op->count, op->mdt, op->peer, t, m->p2p, r);
        break;
    case KMPI_RECV:
        rc = MPI_Irecv(op->host, (int)op->count, op->mdt, op->peer, t, m->p2p, r);
        break;
    case KMPI_SCATTER:
        rc = MPI_Iscatterv(op->user_src, op->counts, op->displs, op->mdt,
                           m->rank == op->root ? MPI_IN_PLACE : (void *)op->host,
                           op->counts[m->rank], op->mdt, op->root, m->coll, r);
        break;
    case KMPI_GATHER:
        rc = MPI_Igatherv(m->rank == op->root ? MPI_IN_PLACE : (void *)op->host,
                          op->counts[m->rank], op->mdt, op->user_host, op->counts, op->displs,
                          op->mdt, op->root, m->coll, r);
        break;
    case KMPI_EXSCAN:
        rc = MPI_Iexscan(op->host, op->host + op->esize, 1, op->mdt, MPI_SUM, m->coll, r);
        break;
    case KMPI_ALLTOALL:
        rc = MPI_Ialltoall(op->host, (int)op->count, op->mdt,
                           op->host + op->count * (size_t)m->size * op->esize, (int)op->count,
                           op->mdt, m->coll, r);
        break;
    case KMPI_NCCL:
        rc = MPI_SUCCESS;
        *r = MPI_REQUEST_NULL;
        break;
    }
    if (rc != MPI_SUCCESS) {
        char es[MPI_MAX_ERROR_STRING];
        int el = 0;
        MPI_Error_string(rc, es, &el);
        op_fail(op, KILN_ERROR_DRIVER, "%s: MPI failed to start chunk %zu: %s", op->call, i, es);
        *r = MPI_REQUEST_NULL;
        return 0;
    }
    return 1;
}

static void chunk_finish(kmpi_op *op, size_t i) {
    if (op->kind == KMPI_EXSCAN && op->m->rank == 0) /* MPI leaves rank 0's undefined */
        memset(op->host + op->esize, 0, op->esize);
    if (op->gate && op->gate[i])
        kiln_event_set_complete(op->gate[i], op->status == KILN_OK && !op->local_failed
                                                 ? KILN_EVENT_COMPLETE
                                                 : KILN_EVENT_ERROR);
}

/* Ends op: gates and done set, the failure recorded. */
static void op_end(kmpi_op *op) {
    kiln_mpi *m = op->m;
    if (op->status == KILN_OK && op->local_failed)
        op_fail(op, KILN_ERROR_EVENT_FAILED,
                "%s: a command this collective waited for (its wait list or the copy of its "
                "input) failed; the transfer went on with the other ranks",
                op->call);
    int ok = op->status == KILN_OK;
    /* recorded before any event fails: kiln_mpi_wait finds it */
    if (!ok)
        kmpi_record_failure(m, op->ret, op->status, op->msg);
    for (size_t i = 0; op->gate && i < op->nchunks; i++)
        if (op->gate[i])
            kiln_event_set_complete(op->gate[i], ok ? KILN_EVENT_COMPLETE : KILN_EVENT_ERROR);
    if (op->done)
        kiln_event_set_complete(op->done, ok ? KILN_EVENT_COMPLETE : KILN_EVENT_ERROR);
    kmpi_pending_remove(m, op->ret);
}

static int requests_pending(kmpi_op *op) {
    int pend = 0;
    for (int k = 0; k < 2; k++)
        if (op->hreq[k] != MPI_REQUEST_NULL) {
            int flag = 0;
            MPI_Test(&op->hreq[k], &flag, MPI_STATUS_IGNORE);
            pend |= !flag;
        }
    for (size_t i = 0; op->req && i < op->nchunks; i++)
        if (op->req[i] != MPI_REQUEST_NULL) {
            int flag = 0;
            MPI_Test(&op->req[i], &flag, MPI_STATUS_IGNORE);
            pend |= !flag;
        }
    return pend;
}

/* op's first step: its deadline set and its header's exchange started;
 * returns 1 when op has ended (the communicator broken, or MPI refused). */
static int op_begin(kmpi_op *op, int *progressed) {
    kiln_mpi *m = op->m;
    op->started = 1;
    op->deadline_ns = kmpi_now_ns() + m->timeout_ms * 1000000ull;
    if (atomic_load(&m->broken) && !op->p2p) {
        op_fail(op, KILN_ERROR_WRONG_STATE,
                "%s: the communicator is broken (an earlier collective timed out)", op->call);
        op_end(op);
        return 1;
    }
    if (!hdr_start(op)) {
        op_fail(op, KILN_ERROR_DRIVER, "%s: MPI failed to exchange the header", op->call);
        op_end(op);
        return 1;
    }
    op->hstate = 1;
    *progressed = 1;
    return 0;
}

/* Whether op's header exchange has completed: then it is checked and
 * hstate is 2. Returns 1 when op has ended. */
static int op_header_step(kmpi_op *op, int *progressed) {
    kiln_mpi *m = op->m;
    int flag = 1;
    if (op->p2p) {
        MPI_Request rq[2] = { op->hreq[0], op->hreq[1] };
        MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE);
        if (flag)
            op->hreq[0] = op->hreq[1] = MPI_REQUEST_NULL;
    } else {
        MPI_Test(&op->hreq[0], &flag, MPI_STATUS_IGNORE);
    }
    if (!flag)
        return 0;
    *progressed = 1;
    op->hstate = 2;
    hdr_check(op);
    if (op->status != KILN_OK) {
        if (op->kind == KMPI_NCCL)
            kmpi_nccl_abort(m), atomic_store(&m->broken, 1);
        op_end(op);
        return 1;
    }
    return 0;
}

/* An NCCL op, past its header: launched once its wait list has ended
 * (failed or not: the other ranks wait for this one), ended when the NCCL
 * queue's marker behind it has. Returns 1 when op has ended. */
static int op_nccl_step(kmpi_op *op, int *progressed) {
    kiln_event_state s = KILN_EVENT_COMPLETE;
    if (!op->nccl_launched) {
        kiln_event_get_state(op->ready[0], &s);
        if (s != KILN_EVENT_COMPLETE && s != KILN_EVENT_ERROR)
            return 0;
        if (s == KILN_EVENT_ERROR)
            op->local_failed = 1;
        op->nccl_launched = 1;
        *progressed = 1;
        kiln_status st = kmpi_nccl_launch(op, &op->watch);
        if (st != KILN_OK) {
            /* the others' kernels wait for this rank's: end them */
            op_fail(op, st, "%s", kiln_mpi_last_error_message());
            kmpi_nccl_abort(op->m);
            atomic_store(&op->m->broken, 1);
            op_end(op);
            return 1;
        }
    }
    kiln_event_get_state(op->watch, &s);
    if (s != KILN_EVENT_COMPLETE && s != KILN_EVENT_ERROR)
        return 0;
    if (s == KILN_EVENT_ERROR)
        op->local_failed = 1;
    *progressed = 1;
    op_end(op);
    return 1;
}

/* Past the header: starts every chunk whose input is in staging, in
 * order, and finishes those MPI has completed. Returns 1 when op has
 * ended. */
static int op_chunks_step(kmpi_op *op, int *progressed) {
    while (op->next_start < op->nchunks) {
        size_t i = op->next_start;
        kiln_event_state s = KILN_EVENT_COMPLETE;
        if (op->ready && op->ready[i])
            kiln_event_get_state(op->ready[i], &s);
        if (s == KILN_EVENT_ERROR)
            op->local_failed = 1; /* the others still wait for our part */
        else if (s != KILN_EVENT_COMPLETE)
            break;
        if (!chunk_start(op, i)) {
            /* what MPI refused cannot be taken back: end here */
            op_end(op);
            return requests_pending(op) ? (atomic_store(&op->m->broken, 1), 1) : 1;
        }
        op->cstate[i] = 1;
        op->next_start++;
        *progressed = 1;
    }
    for (size_t i = op->ndone; i < op->next_start; i++) {
        if (op->cstate[i] != 1)
            continue;
        int flag = 1;
        if (op->req[i] != MPI_REQUEST_NULL)
            MPI_Test(&op->req[i], &flag, MPI_STATUS_IGNORE);
        if (!flag)
            break; /* chunks complete in order */
        op->cstate[i] = 2;
        op->ndone++;
        chunk_finish(op, i);
        *progressed = 1;
    }
    if (op->ndone == op->nchunks) {
        op_end(op);
        return 1;
    }
    return 0;
}

/* Ends op if it is past its deadline (breaking the communicator where
 * that leaves the ranks out of step); returns 1 then. */
static int op_timed_out(kmpi_op *op) {
    kiln_mpi *m = op->m;
    if (kmpi_now_ns() <= op->deadline_ns)
        return 0;
    op_fail(op, KILN_ERROR_TIMEOUT,
            "%s: rank %d: not completed within the deadline of %llu ms (%s; "
            "KILN_MPI_TIMEOUT_MS sets it): another rank did not make the same call, "
            "is slower, or has died; the communicator is %s",
            op->call, m->rank, (unsigned long long)m->timeout_ms,
            op->hstate < 2 ? "the ranks never agreed on the call"
                           : (op->p2p ? "the peer did not complete the transfer"
                                      : "the transfer did not complete"),
            op->p2p && op->kind != KMPI_NCCL ? "still usable" : "now broken");
    /* a send or receive that timed out leaves the collectives in step */
    if (!op->p2p || op->kind == KMPI_NCCL)
        atomic_store(&m->broken, 1);
    if (op->kind == KMPI_NCCL)
        kmpi_nccl_abort(m);
    op_end(op);
    return 1;
}

/* Moves op on; returns 1 when it has ended, sets *progressed. */
static int op_step(kmpi_op *op, int *progressed) {
    if (!op->started && op_begin(op, progressed))
        return 1;
    if (op->hstate == 1 && op_header_step(op, progressed))
        return 1;
    if (op->hstate == 2 && op->kind == KMPI_NCCL) {
        if (op_nccl_step(op, progressed))
            return 1;
    } else if (op->hstate == 2 && op_chunks_step(op, progressed)) {
        return 1;
    }
    return op_timed_out(op);
}

/* ------------------------------------------------------------- the thread */

/* An ended op (unlinked) leaves the in-flight count: freed, or kept among
 * the orphans while MPI still holds requests of it. */
static void op_retire(kiln_mpi *m, kmpi_op *op, kmpi_op **orphans) {
    op->next = NULL;
    atomic_fetch_sub(&m->in_flight, 1);
    if (requests_pending(op)) {
        op->next = *orphans;
        *orphans = op;
    } else {
        kmpi_op_free(op);
    }
}

static void *progress_main(void *arg) {
    kiln_mpi *m = arg;
    kmpi_op *coll_head = NULL, *coll_tail = NULL; /* collectives, in order */
    kmpi_op *p2p = NULL;                          /* sends and receives */
    kmpi_op *orphans = NULL;                      /* ended ops MPI still holds requests of */
    uint64_t stop_deadline = 0;
    for (;;) {
        pthread_mutex_lock(&m->lock);
        if (!coll_head && !p2p && !m->submitted_head && !orphans && !m->stopping)
            pthread_cond_wait(&m->cond, &m->lock);
        kmpi_op *in = m->submitted_head;
        m->submitted_head = m->submitted_tail = NULL;
        int stopping = m->stopping;
        pthread_mutex_unlock(&m->lock);
        while (in) {
            kmpi_op *nx = in->next;
            in->next = NULL;
            if (in->p2p) {
                in->next = p2p;
                p2p = in;
            } else if (coll_tail) {
                coll_tail->next = in;
                coll_tail = in;
            } else {
                coll_head = coll_tail = in;
            }
            in = nx;
        }
        int progressed = 0;
        /* the head collective; the next ones once it has ended */
        while (coll_head) {
            if (!op_step(coll_head, &progressed))
                break;
            kmpi_op *done = coll_head;
            coll_head = done->next;
            if (!coll_head)
                coll_tail = NULL;
            op_retire(m, done, &orphans);
        }
        for (kmpi_op **pp = &p2p; *pp;) {
            kmpi_op *op = *pp;
            if (op_step(op, &progressed)) {
                *pp = op->next;
                op_retire(m, op, &orphans);
            } else {
                pp = &op->next;
            }
        }
        for (kmpi_op **pp = &orphans; *pp;) {
            kmpi_op *op = *pp;
            if (!requests_pending(op)) {
                *pp = op->next;
                kmpi_op_free(op);
                progressed = 1;
            } else {
                pp = &op->next;
            }
        }
        if (stopping && !coll_head && !p2p) {
            if (!orphans)
                break;
            if (!stop_deadline)
                stop_deadline = kmpi_now_ns() + m->timeout_ms * 1000000ull;
            if (kmpi_now_ns() > stop_deadline) {
                /* MPI never completed them: their staging stays (leaked on
                 * purpose: MPI may still write it) */
                break;
            }
        }
        if (!progressed && (coll_head || p2p || orphans)) {
            struct timespec ts = { 0, 20000 }; /* 20 us: MPI progresses in MPI_Test */
            nanosleep(&ts, NULL);
        }
    }
    if (orphans)
        atomic_store(&m->broken, 2); /* release leaves the communicators */
    return NULL;
}

int kmpi_start_named(pthread_t *t, void *(*fn)(void *), void *arg, const char *name) {
    if (pthread_create(t, NULL, fn, arg) != 0)
        return 0;
    pthread_setname_np(*t, name);
    return 1;
}

int kmpi_thread_start(kiln_mpi *m) {
    return m->thread_started = kmpi_start_named(&m->thread, progress_main, m, "kiln-mpi");
}

void kmpi_stop_named(pthread_t t, pthread_mutex_t *lock, pthread_cond_t *cond, int *stopping,
                     int *started) {
    if (!*started)
        return;
    pthread_mutex_lock(lock);
    *stopping = 1;
    pthread_cond_signal(cond);
    pthread_mutex_unlock(lock);
    pthread_join(t, NULL);
    *started = 0;
}

void kmpi_thread_stop(kiln_mpi *m) {
    kmpi_stop_named(m->thread, &m->lock, &m->cond, &m->stopping, &m->thread_started);
}
