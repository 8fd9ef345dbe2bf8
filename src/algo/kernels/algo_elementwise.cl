/* Elementwise template (src/algo/elementwise.c). The generator puts before
 * it: the capability defines (KILN_CPU, KILN_CUDA_C, ...), KILN_PASS,
 * KILN_BIND and kiln_op(i, ...), which runs the user's operation for index
 * i; @NAME@ and @PARAMS@ are substituted.
 * CPU: each work-item walks one contiguous chunk, a loop the CPU compiler
 * vectorises. GPU: a grid-stride loop, so neighbouring work-items touch
 * neighbouring elements (coalesced). With KILN_LANES (kiln's own
 * operators, elementwise.c; kiln__gen_lanes) and every array aligned, the
 * loop runs over quads of items: KILN_LANES_LOAD / _STORE move each
 * array's 4 elements as one access; the last n % 4 items take the scalar
 * loop. */
KILN_KERNEL void @NAME@(long kiln_chunk, @PARAMS@)
{
#if KILN_CPU
    long kiln_b = (long)kiln_global_id(0) * kiln_chunk;
    long kiln_e = kiln_b + kiln_chunk;
    if (kiln_e > n)
        kiln_e = n;
    for (long i = kiln_b; i < kiln_e; i++)
        kiln_op(i, KILN_PASS);
#else
    long kiln_step = (long)kiln_global_size(0);
#ifdef KILN_LANES
    if (KILN_LANES_ALIGNED) {
        KILN_LANES_FOR(kiln_q, (long)kiln_global_id(0), kiln_step) {
            KILN_LANES_LOAD(kiln_q);
            kiln_lanes_fn(0, n KILN_LANES_ARGS);
            kiln_lanes_fn(1, n KILN_LANES_ARGS);
            kiln_lanes_fn(2, n KILN_LANES_ARGS);
            kiln_lanes_fn(3, n KILN_LANES_ARGS);
            KILN_LANES_STORE(kiln_q);
        }
        for (long i = ((n >> 2) << 2) + (long)kiln_global_id(0); i < n;
             i += kiln_step)
            kiln_op(i, KILN_PASS);
        return;
    }
#endif
#if KILN_CUDA_C /* nvcc honours the unroll hint */
#pragma unroll 4
#endif
    for (long i = (long)kiln_global_id(0); i < n; i += kiln_step)
        kiln_op(i, KILN_PASS);
#endif
}
