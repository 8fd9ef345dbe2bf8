/* Internals of the OpenCL backend: the dlopen'd function table, error
 * mapping, and the functions each file contributes to the backend table. */
#ifndef KILN_BACKEND_OPENCL_OCL_H
#define KILN_BACKEND_OPENCL_OCL_H

/* We only take types and prototypes (for __typeof__) from the headers; the
 * 1.2-deprecated entry points are resolved too, as fallbacks for old
 * drivers, so their declarations must not warn. */
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <pthread.h>
#include <stdatomic.h>

#include "backend/backend.h"
#include "base/error.h"

/* Entry points every OpenCL 1.1 ICD loader exports. */
#define KILN__CL_REQUIRED(X)     \
    X(clGetPlatformIDs)          \
    X(clGetPlatformInfo)         \
    X(clGetDeviceIDs)            \
    X(clGetDeviceInfo)           \
    X(clCreateContext)           \
    X(clReleaseContext)          \
    X(clGetContextInfo)          \
    X(clCreateCommandQueue)      \
    X(clReleaseCommandQueue)     \
    X(clGetCommandQueueInfo)     \
    X(clFinish)                  \
    X(clFlush)                   \
    X(clCreateBuffer)            \
    X(clCreateSubBuffer)         \
    X(clReleaseMemObject)        \
    X(clGetMemObjectInfo)        \
    X(clEnqueueReadBuffer)       \
    X(clEnqueueWriteBuffer)      \
    X(clEnqueueCopyBuffer)       \
    X(clEnqueueMapBuffer)        \
    X(clEnqueueUnmapMemObject)   \
    X(clCreateProgramWithSource) \
    X(clCreateProgramWithBinary) \
    X(clBuildProgram)            \
    X(clReleaseProgram)          \
    X(clGetProgramInfo)          \
    X(clGetProgramBuildInfo)     \
    X(clCreateKernel)            \
    X(clReleaseKernel)           \
    X(clGetKernelInfo)           \
    X(clSetKernelArg)            \
    X(clEnqueueNDRangeKernel)    \
    X(clWaitForEvents)           \
    X(clGetEventInfo)            \
    X(clGetEventProfilingInfo)   \
    X(clSetEventCallback)        \
    X(clCreateUserEvent)         \
    X(clSetUserEventStatus)      \
    X(clRetainEvent)             \
    X(clReleaseEvent)            \
    X(clRetainContext)           \
    X(clRetainCommandQueue)      \
    X(clRetainMemObject)

/* OpenCL 1.2 / 2.0 entry points: used when present. */
#define KILN__CL_OPTIONAL(X)        \
    X(clCreateSubDevices)           \
    X(clReleaseDevice)              \
    X(clEnqueueFillBuffer)          \
    X(clEnqueueMarkerWithWaitList)  \
    X(clEnqueueBarrierWithWaitList) \
    X(clCreateCommandQueueWithProperties)

typedef struct kiln__cl_api {
#define KILN__CL_MEMBER(fn) __typeof__(&fn) fn;
    KILN__CL_REQUIRED(KILN__CL_MEMBER)
    KILN__CL_OPTIONAL(KILN__CL_MEMBER)
#undef KILN__CL_MEMBER
} kiln__cl_api;

/* Filled by kiln__ocl_load (probe.c); read-only afterwards. */
extern kiln__cl_api kiln__cl;

/* Bumped whenever a cl_mem is released: a kernel's remembered buffer
 * arguments are only trusted while it is unchanged (a new cl_mem may reuse a
 * freed one's address, with another device address behind it). */
extern atomic_uint kiln__ocl_mem_epoch;

/* "CL_INVALID_KERNEL_ARGS" for -52; "CL_UNKNOWN_ERROR" otherwise. */
const char *kiln__ocl_error_name(cl_int code);
/* Maps a cl_int to a kiln_status and records "what: CL_NAME (code)". */
kiln_status kiln__ocl_fail(cl_int code, const char *what);
/* Records "what: CL_NAME (code): <why, printf-formatted>" as status: for
 * the codes that mean something more specific than kiln__ocl_fail says. */
kiln_status kiln__ocl_fail_as(cl_int code, kiln_status status, const char *what, const char *why,
                              ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* probe.c */
kiln_status kiln__ocl_load(void);
/* device.c */
kiln_status kiln__ocl_enumerate(kiln__bdevice **devices, size_t *count);
kiln_status kiln__ocl_partition(const kiln__bdevice *device, unsigned units_each,
                                kiln__bdevice *subdevices, size_t capacity, size_t *count);
kiln_status kiln__ocl_partition_counts(const kiln__bdevice *device, const unsigned *counts,
                                       size_t num_counts, kiln__bdevice *subdevices,
                                       size_t capacity, size_t *count);
/* queue.c */
kiln_status kiln__ocl_context_create(const kiln__bdevice *const *devices, size_t num_devices,
                                     void **context);
void kiln__ocl_context_release(void *context);
kiln_status kiln__ocl_queue_create(void *context, const kiln__bdevice *device, unsigned flags,
                                   void **queue);
void kiln__ocl_queue_release(void *queue);
kiln_status kiln__ocl_queue_finish(void *queue);
kiln_status kiln__ocl_queue_flush(void *queue);
kiln_status kiln__ocl_queue_marker(void *queue, int barrier, size_t num_wait, void *const *wait,
                                   void **out_event);
/* memory.c */
kiln_status kiln__ocl_buffer_create(void *context, size_t size, unsigned flags,
                                    const void *host_data, void **buffer);
kiln_status kiln__ocl_buffer_create_sub(void *parent, size_t offset, size_t size, void **buffer);
void kiln__ocl_buffer_release(void *buffer);
kiln_status kiln__ocl_buffer_write(void *queue, void *buffer, size_t offset, size_t size,
                                   const void *src, int blocking, size_t num_wait,
                                   void *const *wait, void **out_event);
kiln_status kiln__ocl_buffer_read(void *queue, void *buffer, size_t offset, size_t size, void *dst,
                                  int blocking, size_t num_wait, void *const *wait,
                                  void **out_event);
kiln_status kiln__ocl_buffer_copy(void *queue, void *src, size_t src_offset, void *dst,
                                  size_t dst_offset, size_t size, size_t num_wait,
                                  void *const *wait, void **out_event);
kiln_status kiln__ocl_buffer_fill(void *queue, void *buffer, const void *pattern,
                                  size_t pattern_size, size_t offset, size_t size, size_t num_wait,
                                  void *const *wait, void **out_event);
kiln_status kiln__ocl_buffer_map(void *queue, void *buffer, unsigned map_flags, size_t offset,
                                 size_t size, void **host_ptr);
kiln_status kiln__ocl_buffer_unmap(void *queue, void *buffer, void *host_ptr, size_t num_wait,
                                   void *const *wait, void **out_event);
/* program.c */
kiln_status kiln__ocl_program_build(void *context, const kiln__bdevice *device, const char *source,
                                    const char *options, void **program, char **log);
kiln_status kiln__ocl_program_binary(void *program, void **binary, size_t *size);
/* PoCL's program binaries (pocl_binary.c): whether a binary is one, and
 * NULL if it is whole, else what is wrong with it (a binary serialised
 * while another process rewrote PoCL's cache files; PoCL aborts on it). */
int kiln__ocl_is_pocl_binary(const void *binary, size_t size);
const char *kiln__ocl_pocl_binary_check(const void *binary, size_t size);
kiln_status kiln__ocl_program_load(void *context, const kiln__bdevice *device, const void *binary,
                                   size_t size, const char *options, void **program);
void kiln__ocl_program_release(void *program);
kiln_status kiln__ocl_kernel_create(void *program, const char *name, void **kernel);
void kiln__ocl_kernel_release(void *kernel);
/* Sets the kernel's arguments and runs *err = fn(cl_kernel, user) with
 * them set, as one step under the kernel's lock (a command buffer records a
 * launch so: graph.c). A status other than KILN_OK: the arguments failed. */
kiln_status kiln__ocl_kernel_with_args(void *kernel, size_t num_args, const kiln__barg *args,
                                       cl_int (*fn)(cl_kernel k, void *user), void *user,
                                       cl_int *err);
/* probe.c: a symbol of the loaded OpenCL library (NULL if none). */
void *kiln__ocl_symbol(const char *name);
/* graph.c: cl_khr_command_buffer (backend.h's kiln__backend_graph). */
extern const struct kiln__backend_graph kiln__ocl_graph_table;
kiln_status kiln__ocl_kernel_launch(void *queue, void *kernel, unsigned dims, const size_t *global,
                                    const size_t *local, size_t num_args, const kiln__barg *args,
                                    size_t num_wait, void *const *wait, void **out_event);
/* event.c */
kiln_status kiln__ocl_event_wait(size_t num, void *const *events);
kiln_status kiln__ocl_event_state(void *event, kiln_event_state *state);
kiln_status kiln__ocl_event_times(void *event, kiln_event_times *times);
kiln_status kiln__ocl_event_notify(void *event, kiln__notify_fn fn, void *arg);
kiln_status kiln__ocl_user_event_create(void *context, void **event);
kiln_status kiln__ocl_user_event_set(void *event, int failed);
void kiln__ocl_event_retain(void *event);
void kiln__ocl_event_release(void *event);

/* interop.c: the backend's interop table (backend/interop.h) */
extern const struct kiln__backend_interop kiln__ocl_interop;

/* Wait lists arrive as void *const *; cl_event is a pointer, so the array
 * is used as is. */
#define KILN__OCL_WAIT(num, wait) (cl_uint)(num), ((num) ? (const cl_event *)(wait) : NULL)

#endif
