/* Memory pools: a caching allocator per context (docs/pools.md).
 *
 * A buffer created with KILN_BUFFER_POOLED takes a block of its size class
 * (kiln__pool_class) from the context's cache, or a new one from the
 * backend. Its release gives the block back without freeing it: nothing
 * synchronises and no driver call frees memory.
 *
 * A released block may still be used by queued work. Core does not track
 * which commands use which buffer, but once a buffer's last reference is
 * gone no new command can use it: every command that does was enqueued
 * before the release. So the release puts a marker on each live queue of
 * the context (with no wait list, a marker completes after every command
 * enqueued before it, in-order or not) and the block waits behind that
 * fence; it is handed out again only once every marker has completed
 * (polled with the backend's event_state when an allocation misses). A
 * queue freed while pooled buffers are live leaves a last marker too
 * (retired), which the fences of later releases include until it has
 * completed. A fence that failed, or that cannot be made, sends the block
 * back to the driver instead, which keeps the memory until its work ends.
 *
 * Trimming (kiln_pool_trim, max_cached_bytes, a failed allocation, the
 * context's last handle) hands cached blocks back to the backend, waiting
 * ones included: the backend's release already defers the memory behind
 * queued work. Backend releases run outside the pool's lock (CUDA's may
 * synchronise). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/desc.h"
#include "base/fault.h"
#include "core/internal.h"

/* A block is handed out (IN_USE: a buffer owns it) or cached (on the ready
 * or the waiting list); it moves between the two only through
 * kiln__pool_alloc and kiln__pool_put. */
typedef enum { BLOCK_IN_USE = 1, BLOCK_CACHED = 2 } block_state;

struct kiln__pool_block {
    kiln__pool_block *next;
    block_state state;
    void *handle;   /* backend buffer of `bytes` bytes */
    size_t bytes;   /* the size class */
    unsigned flags; /* backend flags (KILN_BUFFER_POOLED removed) */
    void **fence;   /* backend events; the block is ready once all completed */
    size_t num_fence;
};

#define KILN__POOL_MIN ((size_t)512)
#define KILN__POOL_GRANULE ((size_t)2 << 20) /* 2 MiB */

/* The size class of a request: at least 512 bytes; up to 4 MiB, eight
 * classes per power of two (at most 12.5% rounding); above, multiples of
 * 2 MiB. A class past a device's largest allocation falls back to the
 * exact size. */
static size_t kiln__pool_class(const kiln_context *context, size_t size) {
    size_t c;
    if (size <= KILN__POOL_MIN) {
        c = KILN__POOL_MIN;
    } else if (size > ((size_t)4 << 20)) {
        c = size > SIZE_MAX - KILN__POOL_GRANULE
                ? size
                : (size + KILN__POOL_GRANULE - 1) / KILN__POOL_GRANULE * KILN__POOL_GRANULE;
    } else {
        size_t p2 = KILN__POOL_MIN;
        while (p2 < size)
            p2 <<= 1;
        size_t step = p2 / 8;
        c = (size + step - 1) / step * step;
    }
    for (size_t i = 0; i < context->num_devices; i++) {
        uint64_t max = context->devices[i]->b.info.max_alloc_bytes;
        if (max && (uint64_t)c > max)
            return size;
    }
    return c;
}

static void kiln__pool_env(kiln__pool *p) {
    const char *env = getenv("KILN_POOL");
    p->disabled = env && (!strcmp(env, "0") || !strcmp(env, "off") || !strcmp(env, "no"));
}

void kiln__pool_init(kiln_context *context) {
    kiln__pool *p = &context->pool;
    kiln__lock_init(&p->lock);
    kiln__pool_env(p);
}

int kiln__pool_enabled(kiln_context *context) {
    kiln__lock_acquire(&context->pool.lock);
    int on = !context->pool.disabled;
    kiln__lock_release(&context->pool.lock);
    return on;
}

static void kiln__pool_fence_drop(const kiln__backend *be, kiln__pool_block *b) {
    for (size_t i = 0; i < b->num_fence; i++)
        be->event_release(b->fence[i]);
    free(b->fence);
    b->fence = NULL;
    b->num_fence = 0;
}

/* Frees a list of blocks (outside the lock). */
static void kiln__pool_free_list(const kiln__backend *be, kiln__pool_block *list) {
    while (list) {
        kiln__pool_block *next = list->next;
        kiln__pool_fence_drop(be, list);
        be->buffer_release(list->handle);
        free(list);
        list = next;
    }
}

static void kiln__pool_uncache(kiln__pool *p, const kiln__pool_block *b) {
    assert(kiln__lock_held(&p->lock) && "the pool's counts change under its lock");
    assert(p->stats.bytes_cached >= b->bytes && "a block uncached that was never counted");
    p->stats.bytes_cached -= b->bytes;
    if (b->flags & KILN_BUFFER_HOST_PINNED)
        p->stats.pinned_bytes_cached -= b->bytes;
}

/* 1 when every event completed, -1 when one failed, 0 while one is pending. */
static int kiln__pool_events_done(const kiln__backend *be, void *const *events, size_t n) {
    int done = 1;
    for (size_t i = 0; i < n; i++) {
        kiln_event_state st = KILN_EVENT_QUEUED;
        if (be->event_state(events[i], &st) != KILN_OK || st == KILN_EVENT_ERROR)
            return -1;
        if (st != KILN_EVENT_COMPLETE)
            done = 0;
    }
    return done;
}

/* Under the lock: moves waiting blocks whose fence completed to ready, and
 * those whose fence failed to *dead (to be freed); forgets completed
 * retired markers. Fences complete in release order (a later release's
 * markers follow the earlier ones on every queue the earlier fence has, or
 * include its retired markers), so the oldest block that is still waiting
 * ends the walk. */
static void kiln__pool_poll(kiln_context *context, kiln__pool_block **dead) {
    kiln__pool *p = &context->pool;
    const kiln__backend *be = context->backend;
    assert(kiln__lock_held(&p->lock) && "the pool is polled under its lock");
    while (p->waiting) {
        kiln__pool_block *b = p->waiting;
        int done = kiln__pool_events_done(be, b->fence, b->num_fence);
        if (!done)
            break;
        p->waiting = b->next;
        if (!p->waiting)
            p->waiting_tail = NULL;
        kiln__pool_fence_drop(be, b);
        assert(b->state == BLOCK_CACHED && p->stats.bytes_waiting >= b->bytes &&
               "a waiting block is cached and counted as waiting");
        p->stats.bytes_waiting -= b->bytes;
        if (done > 0) {
            b->next = p->ready;
            p->ready = b;
        } else {
            kiln__pool_uncache(p, b);
            p->stats.blocks_freed++;
            b->next = *dead;
            *dead = b;
        }
    }
    size_t keep = 0;
    for (size_t i = 0; i < p->num_retired; i++) {
        if (kiln__pool_events_done(be, &p->retired[i], 1))
            be->event_release(p->retired[i]);
        else
            p->retired[keep++] = p->retired[i];
    }
    p->num_retired = keep;
}

/* Under the lock: takes a ready block of this class and flags, or NULL. */
static kiln__pool_block *kiln__pool_take(kiln__pool *p, size_t bytes, unsigned flags) {
    assert(kiln__lock_held(&p->lock) && "blocks are taken under the pool's lock");
    for (kiln__pool_block **at = &p->ready; *at; at = &(*at)->next)
        if ((*at)->bytes == bytes && (*at)->flags == flags) {
            kiln__pool_block *b = *at;
            assert(b->state == BLOCK_CACHED && "a block on the ready list is cached");
            *at = b->next;
            b->next = NULL;
            return b;
        }
    return NULL;
}

static void kiln__pool_count_use(kiln__pool *p, kiln__pool_block *b) {
    assert(kiln__lock_held(&p->lock) && "the pool's counts change under its lock");
    b->state = BLOCK_IN_USE;
    p->stats.allocations++;
    p->stats.bytes_in_use += b->bytes;
    if (b->flags & KILN_BUFFER_HOST_PINNED)
        p->stats.pinned_bytes_in_use += b->bytes;
    if (p->stats.bytes_in_use > p->stats.peak_in_use)
        p->stats.peak_in_use = p->stats.bytes_in_use;
}

kiln_status kiln__pool_alloc(kiln_context *context, size_t size, unsigned flags, kiln_buffer *buf) {
    kiln__pool *p = &context->pool;
    flags &= ~(unsigned)KILN_BUFFER_POOLED;
    size_t bytes = kiln__pool_class(context, size);
    kiln__pool_block *dead = NULL;
    kiln__lock_acquire(&p->lock);
    kiln__pool_block *b = kiln__pool_take(p, bytes, flags);
    if (!b && p->waiting) {
        kiln__pool_poll(context, &dead);
        b = kiln__pool_take(p, bytes, flags);
    }
    if (b) {
        kiln__pool_uncache(p, b);
        p->stats.hits++;
        kiln__pool_count_use(p, b);
    }
    kiln__lock_release(&p->lock);
    kiln__pool_free_list(context->backend, dead);
    if (!b) {
        b = kiln__calloc(1, sizeof *b);
        if (!b)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory");
        kiln_status st = kiln__buffer_alloc(context, bytes, flags, NULL, &b->handle);
        if (st != KILN_OK) {
            free(b);
            return st;
        }
        b->bytes = bytes;
        b->flags = flags;
        kiln__lock_acquire(&p->lock);
        kiln__pool_count_use(p, b);
        kiln__lock_release(&p->lock);
    }
    buf->handle = b->handle;
    buf->block = b;
    return KILN_OK;
}

/* Under the lock: the fence of a release, markers after all work enqueued
 * so far (b->fence). 0 with no events if no queue can still run work; -1
 * if a marker could not be made. */
static int kiln__pool_fence(kiln_context *context, kiln__pool_block *b) {
    kiln__pool *p = &context->pool;
    const kiln__backend *be = context->backend;
    assert(kiln__lock_held(&p->lock) && "a fence is made under the pool's lock");
    assert(b->num_fence == 0 && !b->fence && "a block handed out carries no fence");
    size_t n = p->num_retired;
    for (kiln_queue *q = p->queues; q; q = q->pool_next)
        n++;
    if (n == 0)
        return 0;
    b->fence = kiln__calloc(n, sizeof *b->fence);
    if (!b->fence)
        return -1;
    for (kiln_queue *q = p->queues; q; q = q->pool_next) {
        void *m = NULL;
        if (be->queue_marker(q->handle, 0, 0, NULL, &m) != KILN_OK || !m) {
            kiln__pool_fence_drop(be, b);
            return -1;
        }
        b->fence[b->num_fence++] = m;
        be->queue_flush(q->handle); /* or the marker may never run */
    }
    for (size_t i = 0; i < p->num_retired; i++) {
        be->event_retain(p->retired[i]);
        b->fence[b->num_fence++] = p->retired[i];
    }
    return 0;
}

void kiln__pool_put(kiln_context *context, kiln__pool_block *b, int keep) {
    kiln__pool *p = &context->pool;
    kiln__pool_block *dead = NULL;
    kiln__lock_acquire(&p->lock);
    assert(b->state == BLOCK_IN_USE && "a pool block given back twice");
    assert(p->stats.bytes_in_use >= b->bytes && "a block given back that was never counted");
    b->state = BLOCK_CACHED;
    p->stats.bytes_in_use -= b->bytes;
    if (b->flags & KILN_BUFFER_HOST_PINNED)
        p->stats.pinned_bytes_in_use -= b->bytes;
    if (!keep || p->disabled || kiln__pool_fence(context, b) != 0) {
        p->stats.blocks_freed++;
        b->next = NULL;
        dead = b;
    } else {
        p->stats.bytes_cached += b->bytes;
        if (b->flags & KILN_BUFFER_HOST_PINNED)
            p->stats.pinned_bytes_cached += b->bytes;
        if (b->num_fence) {
            p->stats.bytes_waiting += b->bytes;
            b->next = NULL;
            if (p->waiting_tail)
                p->waiting_tail->next = b;
            else
                p->waiting = b;
            p->waiting_tail = b;
        } else {
            b->next = p->ready;
            p->ready = b;
        }
    }
    size_t limit = p->max_cached;
    kiln__lock_release(&p->lock);
    kiln__pool_free_list(context->backend, dead);
    if (limit)
        kiln__pool_trim(context, limit);
}

/* Under the lock: unlinks cached blocks, ready ones first, until at most
 * keep bytes stay cached. */
static kiln__pool_block *kiln__pool_unlink(kiln__pool *p, size_t keep) {
    kiln__pool_block *dead = NULL;
    kiln__pool_block **lists[2] = { &p->ready, &p->waiting };
    assert(kiln__lock_held(&p->lock) && "blocks are unlinked under the pool's lock");
    for (int l = 0; l < 2; l++) {
        kiln__pool_block **at = lists[l];
        while (*at && p->stats.bytes_cached > keep) {
            kiln__pool_block *b = *at;
            *at = b->next;
            kiln__pool_uncache(p, b);
            if (l == 1)
                p->stats.bytes_waiting -= b->bytes;
            p->stats.blocks_freed++;
            b->next = dead;
            dead = b;
        }
    }
    p->waiting_tail = NULL;
    for (kiln__pool_block *b = p->waiting; b; b = b->next)
        p->waiting_tail = b;
    return dead;
}

size_t kiln__pool_trim(kiln_context *context, size_t keep) {
    kiln__pool *p = &context->pool;
    kiln__lock_acquire(&p->lock);
    size_t before = p->stats.bytes_cached;
    kiln__pool_block *dead = NULL;
    kiln__pool_poll(context, &dead); /* ready ones go first */
    kiln__pool_block *more = kiln__pool_unlink(p, keep);
    size_t freed = before - p->stats.bytes_cached;
    kiln__lock_release(&p->lock);
    kiln__pool_free_list(context->backend, dead);
    kiln__pool_free_list(context->backend, more);
    return freed;
}

void kiln__pool_destroy(kiln_context *context) {
    kiln__pool *p = &context->pool;
    assert(!p->queues && "a context's pool destroyed while one of its queues lives");
    kiln__pool_free_list(context->backend, p->ready);
    kiln__pool_free_list(context->backend, p->waiting);
    p->ready = p->waiting = p->waiting_tail = NULL;
    for (size_t i = 0; i < p->num_retired; i++)
        context->backend->event_release(p->retired[i]);
    free(p->retired);
    p->retired = NULL;
    p->num_retired = p->cap_retired = 0;
    kiln__lock_destroy(&p->lock);
}

void kiln__pool_queue_add(kiln_queue *queue) {
    kiln__pool *p = &queue->context->pool;
    kiln__lock_acquire(&p->lock);
    assert(!queue->pool_next && p->queues != queue && "a queue added to its pool twice");
    queue->pool_next = p->queues;
    p->queues = queue;
    kiln__lock_release(&p->lock);
}

void kiln__pool_queue_remove(kiln_queue *queue) {
    kiln_context *context = queue->context;
    kiln__pool *p = &context->pool;
    const kiln__backend *be = context->backend;
    kiln__pool_block *dead = NULL;
    kiln__lock_acquire(&p->lock);
    kiln_queue **at = &p->queues;
    while (*at && *at != queue)
        at = &(*at)->pool_next;
    assert(*at == queue && "a queue removed from a pool it was never added to");
    if (*at)
        *at = queue->pool_next;
    queue->pool_next = NULL;
    kiln__pool_poll(context, &dead);
    /* A pooled buffer still live may have work on this queue: its release
     * must wait for that work too. */
    if (p->stats.bytes_in_use > 0) {
        void *m = NULL;
        if (p->num_retired == p->cap_retired) {
            size_t cap = p->cap_retired ? 2 * p->cap_retired : 4;
            void **grown = kiln__realloc(p->retired, cap * sizeof *grown);
            if (grown) {
                p->retired = grown;
                p->cap_retired = cap;
            }
        }
        if (p->num_retired < p->cap_retired &&
            be->queue_marker(queue->handle, 0, 0, NULL, &m) == KILN_OK && m) {
            be->queue_flush(queue->handle);
            p->retired[p->num_retired++] = m;
        } else {
            /* No marker (out of memory): the queue's last work cannot be
             * fenced, so no later release may be cached. Pooling stops for
             * the context (kiln_pool_configure can turn it on again). */
            p->disabled = 1;
        }
    }
    kiln__lock_release(&p->lock);
    kiln__pool_free_list(be, dead);
}

/* ---------------------------------------------------------- public calls */

kiln_status(kiln_pool_get_stats)(kiln_context *context, kiln_pool_stats *stats, size_t stats_size) {
    if (!context || !stats)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_pool_get_stats: %s is NULL",
                               context ? "stats" : "context");
    if (stats_size < offsetof(kiln_pool_stats, oom_retries) + sizeof stats->oom_retries)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_pool_get_stats: stats_size is %zu, less than any version "
                               "of kiln_pool_stats (call it through the kiln_pool_get_stats "
                               "macro)",
                               stats_size);
    kiln__pool *p = &context->pool;
    kiln__pool_block *dead = NULL;
    kiln__lock_acquire(&p->lock);
    kiln__pool_poll(context, &dead);
    kiln_pool_stats s = p->stats;
    kiln__lock_release(&p->lock);
    kiln__pool_free_list(context->backend, dead);
    size_t n = stats_size < sizeof s ? stats_size : sizeof s;
    memcpy(stats, &s, n);
    memset((char *)stats + n, 0, stats_size - n);
    return KILN_OK;
}

kiln_status kiln_pool_trim(kiln_context *context, size_t keep_bytes, size_t *freed) {
    if (freed)
        *freed = 0;
    if (!context)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_pool_trim: context is NULL");
    size_t n = kiln__pool_trim(context, keep_bytes);
    if (freed)
        *freed = n;
    return KILN_OK;
}

kiln_status kiln_pool_configure(kiln_context *context, const kiln_pool_opts *opts) {
    static const char fn[] = "kiln_pool_configure";
    const char *missing = KILN__FIRST_NULL2(context, opts);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    kiln_pool_opts o;
    kiln_status st = kiln__desc_read(opts, sizeof o, sizeof o, &o, fn, "KILN_POOL_OPTS");
    if (st != KILN_OK)
        return st;
    if (o.disabled != 0 && o.disabled != 1)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: disabled is %d (0 or 1)", fn,
                               o.disabled);
    kiln__pool *p = &context->pool;
    kiln__lock_acquire(&p->lock);
    p->disabled = o.disabled;
    p->max_cached = o.max_cached_bytes;
    kiln__lock_release(&p->lock);
    if (o.disabled)
        kiln__pool_trim(context, 0);
    else if (o.max_cached_bytes)
        kiln__pool_trim(context, o.max_cached_bytes);
    return KILN_OK;
}
