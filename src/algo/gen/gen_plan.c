/* Per-device launch plans of the generators: work-group size, compute
 * units, and the capabilities the variants are chosen by. */
#include <string.h>

#include "algo/gen/generator.h"
#include "algo/gen/knobs.h"

/* The capabilities the variants are chosen by, as the device's backend
 * reports them (never by the backend's name). */
static void device_caps(const kiln_device_info *info, kiln__plan *plan) {
    plan->cuda_c = (info->languages >> KILN_LANG_CUDA_C) & 1;
    plan->opencl_c = (info->languages >> KILN_LANG_OPENCL_C) & 1;
    plan->forward_progress = info->forward_progress;
    plan->device_sleep = info->device_sleep;
    plan->warp_shuffle = info->warp_shuffle;
    plan->subgroup_size = info->subgroup_size;
    /* compute_capability comes only from CUDA and from NVIDIA's OpenCL
     * (cl_nv_device_attribute_query), whose compiler takes inline PTX;
     * vote.sync and shfl.sync need 7.0 */
    plan->ptx_warp = plan->opencl_c && !plan->cuda_c && info->compute_capability >= 70 &&
                     info->subgroup_size == 32;
}

kiln_status kiln__plan_for_device(kiln_device *device, kiln__plan *plan) {
    kiln_device_info info;
    memset(plan, 0, sizeof *plan);
    kiln_status st = kiln_device_get_info(device, &info);
    if (st != KILN_OK)
        return st;
    /* KILN_PLAN_GPU (tests): a CPU device runs the GPU variants */
    plan->cpu = info.type == KILN_DEVICE_CPU && !kiln__knobs_get()->plan_gpu;
    plan->cu = info.compute_units ? info.compute_units : 1;
    plan->fp64 = info.fp64;
    plan->fp16 = info.fp16;
    device_caps(&info, plan);
    if (plan->cpu) {
        plan->local = 1; /* one long chunk per work-item; LLVM vectorises it */
    } else {
        size_t l = 256;
        while (info.max_work_group_size && l > info.max_work_group_size)
            l /= 2;
        plan->local = l ? l : 1;
    }
    return KILN_OK;
}

/* The last plan this thread made, again for the same device (devices live
 * as long as the process; KILN_PLAN_GPU may change between calls in
 * tests): copying the device's info each call was 2% of a small dot's. */
static _Thread_local struct {
    kiln_device *device;
    int plan_gpu;
    kiln__plan plan;
} last_plan;

kiln_status kiln__plan_for(kiln_queue *queue, kiln__plan *plan) {
    kiln_device *d = kiln_queue_device(queue);
    int plan_gpu = kiln__knobs_get()->plan_gpu;
    if (d && d == last_plan.device && plan_gpu == last_plan.plan_gpu) {
        *plan = last_plan.plan;
        return KILN_OK;
    }
    kiln_status st = kiln__plan_for_device(d, plan);
    if (st == KILN_OK) {
        last_plan.device = d;
        last_plan.plan_gpu = plan_gpu;
        last_plan.plan = *plan;
    }
    return st;
}

size_t kiln__cpu_groups(const kiln__plan *plan, size_t n, size_t min_items) {
    size_t groups = (size_t)plan->cu * 4;
    size_t by_size = (n + min_items - 1) / min_items;
    if (groups > by_size)
        groups = by_size;
    return groups ? groups : 1;
}
