/* Native interop for CUDA (include/kiln/cuda.h): the public kiln_cuda_*
 * functions, and this backend's interop table. The backend's handles are
 * its own structs (cuda_internal.h): exposing reads their CUDA fields,
 * wrapping builds them around the user's objects, marked `borrowed` where
 * kiln must not destroy what it did not make. CUDA objects have no
 * reference counts, so nothing is retained (kiln/cuda.h says what the
 * caller keeps alive). */
#include <stdint.h>
#include <stdlib.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/interop.h"
#include "base/error.h"
#include "base/fault.h"
#include "kiln/cuda.h"

/* ---- the interop table (called by the core) --------------------------- */

/* A kiln context of the device whose current context is native. Made as
 * kiln's own (which retains the device's primary context, released again
 * by the context's last unref: the pair stays balanced), then pointed at
 * native. For a user-created context the primary one is retained as well;
 * kiln keeps its pinned memory there (kiln__cu_pinned_alloc). */
static kiln_status cu_context_wrap(void *native, const kiln__bdevice *const *devices,
                                   size_t num_devices, void **context) {
    kiln_status st = kiln__cu_context_create(devices, num_devices, context);
    if (st != KILN_OK)
        return st;
    ((kiln__cu_context *)*context)->dev[0].ctx = (CUcontext)native;
    return KILN_OK;
}

/* A kiln queue made as kiln's own (profiling base event and all), whose
 * stream is then swapped for the user's. */
static kiln_status cu_queue_wrap(void *context, const kiln__bdevice *device, void *native,
                                 unsigned flags, void **queue) {
    kiln_status st = kiln__cu_queue_create(context, device, flags, queue);
    if (st != KILN_OK)
        return st;
    kiln__cu_queue *q = *queue;
    /* queue_create left q's context current; its own stream has no work */
    kiln__cu.cuStreamDestroy(q->stream);
    q->stream = q->lanes[0] = (CUstream)native;
    q->borrowed = 1;
    q->native = 1; /* the user's stream: kiln cannot hold back their work */
    return KILN_OK;
}

const struct kiln__backend_interop kiln__cu_interop = {
    .name = "cuda",
    .context_wrap = cu_context_wrap,
    .queue_wrap = cu_queue_wrap,
};

#define VIA (&kiln__cu_interop)

/* The backend handle of a kiln object (checked: not NULL, CUDA). */
static kiln_status handle_of(const char *fn, kiln__interop_object kind, const void *object,
                             void **handle) {
    return kiln__interop_handle(VIA, fn, kind, object, handle, NULL);
}

#define NEED(ptr, fn, name)                                                                \
    do {                                                                                   \
        if (!(ptr))                                                                        \
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, name); \
    } while (0)

/* The ordinal of a CUdevice, or -1. */
static int ordinal_of(CUdevice native) {
    int n = 0;
    if (kiln__cu.cuDeviceGetCount(&n) != CUDA_SUCCESS)
        return -1;
    for (int i = 0; i < n; i++) {
        CUdevice d;
        if (kiln__cu.cuDeviceGet(&d, i) == CUDA_SUCCESS && d == native)
            return i;
    }
    return -1;
}

/* ---- devices ------------------------------------------------------------ */

kiln_status kiln_cuda_device_native(const kiln_device *device, CUdevice *native) {
    static const char fn[] = "kiln_cuda_device_native";
    NEED(native, fn, "native");
    *native = 0;
    const kiln__bdevice *rec = NULL;
    kiln_status st = kiln__interop_device(VIA, fn, device, &rec);
    if (st != KILN_OK)
        return st;
    CUresult r = kiln__cu.cuDeviceGet(native, (int)(intptr_t)rec->handle);
    return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuDeviceGet", r);
}

kiln_status kiln_cuda_device_find(CUdevice native, kiln_device **device) {
    static const char fn[] = "kiln_cuda_device_find";
    NEED(device, fn, "device");
    *device = NULL;
    kiln_status st = kiln__interop_ready(VIA, fn);
    if (st != KILN_OK)
        return st;
    int ordinal = ordinal_of(native);
    if (ordinal < 0)
        return kiln__error_set(KILN_ERROR_NO_DEVICE, 0,
                               "%s: CUdevice %d is not a device of "
                               "this driver",
                               fn, (int)native);
    return kiln__interop_device_find(VIA, fn, (void *)(intptr_t)ordinal, device);
}

/* ---- contexts ----------------------------------------------------------- */

kiln_status kiln_cuda_context_native(const kiln_context *context, CUcontext *native) {
    void *h = NULL;
    NEED(native, "kiln_cuda_context_native", "native");
    kiln_status st = handle_of("kiln_cuda_context_native", KILN__INTEROP_CONTEXT, context, &h);
    *native = st == KILN_OK ? ((kiln__cu_context *)h)->dev[0].ctx : NULL;
    return st;
}

kiln_status kiln_cuda_context_wrap(CUcontext native, kiln_context **context) {
    static const char fn[] = "kiln_cuda_context_wrap";
    NEED(context, fn, "context");
    *context = NULL;
    NEED(native, fn, "native");
    kiln_status st = kiln__interop_ready(VIA, fn);
    if (st != KILN_OK)
        return st;
    CUdevice dev = 0;
    CUcontext popped = NULL;
    CUresult r = kiln__cu.cuCtxPushCurrent(native);
    if (r == CUDA_SUCCESS) {
        r = kiln__cu.cuCtxGetDevice(&dev);
        kiln__cu.cuCtxPopCurrent(&popped);
    }
    if (r != CUDA_SUCCESS) {
        kiln__cu_fail("cuCtxGetDevice", r);
        return kiln__error_prefix(KILN_ERROR_INVALID_ARGUMENT,
                                  "%s: native is not a usable CUcontext", fn);
    }
    void *ordinal = (void *)(intptr_t)ordinal_of(dev);
    return kiln__interop_context_wrap(VIA, fn, native, 1, &ordinal, context);
}

/* ---- queues ------------------------------------------------------------- */

kiln_status kiln_cuda_queue_native(const kiln_queue *queue, CUstream *native) {
    void *h = NULL;
    NEED(native, "kiln_cuda_queue_native", "native");
    kiln_status st = handle_of("kiln_cuda_queue_native", KILN__INTEROP_QUEUE, queue, &h);
    *native = NULL;
    if (st != KILN_OK)
        return st;
    /* an out-of-order queue: its first stream; work put there is ordered
     * with the queue's other commands by kiln barriers around it. From now
     * on the queue cannot hold commands on the host (gate.c) */
    st = kiln__cu_gate_go_native(h);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "kiln_cuda_queue_native");
    *native = ((const kiln__cu_queue *)h)->lanes[0];
    return KILN_OK;
}

kiln_status kiln_cuda_queue_wrap(kiln_context *context, CUstream native, unsigned flags,
                                 kiln_queue **queue) {
    static const char fn[] = "kiln_cuda_queue_wrap";
    NEED(queue, fn, "queue");
    *queue = NULL;
    void *h = NULL;
    kiln_status st = handle_of(fn, KILN__INTEROP_CONTEXT, context, &h);
    if (st != KILN_OK)
        return st;
    NEED(native, fn, "native");
    if (native == CU_STREAM_LEGACY || native == CU_STREAM_PER_THREAD)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: the default stream cannot be wrapped (kiln's transfers "
                               "must not synchronise with other streams): wrap a stream "
                               "made with cuStreamCreate",
                               fn);
    if (flags & ~(unsigned)(KILN_QUEUE_PROFILING | KILN_QUEUE_OUT_OF_ORDER))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown flags 0x%x", fn, flags);
    if (flags & KILN_QUEUE_OUT_OF_ORDER)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: a CUDA stream runs in order (KILN_QUEUE_OUT_OF_ORDER)", fn);
    kiln__cu_context *c = h;
    CUcontext owner = NULL;
    CUresult r = kiln__cu.cuStreamGetCtx(native, &owner);
    if (r != CUDA_SUCCESS) {
        kiln__cu_fail("cuStreamGetCtx", r);
        return kiln__error_prefix(KILN_ERROR_INVALID_ARGUMENT,
                                  "%s: native is not a usable CUstream", fn);
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->dev[i].ctx == owner)
            return kiln__interop_queue_wrap(VIA, fn, context, (void *)(intptr_t)c->dev[i].ordinal,
                                            native, flags, queue);
    return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                           "%s: the stream belongs to another CUcontext than the kiln "
                           "context's",
                           fn);
}

/* ---- buffers ------------------------------------------------------------ */

kiln_status kiln_cuda_buffer_native(const kiln_buffer *buffer, CUdeviceptr *native) {
    void *h = NULL;
    NEED(native, "kiln_cuda_buffer_native", "native");
    kiln_status st = handle_of("kiln_cuda_buffer_native", KILN__INTEROP_BUFFER, buffer, &h);
    *native = st == KILN_OK ? ((kiln__cu_buffer *)h)->ptr : 0;
    return st;
}

/* Checks that [p, p + size) lies in one allocation of ctx. */
static kiln_status check_memory(const char *fn, CUcontext ctx, CUdeviceptr p, size_t size) {
    CUpointer_attribute attrs[3] = { CU_POINTER_ATTRIBUTE_CONTEXT,
                                     CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                     CU_POINTER_ATTRIBUTE_RANGE_SIZE };
    CUcontext owner = NULL;
    CUdeviceptr start = 0;
    size_t range = 0;
    void *data[3] = { &owner, &start, &range };
    CUresult r = kiln__cu.cuPointerGetAttributes(3, attrs, data, p);
    if (r != CUDA_SUCCESS || range == 0) {
        if (r != CUDA_SUCCESS)
            kiln__cu_fail("cuPointerGetAttributes", r);
        else
            kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "no allocation there");
        return kiln__error_prefix(KILN_ERROR_INVALID_ARGUMENT,
                                  "%s: 0x%llx is not device memory CUDA knows", fn,
                                  (unsigned long long)p);
    }
    /* stream-ordered (pool) allocations report no context */
    if (owner && owner != ctx)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the memory belongs to another CUcontext than the kiln "
                               "context's",
                               fn);
    if (size > range - (size_t)(p - start))
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: %zu bytes at 0x%llx run past the end of its allocation "
                               "(%zu bytes from 0x%llx)",
                               fn, size, (unsigned long long)p, range, (unsigned long long)start);
    return KILN_OK;
}

kiln_status kiln_cuda_buffer_wrap(kiln_context *context, CUdeviceptr native, size_t size,
                                  unsigned flags, kiln_buffer **buffer) {
    static const char fn[] = "kiln_cuda_buffer_wrap";
    NEED(buffer, fn, "buffer");
    *buffer = NULL;
    void *h = NULL;
    kiln_status st = handle_of(fn, KILN__INTEROP_CONTEXT, context, &h);
    if (st != KILN_OK)
        return st;
    NEED(native, fn, "native");
    if (size == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: size is 0 (a buffer holds at least one byte)", fn);
    if (flags & ~(unsigned)KILN_CUDA_BUFFER_OWN)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown flags 0x%x", fn, flags);
    kiln__cu_context *c = h;
    st = kiln__cu_ctx_use(c->dev[0].ctx);
    if (st == KILN_OK)
        st = check_memory(fn, c->dev[0].ctx, native, size);
    if (st != KILN_OK)
        return st;
    kiln__cu_buffer *b = kiln__calloc(1, sizeof *b);
    if (!b)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    atomic_init(&b->refs, 1);
    b->ctx = c;
    kiln__cu_context_ref(c);
    b->ptr = native;
    b->size = size;
    b->borrowed = !(flags & KILN_CUDA_BUFFER_OWN);
    pthread_mutex_init(&b->lock, NULL);
    return kiln__interop_buffer_wrap(VIA, fn, context, b, size, buffer);
}

/* ---- kernels ------------------------------------------------------------ */

kiln_status kiln_cuda_kernel_native(const kiln_kernel *kernel, const kiln_device *device,
                                    CUfunction *native) {
    static const char fn[] = "kiln_cuda_kernel_native";
    NEED(native, fn, "native");
    void *h = NULL;
    kiln_status st = kiln__interop_kernel(VIA, fn, kernel, device, &h);
    *native = st == KILN_OK ? ((kiln__cu_kernel *)h)->fn : NULL;
    return st;
}

/* ---- events ------------------------------------------------------------- */

kiln_status kiln_cuda_event_native(const kiln_event *event, CUevent *native) {
    static const char fn[] = "kiln_cuda_event_native";
    void *h = NULL;
    NEED(native, fn, "native");
    *native = NULL;
    kiln_status st = handle_of(fn, KILN__INTEROP_EVENT, event, &h);
    if (st != KILN_OK)
        return st;
    kiln__cu_event *e = h;
    if (e->is_user)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: a user event, or one kiln completed on the host, has no "
                               "CUevent (the host completes it); make a marker that waits for "
                               "it with kiln_queue_marker and use the marker's CUevent",
                               fn);
    if (kiln__cu_event_pending(e))
        kiln__cu_gate_flush_all(); /* held on the host: record it now */
    *native = e->end;
    return KILN_OK;
}
