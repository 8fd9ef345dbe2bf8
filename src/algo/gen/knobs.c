/* The generators' tuning knobs, one table: name, range, default. */
#include "algo/gen/knobs.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const struct knob {
    const char *env;
    size_t offset;
    int lo, hi, dflt;
    int multiple; /* the value must be a multiple of this (0: any) */
} kKnobs[] = {
    /* 0: contiguous same-shape kernels about 8 items a thread (32..1024
     * blocks a compute unit), 32 for the rest (elementwise.c says why) */
    /* tests: the GPU variants of the generators on a CPU device (PoCL), so
     * that CI runs their code too */
    { "KILN_PLAN_GPU", offsetof(kiln__knobs, plan_gpu), 0, 1, 0, 0 },
    { "KILN_EW_BLOCKS_PER_CU", offsetof(kiln__knobs, ew_blocks_per_cu), 0, 4096, 0, 0 },
    /* 1: axpy 2^28 float32 on an H200 (hand-written kernels, one call):
     * 0.762 ms with 4-byte accesses, 0.740 with 16-byte ones */
    { "KILN_EW_LANES", offsetof(kiln__knobs, ew_lanes), 0, 1, 1, 0 },
    { "KILN_RED_LANES", offsetof(kiln__knobs, red_lanes), 0, 1, 1, 0 },
    /* 64: on an H200 8 gave sum 97%, dot 89% of copy; 64 gave 99%, 106% */
    { "KILN_RED_BLOCKS_PER_CU", offsetof(kiln__knobs, red_blocks_per_cu), 1, 64, 64, 0 },
    /* 64: one work-group of 256 folds up to 16384 items itself; above, a
     * fused launch of several groups needs scratch and an event (H100,
     * sum of 2^14 floats, round trip: 13.0 / 11.2 us against 15.4 / 15.5
     * with 16; a raw launch + synchronise 8.9) */
    { "KILN_RED_SINGLE_ITEMS", offsetof(kiln__knobs, red_single_items), 0, 64, 64, 0 },
    /* 16: a work-item folds at least 16 items (4 quads) where the
     * groups-per-CU cap leaves room; with 1-2 items each, mid sizes paid
     * for thousands of groups and partials (issue 16's size sweep) */
    { "KILN_RED_ITEMS", offsetof(kiln__knobs, red_items), 1, 1024, 16, 0 },
    /* 1: no second launch for the partials (issue 16: a sum's stage 2
     * took 3.5 us after 237 of stage 1, 2^28 float32 on an H200) */
    { "KILN_RED_FUSED", offsetof(kiln__knobs, red_fused), 0, 1, 1, 0 },
    { "KILN_AXIS_COLS_THREADS", offsetof(kiln__knobs, axis_cols_threads), 256, 65536, 2048, 0 },
    { "KILN_AXIS_COLS_OCCUPANCY", offsetof(kiln__knobs, axis_cols_occupancy), 0, 1, 1, 0 },
    { "KILN_AXIS_FUSED", offsetof(kiln__knobs, axis_fused), 0, 1, 1, 0 },
    { "KILN_SCAN_THREADS", offsetof(kiln__knobs, scan_threads), 64, 1024, 0, 32 },
    { "KILN_SCAN_ITEMS", offsetof(kiln__knobs, scan_items), 1, 40, 0, 0 },
    { "KILN_SCAN_LB", offsetof(kiln__knobs, scan_lb), 1, 8, 1, 0 },
    { "KILN_SCAN_SLEEP", offsetof(kiln__knobs, scan_sleep), -1, 2000, -1, 0 },
    { "KILN_SCAN_EVERY", offsetof(kiln__knobs, scan_every), -1, 1, -1, 0 },
    { "KILN_SCAN_PRE", offsetof(kiln__knobs, scan_pre), -1, 4000, -1, 0 },
    { "KILN_SCAN_MINB", offsetof(kiln__knobs, scan_minb), 0, 16, 0, 0 },
    { "KILN_SCAN_WINDOW", offsetof(kiln__knobs, scan_window), 1, 256, 0, 0 },
    { "KILN_SCAN_GBAR", offsetof(kiln__knobs, scan_gbar), 0, 1, 0, 0 },
    /* 1: no fill before the warp scan (scan_run.c) */
    { "KILN_SCAN_EPOCH", offsetof(kiln__knobs, scan_epoch), 0, 1, 1, 0 },
    /* 1: the single-pass scans move quads of 4-byte items in 16-byte
     * accesses where the scan's text allows (scan_variants.c vec_io);
     * -1: the OpenCL single pass only */
    /* a selection's single pass keeps the stored value from its load
     * (kiln_scan.keep, scan_variants.c): 1 both single passes, -1 the warp
     * scan only, 4-byte values and counts (NVIDIA's OpenCL was slower with
     * it) */
    { "KILN_SCAN_KEEP", offsetof(kiln__knobs, scan_keep), -1, 1, -1, 0 },
    { "KILN_SCAN_VEC", offsetof(kiln__knobs, scan_vec), -1, 1, -1, 0 },
    /* the single-pass scans' shared padding (algo_scan_warp.cu KILN_PADP) */
    { "KILN_SCAN_PAD", offsetof(kiln__knobs, scan_pad), 0, 1, 1, 0 },
    { "KILN_SORT_OS_ITEMS", offsetof(kiln__knobs, sort_os_items), 0, 32, 0, 0 },
    /* 8: H200, NVIDIA OpenCL, 2^26 int32 keys 4.35 ms, 16: 4.98 */
    { "KILN_SORT_TILE_ITEMS", offsetof(kiln__knobs, sort_tile_items), 4, 16, 8, 4 },
    /* -1: 3 for the CUDA pass of 4- or 8-byte keys without values, else
     * none (sort.c) */
    { "KILN_SORT_OS_MINB", offsetof(kiln__knobs, sort_os_minb), -1, 8, -1, 0 },
    { "KILN_SORT_OCL_ONESWEEP", offsetof(kiln__knobs, sort_ocl_onesweep), 0, 1, 1, 0 },
    /* H200, 2^28 int32, a loop of the same counting alone: 0.416 ms with
     * 4 waves of blocks, 0.439 with 1 */
    { "KILN_SORT_OS_HWAVES", offsetof(kiln__knobs, sort_os_hwaves), 1, 16, 4, 0 },
    /* a test's knob (ctest's test_sort_hflush): a block flushes its
     * counters every this many steps, a path the default limit (511 or
     * 255 steps) never reaches on an H200 below 2^30 keys */
    { "KILN_SORT_OS_HLIMIT", offsetof(kiln__knobs, sort_os_hlimit), 0, 255, 0, 0 },
    /* 1: the onesweep pass matches a warp's digits by shared atomic ORs
     * (algo_sort_onesweep.cu), 0: by 8 ballots; -1: by sorter (sort.c) */
    { "KILN_SORT_OS_RANK", offsetof(kiln__knobs, sort_os_rank), -1, 1, -1, 0 },
    /* bit 0: tile starts folded into the warps' offsets, bit 1: keys
     * alone written out by their own digits (algo_sort_onesweep.cu);
     * -1: by form (sort.c) */
    { "KILN_SORT_OS_LEAN", offsetof(kiln__knobs, sort_os_lean), -1, 3, -1, 0 },
    /* 1: the CUDA onesweep pass exchanges a tile's keys in shared memory
     * before its look-back, 0: after; -1: by form (sort.c) */
    { "KILN_SORT_OS_XFIRST", offsetof(kiln__knobs, sort_os_xfirst), -1, 1, -1, 0 },
    /* 1: a CUDA onesweep argsort of 4-byte keys into int64 indices packs
     * each key and index into one ulong (sort.c radix_packed) */
    { "KILN_SORT_OS_PACK", offsetof(kiln__knobs, sort_os_pack), 0, 1, 1, 0 },
    { "KILN_SORT_NARROW_IDX", offsetof(kiln__knobs, sort_narrow_idx), 0, 1, 1, 0 },
    { "KILN_SORT_TILE_PAD", offsetof(kiln__knobs, sort_tile_pad), 0, 1, 1, 0 },
    /* 0: 8 with a payload, 4 keys only (sort.c, tile_bits) */
    { "KILN_SORT_TILE_BITS", offsetof(kiln__knobs, sort_tile_bits), 0, 8, 0, 4 },
    /* H200, 2^20 floats, 256 bins: 8 0.035 ms, 32 0.048, 128 0.074 */
    { "KILN_HIST_ITEMS", offsetof(kiln__knobs, hist_items), 1, 1024, 8, 0 },
    { "KILN_RNG_VEC", offsetof(kiln__knobs, rng_vec), 0, 1, 1, 0 },
    /* 1: on PoCL's CPU device it took 2.3x as long (array_cast.c) */
    { "KILN_CAST_VEC", offsetof(kiln__knobs, cast_vec), 0, 2, 1, 0 },
    { "KILN_RNG_WIDE", offsetof(kiln__knobs, rng_wide), 0, 1, 1, 0 },
};

static kiln__knobs g_knobs;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void read_knobs(void) {
    for (size_t k = 0; k < sizeof kKnobs / sizeof kKnobs[0]; k++) {
        const struct knob *n = &kKnobs[k];
        const char *e = getenv(n->env);
        int v = e ? atoi(e) : n->dflt;
        if (v < n->lo || v > n->hi || (n->multiple && v % n->multiple))
            v = n->dflt;
        *(int *)((char *)&g_knobs + n->offset) = v;
    }
    const char *e = getenv("KILN_SCAN_VARIANT");
    g_knobs.scan_variant = e && !strcmp(e, "onepass") ? 1 : e && !strcmp(e, "threephase") ? 2 : 0;
}

const kiln__knobs *kiln__knobs_get(void) {
    pthread_once(&g_once, read_knobs);
    return &g_knobs;
}
