/* Single-pass scan for OpenCL GPUs: chained scan with decoupled look-back
 * (Merrill & Garland 2016) in portable OpenCL C 1.2 (no sub-groups: local
 * memory and barriers only). Chosen by src/algo/scan_variants.c on GPUs
 * that compile OpenCL C and have forward progress (KILN_SCAN_VARIANT=onepass
 * forces it elsewhere, e.g. on PoCL's CPU device for CI). Its CUDA C
 * sibling, with warp shuffles, is algo_scan_warp.cu.
 * Defined before it: KILN_LOCAL_SIZE (work-items per group, a power of
 * two), KILN_ITEMS (items per work-item, <= 32), KILN_SEGMENTED,
 * KILN_PACKED, KILN_DB (1: double-buffered scan of the work-item totals),
 * kiln_scan_t, kiln_neutral() (an identity of the operator),
 * kiln_scan_op(a, b) (a is the earlier item), kiln_input(i, ...),
 * kiln_seg_start(i, ...), kiln_output(i, item, prev_item, ...), KILN_PASS;
 * with KILN_SCAN_KEEP also kiln_keep_t, kiln_keep(i, ...) and kiln_output's
 * kept value before KILN_PASS.
 *
 * Each work-group takes the next tile of KILN_LOCAL_SIZE*KILN_ITEMS items
 * from an atomic counter (groups do not start in index order; a group only
 * ever waits for tiles that some group already took and is running, so it
 * cannot deadlock, whatever the device's scheduling). The tile is loaded
 * coalesced (item k*KILN_LOCAL_SIZE+l by work-item l) into local memory
 * (padded against bank conflicts); each work-item folds its KILN_ITEMS
 * consecutive items; a Hillis-Steele scan in local memory combines the
 * work-items' (value, has-segment-start) pairs; work-item 0 publishes the
 * tile aggregate (status 1), or, for tile 0 and a tile containing a segment
 * start, the inclusive prefix at once (status 2: nothing before it reaches
 * past that start). The look-back: the first KILN_LB_W work-items each read
 * one predecessor's status word (coalesced), waiting until it has one; the
 * nearest inclusive prefix in the window is found with a local atomic_min,
 * and work-item 0 folds the window from that tile on, the earliest tile on
 * the left; if the window has no inclusive prefix, the next window. Then
 * the tile's inclusive prefix (status 2), a barrier, the rescan of each
 * work-item's items from its carry-in in place, and coalesced outputs.
 * Every combination keeps the earlier operand on the left, so the operator
 * need not be commutative.
 * kiln_status: tiles + 1 ints, zeroed before the launch (the last is the
 * tile counter); kiln_vals: 2 * tiles slots of kiln_stride bytes
 * (aggregates, then inclusive prefixes: a reader that saw status 1 never
 * reads a slot being overwritten). Values cross groups through volatile
 * accesses with a global fence between a value and its status. With
 * KILN_PACKED 1 (types of up to 4 bytes) kiln_status is tiles + 1 64-bit
 * words instead, each a tile's status (high half) and value (low half),
 * written and read as one 64-bit word (the last word's first int is the
 * counter), and kiln_vals is unused; with KILN_PACKED 2 (5 to 8 bytes)
 * tiles + 1 pairs of 64-bit words (kiln__pstore). */

#define KILN_TILE (KILN_LOCAL_SIZE * KILN_ITEMS)
/* Local slots: one pad word every KILN_PADP words, lcm(32, KILN_ITEMS),
 * so that 32 neighbouring work-items' striped slots and their k-th items
 * (l * KILN_ITEMS + k) each fall in distinct banks (as in
 * algo_scan_warp.cu); the quads (KILN_SCAN_VEC) need one every 32. */
#if KILN_SCAN_VEC || !KILN_SCAN_PAD /* the knob: 0 */
#define KILN_PADP 32
#else
#define KILN_LOWBIT ((KILN_ITEMS) & -(KILN_ITEMS))
#define KILN_PADP (32 * (KILN_ITEMS) / (KILN_LOWBIT < 32 ? KILN_LOWBIT : 32))
#endif
#define KILN_PAD(x) ((x) + (int)((uint)(x) / KILN_PADP))
/* the work-item's item k: from its first slot where KILN_PADP is a
 * multiple of KILN_ITEMS (no pad falls inside a work-item's items) */
#define KILN_TSLOT(k)                                                     \
    (KILN_PADP % KILN_ITEMS == 0 ? kiln_ob + (k) : KILN_PAD(kiln_o + (k)))
#ifndef KILN_LB_SLEEP
#define KILN_LB_SLEEP 0 /* ns of pause after a poll that found no status */
#endif
#ifndef KILN_LB_PRE
#define KILN_LB_PRE 0 /* ns of pause between publishing and the first poll */
#endif
/* the pauses need the device's kiln_sleep_ns (KILN_HAS_SLEEP, and the
 * prelude's macro: NVIDIA's compiler) and apply to grids of this many
 * tiles or more (as the warp scan's) */
#if !KILN_HAS_SLEEP || !defined(kiln_sleep_ns)
#undef KILN_LB_SLEEP
#undef KILN_LB_PRE
#define KILN_LB_SLEEP 0
#define KILN_LB_PRE 0
#endif
#define KILN_LB_DELAY_TILES 512
#ifndef KILN_LB_W
#define KILN_LB_W 32 /* look-back window: predecessors read at once */
#endif
#ifndef KILN_DB
#define KILN_DB 0
#endif
/* Work-items of a group share only local memory (values cross groups
 * through explicit fences), so the barriers need only order local memory;
 * KILN_GLOBAL_BARRIER=1 makes them kiln_barrier() (local and global). */
#if defined(KILN_GLOBAL_BARRIER) && KILN_GLOBAL_BARRIER
#define KILN_BAR() kiln_barrier()
#else
#define KILN_BAR() barrier(CLK_LOCAL_MEM_FENCE)
#endif

KILN_FUNC void kiln__vstore(KILN_GLOBAL char *p, const kiln_scan_t *v)
{
    if (sizeof(kiln_scan_t) % 4 == 0) {
        volatile KILN_GLOBAL uint *d = (volatile KILN_GLOBAL uint *)p;
        const uint *s = (const uint *)v;
        for (int k = 0; k < (int)(sizeof(kiln_scan_t) / 4); k++)
            d[k] = s[k];
    } else {
        volatile KILN_GLOBAL uchar *d = (volatile KILN_GLOBAL uchar *)p;
        const uchar *s = (const uchar *)v;
        for (int k = 0; k < (int)sizeof(kiln_scan_t); k++)
            d[k] = s[k];
    }
}

KILN_FUNC kiln_scan_t kiln__vload(KILN_GLOBAL const char *p)
{
    kiln_scan_t r;
    if (sizeof(kiln_scan_t) % 4 == 0) {
        volatile KILN_GLOBAL const uint *s =
            (volatile KILN_GLOBAL const uint *)p;
        uint *d = (uint *)&r;
        for (int k = 0; k < (int)(sizeof(kiln_scan_t) / 4); k++)
            d[k] = s[k];
    } else {
        volatile KILN_GLOBAL const uchar *s =
            (volatile KILN_GLOBAL const uchar *)p;
        uchar *d = (uchar *)&r;
        for (int k = 0; k < (int)sizeof(kiln_scan_t); k++)
            d[k] = s[k];
    }
    return r;
}

/* Bits of a value of up to 4 bytes in a 32-bit word, and back. */
KILN_FUNC uint kiln__bits(kiln_scan_t v)
{
    uint b = 0;
    const uchar *s = (const uchar *)&v;
    uchar *d = (uchar *)&b;
    for (int k = 0; k < (int)sizeof(kiln_scan_t) && k < 4; k++)
        d[k] = s[k];
    return b;
}

KILN_FUNC kiln_scan_t kiln__unbits(uint b, kiln_scan_t r)
{
    const uchar *s = (const uchar *)&b;
    uchar *d = (uchar *)&r;
    for (int k = 0; k < (int)sizeof(kiln_scan_t) && k < 4; k++)
        d[k] = s[k];
    return r;
}

#if KILN_PACKED == 1
#define KILN_COUNTER (kiln_status + 2 * kiln_tiles)
KILN_FUNC void kiln__pstore(KILN_GLOBAL int *st, int t, uint status,
                            kiln_scan_t v)
{
    ((volatile KILN_GLOBAL ulong *)st)[t] =
        ((ulong)status << 32) | (ulong)kiln__bits(v);
}
/* tile j's status (0: none yet) and, with one, its value into *v */
KILN_FUNC uint kiln__pread(KILN_GLOBAL int *st, int j, kiln_scan_t *v)
{
    const ulong w = ((volatile KILN_GLOBAL ulong *)st)[j];
    const uint s = (uint)(w >> 32);
    if (s)
        *v = kiln__unbits((uint)w, *v);
    return s;
}
#elif KILN_PACKED == 2
/* Types of 5 to 8 bytes: two 64-bit words a tile, {status, value's low
 * half} {value's high half, status}. Only each word is one access, so the
 * status is in both: a reader takes the pair only when they agree, and a
 * pair read between two stores (the aggregate, then the inclusive prefix;
 * or the zeroed words) has statuses that differ (as the warp scan's
 * 16-byte words). */
#define KILN_COUNTER (kiln_status + 4 * kiln_tiles)
KILN_FUNC void kiln__pstore(KILN_GLOBAL int *st, int t, uint status,
                            kiln_scan_t v)
{
    ulong b = 0;
    const uchar *s = (const uchar *)&v;
    uchar *d = (uchar *)&b;
    for (int k = 0; k < (int)sizeof(kiln_scan_t) && k < 8; k++)
        d[k] = s[k];
    volatile KILN_GLOBAL ulong *p = (volatile KILN_GLOBAL ulong *)st + 2 * (long)t;
    p[0] = (ulong)status | (b << 32);
    p[1] = (b >> 32) | ((ulong)status << 32);
}
KILN_FUNC uint kiln__pread(KILN_GLOBAL int *st, int j, kiln_scan_t *v)
{
    volatile KILN_GLOBAL ulong *p = (volatile KILN_GLOBAL ulong *)st + 2 * (long)j;
    const ulong x = p[0], y = p[1];
    const uint s = (uint)x;
    if (s == 0 || s != (uint)(y >> 32))
        return 0;
    const ulong b = (x >> 32) | (y << 32);
    const uchar *c = (const uchar *)&b;
    uchar *d = (uchar *)v;
    for (int k = 0; k < (int)sizeof(kiln_scan_t) && k < 8; k++)
        d[k] = c[k];
    return s;
}
#else
#define KILN_COUNTER (kiln_status + kiln_tiles)
#endif

KILN_KERNEL __attribute__((reqd_work_group_size(KILN_LOCAL_SIZE, 1, 1)))
void @NAME@_onepass(KILN_GLOBAL int *kiln_status, KILN_GLOBAL char *kiln_vals,
                    long kiln_stride, long kiln_tiles, int kiln_epoch,
                    @PARAMS@)
{
    (void)kiln_epoch; /* the warp scan's (scan_run.c); zeroed words here */
    KILN_LOCAL kiln_scan_t kiln_sv[KILN_PAD(KILN_TILE)];
    KILN_LOCAL kiln_scan_t kiln_tv[(KILN_DB + 1) * KILN_LOCAL_SIZE];
#if KILN_SEGMENTED
    KILN_LOCAL uchar kiln_sf[KILN_TILE];
    KILN_LOCAL int kiln_tf[(KILN_DB + 1) * KILN_LOCAL_SIZE];
#endif
    KILN_LOCAL kiln_scan_t kiln_wv[KILN_LB_W];
    KILN_LOCAL kiln_scan_t kiln_prefix_sh;
    KILN_LOCAL int kiln_tile_sh, kiln_d_sh;
    const int kiln_l = (int)kiln_local_id(0);

    /* one tile (a small scan): no counter, no status words (the host
     * leaves them unzeroed and untouched) */
    if (kiln_l == 0)
        kiln_tile_sh = kiln_tiles == 1
                           ? 0
                           : atomic_inc((volatile KILN_GLOBAL int *)KILN_COUNTER);
    KILN_BAR();
    const int kiln_tile = kiln_tile_sh;
    /* the only 64-bit index: the tile's first item */
    const long kiln_base = (long)kiln_tile * KILN_TILE;
    const long kiln_rem = n - kiln_base;
    const int kiln_full = kiln_rem >= KILN_TILE;
    const int kiln_tn = kiln_full ? KILN_TILE : (int)kiln_rem;

    /* 1. Coalesced loads into local memory (no bounds checks in a full
     * tile); items past the end are neutral. */
#if KILN_SCAN_KEEP
    /* a selection's kept values (kiln_keep), held in private memory until
     * step 6, which handles the same items in the same work-item */
    kiln_keep_t kiln_kp[KILN_ITEMS];
#define KILN_KEPT_OUT(k) kiln_kp[k],
#else
#define KILN_KEPT_OUT(k)
#endif
#if KILN_SCAN_VEC
    /* a full tile of x[i] into y[i] (scan_variants.c vec_io), both arrays
     * 16-byte aligned: work-item l moves items 4l..4l+3 of each run of
     * 4*KILN_LOCAL_SIZE in one access */
    const int kiln_vec =
        kiln_full && ((((ulong)KILN_VEC_IN) | ((ulong)KILN_VEC_OUT)) & 15) == 0;
    union kiln_quad {
        uint4 v;
        kiln_scan_t t[4];
    };
    if (kiln_vec) {
        KILN_GLOBAL const uint4 *kiln_src =
            (KILN_GLOBAL const uint4 *)(KILN_VEC_IN + kiln_base);
#pragma unroll
        for (int k = 0; k < KILN_ITEMS / 4; k++) {
            union kiln_quad u;
            u.v = kiln_src[k * KILN_LOCAL_SIZE + kiln_l];
            const int j = (k * KILN_LOCAL_SIZE + kiln_l) * 4;
#pragma unroll
            for (int c = 0; c < 4; c++)
                kiln_sv[KILN_PAD(j + c)] = u.t[c];
        }
    } else
#endif
    if (kiln_full) {
#pragma unroll
        for (int k = 0; k < KILN_ITEMS; k++) {
            const int j = k * KILN_LOCAL_SIZE + kiln_l;
            kiln_sv[KILN_PAD(j)] = kiln_input(kiln_base + j, KILN_PASS);
#if KILN_SCAN_KEEP
            kiln_kp[k] = kiln_keep(kiln_base + j, KILN_PASS);
#endif
        }
    } else {
#pragma unroll
        for (int k = 0; k < KILN_ITEMS; k++) {
            const int j = k * KILN_LOCAL_SIZE + kiln_l;
            kiln_sv[KILN_PAD(j)] = j < kiln_tn
                                       ? kiln_input(kiln_base + j, KILN_PASS)
                                       : kiln_neutral();
#if KILN_SCAN_KEEP
            kiln_kp[k] = j < kiln_tn ? kiln_keep(kiln_base + j, KILN_PASS)
                                     : (kiln_keep_t)0;
#endif
        }
    }
#if KILN_SEGMENTED
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; k++) {
        const int j = k * KILN_LOCAL_SIZE + kiln_l;
        kiln_sf[j] = (uchar)(j < kiln_tn ? kiln_seg_start(kiln_base + j,
                                                          KILN_PASS)
                                         : 0);
    }
#endif
    KILN_BAR();

    /* 2. Each work-item folds its KILN_ITEMS consecutive items, in order. */
    const int kiln_o = kiln_l * KILN_ITEMS;
    const int kiln_ob = KILN_PAD(kiln_o);
#if KILN_SEGMENTED
    uint kiln_fm = 0; /* bit k: item k starts a segment */
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; k++)
        if (kiln_sf[kiln_o + k])
            kiln_fm |= 1u << k;
    kiln_scan_t kiln_a = kiln_neutral();
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; k++) {
        const kiln_scan_t v = kiln_sv[KILN_TSLOT(k)];
        kiln_a = ((kiln_fm >> k) & 1u) ? v : kiln_scan_op(kiln_a, v);
    }
    int kiln_f = kiln_fm != 0;
#else
    kiln_scan_t kiln_a = kiln_sv[KILN_TSLOT(0)];
#pragma unroll
    for (int k = 1; k < KILN_ITEMS; k++)
        kiln_a = kiln_scan_op(kiln_a, kiln_sv[KILN_TSLOT(k)]);
#endif

    /* 3. Inclusive Hillis-Steele scan of the work-items' (value, flag)
     * pairs; the left operand is the earlier one. */
    int kiln_p = 0; /* the buffer holding the latest step (KILN_DB) */
    kiln_tv[kiln_l] = kiln_a;
#if KILN_SEGMENTED
    kiln_tf[kiln_l] = kiln_f;
#endif
    KILN_BAR();
    for (int d = 1; d < KILN_LOCAL_SIZE; d <<= 1) {
#if KILN_DB
        /* read buffer p, write buffer p^1: one barrier a step */
        if (kiln_l >= d) {
            const int r = kiln_p * KILN_LOCAL_SIZE + kiln_l - d;
#if KILN_SEGMENTED
            if (!kiln_f)
                kiln_a = kiln_scan_op(kiln_tv[r], kiln_a);
            kiln_f |= kiln_tf[r];
#else
            kiln_a = kiln_scan_op(kiln_tv[r], kiln_a);
#endif
        }
        kiln_p ^= 1;
        kiln_tv[kiln_p * KILN_LOCAL_SIZE + kiln_l] = kiln_a;
#if KILN_SEGMENTED
        kiln_tf[kiln_p * KILN_LOCAL_SIZE + kiln_l] = kiln_f;
#endif
        KILN_BAR();
#else
        /* in place: read, barrier, write, barrier (less local memory) */
        kiln_scan_t u = kiln_a;
#if KILN_SEGMENTED
        int uf = 0;
        if (kiln_l >= d) {
            u = kiln_tv[kiln_l - d];
            uf = kiln_tf[kiln_l - d];
        }
#else
        if (kiln_l >= d)
            u = kiln_tv[kiln_l - d];
#endif
        KILN_BAR();
        if (kiln_l >= d) {
#if KILN_SEGMENTED
            if (!kiln_f)
                kiln_a = kiln_scan_op(u, kiln_a);
            kiln_f |= uf;
            kiln_tf[kiln_l] = kiln_f;
#else
            kiln_a = kiln_scan_op(u, kiln_a);
#endif
            kiln_tv[kiln_l] = kiln_a;
        }
        KILN_BAR();
#endif
    }
    const int kiln_pb = kiln_p * KILN_LOCAL_SIZE;
    /* the work-item's exclusive prefix within the tile */
    kiln_scan_t kiln_te = kiln_neutral();
    int kiln_tef = 0;
    if (kiln_l > 0) {
        kiln_te = kiln_tv[kiln_pb + kiln_l - 1];
#if KILN_SEGMENTED
        kiln_tef = kiln_tf[kiln_pb + kiln_l - 1];
#endif
    }

    /* 4. Publish the aggregate, look back, publish the inclusive prefix. */
    const kiln_scan_t kiln_agg = kiln_tv[kiln_pb + KILN_LOCAL_SIZE - 1];
#if KILN_SEGMENTED
    const int kiln_aggf = kiln_tf[kiln_pb + KILN_LOCAL_SIZE - 1];
#else
    const int kiln_aggf = 0;
#endif
    KILN_GLOBAL char *kiln_my_agg = kiln_vals + (long)kiln_tile * kiln_stride;
    KILN_GLOBAL char *kiln_my_inc =
        kiln_vals + (kiln_tiles + kiln_tile) * kiln_stride;
    (void)kiln_my_agg;
    (void)kiln_my_inc;
    /* an inclusive prefix is known now for tile 0 and for a tile with a
     * segment start: publish it as such */
    const int kiln_early = (kiln_tile == 0) | kiln_aggf;
    if (kiln_l == 0 && kiln_tiles > 1) {
        const int early = kiln_early;
#if KILN_PACKED
        kiln__pstore(kiln_status, kiln_tile, early ? 2u : 1u, kiln_agg);
#else
        kiln__vstore(early ? kiln_my_inc : kiln_my_agg, &kiln_agg);
        kiln_global_fence();
        atomic_xchg((volatile KILN_GLOBAL int *)&kiln_status[kiln_tile],
                    early ? 2 : 1);
#endif
    }
    kiln_scan_t kiln_acc = kiln_neutral(); /* meaningful in work-item 0 */
    {
        /* No branch around it: barriers in a conditional trouble some
         * compilers (PoCL). Tile 0 finds neutral inclusive prefixes at once
         * (everything before tile 0). */
        int last = kiln_tile - 1; /* the window's nearest predecessor */
#if KILN_LB_SLEEP || KILN_LB_PRE
        /* large grids: give the predecessors time before polling them (a
         * poll that finds nothing loads the L2 the other groups need) */
        const int kiln_pause = kiln_tiles >= KILN_LB_DELAY_TILES;
#endif
#if KILN_LB_PRE
        if (kiln_pause && kiln_tile > 0 && kiln_l < KILN_LB_W)
            kiln_sleep_ns(KILN_LB_PRE);
#endif
        for (;;) {
            if (kiln_l == 0)
                kiln_d_sh = KILN_LB_W;
            KILN_BAR();
            if (kiln_l < KILN_LB_W) {
                /* before tile 0: inclusive, neutral */
                const int j = last - kiln_l;
                int s = 2;
                kiln_scan_t v = kiln_neutral();
                if (j >= 0) {
#if KILN_PACKED
                    for (;;) {
                        s = (int)kiln__pread(kiln_status, j, &v);
                        if (s != 0)
                            break;
#if KILN_LB_SLEEP
                        if (kiln_pause)
                            kiln_sleep_ns(KILN_LB_SLEEP);
#endif
                    }
#else
                    for (;;) {
                        s = ((volatile KILN_GLOBAL int *)kiln_status)[j];
                        if (s != 0)
                            break;
#if KILN_LB_SLEEP
                        if (kiln_pause)
                            kiln_sleep_ns(KILN_LB_SLEEP);
#endif
                    }
                    kiln_global_fence();
                    v = kiln__vload(s == 2 ? kiln_vals +
                                                 (kiln_tiles + j) * kiln_stride
                                           : kiln_vals + (long)j * kiln_stride);
#endif
                }
                kiln_wv[kiln_l] = v;
                if (s == 2)
                    atomic_min((volatile KILN_LOCAL int *)&kiln_d_sh, kiln_l);
            }
            KILN_BAR();
            /* D: distance of the nearest inclusive prefix (KILN_LB_W: none
             * in this window) */
            const int D = kiln_d_sh;
            if (kiln_l == 0) {
                kiln_scan_t f = kiln_neutral();
                for (int d = D < KILN_LB_W ? D : KILN_LB_W - 1; d >= 0; d--)
                    f = kiln_scan_op(f, kiln_wv[d]);
                kiln_acc = kiln_scan_op(f, kiln_acc);
            }
            KILN_BAR(); /* kiln_d_sh and kiln_wv are read */
            if (D < KILN_LB_W)
                break;
            last -= KILN_LB_W;
        }
        if (kiln_l == 0 && !kiln_early) {
            const kiln_scan_t inc = kiln_scan_op(kiln_acc, kiln_agg);
#if KILN_PACKED
            kiln__pstore(kiln_status, kiln_tile, 2u, inc);
#else
            kiln__vstore(kiln_my_inc, &inc);
            kiln_global_fence();
            atomic_xchg((volatile KILN_GLOBAL int *)&kiln_status[kiln_tile],
                        2);
#endif
        }
    }
    if (kiln_l == 0)
        kiln_prefix_sh = kiln_acc;
    KILN_BAR();
    const kiln_scan_t kiln_tp = kiln_prefix_sh; /* the tile's exclusive prefix */

    /* 5. Rescan the work-item's items from its carry-in, in place. */
    kiln_scan_t kiln_carry =
        kiln_tef ? kiln_te : kiln_scan_op(kiln_tp, kiln_te);
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; k++) {
        kiln_scan_t prev = kiln_carry;
#if KILN_SEGMENTED
        if ((kiln_fm >> k) & 1u)
            prev = kiln_neutral();
#endif
        kiln_carry = kiln_scan_op(prev, kiln_sv[KILN_TSLOT(k)]);
        kiln_sv[KILN_TSLOT(k)] = kiln_carry;
    }
    KILN_BAR();
#if KILN_SCAN_LAST
    /* the last item's statement (kiln_scan.last), in the work-item that
     * holds it, instead of a test in every output */
    {
        const long d = n - 1 - kiln_base;
        if (d >= 0 && d < KILN_TILE && (int)d % KILN_LOCAL_SIZE == kiln_l)
            kiln_last(n - 1, kiln_sv[KILN_PAD((int)d)], KILN_PASS);
    }
#endif

    /* 6. Coalesced outputs; prev_item is the previous item, the tile's
     * prefix for its first item, or the neutral value at a segment start. */
#if KILN_SCAN_VEC
    if (kiln_vec) {
        KILN_GLOBAL uint4 *kiln_dst =
            (KILN_GLOBAL uint4 *)(KILN_VEC_OUT + kiln_base);
#pragma unroll
        for (int k = 0; k < KILN_ITEMS / 4; k++) {
            union kiln_quad u;
            const int j = (k * KILN_LOCAL_SIZE + kiln_l) * 4;
#pragma unroll
            for (int c = 0; c < 4; c++)
                u.t[c] = KILN_VEC_EXCL ? (j + c ? kiln_sv[KILN_PAD(j + c - 1)]
                                                : kiln_tp)
                                       : kiln_sv[KILN_PAD(j + c)];
            kiln_dst[k * KILN_LOCAL_SIZE + kiln_l] = u.v;
        }
        return;
    }
#endif
    /* full and partial tiles apart: no per-item bounds test in the first;
     * prev_item of item 0 is the tile's prefix */
#if KILN_SEGMENTED
#define KILN_OUT_PREV(k, j)                                                \
    (kiln_sf[j] ? kiln_neutral()                                            \
                : (k) || kiln_l ? kiln_sv[KILN_PAD((j) - 1)] : kiln_tp)
#else
#define KILN_OUT_PREV(k, j)                                                \
    ((k) || kiln_l ? kiln_sv[KILN_PAD((j) - 1)] : kiln_tp)
#endif
    if (kiln_full) {
#pragma unroll
        for (int k = 0; k < KILN_ITEMS; k++) {
            const int j = k * KILN_LOCAL_SIZE + kiln_l;
            kiln_output(kiln_base + j, kiln_sv[KILN_PAD(j)],
                        KILN_OUT_PREV(k, j), KILN_KEPT_OUT(k) KILN_PASS);
        }
    } else {
#pragma unroll
        for (int k = 0; k < KILN_ITEMS; k++) {
            const int j = k * KILN_LOCAL_SIZE + kiln_l;
            if (j < kiln_tn)
                kiln_output(kiln_base + j, kiln_sv[KILN_PAD(j)],
                            KILN_OUT_PREV(k, j), KILN_KEPT_OUT(k) KILN_PASS);
        }
    }
}
