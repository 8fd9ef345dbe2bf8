/* CUDA devices and contexts (each device's primary context). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
#include "backend/cuda/cuda_internal.h"
#include "base/error.h"
#include "base/fault.h"

static int kiln__cu_attr(CUdevice d, CUdevice_attribute a) {
    int v = 0;
    if (kiln__cu.cuDeviceGetAttribute(&v, a, d) != CUDA_SUCCESS)
        return 0;
    return v;
}

static kiln_status kiln__cu_fill_device(int ordinal, kiln__bdevice *bd) {
    CUdevice d;
    CUresult r = kiln__cu.cuDeviceGet(&d, ordinal);
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuDeviceGet", r);
    memset(bd, 0, sizeof *bd);
    kiln_device_info *in = &bd->info;
    in->backend = KILN_BACKEND_CUDA;
    in->type = KILN_DEVICE_GPU;
    snprintf(in->id, sizeof in->id, "cuda:%d", ordinal);
    r = kiln__cu.cuDeviceGetName(in->name, (int)sizeof in->name, d);
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuDeviceGetName", r);
    snprintf(in->vendor, sizeof in->vendor, "NVIDIA Corporation");
    snprintf(in->platform, sizeof in->platform, "CUDA");
    int major = kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    int minor = kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    snprintf(in->version, sizeof in->version, "CUDA %d.%d", major, minor);
    snprintf(in->driver_version, sizeof in->driver_version, "%d.%d", kiln__cu.driver_version / 1000,
             (kiln__cu.driver_version % 1000) / 10);
    in->compute_units = (unsigned)kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    in->clock_mhz = (unsigned)kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
    size_t total = 0;
    r = kiln__cu.cuDeviceTotalMem(&total, d);
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuDeviceTotalMem", r);
    in->global_mem_bytes = total;
    in->max_alloc_bytes = total;
    /* what a launch may use: the opt-in limit, which launches above the
     * default 48 KiB raise the kernel's attribute to (program.c) */
    in->local_mem_bytes =
        (uint64_t)kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    if (in->local_mem_bytes == 0)
        in->local_mem_bytes =
            (uint64_t)kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    in->l2_cache_bytes = (uint64_t)kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    in->max_work_group_size = (size_t)kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    in->max_work_item_sizes[0] = (size_t)kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    in->max_work_item_sizes[1] = (size_t)kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    in->max_work_item_sizes[2] = (size_t)kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    in->compute_capability = (unsigned)(major * 10 + minor);
    in->subgroup_size = (unsigned)kiln__cu_attr(d, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    in->fp64 = 1;
    in->fp16 = in->compute_capability >= 53;
    snprintf(in->backend_name, sizeof in->backend_name, "cuda");
    in->languages = 1u << KILN_LANG_CUDA_C;
    /* Resident blocks run to completion while others wait for them. */
    in->forward_progress = 1;
    in->device_sleep = in->compute_capability >= 70; /* __nanosleep */
    in->warp_shuffle = 1;                            /* __shfl_*_sync */
    in->is_subdevice = 0;
    bd->extensions = kiln__malloc(1);
    if (!bd->extensions)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "malloc");
    bd->extensions[0] = '\0';
    bd->handle = (void *)(intptr_t)ordinal;
    bd->platform = NULL;
    bd->platform_index = 0;
    bd->device_index = (unsigned)ordinal;
    snprintf(bd->identity, sizeof bd->identity, "%s|sm_%d%d|driver %d|nvrtc %d.%d", in->name, major,
             minor, kiln__cu.driver_version, kiln__cu.nvrtc_major, kiln__cu.nvrtc_minor);
    return KILN_OK;
}

kiln_status kiln__cu_enumerate(kiln__bdevice **devices, size_t *count) {
    *devices = NULL;
    *count = 0;
    int n = 0;
    CUresult r = kiln__cu.cuDeviceGetCount(&n);
    if (r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && n <= 0))
        return KILN_OK;
    if (r != CUDA_SUCCESS)
        return kiln__cu_fail("cuDeviceGetCount", r);
    kiln__bdevice *list = kiln__calloc((size_t)n, sizeof *list);
    if (!list)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    for (int i = 0; i < n; i++) {
        kiln_status st = kiln__cu_fill_device(i, &list[i]);
        if (st != KILN_OK) {
            for (int j = 0; j <= i; j++)
                free(list[j].extensions);
            free(list);
            return st;
        }
    }
    *devices = list;
    *count = (size_t)n;
    return KILN_OK;
}

/* SM partitions are CUDA green contexts (driver 12.4 and later:
 * cuDeviceGetDevResource, cuDevSmResourceSplitByCount,
 * cuDevResourceGenerateDesc, cuGreenCtxCreate). kiln's CUDA devices are
 * ordinals with their primary context throughout the backend, so a green
 * context cannot be a kiln device yet: both forms say which of the two is
 * missing, the driver's entry points or kiln's support (issue 47). */
static kiln_status kiln__cu_no_green(const kiln__bdevice *device) {
    int have =
        kiln__cu_symbol("cuGreenCtxCreate") && kiln__cu_symbol("cuDevSmResourceSplitByCount") &&
        kiln__cu_symbol("cuDevResourceGenerateDesc") && kiln__cu_symbol("cuDeviceGetDevResource");
    if (!have)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "%s: SM partitions need CUDA green contexts, which this NVIDIA "
                               "driver lacks (driver API %d.%d; green contexts came with 12.4)",
                               device->info.id, kiln__cu.driver_version / 1000,
                               kiln__cu.driver_version % 1000 / 10);
    return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                           "%s: the driver has CUDA green contexts (SM partitions), but this "
                           "kiln cannot make them devices of their own yet (use streams, or "
                           "MPS/MIG set up outside kiln)",
                           device->info.id);
}

kiln_status kiln__cu_partition(const kiln__bdevice *device, unsigned units_each,
                               kiln__bdevice *subdevices, size_t capacity, size_t *count) {
    (void)units_each;
    (void)subdevices;
    (void)capacity;
    if (count)
        *count = 0;
    return kiln__cu_no_green(device);
}

kiln_status kiln__cu_partition_counts(const kiln__bdevice *device, const unsigned *counts,
                                      size_t num_counts, kiln__bdevice *subdevices, size_t capacity,
                                      size_t *count) {
    (void)counts;
    (void)num_counts;
    return kiln__cu_partition(device, 0, subdevices, capacity, count);
}

void kiln__cu_context_ref(kiln__cu_context *c) {
    kiln__ref_take(&c->refs);
}

void kiln__cu_context_unref(kiln__cu_context *c) {
    if (!c || !kiln__ref_release(&c->refs))
        return;
    kiln__cu_mem_destroy(c);
    for (size_t i = 0; i < c->n; i++)
        if (c->dev[i].ctx) {
            if (kiln__cu_ctx_use(c->dev[i].ctx) == KILN_OK)
                kiln__cu_fill_unload(&c->dev[i]);
            kiln__cu.cuDevicePrimaryCtxRelease(c->dev[i].dev);
        }
    pthread_mutex_destroy(&c->fill_lock);
    free(c);
}

int kiln__cu_context_find(const kiln__cu_context *c, int ordinal) {
    for (size_t i = 0; i < c->n; i++)
        if (c->dev[i].ordinal == ordinal)
            return (int)i;
    return -1;
}

kiln_status kiln__cu_context_create(const kiln__bdevice *const *devices, size_t num_devices,
                                    void **context) {
    *context = NULL;
    if (num_devices == 0)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "a context needs at least one device");
    kiln__cu_reap();
    kiln__cu_context *c = kiln__calloc(1, sizeof *c + num_devices * sizeof(kiln__cu_dev));
    if (!c)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "calloc");
    atomic_init(&c->refs, 1);
    pthread_mutex_init(&c->mem.lock, NULL);
    pthread_mutex_init(&c->fill_lock, NULL);
    c->n = 0;
    for (size_t i = 0; i < num_devices; i++) {
        kiln__cu_dev *d = &c->dev[i];
        d->ordinal = (int)(intptr_t)devices[i]->handle;
        CUresult r = kiln__cu.cuDeviceGet(&d->dev, d->ordinal);
        if (r == CUDA_SUCCESS)
            r = kiln__cu.cuDevicePrimaryCtxRetain(&d->ctx, d->dev);
        if (r != CUDA_SUCCESS) {
            kiln_status st = kiln__cu_fail("cuDevicePrimaryCtxRetain", r);
            kiln__cu_context_unref(c);
            return st;
        }
        c->n = i + 1;
        d->cc = devices[i]->info.compute_capability;
        d->max_threads = kiln__cu_attr(d->dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
        d->max_block[0] = kiln__cu_attr(d->dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
        d->max_block[1] = kiln__cu_attr(d->dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
        d->max_block[2] = kiln__cu_attr(d->dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
        d->max_grid[0] = kiln__cu_attr(d->dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
        d->max_grid[1] = kiln__cu_attr(d->dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
        d->max_grid[2] = kiln__cu_attr(d->dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
        d->shared_default =
            (size_t)kiln__cu_attr(d->dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
        d->shared_per_block =
            (size_t)kiln__cu_attr(d->dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
        if (d->shared_per_block < d->shared_default)
            d->shared_per_block = d->shared_default;
        if (d->max_threads <= 0)
            d->max_threads = 1024;
        for (int k = 0; k < 3; k++) {
            if (d->max_block[k] <= 0)
                d->max_block[k] = k == 2 ? 64 : 1024;
            if (d->max_grid[k] <= 0)
                d->max_grid[k] = 65535;
        }
    }
    /* Buffers live on the first device; let the others reach them where the
     * hardware allows (best effort: without peer access a kernel on another
     * device cannot use the buffer, copies still work through UVA). */
    for (size_t i = 1; i < c->n; i++) {
        int can = 0;
        if (kiln__cu.cuDeviceCanAccessPeer(&can, c->dev[i].dev, c->dev[0].dev) == CUDA_SUCCESS &&
            can && kiln__cu_ctx_use(c->dev[i].ctx) == KILN_OK)
            (void)kiln__cu.cuCtxEnablePeerAccess(c->dev[0].ctx, 0);
    }
    *context = c;
    return KILN_OK;
}

void kiln__cu_context_release(void *context) {
    if (!context)
        return;
    kiln__cu_reap();
    kiln__cu_context_unref(context);
}
