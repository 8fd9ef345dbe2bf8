/* The radix sort's parts (src/algo/prim/sort*.c): the sorter generator and its
 * passes over buffers (sort.c), the public operations over arrays
 * (sort_ops.c: sort, argsort, segmented sort, topk, searchsorted). */
#ifndef KILN_ALGO_SORT_H
#define KILN_ALGO_SORT_H

#include "algo/gen/algo.h"
#include "algo/gen/chain.h"

/* The kernels of a sorter's program (kernels/algo_sort.cl). */
enum {
    KILN__SORT_HIST,
    KILN__SORT_SCATTER,
    KILN__SORT_SEGID,
    KILN__SORT_GATHER,
    KILN__SORT_SEARCH,
    KILN__SORT_INDEX,
    KILN__SORT_OS_HIST, /* the onesweep variant only */
    KILN__SORT_OS_PASS,
    KILN__SORT_BUCKET, /* the CPU variant only */
    KILN__SORT_RANGE,  /* the CPU variant only */
    KILN__SORT_NK
};

/* Key kinds: how a key's bits order (kiln_sort_bits in the template). */
enum { KILN__KEY_UNSIGNED = 0, KILN__KEY_SIGNED = 1, KILN__KEY_FLOAT = 2 };

/* A sorter: the generator for keys of key_bytes and values of val_bytes
 * (0: none), one per context and pair in the context's cache. */
typedef struct kiln__sorter {
    kiln__gen gen; /* first: the base */
    unsigned key_bytes, val_bytes;
    /* [variant][kernel], made with the variant under gen.lock */
    kiln_kernel *k[3][KILN__SORT_NK];
} kiln__sorter;

/* One sort over dense buffers of n items (n < 2^32). kin/kout: keys of
 * key_bytes; vin/vout: values of val_bytes, or vin NULL with iota set (the
 * values are the items' indices) or val_bytes 0 (keys only). kin may be
 * kout and vin vout (in place); no other sharing. Segments: seglen > 0
 * (rows of seglen items) or offsets (nseg + 1 int32/int64 offsets, wide:
 * int64). With segments and iota, the indices count from each row's
 * start when seglen > 0. */
typedef struct kiln__sort_req {
    kiln_buffer *kin, *vin, *kout, *vout;
    size_t n;
    unsigned key_bytes, val_bytes;
    int kind, desc, iota;
    unsigned begin_bit, end_bit;
    size_t seglen, nseg;
    kiln_buffer *offsets;
    int off_wide;
    int keys_unused; /* the sorted keys are not wanted: kout NULL
                        (kiln__sort_run finds scratch where it is needed) */
} kiln__sort_req;

/* Enqueues the sort r on c. */
kiln_status kiln__sort_run(kiln__chain *c, const kiln__sort_req *r);
/* A launch of kernel kn of sorter (kb, vb) over n work-items. */
kiln_status kiln__sort_simple(kiln__chain *c, unsigned kb, unsigned vb, int kn, size_t n,
                              const kiln_arg *args, size_t nargs);

/* The sorter of (key_bytes, val_bytes) for queue's device with its
 * variant's kernels (*k: KILN__SORT_NK of them) and launch shape. */
/* The variants. TILE: portable, groups of up to 256 with 4-bit digits
 * (GPUs); CPU: portable, one work-item a group over a long chunk with
 * 11-bit digits; ONESWEEP: single-pass passes with look-back, in CUDA C
 * or (NVIDIA's OpenCL) its OpenCL C port. */
enum { KILN__SORT_TILE, KILN__SORT_CPU, KILN__SORT_ONESWEEP };
typedef struct kiln__sort_shape {
    int variant;
    int cpu;        /* 1: the CPU variant */
    size_t local;   /* work-items per group */
    int radix_bits; /* digit width of a pass */
    int items;      /* the tile kernels' items a work-item (GPU) */
    int os_items;   /* the onesweep pass's keys a thread */
    unsigned cu;    /* the device's compute units */
    int cuda_c;     /* 1: the plan compiles CUDA C (the onesweep pass in it) */
} kiln__sort_shape;
kiln_status kiln__sorter_get(kiln_queue *queue, unsigned key_bytes, unsigned val_bytes,
                             kiln__sorter **out, kiln_kernel *const **k, kiln__sort_shape *shape);

#endif
