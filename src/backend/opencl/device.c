/* Platforms and devices: enumeration with every kiln_device_info field, and
 * device fission. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/ocl.h"
#include "base/fault.h"

/* NVIDIA's cl_nv_device_attribute_query (not in every cl_ext.h). */
#define KILN__CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define KILN__CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#define KILN__CL_DEVICE_WARP_SIZE_NV 0x4003

static void dev_str(cl_device_id d, cl_device_info what, char *buf, size_t cap) {
    buf[0] = '\0';
    if (kiln__cl.clGetDeviceInfo(d, what, cap, buf, NULL) != CL_SUCCESS)
        buf[0] = '\0';
    buf[cap - 1] = '\0';
}

static void plat_str(cl_platform_id p, cl_platform_info what, char *buf, size_t cap) {
    buf[0] = '\0';
    if (kiln__cl.clGetPlatformInfo(p, what, cap, buf, NULL) != CL_SUCCESS)
        buf[0] = '\0';
    buf[cap - 1] = '\0';
}

static uint64_t dev_u64(cl_device_id d, cl_device_info what) {
    cl_ulong v = 0;
    if (kiln__cl.clGetDeviceInfo(d, what, sizeof v, &v, NULL) != CL_SUCCESS)
        return 0;
    return v;
}

static unsigned dev_uint(cl_device_id d, cl_device_info what) {
    cl_uint v = 0;
    if (kiln__cl.clGetDeviceInfo(d, what, sizeof v, &v, NULL) != CL_SUCCESS)
        return 0;
    return v;
}

/* The extension string, malloc'd ("" when the query fails). */
static char *dev_extensions(cl_device_id d) {
    size_t n = 0;
    char *s;
    if (kiln__cl.clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || n == 0)
        return kiln__calloc(1, 1);
    s = kiln__malloc(n + 1);
    if (!s)
        return NULL;
    if (kiln__cl.clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, s, NULL) != CL_SUCCESS)
        n = 0;
    s[n] = '\0';
    return s;
}

/* Whole-word search in a space-separated extension list. */
static int has_ext(const char *list, const char *name) {
    size_t len = strlen(name);
    const char *p = list;
    while (p && (p = strstr(p, name)) != NULL) {
        int start = p == list || p[-1] == ' ';
        int end = p[len] == '\0' || p[len] == ' ';
        if (start && end)
            return 1;
        p += len;
    }
    return 0;
}

/* Fills out for device d of platform p. Returns KILN_OK or out of memory. */
static kiln_status fill_device(cl_platform_id p, cl_device_id d, unsigned pi, unsigned di,
                               kiln__bdevice *out) {
    kiln_device_info *info = &out->info;
    char pname[256], pversion[256];
    cl_device_type type = 0;
    size_t sizes[3] = { 0, 0, 0 };
    size_t wg = 0;
    cl_device_fp_config fp64cfg = 0;

    memset(out, 0, sizeof *out);
    out->handle = d;
    out->platform = p;
    out->platform_index = pi;
    out->device_index = di;
    out->extensions = dev_extensions(d);
    if (!out->extensions)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "OpenCL enumerate: out of host memory");

    info->backend = KILN_BACKEND_OPENCL;
    snprintf(info->backend_name, sizeof info->backend_name, "opencl");
    info->languages = 1u << KILN_LANG_OPENCL_C;
    kiln__cl.clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    if (type & CL_DEVICE_TYPE_GPU)
        info->type = KILN_DEVICE_GPU;
    else if (type & CL_DEVICE_TYPE_ACCELERATOR)
        info->type = KILN_DEVICE_ACCELERATOR;
    else if (type & CL_DEVICE_TYPE_CPU)
        info->type = KILN_DEVICE_CPU;
    else
        info->type = KILN_DEVICE_OTHER;
    snprintf(info->id, sizeof info->id, "opencl:%u:%u", pi, di);
    dev_str(d, CL_DEVICE_NAME, info->name, sizeof info->name);
    dev_str(d, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    plat_str(p, CL_PLATFORM_NAME, pname, sizeof pname);
    plat_str(p, CL_PLATFORM_VERSION, pversion, sizeof pversion);
    snprintf(info->platform, sizeof info->platform, "%s", pname);
    dev_str(d, CL_DEVICE_VERSION, info->version, sizeof info->version);
    dev_str(d, CL_DRIVER_VERSION, info->driver_version, sizeof info->driver_version);
    info->compute_units = dev_uint(d, CL_DEVICE_MAX_COMPUTE_UNITS);
    info->clock_mhz = dev_uint(d, CL_DEVICE_MAX_CLOCK_FREQUENCY);
    info->global_mem_bytes = dev_u64(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    info->local_mem_bytes = dev_u64(d, CL_DEVICE_LOCAL_MEM_SIZE);
    info->max_alloc_bytes = dev_u64(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    info->l2_cache_bytes = dev_u64(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
    kiln__cl.clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
    info->max_work_group_size = wg;
    kiln__cl.clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, NULL);
    memcpy(info->max_work_item_sizes, sizes, sizeof sizes);
    kiln__cl.clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64cfg, &fp64cfg, NULL);
    info->fp64 = fp64cfg != 0 || has_ext(out->extensions, "cl_khr_fp64");
    info->fp16 = has_ext(out->extensions, "cl_khr_fp16");
    if (has_ext(out->extensions, "cl_nv_device_attribute_query")) {
        unsigned major = dev_uint(d, KILN__CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV);
        unsigned minor = dev_uint(d, KILN__CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV);
        info->compute_capability = major * 10 + minor;
        info->subgroup_size = dev_uint(d, KILN__CL_DEVICE_WARP_SIZE_NV);
    }
    /* OpenCL promises no forward progress between work-groups. GPUs get
     * it: every GPU driver kiln has run on gives it, and the single-pass
     * scan has relied on it there since it was written. Other devices do
     * not: nothing promises it on them either, and on a CPU the look-back
     * scan is slower than the three-phase one, so nothing gains. */
    info->forward_progress = info->type == KILN_DEVICE_GPU;
    /* OpenCL C has no sleep builtin; NVIDIA's compiler takes inline PTX,
     * and nanosleep needs compute capability 7.0 (the prelude's
     * kiln_sleep_ns) */
    info->device_sleep = info->compute_capability >= 70;
    info->warp_shuffle = 0; /* sub-group shuffles are not used from OpenCL */
    /* Anything that may change a compiled binary. */
    snprintf(out->identity, sizeof out->identity, "%.100s|%.100s|%.100s|%.60s|%.80s|%.60s", pname,
             pversion, info->name, info->vendor, info->version, info->driver_version);
    return KILN_OK;
}

static void free_devices(kiln__bdevice *devs, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(devs[i].extensions);
    free(devs);
}

kiln_status kiln__ocl_enumerate(kiln__bdevice **devices, size_t *count) {
    cl_uint np = 0;
    cl_platform_id *plats = NULL;
    kiln__bdevice *out = NULL;
    size_t n = 0, cap = 0;
    cl_int err;
    kiln_status st = KILN_OK;

    *devices = NULL;
    *count = 0;
    err = kiln__cl.clGetPlatformIDs(0, NULL, &np);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && np == 0))
        return KILN_OK; /* the core says what to install */
    if (err != CL_SUCCESS)
        return kiln__ocl_fail(err, "clGetPlatformIDs");
    plats = kiln__calloc(np, sizeof *plats);
    if (!plats)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "OpenCL enumerate: out of host memory");
    err = kiln__cl.clGetPlatformIDs(np, plats, NULL);
    if (err != CL_SUCCESS) {
        free(plats);
        return kiln__ocl_fail(err, "clGetPlatformIDs");
    }
    for (cl_uint p = 0; p < np && st == KILN_OK; p++) {
        cl_uint nd = 0;
        cl_device_id *ids;
        err = kiln__cl.clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
        if (err != CL_SUCCESS || nd == 0)
            continue; /* a platform without devices is not an error */
        ids = kiln__calloc(nd, sizeof *ids);
        if (!ids) {
            st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                 "OpenCL enumerate: out of host memory");
            break;
        }
        err = kiln__cl.clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL);
        if (err != CL_SUCCESS) {
            free(ids);
            continue;
        }
        for (cl_uint d = 0; d < nd; d++) {
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 8;
                kiln__bdevice *grown = kiln__realloc(out, ncap * sizeof *out);
                if (!grown) {
                    st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                         "OpenCL enumerate: out of memory");
                    break;
                }
                out = grown;
                cap = ncap;
            }
            st = fill_device(plats[p], ids[d], p, d, &out[n]);
            if (st != KILN_OK)
                break;
            n++;
        }
        free(ids);
    }
    free(plats);
    if (st != KILN_OK) {
        free_devices(out, n);
        return st;
    }
    *devices = out;
    *count = n;
    return KILN_OK;
}

static kiln_status ocl_split(const kiln__bdevice *device, unsigned units_each,
                             const unsigned *counts, size_t num_counts, kiln__bdevice *subdevices,
                             size_t capacity, size_t *count);

kiln_status kiln__ocl_partition(const kiln__bdevice *device, unsigned units_each,
                                kiln__bdevice *subdevices, size_t capacity, size_t *count) {
    return ocl_split(device, units_each, NULL, 0, subdevices, capacity, count);
}

kiln_status kiln__ocl_partition_counts(const kiln__bdevice *device, const unsigned *counts,
                                       size_t num_counts, kiln__bdevice *subdevices,
                                       size_t capacity, size_t *count) {
    return ocl_split(device, 0, counts, num_counts, subdevices, capacity, count);
}

/* Whether device can be split as asked: OpenCL 1.2's clCreateSubDevices,
 * the partition type (want) among the device's, units_each in range. */
static kiln_status ocl_split_check(const kiln__bdevice *device, unsigned units_each,
                                   const unsigned *counts, cl_device_partition_property want) {
    cl_device_partition_property supported[8];
    size_t nsup = 0;
    int supports = 0;
    if (!kiln__cl.clCreateSubDevices)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "device fission needs OpenCL 1.2 "
                               "(clCreateSubDevices is missing)");
    if (kiln__cl.clGetDeviceInfo((cl_device_id)device->handle, CL_DEVICE_PARTITION_PROPERTIES,
                                 sizeof supported, supported, &nsup) == CL_SUCCESS) {
        for (size_t i = 0; i < nsup / sizeof supported[0]; i++)
            if (supported[i] == want)
                supports = 1;
    }
    if (!supports)
        return kiln__error_set(
            KILN_ERROR_UNSUPPORTED, 0, "%s cannot be partitioned %s (%s unsupported)",
            device->info.name, counts ? "by counts" : "equally",
            counts ? "CL_DEVICE_PARTITION_BY_COUNTS" : "CL_DEVICE_PARTITION_EQUALLY");
    if (!counts && (units_each == 0 || units_each > device->info.compute_units))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "units_each is %u; %s has %u compute units", units_each,
                               device->info.name, device->info.compute_units);
    return KILN_OK;
}

/* Makes the n sub-devices of props and fills up to capacity of them into
 * subdevices (the rest released); *made_out says how many. On failure none
 * is left. */
static kiln_status ocl_split_make(const kiln__bdevice *device,
                                  const cl_device_partition_property *props, cl_uint n,
                                  kiln__bdevice *subdevices, size_t capacity, size_t *made_out) {
    kiln_status st = KILN_OK;
    cl_device_id *ids = kiln__calloc(n ? n : 1, sizeof *ids);
    if (!ids)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                               "device partition: out of host memory");
    cl_int err = kiln__cl.clCreateSubDevices((cl_device_id)device->handle, props, n, ids, NULL);
    if (err != CL_SUCCESS) {
        free(ids);
        return kiln__ocl_fail(err, "clCreateSubDevices");
    }
    size_t made = 0;
    for (cl_uint i = 0; i < n; i++) {
        if (made < capacity && st == KILN_OK) {
            st = fill_device((cl_platform_id)device->platform, ids[i], device->platform_index,
                             device->device_index, &subdevices[made]);
            if (st == KILN_OK) {
                kiln_device_info *info = &subdevices[made].info;
                info->is_subdevice = 1;
                snprintf(info->id, sizeof info->id, "%.20s.%u", device->info.id, (unsigned)i);
                made++;
                continue;
            }
        }
        if (kiln__cl.clReleaseDevice)
            kiln__cl.clReleaseDevice(ids[i]);
    }
    free(ids);
    if (st != KILN_OK) {
        for (size_t i = 0; i < made; i++) {
            free(subdevices[i].extensions);
            subdevices[i].extensions = NULL;
            if (kiln__cl.clReleaseDevice)
                kiln__cl.clReleaseDevice((cl_device_id)subdevices[i].handle);
        }
        return st;
    }
    *made_out = made;
    return KILN_OK;
}

/* CL_DEVICE_PARTITION_EQUALLY (counts NULL) or _BY_COUNTS. */
static kiln_status ocl_split(const kiln__bdevice *device, unsigned units_each,
                             const unsigned *counts, size_t num_counts, kiln__bdevice *subdevices,
                             size_t capacity, size_t *count) {
    cl_device_id parent = (cl_device_id)device->handle;
    cl_device_partition_property eq[3] = { CL_DEVICE_PARTITION_EQUALLY,
                                           (cl_device_partition_property)units_each, 0 };
    cl_device_partition_property *props = eq;
    cl_device_partition_property want =
        counts ? CL_DEVICE_PARTITION_BY_COUNTS : CL_DEVICE_PARTITION_EQUALLY;
    if (counts) {
        props = kiln__calloc(num_counts + 3, sizeof *props);
        if (!props)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of host memory");
        props[0] = CL_DEVICE_PARTITION_BY_COUNTS;
        for (size_t i = 0; i < num_counts; i++)
            props[1 + i] = (cl_device_partition_property)counts[i];
        props[1 + num_counts] = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END;
        props[2 + num_counts] = 0;
    }
    cl_uint n = 0;
    cl_int err;

    *count = 0;
    kiln_status st = ocl_split_check(device, units_each, counts, want);
    if (st != KILN_OK)
        goto out;
    err = kiln__cl.clCreateSubDevices(parent, props, 0, NULL, &n);
    if (err != CL_SUCCESS) {
        st = kiln__ocl_fail(err, "clCreateSubDevices");
        if (err == CL_INVALID_VALUE || err == CL_DEVICE_PARTITION_FAILED ||
            err == CL_INVALID_DEVICE_PARTITION_COUNT)
            st = kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, err,
                                 "clCreateSubDevices: %s (%d) splitting %s %s",
                                 kiln__ocl_error_name(err), (int)err, device->info.name,
                                 counts ? "by counts" : "into equal parts");
        goto out;
    }
    if (capacity == 0 || !subdevices)
        *count = n; /* a query: how many there would be */
    else
        st = ocl_split_make(device, props, n, subdevices, capacity, count);
out:
    if (props != eq)
        free(props);
    return st;
}
