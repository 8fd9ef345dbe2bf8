/* Two-stage reduction template (src/algo/reduce.c). Defined before it:
 * KILN_CPU, KILN_LOCAL_SIZE (a power of two), kiln_out_t, kiln_neutral(),
 * kiln_reduce(a, b), kiln_map(i, ...), kiln_final_t, kiln_finish(x),
 * KILN_PASS.
 * Stage 1: work-group g reduces its part into kiln_partials[g] (CPU: one
 * contiguous chunk per work-item; GPU: a grid-stride loop; the block step
 * uses warp shuffles where the device has them (KILN_HAS_WARP_SHUFFLE:
 * CUDA C's __shfl_down_sync over warps of 32), a local-memory tree
 * elsewhere).
 * With KILN_HAS_INITIAL, work-item 0 of group 0 folds kiln_initial() in.
 * Stage 2: one work-group reduces the partials into kiln_out[kiln_out_o].
 * Stage 1 with kiln_out_o >= 0 (one work-group; the host then launches no
 * stage 2) does stage 2's work on its one partial itself: the same folds
 * in the same order, so the result is bit-identical to the two-launch
 * path's. With kiln_out_o < 0 it writes the partial and ignores kiln_out.
 * Fused (GPUs, kiln_fused_o >= 0): no stage 2 launch; each group publishes
 * its partial and counts it in kiln_cnt[0] (zero before the launch), and
 * the group that counts last folds every partial as stage 2 would (the
 * same bits), writes kiln_out[kiln_fused_o] and sets the counter back to
 * zero. */
#if KILN_HAS_WARP_SHUFFLE && KILN_LOCAL_SIZE >= 32 &&                      \
    KILN_LOCAL_SIZE % 32 == 0
/* __shfl_down_sync for any trivially copyable type, 4 bytes (or one
 * byte) at a time. */
KILN_FUNC kiln_out_t kiln__shfl_down(kiln_out_t v, unsigned int d)
{
    kiln_out_t r = v;
    if (sizeof(kiln_out_t) % 4 == 0) {
        unsigned int *s = (unsigned int *)&v, *t = (unsigned int *)&r;
        for (int k = 0; k < (int)(sizeof(kiln_out_t) / 4); k++)
            t[k] = __shfl_down_sync(0xffffffffu, s[k], d);
    } else {
        unsigned char *s = (unsigned char *)&v, *t = (unsigned char *)&r;
        for (int k = 0; k < (int)sizeof(kiln_out_t); k++)
            t[k] = (unsigned char)__shfl_down_sync(0xffffffffu,
                                                   (unsigned int)s[k], d);
    }
    return r;
}
/* Reduction of the block's values: warp shuffles, then the warp totals
 * (through scratch) by the first warp. The result is in thread 0. */
KILN_FUNC kiln_out_t kiln__block_reduce(kiln_out_t a, kiln_out_t *scratch)
{
    int l = (int)threadIdx.x, lane = l & 31, warp = l >> 5;
    for (unsigned int d = 16; d > 0; d >>= 1)
        a = kiln_reduce(a, kiln__shfl_down(a, d));
    if (lane == 0)
        scratch[warp] = a;
    __syncthreads();
    if (warp == 0) {
        a = lane < KILN_LOCAL_SIZE / 32 ? scratch[lane] : kiln_neutral();
        for (unsigned int d = 16; d > 0; d >>= 1)
            a = kiln_reduce(a, kiln__shfl_down(a, d));
    }
    return a;
}
#endif

/* The block step: the reduction of every work-item's a (kiln_reduce over
 * the work-group) into work-item 0's a; the others' a is then undefined.
 * Uses the enclosing kernel's kiln_scratch and kiln_l. */
#if KILN_HAS_WARP_SHUFFLE && KILN_LOCAL_SIZE >= 32 &&                      \
    KILN_LOCAL_SIZE % 32 == 0
#define KILN__BLOCK_REDUCE(a) (a) = kiln__block_reduce((a), kiln_scratch)
#elif KILN_LOCAL_SIZE > 1
#define KILN__BLOCK_REDUCE(a)                                              \
    do {                                                                   \
        kiln_scratch[kiln_l] = (a);                                        \
        kiln_barrier();                                                    \
        for (long kiln_s = KILN_LOCAL_SIZE / 2; kiln_s > 0; kiln_s >>= 1) { \
            if (kiln_l < kiln_s)                                           \
                kiln_scratch[kiln_l] = kiln_reduce(                        \
                    kiln_scratch[kiln_l], kiln_scratch[kiln_l + kiln_s]);  \
            kiln_barrier();                                                \
        }                                                                  \
        if (kiln_l == 0)                                                   \
            (a) = kiln_scratch[0];                                         \
    } while (0)
#else
#define KILN__BLOCK_REDUCE(a) (void)kiln_scratch
#endif

/* Stage 2's fold of the m partials at in by the whole work-group into
 * work-item 0's a (the fused stage 1's last group runs the same folds).
 * CUDA C unrolls it so that the loads of several steps are in flight at
 * once; the folds keep their order. */
#if KILN_CUDA_C
#define KILN__PART_UNROLL _Pragma("unroll 8")
#else
#define KILN__PART_UNROLL
#endif
#define KILN__FOLD_PARTIALS(a, in, m)                                      \
    do {                                                                   \
        (a) = kiln_neutral();                                              \
        KILN__PART_UNROLL                                                  \
        for (long kiln_j = kiln_l; kiln_j < (m); kiln_j += KILN_LOCAL_SIZE) \
            (a) = kiln_reduce((a), (in)[kiln_j]);                          \
        KILN__BLOCK_REDUCE(a);                                             \
    } while (0)

KILN_KERNEL void @NAME@_stage1(KILN_GLOBAL kiln_out_t *kiln_partials,
                               long kiln_chunk,
                               KILN_GLOBAL kiln_final_t *kiln_out,
                               long kiln_out_o, KILN_GLOBAL uint *kiln_cnt,
                               long kiln_fused_o, @PARAMS@)
{
    KILN_LOCAL kiln_out_t kiln_scratch[KILN_LOCAL_SIZE];
#if !KILN_CPU
    KILN_LOCAL int kiln_last; /* fused: this group counted last */
#endif
    long kiln_l = (long)kiln_local_id(0);
    long kiln_g = (long)kiln_group_id(0);
    kiln_out_t kiln_a0 = kiln_neutral();
#if KILN_CPU
    /* Contiguous chunk per work-item, 8 independent accumulators: the
     * compiler turns them into one SIMD register. */
    long kiln_per = kiln_chunk / KILN_LOCAL_SIZE;
    long kiln_b = kiln_g * kiln_chunk + kiln_l * kiln_per;
    long kiln_e = kiln_b + kiln_per;
    if (kiln_e > n)
        kiln_e = n;
#ifdef __OPENCL_VERSION__
    kiln_out_t kiln_a1 = kiln_neutral(), kiln_a2 = kiln_neutral(),
               kiln_a3 = kiln_neutral(), kiln_a4 = kiln_neutral(),
               kiln_a5 = kiln_neutral(), kiln_a6 = kiln_neutral(),
               kiln_a7 = kiln_neutral();
    long i = kiln_b;
    for (; i + 8 <= kiln_e; i += 8) {
        kiln_a0 = kiln_reduce(kiln_a0, kiln_map(i, KILN_PASS));
        kiln_a1 = kiln_reduce(kiln_a1, kiln_map(i + 1, KILN_PASS));
        kiln_a2 = kiln_reduce(kiln_a2, kiln_map(i + 2, KILN_PASS));
        kiln_a3 = kiln_reduce(kiln_a3, kiln_map(i + 3, KILN_PASS));
        kiln_a4 = kiln_reduce(kiln_a4, kiln_map(i + 4, KILN_PASS));
        kiln_a5 = kiln_reduce(kiln_a5, kiln_map(i + 5, KILN_PASS));
        kiln_a6 = kiln_reduce(kiln_a6, kiln_map(i + 6, KILN_PASS));
        kiln_a7 = kiln_reduce(kiln_a7, kiln_map(i + 7, KILN_PASS));
    }
    for (; i < kiln_e; i++)
        kiln_a0 = kiln_reduce(kiln_a0, kiln_map(i, KILN_PASS));
    kiln_a0 = kiln_reduce(kiln_reduce(kiln_reduce(kiln_a0, kiln_a1),
                                      kiln_reduce(kiln_a2, kiln_a3)),
                          kiln_reduce(kiln_reduce(kiln_a4, kiln_a5),
                                      kiln_reduce(kiln_a6, kiln_a7)));
#else
    /* A C compiler (the host backend's: not OpenCL C): 32 independent
     * accumulators in an array, which GCC keeps in a few SIMD registers
     * (2 of 16 floats with AVX-512), several adds in flight; it did not
     * vectorise the eight scalar ones above, and a float32 sum ran at half
     * of PoCL's speed. */
    kiln_out_t kiln_acc[32];
    for (int kiln_k = 0; kiln_k < 32; kiln_k++)
        kiln_acc[kiln_k] = kiln_neutral();
    long i = kiln_b;
    for (; i + 32 <= kiln_e; i += 32)
        for (int kiln_k = 0; kiln_k < 32; kiln_k++)
            kiln_acc[kiln_k] = kiln_reduce(kiln_acc[kiln_k], kiln_map(i + kiln_k, KILN_PASS));
    for (; i < kiln_e; i++)
        kiln_acc[0] = kiln_reduce(kiln_acc[0], kiln_map(i, KILN_PASS));
    for (int kiln_w = 16; kiln_w > 0; kiln_w /= 2)
        for (int kiln_k = 0; kiln_k < kiln_w; kiln_k++)
            kiln_acc[kiln_k] = kiln_reduce(kiln_acc[kiln_k], kiln_acc[kiln_k + kiln_w]);
    kiln_a0 = kiln_acc[0];
#endif
#else
    /* Grid-stride loop, 4 independent accumulators: 4 coalesced loads in
     * flight per work-item (enough bytes in flight to saturate HBM with a
     * grid of a few blocks per compute unit). */
    long kiln_step = (long)kiln_global_size(0);
    long i = (long)kiln_global_id(0);
    kiln_out_t kiln_a1 = kiln_neutral(), kiln_a2 = kiln_neutral(),
               kiln_a3 = kiln_neutral();
#ifdef KILN_LANES
    /* A built-in's arrays all aligned: quads of items, each array's 4
     * elements read as one access, lane k into accumulator k; the last
     * n % 4 items go to the loops below. */
    if (KILN_LANES_ALIGNED) {
        KILN_LANES_FOR(kiln_q, i, kiln_step) {
            KILN_LANES_LOAD(kiln_q);
            kiln_a0 = kiln_reduce(kiln_a0, kiln_lanes_fn(0, n KILN_LANES_ARGS));
            kiln_a1 = kiln_reduce(kiln_a1, kiln_lanes_fn(1, n KILN_LANES_ARGS));
            kiln_a2 = kiln_reduce(kiln_a2, kiln_lanes_fn(2, n KILN_LANES_ARGS));
            kiln_a3 = kiln_reduce(kiln_a3, kiln_lanes_fn(3, n KILN_LANES_ARGS));
        }
        i += (n >> 2) << 2;
    }
#endif
    for (; i + 3 * kiln_step < n; i += 4 * kiln_step) {
        kiln_out_t kiln_m0 = kiln_map(i, KILN_PASS);
        kiln_out_t kiln_m1 = kiln_map(i + kiln_step, KILN_PASS);
        kiln_out_t kiln_m2 = kiln_map(i + 2 * kiln_step, KILN_PASS);
        kiln_out_t kiln_m3 = kiln_map(i + 3 * kiln_step, KILN_PASS);
        kiln_a0 = kiln_reduce(kiln_a0, kiln_m0);
        kiln_a1 = kiln_reduce(kiln_a1, kiln_m1);
        kiln_a2 = kiln_reduce(kiln_a2, kiln_m2);
        kiln_a3 = kiln_reduce(kiln_a3, kiln_m3);
    }
    for (; i < n; i += kiln_step)
        kiln_a0 = kiln_reduce(kiln_a0, kiln_map(i, KILN_PASS));
    kiln_a0 = kiln_reduce(kiln_reduce(kiln_a0, kiln_a1),
                          kiln_reduce(kiln_a2, kiln_a3));
#endif
#ifdef KILN_HAS_INITIAL
    if (kiln_g == 0 && kiln_l == 0)
        kiln_a0 = kiln_reduce(kiln_initial(KILN_PASS), kiln_a0);
#endif
    KILN__BLOCK_REDUCE(kiln_a0);
    if (kiln_out_o >= 0) {
        /* The only work-group (the host launches no stage 2): stage 2's
         * folds of the one partial, as @NAME@_stage2 with kiln_m = 1 does
         * them. kiln_out_o is a kernel argument: every work-item takes
         * this branch or none, so the whole work-group reaches the
         * barriers inside. */
        kiln_barrier(); /* the first block step's reads of kiln_scratch */
        kiln_a0 = kiln_l == 0 ? kiln_reduce(kiln_neutral(), kiln_a0)
                              : kiln_neutral();
        KILN__BLOCK_REDUCE(kiln_a0);
        if (kiln_l == 0)
            kiln_out[kiln_out_o] = kiln_finish(kiln_a0);
    } else {
        if (kiln_l == 0)
            kiln_partials[kiln_g] = kiln_a0;
#if !KILN_CPU
        /* kiln_fused_o is a kernel argument: the whole group takes this
         * branch or none */
        if (kiln_fused_o >= 0) {
            if (kiln_l == 0) {
                kiln_global_fence(); /* the partial, before its count */
                kiln_last = kiln_atomic_add_uint(kiln_cnt, 1u) ==
                            (uint)(kiln_num_groups(0) - 1);
            }
            kiln_barrier(); /* also ends the block step's scratch reads */
            if (kiln_last) {
                kiln_global_fence();
                KILN__FOLD_PARTIALS(kiln_a0, kiln_partials,
                                    (long)kiln_num_groups(0));
                if (kiln_l == 0) {
                    kiln_out[kiln_fused_o] = kiln_finish(kiln_a0);
                    kiln_cnt[0] = 0u;
                }
            }
        }
#else
        (void)kiln_cnt;
        (void)kiln_fused_o;
#endif
    }
}

KILN_KERNEL void @NAME@_stage2(KILN_GLOBAL const kiln_out_t *kiln_in,
                               long kiln_m, KILN_GLOBAL kiln_final_t *kiln_out,
                               long kiln_out_o)
{
    KILN_LOCAL kiln_out_t kiln_scratch[KILN_LOCAL_SIZE];
    long kiln_l = (long)kiln_local_id(0);
    kiln_out_t kiln_a;
    KILN__FOLD_PARTIALS(kiln_a, kiln_in, kiln_m);
    if (kiln_l == 0)
        kiln_out[kiln_out_o] = kiln_finish(kiln_a);
}
