/* Single-pass scan in CUDA C: chained scan with decoupled look-back
 * (Merrill & Garland 2016), laid out like CUB's. Chosen by
 * src/algo/scan_variants.c on devices that compile CUDA C and have warp
 * shuffles and forward progress. Defined before it: the capability
 * defines (KILN_HAS_SLEEP), KILN_LOCAL_SIZE (threads per block, a
 * multiple of 32), KILN_ITEMS (items per thread), KILN_SEGMENTED,
 * KILN_PACKED, kiln_scan_t, kiln_neutral() (an identity of the operator),
 * kiln_scan_op(a, b) (a is the earlier item), kiln_input(i, ...),
 * kiln_seg_start(i, ...), kiln_output(i, item, prev_item, ...), KILN_PASS;
 * with KILN_SCAN_KEEP also kiln_keep_t, kiln_keep(i, ...) and kiln_output's
 * kept value before KILN_PASS; with KILN_SCAN_KEEP_INPUT also
 * kiln_input_kept(i, kept, prev_kept, ...), used instead of kiln_input.
 *
 * Each block takes the next tile of KILN_LOCAL_SIZE*KILN_ITEMS items from an
 * atomic counter (blocks do not start in index order; a block only ever
 * waits for tiles that started before it, so it cannot deadlock). Each warp
 * owns 32*KILN_ITEMS consecutive items of the tile: it loads them
 * warp-striped (coalesced) into registers and transposes them through its
 * own slice of shared memory (only __syncwarp), so that each thread then
 * holds KILN_ITEMS consecutive items in registers. A thread folds its items,
 * the warp scans the thread totals with shuffles, the block combines the
 * warp totals, and warp 0 publishes the tile aggregate (status 1) and looks
 * back: each lane reads one predecessor's status word, a ballot finds the
 * nearest inclusive prefix (status 2), and an ordered shuffle tree folds the
 * window, earliest tile on the left. Every combination keeps the earlier
 * operand on the left, so the operator need not be commutative. A tile
 * containing a segment start publishes its aggregate as inclusive at once
 * (nothing before it reaches past that start). Results go back through the
 * same shared slice and are written warp-striped (coalesced).
 * Index maths within a tile is 32-bit; only the tile base is 64-bit.
 * kiln_status: tiles + 1 ints, zeroed before the launch (the last is the
 * tile counter); kiln_vals: 2 * tiles slots of kiln_stride bytes
 * (aggregates, then inclusive prefixes). With KILN_PACKED 1 (types of up
 * to 4 bytes) kiln_status is tiles + 1 64-bit words instead, each a tile's
 * status and value (the last word's first int is the counter), and
 * kiln_vals is unused; with KILN_PACKED 2 (5 to 8 bytes) tiles + 1 16-byte
 * words (kiln__pstore). Unpacked values cross blocks through volatile
 * accesses ordered by __threadfence(). */

#define KILN_TILE (KILN_LOCAL_SIZE * KILN_ITEMS)
#define KILN_WARPS (KILN_LOCAL_SIZE / 32)
#define KILN_WTILE (32 * KILN_ITEMS) /* one warp's items */
/* Shared slots: one pad word every KILN_PADP words, so that a warp's 32
 * striped slots (32k + lane) and its threads' k-th items (lane * KILN_ITEMS
 * + k) each fall in 32 distinct banks. KILN_PADP = lcm(32, KILN_ITEMS) does
 * both for any KILN_ITEMS (one word every 32 left the threads' reads 2-way
 * conflicted for 24 items: Nsight Compute counted 38% excess shared
 * wavefronts in unique on an H100); the quads (KILN_SCAN_VEC: lane l's 4
 * items at 4l) need one every 32. */
#if KILN_SCAN_VEC || !KILN_SCAN_PAD /* the knob: 0 */
#define KILN_PADP 32
#else
#define KILN_LOWBIT ((KILN_ITEMS) & -(KILN_ITEMS))
#define KILN_PADP (32 * (KILN_ITEMS) / (KILN_LOWBIT < 32 ? KILN_LOWBIT : 32))
#endif
#define KILN_PAD(x) ((x) + (int)((unsigned int)(x) / KILN_PADP))
/* striped slot k of this lane (KILN_PADP is a multiple of 32) */
#define KILN_WSLOT(k) (KILN_PAD(32 * (k)) + kiln_lane)
/* the thread's item k: from its first slot where KILN_PADP is a multiple
 * of KILN_ITEMS (no pad falls inside a thread's items) */
#define KILN_TSLOT(k)                                                     \
    (KILN_PADP % KILN_ITEMS == 0 ? kiln_tb + (k)                            \
                                 : KILN_PAD(kiln_lane * KILN_ITEMS + (k)))
#define KILN_WSTRIDE KILN_PAD(KILN_WTILE)
#define KILN_FULL 0xffffffffu
/* Backoff while polling: __nanosleep where the device has it
 * (KILN_HAS_SLEEP), else none. */
#if KILN_HAS_SLEEP
#define KILN_SLEEP_NS(ns) __nanosleep(ns)
#else
#define KILN_SLEEP_NS(ns) ((void)0)
#endif
#ifndef KILN_LB
#define KILN_LB 1 /* look-back window: 32*KILN_LB predecessors a step */
#endif
#ifndef KILN_LB_SLEEP
#define KILN_LB_SLEEP 0 /* ns of backoff while a predecessor has no status */
#endif
#ifndef KILN_LB_PRE
#define KILN_LB_PRE 0 /* ns of sleep between publishing and the first poll */
#endif
#ifndef KILN_LB_EVERY
#define KILN_LB_EVERY 0 /* 1: the backoff comes before every poll */
#endif
#ifndef KILN_LB_DELAY_TILES
#define KILN_LB_DELAY_TILES 512 /* grids smaller than this poll at once */
#endif
#ifndef KILN_MINB
#define KILN_MINB 1 /* __launch_bounds__ minimum blocks per SM */
#endif
/* KILN_SCAN_EPOCH: block b takes tile b (blocks start in index order, as
 * CUB's scans assume) and a status word is (kiln_epoch << 2) | status, so
 * a word left by an earlier launch (another epoch) reads as "no status
 * yet": the host zeroes the words only when the buffer is new
 * (scan_run.c). kiln_epoch is the buffer's use count, 1 .. 2^30 - 1.
 * Otherwise tiles come from an atomic counter and 0 means no status. */
#ifndef KILN_SCAN_EPOCH
#define KILN_SCAN_EPOCH 0
#endif
#if KILN_SCAN_EPOCH
#define KILN_ST(s) ((int)(((unsigned int)kiln_epoch << 2) | (unsigned int)(s)))
#define KILN_ST_OK(x) (((unsigned int)(x) >> 2) == (unsigned int)kiln_epoch)
#define KILN_ST_S(x) ((int)((unsigned int)(x) & 3u))
#else
#define KILN_ST(s) (s)
#define KILN_ST_OK(x) ((x) != 0)
#define KILN_ST_S(x) (x)
#endif

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

/* Bits of a value of up to 4 bytes in a 32-bit word, and back. */
KILN_FUNC unsigned int kiln__bits(kiln_scan_t v)
{
    unsigned int b = 0;
    const unsigned char *s = (const unsigned char *)&v;
    unsigned char *d = (unsigned char *)&b;
    for (int k = 0; k < (int)sizeof(kiln_scan_t) && k < 4; k++)
        d[k] = s[k];
    return b;
}

KILN_FUNC kiln_scan_t kiln__unbits(unsigned int b, kiln_scan_t r)
{
    const unsigned char *s = (const unsigned char *)&b;
    unsigned char *d = (unsigned char *)&r;
    for (int k = 0; k < (int)sizeof(kiln_scan_t) && k < 4; k++)
        d[k] = s[k];
    return r;
}

/* Warp shuffles for any trivially copyable type. mode 0: up by d, 1: down
 * by d, 2: from lane d. */
KILN_FUNC unsigned int kiln__shfl32(unsigned int x, int mode, int d)
{
    return mode == 0   ? __shfl_up_sync(KILN_FULL, x, (unsigned int)d)
           : mode == 1 ? __shfl_down_sync(KILN_FULL, x, (unsigned int)d)
                       : __shfl_sync(KILN_FULL, x, d);
}

KILN_FUNC kiln_scan_t kiln__shfl(kiln_scan_t v, int mode, int d)
{
    kiln_scan_t r = v;
    if (sizeof(kiln_scan_t) <= 4) {
        r = kiln__unbits(kiln__shfl32(kiln__bits(v), mode, d), v);
    } else if (sizeof(kiln_scan_t) % 4 == 0) {
        unsigned int *s = (unsigned int *)&v, *t = (unsigned int *)&r;
        for (int k = 0; k < (int)(sizeof(kiln_scan_t) / 4); k++)
            t[k] = kiln__shfl32(s[k], mode, d);
    } else {
        unsigned char *s = (unsigned char *)&v, *t = (unsigned char *)&r;
        for (int k = 0; k < (int)sizeof(kiln_scan_t); k++)
            t[k] = (unsigned char)kiln__shfl32((unsigned int)s[k], mode, d);
    }
    return r;
}

#if KILN_SCAN_KEEP
/* A warp shuffle of a kept value (kiln_keep_t: a scalar of up to 8 bytes). */
KILN_FUNC kiln_keep_t kiln__shfl_keep(kiln_keep_t v, int mode, int d)
{
    union {
        kiln_keep_t v;
        unsigned int w[(sizeof(kiln_keep_t) + 3) / 4];
    } u, r;
    u.w[0] = 0;
    u.v = v;
    for (int k = 0; k < (int)((sizeof(kiln_keep_t) + 3) / 4); k++)
        r.w[k] = kiln__shfl32(u.w[k], mode, d);
    return r.v;
}
#endif

#if KILN_PACKED == 1
/* Types of up to 4 bytes: the status (high half) and the value (low half)
 * of a tile share one 64-bit word, so one store publishes both and one load
 * sees both: no fence is needed between a value and its flag, and nothing
 * else this block wrote is read by another block. */
typedef unsigned long long kiln_pword;
KILN_FUNC void kiln__pstore(KILN_GLOBAL int *st, int t, int status,
                            kiln_scan_t v)
{
    /* status: already marked with its epoch (KILN_ST) */
    unsigned long long w =
        ((unsigned long long)(unsigned int)status << 32) | kiln__bits(v);
    ((volatile unsigned long long *)st)[t] = w;
}
KILN_FUNC kiln_pword kiln__pload(KILN_GLOBAL int *st, int t)
{
    return ((volatile unsigned long long *)st)[t];
}
/* a word of status only (KILN_ST(2): the slots before tile 0) */
KILN_FUNC kiln_pword kiln__pword(int status)
{
    return (unsigned long long)(unsigned int)status << 32;
}
KILN_FUNC unsigned int kiln__pstatus(kiln_pword w)
{
    return (unsigned int)(w >> 32);
}
KILN_FUNC kiln_scan_t kiln__pvalue(kiln_pword w)
{
    return kiln__unbits((unsigned int)w, kiln_neutral());
}
#define KILN_COUNTER (kiln_status + 2 * kiln_tiles)
#elif KILN_PACKED == 2
/* Types of 5 to 8 bytes: a 16-byte word a tile, {status, value's low
 * half} {value's high half, status}, written by one 16-byte store. PTX
 * promises single-copy atomicity only for each 8-byte half, so the status
 * is in both: a reader takes a word only when the two agree, and a word
 * torn between two stores (aggregate, then inclusive prefix; or an earlier
 * launch's) has statuses that differ. CUB publishes values of up to 8
 * bytes with their status in one 16-byte word too. */
typedef struct {
    unsigned long long x, y;
} kiln_pword;
KILN_FUNC unsigned long long kiln__bits64(kiln_scan_t v)
{
    unsigned long long b = 0;
    const unsigned char *s = (const unsigned char *)&v;
    unsigned char *d = (unsigned char *)&b;
    for (int k = 0; k < (int)sizeof(kiln_scan_t) && k < 8; k++)
        d[k] = s[k];
    return b;
}
KILN_FUNC void kiln__pstore(KILN_GLOBAL int *st, int t, int status,
                            kiln_scan_t v)
{
    const unsigned long long b = kiln__bits64(v);
    const unsigned long long x = (unsigned long long)(unsigned int)status |
                                 (b << 32),
                             y = (b >> 32) |
                                 ((unsigned long long)(unsigned int)status << 32);
    asm volatile("st.volatile.v2.u64 [%0], {%1, %2};" ::"l"(
                     (unsigned long long *)st + 2 * (long)t),
                 "l"(x), "l"(y)
                 : "memory");
}
KILN_FUNC kiln_pword kiln__pload(KILN_GLOBAL int *st, int t)
{
    kiln_pword w;
    asm volatile("ld.volatile.v2.u64 {%0, %1}, [%2];"
                 : "=l"(w.x), "=l"(w.y)
                 : "l"((unsigned long long *)st + 2 * (long)t)
                 : "memory");
    return w;
}
KILN_FUNC kiln_pword kiln__pword(int status)
{
    kiln_pword w;
    w.x = (unsigned int)status;
    w.y = (unsigned long long)(unsigned int)status << 32;
    return w;
}
/* the status, or 0 (none yet) where the halves disagree */
KILN_FUNC unsigned int kiln__pstatus(kiln_pword w)
{
    return (unsigned int)w.x == (unsigned int)(w.y >> 32) ? (unsigned int)w.x
                                                           : 0u;
}
KILN_FUNC kiln_scan_t kiln__pvalue(kiln_pword w)
{
    const unsigned long long b = (w.x >> 32) | (w.y << 32);
    kiln_scan_t r = kiln_neutral();
    const unsigned char *s = (const unsigned char *)&b;
    unsigned char *d = (unsigned char *)&r;
    for (int k = 0; k < (int)sizeof(kiln_scan_t) && k < 8; k++)
        d[k] = s[k];
    return r;
}
#define KILN_COUNTER (kiln_status + 4 * kiln_tiles)
#else
#define KILN_COUNTER (kiln_status + kiln_tiles)
#endif

KILN_KERNEL void __launch_bounds__(KILN_LOCAL_SIZE, KILN_MINB)
@NAME@_onepass(KILN_GLOBAL int *kiln_status, KILN_GLOBAL char *kiln_vals,
               long kiln_stride, long kiln_tiles, int kiln_epoch, @PARAMS@)
{
    KILN_LOCAL kiln_scan_t kiln_sv[KILN_WARPS * KILN_WSTRIDE];
#if KILN_SEGMENTED
    KILN_LOCAL unsigned char kiln_sf[KILN_WARPS * KILN_WTILE];
#endif
    KILN_LOCAL kiln_scan_t kiln_wa[KILN_WARPS];
    KILN_LOCAL int kiln_wf[KILN_WARPS];
    KILN_LOCAL kiln_scan_t kiln_prefix_sh;
    KILN_LOCAL int kiln_tile_sh;
#if KILN_LB > 1
    KILN_LOCAL kiln_scan_t kiln_lb[32 * KILN_LB];
#endif
    const int kiln_l = (int)threadIdx.x;
    const int kiln_lane = kiln_l & 31, kiln_warp = kiln_l >> 5;

    /* The tile: block order with epochs, else the counter, but one tile (a
     * small scan) takes no counter and publishes no status (the host
     * leaves the words untouched). Through shared memory either way: read
     * from blockIdx.x in every thread, NVRTC spilled 32 bytes of the int32
     * cumsum under the 40-register cap, none so. */
    if (kiln_l == 0)
#if KILN_SCAN_EPOCH
        kiln_tile_sh = (int)blockIdx.x;
#else
        kiln_tile_sh = kiln_tiles == 1 ? 0 : atomicAdd(KILN_COUNTER, 1);
    (void)kiln_epoch;
#endif
    __syncthreads();
    const int kiln_tile = kiln_tile_sh;
    /* the only 64-bit index: the first item of this warp */
    const long kiln_wbase =
        (long)kiln_tile * KILN_TILE + (long)(kiln_warp * KILN_WTILE);
    const long kiln_rem = n - kiln_wbase;
    const int kiln_wfull = kiln_rem >= KILN_WTILE;
    const int kiln_wn =
        kiln_wfull ? KILN_WTILE : kiln_rem > 0 ? (int)kiln_rem : 0;
    kiln_scan_t *kiln_sw = kiln_sv + kiln_warp * KILN_WSTRIDE;
#if KILN_SEGMENTED
    unsigned char *kiln_fw = kiln_sf + kiln_warp * KILN_WTILE;
#endif

    /* 1. Warp-striped coalesced loads into registers (no bounds checks in
     * a full warp slice), then a transpose through the warp's shared slice:
     * thread lane gets items lane*KILN_ITEMS .. +KILN_ITEMS-1. */
    kiln_scan_t kiln_v[KILN_ITEMS];
#if KILN_SCAN_KEEP
    /* a selection's kept values (kiln_keep: what its output stores),
     * loaded with the input and held until step 6, which handles the same
     * items in the same thread: the output reads no input again */
    kiln_keep_t kiln_kp[KILN_ITEMS];
#define KILN_KEPT_OUT(k) kiln_kp[k],
#else
#define KILN_KEPT_OUT(k)
#endif
#if KILN_SCAN_VEC
    /* a full warp slice of x[i] into y[i] (scan_variants.c vec_io), both
     * arrays 16-byte aligned: lane l moves items 4l..4l+3 of each run of
     * 128 in one access (the padded slots stay free of bank conflicts) */
    const int kiln_vec =
        kiln_wfull &&
        ((((unsigned long long)KILN_VEC_IN) | ((unsigned long long)KILN_VEC_OUT)) & 15) == 0;
    union kiln_quad {
        uint4 v;
        kiln_scan_t t[4];
    };
    if (kiln_vec) {
        KILN_GLOBAL const uint4 *kiln_src =
            (KILN_GLOBAL const uint4 *)(KILN_VEC_IN + kiln_wbase);
#pragma unroll
        for (int k = 0; k < KILN_ITEMS / 4; k++) {
            union kiln_quad u;
            u.v = kiln_src[k * 32 + kiln_lane];
            const int j = (k * 32 + kiln_lane) * 4;
#pragma unroll
            for (int c = 0; c < 4; c++)
                kiln_sw[KILN_PAD(j + c)] = u.t[c];
        }
    } else
#endif
#if KILN_SCAN_KEEP_INPUT
    {
        /* the kept values first, then each input from an item's value and
         * its predecessor's: lane l - 1's by a shuffle; lane 0 takes lane
         * 31's of the row before, or in the first row the item before the
         * warp's slice (one load) */
        if (kiln_wfull) {
#pragma unroll
            for (int k = 0; k < KILN_ITEMS; k++)
                kiln_kp[k] = kiln_keep(kiln_wbase + (k * 32 + kiln_lane),
                                       KILN_PASS);
        } else {
#pragma unroll
            for (int k = 0; k < KILN_ITEMS; k++) {
                const int j = k * 32 + kiln_lane;
                kiln_kp[k] = j < kiln_wn ? kiln_keep(kiln_wbase + j, KILN_PASS)
                                         : (kiln_keep_t)0;
            }
        }
        /* one rotation a row: lane l gets lane l - 1's value, lane 0 lane
         * 31's, which is its predecessor in the next row */
        kiln_keep_t kiln_kb = (kiln_keep_t)0;
        if (kiln_lane == 0 && kiln_wbase > 0 && kiln_wn > 0)
            kiln_kb = kiln_keep(kiln_wbase - 1, KILN_PASS);
#pragma unroll
        for (int k = 0; k < KILN_ITEMS; k++) {
            const int j = k * 32 + kiln_lane;
            const kiln_keep_t r =
                kiln__shfl_keep(kiln_kp[k], 2, (kiln_lane + 31) & 31);
            kiln_sw[KILN_WSLOT(k)] =
                kiln_wfull || j < kiln_wn
                    ? kiln_input_kept(kiln_wbase + j, kiln_kp[k],
                                      kiln_lane ? r : kiln_kb, KILN_PASS)
                    : kiln_neutral();
            kiln_kb = r;
        }
    }
#else
    {
        if (kiln_wfull) {
#pragma unroll
            for (int k = 0; k < KILN_ITEMS; k++) {
                kiln_v[k] = kiln_input(kiln_wbase + (k * 32 + kiln_lane),
                                       KILN_PASS);
#if KILN_SCAN_KEEP
                kiln_kp[k] = kiln_keep(kiln_wbase + (k * 32 + kiln_lane),
                                       KILN_PASS);
#endif
            }
        } else {
#pragma unroll
            for (int k = 0; k < KILN_ITEMS; k++) {
                int j = k * 32 + kiln_lane;
                kiln_v[k] = j < kiln_wn ? kiln_input(kiln_wbase + j, KILN_PASS)
                                        : kiln_neutral();
#if KILN_SCAN_KEEP
                kiln_kp[k] = j < kiln_wn ? kiln_keep(kiln_wbase + j, KILN_PASS)
                                         : (kiln_keep_t)0;
#endif
            }
        }
#pragma unroll
        for (int k = 0; k < KILN_ITEMS; k++)
            kiln_sw[KILN_WSLOT(k)] = kiln_v[k];
    }
#endif
#if KILN_SEGMENTED
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; k++) {
        int j = k * 32 + kiln_lane;
        kiln_fw[j] = (unsigned char)(j < kiln_wn
                                         ? kiln_seg_start(kiln_wbase + j,
                                                          KILN_PASS)
                                         : 0);
    }
#endif
    __syncwarp();

    /* 2. The thread folds its items, in order, from the warp slice. */
    const int kiln_tb = KILN_PAD(kiln_lane * KILN_ITEMS);
    (void)kiln_tb;
#if KILN_SEGMENTED
    unsigned long long kiln_fm = 0; /* bit k: item k starts a segment */
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; k++)
        if (kiln_fw[kiln_lane * KILN_ITEMS + k])
            kiln_fm |= 1ull << k;
    kiln_scan_t kiln_a = kiln_neutral();
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; k++)
        kiln_a = ((kiln_fm >> k) & 1)
                     ? kiln_sw[KILN_TSLOT(k)]
                     : kiln_scan_op(kiln_a,
                                    kiln_sw[KILN_TSLOT(k)]);
    int kiln_f = kiln_fm != 0;
#else
    kiln_scan_t kiln_a = kiln_sw[KILN_TSLOT(0)];
#pragma unroll
    for (int k = 1; k < KILN_ITEMS; k++)
        kiln_a = kiln_scan_op(kiln_a,
                              kiln_sw[KILN_TSLOT(k)]);
    int kiln_f = 0;
#endif

    /* 3. Block scan of the threads' (value, has-segment-start) pairs:
     * warp scans with shuffles, then the warp totals. */
    for (int d = 1; d < 32; d <<= 1) {
        kiln_scan_t u = kiln__shfl(kiln_a, 0, d);
        int uf = __shfl_up_sync(KILN_FULL, kiln_f, (unsigned int)d);
        if (kiln_lane >= d) {
            if (!kiln_f)
                kiln_a = kiln_scan_op(u, kiln_a);
            kiln_f |= uf;
        }
    }
    /* thread exclusive (within its warp) */
    kiln_scan_t kiln_te = kiln__shfl(kiln_a, 0, 1);
    int kiln_tef = __shfl_up_sync(KILN_FULL, kiln_f, 1u);
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
        KILN_GLOBAL char *my_agg = kiln_vals + (long)kiln_tile * kiln_stride;
        KILN_GLOBAL char *my_inc =
            kiln_vals + (kiln_tiles + kiln_tile) * kiln_stride;
        if (kiln_lane == 0 && kiln_tiles > 1) {
            /* An inclusive prefix is known now for tile 0 and for a tile
             * with a segment start: publish it as such. */
            int early = kiln_tile == 0 || aggf;
#if KILN_PACKED
            (void)my_agg;
            kiln__pstore(kiln_status, kiln_tile, KILN_ST(early ? 2 : 1), agg);
#else
            kiln__vstore(early ? my_inc : my_agg, &agg);
            __threadfence();
            *(volatile int *)&kiln_status[kiln_tile] = KILN_ST(early ? 2 : 1);
#endif
        }
        kiln_scan_t acc = kiln_neutral(); /* meaningful in lane 0 */
        if (kiln_tile > 0) {
#if KILN_LB_PRE
            /* The predecessors' words are still being written: a poll now
             * would mostly find nothing and only load L2, which the other
             * blocks' loads and stores need. Small grids skip it: there the
             * latency matters more than L2 traffic. */
            if (kiln_tiles >= KILN_LB_DELAY_TILES)
                KILN_SLEEP_NS(KILN_LB_PRE);
#endif
            int last = kiln_tile - 1; /* nearest predecessor of the window */
            for (;;) {
                /* slot r of lane k reads tile last-(32r+k) (coalesced);
                 * before tile 0: inclusive, neutral */
                int s[KILN_LB];
                kiln_scan_t v[KILN_LB];
#if KILN_PACKED
                /* the whole warp polls until every slot has a status */
                kiln_pword w[KILN_LB];
#pragma unroll
                for (int r = 0; r < KILN_LB; r++)
                    w[r] = kiln__pword(KILN_ST(2));
                for (;;) {
                    int zero = 0;
#if KILN_LB_EVERY && KILN_LB_SLEEP
                    if (kiln_tiles >= KILN_LB_DELAY_TILES)
                        KILN_SLEEP_NS(KILN_LB_SLEEP);
#endif
#pragma unroll
                    for (int r = 0; r < KILN_LB; r++) {
                        const int j = last - 32 * r - kiln_lane;
                        if (j >= 0)
                            w[r] = kiln__pload(kiln_status, j);
                        zero |= !KILN_ST_OK(kiln__pstatus(w[r]));
                    }
                    if (!__any_sync(KILN_FULL, zero))
                        break;
#if KILN_LB_SLEEP && !KILN_LB_EVERY
                    KILN_SLEEP_NS(KILN_LB_SLEEP);
#endif
                }
#pragma unroll
                for (int r = 0; r < KILN_LB; r++) {
                    s[r] = KILN_ST_S(kiln__pstatus(w[r]));
                    v[r] = last - 32 * r - kiln_lane >= 0
                               ? kiln__pvalue(w[r])
                               : kiln_neutral();
                }
#else
#pragma unroll
                for (int r = 0; r < KILN_LB; r++) {
                    const int j = last - 32 * r - kiln_lane;
                    s[r] = 2;
                    if (j >= 0) {
                        while (!KILN_ST_OK(
                            s[r] = *(volatile int *)&kiln_status[j])) {
#if KILN_LB_SLEEP
                            KILN_SLEEP_NS(KILN_LB_SLEEP);
#endif
                        }
                        s[r] = KILN_ST_S(s[r]);
                    }
                }
                __threadfence();
#pragma unroll
                for (int r = 0; r < KILN_LB; r++) {
                    const int j = last - 32 * r - kiln_lane;
                    v[r] = kiln_neutral();
                    if (j >= 0)
                        v[r] = kiln__vload(
                            s[r] == 2
                                ? kiln_vals + (kiln_tiles + j) * kiln_stride
                                : kiln_vals + (long)j * kiln_stride);
                }
#endif
                /* D: distance of the nearest inclusive prefix (32*KILN_LB:
                 * none in this window) */
                int D = 32 * KILN_LB;
#pragma unroll
                for (int r = KILN_LB - 1; r >= 0; r--) {
                    const unsigned int m = __ballot_sync(KILN_FULL, s[r] == 2);
                    if (m)
                        D = 32 * r + __ffs((int)m) - 1;
                }
#if KILN_LB > 1
                /* lane k folds distances KILN_LB*k+KILN_LB-1 .. KILN_LB*k,
                 * the earliest first; distances beyond D are neutral */
#pragma unroll
                for (int r = 0; r < KILN_LB; r++)
                    kiln_lb[32 * r + kiln_lane] = v[r];
                __syncwarp();
                kiln_scan_t f = kiln_neutral();
#pragma unroll
                for (int q = KILN_LB - 1; q >= 0; q--) {
                    const int d = KILN_LB * kiln_lane + q;
                    if (d <= D)
                        f = kiln_scan_op(f, kiln_lb[d]);
                }
                __syncwarp();
#else
                kiln_scan_t f = kiln_lane <= D ? v[0] : kiln_neutral();
#endif
                /* ordered tree: lane 0 ends with the fold of distances D..0,
                 * earliest (highest lane) on the left; steps only as far as
                 * the lanes that hold any of them */
                for (int d = 1; d <= D / KILN_LB; d <<= 1) {
                    kiln_scan_t u = kiln__shfl(f, 1, d);
                    if (kiln_lane + d < 32)
                        f = kiln_scan_op(u, f);
                }
                acc = kiln_scan_op(f, acc);
                if (D < 32 * KILN_LB)
                    break;
                last -= 32 * KILN_LB;
            }
            if (kiln_lane == 0 && !aggf) {
                kiln_scan_t inc = kiln_scan_op(acc, agg);
#if KILN_PACKED
                (void)my_inc;
                kiln__pstore(kiln_status, kiln_tile, KILN_ST(2), inc);
#else
                kiln__vstore(my_inc, &inc);
                __threadfence();
                *(volatile int *)&kiln_status[kiln_tile] = KILN_ST(2);
#endif
            }
        }
        if (kiln_lane == 0)
            kiln_prefix_sh = acc;
    }
    __syncthreads();
    const kiln_scan_t kiln_tp = kiln_prefix_sh; /* the tile's exclusive prefix */

    /* 5. Rescan the thread's items from its carry-in, in place in the
     * warp's shared slice. */
    kiln_scan_t kiln_carry =
        kiln_tef ? kiln_te : kiln_scan_op(kiln_tp, kiln_te);
    /* the item before the warp's first one (its prev_item) */
    const kiln_scan_t kiln_wprev = kiln__shfl(kiln_carry, 2, 0);
    /* the items are read again from shared memory rather than kept in
     * registers across the look-back: fewer registers, more blocks per SM */
#pragma unroll
    for (int k = 0; k < KILN_ITEMS; k++) {
        kiln_scan_t prev = kiln_carry;
#if KILN_SEGMENTED
        if ((kiln_fm >> k) & 1)
            prev = kiln_neutral();
#endif
        kiln_carry = kiln_scan_op(
            prev, kiln_sw[KILN_TSLOT(k)]);
        kiln_sw[KILN_TSLOT(k)] = kiln_carry;
    }
    __syncwarp();
#if KILN_SCAN_LAST
    /* the last item's statement (kiln_scan.last), in the lane that holds
     * it, instead of a test in every output */
    {
        const long d = n - 1 - kiln_wbase;
        if (d >= 0 && d < KILN_WTILE && ((int)d & 31) == kiln_lane)
            kiln_last(n - 1, kiln_sw[KILN_PAD((int)d)], KILN_PASS);
    }
#endif

    /* 6. Warp-striped coalesced outputs; prev_item is the previous item,
     * or the neutral value at a segment start. */
#if KILN_SCAN_VEC
    if (kiln_vec) {
        KILN_GLOBAL uint4 *kiln_dst =
            (KILN_GLOBAL uint4 *)(KILN_VEC_OUT + kiln_wbase);
#pragma unroll
        for (int k = 0; k < KILN_ITEMS / 4; k++) {
            union kiln_quad u;
            const int j = (k * 32 + kiln_lane) * 4;
#pragma unroll
            for (int c = 0; c < 4; c++)
                u.t[c] = KILN_VEC_EXCL ? (j + c ? kiln_sw[KILN_PAD(j + c - 1)]
                                                : kiln_wprev)
                                       : kiln_sw[KILN_PAD(j + c)];
            kiln_dst[k * 32 + kiln_lane] = u.v;
        }
        return;
    }
#endif
    /* prev_item's slot: the lane before's in the row; for lane 0 the
     * previous row's last, one further back where a pad word lies between
     * (rows starting at a multiple of KILN_PADP) */
    const int kiln_pl = kiln_lane - 1, kiln_pl0 = kiln_lane ? kiln_lane - 1 : -2;
    const int kiln_pz = kiln_lane ? kiln_lane - 1 : 0; /* never below 0 */
#define KILN_PREV(k)                                                      \
    ((k) == 0 ? (kiln_lane ? kiln_sw[kiln_pz] : kiln_wprev)               \
              : kiln_sw[KILN_PAD(32 * (k)) +                             \
                        ((32 * (k)) % KILN_PADP == 0 ? kiln_pl0 : kiln_pl)])
#if KILN_SEGMENTED
#define KILN_OUT_PREV(k, j) (kiln_fw[j] ? kiln_neutral() : KILN_PREV(k))
#else
#define KILN_OUT_PREV(k, j) KILN_PREV(k)
#endif
    /* full and partial warps apart: no per-item bounds test in the first */
    if (kiln_wfull) {
#pragma unroll
        for (int k = 0; k < KILN_ITEMS; k++)
            kiln_output(kiln_wbase + (k * 32 + kiln_lane),
                        kiln_sw[KILN_WSLOT(k)],
                        KILN_OUT_PREV(k, k * 32 + kiln_lane),
                        KILN_KEPT_OUT(k) KILN_PASS);
    } else {
#pragma unroll
        for (int k = 0; k < KILN_ITEMS; k++) {
            const int j = k * 32 + kiln_lane;
            if (j < kiln_wn)
                kiln_output(kiln_wbase + j, kiln_sw[KILN_WSLOT(k)],
                            KILN_OUT_PREV(k, j), KILN_KEPT_OUT(k) KILN_PASS);
        }
    }
}
