/* The onesweep LSD radix sort pass of algo_sort_onesweep.cu in OpenCL C,
 * for NVIDIA's OpenCL (src/algo/sort.c picks it where the plan has
 * ptx_warp and forward progress): the same two kernels, the same scratch
 * words and arguments, the same algorithm (read the .cu's comment first).
 *
 * Its warp votes and shuffles are inline PTX, which NVIDIA's OpenCL
 * compiler takes (it alone defines cl_nv_pragma_unroll; the prelude's
 * kiln_global_fence and kiln_sleep_ns do the same). Any other OpenCL
 * compiler gets the same operations over the whole work-group, through
 * local memory and barriers: slow, but the algorithm and its look-back run
 * on PoCL in CI (KILN_SORT_VARIANT=onesweep_cl). Every vote, shuffle and
 * warp barrier below is reached by all work-items of the group, as the
 * barrier form needs.
 *
 * NVIDIA maps a one-dimensional work-group's work-items to warps in order
 * of their local id, 32 a warp: lane = id % 32, warp = id / 32. */

#define KILN_OS_THREADS 256
#define KILN_OS_WARPS (KILN_OS_THREADS / 32)
#define KILN_OS_TILE (KILN_OS_THREADS * KILN_OS_ITEMS)
#define KILN_OS_WITEMS (32 * KILN_OS_ITEMS)
#define KILN_OS_HITEMS 8
#define KILN_OS_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
/* Unrolled, the barrier form's loops of votes took PoCL's compiler
 * minutes (each barrier a region of the work-item loops): rolled there */
#if defined(cl_nv_pragma_unroll)
#define KILN_OS_UNROLL _Pragma("unroll")
#else
#define KILN_OS_UNROLL _Pragma("unroll 1")
#endif

#if defined(cl_nv_pragma_unroll)
/* ws: the barrier form's local words, unused here */
inline uint kiln_os_ballot(int p, __local uint *ws, int lane, int warp)
{
    uint r;
    __asm__ __volatile__("{ .reg .pred q; setp.ne.s32 q, %1, 0; "
                         "vote.sync.ballot.b32 %0, q, 0xffffffff; }"
                         : "=r"(r)
                         : "r"(p));
    return r;
}
inline uint kiln_os_shfl_up(uint x, uint o, __local uint *ws, int t)
{
    uint r;
    __asm__ __volatile__("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;"
                         : "=r"(r)
                         : "r"(x), "r"(o));
    return r;
}
#define KILN_OS_SYNCWARP() __asm__ __volatile__("bar.warp.sync 0xffffffff;" ::: "memory")
#else
/* plain inline, not the prelude's static inline (KILN_FUNC): with that
 * PoCL left these helpers out of line, and their barriers then failed
 * (wrong sorts, a crash; found on the onesweep-one-source branch) */
inline uint kiln_os_ballot(int p, __local uint *ws, int lane, int warp)
{
    KILN_OS_BARRIER();
    if (lane == 0)
        ws[warp] = 0;
    KILN_OS_BARRIER();
    if (p)
        atomic_or((volatile __local uint *)&ws[warp], 1u << lane);
    KILN_OS_BARRIER();
    return ws[warp];
}
inline uint kiln_os_shfl_up(uint x, uint o, __local uint *ws, int t)
{
    KILN_OS_BARRIER();
    ws[t] = x;
    KILN_OS_BARRIER();
    return (uint)(t & 31) >= o ? ws[t - (int)o] : x;
}
#define KILN_OS_SYNCWARP() KILN_OS_BARRIER()
#endif

inline uint kiln_os_digit(kiln_uk_t u, int shift, int end)
{
    int w = end - shift < 8 ? end - shift : 8;
    return (uint)(u >> shift) & ((1u << w) - 1u);
}

/* The histogram as the .cu's, but in one row of 256 counters a pass (8
 * KiB; NVIDIA's OpenCL runs 1024 groups, sort.c, which need not all fit
 * at once with the .cu's 32 KiB columns). Integer keys are counted by
 * their own digits and each count moved by xkey's at the end (the .cu's
 * comment). */
__kernel __attribute__((reqd_work_group_size(KILN_OS_THREADS, 1, 1))) void
@NAME@_os_hist(__global const KILN_KEY_T *keys, long n, int kind, int desc,
               int begin, int end, int passes, __global uint *hist)
{
    __local uint sh[8 * 256];
    const int t = (int)get_local_id(0);
    for (int i = t; i < passes * 256; i += KILN_OS_THREADS)
        sh[i] = 0;
    KILN_OS_BARRIER();
    const long step = (long)KILN_OS_THREADS * KILN_OS_HITEMS;
    /* every bit of the key: passes == KILN_KEY_BYTES, digit p is byte p */
    const int whole = begin == 0 && end == 8 * KILN_KEY_BYTES;
    const int order = kind == 2;
    const kiln_uk_t xkey = kiln_sort_xkey(kind, desc);
    for (long b = (long)get_group_id(0) * step; b < n;
         b += (long)get_num_groups(0) * step) {
        const int full = b + step <= n;
        kiln_uk_t u[KILN_OS_HITEMS];
        if (full) {
KILN_OS_UNROLL
            for (int k = 0; k < KILN_OS_HITEMS; k++)
                u[k] = (kiln_uk_t)keys[b + k * KILN_OS_THREADS + t];
        } else {
KILN_OS_UNROLL
            for (int k = 0; k < KILN_OS_HITEMS; k++) {
                long i = b + k * KILN_OS_THREADS + t;
                u[k] = i < n ? (kiln_uk_t)keys[i] : 0;
            }
        }
        if (order) {
KILN_OS_UNROLL
            for (int k = 0; k < KILN_OS_HITEMS; k++)
                u[k] = kiln_sort_bits((KILN_KEY_T)u[k], kind, desc);
        }
        if (whole && full) {
            /* the whole key in a full step (the common case): constant
             * digit shifts, every pass unrolled, no test a key */
KILN_OS_UNROLL
            for (int k = 0; k < KILN_OS_HITEMS; k++)
KILN_OS_UNROLL
                for (int p = 0; p < KILN_KEY_BYTES; p++)
                    atomic_inc((volatile __local uint *)&sh[
                        p * 256 + ((uint)(u[k] >> (8 * p)) & 255u)]);
            continue;
        }
KILN_OS_UNROLL
        for (int k = 0; k < KILN_OS_HITEMS; k++) {
            if (b + k * KILN_OS_THREADS + t >= n)
                break;
            for (int p = 0; p < passes; p++)
                atomic_inc((volatile __local uint *)&sh[p * 256 +
                                                        kiln_os_digit(u[k], begin + 8 * p, end)]);
        }
    }
    KILN_OS_BARRIER();
    for (int i = t; i < passes * 256; i += KILN_OS_THREADS) {
        const int p = i >> 8;
        const uint d = (uint)i & 255u;
        if (sh[i])
            atomic_add((volatile __global uint *)&hist[p * 256 +
                                                      (d ^ kiln_os_digit(xkey, begin + 8 * p, end))],
                       sh[i]);
    }
}

/* Exclusive scan of one value per work-item over the group; *total gets
 * the sum. wsum: KILN_OS_WARPS words; ws: the votes' words. */
inline uint kiln_os_block_scan(uint v, __local uint *wsum, __local uint *ws,
                               uint *total)
{
    const int t = (int)get_local_id(0), lane = t & 31, warp = t >> 5;
    uint x = v;
    for (uint o = 1; o < 32; o <<= 1) {
        uint y = kiln_os_shfl_up(x, o, ws, t);
        if ((uint)lane >= o)
            x += y;
    }
    if (lane == 31)
        wsum[warp] = x;
    KILN_OS_BARRIER();
    uint before = 0, all = 0;
    for (int w = 0; w < KILN_OS_WARPS; w++) {
        uint s = wsum[w];
        before += w < warp ? s : 0u;
        all += s;
    }
    KILN_OS_BARRIER();
    *total = all;
    return before + x - v;
}

/* KILN_OS_RANK_OR: the .cu's comment; in the barrier form it also saves
 * most of the barriers (3 a key step instead of 29) */
#ifndef KILN_OS_RANK_OR
#define KILN_OS_RANK_OR 0
#endif
/* KILN_OS_LEAN (sort.c; KILN_SORT_OS_LEAN): fewer shared-memory accesses
 * a key, for a pass whose random digits make each access to a digit's
 * counter or to a key's tile slot several bank conflicts. Bit 0: each
 * digit's start in the tile is added into the warps' offsets after the
 * tile's scan (one lookup a key in the exchange instead of two); bit 1:
 * a pass without values takes each key's digit from the key again when
 * it writes the keys out, instead of storing a byte a key beside it. */
#ifndef KILN_OS_LEAN
#define KILN_OS_LEAN 0
#endif
#define KILN_OS_XWORDS_TILE                                                     \
    (KILN_OS_TILE * (KILN_KEY_BYTES > sizeof(KILN_VAL_T) ? KILN_KEY_BYTES        \
                                                          : sizeof(KILN_VAL_T)) / \
         8 +                                                                    \
     1)
#define KILN_OS_XWORDS_MATCH (KILN_OS_RANK_OR ? KILN_OS_WARPS * 256 : 0)
#define KILN_OS_XWORDS                                                          \
    (KILN_OS_XWORDS_TILE > KILN_OS_XWORDS_MATCH ? KILN_OS_XWORDS_TILE          \
                                                : KILN_OS_XWORDS_MATCH)

__kernel __attribute__((reqd_work_group_size(KILN_OS_THREADS, 1, 1))) void
@NAME@_os_pass(__global const KILN_KEY_T *kin, __global KILN_KEY_T *kout,
               __global const KILN_VAL_T *vin, __global KILN_VAL_T *vout,
               int has_vals, int iota, long n, int kind, int desc, int shift,
               int end, __global uint *scratch, int pass, long tiles,
               int wide_vals, int skip_keys, int pack)
{
    (void)pack; /* the CUDA pass's packed argsort only (sort.c) */
#if !KILN_OS_SWITCHES
    /* the argsort's switches act only in sorters of 4-byte values (sort.c
     * passes them to every pass): folded away elsewhere, those passes
     * compile as before them. With them, ptxas (sm_90) spilled 320 bytes
     * in the register-capped keys-only int32 pass (H100, 2^28: 14.2 ms
     * against 7.5) and took int32 keys with int64 values from 71 to 86
     * registers. */
    wide_vals = skip_keys = 0;
#endif
#if KILN_OS_KEYS_ONLY
    has_vals = 0; /* sort.c passes 0 here: known to the compiler too */
#endif
    __global const uint *hist = scratch + pass * 256;
    __global uint *counter = scratch + 8 * 256 + pass;
    __global uint *status = scratch + 8 * 256 + 64 + (long)pass * tiles * 256;
    __local ulong xbuf[KILN_OS_XWORDS];
    __local uchar xdig[KILN_OS_TILE];
    __local uint whist[KILN_OS_WARPS][256];
#if !(KILN_OS_LEAN & 1)
    __local uint tstart[256];
#endif
    __local uint gbase[256];
    __local uint wsum[KILN_OS_WARPS];
    __local uint ws[KILN_OS_THREADS]; /* the barrier form's votes */
    __local uint tile_sh[1];
    __local KILN_KEY_T *xkeys = (__local KILN_KEY_T *)xbuf;
    __local KILN_VAL_T *xvals = (__local KILN_VAL_T *)xbuf;
    const int t = (int)get_local_id(0), lane = t & 31, warp = t >> 5;
#if KILN_OS_RANK_OR
    __local uint *wmatch = (__local uint *)xbuf; /* [2][KILN_OS_WARPS][256] */
#endif
    if (t == 0)
        tile_sh[0] = atomic_inc((volatile __global uint *)counter);
    for (int w = 0; w < KILN_OS_WARPS; w++) {
        whist[w][t] = 0;
#if KILN_OS_RANK_OR
        wmatch[w * 256 + t] = wmatch[(KILN_OS_WARPS + w) * 256 + t] = 0;
#endif
    }
    KILN_OS_BARRIER();
    const uint tile = tile_sh[0];
    const long base = (long)tile * KILN_OS_TILE;
    const long wbase = base + (long)warp * KILN_OS_WITEMS;
    const uint lt_mask = (1u << lane) - 1u;

    KILN_KEY_T key[KILN_OS_ITEMS];
    uint rank[KILN_OS_ITEMS];
KILN_OS_UNROLL
    for (int k = 0; k < KILN_OS_ITEMS; k++) {
        long i = wbase + k * 32 + lane;
        key[k] = i < n ? kin[i] : (KILN_KEY_T)0;
    }
KILN_OS_UNROLL
    for (int k = 0; k < KILN_OS_ITEMS; k++) {
        long i = wbase + k * 32 + lane;
        int valid = i < n;
        uint d = kiln_os_digit(kiln_sort_bits(key[k], kind, desc), shift, end);
#if KILN_OS_RANK_OR
        __local uint *mw = &wmatch[((k & 1) * KILN_OS_WARPS + warp) * 256 + d];
        if (valid)
            atomic_or((volatile __local uint *)mw, 1u << lane);
        KILN_OS_SYNCWARP();
        uint peers = 0, before = 0;
        if (valid) {
            peers = *mw;
            before = whist[warp][d];
        }
        KILN_OS_SYNCWARP();
        if (valid && !(peers & lt_mask)) {
            whist[warp][d] = before + popcount(peers);
            *mw = 0;
        }
#else
        uint peers = kiln_os_ballot(valid, ws, lane, warp);
KILN_OS_UNROLL
        for (int b = 0; b < 8; b++) {
            uint bit = (d >> b) & 1u;
            uint bal = kiln_os_ballot((int)bit, ws, lane, warp);
            peers &= bit ? bal : ~bal;
        }
        uint before = 0;
        if (valid)
            before = whist[warp][d];
        KILN_OS_SYNCWARP();
        if (valid && !(peers & lt_mask))
            whist[warp][d] = before + popcount(peers);
        KILN_OS_SYNCWARP();
#endif
        rank[k] = before + popcount(peers & lt_mask);
    }
    KILN_OS_BARRIER();
    uint cnt = 0;
#if KILN_OS_LEAN & 1
    for (int w = 0; w < KILN_OS_WARPS; w++)
        cnt += whist[w][t];
#else
    for (int w = 0; w < KILN_OS_WARPS; w++) {
        uint c = whist[w][t];
        whist[w][t] = cnt;
        cnt += c;
    }
#endif
    __global uint *st = status + (long)tile * 256 + t;
    *(volatile __global uint *)st = ((tile == 0 ? 2u : 1u) << 30) | cnt;
    uint ntile;
    uint start = kiln_os_block_scan(cnt, wsum, ws, &ntile);
#if KILN_OS_LEAN & 1
    /* the warps' offsets from the tile's start of digit t (only thread t
     * touches whist[.][t] here, so the scans' barriers suffice) */
    for (int w = 0, run = (int)start; w < KILN_OS_WARPS; w++) {
        uint c = whist[w][t];
        whist[w][t] = (uint)run;
        run += (int)c;
    }
#else
    tstart[t] = start;
#endif
    uint total;
    uint gstart = kiln_os_block_scan(hist[t], wsum, ws, &total);
    gbase[t] = gstart + kiln_os_lookback(status, tile, t, cnt) - start;
    KILN_OS_BARRIER();
KILN_OS_UNROLL
    for (int k = 0; k < KILN_OS_ITEMS; k++) {
        long i = wbase + k * 32 + lane;
        if (i < n) {
            uint d = kiln_os_digit(kiln_sort_bits(key[k], kind, desc), shift,
                                   end);
#if KILN_OS_LEAN & 1
            uint pos = whist[warp][d] + rank[k];
#else
            uint pos = tstart[d] + whist[warp][d] + rank[k];
#endif
            if (!skip_keys)
                xkeys[pos] = key[k];
#if KILN_OS_LEAN & 2
            if (has_vals)
#endif
            xdig[pos] = (uchar)d;
            rank[k] = pos;
        }
    }
    KILN_OS_BARRIER();
    uint count = (uint)(n - base < KILN_OS_TILE ? n - base : KILN_OS_TILE);
#if KILN_OS_LEAN & 2
    if (!has_vals) {
        for (uint p = (uint)t; p < count; p += KILN_OS_THREADS) {
            KILN_KEY_T k = xkeys[p];
            kout[gbase[kiln_os_digit(kiln_sort_bits(k, kind, desc), shift, end)] + p] = k;
        }
        return;
    }
#endif
    if (!skip_keys)
        for (uint p = (uint)t; p < count; p += KILN_OS_THREADS)
            kout[gbase[xdig[p]] + p] = xkeys[p];
    if (!has_vals)
        return;
    KILN_OS_BARRIER();
KILN_OS_UNROLL
    for (int k = 0; k < KILN_OS_ITEMS; k++) {
        long i = wbase + k * 32 + lane;
        if (i < n)
            xvals[rank[k]] = iota ? (KILN_VAL_T)i : vin[i];
    }
    KILN_OS_BARRIER();
#if KILN_VAL_BYTES == 4
    if (wide_vals) { /* argsort's int64 indices (the .cu's comment) */
        for (uint p = (uint)t; p < count; p += KILN_OS_THREADS)
            ((__global ulong *)vout)[gbase[xdig[p]] + p] = (ulong)xvals[p];
        return;
    }
#endif
    for (uint p = (uint)t; p < count; p += KILN_OS_THREADS)
        vout[gbase[xdig[p]] + p] = xvals[p];
}
