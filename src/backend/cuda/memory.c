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

#include "backend/cuda/cuda_internal.h"
#include "base/error.h"
#include "base/fault.h"

kiln_status kiln__cu_buffer_create(void *context, size_t size, unsigned flags,
                              const void *host_data, void **buffer)
{
    *buffer = NULL;
    kiln__cu_context *c = context;
    if (size == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "a buffer needs a size > 0");
    kiln__cu_reap();
    kiln_status st = kiln__cu_ctx_use(c->dev[0].ctx);
    if (st != KILN_OK)
        return st;
    kiln__cu_buffer *b = kiln__calloc(1, sizeof *b);
    if (!b)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    b->size = size;
    if (flags & KILN_BUFFER_HOST_PINNED) {
        /* portable + mapped: every context (device) can use it */
        CUresult r = kiln__cu.cuMemHostAlloc(&b->host, size,
                                        CU_MEMHOSTALLOC_PORTABLE |
                                            CU_MEMHOSTALLOC_DEVICEMAP);
        if (r != CUDA_SUCCESS) {
            free(b);
            return kiln__cu_pinned_status(kiln__cu_fail("cuMemHostAlloc", r),
                                          "host memory");
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
        CUresult r = kiln__cu.cuMemAlloc(&b->ptr, size);
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
                kiln__cu.cuMemFree(b->ptr);
                free(b);
                return kiln__cu_fail("cuMemcpyHtoD", r);
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

kiln_status kiln__cu_buffer_create_sub(void *parent, size_t offset, size_t size,
                                  void **buffer)
{
    *buffer = NULL;
    kiln__cu_buffer *p = parent;
    if (offset > p->size || size > p->size - offset || size == 0)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "sub-buffer [%zu, +%zu) outside a buffer of "
                               "%zu bytes", offset, size, p->size);
    kiln__cu_buffer *b = kiln__calloc(1, sizeof *b);
    if (!b)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    atomic_init(&b->refs, 1);
    atomic_fetch_add(&p->refs, 1);
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
static void kiln__cu_buffer_free_memory(kiln__cu_buffer *b)
{
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
static void kiln__cu_buffer_free_struct(kiln__cu_buffer *b)
{
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
static void kiln__cu_buffer_free_later(void *arg)
{
    kiln__cu_buffer_free_memory(arg);
    kiln__cu_buffer_free_struct(arg);
}

static void kiln__cu_buffer_unref(kiln__cu_buffer *b)
{
    while (b && atomic_fetch_sub(&b->refs, 1) == 1) {
        kiln__cu_buffer *parent = b->parent;
        if (!parent && !b->borrowed) {
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

void kiln__cu_buffer_release(void *buffer)
{
    if (!buffer)
        return;
    kiln__cu_reap();
    kiln__cu_buffer_unref(buffer);
}

/* Host-side copy ordered in the stream (HOST_PINNED buffers). With `own`,
 * src is copied first, so the caller's memory may change after return. */
static kiln_status kiln__cu_host_copy(kiln__cu_queue *q, void *dst,
                                      const void *src, size_t size, int own)
{
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
static kiln_status kiln__cu_stage_begin(kiln__cu_queue *q, size_t size,
                                        kiln__cu_stage **s,
                                        kiln__cu_hostjob **j)
{
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
static kiln_status kiln__cu_stage_end(kiln__cu_queue *q, kiln__cu_stage *s,
                                      kiln__cu_hostjob *j, CUresult r,
                                      const char *what)
{
    if (r != CUDA_SUCCESS) {
        free(j);
        kiln__cu_stage_put(s);
        return kiln__cu_fail(what, r);
    }
    return kiln__cu_hostjob_launch(q->stream, j);
}

/* Copies size bytes of src into a staging block now, then its first
 * `copy` bytes to dst in the stream; the block goes back after the copy. */
static kiln_status kiln__cu_stage_to_device(kiln__cu_queue *q, CUdeviceptr dst,
                                            const void *src, size_t size,
                                            size_t copy, const char *what)
{
    kiln__cu_stage *s = NULL;
    kiln__cu_hostjob *j = NULL;
    kiln_status st = kiln__cu_stage_begin(q, size, &s, &j);
    if (st != KILN_OK)
        return st;
    memcpy(s->host, src, size);
    CUresult r = kiln__cu.cuMemcpyHtoDAsync(dst, s->host, copy, q->stream);
    return kiln__cu_stage_end(q, s, j, r, what);
}

static kiln_status kiln__cu_write_cmd(kiln__cu_queue *q, kiln__cu_buffer *b,
                                      size_t offset, size_t size,
                                      const void *src, int blocking)
{
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

static kiln_status kiln__cu_read_cmd(kiln__cu_queue *q, kiln__cu_buffer *b,
                                     size_t offset, size_t size, void *dst,
                                     int blocking)
{
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
static kiln_status kiln__cu_transfer(void *queue, kiln__cu_buffer *b, int write,
                                     size_t offset, size_t size, const void *src,
                                     void *dst, int blocking, size_t num_wait,
                                     void *const *wait, void **out_event)
{
    kiln__cu_cmd c;
    kiln_status st = kiln__cu_cmd_begin(&c, queue, num_wait, wait,
                                   out_event != NULL || blocking);
    if (st != KILN_OK)
        return st;
    if (size && write)
        st = kiln__cu_write_cmd(c.q, b, offset, size, src, blocking);
    else if (size)
        st = kiln__cu_read_cmd(c.q, b, offset, size, dst, blocking);
    return kiln__cu_cmd_end(&c, st, blocking, out_event);
}

kiln_status kiln__cu_buffer_write(void *queue, void *buffer, size_t offset,
                             size_t size, const void *src, int blocking,
                             size_t num_wait, void *const *wait,
                             void **out_event)
{
    return kiln__cu_transfer(queue, buffer, 1, offset, size, src, NULL,
                             blocking, num_wait, wait, out_event);
}

kiln_status kiln__cu_buffer_read(void *queue, void *buffer, size_t offset,
                            size_t size, void *dst, int blocking,
                            size_t num_wait, void *const *wait,
                            void **out_event)
{
    return kiln__cu_transfer(queue, buffer, 0, offset, size, NULL, dst,
                             blocking, num_wait, wait, out_event);
}

kiln_status kiln__cu_buffer_copy(void *queue, void *src, size_t src_offset,
                            void *dst, size_t dst_offset, size_t size,
                            size_t num_wait, void *const *wait,
                            void **out_event)
{
    kiln__cu_buffer *s = src, *d = dst;
    kiln__cu_cmd c;
    kiln_status st = kiln__cu_cmd_begin(&c, queue, num_wait, wait, out_event != NULL);
    if (st != KILN_OK)
        return st;
    if (size && s->pinned && d->pinned) {
        /* host to host: CUDA would copy synchronously */
        st = kiln__cu_host_copy(c.q, (char *)d->host + dst_offset,
                                (char *)s->host + src_offset, size, 0);
    } else if (size) {
        CUresult r = kiln__cu.cuMemcpyDtoDAsync(d->ptr + dst_offset,
                                           s->ptr + src_offset, size,
                                           c.q->stream);
        if (r != CUDA_SUCCESS)
            st = kiln__cu_fail("cuMemcpyDtoDAsync", r);
    }
    return kiln__cu_cmd_end(&c, st, 0, out_event);
}

/* Fill: on a HOST_PINNED buffer a host function writes the pattern. On
 * device memory cuMemsetD8/D16/D32 for 1-, 2- and 4-byte patterns (when the
 * address is aligned for them); otherwise the pattern is copied once from a
 * pinned staging block and doubled with device-to-device copies
 * (log2(size/pattern) copies, no kernel and so no NVRTC needed). */
static kiln_status kiln__cu_fill_cmd(kiln__cu_queue *q, kiln__cu_buffer *b,
                                const void *pattern, size_t ps, size_t offset,
                                size_t size)
{
    CUdeviceptr dst = b->ptr + offset;
    CUresult r;
    if (size == 0)
        return KILN_OK;
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
        r = kiln__cu.cuMemsetD8Async(dst, *(const unsigned char *)pattern, size,
                                q->stream);
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
    /* pinned source: a pageable one could make the copy wait for the stream */
    size_t first = ps < size ? ps : size;
    kiln_status st = kiln__cu_stage_to_device(q, dst, pattern, ps, first,
                                              "cuMemcpyHtoDAsync (fill pattern)");
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

kiln_status kiln__cu_buffer_fill(void *queue, void *buffer, const void *pattern,
                            size_t pattern_size, size_t offset, size_t size,
                            size_t num_wait, void *const *wait,
                            void **out_event)
{
    if (pattern_size == 0 || size % pattern_size != 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "fill size %zu is not a multiple of the "
                               "pattern size %zu", size, pattern_size);
    kiln__cu_cmd c;
    kiln_status st = kiln__cu_cmd_begin(&c, queue, num_wait, wait, out_event != NULL);
    if (st != KILN_OK)
        return st;
    st = kiln__cu_fill_cmd(c.q, buffer, pattern, pattern_size, offset, size);
    return kiln__cu_cmd_end(&c, st, 0, out_event);
}

/* Records a mapping on its buffer (a new one, or one given back to the
 * caller for a retry after a failed unmap). */
static void kiln__cu_map_push(kiln__cu_buffer *b, kiln__cu_mapping *m)
{
    pthread_mutex_lock(&b->lock);
    m->next = b->maps;
    b->maps = m;
    pthread_mutex_unlock(&b->lock);
}

/* Map: a pinned buffer is handed out in place (after the queue drained);
 * otherwise a pinned staging block from the pool, read from the device
 * unless the map is WRITE_INVALIDATE only. */
kiln_status kiln__cu_buffer_map(void *queue, void *buffer, unsigned map_flags,
                           size_t offset, size_t size, void **host_ptr)
{
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
kiln_status kiln__cu_buffer_unmap(void *queue, void *buffer, void *host_ptr,
                             size_t num_wait, void *const *wait,
                             void **out_event)
{
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
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%p is not a mapping of this buffer", host_ptr);
    int write = !m->direct && m->size &&
                (m->flags & (KILN_MAP_WRITE | KILN_MAP_WRITE_INVALIDATE)) != 0;
    kiln_status st;
    if (write) {
        kiln__cu_cmd c;
        st = kiln__cu_cmd_begin(&c, queue, num_wait, wait, out_event != NULL);
        if (st == KILN_OK) {
            kiln__cu_hostjob *j = kiln__cu_hostjob_new(0);
            if (!j) {
                st = KILN_ERROR_OUT_OF_HOST_MEMORY;
            } else {
                CUresult r = kiln__cu.cuMemcpyHtoDAsync(b->ptr + m->offset, m->host,
                                                   m->size, c.q->stream);
                if (r != CUDA_SUCCESS) {
                    free(j);
                    st = kiln__cu_fail("cuMemcpyHtoDAsync (unmap)", r);
                } else {
                    j->stage = m->stage;
                    m->stage = NULL; /* the stream owns it now */
                    /* on failure the copy may still read the block: it
                     * is left out of the pool, never reused */
                    st = kiln__cu_hostjob_launch(c.q->stream, j);
                }
            }
            st = kiln__cu_cmd_end(&c, st, 0, out_event);
        }
        if (st != KILN_OK && m->stage) {
            /* nothing was enqueued: keep the mapping so that the caller
             * may retry */
            kiln__cu_map_push(b, m);
            return st;
        }
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
