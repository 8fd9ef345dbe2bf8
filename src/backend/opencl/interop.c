/* Native interop for OpenCL (include/kiln/opencl.h): the public
 * kiln_opencl_* functions, and this backend's interop table. The backend's
 * handles are the native objects themselves (cl_context, cl_command_queue,
 * cl_mem, cl_event), so exposing is reading the handle and wrapping is one
 * clRetain*: the backend's release functions do the matching clRelease*. */
#include <stdlib.h>

#include "backend/interop.h"
#include "backend/opencl/ocl.h"
#include "base/fault.h"
#include "kiln/opencl.h"

/* ---- the interop table (called by the core) --------------------------- */

static kiln_status ocl_context_wrap(void *native, const kiln__bdevice *const *devices,
                                    size_t num_devices, void **context) {
    cl_int err = kiln__cl.clRetainContext((cl_context)native);
    *context = err == CL_SUCCESS ? native : NULL;
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, "clRetainContext");
}

static kiln_status ocl_queue_wrap(void *context, const kiln__bdevice *device, void *native,
                                  unsigned flags, void **queue) {
    cl_int err = kiln__cl.clRetainCommandQueue((cl_command_queue)native);
    *queue = err == CL_SUCCESS ? native : NULL;
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, "clRetainCommandQueue");
}

const struct kiln__backend_interop kiln__ocl_interop = {
    .name = "opencl",
    .context_wrap = ocl_context_wrap,
    .queue_wrap = ocl_queue_wrap,
};

#define VIA (&kiln__ocl_interop)

/* A failed clGet*Info on a native handle the user gave: an invalid handle
 * is the caller's mistake, anything else the driver's. */
static kiln_status info_fail(const char *fn, const char *what, const char *call, cl_int err) {
    if (err == CL_INVALID_CONTEXT || err == CL_INVALID_COMMAND_QUEUE ||
        err == CL_INVALID_MEM_OBJECT || err == CL_INVALID_EVENT)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, err,
                               "%s: native is not a valid %s (%s: %s, %d)", fn, what, call,
                               kiln__ocl_error_name(err), (int)err);
    kiln__ocl_fail(err, call);
    return kiln__error_prefix(KILN_ERROR_DRIVER, "%s", fn);
}

/* Clears *out and checks the native handle and the result pointer. */
#define START_WRAP(fn, native, out)                                                             \
    do {                                                                                        \
        if (!(out))                                                                             \
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: the result pointer is NULL", \
                                   fn);                                                         \
        *(out) = NULL;                                                                          \
        if (!(native))                                                                          \
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: native is NULL", fn);        \
    } while (0)

/* The cl_context behind a kiln context (checked first: a NULL or CUDA
 * context is refused before any OpenCL call). */
static kiln_status context_of(const char *fn, kiln_context *context, cl_context *mine) {
    void *h = NULL;
    kiln_status st = kiln__interop_handle(VIA, fn, KILN__INTEROP_CONTEXT, context, &h, NULL);
    *mine = (cl_context)h;
    return st;
}

/* START_WRAP's checks (out cleared), then context_of: the start of the
 * wraps of a context's objects. */
static kiln_status wrap_begin(const char *fn, const void *native, void **out, kiln_context *context,
                              cl_context *mine) {
    if (!out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: the result pointer is NULL", fn);
    *out = NULL;
    if (!native)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: native is NULL", fn);
    return context_of(fn, context, mine);
}

static kiln_status check_owner(const char *fn, cl_context owner, cl_context mine,
                               const char *what) {
    if (owner == mine)
        return KILN_OK;
    return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                           "%s: the %s belongs to another cl_context than the kiln context's", fn,
                           what);
}

/* ---- devices ------------------------------------------------------------ */

/* The cl_device_id (platform 0) or cl_platform_id (1) of device's record
 * into *out (named out_name), NULL on a failure: the two device queries. */
static kiln_status device_record(const char *fn, const kiln_device *device, int platform,
                                 void **out, const char *out_name) {
    const kiln__bdevice *rec = NULL;
    if (!out)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, out_name);
    *out = NULL;
    kiln_status st = kiln__interop_device(VIA, fn, device, &rec);
    if (st == KILN_OK)
        *out = platform ? rec->platform : rec->handle;
    return st;
}

kiln_status kiln_opencl_device_native(const kiln_device *device, cl_device_id *id) {
    return device_record("kiln_opencl_device_native", device, 0, (void **)id, "id");
}

kiln_status kiln_opencl_device_platform(const kiln_device *device, cl_platform_id *platform) {
    return device_record("kiln_opencl_device_platform", device, 1, (void **)platform, "platform");
}

kiln_status kiln_opencl_device_find(cl_device_id id, kiln_device **device) {
    static const char fn[] = "kiln_opencl_device_find";
    START_WRAP(fn, id, device);
    return kiln__interop_device_find(VIA, fn, id, device);
}

/* ---- contexts ----------------------------------------------------------- */

kiln_status kiln_opencl_context_native(const kiln_context *context, cl_context *native) {
    return kiln__interop_handle(VIA, "kiln_opencl_context_native", KILN__INTEROP_CONTEXT, context,
                                (void **)native, NULL);
}

kiln_status kiln_opencl_context_wrap(cl_context native, kiln_context **context) {
    static const char fn[] = "kiln_opencl_context_wrap";
    START_WRAP(fn, native, context);
    kiln_status st = kiln__interop_ready(VIA, fn);
    if (st != KILN_OK)
        return st;
    size_t bytes = 0;
    cl_int err = kiln__cl.clGetContextInfo(native, CL_CONTEXT_DEVICES, 0, NULL, &bytes);
    if (err != CL_SUCCESS)
        return info_fail(fn, "cl_context", "clGetContextInfo", err);
    size_t n = bytes / sizeof(cl_device_id);
    cl_device_id small[8];
    cl_device_id *ids = n <= 8 ? small : kiln__malloc(n * sizeof *ids);
    if (!ids)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    err = kiln__cl.clGetContextInfo(native, CL_CONTEXT_DEVICES, n * sizeof *ids, ids, NULL);
    if (err != CL_SUCCESS)
        st = info_fail(fn, "cl_context", "clGetContextInfo", err);
    else
        st = kiln__interop_context_wrap(VIA, fn, native, n, (void *const *)ids, context);
    if (ids != small)
        free(ids);
    return st;
}

/* ---- queues ------------------------------------------------------------- */

kiln_status kiln_opencl_queue_native(const kiln_queue *queue, cl_command_queue *native) {
    return kiln__interop_handle(VIA, "kiln_opencl_queue_native", KILN__INTEROP_QUEUE, queue,
                                (void **)native, NULL);
}

kiln_status kiln_opencl_queue_wrap(kiln_context *context, cl_command_queue native,
                                   kiln_queue **queue) {
    static const char fn[] = "kiln_opencl_queue_wrap";
    cl_context owner = NULL, mine = NULL;
    kiln_status st = wrap_begin(fn, native, (void **)queue, context, &mine);
    if (st != KILN_OK)
        return st;
    cl_device_id dev = NULL;
    cl_command_queue_properties props = 0;
    const char *call = "clGetCommandQueueInfo";
    cl_int err =
        kiln__cl.clGetCommandQueueInfo(native, CL_QUEUE_CONTEXT, sizeof owner, &owner, NULL);
    if (err == CL_SUCCESS)
        err = kiln__cl.clGetCommandQueueInfo(native, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
    if (err == CL_SUCCESS)
        err =
            kiln__cl.clGetCommandQueueInfo(native, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (err != CL_SUCCESS)
        return info_fail(fn, "cl_command_queue", call, err);
    st = check_owner(fn, owner, mine, "cl_command_queue");
    if (st != KILN_OK)
        return st;
    unsigned flags = 0;
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        flags |= KILN_QUEUE_OUT_OF_ORDER;
    if (props & CL_QUEUE_PROFILING_ENABLE)
        flags |= KILN_QUEUE_PROFILING;
    return kiln__interop_queue_wrap(VIA, fn, context, dev, native, flags, queue);
}

/* ---- buffers ------------------------------------------------------------ */

kiln_status kiln_opencl_buffer_native(const kiln_buffer *buffer, cl_mem *native) {
    return kiln__interop_handle(VIA, "kiln_opencl_buffer_native", KILN__INTEROP_BUFFER, buffer,
                                (void **)native, NULL);
}

kiln_status kiln_opencl_buffer_wrap(kiln_context *context, cl_mem native, kiln_buffer **buffer) {
    static const char fn[] = "kiln_opencl_buffer_wrap";
    cl_context owner = NULL, mine = NULL;
    kiln_status st = wrap_begin(fn, native, (void **)buffer, context, &mine);
    if (st != KILN_OK)
        return st;
    cl_mem_object_type type = 0;
    size_t size = 0;
    cl_int err = kiln__cl.clGetMemObjectInfo(native, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
    if (err == CL_SUCCESS)
        err = kiln__cl.clGetMemObjectInfo(native, CL_MEM_TYPE, sizeof type, &type, NULL);
    if (err == CL_SUCCESS)
        err = kiln__cl.clGetMemObjectInfo(native, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err != CL_SUCCESS)
        return info_fail(fn, "cl_mem", "clGetMemObjectInfo", err);
    if (type != CL_MEM_OBJECT_BUFFER)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: native is an image or pipe (CL_MEM_TYPE 0x%x), not a "
                               "buffer",
                               fn, (unsigned)type);
    st = check_owner(fn, owner, mine, "cl_mem");
    if (st != KILN_OK)
        return st;
    err = kiln__cl.clRetainMemObject(native);
    if (err != CL_SUCCESS)
        return kiln__ocl_fail(err, "clRetainMemObject");
    return kiln__interop_buffer_wrap(VIA, fn, context, native, size, buffer);
}

/* ---- events ------------------------------------------------------------- */

kiln_status kiln_opencl_event_native(const kiln_event *event, cl_event *native) {
    return kiln__interop_handle(VIA, "kiln_opencl_event_native", KILN__INTEROP_EVENT, event,
                                (void **)native, NULL);
}

kiln_status kiln_opencl_event_wrap(kiln_context *context, cl_event native, kiln_event **event) {
    static const char fn[] = "kiln_opencl_event_wrap";
    cl_command_queue q = NULL;
    cl_context owner = NULL, mine = NULL;
    kiln_status st = wrap_begin(fn, native, (void **)event, context, &mine);
    if (st != KILN_OK)
        return st;
    cl_int err = kiln__cl.clGetEventInfo(native, CL_EVENT_CONTEXT, sizeof owner, &owner, NULL);
    if (err == CL_SUCCESS)
        err = kiln__cl.clGetEventInfo(native, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL);
    if (err != CL_SUCCESS)
        return info_fail(fn, "cl_event", "clGetEventInfo", err);
    st = check_owner(fn, owner, mine, "cl_event");
    if (st != KILN_OK)
        return st;
    cl_command_queue_properties props = 0; /* a user event has no queue */
    if (q && kiln__cl.clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL) !=
                 CL_SUCCESS)
        props = 0;
    err = kiln__cl.clRetainEvent(native);
    if (err != CL_SUCCESS)
        return kiln__ocl_fail(err, "clRetainEvent");
    return kiln__interop_event_wrap(VIA, fn, context, native,
                                    (props & CL_QUEUE_PROFILING_ENABLE) != 0, event);
}
