/* Single-pass scan for CUDA: chained scan with decoupled look-back
 * (Merrill & Garland 2016). Chosen by src/algo/scan.c on the CUDA backend.
 * Defined before it: KILN_LOCAL_SIZE (256), KILN_ITEMS (items per thread),
 * KILN_SEGMENTED, kiln_scan_t, kiln_neutral() (an identity of the
 * operator), kiln_scan_op(a, b) (a is the earlier item), kiln_input(i, ...),
 * kiln_seg_start(i, ...), kiln_output(i, item, prev_item, ...), KILN_PASS.
 *
 * Each block takes the next tile of KILN_LOCAL_SIZE*KILN_ITEMS items from an
 * atomic counter (blocks do not start in index order; a block only ever
 * waits for tiles that started before it, so it cannot deadlock). It loads
 * the tile coalesced into shared memory, scans it, publishes its aggregate
 * (status 1), looks back over its predecessors with one warp until it finds
 * an inclusive prefix (status 2), publishes its own inclusive prefix and
 * writes its outputs coalesced. Every combination keeps the earlier operand
 * on the left, so the operator need not be commutative. A tile containing a
 * segment start publishes its aggregate as inclusive at once (nothing
 * before it reaches past that start).
 * kiln_status: tiles + 1 ints, zeroed before the launch (the last is the
 * tile counter); kiln_vals: 2 * tiles slots of kiln_stride bytes
 * (aggregates, then inclusive prefixes). With KILN_PACKED (types of up to 4
 * bytes) kiln_status is tiles + 1 64-bit words instead, each a tile's
 * status and value (the last word's first int is the counter), and
 * kiln_vals is unused. Values cross blocks through
 * volatile accesses ordered by __threadfence(). */

#define KILN_TILE (KILN_LOCAL_SIZE * KILN_ITEMS)
#define KILN_PAD(x) ((x) + ((x) >> 5)) /* no bank conflicts */
#define KILN_WARPS (KILN_LOCAL_SIZE / 32)

KILN_FUNC void kiln__vstore(KILN_GLOBAL char *p, const kiln_scan_t *v)
{
    if (sizeof(kiln_scan_t) % 4 == 0) {
        volatile unsigned int *d = (volatile unsigned int *)p;
        const unsigned int *s = (const unsigned int *)v;
        for (int k = 0; k < (int)(sizeof(kiln_scan_t) / 4); k++)
            d[k] = s[k];
    } else {
        volatile unsigned char *d = (volatile unsigned char *)p;
        const unsigned char *s = (const unsigned char *)v;
        for (int k = 0; k < (int)sizeof(kiln_scan_t); k++)
            d[k] = s[k];
    }
}

KILN_FUNC kiln_scan_t kiln__vload(KILN_GLOBAL const char *p)
{
    kiln_scan_t r;
    if (sizeof(kiln_scan_t) % 4 == 0) {
        const volatile unsigned int *s = (const volatile unsigned int *)p;
        unsigned int *d = (unsigned int *)&r;
        for (int k = 0; k < (int)(sizeof(kiln_scan_t) / 4); k++)
            d[k] = s[k];
    } else {
        const volatile unsigned char *s = (const volatile unsigned char *)p;
        unsigned char *d = (unsigned char *)&r;
        for (int k = 0; k < (int)sizeof(kiln_scan_t); k++)
            d[k] = s[k];
    }
    return r;
}

/* __shfl_up_sync for any trivially copyable type, 4 bytes at a time. */
KILN_FUNC kiln_scan_t kiln__shfl_up(kiln_scan_t v, unsigned int d)
{
    kiln_scan_t r = v;
    if (sizeof(kiln_scan_t) % 4 == 0) {
        unsigned int *s = (unsigned int *)&v, *t = (unsigned int *)&r;
        for (int k = 0; k < (int)(sizeof(kiln_scan_t) / 4); k++)
            t[k] = __shfl_up_sync(0xffffffffu, s[k], d);
    } else {
        unsigned char *s = (unsigned char *)&v, *t = (unsigned char *)&r;
        for (int k = 0; k < (int)sizeof(kiln_scan_t); k++)
            t[k] = (unsigned char)__shfl_up_sync(0xffffffffu,
                                                 (unsigned int)s[k], d);
    }
    return r;
}

#if KILN_PACKED
/* Types of up to 4 bytes: the status (high half) and the value (low half)
 * of a tile share one 64-bit word, so one store publishes both and one load
 * sees both (no fence between a value and its flag). */
KILN_FUNC void kiln__pstore(KILN_GLOBAL int *st, long t, int status,
                            kiln_scan_t v)
{
    unsigned int b = 0;
    const unsigned char *s = (const unsigned char *)&v;
    unsigned char *d = (unsigned char *)&b;
    for (int k = 0; k < (int)sizeof(kiln_scan_t); k++)
        d[k] = s[k];
    unsigned long long w = ((unsigned long long)(unsigned int)status << 32) | b;
    ((volatile unsigned long long *)st)[t] = w;
}

KILN_FUNC kiln_scan_t kiln__punpack(unsigned long long w)
{
    kiln_scan_t r;
    unsigned int b = (unsigned int)w;
    const unsigned char *s = (const unsigned char *)&b;
    unsigned char *d = (unsigned char *)&r;
    for (int k = 0; k < (int)sizeof(kiln_scan_t); k++)
        d[k] = s[k];
    return r;
}
#define KILN_COUNTER (kiln_status + 2 * kiln_tiles)
#else
#define KILN_COUNTER (kiln_status + kiln_tiles)
#endif

KILN_KERNEL void @NAME@_onepass(KILN_GLOBAL int *kiln_status,
                                KILN_GLOBAL char *kiln_vals, long kiln_stride,
                                long kiln_tiles, @PARAMS@)
{
    KILN_LOCAL kiln_scan_t kiln_sv[KILN_PAD(KILN_TILE)];
#if KILN_SEGMENTED
    KILN_LOCAL unsigned char kiln_sf[KILN_TILE];
#endif
    KILN_LOCAL kiln_scan_t kiln_wa[KILN_WARPS];
    KILN_LOCAL int kiln_wf[KILN_WARPS];
    KILN_LOCAL kiln_scan_t kiln_lb[32];
    KILN_LOCAL kiln_scan_t kiln_prefix_sh;
    KILN_LOCAL long kiln_tile_sh;
    const int kiln_l = (int)threadIdx.x;
    const int kiln_lane = kiln_l & 31, kiln_warp = kiln_l >> 5;

    if (kiln_l == 0)
        kiln_tile_sh = (long)atomicAdd(KILN_COUNTER, 1);
    __syncthreads();
    const long kiln_tile = kiln_tile_sh;
    const long kiln_base = kiln_tile * (long)KILN_TILE;

    /* 1. Coalesced load of the tile's inputs (and segment flags). */
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; k++) {
        int j = k * KILN_LOCAL_SIZE + kiln_l;
        long i = kiln_base + j;
        kiln_scan_t v = kiln_neutral();
        if (i < n)
            v = kiln_input(i, KILN_PASS);
        kiln_sv[KILN_PAD(j)] = v;
#if KILN_SEGMENTED
        kiln_sf[j] = (unsigned char)(i < n ? kiln_seg_start(i, KILN_PASS) : 0);
#endif
    }
    __syncthreads();

    /* 2. Each thread folds its KILN_ITEMS consecutive items, in order. */
    kiln_scan_t kiln_a = kiln_neutral();
    int kiln_f = 0;
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; k++) {
        int j = kiln_l * KILN_ITEMS + k;
        kiln_scan_t v = kiln_sv[KILN_PAD(j)];
#if KILN_SEGMENTED
        if (kiln_sf[j]) {
            kiln_a = v;
            kiln_f = 1;
        } else {
            kiln_a = kiln_scan_op(kiln_a, v);
        }
#else
        kiln_a = kiln_scan_op(kiln_a, v);
#endif
    }

    /* 3. Block scan of the threads' (value, has-segment-start) pairs:
     * warp scans with shuffles, then the warp totals. */
    for (unsigned int d = 1; d < 32; d <<= 1) {
        kiln_scan_t u = kiln__shfl_up(kiln_a, d);
        int uf = __shfl_up_sync(0xffffffffu, kiln_f, d);
        if (kiln_lane >= (int)d) {
            if (!kiln_f)
                kiln_a = kiln_scan_op(u, kiln_a);
            kiln_f |= uf;
        }
    }
    /* thread exclusive (within its warp) */
    kiln_scan_t kiln_te = kiln__shfl_up(kiln_a, 1);
    int kiln_tef = __shfl_up_sync(0xffffffffu, kiln_f, 1);
    if (kiln_lane == 0) {
        kiln_te = kiln_neutral();
        kiln_tef = 0;
    }
    if (kiln_lane == 31) {
        kiln_wa[kiln_warp] = kiln_a;
        kiln_wf[kiln_warp] = kiln_f;
    }
    __syncthreads();
    {
        kiln_scan_t wp = kiln_neutral();
        int wpf = 0;
        for (int w = 0; w < kiln_warp; w++) {
            wp = kiln_wf[w] ? kiln_wa[w] : kiln_scan_op(wp, kiln_wa[w]);
            wpf |= kiln_wf[w];
        }
        /* block-exclusive for this thread = (warp prefix) then (te) */
        kiln_te = kiln_tef ? kiln_te : kiln_scan_op(wp, kiln_te);
        kiln_tef |= wpf;
    }

    /* 4. Publish, look back, publish the inclusive prefix (warp 0). */
    if (kiln_warp == 0) {
        kiln_scan_t agg = kiln_neutral();
        int aggf = 0;
        for (int w = 0; w < KILN_WARPS; w++) {
            agg = kiln_wf[w] ? kiln_wa[w] : kiln_scan_op(agg, kiln_wa[w]);
            aggf |= kiln_wf[w];
        }
        KILN_GLOBAL char *my_agg = kiln_vals + kiln_tile * kiln_stride;
        KILN_GLOBAL char *my_inc =
            kiln_vals + (kiln_tiles + kiln_tile) * kiln_stride;
        if (kiln_lane == 0) {
            /* An inclusive prefix is known now for tile 0 and for a tile
             * with a segment start: publish it as such. */
            int early = kiln_tile == 0 || aggf;
#if KILN_PACKED
            (void)my_agg;
            kiln__pstore(kiln_status, kiln_tile, early ? 2 : 1, agg);
#else
            kiln__vstore(early ? my_inc : my_agg, &agg);
            __threadfence();
            *(volatile int *)&kiln_status[kiln_tile] = early ? 2 : 1;
#endif
        }
        kiln_scan_t acc = kiln_neutral(); /* meaningful in lane 0 */
        if (kiln_tile > 0) {
            long last = kiln_tile - 1; /* nearest predecessor of the window */
            for (;;) {
                long j = last - kiln_lane;
                int s = 2;
                kiln_scan_t v = kiln_neutral();
                if (j >= 0) {
#if KILN_PACKED
                    unsigned long long w;
                    do {
                        w = ((volatile unsigned long long *)kiln_status)[j];
                    } while ((w >> 32) == 0);
                    s = (int)(w >> 32);
                    v = kiln__punpack(w);
#else
                    do {
                        s = *(volatile int *)&kiln_status[j];
                    } while (s == 0);
                    __threadfence();
                    v = kiln__vload(s == 2 ? kiln_vals + (kiln_tiles + j) *
                                                             kiln_stride
                                           : kiln_vals + j * kiln_stride);
#endif
                }
                unsigned int m = __ballot_sync(0xffffffffu, s == 2);
                int stop = m ? __ffs((int)m) - 1 : 31;
                kiln_lb[kiln_lane] = v;
                __syncwarp();
                if (kiln_lane == 0) {
                    /* lane k holds tile last-k: fold from the earliest */
                    kiln_scan_t w = kiln_lb[stop];
                    for (int k = stop - 1; k >= 0; k--)
                        w = kiln_scan_op(w, kiln_lb[k]);
                    acc = kiln_scan_op(w, acc);
                }
                __syncwarp();
                if (m)
                    break;
                last -= 32;
            }
            if (kiln_lane == 0 && !aggf) {
                kiln_scan_t inc = kiln_scan_op(acc, agg);
#if KILN_PACKED
                (void)my_inc;
                kiln__pstore(kiln_status, kiln_tile, 2, inc);
#else
                kiln__vstore(my_inc, &inc);
                __threadfence();
                *(volatile int *)&kiln_status[kiln_tile] = 2;
#endif
            }
        }
        if (kiln_lane == 0)
            kiln_prefix_sh = acc;
    }
    __syncthreads();
    const kiln_scan_t kiln_tp = kiln_prefix_sh; /* the tile's exclusive prefix */

    /* 5. Rescan the thread's items from its carry-in; items in place. */
    {
        kiln_scan_t carry =
            kiln_tef ? kiln_te : kiln_scan_op(kiln_tp, kiln_te);
#pragma unroll
        for (int k = 0; k < KILN_ITEMS; k++) {
            int j = kiln_l * KILN_ITEMS + k;
            kiln_scan_t prev = carry;
#if KILN_SEGMENTED
            if (kiln_sf[j])
                prev = kiln_neutral();
#endif
            carry = kiln_scan_op(prev, kiln_sv[KILN_PAD(j)]);
            kiln_sv[KILN_PAD(j)] = carry;
        }
    }
    __syncthreads();

    /* 6. Coalesced outputs; prev_item is the previous item of the tile, the
     * tile's prefix, or the neutral value at a segment start. */
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; k++) {
        int j = k * KILN_LOCAL_SIZE + kiln_l;
        long i = kiln_base + j;
        if (i < n) {
            kiln_scan_t prev = j ? kiln_sv[KILN_PAD(j - 1)] : kiln_tp;
#if KILN_SEGMENTED
            if (kiln_sf[j])
                prev = kiln_neutral();
#endif
            kiln_output(i, kiln_sv[KILN_PAD(j)], prev, KILN_PASS);
        }
    }
}
