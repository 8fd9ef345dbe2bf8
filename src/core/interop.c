/* Native interop, the core's side (see backend/interop.h): argument checks,
 * backend handles of kiln objects, and kiln objects around backend handles
 * that a backend's kiln_opencl_* / kiln_cuda_* function made. No vendor
 * type and no backend's name appears here: the caller's interop table
 * decides which objects fit. */
#include <stdlib.h>

#include "backend/interop.h"
#include "base/fault.h"
#include "core/internal.h"

static const char *const kiln__object_names[] = { "context", "queue", "buffer", "event" };

/* The object's backend, whatever its kind (each core object starts with
 * its count and its backend table, but the layouts differ: ask each). */
static const kiln__backend *kiln__object_backend(kiln__interop_object kind, const void *o,
                                                 void **handle) {
    switch (kind) {
    case KILN__INTEROP_CONTEXT:
        *handle = ((const kiln_context *)o)->handle;
        return ((const kiln_context *)o)->backend;
    case KILN__INTEROP_QUEUE:
        *handle = ((const kiln_queue *)o)->handle;
        return ((const kiln_queue *)o)->backend;
    case KILN__INTEROP_BUFFER:
        *handle = ((const kiln_buffer *)o)->handle;
        return ((const kiln_buffer *)o)->backend;
    case KILN__INTEROP_EVENT:
        *handle = ((const kiln_event *)o)->handle;
        return ((const kiln_event *)o)->backend;
    }
    return NULL;
}

/* MISMATCH unless be answers to via. */
static kiln_status kiln__check_backend(const struct kiln__backend_interop *via, const char *fn,
                                       const char *what, const kiln__backend *be) {
    if (be->interop == via)
        return KILN_OK;
    return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                           "%s: the %s belongs to the %s backend; this call takes %s objects", fn,
                           what, be->name, via->name);
}

kiln_status kiln__interop_handle(const struct kiln__backend_interop *via, const char *fn,
                                 kiln__interop_object kind, const void *object, void **handle,
                                 const kiln__bdevice **device) {
    const char *what = kiln__object_names[kind];
    if (device)
        *device = NULL;
    if (!handle)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: the result pointer is NULL", fn);
    *handle = NULL;
    if (!object)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, what);
    void *h = NULL;
    kiln_status st = kiln__check_backend(via, fn, what, kiln__object_backend(kind, object, &h));
    if (st != KILN_OK)
        return st;
    if (kind == KILN__INTEROP_QUEUE && kiln__queue_rec((kiln_queue *)object))
        return kiln__graph_refuse(kiln__queue_rec((kiln_queue *)object), fn,
                                  "native code on the queue (a vendor library: CLBlast, clFFT, "
                                  "cuBLAS, cuFFT) is not seen by kiln, so cannot be recorded");
    if (kind == KILN__INTEROP_EVENT && ((const kiln_event *)object)->graph)
        return kiln__graph_refuse(((const kiln_event *)object)->graph, fn, KILN__RECORDED_WHY);
    if (device && kind == KILN__INTEROP_QUEUE)
        *device = &((const kiln_queue *)object)->device->b;
    *handle = h;
    return KILN_OK;
}

kiln_status kiln__interop_device(const struct kiln__backend_interop *via, const char *fn,
                                 const kiln_device *device, const kiln__bdevice **record) {
    *record = NULL;
    if (!device)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: device is NULL", fn);
    kiln_status st = kiln__check_backend(via, fn, "device", device->backend);
    if (st == KILN_OK)
        *record = &device->b;
    return st;
}

kiln_status kiln__interop_kernel(const struct kiln__backend_interop *via, const char *fn,
                                 const kiln_kernel *kernel, const kiln_device *device,
                                 void **handle) {
    if (!handle)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: the result pointer is NULL", fn);
    *handle = NULL;
    const char *missing = KILN__FIRST_NULL2(kernel, device);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    kiln_status st = kiln__check_backend(via, fn, "kernel", kernel->backend);
    if (st != KILN_OK)
        return st;
    for (size_t i = 0; i < kernel->context->num_devices; i++)
        if (kernel->context->devices[i] == device) {
            *handle = kernel->handles[i];
            return KILN_OK;
        }
    return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                           "%s: device %s is not one of the kernel's context's devices", fn,
                           device->b.info.id);
}

/* The first of kiln's devices that via drives and (unless any) whose
 * backend handle is handle; *found is NULL where there is none. (A CUDA
 * device's handle is its ordinal: 0 is a real handle, hence `any`.) */
static kiln_status kiln__interop_scan(const struct kiln__backend_interop *via, const char *fn,
                                      int any, void *handle, kiln_device **found) {
    *found = NULL;
    size_t n = 0;
    kiln_status st = kiln_device_count(&n);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s", fn);
    for (size_t i = 0; i < n; i++) {
        kiln_device *d = NULL;
        if (kiln_device_at(i, &d) == KILN_OK && d->backend->interop == via &&
            (any || d->b.handle == handle)) {
            *found = d;
            break;
        }
    }
    return KILN_OK;
}

kiln_status kiln__interop_ready(const struct kiln__backend_interop *via, const char *fn) {
    kiln_device *d = NULL;
    kiln_status st = kiln__interop_scan(via, fn, 1, NULL, &d);
    if (st != KILN_OK || d)
        return st;
    return kiln__error_set(KILN_ERROR_NO_DEVICE, 0,
                           "%s: kiln has no %s device (its driver did not load, or reports "
                           "none); kiln_device_at lists the devices it has",
                           fn, via->name);
}

kiln_status kiln__interop_device_find(const struct kiln__backend_interop *via, const char *fn,
                                      void *handle, kiln_device **device) {
    kiln_status st = kiln__interop_scan(via, fn, 0, handle, device);
    if (st != KILN_OK || *device)
        return st;
    return kiln__error_set(KILN_ERROR_NO_DEVICE, 0,
                           "%s: the native %s device %p is not one of kiln's devices "
                           "(kiln_device_at lists them; a sub-device made outside "
                           "kiln_device_partition is not known)",
                           fn, via->name, handle);
}

/* What the make functions below need to wrap a native object. */
struct kiln__interop_native {
    const struct kiln__backend_interop *via;
    const char *fn;
    void *native;
};

static kiln_status kiln__interop_context_make(const void *arg, const kiln__bdevice *const *bdevs,
                                              size_t num_devices, void **handle) {
    const struct kiln__interop_native *n = arg;
    kiln_status st = n->via->context_wrap(n->native, bdevs, num_devices, handle);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", n->fn);
}

kiln_status kiln__interop_context_wrap(const struct kiln__backend_interop *via, const char *fn,
                                       void *native, size_t num_devices,
                                       void *const *device_handles, kiln_context **context) {
    *context = NULL;
    if (num_devices == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: the native context has no device", fn);
    kiln_device **devices = kiln__calloc(num_devices, sizeof *devices);
    if (!devices)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    kiln_status st = KILN_OK;
    for (size_t i = 0; st == KILN_OK && i < num_devices; i++)
        st = kiln__interop_device_find(via, fn, device_handles[i], &devices[i]);
    struct kiln__interop_native n = { via, fn, native };
    if (st == KILN_OK)
        st = kiln__context_new(fn, devices, num_devices, kiln__interop_context_make, &n, context);
    free(devices);
    return st;
}

static kiln_status kiln__interop_queue_make(const void *arg, kiln_context *context,
                                            kiln_device *device, unsigned flags, void **handle) {
    const struct kiln__interop_native *n = arg;
    kiln_status st = n->via->queue_wrap(context->handle, &device->b, n->native, flags, handle);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", n->fn);
}

kiln_status kiln__interop_queue_wrap(const struct kiln__backend_interop *via, const char *fn,
                                     kiln_context *context, void *device_handle, void *native,
                                     unsigned flags, kiln_queue **queue) {
    *queue = NULL;
    size_t slot = context->num_devices;
    for (size_t i = 0; i < context->num_devices; i++)
        if (context->devices[i]->b.handle == device_handle)
            slot = i;
    if (slot == context->num_devices)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the native queue's device is not one of the context's "
                               "devices",
                               fn);
    struct kiln__interop_native n = { via, fn, native };
    return kiln__queue_new(fn, context, slot, flags, kiln__interop_queue_make, &n, queue);
}

kiln_status kiln__interop_buffer_wrap(const struct kiln__backend_interop *via, const char *fn,
                                      kiln_context *context, void *handle, size_t size,
                                      kiln_buffer **buffer) {
    *buffer = NULL;
    kiln_buffer *b = kiln__calloc(1, sizeof *b);
    if (!b) {
        context->backend->buffer_release(handle);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    }
    b->handle = handle;
    kiln__buffer_init_root(b, context, size);
    *buffer = b;
    return KILN_OK;
}

kiln_status kiln__interop_event_wrap(const struct kiln__backend_interop *via, const char *fn,
                                     kiln_context *context, void *handle, int profiling,
                                     kiln_event **event) {
    kiln_status st = kiln__event_wrap(context, handle, profiling, event);
    return st == KILN_OK ? st : kiln__error_prefix(st, "%s", fn);
}
