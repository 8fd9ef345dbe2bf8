/* The generators' tuning knobs: environment variables read once, for
 * measurements (docs/algorithms.md lists them all). Values outside a
 * knob's range mean its default. */
#ifndef KILN_ALGO_KNOBS_H
#define KILN_ALGO_KNOBS_H

typedef struct kiln__knobs {
    int plan_gpu;            /* KILN_PLAN_GPU: 1 = plan a CPU device as a GPU
                                (its GPU kernels and sizes), for tests (0..1) */
    int ew_blocks_per_cu;    /* KILN_EW_BLOCKS_PER_CU: elementwise work-groups
                                per compute unit on GPUs (0..4096; 0 =
                                contiguous: about 8 items a thread within
                                32..1024, 32 otherwise) */
    int ew_lanes;            /* KILN_EW_LANES: 1 = kiln's own elementwise
                                operators move 4 consecutive items of each
                                array as one access on GPUs (0..1; 1) */
    int red_lanes;           /* KILN_RED_LANES: 1 = kiln's own reductions
                                (sum, dot, min, ...; not argmin/argmax) read
                                4 consecutive items as one access on GPUs
                                (0..1; 1) */
    int red_blocks_per_cu;   /* KILN_RED_BLOCKS_PER_CU: reduction stage-1
                                work-groups per compute unit (1..64; 64) */
    int red_single_items;    /* KILN_RED_SINGLE_ITEMS: a GPU reduction of at
                                most work-group size x this many items runs as
                                one work-group, in one launch (0..64; 64) */
    int red_items;           /* KILN_RED_ITEMS: a GPU reduction's stage 1
                                has at most n / (work-group size x this)
                                work-groups (1..1024; 16) */
    int red_fused;           /* KILN_RED_FUSED: 1 = a GPU reduction of several
                                work-groups is one launch: the group that
                                finishes last folds the partials (0..1; 1) */
    int axis_cols_threads;   /* KILN_AXIS_COLS_THREADS: work-items per compute
                                unit the GPU column reduction (an axis other
                                than the last) aims at (256..65536; 2048) */
    int axis_cols_occupancy; /* KILN_AXIS_COLS_OCCUPANCY: 1 = size the GPU
                              column reduction to one wave where the driver
                              tells the kernel's occupancy (0..1; 1) */
    int axis_fused;          /* KILN_AXIS_FUSED: 1 = a GPU column reduction
                                in chunks combines them in its own launch (the
                                last chunk of a column), no _axfinish (0..1; 1) */
    int scan_variant;        /* KILN_SCAN_VARIANT: 0 by device, 1 "onepass"
                                (the OpenCL single-pass template on any
                                OpenCL device), 2 "threephase" */
    int scan_threads;        /* KILN_SCAN_THREADS: threads per block of the
                                warp scan (64..1024, multiple of 32; 0 = 256) */
    int scan_items;          /* KILN_SCAN_ITEMS: items per thread of the
                                single-pass scans for types of up to 4 bytes
                                (1..40; 0 = 24) */
    int scan_lb;             /* KILN_SCAN_LB: warp look-back window in steps
                                of 32 tiles, packed types (1..8; 1) */
    int scan_sleep;          /* KILN_SCAN_SLEEP: ns of backoff while a
                                predecessor has no status (0..2000; -1 = 650
                                packed, 100 otherwise) */
    int scan_every;          /* KILN_SCAN_EVERY: 1 = back off before every
                                poll (0..1; -1 = 1 packed, 0 otherwise) */
    int scan_pre;            /* KILN_SCAN_PRE: ns of sleep between publishing
                                the aggregate and the first poll (0..4000;
                                -1 = 1200 packed, 0 otherwise) */
    int scan_minb;           /* KILN_SCAN_MINB: __launch_bounds__ minimum
                                blocks per SM (1..16; 0 = 6 packed, else 1) */
    int scan_window;         /* KILN_SCAN_WINDOW: OpenCL look-back window in
                                tiles (1..256; 0 = 32 on GPUs, 4 on CPUs) */
    int scan_gbar;           /* KILN_SCAN_GBAR: 1 = the OpenCL single-pass
                                barriers fence global memory too (0..1; 0) */
    int scan_epoch;          /* KILN_SCAN_EPOCH: 1 = the warp scan takes
                                tiles in block order and marks its status
                                words with the buffer's use count, so they
                                need no zeroing before a launch (0..1; 1) */
    int scan_keep;           /* KILN_SCAN_KEEP: 1 = the single-pass scans of
                                a selection keep the value its output stores
                                in registers from the load (kiln_scan.keep)
                                instead of reading the input again; -1 = the
                                warp scan only, for values and counts of up
                                to 4 bytes; 0 = neither (-1..1; -1) */
    int scan_vec;            /* KILN_SCAN_VEC: 1 = the single-pass scans
                                move quads of 4-byte items in 16-byte
                                accesses where the scan's text allows
                                (-1..1; -1 = the OpenCL single pass only) */
    int scan_pad;            /* KILN_SCAN_PAD: 1 = the single-pass scans
                                pad their shared tile one word every
                                lcm(32, items) (no bank conflicts for any
                                items a thread); 0 = one every 32 (0..1; 1;
                                the quads always take one every 32) */
    int sort_os_items;       /* KILN_SORT_OS_ITEMS: keys per thread of the
                                CUDA onesweep sort pass (4..32; 0 = by key
                                and value width, sort.c os_items) */
    int sort_tile_items;     /* KILN_SORT_TILE_ITEMS: items per work-item of
                                the portable GPU sort's tiles (4..16, a
                                multiple of 4; 8) */
    int hist_items;          /* KILN_HIST_ITEMS: at least this many items a
                                work-item in a GPU histogram (1..1024; 8) */
    int sort_tile_bits;      /* KILN_SORT_TILE_BITS: digit width of the
                                portable GPU sort's passes (4 or 8;
                                0 = 8 with a payload, 4 keys only) */
    int sort_os_minb;        /* KILN_SORT_OS_MINB: blocks a multiprocessor
                                the onesweep pass's registers must allow
                                (CUDA __launch_bounds__, NVIDIA OpenCL
                                -cl-nv-maxrregcount; -1..8; -1 = 3 for
                                the CUDA pass of 4- or 8-byte keys
                                without values, 0 = none) */
    int sort_ocl_onesweep;   /* KILN_SORT_OCL_ONESWEEP: 1 = NVIDIA's OpenCL
                                sorts with the OpenCL C onesweep; 0 = the
                                portable tile variant (0..1; 1) */
    int sort_os_hwaves;      /* KILN_SORT_OS_HWAVES: the CUDA onesweep
                                histogram's grid in waves (1..16; 4) */
    int sort_os_hlimit;      /* KILN_SORT_OS_HLIMIT: steps between the CUDA
                                onesweep histogram's flushes (0 = the most
                                its 16-bit counters allow); for tests */
    int sort_os_rank;        /* KILN_SORT_OS_RANK: how the onesweep pass
                                finds a warp's lanes of one digit: 1 = shared
                                atomic ORs, 0 = 8 ballots (-1..1; -1 =
                                ORs but in the CUDA pass of 4-byte
                                values, sort.c) */
    int sort_os_lean;        /* KILN_SORT_OS_LEAN: the onesweep pass's
                                shared-memory savings, a bit mask
                                (algo_sort_onesweep.cu KILN_OS_LEAN;
                                0..3; -1 = by form, sort.c) */
    int sort_os_xfirst;      /* KILN_SORT_OS_XFIRST: 1 = the CUDA onesweep
                                pass exchanges its keys before the
                                look-back (-1..1; -1 = by form, sort.c) */
    int sort_os_pack;        /* KILN_SORT_OS_PACK: 1 = a CUDA onesweep argsort
                                of 4-byte keys into int64 indices sorts
                                them packed in ulongs (0..1; 1) */
    int sort_narrow_idx;     /* KILN_SORT_NARROW_IDX: 1 = an onesweep argsort
                                into int64 indices carries them as uint
                                between passes, widened by the last (0..1;
                                1) */
    int sort_tile_pad;       /* KILN_SORT_TILE_PAD: 1 = its counter table
                                has a pad word every 32 (no bank conflicts
                                in the table's scan); 0 = none (0..1; 1) */
    int rng_vec;             /* KILN_RNG_VEC: 1 = random fills store 16 bytes
                                per item where aligned, 0 = scalar stores
                                (0..1; 1) */
    int cast_vec;            /* KILN_CAST_VEC: astype of aligned contiguous
                                arrays four elements per work-item with
                                vector loads and stores: 0 never, 1 on GPUs,
                                2 on every device (0..2; 1) */
    int rng_wide;            /* KILN_RNG_WIDE: 1 = float random fills on
                                OpenCL CPU devices compute sixteen generator
                                blocks per item in vector lanes, 0 = one
                                block per item (0..1; 1) */
} kiln__knobs;

/* The knobs, read from the environment on the first call (thread-safe). */
const kiln__knobs *kiln__knobs_get(void);

#endif
