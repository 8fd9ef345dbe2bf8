/* CUDA buffers: device memory (cuMemAlloc) or pinned host memory
 * (cuMemAllocHost, used by kernels through its device pointer); transfers on
 * the queue's stream; map/unmap emulated with a pinned staging copy. */
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "core/error.h"

kiln_status kcu_buffer_create(void *context, size_t size, unsigned flags,
                              const void *host_data, void **buffer)
{
    *buffer = NULL;
    kcu_context *c = context;
    if (size == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "a buffer needs a size > 0");
    kcu_reap();
    kiln_status st = kcu_ctx_use(c->dev[0].ctx);
    if (st != KILN_OK)
        return st;
    kcu_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    b->size = size;
    if (flags & KILN_BUFFER_HOST_PINNED) {
        /* portable + mapped: every context (device) can use it */
        CUresult r = kcu.cuMemHostAlloc(&b->host, size,
                                        CU_MEMHOSTALLOC_PORTABLE |
                                            CU_MEMHOSTALLOC_DEVICEMAP);
        if (r != CUDA_SUCCESS) {
            free(b);
            st = kcu_fail("cuMemHostAlloc", r);
            return st == KILN_ERROR_OUT_OF_DEVICE_MEMORY
                       ? kiln__error_prefix(KILN_ERROR_OUT_OF_HOST_MEMORY,
                                            "pinned host memory")
                       : st;
        }
        r = kcu.cuMemHostGetDevicePointer(&b->ptr, b->host, 0);
        if (r != CUDA_SUCCESS) {
            kcu.cuMemFreeHost(b->host);
            free(b);
            return kcu_fail("cuMemHostGetDevicePointer", r);
        }
        b->pinned = 1;
        if (host_data)
            memcpy(b->host, host_data, size);
    } else {
        CUresult r = kcu.cuMemAlloc(&b->ptr, size);
        if (r != CUDA_SUCCESS) {
            free(b);
            return kcu_fail("cuMemAlloc", r);
        }
        if (host_data) {
            r = kcu.cuMemcpyHtoD(b->ptr, host_data, size);
            if (r != CUDA_SUCCESS) {
                kcu.cuMemFree(b->ptr);
                free(b);
                return kcu_fail("cuMemcpyHtoD", r);
            }
        }
    }
    atomic_init(&b->refs, 1);
    b->ctx = c;
    kcu_context_ref(c);
    pthread_mutex_init(&b->lock, NULL);
    *buffer = b;
    return KILN_OK;
}

kiln_status kcu_buffer_create_sub(void *parent, size_t offset, size_t size,
                                  void **buffer)
{
    *buffer = NULL;
    kcu_buffer *p = parent;
    if (offset > p->size || size > p->size - offset || size == 0)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "sub-buffer [%zu, +%zu) outside a buffer of "
                               "%zu bytes", offset, size, p->size);
    kcu_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    atomic_init(&b->refs, 1);
    atomic_fetch_add(&p->refs, 1);
    b->parent = p;
    b->ctx = p->ctx;
    kcu_context_ref(b->ctx);
    b->ptr = p->ptr + offset;
    b->host = p->host ? (char *)p->host + offset : NULL;
    b->size = size;
    b->pinned = p->pinned;
    pthread_mutex_init(&b->lock, NULL);
    *buffer = b;
    return KILN_OK;
}

static void kcu_buffer_unref(kcu_buffer *b)
{
    while (b && atomic_fetch_sub(&b->refs, 1) == 1) {
        kcu_buffer *parent = b->parent;
        kcu_context *c = b->ctx;
        if (!parent) {
            /* Queued work may still use the memory: let every device of the
             * context finish first (cuMemFree would synchronise anyway). */
            for (size_t i = 0; i < c->n; i++)
                if (kcu_ctx_use(c->dev[i].ctx) == KILN_OK)
                    (void)kcu.cuCtxSynchronize();
            if (kcu_ctx_use(c->dev[0].ctx) == KILN_OK) {
                if (b->pinned)
                    kcu.cuMemFreeHost(b->host);
                else
                    kcu.cuMemFree(b->ptr);
            }
        }
        while (b->maps) {
            kcu_mapping *m = b->maps;
            b->maps = m->next;
            if (!m->direct && kcu_ctx_use(c->dev[0].ctx) == KILN_OK)
                kcu.cuMemFreeHost(m->host);
            free(m);
        }
        pthread_mutex_destroy(&b->lock);
        free(b);
        kcu_context_unref(c);
        b = parent;
    }
}

void kcu_buffer_release(void *buffer)
{
    if (!buffer)
        return;
    kcu_reap();
    kcu_buffer_unref(buffer);
}

kiln_status kcu_buffer_write(void *queue, void *buffer, size_t offset,
                             size_t size, const void *src, int blocking,
                             size_t num_wait, void *const *wait,
                             void **out_event)
{
    kcu_buffer *b = buffer;
    kcu_cmd c;
    kiln_status st = kcu_cmd_begin(&c, queue, num_wait, wait,
                                   out_event != NULL || blocking);
    if (st != KILN_OK)
        return st;
    if (size) {
        CUresult r = kcu.cuMemcpyHtoDAsync(b->ptr + offset, src, size,
                                           c.q->stream);
        if (r != CUDA_SUCCESS)
            st = kcu_fail("cuMemcpyHtoDAsync", r);
    }
    return kcu_cmd_end(&c, st, blocking, out_event);
}

kiln_status kcu_buffer_read(void *queue, void *buffer, size_t offset,
                            size_t size, void *dst, int blocking,
                            size_t num_wait, void *const *wait,
                            void **out_event)
{
    kcu_buffer *b = buffer;
    kcu_cmd c;
    kiln_status st = kcu_cmd_begin(&c, queue, num_wait, wait,
                                   out_event != NULL || blocking);
    if (st != KILN_OK)
        return st;
    if (size) {
        CUresult r = kcu.cuMemcpyDtoHAsync(dst, b->ptr + offset, size,
                                           c.q->stream);
        if (r != CUDA_SUCCESS)
            st = kcu_fail("cuMemcpyDtoHAsync", r);
    }
    return kcu_cmd_end(&c, st, blocking, out_event);
}

kiln_status kcu_buffer_copy(void *queue, void *src, size_t src_offset,
                            void *dst, size_t dst_offset, size_t size,
                            size_t num_wait, void *const *wait,
                            void **out_event)
{
    kcu_buffer *s = src, *d = dst;
    kcu_cmd c;
    kiln_status st = kcu_cmd_begin(&c, queue, num_wait, wait, out_event != NULL);
    if (st != KILN_OK)
        return st;
    if (size) {
        CUresult r = kcu.cuMemcpyDtoDAsync(d->ptr + dst_offset,
                                           s->ptr + src_offset, size,
                                           c.q->stream);
        if (r != CUDA_SUCCESS)
            st = kcu_fail("cuMemcpyDtoDAsync", r);
    }
    return kcu_cmd_end(&c, st, 0, out_event);
}

static void CUDA_CB kcu_free_cb(CUstream s, CUresult status, void *p)
{
    free(p); /* no CUDA call: allowed in a stream callback */
}

/* Fill: cuMemsetD8/D16/D32 for 1-, 2- and 4-byte patterns (when the address
 * is aligned for them); otherwise the pattern is written once and doubled
 * with device-to-device copies (log2(size/pattern) copies, no kernel and so
 * no NVRTC needed). */
static kiln_status kcu_fill_cmd(kcu_queue *q, kcu_buffer *b,
                                const void *pattern, size_t ps, size_t offset,
                                size_t size)
{
    CUdeviceptr dst = b->ptr + offset;
    CUresult r;
    if (size == 0)
        return KILN_OK;
    if (ps == 1) {
        r = kcu.cuMemsetD8Async(dst, *(const unsigned char *)pattern, size,
                                q->stream);
        return r == CUDA_SUCCESS ? KILN_OK : kcu_fail("cuMemsetD8Async", r);
    }
    if (ps == 2 && dst % 2 == 0) {
        uint16_t v;
        memcpy(&v, pattern, 2);
        r = kcu.cuMemsetD16Async(dst, v, size / 2, q->stream);
        return r == CUDA_SUCCESS ? KILN_OK : kcu_fail("cuMemsetD16Async", r);
    }
    if (ps == 4 && dst % 4 == 0) {
        uint32_t v;
        memcpy(&v, pattern, 4);
        r = kcu.cuMemsetD32Async(dst, v, size / 4, q->stream);
        return r == CUDA_SUCCESS ? KILN_OK : kcu_fail("cuMemsetD32Async", r);
    }
    void *copy = malloc(ps);
    if (!copy)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
    memcpy(copy, pattern, ps);
    size_t first = ps < size ? ps : size;
    r = kcu.cuMemcpyHtoDAsync(dst, copy, first, q->stream);
    if (r != CUDA_SUCCESS) {
        free(copy);
        return kcu_fail("cuMemcpyHtoDAsync (fill pattern)", r);
    }
    /* the copy must outlive the transfer: free it from the stream */
    r = kcu.cuStreamAddCallback(q->stream, kcu_free_cb, copy, 0);
    if (r != CUDA_SUCCESS) {
        /* cannot know when the DMA is done: wait for it */
        (void)kcu.cuStreamSynchronize(q->stream);
        free(copy);
    }
    size_t done = first;
    while (done < size) {
        size_t n = done < size - done ? done : size - done;
        r = kcu.cuMemcpyDtoDAsync(dst + done, dst, n, q->stream);
        if (r != CUDA_SUCCESS)
            return kcu_fail("cuMemcpyDtoDAsync (fill)", r);
        done += n;
    }
    return KILN_OK;
}

kiln_status kcu_buffer_fill(void *queue, void *buffer, const void *pattern,
                            size_t pattern_size, size_t offset, size_t size,
                            size_t num_wait, void *const *wait,
                            void **out_event)
{
    if (pattern_size == 0 || size % pattern_size != 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "fill size %zu is not a multiple of the "
                               "pattern size %zu", size, pattern_size);
    kcu_cmd c;
    kiln_status st = kcu_cmd_begin(&c, queue, num_wait, wait, out_event != NULL);
    if (st != KILN_OK)
        return st;
    st = kcu_fill_cmd(c.q, buffer, pattern, pattern_size, offset, size);
    return kcu_cmd_end(&c, st, 0, out_event);
}

/* Map: a pinned buffer is handed out in place (after the queue drained);
 * otherwise a pinned staging copy, read from the device unless the map is
 * WRITE_INVALIDATE only. */
kiln_status kcu_buffer_map(void *queue, void *buffer, unsigned map_flags,
                           size_t offset, size_t size, void **host_ptr)
{
    kcu_buffer *b = buffer;
    kcu_queue *q = queue;
    *host_ptr = NULL;
    kcu_mapping *m = calloc(1, sizeof *m);
    if (!m)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    m->offset = offset;
    m->size = size;
    m->flags = map_flags;
    kiln_status st;
    if (b->pinned) {
        m->direct = 1;
        m->host = (char *)b->host + offset;
        st = kcu_queue_finish(q);
    } else {
        kcu_reap();
        st = kcu_ctx_use(b->ctx->dev[0].ctx);
        if (st == KILN_OK) {
            CUresult r = kcu.cuMemAllocHost(&m->host, size ? size : 1);
            if (r != CUDA_SUCCESS)
                st = kcu_fail("cuMemAllocHost (map staging)", r);
        }
        int need_read = (map_flags & (KILN_MAP_READ | KILN_MAP_WRITE)) != 0;
        if (st == KILN_OK && need_read)
            st = kcu_buffer_read(q, b, offset, size, m->host, 1, 0, NULL, NULL);
        else if (st == KILN_OK)
            st = kcu_queue_finish(q); /* the map still orders after prior work */
        if (st != KILN_OK && m->host) {
            kcu_ctx_use(b->ctx->dev[0].ctx);
            kcu.cuMemFreeHost(m->host);
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
kiln_status kcu_buffer_unmap(void *queue, void *buffer, void *host_ptr,
                             size_t num_wait, void *const *wait,
                             void **out_event)
{
    kcu_buffer *b = buffer;
    pthread_mutex_lock(&b->lock);
    kcu_mapping **pp = &b->maps;
    while (*pp && (*pp)->host != host_ptr)
        pp = &(*pp)->next;
    kcu_mapping *m = *pp;
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
        st = kcu_buffer_write(queue, b, m->offset, m->size, m->host, 1,
                              num_wait, wait, out_event);
    else
        st = kcu_queue_marker(queue, 0, num_wait, wait, out_event);
    if (st != KILN_OK) {
        /* keep the mapping so that the caller may retry */
        pthread_mutex_lock(&b->lock);
        m->next = b->maps;
        b->maps = m;
        pthread_mutex_unlock(&b->lock);
        return st;
    }
    if (!m->direct && kcu_ctx_use(b->ctx->dev[0].ctx) == KILN_OK)
        kcu.cuMemFreeHost(m->host);
    free(m);
    return KILN_OK;
}
