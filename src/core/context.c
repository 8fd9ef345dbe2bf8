/* Contexts: creation and the two reference counts. Queues are in
 * queue.c, attached data in attach.c. */
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "core/internal.h"

/* make for kiln_context_create: a new backend context (arg: the backend). */
static kiln_status kiln__context_make_backend(const void *arg, const kiln__bdevice *const *bdevs,
                                              size_t num_devices, void **handle) {
    const kiln__backend *be = arg;
    kiln_status st = be->context_create(bdevs, num_devices, handle);
    return st == KILN_OK ? st : kiln__error_prefix(st, "kiln_context_create");
}

kiln_status kiln__context_new(const char *fn, kiln_device *const *devices, size_t num_devices,
                              kiln__context_make make, const void *arg, kiln_context **context) {
    *context = NULL;
    kiln_context *ctx = kiln__calloc(1, sizeof *ctx);
    const kiln__bdevice **bdevs = kiln__calloc(num_devices, sizeof *bdevs);
    if (ctx)
        ctx->devices = kiln__calloc(num_devices, sizeof *ctx->devices);
    if (!ctx || !bdevs || !ctx->devices) {
        if (ctx)
            free(ctx->devices);
        free(ctx);
        free(bdevs);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    }
    for (size_t i = 0; i < num_devices; i++) {
        ctx->devices[i] = devices[i];
        bdevs[i] = &devices[i]->b;
        /* PoCL 5 hangs a command wired to an event already failed
         * (waitlist.c) */
        ctx->failed_wait_hangs |= strstr(devices[i]->b.info.version, "PoCL") != NULL;
    }
    kiln_status st = make(arg, bdevs, num_devices, &ctx->handle);
    free(bdevs);
    if (st != KILN_OK) {
        free(ctx->devices);
        free(ctx);
        return st;
    }
    atomic_init(&ctx->refs, 1);
    atomic_init(&ctx->handles, 1);
    ctx->backend = devices[0]->backend;
    ctx->num_devices = num_devices;
    pthread_mutex_init(&ctx->lock, NULL);
    kiln__pool_init(ctx);
    *context = ctx;
    return KILN_OK;
}

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
                                   "belong to different platforms",
                                   devices[0]->b.info.id, i, devices[i]->b.info.id);
        for (size_t j = 0; j < i; j++)
            if (devices[j] == devices[i])
                return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                                       "kiln_context_create: device %s is listed twice",
                                       devices[i]->b.info.id);
    }
    return kiln__context_new("kiln_context_create", devices, num_devices,
                             kiln__context_make_backend, devices[0]->backend, context);
}

/* Two counts: refs (everything that points at the context, core objects
 * included) decides when it is freed; handles (the caller's context
 * references and queues: what can start new work) decides when its
 * attachments go. So an attachment may keep programs and buffers of its
 * context without keeping the context alive: no reference cycle, and no
 * counting by hand. */
void kiln__context_retain(kiln_context *context) {
    kiln__ref_take(&context->refs);
}

void kiln__context_unref(kiln_context *context) {
    if (!kiln__ref_release(&context->refs))
        return;
    kiln__context_drop_attachments(context); /* left if never in use */
    kiln__pool_destroy(context);
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

kiln_status kiln_context_retain(kiln_context *context) {
    kiln_status st =
        kiln__ref_retain(context ? &context->handles : NULL, "kiln_context_retain", "context");
    if (st == KILN_OK)
        kiln__context_retain(context);
    return st;
}

void kiln_context_release(kiln_context *context) {
    if (!context)
        return;
    if (kiln__ref_release(&context->handles)) {
        kiln__context_drop_attachments(context);
        kiln__pool_trim(context, 0); /* no new work: the cache can go */
    }
    kiln__context_unref(context);
}

size_t kiln_context_num_devices(const kiln_context *context) {
    return context ? context->num_devices : 0;
}

kiln_device *kiln_context_device(const kiln_context *context, size_t index) {
    if (!context || index >= context->num_devices)
        return NULL;
    return context->devices[index];
}
