/* Buffers and transfers. Every range is checked here, before the backend
 * sees it: an overrun enqueues nothing. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fault.h"
#include "core/internal.h"

/* Refuses a size no device of the context can hold: past its largest
 * single allocation or its whole memory (drivers accept such a buffer
 * lazily and fail later, somewhere else), and for a pinned buffer past the
 * host's physical memory. The message names both numbers. A limit the
 * device does not report (0) is not checked. */
static kiln_status kiln__buffer_size_check(const kiln_context *context, size_t size,
                                           unsigned flags) {
    for (size_t i = 0; i < context->num_devices; i++) {
        const kiln_device_info *info = &context->devices[i]->b.info;
        int over_alloc = info->max_alloc_bytes && (uint64_t)size > info->max_alloc_bytes;
        if (over_alloc || (info->global_mem_bytes && (uint64_t)size > info->global_mem_bytes))
            return kiln__error_set(
                KILN_ERROR_OUT_OF_DEVICE_MEMORY, 0,
                over_alloc ? "kiln_buffer_create: %zu bytes exceed the largest allocation "
                             "device %s (%s) allows, %llu bytes"
                           : "kiln_buffer_create: %zu bytes exceed the global memory of "
                             "device %s (%s), %llu bytes",
                size, info->id, info->name,
                (unsigned long long)(over_alloc ? info->max_alloc_bytes : info->global_mem_bytes));
    }
    if (flags & KILN_BUFFER_HOST_PINNED) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        uint64_t host = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
        if (host && (uint64_t)size > host)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "kiln_buffer_create: a pinned buffer of %zu bytes exceeds the "
                                   "host's physical memory, %llu bytes",
                                   size, (unsigned long long)host);
    }
    return KILN_OK;
}

kiln_status kiln__buffer_alloc(kiln_context *context, size_t size, unsigned flags,
                               const void *host_data, void **handle) {
    for (int retried = 0;; retried = 1) {
        kiln_status st =
            kiln__fault_hit(KILN__FAULT_DEVICE_ALLOC)
                ? kiln__error_set(KILN_ERROR_OUT_OF_DEVICE_MEMORY, 0,
                                  "injected device allocation failure (test hook)")
                : context->backend->buffer_create(context->handle, size, flags, host_data, handle);
        if (st == KILN_OK || retried ||
            (st != KILN_ERROR_OUT_OF_DEVICE_MEMORY && st != KILN_ERROR_OUT_OF_HOST_MEMORY))
            return st;
        /* Out of memory: the pool's cached blocks may be what fills it. */
        if (kiln__pool_trim(context, 0) == 0)
            return st;
        kiln__lock_acquire(&context->pool.lock);
        context->pool.stats.oom_retries++;
        kiln__lock_release(&context->pool.lock);
    }
}

kiln_status kiln_buffer_create(kiln_context *context, size_t size, unsigned flags,
                               const void *host_data, kiln_buffer **buffer) {
    if (!buffer)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_buffer_create: buffer is NULL");
    *buffer = NULL;
    if (!context)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_buffer_create: context is NULL");
    if (size == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_buffer_create: size is 0 (a buffer holds at least one byte)");
    if (flags & ~(unsigned)(KILN_BUFFER_READ_ONLY | KILN_BUFFER_WRITE_ONLY |
                            KILN_BUFFER_HOST_PINNED | KILN_BUFFER_POOLED))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_buffer_create: unknown flags 0x%x", flags);
    if ((flags & KILN_BUFFER_READ_ONLY) && (flags & KILN_BUFFER_WRITE_ONLY))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_buffer_create: KILN_BUFFER_READ_ONLY and "
                               "KILN_BUFFER_WRITE_ONLY exclude each other");
    kiln_status too_big = kiln__buffer_size_check(context, size, flags);
    if (too_big != KILN_OK)
        return too_big;
    kiln_buffer *b = kiln__calloc(1, sizeof *b);
    if (!b)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_buffer_create: out of memory");
    /* Initial contents need a copy on a queue: such a buffer is a plain one. */
    int pooled = (flags & KILN_BUFFER_POOLED) && !host_data && kiln__pool_enabled(context);
    flags &= ~(unsigned)KILN_BUFFER_POOLED;
    kiln_status st = pooled ? kiln__pool_alloc(context, size, flags, b)
                            : kiln__buffer_alloc(context, size, flags, host_data, &b->handle);
    if (st != KILN_OK) {
        free(b);
        return kiln__error_prefix(st, "kiln_buffer_create(%zu bytes)", size);
    }
    kiln__buffer_init_root(b, context, size);
    *buffer = b;
    return KILN_OK;
}

void kiln__buffer_init_root(kiln_buffer *b, kiln_context *context, size_t size) {
    atomic_init(&b->refs, 1);
    b->backend = context->backend;
    b->context = context;
    kiln__context_retain(context);
    b->root = b;
    b->size = size;
}

kiln_status kiln_buffer_create_sub(kiln_buffer *parent, size_t offset, size_t size,
                                   kiln_buffer **buffer) {
    if (!buffer)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_buffer_create_sub: buffer is NULL");
    *buffer = NULL;
    if (!parent)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_buffer_create_sub: parent is NULL");
    if (size == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "kiln_buffer_create_sub: size is 0");
    if (offset > parent->size || size > parent->size - offset)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "kiln_buffer_create_sub: [%zu, %zu+%zu) lies outside the parent "
                               "of %zu bytes",
                               offset, offset, size, parent->size);
    kiln_buffer *b = kiln__calloc(1, sizeof *b);
    if (!b)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "kiln_buffer_create_sub: out of memory");
    /* Views of views are made on the root: OpenCL has no sub-sub-buffers. */
    size_t abs = parent->root_offset + offset;
    kiln_status st =
        parent->backend->buffer_create_sub(parent->root->handle, abs, size, &b->handle);
    if (st != KILN_OK) {
        free(b);
        return kiln__error_prefix(st, "kiln_buffer_create_sub(offset %zu, size %zu)", offset, size);
    }
    atomic_init(&b->refs, 1);
    b->backend = parent->backend;
    b->context = parent->context;
    kiln__context_retain(b->context);
    b->parent = parent;
    kiln__ref_take(&parent->refs);
    b->root = parent->root;
    b->root_offset = abs;
    b->size = size;
    assert(b->root == b->root->root && abs <= b->root->size && size <= b->root->size - abs &&
           "a sub-buffer lies inside its root");
    *buffer = b;
    return KILN_OK;
}

kiln_status kiln_buffer_retain(kiln_buffer *buffer) {
    return kiln__ref_retain(buffer ? &buffer->refs : NULL, "kiln_buffer_retain", "buffer");
}

/* The pointers kiln_buffer_map handed out and not yet unmapped, per
 * buffer: an unmap of any other pointer is refused here, before the driver
 * (which says only CL_INVALID_VALUE, or worse). One lock for all buffers:
 * maps are rare and short. */
struct kiln__mapped {
    struct kiln__mapped *next;
    void *ptr;
};
static pthread_mutex_t kiln__map_lock = PTHREAD_MUTEX_INITIALIZER;

static void kiln__mapped_push(kiln_buffer *buffer, struct kiln__mapped *m, void *ptr) {
    m->ptr = ptr;
    pthread_mutex_lock(&kiln__map_lock);
    m->next = buffer->mapped;
    buffer->mapped = m;
    pthread_mutex_unlock(&kiln__map_lock);
}

/* Takes ptr off buffer's list: the entry, or NULL if it was never mapped. */
static struct kiln__mapped *kiln__mapped_take(kiln_buffer *buffer, void *ptr) {
    pthread_mutex_lock(&kiln__map_lock);
    struct kiln__mapped **at = &buffer->mapped;
    while (*at && (*at)->ptr != ptr)
        at = &(*at)->next;
    struct kiln__mapped *m = *at;
    if (m)
        *at = m->next;
    pthread_mutex_unlock(&kiln__map_lock);
    return m;
}

void kiln_buffer_release(kiln_buffer *buffer) {
    while (kiln__ref_release(buffer ? &buffer->refs : NULL)) {
        kiln_buffer *parent = buffer->parent;
        /* A pooled block goes back to the pool (freed instead if left
         * mapped: the backend may hold state for the mapping). */
        assert((!buffer->block || buffer->root == buffer) &&
               "only a root buffer owns a pool block");
        if (buffer->block)
            kiln__pool_put(buffer->context, buffer->block, !buffer->mapped);
        while (buffer->mapped) { /* mapped and never unmapped */
            struct kiln__mapped *next = buffer->mapped->next;
            free(buffer->mapped);
            buffer->mapped = next;
        }
        /* The driver keeps the memory alive until queued work using it ends. */
        if (!buffer->block)
            buffer->backend->buffer_release(buffer->handle);
        kiln__context_unref(buffer->context);
        free(buffer);
        buffer = parent;
    }
}

size_t kiln_buffer_size(const kiln_buffer *buffer) {
    return buffer ? buffer->size : 0;
}
kiln_context *kiln_buffer_context(const kiln_buffer *buffer) {
    return buffer ? buffer->context : NULL;
}

/* Checks a queue, a buffer and a byte range, after clearing *event (an
 * enqueued command's; NULL for a blocking one). */
static kiln_status kiln__check_qbr(const char *fn, kiln_event **event, const kiln_queue *queue,
                                   const char *bname, const kiln_buffer *buffer, size_t offset,
                                   size_t size) {
    if (event)
        *event = NULL;
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue is NULL", fn);
    if (!buffer)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, bname);
    if (buffer->context != queue->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: %s belongs to another context than the queue", fn, bname);
    if (offset > buffer->size || size > buffer->size - offset)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: bytes [%zu, %zu+%zu) lie outside %s of %zu bytes", fn, offset,
                               offset, size, bname, buffer->size);
    return KILN_OK;
}

/* The blocking transfers differ only in direction: one body for both. */
static kiln_status kiln__transfer(const char *fn, int to_device, kiln_queue *queue,
                                  kiln_buffer *buffer, size_t offset, size_t size, void *host) {
    kiln_status st =
        kiln__check_qbr(fn, NULL, queue, to_device ? "dst" : "src", buffer, offset, size);
    if (st != KILN_OK)
        return st;
    if (kiln__queue_rec(queue))
        return kiln__graph_refuse(kiln__queue_rec(queue), fn,
                                  "it blocks (use the _async form, which records)");
    if (size == 0)
        return KILN_OK;
    if (!host)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn,
                               to_device ? "src" : "dst");
    kiln__enqueue e; /* no wait list: only for the timeline's event */
    if ((st = kiln__enqueue_begin(&e, fn, queue, 0, NULL, NULL)) != KILN_OK)
        return st;
    st = to_device ? queue->backend->buffer_write(queue->handle, buffer->handle, offset, size, host,
                                                  1, 0, NULL, kiln__enqueue_out(&e, NULL))
                   : queue->backend->buffer_read(queue->handle, buffer->handle, offset, size, host,
                                                 1, 0, NULL, kiln__enqueue_out(&e, NULL));
    return kiln__enqueue_end(&e, fn, st, queue, NULL);
}

kiln_status kiln_buffer_write(kiln_queue *queue, kiln_buffer *dst, size_t offset, size_t size,
                              const void *src) {
    return kiln__transfer("kiln_buffer_write", 1, queue, dst, offset, size, (void *)src);
}

kiln_status kiln_buffer_read(kiln_queue *queue, kiln_buffer *src, size_t offset, size_t size,
                             void *dst) {
    return kiln__transfer("kiln_buffer_read", 0, queue, src, offset, size, dst);
}

/* One enqueued buffer command: a write, read, copy (from src) or fill. */
typedef struct buf_cmd {
    enum { CMD_WRITE, CMD_READ, CMD_COPY, CMD_FILL } kind;
    kiln_buffer *buffer, *src;
    size_t offset, src_offset, size;
    void *host;
    const void *pattern;
    size_t pattern_size;
} buf_cmd;

static kiln_status buf_cmd_record(struct kiln_graph *rec, kiln_queue *queue, const void *arg,
                                  size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    const buf_cmd *c = arg;
    switch (c->kind) {
    case CMD_WRITE:
    case CMD_READ:
        return kiln__graph_add_transfer(rec, queue, c->kind == CMD_WRITE, c->buffer, c->offset,
                                        c->size, c->host, num_wait, wait, event);
    case CMD_COPY:
        return kiln__graph_add_copy(rec, queue, c->src, c->src_offset, c->buffer, c->offset,
                                    c->size, num_wait, wait, event);
    default:
        return kiln__graph_add_fill(rec, queue, c->buffer, c->pattern, c->pattern_size, c->offset,
                                    c->size, num_wait, wait, event);
    }
}

static kiln_status buf_cmd_backend(kiln_queue *queue, const void *arg, size_t num_wait,
                                   void *const *wait, void **out) {
    const buf_cmd *c = arg;
    const kiln__backend *b = queue->backend;
    void *h = c->buffer->handle;
    switch (c->kind) {
    case CMD_WRITE:
        return b->buffer_write(queue->handle, h, c->offset, c->size, c->host, 0, num_wait, wait,
                               out);
    case CMD_READ:
        return b->buffer_read(queue->handle, h, c->offset, c->size, c->host, 0, num_wait, wait,
                              out);
    case CMD_COPY:
        return b->buffer_copy(queue->handle, c->src->handle, c->src_offset, h, c->offset, c->size,
                              num_wait, wait, out);
    default:
        return b->buffer_fill(queue->handle, h, c->pattern, c->pattern_size, c->offset, c->size,
                              num_wait, wait, out);
    }
}

/* A checked command on buffer (cmd: the kind's other arguments): nothing
 * for size 0, else kiln__command's. */
static kiln_status buf_cmd_run(const char *fn, kiln_queue *queue, int kind, kiln_buffer *buffer,
                               size_t offset, size_t size, buf_cmd cmd, size_t num_wait,
                               kiln_event *const *wait, kiln_event **event) {
    cmd.kind = kind;
    cmd.buffer = buffer;
    cmd.offset = offset;
    cmd.size = size;
    if (size == 0)
        return kiln__nothing_done(queue, num_wait, wait, event);
    return kiln__command(fn, queue, buf_cmd_record, buf_cmd_backend, &cmd, num_wait, wait, event);
}

/* The non-blocking transfers differ only in direction: one body for both. */
static kiln_status kiln__transfer_async(const char *fn, int to_device, kiln_queue *queue,
                                        kiln_buffer *buffer, size_t offset, size_t size, void *host,
                                        size_t num_wait, kiln_event *const *wait,
                                        kiln_event **event) {
    const char *buffer_name = to_device ? "dst" : "src", *host_name = to_device ? "src" : "dst";
    kiln_status st = kiln__check_qbr(fn, event, queue, buffer_name, buffer, offset, size);
    if (st != KILN_OK)
        return st;
    if (!host && size)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, host_name);
    buf_cmd c = { .host = host };
    return buf_cmd_run(fn, queue, to_device ? CMD_WRITE : CMD_READ, buffer, offset, size, c,
                       num_wait, wait, event);
}

kiln_status kiln_buffer_write_async(kiln_queue *queue, kiln_buffer *dst, size_t offset, size_t size,
                                    const void *src, size_t num_wait, kiln_event *const *wait,
                                    kiln_event **event) {
    /* The backend only reads from src; the cast lets one helper serve both ways. */
    return kiln__transfer_async("kiln_buffer_write_async", 1, queue, dst, offset, size,
                                (void *)(uintptr_t)src, num_wait, wait, event);
}

kiln_status kiln_buffer_read_async(kiln_queue *queue, kiln_buffer *src, size_t offset, size_t size,
                                   void *dst, size_t num_wait, kiln_event *const *wait,
                                   kiln_event **event) {
    return kiln__transfer_async("kiln_buffer_read_async", 0, queue, src, offset, size, dst,
                                num_wait, wait, event);
}

kiln_status kiln_buffer_copy(kiln_queue *queue, kiln_buffer *src, size_t src_offset,
                             kiln_buffer *dst, size_t dst_offset, size_t size, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event) {
    static const char fn[] = "kiln_buffer_copy";
    kiln_status st = kiln__check_qbr(fn, event, queue, "src", src, src_offset, size);
    if (st == KILN_OK)
        st = kiln__check_qbr(fn, NULL, queue, "dst", dst, dst_offset, size);
    if (st != KILN_OK)
        return st;
    if (size && src->root == dst->root) {
        size_t s = src->root_offset + src_offset, d = dst->root_offset + dst_offset;
        if (s < d + size && d < s + size)
            return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                   "%s: the source and destination ranges overlap", fn);
    }
    buf_cmd c = { .src = src, .src_offset = src_offset };
    return buf_cmd_run(fn, queue, CMD_COPY, dst, dst_offset, size, c, num_wait, wait, event);
}

kiln_status kiln_buffer_fill(kiln_queue *queue, kiln_buffer *buffer, const void *pattern,
                             size_t pattern_size, size_t offset, size_t size, size_t num_wait,
                             kiln_event *const *wait, kiln_event **event) {
    static const char fn[] = "kiln_buffer_fill";
    kiln_status st = kiln__check_qbr(fn, event, queue, "buffer", buffer, offset, size);
    if (st != KILN_OK)
        return st;
    if (!pattern)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: pattern is NULL", fn);
    if (pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: pattern_size %zu is not 1, 2, 4, 8, 16, 32, 64 or 128", fn,
                               pattern_size);
    if (offset % pattern_size || size % pattern_size)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: offset %zu and size %zu must be multiples of pattern_size %zu",
                               fn, offset, size, pattern_size);
    buf_cmd c = { .pattern = pattern, .pattern_size = pattern_size };
    return buf_cmd_run(fn, queue, CMD_FILL, buffer, offset, size, c, num_wait, wait, event);
}

kiln_status kiln_buffer_map(kiln_queue *queue, kiln_buffer *buffer, unsigned map_flags,
                            size_t offset, size_t size, void **host_ptr) {
    static const char fn[] = "kiln_buffer_map";
    if (!host_ptr)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: host_ptr is NULL", fn);
    *host_ptr = NULL;
    kiln_status st = kiln__check_qbr(fn, NULL, queue, "buffer", buffer, offset, size);
    if (st != KILN_OK)
        return st;
    if (kiln__queue_rec(queue))
        return kiln__graph_refuse(kiln__queue_rec(queue), fn, "a map blocks");
    if (size == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: size is 0", fn);
    if (map_flags == 0 ||
        (map_flags & ~(unsigned)(KILN_MAP_READ | KILN_MAP_WRITE | KILN_MAP_WRITE_INVALIDATE)))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: map_flags 0x%x: use KILN_MAP_READ, KILN_MAP_WRITE or "
                               "KILN_MAP_WRITE_INVALIDATE",
                               fn, map_flags);
    if ((map_flags & KILN_MAP_WRITE_INVALIDATE) &&
        (map_flags & ~(unsigned)KILN_MAP_WRITE_INVALIDATE))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: KILN_MAP_WRITE_INVALIDATE cannot be combined with other flags",
                               fn);
    struct kiln__mapped *m = kiln__malloc(sizeof *m);
    if (!m)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    st = queue->backend->buffer_map(queue->handle, buffer->handle, map_flags, offset, size,
                                    host_ptr);
    if (st != KILN_OK) {
        free(m);
        *host_ptr = NULL;
        return kiln__error_prefix(st, "%s", fn);
    }
    kiln__mapped_push(buffer, m, *host_ptr);
    return KILN_OK;
}

kiln_status kiln_buffer_unmap(kiln_queue *queue, kiln_buffer *buffer, void *host_ptr,
                              size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    static const char fn[] = "kiln_buffer_unmap";
    kiln_status st = kiln__check_qbr(fn, event, queue, "buffer", buffer, 0, 0);
    if (st != KILN_OK)
        return st;
    if (!host_ptr)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: host_ptr is NULL", fn);
    if (kiln__queue_rec(queue))
        return kiln__graph_refuse(kiln__queue_rec(queue), fn,
                                  "a mapping is host memory of one moment, not of a replay");
    struct kiln__mapped *m = kiln__mapped_take(buffer, host_ptr);
    if (!m)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: host_ptr %p is not mapped: kiln_buffer_map on this buffer "
                               "did not return it, or it was unmapped already",
                               fn, host_ptr);
    kiln__enqueue e;
    if ((st = kiln__enqueue_begin(&e, fn, queue, num_wait, wait, event)) != KILN_OK) {
        kiln__mapped_push(buffer, m, host_ptr); /* still mapped */
        return st;
    }
    st = queue->backend->buffer_unmap(queue->handle, buffer->handle, host_ptr, num_wait, e.wait,
                                      kiln__enqueue_out(&e, event));
    if (st != KILN_OK)
        kiln__mapped_push(buffer, m, host_ptr);
    else
        free(m);
    return kiln__enqueue_end(&e, fn, st, queue, event);
}

kiln_status kiln_buffer_copy_peer(kiln_queue *queue, kiln_buffer *dst, size_t dst_offset,
                                  kiln_buffer *src, size_t src_offset, size_t size, size_t num_wait,
                                  kiln_event *const *wait, kiln_event **event) {
    static const char fn[] = "kiln_buffer_copy_peer";
    kiln_status st = kiln__check_qbr(fn, event, queue, "dst", dst, dst_offset, size);
    if (st != KILN_OK)
        return st;
    if (!src)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: src is NULL", fn);
    if (src_offset > src->size || size > src->size - src_offset)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: bytes [%zu, %zu+%zu) lie outside src of %zu bytes", fn,
                               src_offset, src_offset, size, src->size);
    if (src->context == queue->context)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: src belongs to the queue's context (use kiln_buffer_copy)", fn);
    if (src->backend != queue->backend || !queue->backend->buffer_copy_peer)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: no peer copy between these devices (%s to %s): stage it "
                               "through the host (kiln_buffer_copy_between does)",
                               fn, src->backend->name, queue->backend->name);
    if (kiln__queue_rec(queue))
        return kiln__graph_refuse(kiln__queue_rec(queue), fn,
                                  "a copy from another context is not recorded");
    struct kiln_graph *rec = NULL;
    if ((st = kiln__graph_of(fn, queue, num_wait, wait, &rec)) != KILN_OK)
        return st;
    if (rec)
        return kiln__graph_refuse(rec, fn, "a copy from another context is not recorded");
    if (size == 0)
        return kiln__nothing_done(queue, num_wait, wait, event);
    kiln__enqueue e;
    if ((st = kiln__enqueue_begin(&e, fn, queue, num_wait, wait, event)) != KILN_OK)
        return st;
    st = queue->backend->buffer_copy_peer(queue->handle, src->handle, src_offset, dst->handle,
                                          dst_offset, size, num_wait, e.wait,
                                          kiln__enqueue_out(&e, event));
    return kiln__enqueue_end(&e, fn, st, queue, event);
}
