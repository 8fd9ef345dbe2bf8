/* CUDA buffers: device memory (cuMemAlloc) or pinned host memory
 * (cuMemAllocHost, used by kernels through its device pointer); transfers on
 * the queue's stream; map/unmap emulated with a pinned staging copy. */
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "core/error.h"

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
    kiln__cu_buffer *b = calloc(1, sizeof *b);
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
            st = kiln__cu_fail("cuMemHostAlloc", r);
            return st == KILN_ERROR_OUT_OF_DEVICE_MEMORY
                       ? kiln__error_prefix(KILN_ERROR_OUT_OF_HOST_MEMORY,
                                            "pinned host memory")
                       : st;
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
            r = kiln__cu.cuMemcpyHtoD(b->ptr, host_data, size);
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
    kiln__cu_buffer *b = calloc(1, sizeof *b);
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

static void kiln__cu_buffer_unref(kiln__cu_buffer *b)
{
    while (b && atomic_fetch_sub(&b->refs, 1) == 1) {
        kiln__cu_buffer *parent = b->parent;
        kiln__cu_context *c = b->ctx;
        if (!parent) {
            /* Queued work may still use the memory: let every device of the
             * context finish first (cuMemFree would synchronise anyway).
             * Caveat: if a stream of the context waits for a user event
             * that is not set yet, this blocks until it is set. */
            for (size_t i = 0; i < c->n; i++)
                if (kiln__cu_ctx_use(c->dev[i].ctx) == KILN_OK)
                    (void)kiln__cu.cuCtxSynchronize();
            if (kiln__cu_ctx_use(c->dev[0].ctx) == KILN_OK) {
                if (b->pinned)
                    kiln__cu.cuMemFreeHost(b->host);
                else
                    kiln__cu.cuMemFree(b->ptr);
            }
        }
        while (b->maps) {
            kiln__cu_mapping *m = b->maps;
            b->maps = m->next;
            if (!m->direct && kiln__cu_ctx_use(c->dev[0].ctx) == KILN_OK)
                kiln__cu.cuMemFreeHost(m->host);
            free(m);
        }
        pthread_mutex_destroy(&b->lock);
        free(b);
        kiln__cu_context_unref(c);
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

kiln_status kiln__cu_buffer_write(void *queue, void *buffer, size_t offset,
                             size_t size, const void *src, int blocking,
                             size_t num_wait, void *const *wait,
                             void **out_event)
{
    kiln__cu_buffer *b = buffer;
    kiln__cu_cmd c;
    kiln_status st = kiln__cu_cmd_begin(&c, queue, num_wait, wait,
                                   out_event != NULL || blocking);
    if (st != KILN_OK)
        return st;
    if (size) {
        CUresult r = kiln__cu.cuMemcpyHtoDAsync(b->ptr + offset, src, size,
                                           c.q->stream);
        if (r != CUDA_SUCCESS)
            st = kiln__cu_fail("cuMemcpyHtoDAsync", r);
    }
    return kiln__cu_cmd_end(&c, st, blocking, out_event);
}

kiln_status kiln__cu_buffer_read(void *queue, void *buffer, size_t offset,
                            size_t size, void *dst, int blocking,
                            size_t num_wait, void *const *wait,
                            void **out_event)
{
    kiln__cu_buffer *b = buffer;
    kiln__cu_cmd c;
    kiln_status st = kiln__cu_cmd_begin(&c, queue, num_wait, wait,
                                   out_event != NULL || blocking);
    if (st != KILN_OK)
        return st;
    if (size) {
        CUresult r = kiln__cu.cuMemcpyDtoHAsync(dst, b->ptr + offset, size,
                                           c.q->stream);
        if (r != CUDA_SUCCESS)
            st = kiln__cu_fail("cuMemcpyDtoHAsync", r);
    }
    return kiln__cu_cmd_end(&c, st, blocking, out_event);
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
    if (size) {
        CUresult r = kiln__cu.cuMemcpyDtoDAsync(d->ptr + dst_offset,
                                           s->ptr + src_offset, size,
                                           c.q->stream);
        if (r != CUDA_SUCCESS)
            st = kiln__cu_fail("cuMemcpyDtoDAsync", r);
    }
    return kiln__cu_cmd_end(&c, st, 0, out_event);
}

static void CUDA_CB kiln__cu_free_cb(CUstream s, CUresult status, void *p)
{
    free(p); /* no CUDA call: allowed in a stream callback */
}

/* Fill: cuMemsetD8/D16/D32 for 1-, 2- and 4-byte patterns (when the address
 * is aligned for them); otherwise the pattern is written once and doubled
 * with device-to-device copies (log2(size/pattern) copies, no kernel and so
 * no NVRTC needed). */
static kiln_status kiln__cu_fill_cmd(kiln__cu_queue *q, kiln__cu_buffer *b,
                                const void *pattern, size_t ps, size_t offset,
                                size_t size)
{
    CUdeviceptr dst = b->ptr + offset;
    CUresult r;
    if (size == 0)
        return KILN_OK;
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
    void *copy = malloc(ps);
    if (!copy)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
    memcpy(copy, pattern, ps);
    size_t first = ps < size ? ps : size;
    r = kiln__cu.cuMemcpyHtoDAsync(dst, copy, first, q->stream);
    if (r != CUDA_SUCCESS) {
        free(copy);
        return kiln__cu_fail("cuMemcpyHtoDAsync (fill pattern)", r);
    }
    /* the copy must outlive the transfer: free it from the stream */
    r = kiln__cu.cuStreamAddCallback(q->stream, kiln__cu_free_cb, copy, 0);
    if (r != CUDA_SUCCESS) {
        /* cannot know when the DMA is done: wait for it */
        (void)kiln__cu.cuStreamSynchronize(q->stream);
        free(copy);
    }
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

/* Map: a pinned buffer is handed out in place (after the queue drained);
 * otherwise a pinned staging copy, read from the device unless the map is
 * WRITE_INVALIDATE only. */
kiln_status kiln__cu_buffer_map(void *queue, void *buffer, unsigned map_flags,
                           size_t offset, size_t size, void **host_ptr)
{
    kiln__cu_buffer *b = buffer;
    kiln__cu_queue *q = queue;
    *host_ptr = NULL;
    kiln__cu_mapping *m = calloc(1, sizeof *m);
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
        st = kiln__cu_ctx_use(b->ctx->dev[0].ctx);
        if (st == KILN_OK) {
            CUresult r = kiln__cu.cuMemAllocHost(&m->host, size ? size : 1);
            if (r != CUDA_SUCCESS)
                st = kiln__cu_fail("cuMemAllocHost (map staging)", r);
        }
        int need_read = (map_flags & (KILN_MAP_READ | KILN_MAP_WRITE)) != 0;
        if (st == KILN_OK && need_read)
            st = kiln__cu_buffer_read(q, b, offset, size, m->host, 1, 0, NULL, NULL);
        else if (st == KILN_OK)
            st = kiln__cu_queue_finish(q); /* the map still orders after prior work */
        if (st != KILN_OK && m->host) {
            kiln__cu_ctx_use(b->ctx->dev[0].ctx);
            kiln__cu.cuMemFreeHost(m->host);
        }
    }
    if (st != KILN_OK) {
        free(m);
        return st;
    }
    pthread_mutex_lock(&b->lock);
    m->next = b->maps;
    b->maps = m;
    pthread_mutex_unlock(&b->lock);
    *host_ptr = m->host;
    return KILN_OK;
}

/* Unmap writes a staging copy back and, on CUDA, blocks until that copy is
 * done so that the staging memory can be freed at once. */
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
    int write = !m->direct &&
                (m->flags & (KILN_MAP_WRITE | KILN_MAP_WRITE_INVALIDATE)) != 0;
    kiln_status st;
    if (write)
        st = kiln__cu_buffer_write(queue, b, m->offset, m->size, m->host, 1,
                              num_wait, wait, out_event);
    else
        st = kiln__cu_queue_marker(queue, 0, num_wait, wait, out_event);
    if (st != KILN_OK) {
        /* keep the mapping so that the caller may retry */
        pthread_mutex_lock(&b->lock);
        m->next = b->maps;
        b->maps = m;
        pthread_mutex_unlock(&b->lock);
        return st;
    }
    if (!m->direct && kiln__cu_ctx_use(b->ctx->dev[0].ctx) == KILN_OK)
        kiln__cu.cuMemFreeHost(m->host);
    free(m);
    return KILN_OK;
}
