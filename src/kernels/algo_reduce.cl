/* Two-stage reduction template (src/algo/reduce.c). Defined before it:
 * KILN_CPU, KILN_LOCAL_SIZE (a power of two), kiln_out_t, kiln_neutral(),
 * kiln_reduce(a, b), kiln_map(i, ...), kiln_final_t, kiln_finish(x),
 * KILN_PASS.
 * Stage 1: work-group g reduces its part into kiln_partials[g].
 * Stage 2: one work-group reduces the partials into kiln_out[kiln_out_o]. */
KILN_KERNEL void @NAME@_stage1(KILN_GLOBAL kiln_out_t *kiln_partials,
                               long kiln_chunk, @PARAMS@)
{
    KILN_LOCAL kiln_out_t kiln_scratch[KILN_LOCAL_SIZE];
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
    long kiln_step = (long)kiln_global_size(0);
    for (long i = (long)kiln_global_id(0); i < n; i += kiln_step)
        kiln_a0 = kiln_reduce(kiln_a0, kiln_map(i, KILN_PASS));
#endif
#if KILN_LOCAL_SIZE > 1
    kiln_scratch[kiln_l] = kiln_a0;
    kiln_barrier();
    for (long s = KILN_LOCAL_SIZE / 2; s > 0; s >>= 1) {
        if (kiln_l < s)
            kiln_scratch[kiln_l] =
                kiln_reduce(kiln_scratch[kiln_l], kiln_scratch[kiln_l + s]);
        kiln_barrier();
    }
    if (kiln_l == 0)
        kiln_partials[kiln_g] = kiln_scratch[0];
#else
    (void)kiln_scratch;
    kiln_partials[kiln_g] = kiln_a0;
#endif
}

KILN_KERNEL void @NAME@_stage2(KILN_GLOBAL const kiln_out_t *kiln_in,
                               long kiln_m, KILN_GLOBAL kiln_final_t *kiln_out,
                               long kiln_out_o)
{
    KILN_LOCAL kiln_out_t kiln_scratch[KILN_LOCAL_SIZE];
    long kiln_l = (long)kiln_local_id(0);
    kiln_out_t kiln_a = kiln_neutral();
    for (long j = kiln_l; j < kiln_m; j += KILN_LOCAL_SIZE)
        kiln_a = kiln_reduce(kiln_a, kiln_in[j]);
#if KILN_LOCAL_SIZE > 1
    kiln_scratch[kiln_l] = kiln_a;
    kiln_barrier();
    for (long s = KILN_LOCAL_SIZE / 2; s > 0; s >>= 1) {
        if (kiln_l < s)
            kiln_scratch[kiln_l] =
                kiln_reduce(kiln_scratch[kiln_l], kiln_scratch[kiln_l + s]);
        kiln_barrier();
    }
    if (kiln_l == 0)
        kiln_out[kiln_out_o] = kiln_finish(kiln_scratch[0]);
#else
    (void)kiln_scratch;
    kiln_out[kiln_out_o] = kiln_finish(kiln_a);
#endif
}
