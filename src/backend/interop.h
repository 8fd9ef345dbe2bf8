/* Native interop: what the public kiln_opencl_* / kiln_cuda_* functions
 * (include/kiln/opencl.h, include/kiln/cuda.h) and the core say to each
 * other.
 *
 * The public functions are backend-specific, so they live in the backend's
 * folder (src/backend/<name>/interop.c), the only code that may see vendor
 * headers. They cannot see kiln's core objects, so they go through the core
 * entry points below (src/core/interop.c): one to get the backend handle of
 * a kiln object, one per object to wrap a backend handle into a new kiln
 * object, one to find kiln's device for a native device. The core in turn
 * asks the backend for the two things only it can make (a backend context
 * or queue around a native one, which needs kiln's device records) through
 * the backend's interop table, kiln__backend.interop.
 *
 * Every entry point takes `via`, the interop table of the calling backend:
 * an object whose backend has another table is KILN_ERROR_MISMATCH ("a CUDA
 * object asked of an OpenCL buffer"), so the core never names a backend.
 * `fn` is the public function's name, put before every message. */
#ifndef KILN_BACKEND_INTEROP_H
#define KILN_BACKEND_INTEROP_H

#include <stddef.h>

#include "backend/backend.h"

struct kiln__backend_interop {
    const char *name; /* "opencl": used in messages */
    /* A new backend context around native (a context the caller checked
     * lies on exactly these devices, in this order). Takes its own hold on
     * native (a retain where the API has one). */
    kiln_status (*context_wrap)(void *native, const kiln__bdevice *const *devices,
                                size_t num_devices, void **context);
    /* A new backend queue of context on device around native (checked by
     * the caller to belong to them). flags: kiln_queue_flags the queue has
     * or is to have. Takes its own hold on native. */
    kiln_status (*queue_wrap)(void *context, const kiln__bdevice *device, void *native,
                              unsigned flags, void **queue);
};

/* The kinds of kiln objects kiln__interop_handle reads. */
typedef enum kiln__interop_object {
    KILN__INTEROP_CONTEXT,
    KILN__INTEROP_QUEUE,
    KILN__INTEROP_BUFFER,
    KILN__INTEROP_EVENT,
} kiln__interop_object;

/* The backend handle of object (a kiln_context, _queue, _buffer or _event,
 * as kind says) into *handle; NULL object or handle pointer is
 * KILN_ERROR_NULL_HANDLE, an object of another backend KILN_ERROR_MISMATCH.
 * For a queue, *device (if not NULL) gets its device's record. */
kiln_status kiln__interop_handle(const struct kiln__backend_interop *via, const char *fn,
                                 kiln__interop_object kind, const void *object, void **handle,
                                 const kiln__bdevice **device);

/* The backend handle of a kiln_device (cl_device_id; the CUDA ordinal) and
 * its record. */
kiln_status kiln__interop_device(const struct kiln__backend_interop *via, const char *fn,
                                 const kiln_device *device, const kiln__bdevice **record);

/* The backend kernel of kernel for device (one of its context's devices,
 * else KILN_ERROR_MISMATCH). */
kiln_status kiln__interop_kernel(const struct kiln__backend_interop *via, const char *fn,
                                 const kiln_kernel *kernel, const kiln_device *device,
                                 void **handle);

/* Loads the backends and makes sure via's backend has devices; else
 * KILN_ERROR_NO_DEVICE (or the registry's status) with a message. Call
 * before using the driver in a function that starts from native objects. */
kiln_status kiln__interop_ready(const struct kiln__backend_interop *via, const char *fn);

/* kiln's device of via's backend whose record has this handle; else
 * KILN_ERROR_NO_DEVICE naming what is known. */
kiln_status kiln__interop_device_find(const struct kiln__backend_interop *via, const char *fn,
                                      void *handle, kiln_device **device);

/* A new kiln context around native, whose devices have these handles (in
 * this order); the backend context comes from via->context_wrap. */
kiln_status kiln__interop_context_wrap(const struct kiln__backend_interop *via, const char *fn,
                                       void *native, size_t num_devices,
                                       void *const *device_handles, kiln_context **context);

/* A new kiln queue of context, on its device with this handle, around
 * native; the backend queue comes from via->queue_wrap. */
kiln_status kiln__interop_queue_wrap(const struct kiln__backend_interop *via, const char *fn,
                                     kiln_context *context, void *device_handle, void *native,
                                     unsigned flags, kiln_queue **queue);

/* A new kiln buffer of context (size bytes) around a backend buffer
 * handle the caller made; takes over that handle (released on failure). */
kiln_status kiln__interop_buffer_wrap(const struct kiln__backend_interop *via, const char *fn,
                                      kiln_context *context, void *handle, size_t size,
                                      kiln_buffer **buffer);

/* A new kiln event of context around a backend event handle the caller
 * made; takes over that handle (released on failure). profiling: the
 * event has profiling times. */
kiln_status kiln__interop_event_wrap(const struct kiln__backend_interop *via, const char *fn,
                                     kiln_context *context, void *handle, int profiling,
                                     kiln_event **event);

#endif
