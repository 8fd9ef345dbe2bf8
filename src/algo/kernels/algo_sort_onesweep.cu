/* Single-pass ("onesweep") LSD radix sort pass in CUDA C (Adinets &
 * Merrill 2022), chosen by src/algo/sort.c on devices that compile CUDA C
 * and have warp shuffles over warps of 32 and forward progress. Defined
 * before it: the capability defines, KILN_KEY_T, KILN_KEY_BYTES, kiln_uk_t,
 * KILN_VAL_T, kiln_sort_bits (algo_sort_bits.cl), KILN_OS_ITEMS (keys per
 * thread).
 *
 *  1. @NAME@_os_hist: one read of the keys counts the digits of every pass
 *     (8-bit digits) into hist[pass][256] (shared 16-bit counters in
 *     columns, KILN_OS_HCOLS, then global atomics), KILN_OS_HITEMS keys a
 *     thread at a time, on a grid of whole waves (sort.c).
 *  2. @NAME@_os_pass, once per pass: each block takes the next tile
 *     (KILN_OS_THREADS * KILN_OS_ITEMS keys) from an atomic counter, so a
 *     block only waits for tiles that started before it. Each warp loads
 *     32 * KILN_OS_ITEMS consecutive keys warp-striped (coalesced) and
 *     ranks them in memory order: shared atomic ORs (or 8 ballots,
 *     KILN_OS_RANK_OR) find the lanes with the same digit, the lowest of
 *     them bumps the warp's counter of that digit.
 *     Thread d then owns digit d: it turns the warps' counts into offsets,
 *     the block scans the tile's digit counts, and thread d publishes its
 *     count (flag 1: aggregate) and looks back over earlier tiles' words
 *     for digit d until one carries an inclusive prefix (flag 2), then
 *     publishes its own. Keys (then values) are exchanged through shared
 *     memory into digit order and written out coalesced: each run of one
 *     digit goes to consecutive addresses.
 * Argsort (src/algo/sort.c): skip_keys leaves the sorted keys unwritten
 * (the last pass; nobody reads them), and wide_vals (4-byte values only)
 * writes each value as a ulong: int64 indices travel as uint between the
 * passes (n < 2^30 here) and are widened by the last one's store.
 * A status word is flag << 30 | count (algo_sort_lookback.cl, the look-back
 * both forms share): tiles hold fewer than 2^30 keys and
 * the host uses this template only for n < 2^30. The scratch words
 * (histograms, tile counters, status words) are zeroed before the
 * histogram launch. */

#define KILN_OS_THREADS 256
#define KILN_OS_WARPS (KILN_OS_THREADS / 32)
#define KILN_OS_TILE (KILN_OS_THREADS * KILN_OS_ITEMS)
#define KILN_OS_WITEMS (32 * KILN_OS_ITEMS)
#define KILN_OS_HITEMS 8 /* keys a thread per step of the histogram */
#define KILN_OS_FULL 0xffffffffu
/* KILN_OS_FORM4 (sort.c: 4-byte keys alone or with 8-byte values, the
 * measured cases): branch-free key bits (kiln_sort_bits_sel) and a warp's
 * 32-bit bound on its valid keys, not a 64-bit test against n. With both,
 * and 80 registers (KILN_OS_MINB 3), H200 2^28 int32 keys 7.72 ms against
 * 8.10 before, argsort 12.04 against 12.59. The same form made 2^27 int64
 * keys slower (11.62 ms against 10.12), and took 4-byte keys with 1- or
 * 4-byte values from 90 / 79 registers to 108 / 94 (not timed), so the
 * others keep the branchy bits and 64-bit tests (their code is
 * byte-identical to before). */
#if KILN_OS_FORM4
#define KILN_OS_BITS(k) kiln_sort_bits_sel(k, kind, desc)
#define KILN_OS_VALID(i, k) ((k) * 32 + lane < wlim)
#else
#define KILN_OS_BITS(k) kiln_sort_bits(k, kind, desc)
#define KILN_OS_VALID(i, k) ((i) < n)
#endif
/* KILN_OS_MINB (sort.c; KILN_SORT_OS_MINB, by default 3 for 4- and 8-byte
 * keys without values):
 * blocks a multiprocessor the pass's registers must allow. ptxas, sm_90:
 * uncapped the keys-only int32 pass took 94 registers (2 blocks; 8.97
 * ms, H200, 2^28), 3 caps it at 80 (7.73 ms); the argsort's takes 71
 * uncapped (12.05 ms; 12.23 capped). 4 gives 64 and spills. */
#ifdef KILN_OS_MINB
#define KILN_OS_PASS_BOUNDS __launch_bounds__(KILN_OS_THREADS, KILN_OS_MINB)
#else
#define KILN_OS_PASS_BOUNDS __launch_bounds__(KILN_OS_THREADS)
#endif
/* KILN_OS_RANK_OR (sort.c; KILN_SORT_OS_RANK): a warp finds the lanes
 * whose key has the same digit as CUB's WARP_MATCH_ATOMIC_OR does: each
 * lane ORs its bit into the warp's shared word for its digit, reads the
 * word back after a __syncwarp, and the lowest lane of the digit clears
 * it. Two sets of words, alternating by key step, so that a clear needs
 * no third __syncwarp before the next step's ORs: a word is used again
 * two steps later, after the next step's two. 0: 8 ballots, one a digit
 * bit. The words live in the exchange buffer, unused while ranking. */
#ifndef KILN_OS_RANK_OR
#define KILN_OS_RANK_OR 0
#endif
/* KILN_OS_LEAN (sort.c; KILN_SORT_OS_LEAN): fewer shared-memory accesses
 * a key, for a pass whose random digits make each access to a digit's
 * counter or to a key's tile slot several bank conflicts. Bit 0: each
 * digit's start in the tile is added into the warps' offsets after the
 * tile's scan (one lookup a key in the exchange instead of two); bit 1:
 * a pass without values takes each key's digit from the key again when
 * it writes the keys out, instead of storing a byte a key beside it.
 * Defaults by form (sort.c). */
#ifndef KILN_OS_LEAN
#define KILN_OS_LEAN 0
#endif
/* KILN_OS_XFIRST (sort.c; KILN_SORT_OS_XFIRST): the keys go into digit
 * order in shared memory before the tile's look-back, not after it: the
 * positions in the tile need only the block's scans, so the exchange's
 * stores overlap the wait for earlier tiles, and the look-back starts
 * later, when more of them have published their prefixes. */
#ifndef KILN_OS_XFIRST
#define KILN_OS_XFIRST 0
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

KILN_FUNC uint kiln_os_digit(kiln_uk_t u, int shift, int end)
{
    int w = end - shift < 8 ? end - shift : 8;
    return (uint)(u >> shift) & ((1u << w) - 1u);
}

/* The histogram's counters: 16-bit halves of shared words, a column of
 * them for each of KILN_OS_HCOLS lane groups. Digit d of pass p, counted
 * by lane l, is half d & 1 of word p * KILN_OS_HROW + (d >> 1) *
 * KILN_OS_HCOLS + (l % KILN_OS_HCOLS). With 16 columns lanes l and l + 16
 * alone share a column, so a warp's 32 adds meet at most 2 a bank, against
 * about 3.5 in one row of 256 counters. The adds' count, not their
 * conflicts, bounds the loop: the columns took it from 0.464 to 0.439 ms
 * (H200, 2^28 int32, bench/ref/sort_hist_loop.cu; 0.416 on 4 waves).
 * 32 KiB for 4 passes (16 columns) or 8 (8-byte keys, 8 columns). */
#define KILN_OS_HCOLS (KILN_KEY_BYTES > 4 ? 8 : 16)
#define KILN_OS_HROW (128 * KILN_OS_HCOLS)
/* steps after which a half may overflow: each adds at most KILN_OS_HITEMS
 * a thread to a half, which 32 / KILN_OS_HCOLS lanes of each warp share */
#ifndef KILN_OS_HLIMIT /* (sort.c sets it smaller for a test) */
#define KILN_OS_HLIMIT                                                        \
    (65535 / ((32 / KILN_OS_HCOLS) * KILN_OS_WARPS * KILN_OS_HITEMS))
#endif

KILN_FUNC void kiln_os_hcount(uint *sh, int p, uint d, int col)
{
    atomicAdd(&sh[p * KILN_OS_HROW + (int)(d >> 1) * KILN_OS_HCOLS + col],
              1u << (16 * (d & 1u)));
}

/* The block's counts into hist (global atomics), its counters zeroed.
 * xkey: what the counted bits lack of the order bits (the host's
 * comment), each digit's count goes to the digit xor'ed with it. A thread
 * a digit: its columns read in a rotated order, so that the 16 digit
 * pairs of a warp meet in distinct banks. */
KILN_FUNC void kiln_os_hflush(uint *sh, int passes, int begin, int end,
                              kiln_uk_t xkey, uint *hist)
{
    __syncthreads();
    for (int i = threadIdx.x; i < passes * 256; i += KILN_OS_THREADS) {
        const int p = i >> 8;
        const uint d = (uint)i & 255u, pair = d >> 1;
        const uint *row = sh + p * KILN_OS_HROW + pair * KILN_OS_HCOLS;
        uint sum = 0;
#pragma unroll
        for (uint c = 0; c < KILN_OS_HCOLS; c++)
            sum += (row[(c + pair) & (KILN_OS_HCOLS - 1)] >> (16 * (d & 1u))) &
                   0xffffu;
        if (sum)
            atomicAdd(&hist[p * 256 + (d ^ kiln_os_digit(xkey, begin + 8 * p, end))],
                      sum);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < passes * KILN_OS_HROW; i += KILN_OS_THREADS)
        sh[i] = 0;
    __syncthreads();
}

/* One step of the histogram: KILN_OS_HITEMS keys a thread, their order
 * bits (or, where those are the key xor a constant, the key's own: see
 * the kernel) counted. Inlined with constant `order`. */
KILN_FUNC void kiln_os_hstep(const KILN_KEY_T *keys, long n, long b,
                             bool whole, bool order, int kind, int desc,
                             int begin, int end, int passes, uint *sh, int col)
{
    const long step = (long)KILN_OS_THREADS * KILN_OS_HITEMS;
    const bool full = b + step <= n;
    kiln_uk_t u[KILN_OS_HITEMS];
    /* all loads first, unguarded in a full step: KILN_OS_HITEMS in flight
     * a thread (with one a thread the kernel read its 1 GiB at 38% of
     * copy bandwidth, H100) */
    if (full) {
#pragma unroll
        for (int k = 0; k < KILN_OS_HITEMS; k++)
            u[k] = (kiln_uk_t)keys[b + k * KILN_OS_THREADS + threadIdx.x];
    } else {
#pragma unroll
        for (int k = 0; k < KILN_OS_HITEMS; k++) {
            long i = b + k * KILN_OS_THREADS + threadIdx.x;
            u[k] = i < n ? (kiln_uk_t)keys[i] : 0;
        }
    }
    if (order) {
#pragma unroll
        for (int k = 0; k < KILN_OS_HITEMS; k++)
            u[k] = KILN_OS_BITS((KILN_KEY_T)u[k]);
    }
    if (whole && full) {
        /* the whole key in a full step (the common case): constant digit
         * shifts, every pass unrolled, no test a key */
#pragma unroll
        for (int k = 0; k < KILN_OS_HITEMS; k++)
#pragma unroll
            for (int p = 0; p < KILN_KEY_BYTES; p++)
                kiln_os_hcount(sh, p, (uint)(u[k] >> (8 * p)) & 255u, col);
        return;
    }
#pragma unroll
    for (int k = 0; k < KILN_OS_HITEMS; k++) {
        if (b + k * KILN_OS_THREADS + threadIdx.x >= n)
            break;
        for (int p = 0; p < passes; p++)
            kiln_os_hcount(sh, p, kiln_os_digit(u[k], begin + 8 * p, end), col);
    }
}

KILN_KERNEL void __launch_bounds__(KILN_OS_THREADS)
@NAME@_os_hist(const KILN_KEY_T *keys, long n, int kind, int desc, int begin,
               int end, int passes, uint *hist)
{
    __shared__ uint sh[KILN_KEY_BYTES * KILN_OS_HROW];
    for (int i = threadIdx.x; i < passes * KILN_OS_HROW; i += KILN_OS_THREADS)
        sh[i] = 0;
    __syncthreads();
    const int col = (int)(threadIdx.x & (KILN_OS_HCOLS - 1));
    const long step = (long)KILN_OS_THREADS * KILN_OS_HITEMS;
    /* every bit of the key: passes == KILN_KEY_BYTES, digit p is byte p */
    const bool whole = begin == 0 && end == 8 * KILN_KEY_BYTES;
    /* Integer keys are counted by their own digits and the flush moves
     * each count to its order digit (kiln_sort_xkey): a key costs a load
     * and its adds (the kernel's own instructions, not only its shared
     * atomics, bound it: H200, 2^28 int32, 0.59 ms with the order bits of
     * each key, a loop of plain loads and adds 0.46). Floats take theirs. */
    const bool order = kind == 2;
    const kiln_uk_t xkey = kiln_sort_xkey(kind, desc);
    int steps = 0; /* since the last flush: the same in every thread */
    for (long b = (long)blockIdx.x * step; b < n; b += (long)gridDim.x * step) {
        if (++steps > KILN_OS_HLIMIT) {
            kiln_os_hflush(sh, passes, begin, end, xkey, hist);
            steps = 1;
        }
        if (order)
            kiln_os_hstep(keys, n, b, whole, true, kind, desc, begin, end,
                          passes, sh, col);
        else
            kiln_os_hstep(keys, n, b, whole, false, kind, desc, begin, end,
                          passes, sh, col);
    }
    kiln_os_hflush(sh, passes, begin, end, xkey, hist);
}

/* Exclusive scan of one value per thread over the block; *total gets the
 * sum. wsum: KILN_OS_WARPS words of shared memory. */
KILN_FUNC uint kiln_os_block_scan(uint v, uint *wsum, uint *total)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint x = v;
    for (int o = 1; o < 32; o <<= 1) {
        uint y = __shfl_up_sync(KILN_OS_FULL, x, o);
        if (lane >= o)
            x += y;
    }
    if (lane == 31)
        wsum[warp] = x;
    __syncthreads();
    uint before = 0, all = 0;
    for (int w = 0; w < KILN_OS_WARPS; w++) {
        uint s = wsum[w];
        before += w < warp ? s : 0u;
        all += s;
    }
    __syncthreads();
    *total = all;
    return before + x - v;
}

/* KILN_OS_PACK (sort.c: the CUDA pass of 8-byte keys alone): the packed
 * argsort of 4-byte keys into int64 indices. Each item is one ulong, its
 * index above the key's order bits, sorted as an unsigned key on the low
 * half: one 8-byte exchange a pass, not a key's and a value's (with their
 * two barriers and the digit byte a key). pack bit 0: this pass reads the
 * 4-byte keys (kind and desc in bits 2-3 and 4) and packs them with their
 * index; bit 1: it stores each item's index alone (the int64 indices). */
#ifndef KILN_OS_PACK
#define KILN_OS_PACK 0
#endif
#if KILN_OS_PACK
/* kiln_sort_bits_sel of a 4-byte key, in this sorter of 8-byte keys */
KILN_FUNC uint kiln_os_bits32(uint u, int kind, int desc)
{
    uint neg = 0u - (u >> 31);
    uint flip = (kind == 2 ? neg : 0u) | (kind ? 0x80000000u : 0u);
    uint b = u ^ flip ^ (desc ? 0xffffffffu : 0u);
    return kind == 2 && (u & 0x7fffffffu) > 0x7f800000u ? 0xffffffffu : b;
}
#endif

KILN_KERNEL void KILN_OS_PASS_BOUNDS
@NAME@_os_pass(const KILN_KEY_T *kin, KILN_KEY_T *kout, const KILN_VAL_T *vin,
               KILN_VAL_T *vout, int has_vals, int iota, long n, int kind,
               int desc, int shift, int end, uint *scratch, int pass,
               long tiles, int wide_vals, int skip_keys, int pack)
{
#if KILN_OS_PACK
    /* the packed argsort (the comment at KILN_OS_PACK) */
    const int pack_in = pack & 1, unpack = pack & 2;
    const int kind32 = (pack >> 2) & 3, desc32 = (pack >> 4) & 1;
#else
    (void)pack;
#endif
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
    /* the scratch words: hist[8][256], counters[64], status[passes][tiles][256] */
    const uint *hist = scratch + pass * 256;
    uint *counter = scratch + 8 * 256 + pass;
    uint *status = scratch + 8 * 256 + 64 + (long)pass * tiles * 256;
    /* the exchange buffer holds a tile of keys, later of values; while
     * the keys are ranked, the match words (KILN_OS_RANK_OR) */
    __shared__ ulong xbuf[KILN_OS_XWORDS];
    __shared__ unsigned char xdig[KILN_OS_TILE];
    __shared__ uint whist[KILN_OS_WARPS][256];
#if !(KILN_OS_LEAN & 1)
    __shared__ uint tstart[256]; /* the tile's first position of digit d */
#endif
    __shared__ uint gbase[256];  /* output index of position 0 of digit d */
    __shared__ uint wsum[KILN_OS_WARPS];
    __shared__ uint tile_sh;
    KILN_KEY_T *xkeys = (KILN_KEY_T *)xbuf;
    KILN_VAL_T *xvals = (KILN_VAL_T *)xbuf;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
#if KILN_OS_RANK_OR
    uint *wmatch = (uint *)xbuf; /* [2][KILN_OS_WARPS][256] */
#endif
    if (t == 0)
        tile_sh = atomicAdd(counter, 1u);
    for (int w = 0; w < KILN_OS_WARPS; w++) {
        whist[w][t] = 0;
#if KILN_OS_RANK_OR
        wmatch[w * 256 + t] = wmatch[(KILN_OS_WARPS + w) * 256 + t] = 0;
#endif
    }
    __syncthreads();
    const uint tile = tile_sh;
    const long base = (long)tile * KILN_OS_TILE;
    const long wbase = base + (long)warp * KILN_OS_WITEMS;
    const uint lt_mask = (1u << lane) - 1u;
    /* the warp's valid keys: a 32-bit bound, so each key's test is one
     * compare, not a 64-bit one against n */
#if KILN_OS_FORM4
    const long wrem = n - wbase;
    const int wlim = wrem <= 0 ? 0 : wrem < KILN_OS_WITEMS ? (int)wrem : KILN_OS_WITEMS;
#endif

    KILN_KEY_T key[KILN_OS_ITEMS];
    uint rank[KILN_OS_ITEMS];
    /* every load first: the ranking's __syncwarp()s would otherwise keep
     * the compiler from issuing the next item's load early, and each warp
     * would wait out KILN_OS_ITEMS memory latencies one after another */
#if KILN_OS_PACK
    if (pack_in) {
        /* the loop apart, so that its loads still issue together: the
         * first packed pass took 2.24 ms with the test inside it (H200,
         * 2^28), the later ones 1.89 */
        const uint *kin32 = (const uint *)kin;
        uint k32[KILN_OS_ITEMS];
#pragma unroll
        for (int k = 0; k < KILN_OS_ITEMS; k++) {
            long i = wbase + k * 32 + lane;
            k32[k] = KILN_OS_VALID(i, k) ? kin32[i] : 0u;
        }
#pragma unroll
        for (int k = 0; k < KILN_OS_ITEMS; k++)
            key[k] = (KILN_KEY_T)(wbase + k * 32 + lane) << 32 |
                     kiln_os_bits32(k32[k], kind32, desc32);
    } else
#endif
#pragma unroll
    for (int k = 0; k < KILN_OS_ITEMS; k++) {
        long i = wbase + k * 32 + lane;
        key[k] = KILN_OS_VALID(i, k) ? kin[i] : (KILN_KEY_T)0;
    }
#pragma unroll
    for (int k = 0; k < KILN_OS_ITEMS; k++) {
        long i = wbase + k * 32 + lane;
        int valid = KILN_OS_VALID(i, k);
        uint d = kiln_os_digit(KILN_OS_BITS(key[k]), shift, end);
#if KILN_OS_RANK_OR
        /* the lanes of one digit OR their bits into the warp's word for
         * it (the header's comment) */
        uint *mw = &wmatch[((k & 1) * KILN_OS_WARPS + warp) * 256 + d];
        if (valid)
            atomicOr(mw, 1u << lane);
        __syncwarp();
        uint peers = 0, before = 0;
        if (valid) {
            peers = *mw;
            before = whist[warp][d];
        }
        __syncwarp();
        if (valid && !(peers & lt_mask)) {
            whist[warp][d] = before + __popc(peers);
            *mw = 0;
        }
#else
        /* 8 ballots: one match.any.sync instead took 10.3 ms against
         * 8.9 (H200, 2^28 int32 keys) */
        uint peers = __ballot_sync(KILN_OS_FULL, valid);
#pragma unroll
        for (int b = 0; b < 8; b++) {
            uint bit = (d >> b) & 1u;
            uint bal = __ballot_sync(KILN_OS_FULL, bit);
            peers &= bit ? bal : ~bal;
        }
        uint before = 0;
        if (valid)
            before = whist[warp][d];
        __syncwarp();
        if (valid && !(peers & lt_mask))
            whist[warp][d] = before + __popc(peers);
        __syncwarp();
#endif
        rank[k] = before + __popc(peers & lt_mask);
    }
    __syncthreads();
    /* thread t owns digit t: the warps' offsets, the tile's count */
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
    /* publish the tile's count of digit t at once (later tiles' look-backs
     * wait for it), then the block scans, then this tile's look-back */
    uint *st = status + (long)tile * 256 + t;
    *(volatile uint *)st = ((tile == 0 ? 2u : 1u) << 30) | cnt;
    uint ntile;
    uint start = kiln_os_block_scan(cnt, wsum, &ntile);
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
    uint gstart = kiln_os_block_scan(hist[t], wsum, &total);
#if !KILN_OS_XFIRST
    gbase[t] = gstart + kiln_os_lookback(status, tile, t, cnt) - start;
    __syncthreads();
#endif
    /* keys into digit order in shared memory (the tile's positions need
     * only the block's scans, whose barriers the offsets passed) */
#pragma unroll
    for (int k = 0; k < KILN_OS_ITEMS; k++) {
        long i = wbase + k * 32 + lane;
        if (KILN_OS_VALID(i, k)) {
            uint d = kiln_os_digit(KILN_OS_BITS(key[k]), shift,
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
            xdig[pos] = (unsigned char)d;
            rank[k] = pos; /* now the tile position, for the values */
        }
    }
#if KILN_OS_XFIRST
    gbase[t] = gstart + kiln_os_lookback(status, tile, t, cnt) - start;
#endif
    __syncthreads();
    uint count = (uint)(n - base < KILN_OS_TILE ? n - base : KILN_OS_TILE);
#if KILN_OS_LEAN & 2
    if (!has_vals) {
        for (uint p = t; p < count; p += KILN_OS_THREADS) {
            KILN_KEY_T k = xkeys[p];
#if KILN_OS_PACK
            kout[gbase[kiln_os_digit(KILN_OS_BITS(k), shift, end)] + p] =
                unpack ? k >> 32 : k;
#else
            kout[gbase[kiln_os_digit(KILN_OS_BITS(k), shift, end)] + p] = k;
#endif
        }
        return;
    }
#endif
    if (!skip_keys)
        for (uint p = t; p < count; p += KILN_OS_THREADS)
            kout[gbase[xdig[p]] + p] = xkeys[p];
    if (!has_vals)
        return;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < KILN_OS_ITEMS; k++) {
        long i = wbase + k * 32 + lane;
        if (KILN_OS_VALID(i, k))
            xvals[rank[k]] = iota ? (KILN_VAL_T)i : vin[i];
    }
    __syncthreads();
#if KILN_VAL_BYTES == 4
    if (wide_vals) {
        for (uint p = t; p < count; p += KILN_OS_THREADS)
            ((ulong *)vout)[gbase[xdig[p]] + p] = (ulong)xvals[p];
        return;
    }
#endif
    for (uint p = t; p < count; p += KILN_OS_THREADS)
        vout[gbase[xdig[p]] + p] = xvals[p];
}
