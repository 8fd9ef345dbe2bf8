/* CUDA buffers: device memory (cuMemAlloc) or pinned host memory
 * (cuMemHostAlloc, used by kernels through its device pointer); transfers on
 * the queue's stream; map/unmap emulated with a pinned staging copy.
 *
 * Nothing enqueued without `blocking` may block the host: the stream may be
 * held by a user event that this very thread will set later. Per CUDA's
 * "API synchronization behavior", so:
 *  - device <-> pageable host memory goes through pinned staging (stage.c);
 *    reads complete in a host function that copies into the user's memory,
 *    before the command's event is recorded;
 *  - a HOST_PINNED buffer is host memory: copies between it and any host
 *    memory are host-to-host, which CUDA performs synchronously, so they run
 *    as host functions (memmove) ordered in the stream instead;
 *  - device <-> page-locked user memory stays a plain async copy.
 * Blocking transfers keep the direct copies (they wait anyway). */
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
#include "backend/cuda/cuda_internal.h"
#include "base/error.h"
#include "base/fault.h"

/* ---- stream-ordered device memory (kiln__cu_mem) ------------------------ */

/* Under c->mem.lock, with dev[0]'s context current: makes the pool and the
 * two streams on first use (unless KILN_CUDA_ASYNC_ALLOC=0). A device without memory pools (or a
 * driver that refuses) keeps cuMemAlloc/cuMemFree. Multi-device contexts keep them too: their other
 * devices reach dev[0]'s buffers by peer access, which a pool would have to grant separately. */
static int kiln__cu_mem_ready(kiln__cu_context *c) {
    kiln__cu_mem *m = &c->mem;
    if (m->state)
        return m->state > 0;
    m->state = -1;
    /* On unless KILN_CUDA_ASYNC_ALLOC=0. While kiln__cu_mem_destroy
     * destroyed the pool and its streams with frees still pending,
     * test_pool's no_early_reuse hung in 5 of 160 runs on H200s (the next
     * context's staged read never completed: main thread in
     * cuEventSynchronize, a driver thread on a driver mutex); draining
     * the streams first: 0 of 160 (docs/pools.md). */
    const char *opt = getenv("KILN_CUDA_ASYNC_ALLOC");
    if (opt && strcmp(opt, "0") == 0)
        return 0;
    int supported = 0;
    if (c->n != 1 ||
        kiln__cu.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                      c->dev[0].dev) != CUDA_SUCCESS ||
        !supported)
        return 0;
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = c->dev[0].ordinal;
    if (kiln__cu.cuMemPoolCreate(&m->pool, &props) != CUDA_SUCCESS)
        return 0;
    /* The allocating stream must never wait for a pending free (that may
     * sit behind a user event): no reuse through dependencies the driver
     * adds itself; reuse of blocks whose free has completed stays. */
    int off = 0;
    cuuint64_t keep = UINT64_MAX; /* kiln's own pool trims; the driver keeps */
    if (kiln__cu.cuMemPoolSetAttribute(m->pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
                                       &off) != CUDA_SUCCESS ||
        kiln__cu.cuMemPoolSetAttribute(m->pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) !=
            CUDA_SUCCESS ||
        kiln__cu.cuStreamCreate(&m->alloc_stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        kiln__cu.cuMemPoolDestroy(m->pool);
        m->pool = NULL;
        return 0;
    }
    if (kiln__cu.cuStreamCreate(&m->free_stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        kiln__cu.cuStreamDestroy(m->alloc_stream);
        kiln__cu.cuMemPoolDestroy(m->pool);
        m->pool = NULL;
        return 0;
    }
    m->state = 1;
    return 1;
}

/* 1 and *ptr set: allocated from the context's pool; 0: no pool (use
 * cuMemAlloc); -1: the pool's allocation failed (the thread's error set). */
static int kiln__cu_mem_alloc(kiln__cu_context *c, size_t size, CUdeviceptr *ptr, kiln_status *st) {
    kiln__cu_mem *m = &c->mem;
    pthread_mutex_lock(&m->lock);
    if (!kiln__cu_mem_ready(c)) {
        pthread_mutex_unlock(&m->lock);
        return 0;
    }
    CUresult r = kiln__cu.cuMemAllocFromPoolAsync(ptr, size, m->pool, m->alloc_stream);
    if (r == CUDA_SUCCESS) /* prompt: this stream waits for nothing */
        r = kiln__cu.cuStreamSynchronize(m->alloc_stream);
    pthread_mutex_unlock(&m->lock);
    if (r != CUDA_SUCCESS) {
        *st = kiln__cu_fail("cuMemAllocFromPoolAsync", r);
        return -1;
    }
    return 1;
}

/* Under the lock: the free stream waits for what `s` has enqueued so far.
 * If the driver refuses the event or the wait, the host waits for `s`
 * instead: a free must never overtake work that may still use the memory. */
static void kiln__cu_mem_fence(kiln__cu_mem *m, CUstream s) {
    CUevent e = NULL;
    CUresult r = kiln__cu.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
    if (r == CUDA_SUCCESS)
        r = kiln__cu.cuEventRecord(e, s);
    if (r == CUDA_SUCCESS)
        r = kiln__cu.cuStreamWaitEvent(m->free_stream, e, 0);
    if (e)
        kiln__cu.cuEventDestroy(e); /* the wait keeps what it needs */
    if (r != CUDA_SUCCESS)
        kiln__cu.cuStreamSynchronize(s);
}

/* Frees pool memory behind all work enqueued so far on every stream of the
 * context, live or released: never blocks. */
static void kiln__cu_mem_free(kiln__cu_context *c, CUdeviceptr ptr) {
    kiln__cu_mem *m = &c->mem;
    pthread_mutex_lock(&m->lock);
    if (kiln__cu_ctx_use(c->dev[0].ctx) == KILN_OK) {
        for (kiln__cu_queue *q = m->queues; q; q = q->mem_next)
            for (int i = 0; i < q->nlanes; i++)
                kiln__cu_mem_fence(m, q->lanes[i]);
        size_t keep = 0;
        for (size_t i = 0; i < m->num_retired; i++) {
            if (kiln__cu.cuEventQuery(m->retired[i]) == CUDA_SUCCESS) {
                kiln__cu.cuEventDestroy(m->retired[i]);
                continue;
            }
            kiln__cu.cuStreamWaitEvent(m->free_stream, m->retired[i], 0);
            m->retired[keep++] = m->retired[i];
        }
        m->num_retired = keep;
        kiln__cu.cuMemFreeAsync(ptr, m->free_stream);
    }
    pthread_mutex_unlock(&m->lock);
}

void kiln__cu_mem_queue_add(kiln__cu_context *c, kiln__cu_queue *q) {
    pthread_mutex_lock(&c->mem.lock);
    q->mem_next = c->mem.queues;
    c->mem.queues = q;
    pthread_mutex_unlock(&c->mem.lock);
}

/* A released queue's streams go, perhaps with work still pending (behind a
 * user event, say): an event after that work stays as a fence for later
 * frees until it has completed. */
void kiln__cu_mem_queue_remove(kiln__cu_context *c, kiln__cu_queue *q) {
    kiln__cu_mem *m = &c->mem;
    pthread_mutex_lock(&m->lock);
    kiln__cu_queue **at = &m->queues;
    while (*at && *at != q)
        at = &(*at)->mem_next;
    if (*at) {
        *at = q->mem_next;
        for (int i = 0; m->state > 0 && i < q->nlanes; i++) {
            if (m->num_retired == m->cap_retired) {
                size_t cap = m->cap_retired ? 2 * m->cap_retired : 8;
                CUevent *grown = realloc(m->retired, cap * sizeof *grown);
                if (!grown)
                    break;
                m->retired = grown;
                m->cap_retired = cap;
            }
            CUevent e;
            if (kiln__cu.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
                break;
            if (kiln__cu.cuEventRecord(e, q->lanes[i]) == CUDA_SUCCESS)
                m->retired[m->num_retired++] = e;
            else
                kiln__cu.cuEventDestroy(e);
        }
    }
    q->mem_next = NULL;
    pthread_mutex_unlock(&m->lock);
}

/* The context's last reference went: every buffer is gone (each held a
 * reference), their frees enqueued. The pool and its streams go only
 * once those frees have run: destroying them with frees pending (which
 * the driver allows) left a later context's reads hanging now and then.
 * The wait is bounded by device work: no stream here waits for a user
 * event (held commands stay on the host, gate.c). */
void kiln__cu_mem_destroy(kiln__cu_context *c) {
    kiln__cu_mem *m = &c->mem;
    if (m->state > 0 && kiln__cu_ctx_use(c->dev[0].ctx) == KILN_OK) {
        kiln__cu.cuStreamSynchronize(m->free_stream);
        kiln__cu.cuStreamSynchronize(m->alloc_stream);
        for (size_t i = 0; i < m->num_retired; i++)
            kiln__cu.cuEventDestroy(m->retired[i]);
        kiln__cu.cuStreamDestroy(m->alloc_stream);
        kiln__cu.cuStreamDestroy(m->free_stream);
        kiln__cu.cuMemPoolDestroy(m->pool);
    }
    free(m->retired);
    pthread_mutex_destroy(&m->lock);
}

kiln_status kiln__cu_buffer_create(void *context, size_t size, unsigned flags,
                                   const void *host_data, void **buffer) {
    *buffer = NULL;
    kiln__cu_context *c = context;
    if (size == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "a buffer needs a size > 0");
    kiln__cu_reap();
    kiln_status st = kiln__cu_ctx_use(c->dev[0].ctx);
    if (st != KILN_OK)
        return st;
    kiln__cu_buffer *b = kiln__calloc(1, sizeof *b);
    if (!b)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    b->size = size;
    size_t alloc = kiln__buffer_alloc_size(size);
    if (alloc == 0) {
        free(b);
        return kiln__error_set(KILN_ERROR_OUT_OF_DEVICE_MEMORY, 0,
                               "a buffer of %zu bytes: more than can be allocated", size);
    }
    if (flags & KILN_BUFFER_HOST_PINNED) {
        /* portable + mapped: every context (device) can use it */
        CUresult r = kiln__cu.cuMemHostAlloc(&b->host, alloc,
                                             CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
        if (r != CUDA_SUCCESS) {
            free(b);
            return kiln__cu_pinned_status(kiln__cu_fail("cuMemHostAlloc", r), "host memory");
        }
        r = kiln__cu.cuMemHostGetDevicePointer(&b->ptr, b->host, 0);
        if (r != CUDA_SUCCESS) {
            kiln__cu.cuMemFreeHost(b->host);
            free(b);
            return kiln__cu_fail("cuMemHostGetDevicePointer", r);
        }
        b->pinned = 1;
        if (host_data)
            memcpy(b->host, host_data, size);
    } else {
        int pooled = kiln__cu_mem_alloc(c, alloc, &b->ptr, &st);
        if (pooled < 0) {
            free(b);
            return st;
        }
        CUresult r = CUDA_SUCCESS;
        if (pooled)
            b->stream_ordered = 1;
        else
            r = kiln__cu.cuMemAlloc(&b->ptr, alloc);
        if (r != CUDA_SUCCESS) {
            free(b);
            return kiln__cu_fail("cuMemAlloc", r);
        }
        if (host_data) {
            /* From pageable memory cuMemcpyHtoD may return before its DMA
             * has landed, and kiln's queues are non-blocking streams that do
             * not order against the legacy stream the copy ran on: wait for
             * it, so that any queue sees the data. */
            r = kiln__cu.cuMemcpyHtoD(b->ptr, host_data, size);
            if (r == CUDA_SUCCESS)
                r = kiln__cu.cuStreamSynchronize(CU_STREAM_LEGACY);
            if (r != CUDA_SUCCESS) {
                st = kiln__cu_fail("cuMemcpyHtoD", r);
                if (b->stream_ordered)
                    kiln__cu_mem_free(c, b->ptr);
                else
                    kiln__cu.cuMemFree(b->ptr);
                free(b);
                return st;
            }
        }
    }
    atomic_init(&b->refs, 1);
    b->ctx = c;
    kiln__cu_context_ref(c);
    pthread_mutex_init(&b->lock, NULL);
    *buffer = b;
    return KILN_OK;
}

kiln_status kiln__cu_buffer_create_sub(void *parent, size_t offset, size_t size, void **buffer) {
    *buffer = NULL;
    kiln__cu_buffer *p = parent;
    if (offset > p->size || size > p->size - offset || size == 0)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "sub-buffer [%zu, +%zu) outside a buffer of "
                               "%zu bytes",
                               offset, size, p->size);
    kiln__cu_buffer *b = kiln__calloc(1, sizeof *b);
    if (!b)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    atomic_init(&b->refs, 1);
    kiln__ref_take(&p->refs);
    b->parent = p;
    b->ctx = p->ctx;
    kiln__cu_context_ref(b->ctx);
    b->ptr = p->ptr + offset;
    b->host = p->host ? (char *)p->host + offset : NULL;
    b->size = size;
    b->pinned = p->pinned;
    pthread_mutex_init(&b->lock, NULL);
    *buffer = b;
    return KILN_OK;
}

/* Frees a top-level buffer's memory once queued work using it has ended:
 * every device of the context finishes first (cuMemFree would synchronise
 * anyway), then the memory goes. */
static void kiln__cu_buffer_free_memory(kiln__cu_buffer *b) {
    kiln__cu_context *c = b->ctx;
    for (size_t i = 0; i < c->n; i++)
        if (kiln__cu_ctx_use(c->dev[i].ctx) == KILN_OK &&
            kiln__cu.cuCtxSynchronize() == CUDA_SUCCESS)
            kiln__cu_stage_trim(c->dev[i].ctx); /* synchronised: safe */
    if (kiln__cu_ctx_use(c->dev[0].ctx) == KILN_OK) {
        if (b->pinned)
            kiln__cu.cuMemFreeHost(b->host);
        else
            kiln__cu.cuMemFree(b->ptr);
    }
}

/* The buffer's host-side state, once its memory is gone or not its own. */
static void kiln__cu_buffer_free_struct(kiln__cu_buffer *b) {
    kiln__cu_context *c = b->ctx;
    while (b->maps) {
        kiln__cu_mapping *m = b->maps;
        b->maps = m->next;
        if (!m->direct)
            kiln__cu_stage_put(m->stage);
        free(m);
    }
    pthread_mutex_destroy(&b->lock);
    free(b);
    kiln__cu_context_unref(c);
}

/* On kiln's CUDA worker thread (kiln__cu_defer). */
static void kiln__cu_buffer_free_later(void *arg) {
    kiln__cu_wait_no_user_events();
    kiln__cu_buffer_free_memory(arg);
    kiln__cu_buffer_free_struct(arg);
}

void kiln__cu_buffer_ref(kiln__cu_buffer *b) {
    kiln__ref_take(&b->refs);
}

void kiln__cu_buffer_unref(kiln__cu_buffer *b) {
    while (b && kiln__ref_release(&b->refs)) {
        kiln__cu_buffer *parent = b->parent;
        if (!parent && !b->borrowed && b->stream_ordered) {
            kiln__cu_mem_free(b->ctx, b->ptr); /* never blocks */
        } else if (!parent && !b->borrowed) {
            /* While a stream may wait for a user event, synchronising here
             * could wait for ever (the host sets it after this call):
             * free on the worker thread instead. */
            if (kiln__cu_user_events_unset() > 0) {
                kiln__cu_defer(kiln__cu_buffer_free_later, b);
                return; /* a top-level buffer has no parent */
            }
            kiln__cu_buffer_free_memory(b);
        }
        kiln__cu_buffer_free_struct(b);
        b = parent;
    }
}

void kiln__cu_buffer_release(void *buffer) {
    if (!buffer)
        return;
    kiln__cu_reap();
    kiln__cu_buffer_unref(buffer);
}

/* Host-side copy ordered in the stream (HOST_PINNED buffers). With `own`,
 * src is copied first, so the caller's memory may change after return. */
static kiln_status kiln__cu_host_copy(kiln__cu_queue *q, void *dst, const void *src, size_t size,
                                      int own) {
    kiln__cu_hostjob *j = kiln__cu_hostjob_new(own ? size : 0);
    if (!j)
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    if (own) {
        memcpy(j->data, src, size);
        src = j->data;
    }
    j->dst = dst;
    j->src = src;
    j->n = size;
    return kiln__cu_hostjob_launch(q->stream, j);
}

/* Pageable host memory and fill patterns go through a pinned staging block
 * from the device's pool: reserves one block and the host job that puts it
 * back once the stream has passed the copy. */
static kiln_status kiln__cu_stage_begin(kiln__cu_queue *q, size_t size, kiln__cu_stage **s,
                                        kiln__cu_hostjob **j) {
    kiln_status st = kiln__cu_stage_get(q->dev, size, s);
    if (st != KILN_OK)
        return st;
    *j = kiln__cu_hostjob_new(0);
    if (!*j) {
        kiln__cu_stage_put(*s);
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    }
    (*j)->stage = *s;
    return KILN_OK;
}

/* After the staged copy was enqueued (r): on success the job returns the
 * block when the stream reaches it; on failure both are dropped at once.
 * A job that fails to launch keeps the block out of the pool: the DMA may
 * still read it (a leak on an already failing stream, never a reuse). */
static kiln_status kiln__cu_stage_end(kiln__cu_queue *q, kiln__cu_stage *s, kiln__cu_hostjob *j,
                                      CUresult r, const char *what) {
    if (r != CUDA_SUCCESS) {
        free(j);
        kiln__cu_stage_put(s);
        return kiln__cu_fail(what, r);
    }
    return kiln__cu_hostjob_launch(q->stream, j);
}

/* Copies size bytes of src into a staging block now, then its first
 * `copy` bytes to dst in the stream; the block goes back after the copy. */
static kiln_status kiln__cu_stage_to_device(kiln__cu_queue *q, CUdeviceptr dst, const void *src,
                                            size_t size, size_t copy, const char *what) {
    kiln__cu_stage *s = NULL;
    kiln__cu_hostjob *j = NULL;
    kiln_status st = kiln__cu_stage_begin(q, size, &s, &j);
    if (st != KILN_OK)
        return st;
    memcpy(s->host, src, size);
    CUresult r = kiln__cu.cuMemcpyHtoDAsync(dst, s->host, copy, q->stream);
    return kiln__cu_stage_end(q, s, j, r, what);
}

static kiln_status kiln__cu_write_cmd(kiln__cu_queue *q, kiln__cu_buffer *b, size_t offset,
                                      size_t size, const void *src, int blocking) {
    if (b->pinned)
        return kiln__cu_host_copy(q, (char *)b->host + offset, src, size, !blocking);
    CUresult r;
    if (blocking || kiln__cu_host_pinned(src, size)) {
        r = kiln__cu.cuMemcpyHtoDAsync(b->ptr + offset, src, size, q->stream);
        return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuMemcpyHtoDAsync", r);
    }
    /* pageable: stage on this thread (the caller's memory is free again on
     * return), DMA from the block, then the block goes back */
    return kiln__cu_stage_to_device(q, b->ptr + offset, src, size, size,
                                    "cuMemcpyHtoDAsync (staged)");
}

static kiln_status kiln__cu_read_cmd(kiln__cu_queue *q, kiln__cu_buffer *b, size_t offset,
                                     size_t size, void *dst, int blocking) {
    if (b->pinned)
        return kiln__cu_host_copy(q, dst, (char *)b->host + offset, size, 0);
    CUresult r;
    if (blocking || kiln__cu_host_pinned(dst, size)) {
        r = kiln__cu.cuMemcpyDtoHAsync(dst, b->ptr + offset, size, q->stream);
        return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuMemcpyDtoHAsync", r);
    }
    /* pageable: cuMemcpyDtoHAsync would return only after the copy (and so
     * after everything before it in the stream); DMA into a pinned block,
     * then a host function copies it out */
    kiln__cu_stage *s = NULL;
    kiln__cu_hostjob *j = NULL;
    kiln_status st = kiln__cu_stage_begin(q, size, &s, &j);
    if (st != KILN_OK)
        return st;
    j->dst = dst;
    j->src = s->host;
    j->n = size;
    r = kiln__cu.cuMemcpyDtoHAsync(s->host, b->ptr + offset, size, q->stream);
    return kiln__cu_stage_end(q, s, j, r, "cuMemcpyDtoHAsync (staged)");
}

/* Both directions: one command on the queue, blocking if asked. */
typedef struct xfer_args {
    kiln__cu_buffer *b;
    int write, blocking;
    size_t offset, size;
    const void *src;
    void *dst;
    void *own; /* held: the copy of src it owns */
} xfer_args;

static kiln_status xfer_run(kiln__cu_queue *q, void *p) {
    const xfer_args *a = p;
    if (!a->size)
        return KILN_OK;
    return a->write ? kiln__cu_write_cmd(q, a->b, a->offset, a->size, a->src, a->blocking)
                    : kiln__cu_read_cmd(q, a->b, a->offset, a->size, a->dst, a->blocking);
}

/* A held transfer runs as a non-blocking one (its caller, if blocking,
 * waits for the event instead). A non-blocking write copies the caller's
 * bytes now, as one that runs at once does (staging), unless they are
 * page-locked (read by the DMA when it runs, in both cases). */
static void *xfer_hold(const void *p) {
    const xfer_args *a = p;
    xfer_args *h = kiln__malloc(sizeof *h);
    if (!h)
        return NULL;
    *h = *a;
    h->blocking = 0;
    if (a->write && !a->blocking && a->size &&
        (a->b->pinned || !kiln__cu_host_pinned(a->src, a->size))) {
        h->own = kiln__malloc(a->size);
        if (!h->own) {
            free(h);
            return NULL;
        }
        memcpy(h->own, a->src, a->size);
        h->src = h->own;
    }
    kiln__cu_buffer_ref(a->b);
    return h;
}

static void xfer_drop(void *p) {
    xfer_args *h = p;
    free(h->own);
    kiln__cu_buffer_unref(h->b);
    free(h);
}

static const kiln__cu_optype xfer_type = { xfer_run, xfer_hold, xfer_drop };

static kiln_status kiln__cu_transfer(void *queue, kiln__cu_buffer *b, int write, size_t offset,
                                     size_t size, const void *src, void *dst, int blocking,
                                     size_t num_wait, void *const *wait, void **out_event) {
    xfer_args a = { b, write, blocking, offset, size, src, dst, NULL };
    return kiln__cu_enqueue(queue, num_wait, wait, out_event != NULL || blocking, blocking, 0,
                            &xfer_type, &a, out_event);
}

kiln_status kiln__cu_buffer_write(void *queue, void *buffer, size_t offset, size_t size,
                                  const void *src, int blocking, size_t num_wait, void *const *wait,
                                  void **out_event) {
    return kiln__cu_transfer(queue, buffer, 1, offset, size, src, NULL, blocking, num_wait, wait,
                             out_event);
}

kiln_status kiln__cu_buffer_read(void *queue, void *buffer, size_t offset, size_t size, void *dst,
                                 int blocking, size_t num_wait, void *const *wait,
                                 void **out_event) {
    return kiln__cu_transfer(queue, buffer, 0, offset, size, NULL, dst, blocking, num_wait, wait,
                             out_event);
}

typedef struct copy_args {
    kiln__cu_buffer *s, *d;
    size_t src_offset, dst_offset, size;
} copy_args;

static kiln_status copy_run(kiln__cu_queue *q, void *p) {
    const copy_args *a = p;
    if (a->size && a->s->pinned && a->d->pinned)
        /* host to host: CUDA would copy synchronously */
        return kiln__cu_host_copy(q, (char *)a->d->host + a->dst_offset,
                                  (char *)a->s->host + a->src_offset, a->size, 0);
    if (a->size) {
        CUresult r = kiln__cu.cuMemcpyDtoDAsync(a->d->ptr + a->dst_offset,
                                                a->s->ptr + a->src_offset, a->size, q->stream);
        if (r != CUDA_SUCCESS)
            return kiln__cu_fail("cuMemcpyDtoDAsync", r);
    }
    return KILN_OK;
}

static void *copy_hold(const void *p) {
    copy_args *h = kiln__malloc(sizeof *h);
    if (!h)
        return NULL;
    *h = *(const copy_args *)p;
    kiln__cu_buffer_ref(h->s);
    kiln__cu_buffer_ref(h->d);
    return h;
}

static void copy_drop(void *p) {
    copy_args *h = p;
    kiln__cu_buffer_unref(h->s);
    kiln__cu_buffer_unref(h->d);
    free(h);
}

static const kiln__cu_optype copy_type = { copy_run, copy_hold, copy_drop };

kiln_status kiln__cu_buffer_copy(void *queue, void *src, size_t src_offset, void *dst,
                                 size_t dst_offset, size_t size, size_t num_wait, void *const *wait,
                                 void **out_event) {
    copy_args a = { src, dst, src_offset, dst_offset, size };
    return kiln__cu_enqueue(queue, num_wait, wait, out_event != NULL, 0, 0, &copy_type, &a,
                            out_event);
}

/* The shortest period (1, 2 or 4 bytes) that ps bytes of pattern repeat
 * with, or ps: an int64 or float64 zero is a 1-byte pattern. */
static size_t fill_period(const unsigned char *p, size_t ps) {
    for (size_t per = 1; per <= 4 && per < ps; per *= 2) {
        if (ps % per)
            break;
        size_t i = per;
        while (i < ps && p[i] == p[i % per])
            i++;
        if (i == ps)
            return per;
    }
    return ps;
}

/* Fills up to this size with a pattern of 8 to 32 bytes take one strided
 * cuMemsetD2D32 a 4-byte word of the pattern; larger ones double copies
 * (about a memset's bandwidth twice, but a handful of commands). */
#define FILL_2D_MAX ((size_t)1 << 20)

/* Fill: on a HOST_PINNED buffer a host function writes the pattern. On
 * device memory cuMemsetD8/D16/D32 for patterns that repeat every 1, 2 or
 * 4 bytes (when the address is aligned for them: zeros of any type, for
 * one); small fills with a pattern of 8 to 32 bytes one cuMemsetD2D32 a
 * word of it (the rows are the items); otherwise the pattern is copied
 * once from a pinned staging block and doubled with device-to-device
 * copies (log2(size/pattern) copies, no kernel and so no NVRTC needed).
 * The copies cost a command each: an 8-byte fill of 2 KiB took an H100
 * about 60 us that way. */
static kiln_status kiln__cu_fill_cmd(kiln__cu_queue *q, kiln__cu_buffer *b, const void *pattern,
                                     size_t ps, size_t offset, size_t size) {
    CUdeviceptr dst = b->ptr + offset;
    CUresult r;
    if (size == 0)
        return KILN_OK;
    if (!b->pinned) {
        ps = fill_period(pattern, ps);
        int done = 0;
        kiln_status st =
            kiln__cu_fill_kernel(q->ctx, q->dev, q->stream, dst, pattern, ps, size, &done);
        if (st != KILN_OK || done)
            return st;
    }
    if (b->pinned) {
        kiln__cu_hostjob *j = kiln__cu_hostjob_new(ps);
        if (!j)
            return KILN_ERROR_OUT_OF_HOST_MEMORY;
        memcpy(j->data, pattern, ps);
        j->pattern_size = ps;
        j->dst = (char *)b->host + offset;
        j->n = size;
        return kiln__cu_hostjob_launch(q->stream, j);
    }
    if (ps == 1) {
        r = kiln__cu.cuMemsetD8Async(dst, *(const unsigned char *)pattern, size, q->stream);
        return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuMemsetD8Async", r);
    }
    if (ps == 2 && dst % 2 == 0) {
        uint16_t v;
        memcpy(&v, pattern, 2);
        r = kiln__cu.cuMemsetD16Async(dst, v, size / 2, q->stream);
        return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuMemsetD16Async", r);
    }
    if (ps == 4 && dst % 4 == 0) {
        uint32_t v;
        memcpy(&v, pattern, 4);
        r = kiln__cu.cuMemsetD32Async(dst, v, size / 4, q->stream);
        return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuMemsetD32Async", r);
    }
    if (ps % 4 == 0 && ps <= 32 && dst % 4 == 0 && size <= FILL_2D_MAX) {
        for (size_t w = 0; w < ps / 4; w++) {
            uint32_t v;
            memcpy(&v, (const unsigned char *)pattern + 4 * w, 4);
            r = kiln__cu.cuMemsetD2D32Async(dst + 4 * w, ps, v, 1, size / ps, q->stream);
            if (r != CUDA_SUCCESS)
                return kiln__cu_fail("cuMemsetD2D32Async", r);
        }
        return KILN_OK;
    }
    /* pinned source: a pageable one could make the copy wait for the stream */
    size_t first = ps < size ? ps : size;
    kiln_status st =
        kiln__cu_stage_to_device(q, dst, pattern, ps, first, "cuMemcpyHtoDAsync (fill pattern)");
    if (st != KILN_OK)
        return st;
    size_t done = first;
    while (done < size) {
        size_t n = done < size - done ? done : size - done;
        r = kiln__cu.cuMemcpyDtoDAsync(dst + done, dst, n, q->stream);
        if (r != CUDA_SUCCESS)
            return kiln__cu_fail("cuMemcpyDtoDAsync (fill)", r);
        done += n;
    }
    return KILN_OK;
}

typedef struct fill_args {
    kiln__cu_buffer *b;
    const void *pattern;
    size_t pattern_size, offset, size;
} fill_args;

static kiln_status fill_run(kiln__cu_queue *q, void *p) {
    const fill_args *a = p;
    return kiln__cu_fill_cmd(q, a->b, a->pattern, a->pattern_size, a->offset, a->size);
}

static void *fill_hold(const void *p) {
    const fill_args *a = p;
    fill_args *h = kiln__malloc(sizeof *h + a->pattern_size);
    if (!h)
        return NULL;
    *h = *a;
    memcpy(h + 1, a->pattern, a->pattern_size);
    h->pattern = h + 1;
    kiln__cu_buffer_ref(a->b);
    return h;
}

static void fill_drop(void *p) {
    fill_args *h = p;
    kiln__cu_buffer_unref(h->b);
    free(h);
}

static const kiln__cu_optype fill_type = { fill_run, fill_hold, fill_drop };

kiln_status kiln__cu_buffer_fill(void *queue, void *buffer, const void *pattern,
                                 size_t pattern_size, size_t offset, size_t size, size_t num_wait,
                                 void *const *wait, void **out_event) {
    if (pattern_size == 0 || size % pattern_size != 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "fill size %zu is not a multiple of the "
                               "pattern size %zu",
                               size, pattern_size);
    fill_args a = { buffer, pattern, pattern_size, offset, size };
    return kiln__cu_enqueue(queue, num_wait, wait, out_event != NULL, 0, 0, &fill_type, &a,
                            out_event);
}

/* Records a mapping on its buffer (a new one, or one given back to the
 * caller for a retry after a failed unmap). */
static void kiln__cu_map_push(kiln__cu_buffer *b, kiln__cu_mapping *m) {
    pthread_mutex_lock(&b->lock);
    m->next = b->maps;
    b->maps = m;
    pthread_mutex_unlock(&b->lock);
}

/* Map: a pinned buffer is handed out in place (after the queue drained);
 * otherwise a pinned staging block from the pool, read from the device
 * unless the map is WRITE_INVALIDATE only. */
kiln_status kiln__cu_buffer_map(void *queue, void *buffer, unsigned map_flags, size_t offset,
                                size_t size, void **host_ptr) {
    kiln__cu_buffer *b = buffer;
    kiln__cu_queue *q = queue;
    *host_ptr = NULL;
    kiln__cu_mapping *m = kiln__calloc(1, sizeof *m);
    if (!m)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    m->offset = offset;
    m->size = size;
    m->flags = map_flags;
    kiln_status st;
    if (b->pinned) {
        m->direct = 1;
        m->host = (char *)b->host + offset;
        st = kiln__cu_queue_finish(q);
    } else {
        kiln__cu_reap();
        st = kiln__cu_ctx_use(q->dev->ctx);
        if (st == KILN_OK)
            st = kiln__cu_stage_get(q->dev, size ? size : 1, &m->stage);
        if (st == KILN_OK)
            m->host = m->stage->host;
        int need_read = (map_flags & (KILN_MAP_READ | KILN_MAP_WRITE)) != 0;
        if (st == KILN_OK && need_read)
            st = kiln__cu_buffer_read(q, b, offset, size, m->host, 1, 0, NULL, NULL);
        else if (st == KILN_OK)
            st = kiln__cu_queue_finish(q); /* the map still orders after prior work */
        if (st != KILN_OK)
            kiln__cu_stage_put(m->stage); /* the blocking read is over */
    }
    if (st != KILN_OK) {
        free(m);
        return st;
    }
    kiln__cu_map_push(b, m);
    *host_ptr = m->host;
    return KILN_OK;
}

/* Unmap: a written staging copy goes back to the device with an async copy
 * (pinned source), and the block returns to the pool from the stream; the
 * call does not block, so a wait list holding an unset user event is fine. */
typedef struct unmap_args {
    kiln__cu_buffer *b;
    kiln__cu_mapping *m;
    int *taken; /* set when a held command took m over */
} unmap_args;

static kiln_status unmap_run(kiln__cu_queue *q, void *p) {
    const unmap_args *a = p;
    kiln__cu_mapping *m = a->m;
    kiln__cu_hostjob *j = kiln__cu_hostjob_new(0);
    if (!j)
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    CUresult r = kiln__cu.cuMemcpyHtoDAsync(a->b->ptr + m->offset, m->host, m->size, q->stream);
    if (r != CUDA_SUCCESS) {
        free(j);
        return kiln__cu_fail("cuMemcpyHtoDAsync (unmap)", r);
    }
    j->stage = m->stage;
    m->stage = NULL; /* the stream owns it now */
    /* on failure the copy may still read the block: it is left out of the
     * pool, never reused */
    return kiln__cu_hostjob_launch(q->stream, j);
}

static void *unmap_hold(const void *p) {
    const unmap_args *a = p;
    unmap_args *h = kiln__malloc(sizeof *h);
    if (!h)
        return NULL;
    *h = *a;
    *a->taken = 1;
    h->taken = NULL;
    kiln__cu_buffer_ref(a->b);
    return h;
}

static void unmap_drop(void *p) {
    unmap_args *h = p;
    if (h->m->stage) /* never ran (its wait list failed): no copy reads it */
        kiln__cu_stage_put(h->m->stage);
    free(h->m);
    kiln__cu_buffer_unref(h->b);
    free(h);
}

static const kiln__cu_optype unmap_type = { unmap_run, unmap_hold, unmap_drop };

kiln_status kiln__cu_buffer_unmap(void *queue, void *buffer, void *host_ptr, size_t num_wait,
                                  void *const *wait, void **out_event) {
    kiln__cu_buffer *b = buffer;
    pthread_mutex_lock(&b->lock);
    kiln__cu_mapping **pp = &b->maps;
    while (*pp && (*pp)->host != host_ptr)
        pp = &(*pp)->next;
    kiln__cu_mapping *m = *pp;
    if (m)
        *pp = m->next;
    pthread_mutex_unlock(&b->lock);
    if (!m)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%p is not a mapping of this buffer",
                               host_ptr);
    int write =
        !m->direct && m->size && (m->flags & (KILN_MAP_WRITE | KILN_MAP_WRITE_INVALIDATE)) != 0;
    kiln_status st;
    if (write) {
        int taken = 0;
        unmap_args a = { b, m, &taken };
        st = kiln__cu_enqueue(queue, num_wait, wait, out_event != NULL, 0, 0, &unmap_type, &a,
                              out_event);
        if (taken)
            return st; /* held: the command owns the mapping now */
        if (st != KILN_OK && m->stage) {
            /* nothing was enqueued: keep the mapping so that the caller
             * may retry */
            kiln__cu_map_push(b, m);
            return st;
        }
        if (m->stage) /* did not run (its wait list failed) */
            kiln__cu_stage_put(m->stage);
    } else {
        st = kiln__cu_queue_marker(queue, 0, num_wait, wait, out_event);
        if (st != KILN_OK) {
            kiln__cu_map_push(b, m);
            return st;
        }
        if (!m->direct)
            kiln__cu_stage_put(m->stage); /* no copy uses it */
    }
    free(m);
    return st;
}

/* Peer copies (backend.h's buffer_copy_peer): cuMemcpyPeerAsync between
 * the buffers' contexts, looked up at run time; peer access is enabled
 * once for each pair of devices that can reach each other (without it the
 * driver stages the copy itself). Compiled, not run in CI (one GPU at
 * most there; the two-GPU issue measures it). */
typedef CUresult (*fn_peer)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);

typedef struct peer_args {
    kiln__cu_buffer *s, *d;
    size_t src_offset, dst_offset, size;
    fn_peer copy;
} peer_args;

static kiln_status peer_run(kiln__cu_queue *q, void *p) {
    const peer_args *a = p;
    CUresult r = a->copy(a->d->ptr + a->dst_offset, a->d->ctx->dev[0].ctx,
                         a->s->ptr + a->src_offset, a->s->ctx->dev[0].ctx, a->size, q->stream);
    return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuMemcpyPeerAsync", r);
}

static void *peer_hold(const void *p) {
    peer_args *h = kiln__malloc(sizeof *h);
    if (!h)
        return NULL;
    *h = *(const peer_args *)p;
    kiln__cu_buffer_ref(h->s);
    kiln__cu_buffer_ref(h->d);
    return h;
}

static void peer_drop(void *p) {
    peer_args *h = p;
    kiln__cu_buffer_unref(h->s);
    kiln__cu_buffer_unref(h->d);
    free(h);
}

static const kiln__cu_optype peer_type = { peer_run, peer_hold, peer_drop };

static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char peer_tried[64][64]; /* ordinals: 1 once enabling was tried */

kiln_status kiln__cu_buffer_copy_peer(void *queue, void *src, size_t src_offset, void *dst,
                                      size_t dst_offset, size_t size, size_t num_wait,
                                      void *const *wait, void **out_event) {
    kiln__cu_queue *q = queue;
    kiln__cu_buffer *s = src, *d = dst;
    fn_peer copy = NULL;
    void *sym = kiln__cu_symbol("cuMemcpyPeerAsync");
    memcpy(&copy, &sym, sizeof sym);
    if (!copy)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "the driver lacks cuMemcpyPeerAsync");
    if (s->pinned || d->pinned)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "page-locked host buffers: staged through the host instead");
    int from = s->ctx->dev[0].ordinal, to = d->ctx->dev[0].ordinal;
    if (from != to && from >= 0 && to >= 0 && from < 64 && to < 64) {
        pthread_mutex_lock(&peer_lock);
        if (!peer_tried[to][from]) {
            peer_tried[to][from] = 1;
            int can = 0;
            if (kiln__cu.cuDeviceCanAccessPeer(&can, d->ctx->dev[0].dev, s->ctx->dev[0].dev) ==
                    CUDA_SUCCESS &&
                can && kiln__cu_ctx_use(d->ctx->dev[0].ctx) == KILN_OK) {
                CUresult r = kiln__cu.cuCtxEnablePeerAccess(s->ctx->dev[0].ctx, 0);
                (void)r; /* ALREADY_ENABLED is fine; failure: the driver stages */
            }
        }
        pthread_mutex_unlock(&peer_lock);
    }
    peer_args a = { s, d, src_offset, dst_offset, size, copy };
    return kiln__cu_enqueue(q, num_wait, wait, out_event != NULL, 0, 0, &peer_type, &a, out_event);
}
