/* Arrays and host memory: whole-array reads and writes (dense C order on
 * the host; strided arrays go through a dense temporary and the copy
 * kernel), and copies between arrays. */
#include <assert.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "algo/ops/ops_internal.h"
#include "algo/prim/prim.h"
#include "base/check.h"
#include "base/error.h"

/* Copy kernel over any layout: y[i] = x[i]. float16 travels as ushort. */
kiln_status kiln__array_copy_kernel(kiln_queue *q, kiln_array *dst, kiln_array *src,
                                    size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    char args[96];
    const char *t = kiln__bits_type(src->dtype);
    snprintf(args, sizeof args, "%s *y, const %s *x", t, t);
    kiln_array d2 = *dst, s2 = *src; /* headers only, for the dtype trick */
    if (src->dtype == KILN_FLOAT16) {
        d2.dtype = KILN_UINT16;
        s2.dtype = KILN_UINT16;
    }
    kiln_elementwise *ew = NULL;
    kiln_status st =
        kiln__elementwise_cached(kiln_queue_context(q), args, "y[i] = x[i]", "kiln_copy", &ew);
    if (st == KILN_OK) {
        kiln_arg v[2] = { KILN_ARG_ARRAY(&d2), KILN_ARG_ARRAY(&s2) };
        st = kiln_elementwise_launch(q, ew, d2.size, 2, v, num_wait, wait, event);
    }
    kiln_elementwise_release(ew);
    return st;
}

/* Strided arrays: a dense temporary and the copy kernel, in the order the
 * direction needs (write: host -> tmp -> a; read: a -> tmp -> host). */
static kiln_status transfer_strided(kiln_queue *q, kiln_array *a, void *host, int to_device,
                                    size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    size_t bytes = a->size * kiln_dtype_size(a->dtype);
    kiln_array *tmp = NULL;
    kiln_event *e1 = NULL;
    kiln_status st = kiln_array_empty(a->context, a->dtype, a->ndim, a->shape, &tmp);
    if (st == KILN_OK && to_device) {
        st = kiln_buffer_write_async(q, tmp->buffer, 0, bytes, host, num_wait, wait, &e1);
        if (st == KILN_OK)
            st = kiln__array_copy_kernel(q, a, tmp, 1, &e1, event);
    } else if (st == KILN_OK) {
        st = kiln__array_copy_kernel(q, tmp, a, num_wait, wait, &e1);
        if (st == KILN_OK)
            st = kiln_buffer_read_async(q, tmp->buffer, 0, bytes, host, 1, &e1, event);
    }
    kiln__event_drop(&e1);
    kiln_array_release(tmp); /* queued work holds its buffer */
    return st;
}

/* One body for both directions of the host transfer of all of a. */
static kiln_status transfer(const char *what, kiln_queue *q, kiln_array *a, void *host,
                            int to_device, size_t num_wait, kiln_event *const *wait,
                            kiln_event **event) {
    if (event)
        *event = NULL;
    kiln_status st = kiln__array_check_queue(q, a, what);
    if (st != KILN_OK)
        return st;
    if (!host && a->size)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: host is NULL", what);
    size_t es = kiln_dtype_size(a->dtype);
    if (a->size == 0)
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    assert(kiln__array_inside(a) && "an array copied to or from the host lies inside its buffer");
    if (!kiln__array_contiguous(a))
        return transfer_strided(q, a, host, to_device, num_wait, wait, event);
    if (to_device)
        return kiln_buffer_write_async(q, a->buffer, a->offset * es, a->size * es, host, num_wait,
                                       wait, event);
    return kiln_buffer_read_async(q, a->buffer, a->offset * es, a->size * es, host, num_wait, wait,
                                  event);
}

/* The blocking forms: the transfer, then a wait for it. */
static kiln_status transfer_blocking(const char *what, kiln_queue *q, kiln_array *a, void *host,
                                     int to_device) {
    kiln_event *e = NULL;
    kiln_status st = transfer(what, q, a, host, to_device, 0, NULL, &e);
    if (st == KILN_OK && e)
        st = kiln_event_wait(e);
    kiln__event_drop(&e);
    return st;
}

kiln_status kiln_array_read_async(kiln_queue *q, kiln_array *a, void *host, size_t num_wait,
                                  kiln_event *const *wait, kiln_event **event) {
    return transfer("kiln_array_read_async", q, a, host, 0, num_wait, wait, event);
}

kiln_status kiln_array_read_future(kiln_queue *q, kiln_array *a, size_t num_wait,
                                   kiln_event *const *wait, kiln_future **future) {
    const char *fn = "kiln_array_read_future";
    if (future)
        *future = NULL;
    if (!future)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: future is NULL", fn);
    kiln_status st = kiln__array_check_queue(q, a, fn);
    if (st != KILN_OK)
        return st;
    size_t bytes = kiln_array_size(a) * kiln_dtype_size(kiln_array_dtype(a));
    kiln_future *f = NULL;
    kiln_event *ev = NULL;
    st = kiln_future_create(kiln_queue_context(q), bytes, &f);
    if (st == KILN_OK)
        st = transfer(fn, q, a, kiln_future_data(f), 0, num_wait, wait, &ev);
    if (st == KILN_OK && (st = kiln_future_complete_after(f, ev)) != KILN_OK)
        (void)kiln_event_wait(ev); /* it writes into the future's storage */
    kiln_event_release(ev);
    if (st != KILN_OK) {
        kiln_future_release(f);
        return st;
    }
    *future = f;
    return KILN_OK;
}

kiln_status kiln_array_read(kiln_queue *q, kiln_array *a, void *host) {
    return transfer_blocking("kiln_array_read", q, a, host, 0);
}

kiln_status kiln_array_write_async(kiln_queue *q, kiln_array *a, const void *host, size_t num_wait,
                                   kiln_event *const *wait, kiln_event **event) {
    /* The write only reads host; the shared body takes it as void *. */
    return transfer("kiln_array_write_async", q, a, (void *)host, 1, num_wait, wait, event);
}

kiln_status kiln_array_write(kiln_queue *q, kiln_array *a, const void *host) {
    return transfer_blocking("kiln_array_write", q, a, (void *)host, 1);
}

/* The copies' common checks: dst and src on their queues, then of one
 * dtype and shape. */
static kiln_status check_copy(kiln_queue *dst_queue, kiln_array *dst, kiln_queue *src_queue,
                              kiln_array *src, const char *what) {
    kiln_status st = kiln__array_check_queue(dst_queue, dst, what);
    if (st == KILN_OK)
        st = kiln__array_check_queue(src_queue, src, what);
    if (st != KILN_OK)
        return st;
    if (dst->dtype != src->dtype || !kiln__array_same_shape(dst, src)) {
        char td[96], ts[96];
        return kiln__error_set(
            KILN_ERROR_MISMATCH, 0, "%s: shapes or dtypes differ (dst %s, src %s)", what,
            kiln__array_describe(dst, td, sizeof td), kiln__array_describe(src, ts, sizeof ts));
    }
    return KILN_OK;
}

kiln_status kiln_array_copy_out(kiln_queue *q, kiln_array *dst, kiln_array *src, size_t num_wait,
                                kiln_event *const *wait, kiln_event **event) {
    if (event)
        *event = NULL;
    kiln_status st = check_copy(q, dst, q, src, "kiln_array_copy_out");
    if (st != KILN_OK)
        return st;
    size_t es = kiln_dtype_size(src->dtype);
    if (src->size == 0)
        return event ? kiln_queue_marker(q, num_wait, wait, event) : KILN_OK;
    if (kiln__array_contiguous(src) && kiln__array_contiguous(dst))
        return kiln_buffer_copy(q, src->buffer, src->offset * es, dst->buffer, dst->offset * es,
                                src->size * es, num_wait, wait, event);
    return kiln__array_copy_kernel(q, dst, src, num_wait, wait, event);
}

kiln_status kiln_array_copy_between(kiln_queue *dst_queue, kiln_array *dst, kiln_queue *src_queue,
                                    kiln_array *src) {
    kiln_status st = check_copy(dst_queue, dst, src_queue, src, "kiln_array_copy_between");
    if (st != KILN_OK)
        return st;
    size_t bytes = src->size * kiln_dtype_size(src->dtype);
    if (!bytes)
        return KILN_OK;
    void *host = kiln__malloc(bytes);
    if (!host)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_array_copy_between: staging %zu bytes", bytes);
    st = kiln_array_read(src_queue, src, host);
    if (st == KILN_OK)
        st = kiln_array_write(dst_queue, dst, host);
    free(host);
    return st;
}

/* ---- kiln_array_copy_between_async: src (one context) -> dst (another),
 * without blocking.
 *
 * The destination's part must be enqueued now, so that work the caller
 * queues after it on dst_queue comes after it; but the data exists only
 * once the source's read has run. So the data goes through page-locked
 * staging memory S of the destination's context: the source's queue reads
 * src into S's mapping (when that read executes); a device copy S -> dst
 * (a DMA, or the copy kernel straight from S for a strided dst) is
 * enqueued on dst_queue at once, behind a gate (a user event of the
 * destination's context) that opens once the read has ended and S is
 * unmapped. No driver ever reads host memory before it holds the data. The
 * event handed back is kiln's own: it completes when the copy has, and fails
 * if the source's side failed (the gate itself never fails: a failed user
 * event that commands wait on aborts PoCL 3.1). The staging buffers are
 * kept per context and reused: a page-locked allocation is slow, and a
 * release while other work waits on user events goes through the CUDA
 * backend's deferred free. */
#define STAGING_KEEP 8

typedef struct staging {
    pthread_mutex_t lock;
    kiln_buffer *buf[STAGING_KEEP];
    int busy[STAGING_KEEP];
} staging;

static void *staging_make(kiln_context *context, void *arg) {
    (void)context, (void)arg;
    staging *st = kiln__calloc(1, sizeof *st);
    if (st)
        pthread_mutex_init(&st->lock, NULL);
    return st;
}

static void staging_free(void *data) {
    staging *st = data;
    for (int i = 0; i < STAGING_KEEP; i++)
        kiln_buffer_release(st->buf[i]);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

static const char staging_key = 0;

/* A free kept buffer of at least bytes (slot >= 0), else a new one (slot
 * -1 when none is free to keep it in). */
static kiln_status staging_take(kiln_context *ctx, size_t bytes, kiln_buffer **buf, int *slot) {
    void *data = NULL;
    kiln_status st =
        kiln_context_attach(ctx, &staging_key, staging_make, NULL, staging_free, &data);
    if (st != KILN_OK)
        return st;
    staging *sg = data;
    *slot = -1;
    *buf = NULL;
    pthread_mutex_lock(&sg->lock);
    int empty = -1, smaller = -1;
    for (int i = 0; i < STAGING_KEEP && !*buf; i++) {
        if (sg->busy[i])
            continue;
        if (sg->buf[i] && kiln_buffer_size(sg->buf[i]) >= bytes)
            *buf = sg->buf[i], *slot = i;
        else if (!sg->buf[i] && empty < 0)
            empty = i;
        else if (sg->buf[i] && smaller < 0)
            smaller = i;
    }
    if (!*buf)
        *slot = empty >= 0 ? empty : smaller;
    if (*slot >= 0)
        sg->busy[*slot] = 1;
    if (*buf)
        kiln_buffer_retain(*buf); /* the caller's reference */
    pthread_mutex_unlock(&sg->lock);
    if (*buf)
        return KILN_OK;
    /* a new buffer: grow by half again, so a series of sizes settles */
    kiln_buffer *nb = NULL;
    st = kiln_buffer_create(ctx, bytes + bytes / 2, KILN_BUFFER_HOST_PINNED | KILN_BUFFER_POOLED,
                            NULL, &nb);
    pthread_mutex_lock(&sg->lock);
    if (*slot >= 0) {
        if (st == KILN_OK) { /* kept, in place of a smaller idle one */
            kiln_buffer_release(sg->buf[*slot]);
            sg->buf[*slot] = nb;
            kiln_buffer_retain(nb); /* the cache's; the caller has create's */
        } else {
            sg->busy[*slot] = 0; /* the smaller one stays */
        }
    }
    pthread_mutex_unlock(&sg->lock);
    *buf = nb;
    return st;
}

/* Gives a taken buffer back (drops the caller's reference). */
static void staging_give(kiln_context *ctx, kiln_buffer *buf, int slot) {
    void *data = NULL;
    if (slot >= 0 && kiln_context_attach(ctx, &staging_key, staging_make, NULL, staging_free,
                                         &data) == KILN_OK) {
        staging *sg = data;
        pthread_mutex_lock(&sg->lock);
        sg->busy[slot] = 0;
        pthread_mutex_unlock(&sg->lock);
    }
    kiln_buffer_release(buf);
}

typedef struct between {
    kiln_context *ctx;   /* the destination's (a handle: the stage queue) */
    kiln_queue *stage_q; /* the destination's device: map/unmap of S */
    kiln_buffer *S;
    int slot;
    void *hS;
    kiln_event *gate, *out;
    atomic_int src_failed;
} between;

static void between_free(between *b) {
    if (b->S)
        staging_give(b->ctx, b->S, b->slot);
    kiln_queue_release(b->stage_q);
    kiln_event_release(b->gate);
    kiln_event_release(b->out);
    free(b);
}

static void between_unmapped(kiln_event *ev, kiln_event_state state, void *arg) {
    (void)ev;
    between *b = arg;
    if (state != KILN_EVENT_COMPLETE)
        atomic_store(&b->src_failed, 1);
    kiln_event_set_complete(b->gate, KILN_EVENT_COMPLETE);
}

static void between_read(kiln_event *ev, kiln_event_state state, void *arg) {
    (void)ev;
    between *b = arg;
    if (state != KILN_EVENT_COMPLETE)
        atomic_store(&b->src_failed, 1);
    kiln_event *unmapped = NULL;
    if (kiln_buffer_unmap(b->stage_q, b->S, b->hS, 0, NULL, &unmapped) != KILN_OK ||
        kiln_queue_flush(b->stage_q) != KILN_OK ||
        kiln_event_on_complete(unmapped, between_unmapped, b) != KILN_OK) {
        atomic_store(&b->src_failed, 1);
        if (unmapped)
            kiln_event_wait(unmapped);
        kiln_event_set_complete(b->gate, KILN_EVENT_COMPLETE);
    }
    kiln_event_release(unmapped);
}

static void between_copied(kiln_event *ev, kiln_event_state state, void *arg) {
    (void)ev;
    between *b = arg;
    int failed = state != KILN_EVENT_COMPLETE || atomic_load(&b->src_failed);
    kiln_event_set_complete(b->out, failed ? KILN_EVENT_ERROR : KILN_EVENT_COMPLETE);
    between_free(b);
}

kiln_status kiln_array_copy_between_async(kiln_queue *dst_queue, kiln_array *dst,
                                          kiln_queue *src_queue, kiln_array *src, size_t num_wait,
                                          kiln_event *const *wait, kiln_event **event) {
    const char *fn = "kiln_array_copy_between_async";
    if (event)
        *event = NULL;
    kiln_status st = check_copy(dst_queue, dst, src_queue, src, fn);
    if (st != KILN_OK)
        return st;
    kiln_context *dctx = kiln_queue_context(dst_queue);
    if (kiln_queue_context(src_queue) == dctx)
        return kiln_array_copy_out(dst_queue, dst, src, num_wait, wait, event);
    size_t es = kiln_dtype_size(src->dtype), bytes = src->size * es;
    if (!bytes) /* still follows the wait list */
        return kiln_queue_marker(dst_queue, num_wait, wait, event);
    between *b = kiln__calloc(1, sizeof *b);
    if (!b)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s", fn);
    b->ctx = dctx;
    b->slot = -1;
    kiln_event *read = NULL, *copied = NULL;
    kiln__check ck = KILN__CHECK_INIT;
    KILN__CHECK_CALL(&ck, kiln_queue_create(dctx, kiln_queue_device(dst_queue), 0, &b->stage_q));
    KILN__CHECK_CALL(&ck, staging_take(dctx, bytes, &b->S, &b->slot));
    KILN__CHECK_CALL(
        &ck, kiln_buffer_map(b->stage_q, b->S, KILN_MAP_WRITE_INVALIDATE, 0, bytes, &b->hS));
    KILN__CHECK_CALL(&ck, kiln_event_create_user(dctx, &b->gate));
    st = KILN__CHECK_CALL(&ck, kiln_event_create_user(dctx, &b->out));
    if (st != KILN_OK) {
        if (b->hS)
            kiln_buffer_unmap(b->stage_q, b->S, b->hS, 0, NULL, NULL);
        if (b->stage_q)
            kiln_queue_finish(b->stage_q);
        between_free(b);
        return kiln__error_prefix(st, "%s", fn);
    }
    /* the destination's part first: if it cannot be enqueued, nothing is.
     * A strided dst is copied by the copy kernel straight from S (a dense
     * array header over the staging buffer). */
    if (kiln__array_contiguous(dst)) {
        st = kiln_buffer_copy(dst_queue, b->S, 0, kiln_array_buffer(dst), dst->offset * es, bytes,
                              1, &b->gate, &copied);
    } else {
        kiln_array dense = *dst;
        dense.buffer = b->S;
        dense.offset = 0;
        kiln__array_set_dense(&dense, dst->ndim, dst->shape);
        st = kiln__array_copy_kernel(dst_queue, dst, &dense, 1, &b->gate, &copied);
    }
    if (st == KILN_OK)
        st = kiln_array_read_async(src_queue, src, b->hS, num_wait, wait, &read);
    if (st != KILN_OK) {
        /* open the gate so an enqueued copy can end, then clean up */
        kiln_event_set_complete(b->gate, KILN_EVENT_COMPLETE);
        if (copied)
            kiln_event_wait(copied);
        kiln_buffer_unmap(b->stage_q, b->S, b->hS, 0, NULL, NULL);
        kiln_queue_finish(b->stage_q);
        kiln_event_release(copied);
        between_free(b);
        return kiln__error_prefix(st, "%s", fn);
    }
    kiln_event *out = b->out;
    kiln_event_retain(out); /* the caller's, if asked for */
    /* copied ends after the gate, and the gate opens after between_read */
    st = kiln_event_on_complete(read, between_read, b);
    if (st == KILN_OK)
        st = kiln_event_on_complete(copied, between_copied, b);
    kiln_event_release(read);
    kiln_event_release(copied);
    if (st != KILN_OK) { /* out of memory for a callback: cannot go on */
        kiln_event_release(out);
        return kiln__error_prefix(st,
                                  "%s: the copy is enqueued but cannot "
                                  "be completed",
                                  fn);
    }
    return kiln__event_give(event, out);
}
