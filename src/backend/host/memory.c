/* Buffers: host memory (64-byte aligned), so maps are the memory itself.
 * Transfers are commands on the queue like the other backends'. Buffers of
 * KILN__HOST_HUGE bytes or more are 2 MiB aligned and advised to be backed
 * by transparent huge pages (as NumPy does for its large arrays): reading
 * 64 MiB through 4 KiB pages took a sum over 2^24 floats about 1.5x longer
 * (its TLB misses). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/refcount.h"
#include "backend/host/host.h"
#include "base/fault.h"
#include "base/strbuf.h"

#define KILN__HOST_HUGE_PAGE ((size_t)2 << 20)
#define KILN__HOST_HUGE ((size_t)4 << 20)

void kiln__host_buf_put(kiln__hbuf *b) {
    if (b && kiln__ref_release(&b->refs)) {
        if (b->parent)
            kiln__host_buf_put(b->parent);
        else
            free(b->base);
        free(b);
    }
}

static kiln__hbuf *hold(kiln__hbuf *b) {
    if (b)
        kiln__ref_take(&b->refs);
    return b;
}

kiln_status kiln__host_buffer_create(void *context, size_t size, unsigned flags,
                                     const void *host_data, void **buffer) {
    (void)context;
    (void)flags;
    *buffer = NULL;
    kiln__hbuf *b = kiln__calloc(1, sizeof *b);
    void *mem = NULL;
    size_t align = size >= KILN__HOST_HUGE ? KILN__HOST_HUGE_PAGE : 64;
    size_t alloc = (size + align - 1) & ~(align - 1);
    if (!b || alloc < size || posix_memalign(&mem, align, alloc ? alloc : 64) != 0) {
        free(b);
        return kiln__error_set(KILN_ERROR_OUT_OF_DEVICE_MEMORY, 0,
                               "host buffer of %zu bytes: out of memory", size);
    }
#ifdef MADV_HUGEPAGE
    if (align == KILN__HOST_HUGE_PAGE)
        (void)madvise(mem, alloc, MADV_HUGEPAGE); /* advice: a refusal changes nothing */
#endif
    atomic_init(&b->refs, 1);
    b->base = mem;
    b->size = size;
    if (host_data && size)
        memcpy(mem, host_data, size);
    *buffer = b;
    return KILN_OK;
}

kiln_status kiln__host_buffer_create_sub(void *parent, size_t offset, size_t size, void **buffer) {
    kiln__hbuf *p = parent;
    kiln__hbuf *b = kiln__calloc(1, sizeof *b);
    *buffer = NULL;
    if (!b)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host sub-buffer: out of memory");
    atomic_init(&b->refs, 1);
    b->base = p->base + offset;
    b->size = size;
    b->parent = hold(p);
    *buffer = b;
    return KILN_OK;
}

void kiln__host_buffer_release(void *buffer) {
    kiln__host_buf_put(buffer);
}

static kiln__hcmd *cmd_new(kiln__hop op) {
    kiln__hcmd *c = kiln__calloc(1, sizeof *c);
    if (c)
        c->op = op;
    return c;
}

#define KILN__NOMEM(what) kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, what ": out of memory")

/* A command on the range [offset, offset + size) of buffer (held by the
 * command); NULL when out of memory. */
static kiln__hcmd *range_cmd(kiln__hop op, void *buffer, size_t offset, size_t size) {
    kiln__hcmd *c = cmd_new(op);
    if (!c)
        return NULL;
    c->buf = hold(buffer);
    c->off = offset;
    c->size = size;
    return c;
}

kiln_status kiln__host_buffer_write(void *queue, void *buffer, size_t offset, size_t size,
                                    const void *src, int blocking, size_t num_wait,
                                    void *const *wait, void **out_event) {
    kiln__hcmd *c = range_cmd(KILN__HOP_WRITE, buffer, offset, size);
    if (!c)
        return KILN__NOMEM("host write");
    c->src = src;
    return kiln__host_enqueue(queue, c, num_wait, wait, out_event, blocking);
}

kiln_status kiln__host_buffer_read(void *queue, void *buffer, size_t offset, size_t size, void *dst,
                                   int blocking, size_t num_wait, void *const *wait,
                                   void **out_event) {
    kiln__hcmd *c = range_cmd(KILN__HOP_READ, buffer, offset, size);
    if (!c)
        return KILN__NOMEM("host read");
    c->host = dst;
    return kiln__host_enqueue(queue, c, num_wait, wait, out_event, blocking);
}

kiln_status kiln__host_buffer_copy(void *queue, void *src, size_t src_offset, void *dst,
                                   size_t dst_offset, size_t size, size_t num_wait,
                                   void *const *wait, void **out_event) {
    kiln__hcmd *c = cmd_new(KILN__HOP_COPY);
    if (!c)
        return KILN__NOMEM("host copy");
    c->buf = hold(src);
    c->buf2 = hold(dst);
    c->off = src_offset;
    c->off2 = dst_offset;
    c->size = size;
    return kiln__host_enqueue(queue, c, num_wait, wait, out_event, 0);
}

kiln_status kiln__host_buffer_fill(void *queue, void *buffer, const void *pattern,
                                   size_t pattern_size, size_t offset, size_t size, size_t num_wait,
                                   void *const *wait, void **out_event) {
    if (pattern_size == 0 || pattern_size > sizeof((kiln__hcmd *)0)->pattern)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "host fill: pattern of %zu bytes (1 to 128)", pattern_size);
    kiln__hcmd *c = range_cmd(KILN__HOP_FILL, buffer, offset, size);
    if (!c)
        return KILN__NOMEM("host fill");
    memcpy(c->pattern, pattern, pattern_size);
    c->pattern_size = pattern_size;
    return kiln__host_enqueue(queue, c, num_wait, wait, out_event, 0);
}

/* The memory itself, once the queue's earlier work has ended. */
kiln_status kiln__host_buffer_map(void *queue, void *buffer, unsigned map_flags, size_t offset,
                                  size_t size, void **host_ptr) {
    (void)map_flags;
    (void)size;
    kiln__hbuf *b = buffer;
    kiln__hcmd *c = cmd_new(KILN__HOP_NOP);
    if (!c)
        return KILN__NOMEM("host map");
    kiln_status st = kiln__host_enqueue(queue, c, 0, NULL, NULL, 1);
    if (st != KILN_OK)
        return st;
    *host_ptr = b->base + offset;
    return KILN_OK;
}

kiln_status kiln__host_buffer_unmap(void *queue, void *buffer, void *host_ptr, size_t num_wait,
                                    void *const *wait, void **out_event) {
    (void)buffer;
    (void)host_ptr;
    kiln__hcmd *c = cmd_new(KILN__HOP_NOP);
    if (!c)
        return KILN__NOMEM("host unmap");
    return kiln__host_enqueue(queue, c, num_wait, wait, out_event, 0);
}
