/* Portable stable LSD radix sort (src/algo/sort*.c). Defined before it:
 * the capability defines, KILN_LOCAL_SIZE (work-items per group, a power
 * of two), KILN_RADIX_BITS (digit width of a pass), KILN_KEY_T (the key's
 * storage: the unsigned type of its width), KILN_KEY_BYTES, kiln_uk_t
 * (uint or ulong: the key's order bits), KILN_VAL_T (the values' storage,
 * the unsigned type of their width; uint when there are none),
 * KILN_SORT_CPU (1: the CPU variant's kernels), KILN_VAL_BYTES (the
 * values' width; 4 when there are none).
 *
 * One pass sorts by the digit (order_bits >> shift) & mask:
 *  1. @NAME@_hist: tile g (KILN_LOCAL_SIZE work-items, each owning `chunk`
 *     consecutive items) counts its digits into counts[d * ntiles + g];
 *  2. (the host) an exclusive scan of counts, kiln_array_cumsum_out: the
 *     position of tile g's first item of digit d in the output;
 *  3. @NAME@_scatter: each tile counts again, ranks its items (digit-major,
 *     then work-item, then item: the input order within a digit, so the
 *     pass is stable) and writes keys and values to their positions (on
 *     GPUs through the tile sorted in local memory, so that the writes of
 *     a digit's run are coalesced).
 * Each work-item's counters are its own column of a local table, so no
 * atomics are needed. On GPUs 256 work-items of KILN_TILE_ITEMS items (4-bit digits: a
 * 16 KiB table). On CPUs (KILN_SORT_CPU: kernels of their own,
 * @NAME@_chist and _cscatter, with the same arguments and a gate) the
 * groups have one work-item and a long chunk (11-bit digits: 2048
 * counters), and the scatter takes its positions from the scan and
 * writes through write-combining lines (below); large sorts there are an
 * MSD pass and buckets sorted in cache (@NAME@_range, _bucket). Positions
 * are 32-bit (n < 2^32).
 * kiln_sort_bits (algo_sort_bits.cl) comes before it. */

#define KILN_RADIX (1 << KILN_RADIX_BITS)
#define KILN_CNT (KILN_RADIX * KILN_LOCAL_SIZE)
/* The GPU kernels' counter table: entry f at KILN_CX(f), with a pad word
 * every 32 (KILN_TILE_PAD) so that the scan, where work-item l reads
 * entries l * KILN_RADIX + j, hits 32 banks, not 2 */
#if KILN_TILE_PAD
#define KILN_CX(f) ((f) + ((f) >> 5))
#define KILN_CNTP (KILN_CNT + KILN_CNT / 32)
#else
#define KILN_CX(f) (f)
#define KILN_CNTP KILN_CNT
#endif
#define KILN_DIGIT(k) ((uint)(kiln_sort_bits((k), kind, desc) >> shift) & mask)

/* Zeroes this work-item's column of cnt and counts its chunk's digits;
 * declares kiln_b, kiln_e (the chunk) and l, g. */
#define KILN_COUNT_CHUNK(keys)                                                \
    long l = (long)kiln_local_id(0), g = (long)kiln_group_id(0);             \
    long kiln_b = (g * KILN_LOCAL_SIZE + l) * chunk;                          \
    long kiln_e = kiln_b + chunk < n ? kiln_b + chunk : n;                    \
    for (int d = 0; d < KILN_RADIX; d++)                                      \
        cnt[KILN_CX(d * KILN_LOCAL_SIZE + l)] = 0;                            \
    for (long i = kiln_b; i < kiln_e; i++)                                    \
        cnt[KILN_CX(KILN_DIGIT(keys[i]) * KILN_LOCAL_SIZE + l)]++;

#if !KILN_SORT_CPU && KILN_RADIX_BITS != 8
KILN_KERNEL void @NAME@_hist(KILN_GLOBAL const KILN_KEY_T *keys, long n,
                             long chunk, int kind, int desc, int shift,
                             uint mask, KILN_GLOBAL uint *counts,
                             long ntiles)
{
    KILN_LOCAL uint cnt[KILN_CNTP];
    KILN_COUNT_CHUNK(keys)
    kiln_barrier();
#if KILN_LOCAL_SIZE % KILN_RADIX == 0
    /* every work-item adds up a slice of a digit's row (KILN_LOCAL_SIZE /
     * KILN_RADIX of them a row), then one a digit adds the slices: not
     * one work-item a digit reading the whole row */
    {
        const long per = KILN_LOCAL_SIZE / KILN_RADIX; /* slices a row */
        const long w = KILN_LOCAL_SIZE / per;          /* a slice's width */
        long d = l / per, q = l % per;
        uint s = 0;
        for (long t = 0; t < w; t++)
            s += cnt[KILN_CX(d * KILN_LOCAL_SIZE + q * w + t)];
        kiln_barrier();
        cnt[l] = s; /* slice q of digit d, at d * per + q */
        kiln_barrier();
        if (l < KILN_RADIX) {
            uint r = 0;
            for (long t = 0; t < per; t++)
                r += cnt[l * per + t];
            counts[l * ntiles + g] = r;
        }
    }
#else
    for (long d = l; d < KILN_RADIX; d += KILN_LOCAL_SIZE) {
        uint s = 0;
        for (long t = 0; t < KILN_LOCAL_SIZE; t++)
            s += cnt[KILN_CX(d * KILN_LOCAL_SIZE + t)];
        counts[d * ntiles + g] = s;
    }
#endif
}
#endif

/* A local-memory counter bumped by several work-items at once */
#ifdef KILN_BACKEND_CUDA
#define KILN_SORT_LOCAL_INC(p) atomicAdd((p), 1u)
#else
#define KILN_SORT_LOCAL_INC(p) atomic_inc((volatile __local uint *)(p))
#endif

#if !KILN_SORT_CPU && KILN_RADIX_BITS == 8
/* 8-bit digits (KILN_SORT_TILE_BITS=8): a tile's 256 counts from a local
 * histogram (the order of the adds does not matter for counts), the tile
 * read striped, so the loads are coalesced. */
KILN_KERNEL void @NAME@_hist(KILN_GLOBAL const KILN_KEY_T *keys, long n,
                             long chunk, int kind, int desc, int shift,
                             uint mask, KILN_GLOBAL uint *counts,
                             long ntiles)
{
    KILN_LOCAL uint h[KILN_RADIX];
    long l = (long)kiln_local_id(0), g = (long)kiln_group_id(0);
    long t0 = g * KILN_LOCAL_SIZE * chunk;
    long te = t0 + KILN_LOCAL_SIZE * chunk < n ? t0 + KILN_LOCAL_SIZE * chunk : n;
    for (long d = l; d < KILN_RADIX; d += KILN_LOCAL_SIZE)
        h[d] = 0;
    kiln_barrier();
    for (long i = t0 + l; i < te; i += KILN_LOCAL_SIZE)
        KILN_SORT_LOCAL_INC(&h[KILN_DIGIT(keys[i])]);
    kiln_barrier();
    for (long d = l; d < KILN_RADIX; d += KILN_LOCAL_SIZE)
        counts[d * ntiles + g] = h[d];
}
#endif

/* Exclusive scan of part[0..KILN_LOCAL_SIZE) in place (Hillis-Steele);
 * every work-item of the group runs it. */
#define KILN_GROUP_SCAN(part, l, mine)                                        \
    part[l] = mine;                                                           \
    kiln_barrier();                                                           \
    for (long kiln_o = 1; kiln_o < KILN_LOCAL_SIZE; kiln_o <<= 1) {           \
        uint kiln_v = l >= kiln_o ? part[l - kiln_o] : 0u;                    \
        kiln_barrier();                                                       \
        part[l] += kiln_v;                                                    \
        kiln_barrier();                                                       \
    }

/* Exclusive scan in place of a counter table of nd digits x
 * KILN_LOCAL_SIZE work-items (entry f at KILN_CX(f)), digit-major: the
 * place in the tile of each work-item's first item of each digit.
 * Work-item l owns entries [l * nd, (l + 1) * nd); part is scratch. */
#define KILN_TABLE_SCAN(cnt, nd, part, l)                                     \
    {                                                                         \
        uint kiln_s = 0;                                                      \
        for (int kiln_j = 0; kiln_j < (nd); kiln_j++)                         \
            kiln_s += cnt[KILN_CX((l) * (nd) + kiln_j)];                      \
        KILN_GROUP_SCAN(part, l, kiln_s)                                      \
        uint kiln_run = part[l] - kiln_s;                                     \
        for (int kiln_j = 0; kiln_j < (nd); kiln_j++) {                       \
            uint kiln_c = cnt[KILN_CX((l) * (nd) + kiln_j)];                  \
            cnt[KILN_CX((l) * (nd) + kiln_j)] = kiln_run;                     \
            kiln_run += kiln_c;                                               \
        }                                                                     \
    }

#if KILN_SORT_CPU
/* The CPU variant: a group is one work-item owning tile g, `chunk`
 * consecutive items. Integer digits are (key xor a constant) >> shift &
 * mask; floats take kiln_sort_bits. */
/* The hybrid sort (@NAME@_bucket below) gates the LSD passes that stand
 * in for it: 1 when cap is 0 (a plain LSD sort) or some bucket of the
 * MSD pass (its scanned counts gate, ntiles tiles; digits past the MSD
 * digit's width are empty buckets) holds more than cap items. */
KILN_FUNC int kiln_sort_wide(KILN_GLOBAL const uint *gate, long ntiles,
                             long n, long cap)
{
    if (cap == 0)
        return 1;
    for (long d = 0; d < KILN_RADIX; d++) {
        uint e = d == KILN_RADIX - 1 ? (uint)n : gate[(d + 1) * ntiles];
        if ((long)(e - gate[d * ntiles]) > cap)
            return 1;
    }
    return 0;
}

/* The hybrid's MSD digit sits just under the highest order bit that
 * differs between keys (so keys whose top bits are all the same, such as
 * small integers, still spread over the buckets): rng holds, for each of
 * ntiles tiles, its first key's order bits and the OR of every key's
 * order bits xor those (@NAME@_range). The digit's lowest bit: at least
 * begin, its top at most end; mb: its width. */
KILN_FUNC int kiln_sort_msd_shift(KILN_GLOBAL const kiln_uk_t *rng,
                                  long ntiles, int begin, int end, int mb)
{
    kiln_uk_t v = 0;
    for (long t = 0; t < ntiles; t++)
        v |= rng[2 * t + 1] | (rng[2 * t] ^ rng[0]);
    int hi = begin;
    for (int b = end - 1; b >= begin; b--)
        if ((v >> b) & 1) {
            hi = b + 1;
            break;
        }
    return hi - mb > begin ? hi - mb : begin;
}

KILN_KERNEL void @NAME@_range(KILN_GLOBAL const KILN_KEY_T *keys, long n,
                              long chunk, int kind, int desc,
                              KILN_GLOBAL kiln_uk_t *rng)
{
    long g = (long)kiln_group_id(0);
    long b = g * chunk, e = b + chunk < n ? b + chunk : n;
    kiln_uk_t x = kiln_sort_bits((KILN_KEY_T)0, kind, desc);
    kiln_uk_t u0 = kiln_sort_bits(keys[b], kind, desc), v = 0;
    if (kind == 2) {
        for (long i = b; i < e; i++)
            v |= kiln_sort_bits(keys[i], kind, desc) ^ u0;
    } else {
        for (long i = b; i < e; i++)
            v |= ((kiln_uk_t)keys[i] ^ x) ^ u0;
    }
    rng[2 * g] = u0;
    rng[2 * g + 1] = v;
}

/* Whether a CPU pass kernel runs, and its digit's place. msd: 0 for a
 * plain LSD pass (it runs); else the hybrid's begin | end << 8 | the MSD
 * digit's width << 16: with cap 0 the MSD pass, which runs with *shift
 * placed by kiln_sort_msd_shift; with cap > 0 a pass standing in for the
 * buckets, which runs when there are bits under the MSD digit and some
 * bucket holds more than cap items. */
KILN_FUNC int kiln_sort_runs(KILN_GLOBAL const uint *gate, long ntiles,
                             long n, long cap,
                             KILN_GLOBAL const kiln_uk_t *rng, int msd,
                             int *shift)
{
    if (msd == 0)
        return 1;
    int begin = msd & 255, end = (msd >> 8) & 255, mb = msd >> 16;
    int msh = kiln_sort_msd_shift(rng, ntiles, begin, end, mb);
    if (cap == 0) {
        *shift = msh;
        return 1;
    }
    return msh > begin && kiln_sort_wide(gate, ntiles, n, cap);
}

KILN_KERNEL void @NAME@_chist(KILN_GLOBAL const KILN_KEY_T *keys, long n,
                              long chunk, int kind, int desc, int shift,
                              uint mask, KILN_GLOBAL uint *counts,
                              long ntiles, KILN_GLOBAL const uint *gate,
                              long cap, KILN_GLOBAL const kiln_uk_t *rng,
                              int msd)
{
    KILN_LOCAL uint cnt[KILN_RADIX];
    if (!kiln_sort_runs(gate, ntiles, n, cap, rng, msd, &shift))
        return;
    long g = (long)kiln_group_id(0);
    long b = g * chunk, e = b + chunk < n ? b + chunk : n;
    kiln_uk_t x = kiln_sort_bits((KILN_KEY_T)0, kind, desc);
    for (int d = 0; d < KILN_RADIX; d++)
        cnt[d] = 0;
    if (kind == 2) {
        for (long i = b; i < e; i++)
            cnt[KILN_DIGIT(keys[i])]++;
    } else {
        for (long i = b; i < e; i++)
            cnt[(uint)((((kiln_uk_t)keys[i]) ^ x) >> shift) & mask]++;
    }
    for (long d = 0; d < KILN_RADIX; d++)
        counts[d * ntiles + g] = cnt[d];
}

/* The scatter: the scanned counts are the positions of this tile's items
 * (no second count). Each digit's keys (and values) gather in a
 * write-combining line of KILN_WC items, aligned to the output's
 * positions, and go out a whole line at a time: 2048 output streams per
 * work-item otherwise touch a line (and often a page) per item. The lines
 * live in this group's part of the global scratch wc (on a CPU as near as
 * local memory, and not bounded by its size). A pass whose digit is the
 * same for every key is the identity: the chunk is copied. */
/* items a buffer: 128 bytes (two cache lines: half the flushes of one
 * line, ~15% faster on the 2-core PoCL machine) of the wider of keys and
 * values, widths under 4 bytes counted as 4: 32 or 16 items */
#define KILN_WC_MAX (KILN_KEY_BYTES > KILN_VAL_BYTES ? KILN_KEY_BYTES        \
                                                     : KILN_VAL_BYTES)
#define KILN_WC (128 / (KILN_WC_MAX > 4 ? KILN_WC_MAX : 4))

/* dst[0..KILN_WC) = src[0..KILN_WC); dst is a line's start. Where the
 * compiler has them (clang: PoCL), non-temporal stores of whole lines
 * when the output is 64-byte aligned (nt): a cached store would first
 * read the line it overwrites. */
#if defined(__OPENCL_VERSION__) && defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define KILN_WC_NT 1
#endif
#endif
#ifndef KILN_WC_NT
#define KILN_WC_NT 0
#endif
#if KILN_WC_NT && KILN_WC % 16 == 0
#define KILN_WC_COPY(dst, src, nt)                                            \
    for (int kiln_j = 0; kiln_j < KILN_WC / 16; kiln_j++) {                   \
        if (nt)                                                               \
            __builtin_nontemporal_store(                                      \
                vload16(kiln_j, (src)),                                       \
                (KILN_GLOBAL __typeof__(vload16(0, (src))) *)(dst) + kiln_j); \
        else                                                                  \
            vstore16(vload16(kiln_j, (src)), kiln_j, (dst));                  \
    }
#elif KILN_WC_NT
#define KILN_WC_COPY(dst, src, nt)                                            \
    if (nt)                                                                   \
        __builtin_nontemporal_store(                                          \
            vload8(0, (src)),                                                 \
            (KILN_GLOBAL __typeof__(vload8(0, (src))) *)(dst));               \
    else                                                                      \
        vstore8(vload8(0, (src)), 0, (dst));
#else
#define KILN_WC_COPY(dst, src, nt)                                            \
    for (int kiln_j = 0; kiln_j < KILN_WC; kiln_j++)                          \
        (dst)[kiln_j] = (src)[kiln_j];
#endif

/* Items [lo, hi) of digit line w out */
#define KILN_WC_OUT(lo, hi, w)                                                \
    for (uint q = (lo); q < (hi); q++)                                        \
        kout[q] = wk[(w) + (q & (KILN_WC - 1))];                              \
    if (has_vals)                                                             \
        for (uint q = (lo); q < (hi); q++)                                    \
            vout[q] = wv[(w) + (q & (KILN_WC - 1))];

/* The scatter loop; DIG: the digit of key k, V: stores item i's value at
 * wv[s] */
#define KILN_WC_PUT(DIG, V)                                                   \
    for (long i = b; i < e; i++) {                                            \
        KILN_KEY_T k = kin[i];                                                \
        uint d = (DIG);                                                       \
        uint p = pos[d]++;                                                    \
        uint s = d * KILN_WC + (p & (KILN_WC - 1));                           \
        wk[s] = k;                                                            \
        V;                                                                    \
        if ((p & (KILN_WC - 1)) == KILN_WC - 1) {                             \
            uint lo = p - (KILN_WC - 1), f = first[d];                        \
            uint w = d * KILN_WC;                                             \
            if (lo >= f) {                                                    \
                KILN_WC_COPY(kout + lo, wk + w, knt)                          \
                if (has_vals) {                                               \
                    KILN_WC_COPY(vout + lo, wv + w, vnt)                      \
                }                                                             \
            } else {                                                          \
                KILN_WC_OUT(f, p + 1, w)                                      \
            }                                                                 \
        }                                                                     \
    }

#define KILN_WC_VALS(DIG)                                                     \
    if (!has_vals) {                                                          \
        KILN_WC_PUT(DIG, (void)0)                                             \
    } else if (iota) {                                                        \
        KILN_WC_PUT(DIG, wv[s] = (KILN_VAL_T)i)                               \
    } else {                                                                  \
        KILN_WC_PUT(DIG, wv[s] = vin[i])                                      \
    }

/* wc: wc_bytes (a multiple of 64) for each group: KILN_RADIX lines of
 * keys, then of values (the host's cpu_wc_bytes, sort.c). */
KILN_KERNEL void @NAME@_cscatter(KILN_GLOBAL const KILN_KEY_T *kin,
                                KILN_GLOBAL KILN_KEY_T *kout,
                                KILN_GLOBAL const KILN_VAL_T *vin,
                                KILN_GLOBAL KILN_VAL_T *vout, int has_vals,
                                int iota, long n, long chunk, int kind,
                                int desc, int shift, uint mask,
                                KILN_GLOBAL const uint *offs, long ntiles,
                                KILN_GLOBAL uchar *wc, long wc_bytes,
                                KILN_GLOBAL const uint *gate, long cap,
                                KILN_GLOBAL const kiln_uk_t *rng, int msd)
{
    KILN_LOCAL uint pos[KILN_RADIX];
    KILN_LOCAL uint first[KILN_RADIX];
    if (!kiln_sort_runs(gate, ntiles, n, cap, rng, msd, &shift))
        return;
    long g = (long)kiln_group_id(0);
    long b = g * chunk, e = b + chunk < n ? b + chunk : n;
    KILN_GLOBAL uchar *mine = wc + g * wc_bytes;
    KILN_GLOBAL KILN_KEY_T *wk = (KILN_GLOBAL KILN_KEY_T *)mine;
    KILN_GLOBAL KILN_VAL_T *wv =
        (KILN_GLOBAL KILN_VAL_T *)(mine + (long)KILN_RADIX * KILN_WC *
                                              KILN_KEY_BYTES);
    /* the identity pass: every key has the first key's digit */
    uint d0 = KILN_DIGIT(kin[b]);
    if (offs[d0 * ntiles] == 0 &&
        (d0 == mask || offs[(d0 + 1) * ntiles] == (uint)n)) {
        for (long i = b; i < e; i++)
            kout[i] = kin[i];
        if (has_vals)
            for (long i = b; i < e; i++)
                vout[i] = iota ? (KILN_VAL_T)i : vin[i];
        return;
    }
    for (uint d = 0; d <= mask; d++)
        pos[d] = first[d] = offs[d * ntiles + g];
    int knt = ((ulong)kout & 63) == 0, vnt = ((ulong)vout & 63) == 0;
    if (kind == 2) {
        KILN_WC_VALS(KILN_DIGIT(k))
    } else {
        kiln_uk_t x = kiln_sort_bits((KILN_KEY_T)0, kind, desc);
        KILN_WC_VALS((uint)((((kiln_uk_t)k) ^ x) >> shift) & mask)
    }
    /* the partial lines left */
    for (uint d = 0; d <= mask; d++) {
        uint p = pos[d], lo = p & ~(uint)(KILN_WC - 1), w = d * KILN_WC;
        KILN_WC_OUT(lo < first[d] ? first[d] : lo, p, w)
    }
}

/* The hybrid sort's second step (sort.c): after an MSD pass on the top 8
 * to 11 bits of the range (buckets of about 2^16 items, a few hundred
 * KiB, in a core's L2), group g sorts buckets g, g + groups, ... on the
 * bits below it (from begin; kiln_sort_msd_shift gives the MSD digit's
 * place) with LSD passes of up to wmax-bit digits that stay in the
 * core's cache: one read counts two passes' digits,
 * passes whose digit is the same for the whole bucket are skipped, the
 * first pass reads the bucket from kin (the MSD pass's output; kout
 * itself when inplace) and the passes ping-pong between the group's two
 * aux buffers; then the bucket is written to its place in kout in order
 * (non-temporal stores: its lines are not read first). scr: scr_bytes
 * for each group: the counters (a multiple of 64 bytes; room for
 * ceil((end - mb - begin) / wmax) x 2^wmax), two buffers of
 * cap keys, two of cap values (KILN_VAL_BYTES each; none without
 * values), each a multiple of 64 bytes. When some bucket holds more
 * than cap items (and bits are left under the MSD digit) the kernel does
 * nothing and gated LSD passes sort instead. */
#define KILN_BK_HIST(ORD)                                                     \
    for (int p = 0; p < q; p += 2) {                                          \
        KILN_GLOBAL uint *c = cnt + p * R;                                    \
        int shp = sh[p];                                                      \
        uint mkp = mk[p];                                                     \
        if (p + 1 < q) {                                                      \
            KILN_GLOBAL uint *c1 = c + R;                                     \
            int sh1 = sh[p + 1];                                              \
            uint mk1 = mk[p + 1];                                             \
            for (uint i = 0; i < m; i++) {                                    \
                kiln_uk_t u = ORD(src[i]);                                    \
                c[(uint)(u >> shp) & mkp]++;                                  \
                c1[(uint)(u >> sh1) & mk1]++;                                 \
            }                                                                 \
        } else {                                                              \
            for (uint i = 0; i < m; i++)                                      \
                c[(uint)(ORD(src[i]) >> shp) & mkp]++;                        \
        }                                                                     \
    }
#define KILN_BK_PASS(ORD)                                                     \
    if (has_vals) {                                                           \
        for (uint i = 0; i < m; i++) {                                        \
            KILN_KEY_T k = src[i];                                            \
            uint t = c[(uint)(ORD(k) >> shp) & mkp]++;                        \
            dst[t] = k;                                                       \
            vdst[t] = vsrc[i];                                                \
        }                                                                     \
    } else {                                                                  \
        for (uint i = 0; i < m; i++) {                                        \
            KILN_KEY_T k = src[i];                                            \
            dst[c[(uint)(ORD(k) >> shp) & mkp]++] = k;                        \
        }                                                                     \
    }
#define KILN_BK_FLOAT(k) kiln_sort_bits((k), kind, desc)
#define KILN_BK_INT(k) (((kiln_uk_t)(k)) ^ x)
#define KILN_BK_MAXQ 16
#if KILN_WC_NT
#define KILN_NT_PUT(p, v) __builtin_nontemporal_store((v), (p))
#else
#define KILN_NT_PUT(p, v) (*(p) = (v))
#endif

KILN_KERNEL void @NAME@_bucket(KILN_GLOBAL const KILN_KEY_T *kin,
                               KILN_GLOBAL KILN_KEY_T *kout,
                               KILN_GLOBAL const KILN_VAL_T *vin,
                               KILN_GLOBAL KILN_VAL_T *vout, int has_vals,
                               int inplace, long n, int kind, int desc,
                               int begin, int end, int mb, int wmax,
                               KILN_GLOBAL const uint *offs, long ntiles,
                               long cap, KILN_GLOBAL uchar *scr,
                               long scr_bytes,
                               KILN_GLOBAL const kiln_uk_t *rng)
{
    /* the bits under the MSD digit, in q passes of up to wmax bits; none:
     * the MSD pass sorted, the buckets are copied whatever their size */
    int bits = kiln_sort_msd_shift(rng, ntiles, begin, end, mb) - begin;
    if (bits > 0 && kiln_sort_wide(offs, ntiles, n, cap))
        return;
    long g = (long)kiln_group_id(0), groups = (long)kiln_num_groups(0);
    int q = (bits + wmax - 1) / wmax;
    int width = q ? (bits + q - 1) / q : 1;
    uint R = 1u << width;
    int sh[KILN_BK_MAXQ];
    uint mk[KILN_BK_MAXQ];
    for (int p = 0; p < q; p++) {
        int w = bits - p * width < width ? bits - p * width : width;
        sh[p] = begin + p * width;
        mk[p] = (1u << w) - 1;
    }
    long cbytes = ((long)q * R * 4 + 63) / 64 * 64;
    KILN_GLOBAL uchar *mine = scr + g * scr_bytes;
    KILN_GLOBAL uint *cnt = (KILN_GLOBAL uint *)mine;
    KILN_GLOBAL KILN_KEY_T *ak = (KILN_GLOBAL KILN_KEY_T *)(mine + cbytes);
    long kbytes = (cap * KILN_KEY_BYTES + 63) / 64 * 64;
    long vbytes = has_vals ? (cap * KILN_VAL_BYTES + 63) / 64 * 64 : 0;
    KILN_GLOBAL KILN_KEY_T *ak2 =
        (KILN_GLOBAL KILN_KEY_T *)(mine + cbytes + kbytes);
    KILN_GLOBAL KILN_VAL_T *av =
        (KILN_GLOBAL KILN_VAL_T *)(mine + cbytes + 2 * kbytes);
    KILN_GLOBAL KILN_VAL_T *av2 =
        (KILN_GLOBAL KILN_VAL_T *)(mine + cbytes + 2 * kbytes + vbytes);
    kiln_uk_t x = kiln_sort_bits((KILN_KEY_T)0, kind, desc);
    for (long b = g; b < KILN_RADIX; b += groups) {
        uint s0 = offs[b * ntiles];
        uint e = b == KILN_RADIX - 1 ? (uint)n : offs[(b + 1) * ntiles];
        uint m = e - s0;
        if (m == 0)
            continue;
        KILN_GLOBAL const KILN_KEY_T *src = kin + s0;
        KILN_GLOBAL const KILN_VAL_T *vsrc = vin + s0;
        KILN_GLOBAL KILN_KEY_T *dk = kout + s0;
        KILN_GLOBAL KILN_VAL_T *dv = vout + s0;
        for (uint j = 0; j < (uint)q * R; j++)
            cnt[j] = 0;
        if (kind == 2) {
            KILN_BK_HIST(KILN_BK_FLOAT)
        } else {
            KILN_BK_HIST(KILN_BK_INT)
        }
        /* the passes that move items, their counts scanned */
        int act[KILN_BK_MAXQ], a = 0;
        kiln_uk_t u0 = kind == 2 ? KILN_BK_FLOAT(src[0]) : KILN_BK_INT(src[0]);
        for (int p = 0; p < q; p++) {
            KILN_GLOBAL uint *c = cnt + p * R;
            act[p] = c[(uint)(u0 >> sh[p]) & mk[p]] != m;
            if (!act[p])
                continue;
            a++;
            uint t = 0;
            for (uint d = 0; d <= mk[p]; d++) {
                uint v = c[d];
                c[d] = t;
                t += v;
            }
        }
        /* the passes ping-pong between the two aux buffers (in cache);
         * then the bucket goes out in order, without reading its lines
         * first (non-temporal stores where the compiler has them) */
        for (int p = 0, j = 0; p < q; p++) {
            if (!act[p])
                continue;
            KILN_GLOBAL KILN_KEY_T *dst = j % 2 ? ak2 : ak;
            KILN_GLOBAL KILN_VAL_T *vdst = j % 2 ? av2 : av;
            KILN_GLOBAL uint *c = cnt + p * R;
            int shp = sh[p];
            uint mkp = mk[p];
            if (kind == 2) {
                KILN_BK_PASS(KILN_BK_FLOAT)
            } else {
                KILN_BK_PASS(KILN_BK_INT)
            }
            src = dst;
            vsrc = vdst;
            j++;
        }
        if (a || !inplace) {
            for (uint i = 0; i < m; i++)
                KILN_NT_PUT(dk + i, src[i]);
            if (has_vals)
                for (uint i = 0; i < m; i++)
                    KILN_NT_PUT(dv + i, vsrc[i]);
        }
    }
}
#else
/* A pointer into local memory (OpenCL's address space; CUDA has none) */
#ifdef KILN_BACKEND_CUDA
#define KILN_LPTR(T) T *
#else
#define KILN_LPTR(T) __local T *
#endif

#if KILN_RADIX_BITS == 8
/* 8-bit digits (KILN_SORT_TILE_BITS=8): half the passes of 4-bit ones.
 * A per-work-item counter table of 256 digits would not fit local memory,
 * so the tile is sorted by its 8-bit digit in local memory with two
 * stable 4-bit rounds (low nibble, then high: an LSD sort inside the
 * tile), each ranked as the 4-bit scatter ranks (digit-major, then
 * work-item, then item). The tile's first place of each digit comes from
 * a local histogram; item j of the sorted tile goes to start[digit] + j,
 * coalesced. Values are read from the input by each item's index in the
 * tile. Local memory: the tile's keys and indices, a padded 16 x
 * KILN_LOCAL_SIZE table and 256 starts (256 x 8 items, 8-byte keys: 38.5
 * KiB). */
#define KILN_TILE (KILN_LOCAL_SIZE * KILN_TILE_ITEMS)
/* the nibble table, padded as the 4-bit one (KILN_CX) */
#define KILN_NCNT (16 * KILN_LOCAL_SIZE)
#if KILN_TILE_PAD
#define KILN_NCNTP (KILN_NCNT + KILN_NCNT / 32)
#else
#define KILN_NCNTP KILN_NCNT
#endif
#define KILN_NIB(k, r) ((KILN_DIGIT(k) >> (4 * (r))) & 15u)
KILN_KERNEL void @NAME@_scatter(KILN_GLOBAL const KILN_KEY_T *kin,
                                KILN_GLOBAL KILN_KEY_T *kout,
                                KILN_GLOBAL const KILN_VAL_T *vin,
                                KILN_GLOBAL KILN_VAL_T *vout, int has_vals,
                                int iota, long n, long chunk, int kind,
                                int desc, int shift, uint mask,
                                KILN_GLOBAL const uint *offs, long ntiles,
                                KILN_GLOBAL uchar *wc, long wc_bytes)
{
    KILN_LOCAL KILN_KEY_T tk[KILN_TILE];
    KILN_LOCAL ushort ti[KILN_TILE];
    KILN_LOCAL uint cnt[KILN_NCNTP];
    KILN_LOCAL uint part[KILN_LOCAL_SIZE];
    KILN_LOCAL uint start[KILN_RADIX];
    long l = (long)kiln_local_id(0), g = (long)kiln_group_id(0);
    long t0 = g * (long)KILN_TILE;
    long tn = n - t0 < KILN_TILE ? n - t0 : KILN_TILE;
    long b = l * KILN_TILE_ITEMS;
    KILN_KEY_T key[KILN_TILE_ITEMS];
    uint idx[KILN_TILE_ITEMS], rank[KILN_TILE_ITEMS];
#pragma unroll
    for (int i = 0; i < KILN_TILE_ITEMS; i++)
        if (b + i < tn) {
            key[i] = kin[t0 + b + i];
            idx[i] = (uint)(b + i);
        }
    for (int r = 0; r < 2; r++) {
        for (int d = 0; d < 16; d++)
            cnt[KILN_CX(d * KILN_LOCAL_SIZE + l)] = 0;
#pragma unroll
        for (int i = 0; i < KILN_TILE_ITEMS; i++)
            if (b + i < tn)
                cnt[KILN_CX(KILN_NIB(key[i], r) * KILN_LOCAL_SIZE + l)]++;
        kiln_barrier();
        KILN_TABLE_SCAN(cnt, 16, part, l)
        kiln_barrier();
#pragma unroll
        for (int i = 0; i < KILN_TILE_ITEMS; i++)
            if (b + i < tn)
                rank[i] = cnt[KILN_CX(KILN_NIB(key[i], r) * KILN_LOCAL_SIZE + l)]++;
#pragma unroll
        for (int i = 0; i < KILN_TILE_ITEMS; i++)
            if (b + i < tn) {
                tk[rank[i]] = key[i];
                ti[rank[i]] = (ushort)idx[i];
            }
        kiln_barrier();
        if (r == 0) {
            /* the next round takes this round's order in contiguous
             * chunks, as the first took the input's */
#pragma unroll
            for (int i = 0; i < KILN_TILE_ITEMS; i++)
                if (b + i < tn) {
                    key[i] = tk[b + i];
                    idx[i] = ti[b + i];
                }
            kiln_barrier(); /* read before the next round writes */
        }
    }
    /* the tile's count of each digit, then its first place */
    for (long d = l; d < KILN_RADIX; d += KILN_LOCAL_SIZE)
        start[d] = 0;
    kiln_barrier();
    for (long j = l; j < tn; j += KILN_LOCAL_SIZE)
        KILN_SORT_LOCAL_INC(&start[KILN_DIGIT(tk[j])]);
    kiln_barrier();
#if KILN_LOCAL_SIZE == KILN_RADIX
    {
        uint c = start[l];
        KILN_GROUP_SCAN(part, l, c)
        start[l] = offs[l * ntiles + g] - (part[l] - c);
    }
#else
    if (l == 0) {
        uint run = 0;
        for (int d = 0; d < KILN_RADIX; d++) {
            uint c = start[d];
            start[d] = offs[d * ntiles + g] - run;
            run += c;
        }
    }
#endif
    kiln_barrier();
    /* item j of the sorted tile: start[its digit] + j */
    for (long j = l; j < tn; j += KILN_LOCAL_SIZE) {
        KILN_KEY_T k = tk[j];
        uint pos = start[KILN_DIGIT(k)] + (uint)j;
        kout[pos] = k;
        if (has_vals) {
            long src = t0 + (long)ti[j];
            vout[pos] = iota ? (KILN_VAL_T)src : vin[src];
        }
    }
}
#else
/* The GPU scatter ranks its tile in local memory and writes it out in
 * tile order, so that consecutive work-items write consecutive positions
 * of a digit's run (coalesced) instead of each work-item's items going
 * to scattered places. The tile's keys (then its values) share one
 * local array with the counter table, which is dead by then: at most 32
 * KiB for 8-byte items (NVIDIA's OpenCL gives a group 48 KiB). */
#define KILN_TILE (KILN_LOCAL_SIZE * KILN_TILE_ITEMS)
#define KILN_TW (KILN_KEY_BYTES > KILN_VAL_BYTES ? KILN_KEY_BYTES : KILN_VAL_BYTES)
#define KILN_SM_LONGS (KILN_CNTP / 2 > KILN_TILE * KILN_TW / 8               \
                       ? KILN_CNTP / 2 : KILN_TILE * KILN_TW / 8)
/* iota: the values are the items' indices (argsort's first pass).
 * chunk must be KILN_TILE_ITEMS. wc, wc_bytes: the CPU variant's (unused
 * here: the kernels of both variants take the same arguments). */
KILN_KERNEL void @NAME@_scatter(KILN_GLOBAL const KILN_KEY_T *kin,
                                KILN_GLOBAL KILN_KEY_T *kout,
                                KILN_GLOBAL const KILN_VAL_T *vin,
                                KILN_GLOBAL KILN_VAL_T *vout, int has_vals,
                                int iota, long n, long chunk, int kind,
                                int desc, int shift, uint mask,
                                KILN_GLOBAL const uint *offs, long ntiles,
                                KILN_GLOBAL uchar *wc, long wc_bytes)
{
    KILN_LOCAL ulong sm[KILN_SM_LONGS];
    KILN_LOCAL uint part[KILN_LOCAL_SIZE];
    KILN_LOCAL uint start[KILN_RADIX];
    KILN_LPTR(uint) cnt = (KILN_LPTR(uint))sm;
    long l = (long)kiln_local_id(0), g = (long)kiln_group_id(0);
    long t0 = g * (long)KILN_TILE;               /* the tile's first item */
    long tn = n - t0 < KILN_TILE ? n - t0 : KILN_TILE; /* its items */
    long b = l * KILN_TILE_ITEMS;                /* this work-item's, in it */
    KILN_KEY_T key[KILN_TILE_ITEMS];
    uint rank[KILN_TILE_ITEMS];
    for (int d = 0; d < KILN_RADIX; d++)
        cnt[KILN_CX(d * KILN_LOCAL_SIZE + l)] = 0;
#pragma unroll
    for (int i = 0; i < KILN_TILE_ITEMS; i++)
        if (b + i < tn) {
            key[i] = kin[t0 + b + i];
            cnt[KILN_CX(KILN_DIGIT(key[i]) * KILN_LOCAL_SIZE + l)]++;
        }
    kiln_barrier();
    KILN_TABLE_SCAN(cnt, KILN_RADIX, part, l)
    kiln_barrier();
    /* the tile's global base of digit d, less its first place in the tile
     * (mod 2^32, the sum below is exact) */
    for (long d = l; d < KILN_RADIX; d += KILN_LOCAL_SIZE)
        start[d] = offs[d * ntiles + g] - cnt[KILN_CX(d * KILN_LOCAL_SIZE)];
    kiln_barrier(); /* start read cnt's first column, which the ranks bump */
    /* each item's place in the tile: digit-major, then work-item, then
     * item (the input order within a digit: the pass is stable) */
#pragma unroll
    for (int i = 0; i < KILN_TILE_ITEMS; i++)
        if (b + i < tn)
            rank[i] = cnt[KILN_CX(KILN_DIGIT(key[i]) * KILN_LOCAL_SIZE + l)]++;
    kiln_barrier();
    KILN_LPTR(KILN_KEY_T) tk = (KILN_LPTR(KILN_KEY_T))sm;
#pragma unroll
    for (int i = 0; i < KILN_TILE_ITEMS; i++)
        if (b + i < tn)
            tk[rank[i]] = key[i];
    kiln_barrier();
    /* item j of the sorted tile goes to start[its digit] + j */
    uint pos[KILN_TILE_ITEMS];
#pragma unroll
    for (int i = 0; i < KILN_TILE_ITEMS; i++) {
        long j = (long)i * KILN_LOCAL_SIZE + l;
        if (j < tn) {
            KILN_KEY_T k = tk[j];
            pos[i] = start[KILN_DIGIT(k)] + (uint)j;
            kout[pos[i]] = k;
        }
    }
    if (has_vals) {
        kiln_barrier();
        KILN_LPTR(KILN_VAL_T) tv = (KILN_LPTR(KILN_VAL_T))sm;
#pragma unroll
        for (int i = 0; i < KILN_TILE_ITEMS; i++)
            if (b + i < tn)
                tv[rank[i]] = iota ? (KILN_VAL_T)(t0 + b + i)
                                   : vin[t0 + b + i];
        kiln_barrier();
#pragma unroll
        for (int i = 0; i < KILN_TILE_ITEMS; i++) {
            long j = (long)i * KILN_LOCAL_SIZE + l;
            if (j < tn)
                vout[pos[i]] = tv[j];
        }
    }
}
#endif

#endif

/* Segment of each permuted item: perm[i]'s row (seglen > 0) or the last
 * segment s with offsets[s] <= perm[i] (offsets as int32 or int64,
 * nseg + 1 of them), clamped to [0, nseg). */
KILN_KERNEL void @NAME@_segid(KILN_GLOBAL const uint *perm, long n,
                              KILN_GLOBAL const int *off32,
                              KILN_GLOBAL const long *off64, int wide,
                              long nseg, long seglen, KILN_GLOBAL uint *seg)
{
    long i = (long)kiln_global_id(0);
    if (i >= n)
        return;
    long p = (long)perm[i], s;
    if (seglen > 0) {
        s = p / seglen;
    } else {
        long lo = 0, hi = nseg; /* the answer is in [lo, hi) */
        while (hi - lo > 1) {
            long mid = lo + (hi - lo) / 2;
            long o = wide ? off64[mid] : (long)off32[mid];
            if (o <= p)
                lo = mid;
            else
                hi = mid;
        }
        s = lo;
    }
    seg[i] = (uint)(s < nseg ? s : nseg - 1);
}

/* dst[i] = src[idx[i]] */
KILN_KERNEL void @NAME@_gather(KILN_GLOBAL const KILN_KEY_T *src,
                               KILN_GLOBAL const uint *idx,
                               KILN_GLOBAL KILN_KEY_T *dst, long n)
{
    long i = (long)kiln_global_id(0);
    if (i < n)
        dst[i] = src[idx[i]];
}

/* out[i] = the first j with sorted[j] >= v[i] (right: > v[i]) in the
 * ascending total order of kiln_sort_bits; int64 (wide) or int32 out. */
KILN_KERNEL void @NAME@_search(KILN_GLOBAL const KILN_KEY_T *sorted, long n,
                               KILN_GLOBAL const KILN_KEY_T *v, long m,
                               int kind, int right,
                               KILN_GLOBAL long *out64,
                               KILN_GLOBAL int *out32, int wide)
{
    long i = (long)kiln_global_id(0);
    if (i >= m)
        return;
    kiln_uk_t x = kiln_sort_bits(v[i], kind, 0);
    long lo = 0, hi = n;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        kiln_uk_t y = kiln_sort_bits(sorted[mid], kind, 0);
        if (right ? y <= x : y < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (wide)
        out64[i] = lo;
    else
        out32[i] = (int)lo;
}

/* out[i] = perm[i] as an index, counted from its row's start when
 * seglen > 0 (argsort along the last axis). */
KILN_KERNEL void @NAME@_index(KILN_GLOBAL const uint *perm, long n,
                              long seglen, KILN_GLOBAL KILN_VAL_T *out)
{
    long i = (long)kiln_global_id(0);
    if (i < n)
        out[i] = (KILN_VAL_T)(seglen > 0 ? (long)perm[i] % seglen
                                         : (long)perm[i]);
}
