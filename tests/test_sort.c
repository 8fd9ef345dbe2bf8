/* Radix sort (include/kiln/sort.h) against a serial stable qsort
 * reference: keys only and key-value pairs over every dtype, ascending and
 * descending, at awkward sizes (0, 1, primes, 2^k±1, several tiles);
 * all-equal, sorted, reversed and few-distinct keys; NaNs of both signs,
 * ±0 and ±inf; stability through index payloads; argsort (int32/int64);
 * bit ranges; rows of 2-D arrays, segments (empty and single-item ones),
 * strided views, in place; topk; searchsorted; bad input. The whole suite
 * runs on the device's own variant, then a shorter one with the GPU
 * variant forced (KILN_SORT_VARIANT=tile), so PoCL covers both. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
/* again after kiln.h, as a user may write them: the guards hold */
#include "kiln/random.h"
#include "kiln/sort.h"

static const kiln_dtype kAll[] = { KILN_INT8,    KILN_UINT8,   KILN_INT16,  KILN_UINT16,
                                   KILN_INT32,   KILN_UINT32,  KILN_INT64,  KILN_UINT64,
                                   KILN_FLOAT16, KILN_FLOAT32, KILN_FLOAT64 };
#define NALL (sizeof kAll / sizeof kAll[0])

/* ---- the reference: a stable sort of indices by a total order */

static float half_to_float(uint16_t h) {
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023;
    uint32_t u;
    if (e == 31)
        u = s | 0x7f800000u | (m << 13);
    else if (e)
        u = s | ((e + 112) << 23) | (m << 13);
    else if (m) { /* subnormal: m * 2^-24 */
        float f = (float)m * (1.0f / 16777216.0f);
        return s ? -f : f;
    } else
        u = s;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ascending total order of items i and j (-1, 0, 1); *nan gets which of
 * them are NaN (bit 0: i, bit 1: j) */
static int key_cmp(kiln_dtype d, const void *p, size_t i, size_t j, int *nan) {
    *nan = 0;
    switch (d) {
    case KILN_INT8:
    case KILN_INT16:
    case KILN_INT32:
    case KILN_INT64: {
        int64_t a = d == KILN_INT8    ? ((const int8_t *)p)[i]
                    : d == KILN_INT16 ? ((const int16_t *)p)[i]
                    : d == KILN_INT32 ? ((const int32_t *)p)[i]
                                      : ((const int64_t *)p)[i];
        int64_t b = d == KILN_INT8    ? ((const int8_t *)p)[j]
                    : d == KILN_INT16 ? ((const int16_t *)p)[j]
                    : d == KILN_INT32 ? ((const int32_t *)p)[j]
                                      : ((const int64_t *)p)[j];
        return (a > b) - (a < b);
    }
    case KILN_UINT8:
    case KILN_UINT16:
    case KILN_UINT32:
    case KILN_UINT64: {
        uint64_t a = d == KILN_UINT8    ? ((const uint8_t *)p)[i]
                     : d == KILN_UINT16 ? ((const uint16_t *)p)[i]
                     : d == KILN_UINT32 ? ((const uint32_t *)p)[i]
                                        : ((const uint64_t *)p)[i];
        uint64_t b = d == KILN_UINT8    ? ((const uint8_t *)p)[j]
                     : d == KILN_UINT16 ? ((const uint16_t *)p)[j]
                     : d == KILN_UINT32 ? ((const uint32_t *)p)[j]
                                        : ((const uint64_t *)p)[j];
        return (a > b) - (a < b);
    }
    default: {
        double a = d == KILN_FLOAT16   ? half_to_float(((const uint16_t *)p)[i])
                   : d == KILN_FLOAT32 ? ((const float *)p)[i]
                                       : ((const double *)p)[i];
        double b = d == KILN_FLOAT16   ? half_to_float(((const uint16_t *)p)[j])
                   : d == KILN_FLOAT32 ? ((const float *)p)[j]
                                       : ((const double *)p)[j];
        *nan = (isnan(a) ? 1 : 0) | (isnan(b) ? 2 : 0);
        if (*nan)
            return 0;
        if (a != b)
            return a < b ? -1 : 1;
        return (signbit(b) != 0) - (signbit(a) != 0); /* -0 < +0 */
    }
    }
}

static struct {
    kiln_dtype d;
    const void *p;
    int desc;
} g_ref;

static int ref_cmp(const void *x, const void *y) {
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    int nan;
    int c = key_cmp(g_ref.d, g_ref.p, i, j, &nan);
    if (nan == 1 || nan == 2) /* one NaN: it goes last either way */
        return nan == 1 ? 1 : -1;
    if (g_ref.desc)
        c = -c;
    return c ? c : (i > j) - (i < j);
}

/* perm[b..e) = the stable sorting permutation of items [b, e) */
static void ref_perm(kiln_dtype d, const void *keys, int desc, size_t b, size_t e, size_t *perm) {
    for (size_t i = b; i < e; i++)
        perm[i] = i;
    g_ref.d = d, g_ref.p = keys, g_ref.desc = desc;
    if (e > b)
        qsort(perm + b, e - b, sizeof *perm, ref_cmp);
}

/* random keys: pattern 0 random bits (floats: with 1 in 8 special
 * values), 1 all equal, 2 sorted, 3 reversed, 4 few distinct, 5 random
 * top byte and low 6 bits (the rest 0), 6 random top byte (the CPU
 * hybrid's buckets: one pass of their own, or none), 7 random low 20 bits
 * (the rest 0: the hybrid's MSD digit lower down) */
static void make_keys(kiln_dtype d, void *p, size_t n, int pattern) {
    size_t es = kiln_dtype_size(d);
    static const double specials[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1.0, -1.0 };
    for (size_t i = 0; i < n; i++) {
        uint64_t r = kt_rand_u64();
        if (pattern == 1)
            r = 0x5a5a5a5a5a5a5a5aull;
        else if (pattern == 4)
            r = (r % 5) * 0x0101010101010101ull;
        else if (pattern == 5 || pattern == 6)
            r = (r & ((uint64_t)0xff << (es * 8 - 8))) | (pattern == 5 ? r & 0x3f : 0);
        else if (pattern == 7)
            r &= 0xfffff;
        memcpy((char *)p + i * es, &r, es);
        int fl = d == KILN_FLOAT16 || d == KILN_FLOAT32 || d == KILN_FLOAT64;
        if (fl && pattern == 0 && kt_rand_u64() % 8 == 0) {
            double v = specials[kt_rand_u64() % 8];
            if (d == KILN_FLOAT32) {
                float f = (float)v;
                memcpy((char *)p + i * 4, &f, 4);
            } else if (d == KILN_FLOAT64) {
                memcpy((char *)p + i * 8, &v, 8);
            } else {
                uint16_t h = isnan(v)   ? (signbit(v) ? 0xfe00 : 0x7e00)
                             : isinf(v) ? (v > 0 ? 0x7c00 : 0xfc00)
                             : v == 0   ? (signbit(v) ? 0x8000 : 0)
                                        : (v > 0 ? 0x3c00 : 0xbc00);
                memcpy((char *)p + i * 2, &h, 2);
            }
        }
    }
    if (pattern == 2 || pattern == 3) {
        size_t *perm = malloc((n + 1) * sizeof *perm);
        char *t = malloc(n * es + 1);
        ref_perm(d, p, pattern == 3, 0, n, perm);
        for (size_t i = 0; i < n; i++)
            memcpy(t + i * es, (char *)p + perm[i] * es, es);
        memcpy(p, t, n * es);
        KT_FREE(perm, t);
    }
}

/* ---- checks */

/* Sorts n keys of d (with index payloads of vd: 0 none) and compares with
 * the reference; rows > 1 sorts a 2-D (rows, n / rows) array. */
static void check_sort(kiln_queue *q, kiln_dtype d, kiln_dtype vd, size_t n, size_t rows, int desc,
                       int pattern, int argsort) {
    kiln_context *c = kiln_queue_context(q);
    size_t es = kiln_dtype_size(d), vs = vd ? kiln_dtype_size(vd) : 0;
    size_t cols = rows > 1 ? n / rows : n;
    char *keys = malloc(n * es + 1), *out = malloc(n * es + 1);
    char *vals = malloc(n * 8 + 1), *vout = malloc(n * 8 + 1);
    size_t *perm = malloc((n + 1) * sizeof *perm);
    make_keys(d, keys, n, pattern);
    for (size_t i = 0; i < n; i++) { /* payload: the index */
        uint64_t v = argsort ? 0 : i;
        memcpy(vals + i * vs, &v, vs);
    }
    size_t shape[2] = { rows, cols };
    unsigned nd = rows > 1 ? 2 : 1;
    const size_t *sh = rows > 1 ? shape : &n;
    kiln_array *K = NULL, *KO = NULL, *V = NULL, *VO = NULL;
    kiln_sort_desc sd = KILN_SORT_DESC(.descending = desc);
    CHECK_OK(kiln_array_from_host(c, d, nd, sh, keys, &K));
    if (vd)
        CHECK_OK(kiln_array_empty(c, vd, nd, sh, &VO));
    if (argsort) {
        CHECK_OK(kiln_array_argsort_out(q, VO, K, &sd, 0, NULL, NULL));
    } else {
        CHECK_OK(kiln_array_empty(c, d, nd, sh, &KO));
        if (vd)
            CHECK_OK(kiln_array_from_host(c, vd, nd, sh, vals, &V));
        CHECK_OK(kiln_array_sort_out(q, KO, VO, K, V, &sd, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, KO, out));
    }
    if (vd)
        CHECK_OK(kiln_array_read(q, VO, vout));
    size_t bad = 0, first = 0;
    for (size_t r = 0; r < (rows > 1 ? rows : 1); r++)
        ref_perm(d, keys, desc, r * cols, r * cols + cols, perm);
    for (size_t i = 0; i < n; i++) {
        int ok = 1;
        if (!argsort)
            ok = !memcmp(out + i * es, keys + perm[i] * es, es);
        if (vd) {
            uint64_t v = 0, want = argsort && rows > 1 ? perm[i] % cols : perm[i];
            memcpy(&v, vout + i * vs, vs);
            if (vs < 8)
                want &= (1ull << (vs * 8)) - 1;
            ok = ok && v == want;
        }
        if (!ok && !bad++)
            first = i;
    }
    CHECK_MSG(!bad, "%s %s %s n=%zu rows=%zu pattern %d%s: %zu wrong from %zu",
              argsort ? "argsort" : "sort", kiln_dtype_name(d), vd ? kiln_dtype_name(vd) : "-", n,
              rows, pattern, desc ? " desc" : "", bad, first);
    KT_RELEASE(K, KO, V, VO);
    free(keys), free(out), free(vals), free(vout), free(perm);
}

static void t_dtypes(kiln_queue *q, int quick) {
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, quick ? 70000 : 100003);
    for (size_t di = 0; di < NALL; di++) {
        kiln_dtype d = kAll[di];
        if (quick && d != KILN_INT32 && d != KILN_FLOAT64 && d != KILN_INT8)
            continue;
        for (size_t si = 0; si < ns; si++) {
            /* every size for int32 and float32, a third of them otherwise */
            if (d != KILN_INT32 && d != KILN_FLOAT32 && si % 3 != 1)
                continue;
            int desc = (int)(si % 2);
            check_sort(q, d, 0, sizes[si], 1, desc, 0, 0);
            check_sort(q, d, KILN_UINT32, sizes[si], 1, !desc, 0, 0);
        }
    }
}

static void t_patterns(kiln_queue *q, int quick) {
    static const kiln_dtype ds[] = { KILN_INT32, KILN_FLOAT32, KILN_UINT64, KILN_FLOAT16,
                                     KILN_INT8 };
    for (size_t di = 0; di < (quick ? 2u : 5u); di++)
        for (int pattern = 1; pattern <= 4; pattern++)
            for (int desc = 0; desc < 2; desc++)
                check_sort(q, ds[di], KILN_UINT32, 5003, 1, desc, pattern, 0);
}

static void t_values(kiln_queue *q) {
    /* every value width, argsort with both index types, rows */
    static const kiln_dtype vds[] = { KILN_UINT8, KILN_INT16, KILN_INT64, KILN_FLOAT64 };
    for (size_t vi = 0; vi < 4; vi++)
        check_sort(q, KILN_FLOAT32, vds[vi], 4099, 1, (int)vi % 2, 0, 0);
    check_sort(q, KILN_INT64, KILN_UINT32, 70001, 1, 0, 0, 0);
    check_sort(q, KILN_FLOAT32, KILN_INT32, 65537, 1, 0, 0, 1);
    check_sort(q, KILN_INT32, KILN_INT64, 100003, 1, 1, 0, 1);
    check_sort(q, KILN_UINT16, KILN_INT64, 1, 1, 0, 0, 1);
    /* 4-byte keys into int64 indices: the CUDA onesweep's packed argsort
     * (sort.c radix_packed), every key kind both ways, NaNs and +-0 among
     * the floats, sizes of 1, 2 and several tiles */
    static const kiln_dtype k4[] = { KILN_FLOAT32, KILN_UINT32, KILN_INT32 };
    static const size_t n4[] = { 1, 2, 4097, 65537 };
    for (size_t ki = 0; ki < 3; ki++)
        for (size_t ni = 0; ni < 4; ni++)
            check_sort(q, k4[ki], KILN_INT64, n4[ni], 1, (int)(ni % 2), 0, 1);
    check_sort(q, KILN_FLOAT32, KILN_INT64, 8191, 1, 1, 2, 1);
    check_sort(q, KILN_INT32, KILN_INT64, 8191, 1, 0, 3, 1);
    check_sort(q, KILN_INT32, KILN_INT64, 8191, 1, 1, 4, 1);
    /* rows: sort and argsort along the last axis */
    check_sort(q, KILN_INT32, KILN_UINT32, 37 * 101, 37, 0, 0, 0);
    check_sort(q, KILN_FLOAT64, KILN_INT64, 5 * 1, 5, 1, 0, 1);
    check_sort(q, KILN_FLOAT16, KILN_INT32, 3 * 4099, 3, 0, 0, 1);
}

/* Enough keys per tile and digit for the CPU variant's write-combining
 * lines to fill (whole lines and partial ones at tile edges), in every
 * value mode (none, moved, indices), integer and float digits, and passes
 * whose digit is the same for every key (patterns 1 and 4). */
static void t_large(kiln_queue *q) {
    size_t n = ((size_t)1 << 20) + 7;
    check_sort(q, KILN_INT32, 0, n, 1, 0, 0, 0);
    check_sort(q, KILN_FLOAT32, KILN_UINT32, n, 1, 1, 0, 0);
    check_sort(q, KILN_INT32, KILN_INT64, n, 1, 0, 0, 1);
    check_sort(q, KILN_UINT64, KILN_INT64, 600001, 1, 1, 0, 1);
    check_sort(q, KILN_INT16, KILN_UINT8, 300007, 1, 0, 0, 0);
    check_sort(q, KILN_INT32, KILN_UINT32, n, 1, 0, 4, 0);
    check_sort(q, KILN_FLOAT64, KILN_UINT32, 400009, 1, 1, 1, 0);
    /* the CPU hybrid's buckets with one pass or none, and at its
     * smallest size and just under it */
    check_sort(q, KILN_INT32, KILN_UINT32, n, 1, 1, 5, 0);
    check_sort(q, KILN_FLOAT32, 0, 300007, 1, 0, 6, 0);
    check_sort(q, KILN_INT64, KILN_INT32, 300007, 1, 0, 5, 1);
    check_sort(q, KILN_UINT64, 0, 300007, 1, 1, 6, 0);
    check_sort(q, KILN_INT32, KILN_UINT32, n, 1, 0, 7, 0);
    check_sort(q, KILN_INT64, 0, 300007, 1, 1, 7, 0);
    check_sort(q, KILN_FLOAT32, KILN_INT64, 300007, 1, 0, 7, 1);
    check_sort(q, KILN_INT32, KILN_UINT32, 65536, 1, 0, 0, 0);
    check_sort(q, KILN_FLOAT64, 0, 65535, 1, 1, 0, 0);
}

static int cmp64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* bits [begin, end) of uint32 keys; the reference sorts by those bits */
static void t_bits_n(kiln_queue *q, size_t n) {
    kiln_context *c = kiln_queue_context(q);
    uint32_t *k = malloc(n * 4), *o = malloc(n * 4), *ref = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        k[i] = (uint32_t)kt_rand_u64();
    static const unsigned br[][2] = { { 0, 0 },  { 4, 12 }, { 3, 17 }, { 31, 32 }, { 8, 8 },
                                      { 0, 32 }, { 3, 29 }, { 9, 32 }, { 0, 23 } };
    for (size_t t = 0; t < sizeof br / sizeof br[0]; t++) {
        unsigned b = br[t][0], e = br[t][1];
        uint32_t mask = e - b >= 32 ? 0xffffffffu : ((1u << (e - b)) - 1);
        if (b == 0 && e == 0)
            mask = 0xffffffffu;
        /* reference: (digit, index) pairs sorted: stable by digit */
        uint64_t *pairs = malloc(n * 8);
        for (size_t i = 0; i < n; i++)
            pairs[i] = ((uint64_t)((k[i] >> b) & mask) << 32) | i;
        qsort(pairs, n, 8, cmp64);
        for (size_t i = 0; i < n; i++)
            ref[i] = k[(uint32_t)pairs[i]];
        kiln_array *K = NULL, *O = NULL;
        CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &n, k, &K));
        CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &O));
        kiln_sort_desc sd = KILN_SORT_DESC(.begin_bit = b, .end_bit = e);
        CHECK_OK(kiln_array_sort_out(q, O, NULL, K, NULL, &sd, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, O, o));
        CHECK_MSG(!memcmp(o, ref, n * 4), "bits [%u, %u)", b, e);
        /* argsort into int64 indices over the same range: 1 to 4 passes,
         * so the last (widening, keys-unwritten) pass on the onesweep
         * variants reads from either of its ping-pong buffers */
        kiln_array *I = NULL;
        int64_t *idx = malloc(n * 8);
        CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &n, &I));
        CHECK_OK(kiln_array_argsort_out(q, I, K, &sd, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, I, idx));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += (uint64_t)idx[i] != (uint32_t)pairs[i];
        CHECK_MSG(bad == 0, "argsort bits [%u, %u): %zu of %zu indices wrong", b, e, bad, n);
        kiln_array_release(I);
        free(idx);
        KT_RELEASE(K, O);
        free(pairs);
    }
    free(k), free(o), free(ref);
}

/* small, and large enough for the CPU hybrid (ranges over 22 bits) */
static void t_bits(kiln_queue *q) {
    t_bits_n(q, 10007);
    t_bits_n(q, 200003);
}

/* segments: empty, single-item and long ones, int32 and int64 offsets;
 * in place */
static void t_segments(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 20011;
    static const size_t cuts[] = { 0, 0, 1, 1, 2, 2, 3, 700, 701, 9000, 9000, 20011 };
    size_t nc = sizeof cuts / sizeof cuts[0];
    for (int wide = 0; wide < 2; wide++) {
        float *k = malloc(n * 4), *o = malloc(n * 4);
        int32_t *v = malloc(n * 4), *vo = malloc(n * 4);
        size_t *perm = malloc(n * sizeof *perm);
        make_keys(KILN_FLOAT32, k, n, wide ? 4 : 0);
        for (size_t i = 0; i < n; i++)
            v[i] = (int32_t)i;
        int64_t off64[16];
        int32_t off32[16];
        for (size_t j = 0; j < nc; j++)
            off64[j] = (int64_t)cuts[j], off32[j] = (int32_t)cuts[j];
        kiln_array *K = NULL, *V = NULL, *OFF = NULL;
        CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 1, &n, k, &K));
        CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, v, &V));
        CHECK_OK(kiln_array_from_host(c, wide ? KILN_INT64 : KILN_INT32, 1, &nc,
                                      wide ? (void *)off64 : off32, &OFF));
        kiln_sort_desc sd = KILN_SORT_DESC(.descending = wide);
        /* in place */
        CHECK_OK(kiln_array_segmented_sort_out(q, K, V, K, V, OFF, &sd, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, K, o));
        CHECK_OK(kiln_array_read(q, V, vo));
        for (size_t j = 0; j + 1 < nc; j++)
            ref_perm(KILN_FLOAT32, k, wide, cuts[j], cuts[j + 1], perm);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += memcmp(&o[i], &k[perm[i]], 4) != 0 || vo[i] != (int32_t)perm[i];
        CHECK_MSG(!bad, "segmented (%s offsets): %zu wrong", wide ? "int64" : "int32", bad);
        KT_RELEASE(K, V, OFF);
        free(k), free(o), free(v), free(vo), free(perm);
    }
}

/* a strided view in (every other item, reversed) and out (odd items) */
static void t_strided(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 4001, m = (n + 1) / 2;
    int32_t *k = malloc(n * 4), *o = malloc(m * 2 * 4), *sel = malloc(m * 4);
    size_t *perm = malloc(m * sizeof *perm);
    make_keys(KILN_INT32, k, n, 0);
    kiln_array *K = NULL, *KV = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, k, &K));
    kiln_slice s = KILN_SLICE(PTRDIFF_MAX, PTRDIFF_MIN, -2);
    CHECK_OK(kiln_array_view(K, &s, &KV));
    CHECK(kiln_array_size(KV) == m);
    kiln_array *OCOL = NULL;
    kiln_array *O1 = NULL;
    size_t n2 = 2 * m;
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &n2, 0, NULL, NULL, &O1));
    kiln_slice s4 = KILN_SLICE(1, PTRDIFF_MAX, 2);
    CHECK_OK(kiln_array_view(O1, &s4, &OCOL));
    CHECK_OK(kiln_array_sort_out(q, OCOL, NULL, KV, NULL, NULL, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, O1, o));
    for (size_t i = 0; i < m; i++)
        sel[i] = k[n - 1 - 2 * i];
    ref_perm(KILN_INT32, sel, 0, 0, m, perm);
    size_t bad = 0;
    for (size_t i = 0; i < m; i++)
        bad += o[2 * i + 1] != sel[perm[i]] || o[2 * i] != 0;
    CHECK_MSG(!bad, "strided: %zu wrong", bad);
    KT_RELEASE(OCOL, O1, KV, K);
    free(k), free(o), free(sel), free(perm);
}

static void t_inplace(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    /* small, then large enough for the CPU hybrid (an odd and an even
     * count of LSD passes; buckets with one pass or none) */
    static const kiln_dtype ds[] = { KILN_UINT8,  KILN_INT32,   KILN_FLOAT64,
                                     KILN_INT32,  KILN_FLOAT64, KILN_INT64,
                                     KILN_UINT32, KILN_INT64,   KILN_INT64 };
    static const int pat[] = { 0, 0, 0, 0, 0, 5, 5, 6, 7 };
    for (size_t di = 0; di < sizeof ds / sizeof ds[0]; di++) {
        size_t n = di < 3 ? 3001 : 200003, es = kiln_dtype_size(ds[di]);
        char *k = malloc(n * es), *o = malloc(n * es);
        uint32_t *v = malloc(n * 4), *vo = malloc(n * 4);
        size_t *perm = malloc(n * sizeof *perm);
        make_keys(ds[di], k, n, pat[di]);
        for (size_t i = 0; i < n; i++)
            v[i] = (uint32_t)i;
        kiln_array *K = NULL, *V = NULL;
        CHECK_OK(kiln_array_from_host(c, ds[di], 1, &n, k, &K));
        CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &n, v, &V));
        kiln_event *e = NULL;
        CHECK_OK(kiln_array_sort_out(q, K, V, K, V, NULL, 0, NULL, &e));
        CHECK(e != NULL);
        CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
        CHECK_OK(kiln_array_read(q, K, o));
        CHECK_OK(kiln_array_read(q, V, vo));
        ref_perm(ds[di], k, 0, 0, n, perm);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += memcmp(o + i * es, k + perm[i] * es, es) != 0 || vo[i] != perm[i];
        CHECK_MSG(!bad, "in place %s n=%zu pattern %d: %zu wrong", kiln_dtype_name(ds[di]), n,
                  pat[di], bad);
        KT_RELEASE(K, V);
        free(k), free(o), free(v), free(vo), free(perm);
    }
}

static void t_topk(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t rows = 3, cols = 1009, n = rows * cols;
    float *a = malloc(n * 4);
    make_keys(KILN_FLOAT32, a, n, 4); /* few distinct: ties */
    size_t *perm = malloc(n * sizeof *perm);
    size_t shape[2] = { rows, cols };
    kiln_array *A = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 2, shape, a, &A));
    for (int largest = 0; largest < 2; largest++) {
        size_t k = largest ? 17 : 1;
        size_t os[2] = { rows, k };
        float got[3 * 17];
        int64_t idx[3 * 17];
        kiln_array *V = NULL, *I = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 2, os, &V));
        CHECK_OK(kiln_array_empty(c, KILN_INT64, 2, os, &I));
        CHECK_OK(kiln_array_topk_out(q, V, I, A, k, largest, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, V, got));
        CHECK_OK(kiln_array_read(q, I, idx));
        size_t bad = 0;
        for (size_t r = 0; r < rows; r++) {
            ref_perm(KILN_FLOAT32, a, largest, r * cols, r * cols + cols, perm);
            for (size_t j = 0; j < k; j++)
                bad += (size_t)idx[r * k + j] != perm[r * cols + j] - r * cols ||
                       memcmp(&got[r * k + j], &a[perm[r * cols + j]], 4);
        }
        CHECK_MSG(!bad, "topk k=%zu largest=%d: %zu wrong", k, largest, bad);
        KT_RELEASE(V, I);
    }
    kiln_array_release(A);
    free(a), free(perm);
}

static void t_search(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 1000, m = 3001;
    double *s = malloc(n * 8), *v = malloc(m * 8);
    int64_t *o = malloc(m * 8);
    int32_t *o32 = malloc(m * 4);
    for (size_t i = 0; i < n; i++)
        s[i] = (double)(kt_rand_u64() % 200) - 100;
    s[n - 1] = NAN;
    s[n - 2] = -0.0;
    s[n - 3] = 0.0;
    size_t *perm = malloc(n * sizeof *perm);
    ref_perm(KILN_FLOAT64, s, 0, 0, n, perm);
    double *sorted = malloc(n * 8);
    for (size_t i = 0; i < n; i++)
        sorted[i] = s[perm[i]];
    for (size_t i = 0; i < m; i++)
        v[i] = i % 97 == 0 ? NAN : (double)(kt_rand_u64() % 220) - 110;
    kiln_array *S = NULL, *V = NULL, *O = NULL, *O32 = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 1, &n, sorted, &S));
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 1, &m, v, &V));
    CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &m, &O));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &m, &O32));
    for (int right = 0; right < 2; right++) {
        CHECK_OK(kiln_array_searchsorted_out(q, O, S, V, right, 0, NULL, NULL));
        CHECK_OK(kiln_array_searchsorted_out(q, O32, S, V, right, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, O, o));
        CHECK_OK(kiln_array_read(q, O32, o32));
        size_t bad = 0;
        for (size_t i = 0; i < m; i++) {
            size_t want = 0; /* the sort's total order: NaN last, -0 < +0 */
            for (size_t j = 0; j < n; j++) {
                double pair[2] = { sorted[j], v[i] };
                int nan, cmp = key_cmp(KILN_FLOAT64, pair, 0, 1, &nan);
                if (nan)
                    cmp = nan == 3 ? 0 : nan == 1 ? 1 : -1;
                want += right ? cmp <= 0 : cmp < 0;
            }
            bad += (size_t)o[i] != want || (size_t)o32[i] != want;
        }
        CHECK_MSG(!bad, "searchsorted right=%d: %zu wrong", right, bad);
    }
    KT_RELEASE(S, V, O, O32);
    free(s), free(v), free(o), free(o32), free(perm), free(sorted);
}

static void t_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 10, m = 11;
    kiln_array *K = NULL, *KO = NULL, *V = NULL, *VM = NULL, *F = NULL, *I16 = NULL, *KO16 = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &n, 0, NULL, NULL, &K));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &KO));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &V));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &m, &VM));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &F));
    CHECK_OK(kiln_array_empty(c, KILN_INT16, 1, &n, &I16));
    CHECK_OK(kiln_array_empty(c, KILN_INT16, 1, &n, &KO16));
    kiln_event *e = (kiln_event *)1;
    /* mismatched key/value lengths */
    CHECK_STATUS(kiln_array_sort_out(q, KO, VM, K, VM, NULL, 0, NULL, &e), KILN_ERROR_MISMATCH);
    CHECK(e == NULL);
    CHECK(strstr(kiln_last_error_message(), "values") != NULL);
    /* keys_out of another dtype */
    CHECK_STATUS(kiln_array_sort_out(q, KO16, NULL, K, NULL, NULL, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    /* bad bit ranges */
    kiln_sort_desc bd = KILN_SORT_DESC(.begin_bit = 0, .end_bit = 33);
    CHECK_STATUS(kiln_array_sort_out(q, KO, NULL, K, NULL, &bd, 0, NULL, NULL),
                 KILN_ERROR_OUT_OF_RANGE);
    CHECK(strstr(kiln_last_error_message(), "end_bit") != NULL);
    bd = KILN_SORT_DESC(.begin_bit = 9, .end_bit = 8);
    CHECK_STATUS(kiln_array_sort_out(q, KO, NULL, K, NULL, &bd, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    kiln_sort_desc raw = { 0 };
    CHECK_STATUS(kiln_array_sort_out(q, KO, NULL, K, NULL, &raw, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* unsupported index dtype */
    CHECK_STATUS(kiln_array_argsort_out(q, I16, K, NULL, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "indices") != NULL);
    CHECK_STATUS(kiln_array_argsort_out(q, F, K, NULL, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    /* NULLs */
    CHECK_STATUS(kiln_array_sort_out(q, NULL, NULL, K, NULL, NULL, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_sort_out(q, KO, NULL, K, V, NULL, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_sort_out(NULL, KO, NULL, K, NULL, NULL, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_segmented_sort_out(q, KO, NULL, K, NULL, NULL, NULL, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    /* outputs sharing an input's buffer */
    CHECK_STATUS(kiln_array_sort_out(q, KO, KO, K, K, NULL, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    /* a value array on another context */
    kiln_context *c2 = NULL;
    if (CHECK_OK(kiln_context_create((kiln_device *[]){ kiln_queue_device(q) }, 1, &c2))) {
        kiln_array *V2 = NULL, *VO2 = NULL;
        CHECK_OK(kiln_array_empty(c2, KILN_FLOAT32, 1, &n, &V2));
        CHECK_OK(kiln_array_empty(c2, KILN_FLOAT32, 1, &n, &VO2));
        CHECK_STATUS(kiln_array_sort_out(q, KO, VO2, K, V2, NULL, 0, NULL, NULL),
                     KILN_ERROR_MISMATCH);
        CHECK(strstr(kiln_last_error_message(), "context") != NULL);
        KT_RELEASE(V2, VO2, c2);
    }
    /* topk: k out of range, wrong out shape */
    kiln_array *T = NULL;
    size_t three = 3;
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &three, &T));
    CHECK_STATUS(kiln_array_topk_out(q, T, NULL, K, 0, 1, 0, NULL, NULL), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_array_topk_out(q, T, NULL, K, 11, 1, 0, NULL, NULL), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_array_topk_out(q, T, NULL, K, 4, 1, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    /* searchsorted: dtypes differ, bad out dtype */
    CHECK_STATUS(kiln_array_searchsorted_out(q, KO, F, K, 0, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_searchsorted_out(q, F, K, K, 0, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* empty arrays: nothing to do, the event still completes */
    kiln_array *E = NULL, *EO = NULL;
    size_t zero = 0;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &zero, &E));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &zero, &EO));
    e = NULL;
    if (CHECK_OK(kiln_array_sort_out(q, EO, NULL, E, NULL, NULL, 0, NULL, &e))) {
        CHECK(e != NULL);
        CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
    }
    KT_RELEASE(E, EO, T, K, KO, V, VM, F, I16, KO16);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    unsetenv("KILN_SORT_VARIANT");
    t_dtypes(q, 0);
    t_patterns(q, 0);
    KT_STEPS(q, t_values, t_large, t_bits, t_segments, t_strided, t_inplace, t_topk, t_search,
             t_errors);
    /* the GPU variant on this device too (on GPUs it is the same one) */
    setenv("KILN_SORT_VARIANT", "tile", 1);
    t_dtypes(q, 1);
    t_patterns(q, 1);
    t_segments(q);
    t_bits(q);
    /* KT_SORT_ONESWEEP_CL=1 (ctest's test_sort_onesweep_cl): the OpenCL C
     * onesweep on an OpenCL device, where its votes take the barrier form
     * unless the compiler is NVIDIA's (whose OpenCL runs it by default);
     * PoCL's compile of it takes about half a minute */
    kiln_device_info info;
    const char *ocl = getenv("KT_SORT_ONESWEEP_CL");
    if (ocl && !strcmp(ocl, "1") && CHECK_OK(kiln_device_get_info(kiln_queue_device(q), &info)) &&
        ((info.languages >> KILN_LANG_OPENCL_C) & 1)) {
        setenv("KILN_SORT_VARIANT", "onesweep_cl", 1);
        t_dtypes(q, 1);
        t_patterns(q, 1);
        t_values(q);
        t_bits(q);
        t_segments(q);
    }
    unsetenv("KILN_SORT_VARIANT");
}

/* KT_SORT_HFLUSH=1 (ctest's test_sort_hflush, with KILN_SORT_OS_HLIMIT=1):
 * the CUDA onesweep histogram flushing its 16-bit counters after every
 * step, on CUDA devices only (elsewhere that code does not run: a skip) */
static void run_hflush(kiln_queue *q, void *user) {
    int *ran = user;
    kiln_device_info info;
    if (!CHECK_OK(kiln_device_get_info(kiln_queue_device(q), &info)) ||
        info.backend != KILN_BACKEND_CUDA)
        return;
    *ran = 1;
    t_dtypes(q, 1);
    t_bits(q);
    t_values(q);
}

int main(void) {
    const char *hf = getenv("KT_SORT_HFLUSH");
    if (hf && !strcmp(hf, "1")) {
        int ran = 0;
        kt_for_each_device(run_hflush, &ran);
        if (!ran)
            KT_SKIP("no CUDA device: the CUDA histogram's flushes not run");
        return kt_report();
    }
    kt_for_each_device(run, NULL);
    return kt_report();
}
