/* Contexts, command queues, markers and barriers. Backend handles are the
 * native objects: cl_context and cl_command_queue. */
#include <stdio.h>
#include <stdlib.h>

#include "backend/opencl/ocl.h"
#include "base/fault.h"

kiln_status kiln__ocl_context_create(const kiln__bdevice *const *devices, size_t num_devices,
                                     void **context) {
    cl_device_id small[8];
    cl_device_id *ids = small;
    cl_context ctx;
    cl_int err = CL_SUCCESS;

    *context = NULL;
    if (num_devices == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "a context needs at least one device");
    for (size_t i = 1; i < num_devices; i++)
        if (devices[i]->platform != devices[0]->platform)
            return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                                   "OpenCL devices %s and %s are on different platforms; a "
                                   "context spans one platform",
                                   devices[0]->info.id, devices[i]->info.id);
    if (num_devices > sizeof small / sizeof small[0]) {
        ids = kiln__malloc(num_devices * sizeof *ids);
        if (!ids)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "clCreateContext: out of host memory");
    }
    for (size_t i = 0; i < num_devices; i++)
        ids[i] = (cl_device_id)devices[i]->handle;
    cl_context_properties props[3] = { CL_CONTEXT_PLATFORM,
                                       (cl_context_properties)devices[0]->platform, 0 };
    ctx = kiln__cl.clCreateContext(props, (cl_uint)num_devices, ids, NULL, NULL, &err);
    if (ids != small)
        free(ids);
    if (!ctx || err != CL_SUCCESS)
        return kiln__ocl_fail(err != CL_SUCCESS ? err : CL_INVALID_CONTEXT, "clCreateContext");
    *context = ctx;
    return KILN_OK;
}

void kiln__ocl_context_release(void *context) {
    if (context)
        kiln__cl.clReleaseContext((cl_context)context);
}

/* OpenCL major version of a device ("OpenCL 3.0 PoCL ..." -> 3). */
static int device_major(const kiln__bdevice *device) {
    int major = 1, minor = 0;
    if (sscanf(device->info.version, "OpenCL %d.%d", &major, &minor) < 1)
        return 1;
    return major;
}

kiln_status kiln__ocl_queue_create(void *context, const kiln__bdevice *device, unsigned flags,
                                   void **queue) {
    cl_command_queue_properties want = 0, have = 0;
    cl_device_id dev = (cl_device_id)device->handle;
    cl_command_queue q;
    cl_int err = CL_SUCCESS;

    *queue = NULL;
    if (flags & KILN_QUEUE_OUT_OF_ORDER)
        want |= CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    if (flags & KILN_QUEUE_PROFILING)
        want |= CL_QUEUE_PROFILING_ENABLE;
    /* CL_DEVICE_QUEUE_PROPERTIES and CL_DEVICE_QUEUE_ON_HOST_PROPERTIES
     * are the same query. */
    if (kiln__cl.clGetDeviceInfo(dev, CL_DEVICE_QUEUE_PROPERTIES, sizeof have, &have, NULL) ==
            CL_SUCCESS &&
        (want & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) &&
        !(have & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "%s does not support out-of-order queues",
                               device->info.name);
    /* The 2.0 entry point may be exported by the loader yet missing from a
     * 1.x driver: only use it where the device says 2.0 or later. */
    if (kiln__cl.clCreateCommandQueueWithProperties && device_major(device) >= 2) {
        cl_queue_properties props[3] = { CL_QUEUE_PROPERTIES, want, 0 };
        q = kiln__cl.clCreateCommandQueueWithProperties((cl_context)context, dev,
                                                        want ? props : NULL, &err);
    } else {
        q = kiln__cl.clCreateCommandQueue((cl_context)context, dev, want, &err);
    }
    if (!q || err != CL_SUCCESS) {
        if (err == CL_INVALID_QUEUE_PROPERTIES)
            return kiln__ocl_fail_as(err, KILN_ERROR_UNSUPPORTED, "clCreateCommandQueue",
                                     "%s does not "
                                     "support these queue flags (0x%x)",
                                     device->info.name, flags);
        return kiln__ocl_fail(err != CL_SUCCESS ? err : CL_INVALID_VALUE, "clCreateCommandQueue");
    }
    *queue = q;
    return KILN_OK;
}

void kiln__ocl_queue_release(void *queue) {
    if (queue)
        kiln__cl.clReleaseCommandQueue((cl_command_queue)queue);
}

kiln_status kiln__ocl_queue_finish(void *queue) {
    cl_int err = kiln__cl.clFinish((cl_command_queue)queue);
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, "clFinish");
}

kiln_status kiln__ocl_queue_flush(void *queue) {
    cl_int err = kiln__cl.clFlush((cl_command_queue)queue);
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, "clFlush");
}

kiln_status kiln__ocl_queue_marker(void *queue, int barrier, size_t num_wait, void *const *wait,
                                   void **out_event) {
    if (out_event)
        *out_event = NULL;
    /* the two calls take the same arguments */
    __typeof__(&clEnqueueMarkerWithWaitList) f =
        barrier ? kiln__cl.clEnqueueBarrierWithWaitList : kiln__cl.clEnqueueMarkerWithWaitList;
    const char *call = barrier ? "clEnqueueBarrierWithWaitList" : "clEnqueueMarkerWithWaitList";
    if (!f)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "%s need OpenCL 1.2 (%s)",
                               barrier ? "barriers" : "markers", call);
    cl_int err = f((cl_command_queue)queue, KILN__OCL_WAIT(num_wait, wait), (cl_event *)out_event);
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, call);
}
