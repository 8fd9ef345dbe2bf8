/* kiln/cuda.h — kiln's objects as CUDA driver-API objects, and CUDA objects
 * as kiln's, so that kiln's work can be mixed with, and ordered against,
 * CUDA code and libraries (cuBLAS, cuFFT, your own kernels).
 *
 * Opt-in: this header includes <cuda.h> (the driver API; runtime-API
 * handles are the same objects: cudaStream_t is a CUstream, a device
 * pointer a CUdeviceptr, and the runtime's context is the device's primary
 * context). kiln.h itself includes no vendor header. The functions work
 * on objects of kiln's CUDA backend only: an OpenCL object is
 * KILN_ERROR_MISMATCH, with a message. They exist in a kiln built with the
 * CUDA backend (cuda.h found at build time).
 *
 * Names: kiln_cuda_<kiln object>_get(object, &native) exposes,
 * kiln_cuda_<kiln object>_wrap(..., native, &object) wraps. Every call
 * returns a kiln_status (docs/api.md); on failure the result is NULL (0)
 * and kiln_last_error_message() says why.
 *
 * Ownership:
 *  - _get BORROWS: the native handle is valid while the kiln object is.
 *    Never destroy or free it (cuStreamDestroy, cuMemFree, cuEventDestroy).
 *  - CUDA objects have no reference counts, so _wrap cannot retain them:
 *    the caller keeps the native object alive until the new kiln object,
 *    and everything made from it, has been released and its work has
 *    ended. A wrapped stream is never destroyed and a wrapped device
 *    pointer never freed by kiln, unless KILN_CUDA_BUFFER_OWN asks for it.
 *  - Contexts: kiln's own contexts use each device's primary context
 *    (the one the CUDA runtime uses). kiln_cuda_context_wrap also takes a
 *    context made with cuCtxCreate: kiln then allocates, compiles and
 *    launches in it. kiln's pinned staging memory and user-event words
 *    live in the device's primary context, which kiln keeps, so they do not
 *    depend on the user's context.
 *
 * Ordering with native work (CUDA events order streams):
 *  - kiln work after native work: enqueue it on a wrapped stream (in
 *    order), or make kiln's stream wait with
 *    cuStreamWaitEvent(kiln_stream, native_event, 0) before kiln's work.
 *  - native work after kiln work: cuStreamWaitEvent(native_stream,
 *    kiln_cuda_event_native's CUevent, 0), or use kiln's stream.
 *  - kiln's streams are non-blocking (CU_STREAM_NON_BLOCKING): they do not
 *    synchronise with the legacy default stream. A synchronous cuMemcpy*
 *    from pageable memory may return before its DMA has landed; call
 *    cuCtxSynchronize (or use an async copy on a stream ordered with kiln's
 *    by events) before kiln reads what it wrote.
 *  - A kiln command that waits for a kiln user event, or for an event of
 *    another device or backend, only has its CUevent recorded after that
 *    wait on the stream: a native stream waiting for that CUevent waits
 *    for all of it.
 *
 * Threads: every call is thread-safe. kiln's exposed stream may be used by
 * native code concurrently with kiln (streams are thread-safe). kiln makes
 * the right context current before each driver call of its own, on any
 * thread; it does not restore the previous current context, so native code
 * sharing a thread with kiln should set its context (cuCtxSetCurrent)
 * before its own calls, as the CUDA runtime does for itself.
 */
#ifndef KILN_CUDA_H
#define KILN_CUDA_H

#include <cuda.h>

#include "kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- devices */

/* The CUdevice of a CUDA device. */
KILN_API kiln_status kiln_cuda_device_native(const kiln_device *device, CUdevice *native);
/* kiln's device for a CUdevice (the reverse of kiln_cuda_device_native). */
KILN_API kiln_status kiln_cuda_device_find(CUdevice native, kiln_device **device);

/* --------------------------------------------------------------- contexts */

/* The CUcontext of a kiln context (borrowed): the one its first device
 * (kiln_context_device(context, 0)) uses, where its buffers live; for a
 * context kiln made, that device's primary context. */
KILN_API kiln_status kiln_cuda_context_native(const kiln_context *context, CUcontext *native);
/* A new kiln context of one device around native: a primary context
 * (cuDevicePrimaryCtxRetain; kiln retains it too) or one made with
 * cuCtxCreate (not retained: keep it alive, see above). Its device must
 * be one of kiln's devices, else KILN_ERROR_NO_DEVICE. */
KILN_API kiln_status kiln_cuda_context_wrap(CUcontext native, kiln_context **context);

/* ----------------------------------------------------------------- queues */

/* The CUstream of a kiln queue (borrowed). An out-of-order queue runs on
 * several streams: this is its first; order work put on it with the
 * queue's other commands through kiln_queue_barrier before and after.
 * From then on the queue's streams wait for user events on the device
 * (kiln cannot hold back work it does not see), so on this queue a
 * command behind a user event that fails still runs (its event reports
 * the failure); elsewhere kiln holds such commands on the host. */
KILN_API kiln_status kiln_cuda_queue_native(const kiln_queue *queue, CUstream *native);
/* A new kiln queue around native, a stream of context's CUcontext (else
 * KILN_ERROR_MISMATCH); not destroyed by kiln. flags: 0 or
 * KILN_QUEUE_PROFILING (CUDA streams are in order: KILN_QUEUE_OUT_OF_ORDER
 * is KILN_ERROR_UNSUPPORTED). The default streams cannot be wrapped: NULL
 * is KILN_ERROR_NULL_HANDLE, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are
 * KILN_ERROR_INVALID_ARGUMENT; wrap a stream you created. */
KILN_API kiln_status kiln_cuda_queue_wrap(kiln_context *context, CUstream native, unsigned flags,
                                          kiln_queue **queue);

/* ---------------------------------------------------------------- buffers */

/* The device pointer of a kiln buffer (its first byte; a sub-buffer's
 * pointer is the parent's plus its offset). Borrowed: valid while the
 * buffer is. For a KILN_BUFFER_HOST_PINNED buffer it is the device's view
 * of the pinned host memory. */
KILN_API kiln_status kiln_cuda_buffer_native(const kiln_buffer *buffer, CUdeviceptr *native);

/* kiln_cuda_buffer_wrap flags */
enum {
    /* kiln frees the memory (cuMemFree) when the buffer's last reference
     * goes, after the work queued on it has ended. Without it the memory
     * stays the caller's. */
    KILN_CUDA_BUFFER_OWN = 1u << 0,
};

/* A new kiln buffer of size bytes at native, device memory that lies in
 * context's CUcontext (else KILN_ERROR_MISMATCH) with [native,
 * native + size) inside one allocation (else KILN_ERROR_OUT_OF_RANGE).
 * size 0 or unknown flags: KILN_ERROR_INVALID_ARGUMENT. */
KILN_API kiln_status kiln_cuda_buffer_wrap(kiln_context *context, CUdeviceptr native, size_t size,
                                           unsigned flags, kiln_buffer **buffer);

/* ----------------------------------------------------------------- events */

/* The CUevent recorded on the stream when a kiln command ended (borrowed:
 * valid while the kiln event is; kiln reuses it afterwards). A kiln user
 * event, or an event kiln completed on the host (an operation with nothing
 * to do), has no CUevent: KILN_ERROR_UNSUPPORTED; make a marker that waits
 * for it (kiln_queue_marker) and take the marker's CUevent. A CUevent does
 * not carry kiln's failure state (a command behind a failed user event
 * completes as a CUevent without running); ask the kiln event for that.
 * A command kiln holds on the host behind an unset user event is submitted
 * by this call (with a wait on the device), so that its CUevent exists. */
KILN_API kiln_status kiln_cuda_event_native(const kiln_event *event, CUevent *native);

/* ---------------------------------------------------------------- kernels */

/* The CUfunction of a kiln kernel on device (one of its context's
 * devices, else KILN_ERROR_MISMATCH). Borrowed: valid while the kernel is.
 * A CUfunction holds no arguments, so it may be launched natively
 * (cuLaunchKernel, CUDA graphs) alongside kiln's own launches; its
 * parameters are the kernel's, in order, with a kiln buffer passed as its
 * CUdeviceptr (kiln_cuda_buffer_native). OpenCL has no such call: a
 * cl_kernel holds its arguments, which kiln sets and caches. */
KILN_API kiln_status kiln_cuda_kernel_native(const kiln_kernel *kernel, const kiln_device *device,
                                             CUfunction *native);

#ifdef __cplusplus
}
#endif

#endif
