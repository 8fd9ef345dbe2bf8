/* Buffers: create, sub-buffers, transfers, fill, map. The backend handle is
 * the cl_mem itself. */
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/ocl.h"
#include "base/fault.h"

kiln_status kiln__ocl_buffer_create(void *context, size_t size, unsigned flags,
                                    const void *host_data, void **buffer) {
    cl_mem_flags f;
    cl_int err = CL_SUCCESS;
    cl_mem m;

    *buffer = NULL;
    if (flags & KILN_BUFFER_READ_ONLY)
        f = CL_MEM_READ_ONLY;
    else if (flags & KILN_BUFFER_WRITE_ONLY)
        f = CL_MEM_WRITE_ONLY;
    else
        f = CL_MEM_READ_WRITE;
    if (flags & KILN_BUFFER_HOST_PINNED)
        f |= CL_MEM_ALLOC_HOST_PTR;
    size_t alloc = kiln__buffer_alloc_size(size);
    if (alloc == 0)
        return kiln__error_set(KILN_ERROR_OUT_OF_DEVICE_MEMORY, 0,
                               "a buffer of %zu bytes: more than can be allocated", size);
    /* CL_MEM_COPY_HOST_PTR reads the whole allocation: from a copy padded
     * to it where the caller's bytes end short of it. */
    void *padded = NULL;
    if (host_data && alloc != size) {
        padded = kiln__calloc(1, alloc);
        if (!padded)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc(%zu)", alloc);
        memcpy(padded, host_data, size);
        host_data = padded;
    }
    if (host_data)
        f |= CL_MEM_COPY_HOST_PTR;
    m = kiln__cl.clCreateBuffer((cl_context)context, f, alloc, (void *)host_data, &err);
    free(padded);
    if (!m || err != CL_SUCCESS) {
        if (err == CL_INVALID_BUFFER_SIZE)
            return kiln__ocl_fail_as(err, KILN_ERROR_OUT_OF_DEVICE_MEMORY, "clCreateBuffer",
                                     "%zu bytes is more "
                                     "than the device allows in one buffer",
                                     size);
        return kiln__ocl_fail(err != CL_SUCCESS ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE,
                              "clCreateBuffer");
    }
    *buffer = m;
    return KILN_OK;
}

/* The largest CL_DEVICE_MEM_BASE_ADDR_ALIGN (in bytes) over the devices of
 * the buffer's context; 128 when it cannot be asked. */
static size_t base_alignment(cl_mem m) {
    cl_context ctx = NULL;
    cl_device_id ids[16];
    size_t bytes = 0, best = 0;
    if (kiln__cl.clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof ctx, &ctx, NULL) != CL_SUCCESS ||
        kiln__cl.clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof ids, ids, &bytes) != CL_SUCCESS)
        return 128;
    for (size_t i = 0; i < bytes / sizeof ids[0]; i++) {
        cl_uint bits = 0;
        if (kiln__cl.clGetDeviceInfo(ids[i], CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits,
                                     NULL) == CL_SUCCESS &&
            bits / 8 > best)
            best = bits / 8;
    }
    return best ? best : 128;
}

kiln_status kiln__ocl_buffer_create_sub(void *parent, size_t offset, size_t size, void **buffer) {
    cl_buffer_region region = { offset, size };
    cl_int err = CL_SUCCESS;
    cl_mem m;

    *buffer = NULL;
    /* flags 0: the view inherits the parent's access flags. */
    m = kiln__cl.clCreateSubBuffer((cl_mem)parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (!m || err != CL_SUCCESS) {
        if (err == CL_MISALIGNED_SUB_BUFFER_OFFSET)
            return kiln__ocl_fail_as(err, KILN_ERROR_INVALID_ARGUMENT, "clCreateSubBuffer",
                                     "offset %zu is not a multiple of the device's base address "
                                     "alignment (%zu bytes)",
                                     offset, base_alignment((cl_mem)parent));
        return kiln__ocl_fail(err != CL_SUCCESS ? err : CL_INVALID_VALUE, "clCreateSubBuffer");
    }
    *buffer = m;
    return KILN_OK;
}

void kiln__ocl_buffer_release(void *buffer) {
    if (!buffer)
        return;
    atomic_fetch_add_explicit(&kiln__ocl_mem_epoch, 1, memory_order_release);
    kiln__cl.clReleaseMemObject((cl_mem)buffer);
}

/* Both directions: the two enqueue calls take the same arguments. */
static kiln_status kiln__ocl_transfer(void *queue, void *buffer, int write, size_t offset,
                                      size_t size, void *host, int blocking, size_t num_wait,
                                      void *const *wait, void **out_event) {
    if (out_event)
        *out_event = NULL;
    cl_command_queue q = (cl_command_queue)queue;
    cl_mem m = (cl_mem)buffer;
    cl_bool block = blocking ? CL_TRUE : CL_FALSE;
    cl_event *ev = (cl_event *)out_event;
    cl_int err = write ? kiln__cl.clEnqueueWriteBuffer(q, m, block, offset, size, host,
                                                       KILN__OCL_WAIT(num_wait, wait), ev)
                       : kiln__cl.clEnqueueReadBuffer(q, m, block, offset, size, host,
                                                      KILN__OCL_WAIT(num_wait, wait), ev);
    if (err == CL_SUCCESS)
        return KILN_OK;
    return kiln__ocl_fail(err, write ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer");
}

kiln_status kiln__ocl_buffer_write(void *queue, void *buffer, size_t offset, size_t size,
                                   const void *src, int blocking, size_t num_wait,
                                   void *const *wait, void **out_event) {
    /* the shared helper's pointer is not const; a write only reads it */
    return kiln__ocl_transfer(queue, buffer, 1, offset, size, (void *)src, blocking, num_wait, wait,
                              out_event);
}

kiln_status kiln__ocl_buffer_read(void *queue, void *buffer, size_t offset, size_t size, void *dst,
                                  int blocking, size_t num_wait, void *const *wait,
                                  void **out_event) {
    return kiln__ocl_transfer(queue, buffer, 0, offset, size, dst, blocking, num_wait, wait,
                              out_event);
}

kiln_status kiln__ocl_buffer_copy(void *queue, void *src, size_t src_offset, void *dst,
                                  size_t dst_offset, size_t size, size_t num_wait,
                                  void *const *wait, void **out_event) {
    if (out_event)
        *out_event = NULL;
    cl_int err = kiln__cl.clEnqueueCopyBuffer(
        (cl_command_queue)queue, (cl_mem)src, (cl_mem)dst, src_offset, dst_offset, size,
        KILN__OCL_WAIT(num_wait, wait), (cl_event *)out_event);
    if (err == CL_MEM_COPY_OVERLAP)
        return kiln__ocl_fail_as(err, KILN_ERROR_INVALID_ARGUMENT, "clEnqueueCopyBuffer",
                                 "source and destination regions overlap");
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, "clEnqueueCopyBuffer");
}

kiln_status kiln__ocl_buffer_fill(void *queue, void *buffer, const void *pattern,
                                  size_t pattern_size, size_t offset, size_t size, size_t num_wait,
                                  void *const *wait, void **out_event) {
    cl_int err;
    if (out_event)
        *out_event = NULL;
    if (kiln__cl.clEnqueueFillBuffer) {
        err = kiln__cl.clEnqueueFillBuffer((cl_command_queue)queue, (cl_mem)buffer, pattern,
                                           pattern_size, offset, size,
                                           KILN__OCL_WAIT(num_wait, wait), (cl_event *)out_event);
        return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, "clEnqueueFillBuffer");
    }
    /* OpenCL 1.1: expand the pattern on the host and write it (blocking, so
     * the temporary can go at once). */
    if (pattern_size == 0 || size % pattern_size != 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "fill: size %zu is not a multiple of the "
                               "pattern size %zu",
                               size, pattern_size);
    unsigned char *tmp = kiln__malloc(size ? size : 1);
    if (!tmp)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "fill: out of host memory for %zu bytes", size);
    for (size_t i = 0; i < size; i += pattern_size)
        memcpy(tmp + i, pattern, pattern_size);
    err = kiln__cl.clEnqueueWriteBuffer((cl_command_queue)queue, (cl_mem)buffer, CL_TRUE, offset,
                                        size, tmp, KILN__OCL_WAIT(num_wait, wait),
                                        (cl_event *)out_event);
    free(tmp);
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, "clEnqueueWriteBuffer (fill)");
}

kiln_status kiln__ocl_buffer_map(void *queue, void *buffer, unsigned map_flags, size_t offset,
                                 size_t size, void **host_ptr) {
    cl_map_flags f = 0;
    cl_int err = CL_SUCCESS;
    void *p;

    *host_ptr = NULL;
    if (map_flags & KILN_MAP_READ)
        f |= CL_MAP_READ;
    if (map_flags & KILN_MAP_WRITE)
        f |= CL_MAP_WRITE;
    /* WRITE_INVALIDATE_REGION may not be combined with READ or WRITE. */
    if ((map_flags & KILN_MAP_WRITE_INVALIDATE) && f == 0)
        f = CL_MAP_WRITE_INVALIDATE_REGION;
    else if (map_flags & KILN_MAP_WRITE_INVALIDATE)
        f |= CL_MAP_WRITE;
    p = kiln__cl.clEnqueueMapBuffer((cl_command_queue)queue, (cl_mem)buffer, CL_TRUE, f, offset,
                                    size, 0, NULL, NULL, &err);
    if (err != CL_SUCCESS || !p)
        return kiln__ocl_fail(err != CL_SUCCESS ? err : CL_MAP_FAILURE, "clEnqueueMapBuffer");
    *host_ptr = p;
    return KILN_OK;
}

kiln_status kiln__ocl_buffer_unmap(void *queue, void *buffer, void *host_ptr, size_t num_wait,
                                   void *const *wait, void **out_event) {
    if (out_event)
        *out_event = NULL;
    cl_int err =
        kiln__cl.clEnqueueUnmapMemObject((cl_command_queue)queue, (cl_mem)buffer, host_ptr,
                                         KILN__OCL_WAIT(num_wait, wait), (cl_event *)out_event);
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, "clEnqueueUnmapMemObject");
}
