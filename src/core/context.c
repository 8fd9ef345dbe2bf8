/* Contexts and queues. */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

kiln_status kiln_context_create(kiln_device *const *devices, size_t num_devices,
                                kiln_context **context) {
    if (!context)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_context_create: context is NULL");
    *context = NULL;
    if (!devices)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_context_create: devices is NULL");
    if (num_devices == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_context_create: num_devices is 0");
    for (size_t i = 0; i < num_devices; i++) {
        if (!devices[i])
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                                   "kiln_context_create: devices[%zu] is NULL", i);
        if (devices[i]->backend != devices[0]->backend)
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "kiln_context_create: devices[0] (%s) and devices[%zu] (%s) "
                                   "belong to different backends; a context spans one backend",
                                   devices[0]->b.info.id, i, devices[i]->b.info.id);
        if (devices[i]->b.platform != devices[0]->b.platform)
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "kiln_context_create: devices[0] (%s) and devices[%zu] (%s) "
                                   "belong to different OpenCL platforms",
                                   devices[0]->b.info.id, i, devices[i]->b.info.id);
        for (size_t j = 0; j < i; j++)
            if (devices[j] == devices[i])
                return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                       "kiln_context_create: device %s is listed twice",
                                       devices[i]->b.info.id);
    }
    const kiln__backend *be = devices[0]->backend;
    kiln_context *ctx = calloc(1, sizeof *ctx);
    const kiln__bdevice **bdevs = calloc(num_devices, sizeof *bdevs);
    if (ctx)
        ctx->devices = calloc(num_devices, sizeof *ctx->devices);
    if (!ctx || !bdevs || !ctx->devices) {
        if (ctx)
            free(ctx->devices);
        free(ctx);
        free(bdevs);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_context_create: out of memory");
    }
    for (size_t i = 0; i < num_devices; i++) {
        ctx->devices[i] = devices[i];
        bdevs[i] = &devices[i]->b;
    }
    kiln_status st = be->context_create(bdevs, num_devices, &ctx->handle);
    free(bdevs);
    if (st != KILN_OK) {
        free(ctx->devices);
        free(ctx);
        return kiln__error_prefix(st, "kiln_context_create");
    }
    atomic_init(&ctx->refs, 1);
    atomic_init(&ctx->ext_refs, 0);
    ctx->backend = be;
    ctx->num_devices = num_devices;
    pthread_mutex_init(&ctx->lock, NULL);
    *context = ctx;
    return KILN_OK;
}

void kiln__context_retain(kiln_context *context) {
    atomic_fetch_add_explicit(&context->refs, 1, memory_order_relaxed);
}

kiln_status kiln_context_retain(kiln_context *context) {
    if (!context)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_context_retain: context is NULL");
    kiln__context_retain(context);
    return KILN_OK;
}

void *kiln__context_ext(kiln_context *context, void *(*make)(kiln_context *),
                        void (*free_fn)(void *)) {
    pthread_mutex_lock(&context->lock);
    if (!context->ext && make) {
        context->ext = make(context);
        context->ext_free = context->ext ? free_fn : NULL;
    }
    void *ext = context->ext;
    pthread_mutex_unlock(&context->lock);
    return ext;
}

void kiln__context_ext_refs(kiln_context *context, int refs) {
    atomic_store(&context->ext_refs, refs);
}

void kiln_context_release(kiln_context *context) {
    if (!context)
        return;
    int left = atomic_fetch_sub_explicit(&context->refs, 1, memory_order_acq_rel) - 1;
    if (left > 0 && left == atomic_load(&context->ext_refs)) {
        /* Only the extension's own objects hold the context: drop it; its
         * releases end here with left == 0. */
        pthread_mutex_lock(&context->lock);
        void *ext = context->ext;
        void (*f)(void *) = context->ext_free;
        context->ext = NULL;
        context->ext_free = NULL;
        atomic_store(&context->ext_refs, 0);
        pthread_mutex_unlock(&context->lock);
        if (ext && f)
            f(ext);
        return;
    }
    if (left != 0)
        return;
    if (context->ext && context->ext_free) /* an extension holding nothing */
        context->ext_free(context->ext);
    for (size_t b = 0; b < KILN__BUILT_BUCKETS; b++) {
        kiln__built *e = context->built[b];
        while (e) {
            kiln__built *next = e->next;
            context->backend->program_release(e->handle);
            free(e->log);
            free(e);
            e = next;
        }
    }
    context->backend->context_release(context->handle);
    pthread_mutex_destroy(&context->lock);
    free(context->devices);
    free(context);
}

size_t kiln_context_num_devices(const kiln_context *context) {
    return context ? context->num_devices : 0;
}

kiln_device *kiln_context_device(const kiln_context *context, size_t index) {
    if (!context || index >= context->num_devices)
        return NULL;
    return context->devices[index];
}

/* ------------------------------------------------------------------ queues */

kiln_status kiln_queue_create(kiln_context *context, kiln_device *device, unsigned flags,
                              kiln_queue **queue) {
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_queue_create: queue is NULL");
    *queue = NULL;
    if (!context || !device)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_queue_create: %s is NULL",
                               context ? "device" : "context");
    if (flags & ~(unsigned)(KILN_QUEUE_OUT_OF_ORDER | KILN_QUEUE_PROFILING))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "kiln_queue_create: unknown flags 0x%x", flags);
    size_t slot = context->num_devices;
    for (size_t i = 0; i < context->num_devices; i++)
        if (context->devices[i] == device)
            slot = i;
    if (slot == context->num_devices)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "kiln_queue_create: device %s is not one of the context's devices",
                               device->b.info.id);
    kiln_queue *q = calloc(1, sizeof *q);
    if (!q)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "kiln_queue_create: out of memory");
    kiln_status st = context->backend->queue_create(context->handle, &device->b, flags, &q->handle);
    if (st != KILN_OK) {
        free(q);
        return kiln__error_prefix(st, "kiln_queue_create(%s)", device->b.info.id);
    }
    atomic_init(&q->refs, 1);
    q->backend = context->backend;
    q->context = context;
    kiln__context_retain(context);
    q->device = device;
    q->device_slot = slot;
    q->flags = flags;
    *queue = q;
    return KILN_OK;
}

kiln_status kiln_queue_create_default(const char *selector, unsigned flags, kiln_queue **queue) {
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_queue_create_default: queue is NULL");
    *queue = NULL;
    kiln_device *dev = NULL;
    kiln_status st = kiln_device_select(selector, &dev);
    if (st != KILN_OK)
        return st;
    kiln_context *ctx = NULL;
    st = kiln_context_create(&dev, 1, &ctx);
    if (st != KILN_OK)
        return st;
    st = kiln_queue_create(ctx, dev, flags, queue);
    kiln_context_release(ctx); /* the queue holds it */
    return st;
}

kiln_status kiln_queue_retain(kiln_queue *queue) {
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_queue_retain: queue is NULL");
    atomic_fetch_add_explicit(&queue->refs, 1, memory_order_relaxed);
    return KILN_OK;
}

void kiln_queue_release(kiln_queue *queue) {
    if (!queue || atomic_fetch_sub_explicit(&queue->refs, 1, memory_order_acq_rel) != 1)
        return;
    queue->backend->queue_release(queue->handle);
    kiln_context_release(queue->context);
    free(queue);
}

kiln_context *kiln_queue_context(const kiln_queue *queue) { return queue ? queue->context : NULL; }
kiln_device *kiln_queue_device(const kiln_queue *queue) { return queue ? queue->device : NULL; }

kiln_status kiln_queue_finish(kiln_queue *queue) {
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_queue_finish: queue is NULL");
    kiln_status st = queue->backend->queue_finish(queue->handle);
    return st == KILN_OK ? st : kiln__error_prefix(st, "kiln_queue_finish");
}

kiln_status kiln_queue_flush(kiln_queue *queue) {
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_queue_flush: queue is NULL");
    kiln_status st = queue->backend->queue_flush(queue->handle);
    return st == KILN_OK ? st : kiln__error_prefix(st, "kiln_queue_flush");
}

static kiln_status kiln__marker(kiln_queue *queue, int barrier, size_t num_wait,
                                kiln_event *const *wait, kiln_event **event) {
    const char *fn = barrier ? "kiln_queue_barrier" : "kiln_queue_marker";
    if (event)
        *event = NULL;
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue is NULL", fn);
    void *storage[KILN__STACK_ARGS];
    void *const *bwait = NULL;
    kiln_status st = kiln__wait_list(queue->context, num_wait, wait, storage, &bwait);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", fn);
    void *bev = NULL;
    st = queue->backend->queue_marker(queue->handle, barrier, num_wait, bwait,
                                      event ? &bev : NULL);
    kiln__wait_list_free(bwait, storage, num_wait);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", fn);
    if (event)
        return kiln__event_wrap(queue->context, bev, (queue->flags & KILN_QUEUE_PROFILING) != 0,
                                event);
    return KILN_OK;
}

kiln_status kiln_queue_marker(kiln_queue *queue, size_t num_wait, kiln_event *const *wait,
                              kiln_event **event) {
    return kiln__marker(queue, 0, num_wait, wait, event);
}

kiln_status kiln_queue_barrier(kiln_queue *queue, size_t num_wait, kiln_event *const *wait,
                               kiln_event **event) {
    return kiln__marker(queue, 1, num_wait, wait, event);
}
