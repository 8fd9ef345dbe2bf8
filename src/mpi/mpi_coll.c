/* The collectives and the distributed arrays: each call checks its
 * arguments, enqueues the copies into staging and back (the copies back
 * behind user events the progress thread sets), and hands the MPI part to
 * the progress thread. Nothing here blocks but allocation. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

typedef struct view {
    kiln_buffer *buf;
    size_t off, n, es;
    kiln_dtype dt;
} view;

static kiln_status check_common(kiln_mpi *m, const char *call, kiln_queue **queue) {
    if (!m)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: mpi is NULL", call);
    if (!*queue)
        *queue = m->queue;
    if (kiln_queue_context(*queue) != m->ctx)
        return kmpi_error(KILN_ERROR_MISMATCH,
                          "%s: the queue belongs to another context than the kiln_mpi's "
                          "(use kiln_mpi_queue, or a queue of kiln_mpi_context)",
                          call);
    if (atomic_load(&m->broken))
        return kmpi_error(KILN_ERROR_WRONG_STATE,
                          "%s: the communicator is broken (an earlier collective timed out)", call);
    return KILN_OK;
}

static kiln_status get_view(kiln_mpi *m, const char *call, const char *name, kiln_array *a,
                            view *v) {
    if (!a)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", call, name);
    if (kiln_array_context(a) != m->ctx)
        return kmpi_error(KILN_ERROR_MISMATCH,
                          "%s: %s belongs to another context than the kiln_mpi's", call, name);
    kiln_array_info info;
    kiln_array_get_info(a, &info);
    if (!info.contiguous)
        return kmpi_error(KILN_ERROR_UNSUPPORTED,
                          "%s: %s is a strided view; collectives take dense arrays "
                          "(kiln_array_copy_out it into one first)",
                          call, name);
    v->dt = info.dtype;
    v->es = kiln_dtype_size(info.dtype);
    v->n = info.size;
    v->off = info.offset * v->es;
    v->buf = kiln_array_buffer(a);
    if (kmpi_mpi_dtype(v->dt) == MPI_DATATYPE_NULL)
        return kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: %s has dtype %s, which MPI has no type for",
                          call, name, kiln_dtype_name(v->dt));
    return KILN_OK;
}

static kiln_status check_op(const char *call, kiln_mpi_op op, kiln_dtype dt, MPI_Op *mop) {
    switch (op) {
    case KILN_MPI_SUM:
        *mop = MPI_SUM;
        return KILN_OK;
    case KILN_MPI_MIN:
    case KILN_MPI_MAX:
        *mop = op == KILN_MPI_MIN ? MPI_MIN : MPI_MAX;
        if (dt == KILN_COMPLEX64 || dt == KILN_COMPLEX128)
            return kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                              "%s: op %s is not defined for %s (complex numbers are not ordered)",
                              call, kmpi_op_name(op), kiln_dtype_name(dt));
        return KILN_OK;
    }
    return kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                      "%s: unknown op %d (KILN_MPI_SUM, KILN_MPI_MIN, KILN_MPI_MAX)", call,
                      (int)op);
}

static kiln_status check_root(kiln_mpi *m, const char *call, const char *what, int r) {
    if (r < 0 || r >= m->size)
        return kmpi_error(KILN_ERROR_OUT_OF_RANGE,
                          "%s: %s %d is not a rank of this communicator "
                          "(size %d)",
                          call, what, r, m->size);
    return KILN_OK;
}

/* ------------------------------------------------------------ op building */

static kiln_status prep(kmpi_op *op, size_t count, size_t es, int chunked) {
    kiln_mpi *m = op->m;
    op->count = count;
    op->esize = es;
    size_t ce = chunked ? m->chunk_bytes / es : count;
    if (ce == 0)
        ce = 1;
    if (ce > (size_t)INT_MAX)
        ce = (size_t)INT_MAX;
    op->chunk_elems = ce;
    op->nchunks = count == 0 ? 0 : (count + ce - 1) / ce;
    if (!chunked && count > 0)
        op->nchunks = 1;
    size_t nc = op->nchunks ? op->nchunks : 1;
    op->ready = calloc(nc, sizeof *op->ready);
    op->gate = calloc(nc, sizeof *op->gate);
    op->after = calloc(nc + 1, sizeof *op->after);
    op->req = calloc(nc, sizeof *op->req);
    op->cstate = calloc(nc, 1);
    if (!op->ready || !op->gate || !op->after || !op->req || !op->cstate)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", op->call);
    for (size_t i = 0; i < nc; i++)
        op->req[i] = MPI_REQUEST_NULL;
    kiln_status st = kiln_event_create_user(m->ctx, &op->done);
    if (st != KILN_OK)
        return kmpi_error_kiln(st, op->call);
    return KILN_OK;
}

static void set_hdr(kmpi_op *op, kiln_dtype dt, size_t count, kiln_mpi_op o, int root, int tag) {
    op->hdr[0] = op->kind == KMPI_NCCL ? op->hdr[0] : op->kind;
    op->hdr[1] = dt;
    op->hdr[2] = (int64_t)count;
    op->hdr[3] = o;
    op->hdr[4] = root;
    op->hdr[5] = tag;
    op->mdt = kmpi_mpi_dtype(dt);
    op->root = root;
}

static kiln_status stage(kmpi_op *op, size_t bytes) {
    kiln_mpi *m = op->m;
    if (bytes == 0)
        return KILN_OK;
    kiln_status st = kiln_buffer_create(m->ctx, bytes, KILN_BUFFER_HOST_PINNED | KILN_BUFFER_POOLED,
                                        NULL, &op->stage);
    if (st == KILN_OK) {
        void *h = NULL;
        st = kiln_buffer_map(m->stage_q, op->stage, KILN_MAP_WRITE_INVALIDATE, 0, bytes, &h);
        op->host = h;
        if (st != KILN_OK) {
            kiln_buffer_release(op->stage);
            op->stage = NULL;
        }
    }
    if (st != KILN_OK)
        return kmpi_error_kiln(st, op->call);
    op->host_bytes = bytes;
    return KILN_OK;
}

/* Direct: MPI works on a's own memory where it can address it
 * (m->direct_ok; the memory's kind from its DLPack export, which also holds
 * it until the op is freed). Returns 1 with op->host set, 0 to stage. */
static int direct(kmpi_op *op, kiln_array *a) {
    kiln_mpi *m = op->m;
    DLManagedTensor *t = NULL;
    if (!m->direct_ok || kiln_array_to_dlpack(m->stage_q, a, &t) != KILN_OK)
        return 0;
    int kind = t->dl_tensor.device.device_type;
    if (kind != kDLCPU && kind != kDLCUDAHost && kind != kDLCUDA) {
        t->deleter(t);
        return 0;
    }
    op->dl = t;
    op->host = (char *)t->dl_tensor.data + t->dl_tensor.byte_offset;
    return 1;
}

/* The direct path's device side: the first chunk waits for the wait list,
 * the caller's queue for the last chunk's gate. */
static kiln_status direct_fence(kmpi_op *op, kiln_queue *q, size_t nw, kiln_event *const *wait) {
    if (op->nchunks == 0)
        return KILN_OK;
    size_t last = op->nchunks - 1;
    kiln_status st = kiln_queue_marker(q, nw, wait, &op->ready[0]);
    if (st == KILN_OK)
        st = kiln_event_create_user(op->m->ctx, &op->gate[last]);
    if (st == KILN_OK)
        st = kiln_queue_barrier(q, 1, &op->gate[last], &op->after[0]);
    if (st == KILN_OK)
        op->nafter = 1;
    return st == KILN_OK ? st : kmpi_error_kiln(st, op->call);
}

/* chunk i's copy of bytes at off of buf into staging at hoff */
static kiln_status rd(kmpi_op *op, size_t i, kiln_queue *q, kiln_buffer *buf, size_t off,
                      size_t bytes, size_t hoff, size_t nw, kiln_event *const *wait) {
    kiln_status st =
        kiln_buffer_read_async(q, buf, off, bytes, op->host + hoff, nw, wait, &op->ready[i]);
    return st == KILN_OK ? st : kmpi_error_kiln(st, op->call);
}

/* chunk i's copy back, behind its gate */
static kiln_status wr(kmpi_op *op, size_t i, kiln_queue *q, kiln_buffer *buf, size_t off,
                      size_t bytes, const void *src) {
    kiln_status st = KILN_OK;
    if (!op->gate[i])
        st = kiln_event_create_user(op->m->ctx, &op->gate[i]);
    if (st == KILN_OK)
        st = kiln_buffer_write_async(q, buf, off, bytes, src, 1, &op->gate[i],
                                     &op->after[op->nafter]);
    if (st == KILN_OK)
        op->nafter++;
    return st == KILN_OK ? st : kmpi_error_kiln(st, op->call);
}

/* Hands the op over; *event gets a marker over the copies back and done
 * (or done itself when nothing is copied back). */
static kiln_status submit(kmpi_op *op, kiln_queue *q, kiln_event **event) {
    kiln_status st = KILN_OK;
    kiln_event *ret = NULL;
    if (op->nafter) {
        op->after[op->nafter] = op->done; /* borrowed in the list */
        st = kiln_queue_marker(q, op->nafter + 1, op->after, &ret);
        op->after[op->nafter] = NULL;
        if (st != KILN_OK) {
            kmpi_error_kiln(st, op->call);
            kmpi_op_free(op);
            return st;
        }
    } else {
        ret = op->done;
        kiln_event_retain(ret);
    }
    op->ret = ret; /* the op's reference */
    if (!kmpi_pending_add(op->m, ret)) {
        kmpi_op_free(op);
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", op->call);
    }
    if (event) {
        kiln_event_retain(ret);
        *event = ret;
    }
    kmpi_submit(op->m, op);
    return KILN_OK;
}

static kiln_status fail_free(kmpi_op *op, kiln_status st) {
    kmpi_op_free(op);
    return st;
}

/* All-reduce's and broadcast's start: the chunks, then either the direct
 * path, submitted here (*went = 1), or the staging the caller fills. On
 * failure op is freed. */
static kiln_status prep_chunked(kmpi_op *op, kiln_array *a, const view *v, kiln_queue *q, size_t nw,
                                kiln_event *const *wait, kiln_event **event, int *went) {
    kiln_status st = prep(op, v->n, v->es, 1);
    if (st == KILN_OK && direct(op, a)) {
        *went = 1;
        st = direct_fence(op, q, nw, wait);
        return st == KILN_OK ? submit(op, q, event) : fail_free(op, st);
    }
    if (st == KILN_OK)
        st = stage(op, v->n * v->es);
    return st == KILN_OK ? st : fail_free(op, st);
}

/* ------------------------------------------------------------ NCCL path */

static kiln_status nccl_coll(kiln_mpi *m, kiln_queue *q, const char *call, kmpi_kind kind, view *s,
                             view *r, size_t count, kiln_mpi_op o, int root, int peer, int tag,
                             size_t nw, kiln_event *const *wait, kiln_event **event) {
    if (!kmpi_nccl_has_dtype(s->dt))
        return kmpi_error(KILN_ERROR_UNSUPPORTED, "%s (NCCL): NCCL has no type for %s", call,
                          kiln_dtype_name(s->dt));
    kmpi_op *op = kmpi_op_new(m, KMPI_NCCL, call);
    if (!op)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    op->hdr[0] = kind;
    op->p2p = kind == KMPI_SEND || kind == KMPI_RECV;
    op->peer = peer;
    op->tag = tag;
    set_hdr(op, s->dt, count, o, op->p2p ? -1 : root, tag);
    kiln_status st = prep(op, 0, s->es, 0);
    if (st != KILN_OK)
        return fail_free(op, st);
    op->nchunks = 1;
    op->count = count;
    op->op = o;
    op->nccl_dt = s->dt;
    op->nccl_send = s->buf;
    kiln_buffer_retain(s->buf);
    op->nccl_send_off = s->off;
    if (r) {
        op->nccl_recv = r->buf;
        kiln_buffer_retain(r->buf);
        op->nccl_recv_off = r->off;
    }
    /* ready[0]: the wait list, on the caller's queue; the thread launches
     * NCCL on its own queue after it. The caller's queue goes on once the
     * gate is set (the NCCL queue's marker ended). */
    if ((st = kiln_queue_marker(q, nw, wait, &op->ready[0])) != KILN_OK ||
        (st = kiln_event_create_user(m->ctx, &op->gate[0])) != KILN_OK ||
        (st = kiln_queue_barrier(q, 1, &op->gate[0], &op->after[0])) != KILN_OK)
        return fail_free(op, kmpi_error_kiln(st, call));
    op->nafter = 1;
    return submit(op, q, event);
}

/* ------------------------------------------------------------ collectives */

kiln_status kiln_mpi_allreduce(kiln_mpi *m, kiln_queue *q, kiln_array *a, kiln_mpi_op o, size_t nw,
                               kiln_event *const *wait, kiln_event **event) {
    static const char call[] = "kiln_mpi_allreduce";
    if (event)
        *event = NULL;
    view v = { 0 };
    MPI_Op mop = MPI_OP_NULL;
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK)
        st = get_view(m, call, "array", a, &v);
    if (st == KILN_OK)
        st = check_op(call, o, v.dt, &mop);
    if (st != KILN_OK)
        return st;
    if (m->transport == KILN_MPI_TRANSPORT_NCCL)
        return nccl_coll(m, q, call, KMPI_ALLREDUCE, &v, &v, v.n, o, -1, -1, 0, nw, wait, event);
    kmpi_op *op = kmpi_op_new(m, KMPI_ALLREDUCE, call);
    if (!op)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    set_hdr(op, v.dt, v.n, o, -1, 0);
    op->mop = mop;
    int went = 0;
    if ((st = prep_chunked(op, a, &v, q, nw, wait, event, &went)) != KILN_OK || went)
        return st;
    for (size_t i = 0; i < op->nchunks && st == KILN_OK; i++) {
        size_t o0 = i * op->chunk_elems * v.es;
        size_t len =
            (v.n * v.es - o0 < op->chunk_elems * v.es) ? v.n * v.es - o0 : op->chunk_elems * v.es;
        st = rd(op, i, q, v.buf, v.off + o0, len, o0, nw, wait);
    }
    for (size_t i = 0; i < op->nchunks && st == KILN_OK; i++) {
        size_t o0 = i * op->chunk_elems * v.es;
        size_t len =
            (v.n * v.es - o0 < op->chunk_elems * v.es) ? v.n * v.es - o0 : op->chunk_elems * v.es;
        st = wr(op, i, q, v.buf, v.off + o0, len, op->host + o0);
    }
    if (st != KILN_OK)
        return fail_free(op, st);
    return submit(op, q, event);
}

kiln_status kiln_mpi_broadcast(kiln_mpi *m, kiln_queue *q, kiln_array *a, int root, size_t nw,
                               kiln_event *const *wait, kiln_event **event) {
    static const char call[] = "kiln_mpi_broadcast";
    if (event)
        *event = NULL;
    view v = { 0 };
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK)
        st = get_view(m, call, "array", a, &v);
    if (st == KILN_OK)
        st = check_root(m, call, "root", root);
    if (st != KILN_OK)
        return st;
    if (m->transport == KILN_MPI_TRANSPORT_NCCL)
        return nccl_coll(m, q, call, KMPI_BCAST, &v, &v, v.n, 0, root, -1, 0, nw, wait, event);
    kmpi_op *op = kmpi_op_new(m, KMPI_BCAST, call);
    if (!op)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    set_hdr(op, v.dt, v.n, 0, root, 0);
    int went = 0;
    if ((st = prep_chunked(op, a, &v, q, nw, wait, event, &went)) != KILN_OK || went)
        return st;
    size_t cb = op->chunk_elems * v.es, total = v.n * v.es;
    for (size_t i = 0; i < op->nchunks && st == KILN_OK; i++) {
        size_t o0 = i * cb, len = total - o0 < cb ? total - o0 : cb;
        if (m->rank == root)
            st = rd(op, i, q, v.buf, v.off + o0, len, o0, nw, wait);
    }
    for (size_t i = 0; i < op->nchunks && st == KILN_OK; i++) {
        size_t o0 = i * cb, len = total - o0 < cb ? total - o0 : cb;
        if (m->rank != root)
            st = wr(op, i, q, v.buf, v.off + o0, len, op->host + o0);
    }
    if (st != KILN_OK)
        return fail_free(op, st);
    return submit(op, q, event);
}

kiln_status kiln_mpi_allgather(kiln_mpi *m, kiln_queue *q, kiln_array *send, kiln_array *recv,
                               size_t nw, kiln_event *const *wait, kiln_event **event) {
    static const char call[] = "kiln_mpi_allgather";
    if (event)
        *event = NULL;
    view s = { 0 }, r = { 0 };
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK)
        st = get_view(m, call, "send", send, &s);
    if (st == KILN_OK)
        st = get_view(m, call, "recv", recv, &r);
    if (st != KILN_OK)
        return st;
    if (s.dt != r.dt || r.n != s.n * (size_t)m->size)
        return kmpi_error(KILN_ERROR_MISMATCH,
                          "%s: recv (%zu %s elements) must hold size (%d) times send's %zu %s "
                          "elements",
                          call, r.n, kiln_dtype_name(r.dt), m->size, s.n, kiln_dtype_name(s.dt));
    if (r.n > (size_t)INT_MAX)
        return kmpi_error(KILN_ERROR_UNSUPPORTED,
                          "%s: %zu elements in all is past MPI's int "
                          "counts",
                          call, r.n);
    if (m->transport == KILN_MPI_TRANSPORT_NCCL)
        return nccl_coll(m, q, call, KMPI_ALLGATHER, &s, &r, s.n, 0, -1, -1, 0, nw, wait, event);
    kmpi_op *op = kmpi_op_new(m, KMPI_ALLGATHER, call);
    if (!op)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    set_hdr(op, s.dt, s.n, 0, -1, 0);
    if ((st = prep(op, s.n, s.es, 0)) != KILN_OK || (st = stage(op, r.n * r.es)) != KILN_OK)
        return fail_free(op, st);
    if (op->nchunks) {
        st = rd(op, 0, q, s.buf, s.off, s.n * s.es, (size_t)m->rank * s.n * s.es, nw, wait);
        if (st == KILN_OK)
            st = wr(op, 0, q, r.buf, r.off, r.n * r.es, op->host);
    }
    if (st != KILN_OK)
        return fail_free(op, st);
    return submit(op, q, event);
}

/* Gather (KMPI_GATHER) and scatter (KMPI_SCATTER) of arrays: every rank
 * passes a block of n elements, the root also the whole (size() blocks,
 * rank r's at r * n: gather's recv, scatter's send). Staged; the root's
 * own block stays in place in its staging (MPI_IN_PLACE). */
/* rooted's arguments: the views of the block and (on the root) the whole */
static kiln_status rooted_check(kiln_mpi *m, kiln_queue **q, const char *call, kiln_array *block_a,
                                const char *block_name, kiln_array *whole_a, const char *whole_name,
                                int root, view *b, view *w) {
    kiln_status st = check_common(m, call, q);
    if (st != KILN_OK || (st = check_root(m, call, "root", root)) != KILN_OK ||
        (st = get_view(m, call, block_name, block_a, b)) != KILN_OK)
        return st;
    if (m->rank == root && (st = get_view(m, call, whole_name, whole_a, w)) != KILN_OK)
        return st;
    if (m->rank == root && (w->dt != b->dt || w->n != b->n * (size_t)m->size))
        return kmpi_error(KILN_ERROR_MISMATCH,
                          "%s: %s on the root (%zu %s elements) must hold size (%d) times %s's "
                          "%zu %s elements",
                          call, whole_name, w->n, kiln_dtype_name(w->dt), m->size, block_name, b->n,
                          kiln_dtype_name(b->dt));
    if (b->n > (size_t)INT_MAX / (size_t)m->size)
        return kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: %zu x %d elements is past MPI's int counts",
                          call, b->n, m->size);
    return KILN_OK;
}

static kiln_status rooted(kiln_mpi *m, kiln_queue *q, kmpi_kind kind, const char *call,
                          kiln_array *block_a, const char *block_name, kiln_array *whole_a,
                          const char *whole_name, int root, size_t nw, kiln_event *const *wait,
                          kiln_event **event) {
    if (event)
        *event = NULL;
    view b = { 0 }, w = { 0 };
    kiln_status st =
        rooted_check(m, &q, call, block_a, block_name, whole_a, whole_name, root, &b, &w);
    if (st != KILN_OK)
        return st;
    int is_root = m->rank == root;
    kmpi_op *op = kmpi_op_new(m, kind, call);
    if (!op)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    set_hdr(op, b.dt, b.n, 0, root, 0);
    size_t bytes = b.n * b.es, P = (size_t)m->size, mine = is_root ? (size_t)root * bytes : 0;
    if ((st = prep(op, b.n, b.es, 0)) != KILN_OK ||
        (st = stage(op, is_root ? P * bytes : bytes)) != KILN_OK)
        return fail_free(op, st);
    op->counts = calloc(P, sizeof(int));
    op->displs = calloc(P, sizeof(int));
    if (!op->counts || !op->displs)
        return fail_free(op, kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call));
    for (size_t r = 0; r < P; r++) {
        op->counts[r] = (int)b.n;
        op->displs[r] = (int)(r * b.n);
    }
    op->nchunks = 1; /* the MPI call runs for n = 0 too */
    op->user_host = op->host;
    op->user_src = op->host;
    /* into staging: gather's block (at the root: its place in the whole),
     * scatter's whole on the root; elsewhere a marker carries the wait list */
    if (kind == KMPI_GATHER && bytes)
        st = rd(op, 0, q, b.buf, b.off, bytes, mine, nw, wait);
    else if (kind == KMPI_SCATTER && is_root && bytes)
        st = rd(op, 0, q, w.buf, w.off, P * bytes, 0, nw, wait);
    else if (nw && (st = kiln_queue_marker(q, nw, wait, &op->ready[0])) != KILN_OK)
        kmpi_error_kiln(st, call);
    /* and back: gather's whole on the root, scatter's block */
    if (st == KILN_OK && bytes && kind == KMPI_GATHER && is_root)
        st = wr(op, 0, q, w.buf, w.off, P * bytes, op->host);
    else if (st == KILN_OK && bytes && kind == KMPI_SCATTER)
        st = wr(op, 0, q, b.buf, b.off, bytes, op->host + mine);
    if (st != KILN_OK)
        return fail_free(op, st);
    return submit(op, q, event);
}

kiln_status kiln_mpi_gather(kiln_mpi *m, kiln_queue *q, kiln_array *send, kiln_array *recv,
                            int root, size_t nw, kiln_event *const *wait, kiln_event **event) {
    return rooted(m, q, KMPI_GATHER, "kiln_mpi_gather", send, "send", recv, "recv", root, nw, wait,
                  event);
}

kiln_status kiln_mpi_scatter(kiln_mpi *m, kiln_queue *q, kiln_array *send, kiln_array *recv,
                             int root, size_t nw, kiln_event *const *wait, kiln_event **event) {
    return rooted(m, q, KMPI_SCATTER, "kiln_mpi_scatter", recv, "recv", send, "send", root, nw,
                  wait, event);
}

kiln_status kiln_mpi_reduce_scatter(kiln_mpi *m, kiln_queue *q, kiln_array *send, kiln_array *recv,
                                    kiln_mpi_op o, size_t nw, kiln_event *const *wait,
                                    kiln_event **event) {
    static const char call[] = "kiln_mpi_reduce_scatter";
    if (event)
        *event = NULL;
    view s = { 0 }, r = { 0 };
    MPI_Op mop = MPI_OP_NULL;
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK)
        st = get_view(m, call, "send", send, &s);
    if (st == KILN_OK)
        st = get_view(m, call, "recv", recv, &r);
    if (st == KILN_OK)
        st = check_op(call, o, s.dt, &mop);
    if (st != KILN_OK)
        return st;
    if (s.dt != r.dt || s.n != r.n * (size_t)m->size)
        return kmpi_error(KILN_ERROR_MISMATCH,
                          "%s: send (%zu %s elements) must hold size (%d) times recv's %zu %s "
                          "elements",
                          call, s.n, kiln_dtype_name(s.dt), m->size, r.n, kiln_dtype_name(r.dt));
    if (s.n > (size_t)INT_MAX)
        return kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: %zu elements is past MPI's int counts", call,
                          s.n);
    if (m->transport == KILN_MPI_TRANSPORT_NCCL)
        return nccl_coll(m, q, call, KMPI_REDSCAT, &s, &r, r.n, o, -1, -1, 0, nw, wait, event);
    kmpi_op *op = kmpi_op_new(m, KMPI_REDSCAT, call);
    if (!op)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    set_hdr(op, s.dt, r.n, o, -1, 0);
    op->mop = mop;
    if ((st = prep(op, r.n, s.es, 0)) != KILN_OK || (st = stage(op, (s.n + r.n) * s.es)) != KILN_OK)
        return fail_free(op, st);
    if (op->nchunks) {
        st = rd(op, 0, q, s.buf, s.off, s.n * s.es, 0, nw, wait);
        if (st == KILN_OK)
            st = wr(op, 0, q, r.buf, r.off, r.n * r.es, op->host + s.n * s.es);
    }
    if (st != KILN_OK)
        return fail_free(op, st);
    return submit(op, q, event);
}

kiln_status kiln_mpi_alltoall(kiln_mpi *m, kiln_queue *q, kiln_array *send, kiln_array *recv,
                              size_t nw, kiln_event *const *wait, kiln_event **event) {
    static const char call[] = "kiln_mpi_alltoall";
    if (event)
        *event = NULL;
    view s = { 0 }, r = { 0 };
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK)
        st = get_view(m, call, "send", send, &s);
    if (st == KILN_OK)
        st = get_view(m, call, "recv", recv, &r);
    if (st != KILN_OK)
        return st;
    if (s.dt != r.dt || s.n != r.n || s.n % (size_t)m->size != 0)
        return kmpi_error(KILN_ERROR_MISMATCH,
                          "%s: send (%zu %s elements) and recv (%zu %s elements) must be of one "
                          "dtype and size, a multiple of size (%d)",
                          call, s.n, kiln_dtype_name(s.dt), r.n, kiln_dtype_name(r.dt), m->size);
    if (s.n > (size_t)INT_MAX)
        return kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: %zu elements is past MPI's int counts", call,
                          s.n);
    size_t k = s.n / (size_t)m->size;
    if (m->transport == KILN_MPI_TRANSPORT_NCCL) {
        /* grouped sends and receives: recv must not overlap send */
        if (s.buf == r.buf && s.off < r.off + r.n * r.es && r.off < s.off + s.n * s.es)
            return kmpi_error(KILN_ERROR_UNSUPPORTED,
                              "%s: send and recv overlap, which the NCCL transport cannot do "
                              "(NCCL moves the blocks in place); use another recv",
                              call);
        return nccl_coll(m, q, call, KMPI_ALLTOALL, &s, &r, k, 0, -1, -1, 0, nw, wait, event);
    }
    kmpi_op *op = kmpi_op_new(m, KMPI_ALLTOALL, call);
    if (!op)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    set_hdr(op, s.dt, k, 0, -1, 0);
    if ((st = prep(op, k, s.es, 0)) != KILN_OK || (st = stage(op, 2 * s.n * s.es)) != KILN_OK)
        return fail_free(op, st);
    if (op->nchunks) {
        st = rd(op, 0, q, s.buf, s.off, s.n * s.es, 0, nw, wait);
        if (st == KILN_OK)
            st = wr(op, 0, q, r.buf, r.off, r.n * r.es, op->host + s.n * s.es);
    }
    if (st != KILN_OK)
        return fail_free(op, st);
    return submit(op, q, event);
}

static kiln_status p2p_any(kiln_mpi *m, kiln_queue *q, kiln_array *a, int peer, int tag, size_t nw,
                           kiln_event *const *wait, kiln_event **event, int is_send,
                           const char *call);

static kiln_status p2p(kiln_mpi *m, kiln_queue *q, kiln_array *a, int peer, int tag, size_t nw,
                       kiln_event *const *wait, kiln_event **event, int is_send) {
    const char *call = is_send ? "kiln_mpi_send" : "kiln_mpi_recv";
    if (tag < 0 || tag >= (1 << 20))
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT, "%s: tag %d is outside [0, 2^20)", call,
                          tag);
    return p2p_any(m, q, a, peer, tag, nw, wait, event, is_send, call);
}

/* kiln's own sends use tags from 2^20 (the halo exchange) */
static kiln_status p2p_any(kiln_mpi *m, kiln_queue *q, kiln_array *a, int peer, int tag, size_t nw,
                           kiln_event *const *wait, kiln_event **event, int is_send,
                           const char *call) {
    if (event)
        *event = NULL;
    view v = { 0 };
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK)
        st = get_view(m, call, "array", a, &v);
    if (st == KILN_OK)
        st = check_root(m, call, is_send ? "dest" : "source", peer);
    if (st != KILN_OK)
        return st;
    if (v.n > (size_t)INT_MAX)
        return kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: %zu elements is past MPI's int counts", call,
                          v.n);
    kmpi_kind kind = is_send ? KMPI_SEND : KMPI_RECV;
    if (m->transport == KILN_MPI_TRANSPORT_NCCL)
        return nccl_coll(m, q, call, kind, &v, &v, v.n, 0, -1, peer, tag, nw, wait, event);
    kmpi_op *op = kmpi_op_new(m, kind, call);
    if (!op)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    op->p2p = 1;
    op->peer = peer;
    op->tag = tag;
    set_hdr(op, v.dt, v.n, 0, -1, tag);
    if ((st = prep(op, v.n, v.es, 0)) != KILN_OK || (st = stage(op, v.n * v.es)) != KILN_OK)
        return fail_free(op, st);
    if (op->nchunks && is_send)
        st = rd(op, 0, q, v.buf, v.off, v.n * v.es, 0, nw, wait);
    else if (op->nchunks)
        st = wr(op, 0, q, v.buf, v.off, v.n * v.es, op->host);
    if (st != KILN_OK)
        return fail_free(op, st);
    return submit(op, q, event);
}

kiln_status kiln_mpi_send(kiln_mpi *m, kiln_queue *q, kiln_array *a, int dest, int tag, size_t nw,
                          kiln_event *const *wait, kiln_event **event) {
    return p2p(m, q, a, dest, tag, nw, wait, event, 1);
}

kiln_status kiln_mpi_recv(kiln_mpi *m, kiln_queue *q, kiln_array *a, int source, int tag, size_t nw,
                          kiln_event *const *wait, kiln_event **event) {
    return p2p(m, q, a, source, tag, nw, wait, event, 0);
}

/* ------------------------------------------------------------ distributed arrays */

kiln_status kmpi_darray_make(kiln_mpi *m, kiln_dtype dt, size_t n, size_t cols, size_t halo,
                             int two_d, int ranks, const char *call, kiln_mpi_darray **out) {
    if (!m || !out)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", call, m ? "darray" : "mpi");
    *out = NULL;
    if (ranks == 0)
        ranks = m->size;
    if (ranks < 0 || ranks > m->size)
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                          "%s: the layout's ranks is %d; the communicator has %d (0 = all)", call,
                          ranks, m->size);
    if (kiln_dtype_size(dt) == 0)
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT, "%s: unknown dtype %d", call, (int)dt);
    if (two_d && cols == 0)
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT, "%s: cols is 0", call);
    if (two_d && halo > 0 && ranks > 1 && n / (size_t)ranks < halo)
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                          "%s: a halo of %zu rows needs every rank to own at least %zu rows; "
                          "%zu rows over %d ranks gives some only %zu",
                          call, halo, halo, n, ranks, n / (size_t)ranks);
    if (two_d && n > SIZE_MAX / cols)
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT, "%s: %zu x %zu overflows", call, n, cols);
    kiln_mpi_darray *d = calloc(1, sizeof *d);
    if (!d)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    atomic_init(&d->refs, 1);
    d->m = m;
    d->dt = dt;
    d->n = n;
    d->two_d = two_d;
    d->cols = two_d ? cols : 1;
    d->halo = two_d ? halo : 0;
    d->ranks = ranks;
    kmpi_block_of(n, ranks, m->rank, &d->start, &d->count);
    size_t shape[2] = { d->count + 2 * d->halo, d->cols };
    kiln_status st = kiln_array_empty(m->ctx, dt, two_d ? 2 : 1, shape, &d->local);
    if (st != KILN_OK) {
        free(d);
        return kmpi_error_kiln(st, call);
    }
    *out = d;
    return KILN_OK;
}

kiln_status kiln_mpi_darray_empty(kiln_mpi *m, kiln_dtype dt, size_t n, kiln_mpi_darray **out) {
    return kmpi_darray_make(m, dt, n, 1, 0, 0, 0, "kiln_mpi_darray_empty", out);
}

kiln_status kiln_mpi_darray_rows_empty(kiln_mpi *m, kiln_dtype dt, size_t rows, size_t cols,
                                       size_t halo, kiln_mpi_darray **out) {
    return kmpi_darray_make(m, dt, rows, cols, halo, 1, 0, "kiln_mpi_darray_rows_empty", out);
}

size_t kiln_mpi_darray_cols(const kiln_mpi_darray *d) {
    return d ? d->cols : 0;
}
size_t kiln_mpi_darray_halo(const kiln_mpi_darray *d) {
    return d ? d->halo : 0;
}

void kiln_mpi_darray_release(kiln_mpi_darray *d) {
    if (!d || !kmpi_unref(&d->refs))
        return;
    kiln_array_release(d->local);
    free(d);
}

kiln_array *kiln_mpi_darray_local(const kiln_mpi_darray *d) {
    return d ? d->local : NULL;
}
size_t kiln_mpi_darray_start(const kiln_mpi_darray *d) {
    return d ? d->start : 0;
}
size_t kiln_mpi_darray_count(const kiln_mpi_darray *d) {
    return d ? d->count : 0;
}
size_t kiln_mpi_darray_size(const kiln_mpi_darray *d) {
    return d ? d->n : 0;
}

static kiln_status counts_displs(kmpi_op *op, size_t n, size_t cols, int ranks) {
    kiln_mpi *m = op->m;
    op->counts = calloc((size_t)m->size, sizeof(int));
    op->displs = calloc((size_t)m->size, sizeof(int));
    if (!op->counts || !op->displs)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", op->call);
    for (int r = 0; r < m->size; r++) {
        size_t s, c;
        kmpi_block_of(n, ranks, r, &s, &c);
        op->counts[r] = (int)(c * cols);
        op->displs[r] = (int)(s * cols);
    }
    return KILN_OK;
}

static kiln_status scatter_impl(kiln_mpi *m, kiln_queue *q, kiln_dtype dt, size_t n, size_t cols,
                                size_t halo, int two_d, const void *host, int root, size_t nw,
                                kiln_event *const *wait, kiln_event **event, kiln_mpi_darray **out,
                                const char *call) {
    if (event)
        *event = NULL;
    if (out)
        *out = NULL;
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK && !out)
        st = kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: darray is NULL", call);
    if (st == KILN_OK)
        st = check_root(m, call, "root", root);
    if (st == KILN_OK && m->rank == root && !host && n)
        st = kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: host is NULL on the root (rank %d)", call,
                        root);
    if (st == KILN_OK && kmpi_mpi_dtype(dt) == MPI_DATATYPE_NULL)
        st = kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: dtype %d has no MPI type", call, (int)dt);
    if (st == KILN_OK && cols && n > (size_t)INT_MAX / cols)
        st = kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: %zu x %zu elements is past MPI's int counts",
                        call, n, cols);
    if (st != KILN_OK)
        return st;
    kiln_mpi_darray *d = NULL;
    if ((st = kmpi_darray_make(m, dt, n, cols, halo, two_d, 0, call, &d)) != KILN_OK)
        return st;
    size_t ne = n * d->cols, lo = d->halo * d->cols, lc = d->count * d->cols;
    size_t es = kiln_dtype_size(dt);
    kmpi_op *op = kmpi_op_new(m, KMPI_SCATTER, call);
    if (!op) {
        kiln_mpi_darray_release(d);
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    }
    set_hdr(op, dt, ne, 0, root, (int)d->cols);
    op->user_src = host;
    kiln_buffer *lb = kiln_array_buffer(d->local);
    if ((st = prep(op, ne, es, 0)) == KILN_OK &&
        (st = counts_displs(op, n, d->cols, d->ranks)) == KILN_OK && m->rank != root)
        st = stage(op, lc * es);
    if (st == KILN_OK && ne == 0)
        op->nchunks = 1; /* the MPI call still runs (counts of 0) */
    if (st == KILN_OK && lc) {
        if (m->rank == root) {
            st = kiln_buffer_write_async(q, lb, lo * es, lc * es,
                                         (const char *)host + d->start * d->cols * es, nw, wait,
                                         &op->after[op->nafter]);
            if (st == KILN_OK)
                op->nafter++;
            else
                kmpi_error_kiln(st, call);
        } else {
            st = wr(op, 0, q, lb, lo * es, lc * es, op->host);
        }
    }
    if (st == KILN_OK)
        st = submit(op, q, event);
    else
        kmpi_op_free(op);
    if (st != KILN_OK) {
        kiln_mpi_darray_release(d);
        return st;
    }
    *out = d;
    return KILN_OK;
}

kiln_status kiln_mpi_darray_scatter(kiln_mpi *m, kiln_queue *q, kiln_dtype dt, size_t n,
                                    const void *host, int root, size_t nw, kiln_event *const *wait,
                                    kiln_event **event, kiln_mpi_darray **out) {
    return scatter_impl(m, q, dt, n, 1, 0, 0, host, root, nw, wait, event, out,
                        "kiln_mpi_darray_scatter");
}

kiln_status kiln_mpi_darray_rows_scatter(kiln_mpi *m, kiln_queue *q, kiln_dtype dt, size_t rows,
                                         size_t cols, size_t halo, const void *host, int root,
                                         size_t nw, kiln_event *const *wait, kiln_event **event,
                                         kiln_mpi_darray **out) {
    return scatter_impl(m, q, dt, rows, cols, halo, 1, host, root, nw, wait, event, out,
                        "kiln_mpi_darray_rows_scatter");
}

kiln_status kiln_mpi_darray_gather(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *d, void *host,
                                   int root, size_t nw, kiln_event *const *wait,
                                   kiln_event **event) {
    static const char call[] = "kiln_mpi_darray_gather";
    if (event)
        *event = NULL;
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK && !d)
        st = kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: darray is NULL", call);
    if (st == KILN_OK && d->m != m)
        st = kmpi_error(KILN_ERROR_MISMATCH, "%s: the darray belongs to another kiln_mpi", call);
    if (st == KILN_OK)
        st = check_root(m, call, "root", root);
    if (st == KILN_OK && m->rank == root && !host && d->n)
        st = kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: host is NULL on the root (rank %d)", call,
                        root);
    if (st == KILN_OK && d->n > (size_t)INT_MAX / d->cols)
        st = kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: %zu x %zu elements is past MPI's int counts",
                        call, d->n, d->cols);
    if (st != KILN_OK)
        return st;
    size_t es = kiln_dtype_size(d->dt);
    kmpi_op *op = kmpi_op_new(m, KMPI_GATHER, call);
    if (!op)
        return kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
    size_t ne = d->n * d->cols, lo = d->halo * d->cols, lc = d->count * d->cols;
    set_hdr(op, d->dt, ne, 0, root, (int)d->cols);
    op->user_host = host;
    kiln_buffer *lb = kiln_array_buffer(d->local);
    if ((st = prep(op, ne, es, 0)) == KILN_OK &&
        (st = counts_displs(op, d->n, d->cols, d->ranks)) == KILN_OK && m->rank != root)
        st = stage(op, lc * es);
    if (st == KILN_OK && ne == 0)
        op->nchunks = 1;
    if (st == KILN_OK && lc) {
        if (m->rank == root) {
            st = kiln_buffer_read_async(q, lb, lo * es, lc * es,
                                        (char *)host + d->start * d->cols * es, nw, wait,
                                        &op->ready[0]);
            if (st != KILN_OK)
                kmpi_error_kiln(st, call);
        } else {
            st = rd(op, 0, q, lb, lo * es, lc * es, 0, nw, wait);
        }
    }
    if (st != KILN_OK)
        return fail_free(op, st);
    return submit(op, q, event);
}

static kiln_status same_n(const char *call, const kiln_mpi_darray *a, const kiln_mpi_darray *b,
                          const char *na, const char *nb) {
    if (!a || !b)
        return kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", call, a ? nb : na);
    if (a->two_d || b->two_d)
        return kmpi_error(KILN_ERROR_UNSUPPORTED,
                          "%s: row-block (2-D) distributed arrays are not supported here (1-D "
                          "only; work on kiln_mpi_darray_local)",
                          call);
    if (a->n != b->n || a->m != b->m)
        return kmpi_error(KILN_ERROR_MISMATCH, "%s: %s has %zu elements, %s %zu", call, na, a->n,
                          nb, b->n);
    return KILN_OK;
}

kiln_status kiln_mpi_darray_binary(kiln_mpi *m, kiln_queue *q, kiln_binary_op op,
                                   kiln_mpi_darray *out, kiln_mpi_darray *a, kiln_mpi_darray *b,
                                   size_t nw, kiln_event *const *wait, kiln_event **event) {
    static const char call[] = "kiln_mpi_darray_binary";
    if (event)
        *event = NULL;
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK)
        st = same_n(call, out, a, "out", "a");
    if (st == KILN_OK)
        st = same_n(call, a, b, "a", "b");
    if (st != KILN_OK)
        return st;
    st = kiln_array_binary_out(q, op, out->local, a->local, b->local, nw, wait, event);
    return st == KILN_OK ? st : kmpi_error_kiln(st, call);
}

static kiln_status rng_fill(kiln_mpi *m, kiln_queue *q, kiln_rng *rng, kiln_mpi_darray *d,
                            int normal, double mean, double sd, size_t nw, kiln_event *const *wait,
                            kiln_event **event) {
    const char *call = normal ? "kiln_mpi_darray_normal" : "kiln_mpi_darray_uniform";
    if (event)
        *event = NULL;
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK && (!rng || !d))
        st = kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", call, rng ? "darray" : "rng");
    if (st != KILN_OK)
        return st;
    if (d->dt != KILN_FLOAT32 && d->dt != KILN_FLOAT64)
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT, "%s: dtype %s (float32 or float64 only)",
                          call, kiln_dtype_name(d->dt));
    if (d->two_d)
        return kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: 1-D distributed arrays only", call);
    uint64_t k = d->dt == KILN_FLOAT64 ? 2 : 1, o = 0;
    kiln_rng_get_offset(rng, &o);
    if (d->n > (UINT64_MAX - o) / k)
        return kmpi_error(KILN_ERROR_OUT_OF_RANGE,
                          "%s: %zu elements from offset %llu would wrap the stream", call, d->n,
                          (unsigned long long)o);
    /* this rank's words: those of its elements' global indices */
    kiln_rng_set_offset(rng, o + k * d->start);
    st = normal ? kiln_rng_normal(q, rng, d->local, mean, sd, nw, wait, event)
                : kiln_rng_uniform(q, rng, d->local, nw, wait, event);
    kiln_rng_set_offset(rng, st == KILN_OK ? o + k * d->n : o);
    return st == KILN_OK ? st : kmpi_error_kiln(st, call);
}

kiln_status kiln_mpi_darray_uniform(kiln_mpi *m, kiln_queue *q, kiln_rng *rng, kiln_mpi_darray *d,
                                    size_t nw, kiln_event *const *wait, kiln_event **event) {
    return rng_fill(m, q, rng, d, 0, 0, 0, nw, wait, event);
}

kiln_status kiln_mpi_darray_normal(kiln_mpi *m, kiln_queue *q, kiln_rng *rng, kiln_mpi_darray *d,
                                   double mean, double sd, size_t nw, kiln_event *const *wait,
                                   kiln_event **event) {
    return rng_fill(m, q, rng, d, 1, mean, sd, nw, wait, event);
}

static kiln_status fixup_kernel(kiln_mpi *m, kiln_dtype dt, kiln_elementwise **k) {
    pthread_mutex_lock(&m->cache_lock);
    kiln_status st = KILN_OK;
    if (!m->scan_cache[dt]) {
        char args[96];
        snprintf(args, sizeof args, "%s *y, const %s *p", kiln_dtype_name(dt), kiln_dtype_name(dt));
        kiln_elementwise *e = NULL;
        st = kiln_elementwise_create(m->ctx,
                                     &KILN_ELEMENTWISE_DESC(.arguments = args,
                                                            .operation = "y[i] += p[0]",
                                                            .name = "kiln_mpi_scan_fixup",
                                                            .flags = KILN_ELEMENTWISE_ANY_SHAPE),
                                     &e);
        m->scan_cache[dt] = e;
    }
    *k = m->scan_cache[dt];
    pthread_mutex_unlock(&m->cache_lock);
    return st;
}

kiln_status kiln_mpi_darray_cumsum(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *out,
                                   kiln_mpi_darray *a, int exclusive, size_t nw,
                                   kiln_event *const *wait, kiln_event **event) {
    static const char call[] = "kiln_mpi_darray_cumsum";
    if (event)
        *event = NULL;
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK)
        st = same_n(call, out, a, "out", "a");
    if (st != KILN_OK)
        return st;
    kiln_dtype dt = a->dt;
    if (out->dt != dt || dt == KILN_FLOAT16 || dt == KILN_COMPLEX64 || dt == KILN_COMPLEX128)
        return kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                          "%s: dtypes %s and %s (the same integer or float dtype, not float16)",
                          call, kiln_dtype_name(out->dt), kiln_dtype_name(dt));
    kiln_elementwise *fix = NULL;
    if ((st = fixup_kernel(m, dt, &fix)) != KILN_OK)
        return kmpi_error_kiln(st, call);
    size_t one = 1, es = kiln_dtype_size(dt);
    kiln_array *tot = NULL, *pref = NULL;
    kiln_event *e_tot = NULL, *e_scan = NULL, *e_x = NULL;
    kmpi_op *op = NULL;
    if ((st = kiln_array_empty(m->ctx, dt, 1, &one, &tot)) != KILN_OK ||
        (st = kiln_array_empty(m->ctx, dt, 1, &one, &pref)) != KILN_OK)
        goto kfail;
    /* (a submit that fails frees the op) */
    /* the block's total before a scan in place overwrites it */
    if ((st = kiln_array_reduce_async(q, KILN_REDUCE_SUM, a->local, tot, NULL, nw, wait, &e_tot)) !=
        KILN_OK)
        goto kfail;
    if ((st = kiln_array_cumsum_out(q, out->local, a->local, exclusive, 1, &e_tot, &e_scan)) !=
        KILN_OK)
        goto kfail;
    op = kmpi_op_new(m, KMPI_EXSCAN, call);
    if (!op) {
        st = kmpi_error(KILN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", call);
        goto fail;
    }
    set_hdr(op, dt, a->n, KILN_MPI_SUM, -1, 0);
    if ((st = prep(op, 1, es, 0)) != KILN_OK || (st = stage(op, 2 * es)) != KILN_OK ||
        (st = rd(op, 0, q, kiln_array_buffer(tot), 0, es, 0, 1, &e_tot)) != KILN_OK ||
        (st = wr(op, 0, q, kiln_array_buffer(pref), 0, es, op->host + es)) != KILN_OK)
        goto fail;
    st = submit(op, q, &e_x);
    op = NULL;
    if (st != KILN_OK)
        goto fail;
    {
        kiln_event *w2[2] = { e_x, e_scan };
        kiln_arg args[2] = { KILN_ARG_ARRAY(out->local), KILN_ARG_ARRAY(pref) };
        st = kiln_elementwise_launch(q, fix, out->count, 2, args, 2, w2, event);
        if (st != KILN_OK)
            kmpi_error_kiln(st, call);
    }
    goto done;
kfail:
    kmpi_error_kiln(st, call);
fail:
    kmpi_op_free(op);
done:
    kiln_event_release(e_tot);
    kiln_event_release(e_scan);
    kiln_event_release(e_x);
    kiln_array_release(tot);
    kiln_array_release(pref);
    return st;
}

kiln_status kiln_mpi_darray_sum(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *a, kiln_array *result,
                                size_t nw, kiln_event *const *wait, kiln_event **event) {
    static const char call[] = "kiln_mpi_darray_sum";
    if (event)
        *event = NULL;
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK && (!a || !result))
        st = kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", call, a ? "result" : "darray");
    if (st == KILN_OK && a->two_d)
        st = kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: 1-D distributed arrays only", call);
    if (st != KILN_OK)
        return st;
    kiln_dtype rd_t = kiln_dtype_reduce_result(KILN_REDUCE_SUM, a->dt);
    if (kiln_array_dtype(result) != rd_t || kiln_array_size(result) != 1)
        return kmpi_error(KILN_ERROR_MISMATCH,
                          "%s: result must be one element of %s (it has %zu of %s)", call,
                          kiln_dtype_name(rd_t), kiln_array_size(result),
                          kiln_dtype_name(kiln_array_dtype(result)));
    kiln_event *e = NULL;
    st = kiln_array_reduce_async(q, KILN_REDUCE_SUM, a->local, result, NULL, nw, wait, &e);
    if (st != KILN_OK)
        return kmpi_error_kiln(st, call);
    st = kiln_mpi_allreduce(m, q, result, KILN_MPI_SUM, 1, &e, event);
    kiln_event_release(e);
    return st;
}

/* rows [r0, r0 + k) of d's local array, a view (contiguous: whole rows) */
kiln_status kmpi_rows_view(kiln_mpi_darray *d, size_t r0, size_t k, kiln_array **v) {
    kiln_slice sl[2] = { KILN_SLICE((ptrdiff_t)r0, (ptrdiff_t)(r0 + k), 1), KILN_SLICE_ALL };
    return kiln_array_view(d->local, sl, v);
}

kiln_status kiln_mpi_darray_halo_exchange(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *d, size_t nw,
                                          kiln_event *const *wait, kiln_event **event) {
    static const char call[] = "kiln_mpi_darray_halo_exchange";
    if (event)
        *event = NULL;
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK && !d)
        st = kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: darray is NULL", call);
    if (st == KILN_OK && (!d->two_d || d->m != m))
        st = kmpi_error(KILN_ERROR_INVALID_ARGUMENT,
                        "%s: the darray is not a row-block array of this kiln_mpi "
                        "(kiln_mpi_darray_rows_empty / _rows_scatter)",
                        call);
    if (st != KILN_OK)
        return st;
    size_t h = d->halo, c = d->count;
    int last = d->ranks - 1; /* ranks past it hold no rows: nothing to do */
    if (m->rank > last)
        h = 0;
    kiln_event *ev[4] = { NULL, NULL, NULL, NULL };
    size_t ne = 0;
    /* tags 2^20 (rows going up to rank r-1) and 2^20 + 1 (going down) */
    const int up = 1 << 20, down = (1 << 20) + 1;
    struct {
        int on, peer, tag, send;
        size_t r0;
    } t[4] = {
        { m->rank > 0, m->rank - 1, up, 1, h },        /* my first rows up */
        { m->rank < last, m->rank + 1, down, 1, c },   /* my last rows down */
        { m->rank > 0, m->rank - 1, down, 0, 0 },      /* its last rows: my upper halo */
        { m->rank < last, m->rank + 1, up, 0, h + c }, /* its first rows: my lower halo */
    };
    for (int i = 0; i < 4 && st == KILN_OK && h > 0; i++) {
        if (!t[i].on)
            continue;
        kiln_array *v = NULL;
        st = kmpi_rows_view(d, t[i].r0, h, &v);
        if (st != KILN_OK) {
            kmpi_error_kiln(st, call);
            break;
        }
        st = p2p_any(m, q, v, t[i].peer, t[i].tag, nw, wait, &ev[ne], t[i].send, call);
        kiln_array_release(v);
        if (st == KILN_OK)
            ne++;
    }
    if (st == KILN_OK) {
        kiln_status ms = kiln_queue_marker(q, ne ? ne : nw, ne ? ev : wait, event);
        if (ms != KILN_OK)
            st = kmpi_error_kiln(ms, call);
    }
    for (size_t i = 0; i < ne; i++)
        kiln_event_release(ev[i]);
    return st;
}

kiln_status kiln_mpi_darray_histogram(kiln_mpi *m, kiln_queue *q, kiln_mpi_darray *d, size_t bins,
                                      double lo, double hi, size_t nw, kiln_event *const *wait,
                                      kiln_event **event, kiln_array **hist) {
    static const char call[] = "kiln_mpi_darray_histogram";
    if (event)
        *event = NULL;
    if (hist)
        *hist = NULL;
    kiln_status st = check_common(m, call, &q);
    if (st == KILN_OK && (!d || !hist))
        st = kmpi_error(KILN_ERROR_NULL_HANDLE, "%s: %s is NULL", call, d ? "hist" : "darray");
    if (st == KILN_OK && d->two_d)
        st = kmpi_error(KILN_ERROR_UNSUPPORTED, "%s: 1-D distributed arrays only", call);
    if (st != KILN_OK)
        return st;
    kiln_event *e = NULL;
    kiln_array *h = NULL;
    st = kiln_array_histogram(q, d->local, bins, lo, hi, NULL, nw, wait, &e, &h);
    if (st != KILN_OK)
        return kmpi_error_kiln(st, call);
    st = kiln_mpi_allreduce(m, q, h, KILN_MPI_SUM, 1, &e, event);
    kiln_event_release(e);
    if (st != KILN_OK) {
        kiln_array_release(h);
        return st;
    }
    *hist = h;
    return KILN_OK;
}
