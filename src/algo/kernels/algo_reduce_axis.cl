/* Reduction along one axis (src/algo/array_axis.c), on the pieces of the
 * reduction generator (src/algo/reduce.c): kiln_out_t, kiln_neutral(),
 * kiln_reduce(a, b), kiln_map(i, ...), kiln_final_t, kiln_finish(a),
 * KILN_LOCAL_SIZE, KILN_CPU. The first array is seen as (outer, len,
 * inner) with the reduced axis in the middle; map's i is the C-order flat
 * index (o_outer*len + k)*inner + o_inner. Output o = o_outer*inner +
 * o_inner. With KILN_AXIS_ARG (argmin/argmax) the final value is a flat
 * index, turned into k here.
 * A reduction is cut into `split` chunks of k when there are too few
 * outputs to fill the device: the chunks' partials go to kiln_part
 * (partial c of output o at c*nout + o) and _axfinish combines them. */

#define KILN_AXIS_COLS 256 /* outputs per CPU work-item (array_axis.c) */
/* columns per CPU work-item where the axis' rows are at least
 * KILN_AXIS_COLS wide (array_axis.c) */
#define KILN_AXIS_WIDE 4096
#define KILN_AXIS_MINLEN 64 /* and the axis at least this long */
/* accumulators per CPU work-item along a row: a SIMD register's worth of
 * small types, a few of larger ones (structs) */
#define KILN_AXIS_LANES ((int)(sizeof(kiln_out_t) <= 8 ? 32 : 4))

KILN_FUNC void kiln__axis_write(KILN_GLOBAL kiln_final_t *kiln_out, long o,
                                kiln_out_t a, long kiln_inner, long kiln_len)
{
    kiln_final_t f = kiln_finish(a);
#ifdef KILN_AXIS_ARG
    if (f >= 0)
        f = (f / kiln_inner) % kiln_len;
#else
    (void)kiln_inner;
    (void)kiln_len;
#endif
    kiln_out[o] = f;
}

/* inner == 1 (the axis is the last one): a work-group per (row, chunk),
 * its work-items reading the row side by side (GPU) or one contiguous
 * piece each (CPU), then a tree in local memory. */
KILN_KERNEL void @NAME@_axrows(KILN_GLOBAL kiln_out_t *kiln_part,
                               KILN_GLOBAL kiln_final_t *kiln_out,
                               long kiln_out_o, long kiln_rows, long kiln_len,
                               long kiln_split, @PARAMS@)
{
    KILN_LOCAL kiln_out_t kiln_scratch[KILN_LOCAL_SIZE];
    long kiln_l = (long)kiln_local_id(0);
    long kiln_chunk = (kiln_len + kiln_split - 1) / kiln_split;
#if KILN_CPU
    /* CPU: a contiguous run of (row, chunk) pieces per work-group, so a
     * core streams through adjacent rows */
    long kiln_np = kiln_rows * kiln_split, kiln_ng = (long)kiln_num_groups(0);
    long kiln_gper = (kiln_np + kiln_ng - 1) / kiln_ng;
    long kiln_g0 = (long)kiln_group_id(0) * kiln_gper;
    long kiln_g1 = kiln_g0 + kiln_gper < kiln_np ? kiln_g0 + kiln_gper : kiln_np;
    for (long kiln_g = kiln_g0; kiln_g < kiln_g1; kiln_g++) {
#else
    for (long kiln_g = (long)kiln_group_id(0); kiln_g < kiln_rows * kiln_split;
         kiln_g += (long)kiln_num_groups(0)) {
#endif
        long kiln_r = kiln_g / kiln_split, kiln_c = kiln_g % kiln_split;
        long kiln_b = kiln_r * kiln_len + kiln_c * kiln_chunk;
        long kiln_e = kiln_b + kiln_chunk;
        if (kiln_e > (kiln_r + 1) * kiln_len)
            kiln_e = (kiln_r + 1) * kiln_len;
        kiln_out_t kiln_a0 = kiln_neutral(), kiln_a1 = kiln_neutral(),
                   kiln_a2 = kiln_neutral(), kiln_a3 = kiln_neutral();
#if KILN_CPU
        /* a contiguous piece per work-item, folded into KILN_AXIS_LANES
         * accumulators side by side: independent lanes that LLVM turns
         * into SIMD registers (a few scalar chains are latency bound) */
        long kiln_per = (kiln_e - kiln_b + KILN_LOCAL_SIZE - 1) / KILN_LOCAL_SIZE;
        long i = kiln_b + kiln_l * kiln_per;
        long kiln_ie = i + kiln_per < kiln_e ? i + kiln_per : kiln_e;
        kiln_out_t kiln_acc[KILN_AXIS_LANES];
#pragma unroll
        for (int j = 0; j < KILN_AXIS_LANES; j++)
            kiln_acc[j] = kiln_neutral();
        for (; i + KILN_AXIS_LANES <= kiln_ie; i += KILN_AXIS_LANES)
#pragma unroll
            for (int j = 0; j < KILN_AXIS_LANES; j++)
                kiln_acc[j] = kiln_reduce(kiln_acc[j],
                                          kiln_map(i + j, KILN_PASS));
        for (int j = 0; i < kiln_ie; i++, j++)
            kiln_acc[j] = kiln_reduce(kiln_acc[j], kiln_map(i, KILN_PASS));
        for (int s = KILN_AXIS_LANES / 2; s > 0; s >>= 1)
            for (int j = 0; j < s; j++)
                kiln_acc[j] = kiln_reduce(kiln_acc[j], kiln_acc[j + s]);
        kiln_a0 = kiln_acc[0];
        /* ties keep the first index whatever the order: the reduce is
         * commutative */
#else
        long i = kiln_b + kiln_l;
        for (; i + 3 * KILN_LOCAL_SIZE < kiln_e; i += 4 * KILN_LOCAL_SIZE) {
            kiln_out_t kiln_m0 = kiln_map(i, KILN_PASS);
            kiln_out_t kiln_m1 = kiln_map(i + KILN_LOCAL_SIZE, KILN_PASS);
            kiln_out_t kiln_m2 = kiln_map(i + 2 * KILN_LOCAL_SIZE, KILN_PASS);
            kiln_out_t kiln_m3 = kiln_map(i + 3 * KILN_LOCAL_SIZE, KILN_PASS);
            kiln_a0 = kiln_reduce(kiln_a0, kiln_m0);
            kiln_a1 = kiln_reduce(kiln_a1, kiln_m1);
            kiln_a2 = kiln_reduce(kiln_a2, kiln_m2);
            kiln_a3 = kiln_reduce(kiln_a3, kiln_m3);
        }
        for (; i < kiln_e; i += KILN_LOCAL_SIZE)
            kiln_a0 = kiln_reduce(kiln_a0, kiln_map(i, KILN_PASS));
#endif
        kiln_scratch[kiln_l] = kiln_reduce(kiln_reduce(kiln_a0, kiln_a1),
                                           kiln_reduce(kiln_a2, kiln_a3));
        kiln_barrier();
        for (long s = KILN_LOCAL_SIZE / 2; s > 0; s >>= 1) {
            if (kiln_l < s)
                kiln_scratch[kiln_l] = kiln_reduce(kiln_scratch[kiln_l],
                                                   kiln_scratch[kiln_l + s]);
            kiln_barrier();
        }
        if (kiln_l == 0) {
            if (kiln_split == 1)
                kiln__axis_write(kiln_out, kiln_out_o + kiln_r,
                                 kiln_scratch[0], 1, kiln_len);
            else
                kiln_part[kiln_c * kiln_rows + kiln_r] = kiln_scratch[0];
        }
        kiln_barrier(); /* scratch is reused by the next row */
    }
}

/* inner > 1: a work-item per (output, chunk), adjacent work-items on
 * adjacent outputs (columns), so each step down the axis is one coalesced
 * read of the group's columns. */
/* kiln_cnt, kiln_fused (GPUs, split > 1): instead of _axfinish, the last
 * chunk of each output to finish combines the partials: a counter per
 * output, zero before the launch and again after it (the last resets it). */
KILN_KERNEL void @NAME@_axcols(KILN_GLOBAL kiln_out_t *kiln_part,
                               KILN_GLOBAL kiln_final_t *kiln_out,
                               long kiln_out_o, long kiln_outer, long kiln_len,
                               long kiln_inner, long kiln_split,
                               KILN_GLOBAL uint *kiln_cnt, long kiln_fused,
                               @PARAMS@)
{
    long kiln_nout = kiln_outer * kiln_inner;
    long kiln_t = (long)kiln_global_id(0);
    long kiln_chunk = (kiln_len + kiln_split - 1) / kiln_split;
#if KILN_CPU
    if (kiln_inner >= KILN_AXIS_COLS && kiln_len >= KILN_AXIS_MINLEN) {
        /* CPU, wide rows: a work-item per (chunk of the axis, outer
         * index, block of up to KILN_AXIS_WIDE columns), folding each row
         * of its chunk into its partials in place: one contiguous stream
         * through memory (whole rows when inner <= KILN_AXIS_WIDE) where
         * narrow blocks would jump a page per row. Always partials:
         * _axfinish writes the outputs. */
        long kiln_nbi = (kiln_inner + KILN_AXIS_WIDE - 1) / KILN_AXIS_WIDE;
        long kiln_units = kiln_outer * kiln_nbi;
        if (kiln_t >= kiln_units * kiln_split)
            return;
        long kiln_c = kiln_t / kiln_units, kiln_u = kiln_t % kiln_units;
        long kiln_oo = kiln_u / kiln_nbi;
        long kiln_j0 = (kiln_u % kiln_nbi) * KILN_AXIS_WIDE;
        long kiln_w = kiln_inner - kiln_j0 < KILN_AXIS_WIDE ? kiln_inner - kiln_j0
                                                            : KILN_AXIS_WIDE;
        long kiln_kb = kiln_c * kiln_chunk;
        long kiln_ke = kiln_kb + kiln_chunk < kiln_len ? kiln_kb + kiln_chunk
                                                       : kiln_len;
        KILN_GLOBAL kiln_out_t *kiln_p =
            kiln_part + kiln_c * kiln_nout + kiln_oo * kiln_inner + kiln_j0;
        for (long j = 0; j < kiln_w; j++)
            kiln_p[j] = kiln_neutral();
        long kiln_r = (kiln_oo * kiln_len + kiln_kb) * kiln_inner + kiln_j0;
        long k = kiln_kb;
        /* four rows a step: a quarter of the partials' loads and stores,
         * each column still folded in row order */
        for (; k + 4 <= kiln_ke; k += 4, kiln_r += 4 * kiln_inner)
            for (long j = 0; j < kiln_w; j++) {
                long kiln_i = kiln_r + j;
                kiln_out_t kiln_a = kiln_reduce(kiln_p[j],
                                                kiln_map(kiln_i, KILN_PASS));
                kiln_a = kiln_reduce(kiln_a,
                                     kiln_map(kiln_i + kiln_inner, KILN_PASS));
                kiln_a = kiln_reduce(
                    kiln_a, kiln_map(kiln_i + 2 * kiln_inner, KILN_PASS));
                kiln_p[j] = kiln_reduce(
                    kiln_a, kiln_map(kiln_i + 3 * kiln_inner, KILN_PASS));
            }
        for (; k < kiln_ke; k++, kiln_r += kiln_inner)
            for (long j = 0; j < kiln_w; j++)
                kiln_p[j] = kiln_reduce(kiln_p[j],
                                        kiln_map(kiln_r + j, KILN_PASS));
        (void)kiln_out;
        (void)kiln_out_o;
        return;
    }
    /* CPU, narrow rows: a work-item per block of KILN_AXIS_COLS adjacent
     * outputs, so each step down the axis reads whole cache lines. */
    long kiln_nblk = (kiln_nout + KILN_AXIS_COLS - 1) / KILN_AXIS_COLS;
    if (kiln_t >= kiln_nblk * kiln_split)
        return;
    long kiln_c = kiln_t / kiln_nblk, kiln_o0 = (kiln_t % kiln_nblk) * KILN_AXIS_COLS;
    long kiln_kb = kiln_c * kiln_chunk;
    long kiln_ke = kiln_kb + kiln_chunk < kiln_len ? kiln_kb + kiln_chunk
                                                   : kiln_len;
    int kiln_w = kiln_nout - kiln_o0 < KILN_AXIS_COLS ? (int)(kiln_nout - kiln_o0)
                                                      : KILN_AXIS_COLS;
    kiln_out_t kiln_acc[KILN_AXIS_COLS];
    for (int j = 0; j < kiln_w; j++)
        kiln_acc[j] = kiln_neutral();
    long kiln_b0 = ((kiln_o0 / kiln_inner) * kiln_len + kiln_kb) * kiln_inner +
                   kiln_o0 % kiln_inner;
    if (kiln_o0 / kiln_inner == (kiln_o0 + kiln_w - 1) / kiln_inner) {
        /* the block lies in one outer index: its elements are adjacent, a
         * loop the compiler vectorises */
        for (long k = 0; k < kiln_ke - kiln_kb; k++) {
            long kiln_r = kiln_b0 + k * kiln_inner;
            for (int j = 0; j < kiln_w; j++)
                kiln_acc[j] = kiln_reduce(kiln_acc[j],
                                          kiln_map(kiln_r + j, KILN_PASS));
        }
    } else {
        long kiln_base[KILN_AXIS_COLS];
        for (int j = 0; j < kiln_w; j++) {
            long kiln_o = kiln_o0 + j;
            kiln_base[j] = ((kiln_o / kiln_inner) * kiln_len + kiln_kb) *
                               kiln_inner + kiln_o % kiln_inner;
        }
        for (long k = 0; k < kiln_ke - kiln_kb; k++)
            for (int j = 0; j < kiln_w; j++)
                kiln_acc[j] = kiln_reduce(
                    kiln_acc[j],
                    kiln_map(kiln_base[j] + k * kiln_inner, KILN_PASS));
    }
    for (int j = 0; j < kiln_w; j++) {
        if (kiln_split == 1)
            kiln__axis_write(kiln_out, kiln_out_o + kiln_o0 + j, kiln_acc[j],
                             kiln_inner, kiln_len);
        else
            kiln_part[kiln_c * kiln_nout + kiln_o0 + j] = kiln_acc[j];
    }
    (void)kiln_cnt;
    (void)kiln_fused;
#else
    if (kiln_t >= kiln_nout * kiln_split)
        return;
    long kiln_c = kiln_t / kiln_nout, kiln_o = kiln_t % kiln_nout;
    long kiln_kb = kiln_c * kiln_chunk;
    long kiln_ke = kiln_kb + kiln_chunk < kiln_len ? kiln_kb + kiln_chunk
                                                   : kiln_len;
    long i = ((kiln_o / kiln_inner) * kiln_len + kiln_kb) * kiln_inner +
             kiln_o % kiln_inner;
    long kiln_e = i + (kiln_ke - kiln_kb) * kiln_inner;
    kiln_out_t kiln_a0 = kiln_neutral(), kiln_a1 = kiln_neutral(),
               kiln_a2 = kiln_neutral(), kiln_a3 = kiln_neutral();
    for (; i + 3 * kiln_inner < kiln_e; i += 4 * kiln_inner) {
        kiln_out_t kiln_m0 = kiln_map(i, KILN_PASS);
        kiln_out_t kiln_m1 = kiln_map(i + kiln_inner, KILN_PASS);
        kiln_out_t kiln_m2 = kiln_map(i + 2 * kiln_inner, KILN_PASS);
        kiln_out_t kiln_m3 = kiln_map(i + 3 * kiln_inner, KILN_PASS);
        kiln_a0 = kiln_reduce(kiln_a0, kiln_m0);
        kiln_a1 = kiln_reduce(kiln_a1, kiln_m1);
        kiln_a2 = kiln_reduce(kiln_a2, kiln_m2);
        kiln_a3 = kiln_reduce(kiln_a3, kiln_m3);
    }
    for (; i < kiln_e; i += kiln_inner)
        kiln_a0 = kiln_reduce(kiln_a0, kiln_map(i, KILN_PASS));
    kiln_a0 = kiln_reduce(kiln_reduce(kiln_a0, kiln_a1),
                          kiln_reduce(kiln_a2, kiln_a3));
    if (kiln_split == 1) {
        kiln__axis_write(kiln_out, kiln_out_o + kiln_o, kiln_a0, kiln_inner,
                         kiln_len);
    } else {
        kiln_part[kiln_c * kiln_nout + kiln_o] = kiln_a0;
        if (kiln_fused) {
            /* publish the partial, then count it; the chunk that counts
             * last sees every partial of its output */
            kiln_global_fence();
            if (kiln_atomic_add_uint(kiln_cnt + kiln_o, 1u) == (uint)(kiln_split - 1)) {
                kiln_global_fence();
                kiln_out_t kiln_f = kiln_neutral();
                for (long c = 0; c < kiln_split; c++)
                    kiln_f = kiln_reduce(kiln_f, kiln_part[c * kiln_nout + kiln_o]);
                kiln__axis_write(kiln_out, kiln_out_o + kiln_o, kiln_f,
                                 kiln_inner, kiln_len);
                kiln_cnt[kiln_o] = 0u;
            }
        }
    }
#endif
}

/* Combines the split partials of every output. */
KILN_KERNEL void @NAME@_axfinish(KILN_GLOBAL const kiln_out_t *kiln_part,
                                 KILN_GLOBAL kiln_final_t *kiln_out,
                                 long kiln_out_o, long kiln_nout,
                                 long kiln_split, long kiln_inner,
                                 long kiln_len)
{
#if KILN_CPU
    /* CPU: a few work-items, each a contiguous range of outputs (a
     * work-group per output costs more to schedule than to run) */
    long kiln_per = (kiln_nout + (long)kiln_global_size(0) - 1) /
                    (long)kiln_global_size(0);
    long kiln_o = (long)kiln_global_id(0) * kiln_per;
    long kiln_oe = kiln_o + kiln_per < kiln_nout ? kiln_o + kiln_per : kiln_nout;
    for (; kiln_o < kiln_oe; kiln_o++) {
#else
    long kiln_o = (long)kiln_global_id(0);
    if (kiln_o >= kiln_nout)
        return;
    {
#endif
        kiln_out_t kiln_a = kiln_neutral();
        for (long c = 0; c < kiln_split; c++)
            kiln_a = kiln_reduce(kiln_a, kiln_part[c * kiln_nout + kiln_o]);
        kiln__axis_write(kiln_out, kiln_out_o + kiln_o, kiln_a, kiln_inner,
                         kiln_len);
    }
}
