/* kiln/opencl.h — kiln's objects as OpenCL objects, and OpenCL objects as
 * kiln's, so that kiln's work can be mixed with, and ordered against,
 * OpenCL code and libraries (CLBlast, clFFT, your own kernels).
 *
 * Opt-in: this header includes <CL/cl.h> (define CL_TARGET_OPENCL_VERSION
 * first, as for any OpenCL code); kiln.h itself includes no vendor header.
 * The functions work on objects of kiln's OpenCL backend only: a CUDA
 * object is KILN_ERROR_MISMATCH, with a message.
 *
 * Names: kiln_opencl_<kiln object>_get(object, &native) exposes,
 * kiln_opencl_<kiln object>_wrap(..., native, &object) wraps. Every call
 * returns a kiln_status (docs/api.md); on failure the result is NULL and
 * kiln_last_error_message() says why.
 *
 * Ownership:
 *  - _get BORROWS: the native handle is valid while the kiln object is and
 *    holds no reference of its own. To keep it longer, clRetain* it (and
 *    clRelease* it yourself). Never clRelease* a borrowed handle.
 *  - _wrap RETAINS: kiln calls clRetain* on the native object, and the
 *    matching clRelease* when the last reference to the new kiln object
 *    goes (after the work queued through it has ended). The caller keeps
 *    its own reference and releases it whenever it likes, before or after.
 *    A wrapped object is a kiln object like any other: kiln_X_retain /
 *    kiln_X_release, usable everywhere.
 *  - Contexts: a native context can only be wrapped if every device in it
 *    is one of kiln's devices (kiln_device_at lists them: the devices of
 *    the same ICD loader; sub-devices only as made by
 *    kiln_device_partition); else KILN_ERROR_NO_DEVICE. Queues, buffers
 *    and events are wrapped into a kiln context and must belong to its
 *    cl_context, else KILN_ERROR_MISMATCH.
 *
 * Ordering with native work:
 *  - kiln work after native work: wrap the native cl_event
 *    (kiln_opencl_event_wrap) and put it in a wait list; or enqueue on a
 *    wrapped native queue (or on kiln's exposed queue): OpenCL orders an
 *    in-order queue's commands, whoever enqueued them.
 *  - native work after kiln work: pass kiln_opencl_event_native's cl_event in
 *    the native wait list (it is a real cl_event of the queue's cl_context;
 *    a kiln event from another context, another device or CUDA is not
 *    usable there: wait for it with kiln_queue_marker on a kiln queue of
 *    this context first and use that marker's event).
 *
 * Threads: every call is thread-safe, like the rest of kiln. kiln's
 * exposed cl_command_queue may be used by native code concurrently with
 * kiln (OpenCL queues are thread-safe). kiln sets kernel arguments only on
 * its own cl_kernels, so a native kernel is never disturbed.
 */
#ifndef KILN_OPENCL_H
#define KILN_OPENCL_H

#include <CL/cl.h>

#include "kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- devices */

/* The cl_device_id of an OpenCL device (a sub-device for a device made by
 * kiln_device_partition). Devices are owned by kiln and live as long as the
 * process: the id stays valid as long. */
KILN_API kiln_status kiln_opencl_device_native(const kiln_device *device, cl_device_id *id);
/* The cl_platform_id of an OpenCL device. */
KILN_API kiln_status kiln_opencl_device_platform(const kiln_device *device,
                                                 cl_platform_id *platform);
/* kiln's device for a cl_device_id (the reverse of kiln_opencl_device_native).
 * KILN_ERROR_NO_DEVICE if kiln does not know it. */
KILN_API kiln_status kiln_opencl_device_find(cl_device_id id, kiln_device **device);

/* --------------------------------------------------------------- contexts */

/* The cl_context of a kiln context (borrowed). */
KILN_API kiln_status kiln_opencl_context_native(const kiln_context *context, cl_context *native);
/* A new kiln context over native (retained), with native's devices in the
 * order clGetContextInfo(CL_CONTEXT_DEVICES) lists them. Each must be one
 * of kiln's devices, else KILN_ERROR_NO_DEVICE. Programs and buffers made
 * in it are ordinary cl_programs and cl_mems of native. */
KILN_API kiln_status kiln_opencl_context_wrap(cl_context native, kiln_context **context);

/* ----------------------------------------------------------------- queues */

/* The cl_command_queue of a kiln queue (borrowed). */
KILN_API kiln_status kiln_opencl_queue_native(const kiln_queue *queue, cl_command_queue *native);
/* A new kiln queue around native (retained), which must belong to
 * context's cl_context and to one of its devices (else
 * KILN_ERROR_MISMATCH). The queue's flags come from native's properties:
 * KILN_QUEUE_OUT_OF_ORDER and KILN_QUEUE_PROFILING where they are set. */
KILN_API kiln_status kiln_opencl_queue_wrap(kiln_context *context, cl_command_queue native,
                                            kiln_queue **queue);

/* ---------------------------------------------------------------- buffers */

/* The cl_mem of a kiln buffer (borrowed): a sub-buffer's own cl_mem for a
 * buffer made by kiln_buffer_create_sub. */
KILN_API kiln_status kiln_opencl_buffer_native(const kiln_buffer *buffer, cl_mem *native);
/* A new kiln buffer around native (retained), a buffer (not an image) of
 * context's cl_context (else KILN_ERROR_MISMATCH); its size is native's
 * CL_MEM_SIZE. kiln_buffer_create_sub works on it unless native is itself
 * a sub-buffer (OpenCL has no sub-buffers of sub-buffers). */
KILN_API kiln_status kiln_opencl_buffer_wrap(kiln_context *context, cl_mem native,
                                             kiln_buffer **buffer);

/* ----------------------------------------------------------------- events */

/* The cl_event of a kiln event (borrowed). Every kiln event of an OpenCL
 * context has one: a command's event, a user event (complete it with
 * kiln_event_set_complete, not clSetUserEventStatus), or a marker. */
KILN_API kiln_status kiln_opencl_event_native(const kiln_event *event, cl_event *native);
/* A new kiln event around native (retained), an event of context's
 * cl_context (else KILN_ERROR_MISMATCH): it completes when native does and
 * may stand in any wait list, callback or continuation. It is not a kiln
 * user event (kiln_event_set_complete refuses it); a native user event is
 * completed natively, with clSetUserEventStatus. Profiling times are
 * available when native's queue has CL_QUEUE_PROFILING_ENABLE. */
KILN_API kiln_status kiln_opencl_event_wrap(kiln_context *context, cl_event native,
                                            kiln_event **event);

#ifdef __cplusplus
}
#endif

#endif
