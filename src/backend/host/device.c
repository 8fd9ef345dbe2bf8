/* The one host device: this machine's CPUs, as the OpenMP threads the
 * kernels run on; and its sub-devices (fission): disjoint ranges of its
 * threads, each pinned to its own CPUs (queue.c pins the workers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/host/host.h"
#include "base/embedded.h"
#include "base/fault.h"
#include "base/strbuf.h"

kiln_status kiln__host_enumerate(kiln__bdevice **devices, size_t *count) {
    kiln__bdevice *d = kiln__calloc(1, sizeof *d);
    *devices = NULL;
    *count = 0;
    if (!d)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host enumerate: out of memory");
    d->extensions = kiln__strdup("");
    if (!d->extensions) {
        free(d);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host enumerate: out of memory");
    }
    kiln_device_info *info = &d->info;
    info->backend = KILN_BACKEND_HOST;
    info->type = KILN_DEVICE_CPU;
    snprintf(info->id, sizeof info->id, "host:0");
    snprintf(info->name, sizeof info->name, "%s", kiln__hcc.cpu);
    snprintf(info->vendor, sizeof info->vendor, "kiln host backend");
    snprintf(info->platform, sizeof info->platform, "kiln host (C compiler + OpenMP)");
    snprintf(info->version, sizeof info->version, "kiln host 1 (%u threads)", kiln__hcc.threads);
    snprintf(info->driver_version, sizeof info->driver_version, "%.120s", kiln__hcc.version);
    info->compute_units = kiln__hcc.threads;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    info->global_mem_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    info->max_alloc_bytes = info->global_mem_bytes / 2;
    info->local_mem_bytes = 256 * 1024;
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    info->l2_cache_bytes = l2 > 0 ? (uint64_t)l2 : 0;
    info->max_work_group_size = 1024;
    info->max_work_item_sizes[0] = 1024;
    info->max_work_item_sizes[1] = 1024;
    info->max_work_item_sizes[2] = 1024;
    info->fp64 = 1;
    info->fp16 = 0;
    snprintf(info->backend_name, sizeof info->backend_name, "host");
    info->languages = 0;
    /* The groups of a launch are spread over a fixed number of threads, one
     * group after another: a group spin-waiting for a later one may wait
     * for ever. */
    info->forward_progress = 0;
    info->device_sleep = 0;
    info->warp_shuffle = 0;
    info->subgroup_size = 0;
    d->handle = NULL; /* the whole device (a sub-device's is its kiln__hpart) */
    d->platform_index = 0;
    d->device_index = 0;
    /* what makes the shared objects: the compiler, the CPU (-march=native),
     * the runtime appended to every source and the rewrite's version */
    const char *rt = kiln__embedded_file("prelude_host_rt.h");
    uint64_t h = 1469598103934665603ull;
    for (const char *c = rt ? rt : ""; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    /* the compiler flags: program.c's set (bump KILN__HOST_FLAGS when it
     * changes) and what the environment changes in it */
    const char *dbg = getenv("KILN_HOST_DEBUG"), *cflags = getenv("KILN_HOST_CFLAGS");
    snprintf(d->identity, sizeof d->identity,
             "host|flags %d|debug %.8s%s|cflags %.60s|runtime %016llx|%.120s|%.120s|%.80s|"
             "features %016llx",
             KILN__HOST_FLAGS, dbg ? dbg : "", kiln__host_process_asan() ? " asan" : "",
             cflags ? cflags : "", (unsigned long long)h, kiln__hcc.path, kiln__hcc.version,
             kiln__hcc.cpu, (unsigned long long)kiln__hcc.features);
    *devices = d;
    *count = 1;
    return KILN_OK;
}

/* The units (threads) a host device has and the first of them. */
static void units_of(const kiln__bdevice *device, unsigned *first, unsigned *units) {
    const kiln__hpart *p = device->handle;
    *first = p ? p->first : 0;
    *units = p ? p->count : kiln__hcc.threads;
}

/* Sub-device i of device: units [first, first + n) of host:0. */
static kiln_status make_sub(const kiln__bdevice *device, unsigned i, unsigned first, unsigned n,
                            kiln__bdevice *sub) {
    kiln__hpart *p = kiln__calloc(1, sizeof *p);
    char *ext = kiln__strdup(device->extensions ? device->extensions : "");
    if (!p || !ext) {
        free(p);
        free(ext);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "host partition: out of memory");
    }
    p->first = first;
    p->count = n;
    *sub = *device;
    sub->extensions = ext;
    sub->handle = p;
    kiln_device_info *info = &sub->info;
    info->is_subdevice = 1;
    info->compute_units = n;
    snprintf(info->id, sizeof info->id, "%.20s.%u", device->info.id, i);
    unsigned c0 = kiln__hcc.cpu_ids[first % kiln__hcc.cpus];
    unsigned c1 = kiln__hcc.cpu_ids[(first + n - 1) % kiln__hcc.cpus];
    snprintf(info->version, sizeof info->version, "kiln host 1 (%u threads on CPUs %u-%u)", n, c0,
             c1);
    return KILN_OK;
}

/* By counts: one part per entry, of that many units, one after another
 * (the core checked that the counts are positive and fit). */
kiln_status kiln__host_partition_counts(const kiln__bdevice *device, const unsigned *counts,
                                        size_t num_counts, kiln__bdevice *subdevices,
                                        size_t capacity, size_t *count) {
    unsigned at, units;
    units_of(device, &at, &units);
    unsigned long long sum = 0;
    *count = 0;
    for (size_t i = 0; i < num_counts; i++)
        sum += counts[i];
    if (num_counts == 0 || sum > units)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "counts ask for %llu compute units in %zu parts; %s has %u", sum,
                               num_counts, device->info.id, units);
    for (size_t i = 0; i < num_counts && i < capacity; i++) {
        kiln_status st = make_sub(device, (unsigned)i, at, counts[i], &subdevices[i]);
        if (st != KILN_OK) {
            for (size_t j = 0; j < i; j++) {
                free(subdevices[j].extensions);
                free(subdevices[j].handle);
                subdevices[j].extensions = NULL;
            }
            *count = 0;
            return st;
        }
        at += counts[i];
        *count = i + 1;
    }
    return KILN_OK;
}

/* Equal parts: as many parts of units_each as fit. */
kiln_status kiln__host_partition(const kiln__bdevice *device, unsigned units_each,
                                 kiln__bdevice *subdevices, size_t capacity, size_t *count) {
    unsigned first, units;
    unsigned counts[KILN__HOST_MAX_CPUS];
    units_of(device, &first, &units);
    *count = 0;
    if (units_each == 0 || units_each > units)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "units_each is %u; %s has %u compute units (threads)", units_each,
                               device->info.id, units);
    size_t parts = units / units_each;
    if (parts > KILN__HOST_MAX_CPUS)
        parts = KILN__HOST_MAX_CPUS;
    for (size_t i = 0; i < parts; i++)
        counts[i] = units_each;
    return kiln__host_partition_counts(device, counts, parts, subdevices, capacity, count);
}
