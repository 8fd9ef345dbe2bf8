/* kiln_rng and the counter-based generators: Random123's known-answer
 * vectors on the host and on the device (through an elementwise
 * expression), the fills against a host reference built from the raw
 * host generators, reproducibility (one fill = ragged pieces; two
 * sub-devices give identical bits), offsets, substreams, bad input, the
 * generator functions inside reductions (Monte-Carlo pi), scans and user
 * kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Random123 tests/kat_vectors: every line for these three generators.
 * Columns: counter, key, expected. */
static const uint32_t philox_kat[3][10] = {
    { 0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
    { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
      0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
    { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
      0x94fdcceb, 0x5001e420, 0x24126ea1 }
};
static const uint32_t threefry4_kat[3][12] = {
    { 0, 0, 0, 0, 0, 0, 0, 0, 0x9c6ca96a, 0xe17eae66, 0xfc10ecd4, 0x5256a7d8 },
    { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
      0xffffffff, 0x2a881696, 0x57012287, 0xf6c7446e, 0xa16a6732 },
    { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0x082efa98,
      0xec4e6c89, 0x59cd1dbb, 0xb8879579, 0x86b5d00c, 0xac8b6d84 }
};
static const uint64_t threefry2_kat[3][6] = {
    { 0, 0, 0, 0, 0xc2b6e3a8c2c69865ull, 0x6f81ed42f350084dull },
    { ~0ull, ~0ull, ~0ull, ~0ull, 0xe02cb7c4d95d277aull, 0xd06633d0893b8b68ull },
    { 0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull,
      0x263c7d30bb0f0af1ull, 0x56be8361d3311526ull }
};

static void kat_host(void) {
    for (int v = 0; v < 3; v++) {
        uint32_t o[4];
        uint64_t o64[2];
        kiln_rng_philox4x32_10(philox_kat[v], philox_kat[v] + 4, o);
        CHECK_MSG(!memcmp(o, philox_kat[v] + 6, 16), "host philox kat %d", v);
        kiln_rng_threefry4x32_20(threefry4_kat[v], threefry4_kat[v] + 4, o);
        CHECK_MSG(!memcmp(o, threefry4_kat[v] + 8, 16), "host threefry4x32 kat %d", v);
        kiln_rng_threefry2x64_20(threefry2_kat[v], threefry2_kat[v] + 2, o64);
        CHECK_MSG(!memcmp(o64, threefry2_kat[v] + 4, 16), "host threefry2x64 kat %d", v);
    }
}

/* The vectors through an elementwise expression: item v of 3 reads 16
 * words (philox counter, key, 2 unused; threefry4x32 counter, key) and 4
 * 64-bit words (threefry2x64 counter, key). */
static void kat_device(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    uint32_t in32[3][16] = { { 0 } }, out32[3][8];
    uint64_t in64[3][4], out64[3][2];
    for (int v = 0; v < 3; v++) {
        memcpy(in32[v], philox_kat[v], 24);
        memcpy(in32[v] + 8, threefry4_kat[v], 32);
        memcpy(in64[v], threefry2_kat[v], 32);
    }
    size_t n16 = 48, n8 = 24, n4 = 12, n2 = 6;
    kiln_array *a = NULL, *b = NULL, *c64 = NULL, *d64 = NULL;
    kiln_elementwise *ew = NULL;
    kiln_elementwise_desc d = KILN_ELEMENTWISE_DESC(
            .arguments = "const uint *in, uint *out, const ulong *in64, ulong *out64",
            .operation =
                "const KILN_GLOBAL uint *p = in + 16*i; KILN_GLOBAL uint *o = out + 8*i;"
                "kiln_u32x4 r = kiln_rng_philox4x32_10(kiln_make_u32x4(p[0], p[1], p[2], p[3]),"
                "                                  kiln_make_u32x2(p[4], p[5]));"
                "o[0] = r.x; o[1] = r.y; o[2] = r.z; o[3] = r.w;"
                "r = kiln_rng_threefry4x32_20(kiln_make_u32x4(p[8], p[9], p[10], p[11]),"
                "                         kiln_make_u32x4(p[12], p[13], p[14], p[15]));"
                "o[4] = r.x; o[5] = r.y; o[6] = r.z; o[7] = r.w;"
                "kiln_u64x2 s = kiln_rng_threefry2x64_20(kiln_make_u64x2(in64[4*i], in64[4*i+1]),"
                "                                    kiln_make_u64x2(in64[4*i+2], in64[4*i+3]));"
                "out64[2*i] = s.x; out64[2*i+1] = s.y;",
            .flags = KILN_ELEMENTWISE_ANY_SHAPE);
    if (!CHECK_OK(kiln_elementwise_create(c, &d, &ew)))
        return;
    CHECK_OK(kiln_array_from_host(c, KILN_UINT32, 1, &n16, in32, &a));
    CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n8, &b));
    CHECK_OK(kiln_array_from_host(c, KILN_UINT64, 1, &n4, in64, &c64));
    CHECK_OK(kiln_array_empty(c, KILN_UINT64, 1, &n2, &d64));
    kiln_arg args[4] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(b), KILN_ARG_ARRAY(c64),
                         KILN_ARG_ARRAY(d64) };
    CHECK_OK(kiln_elementwise_launch(q, ew, 3, 4, args, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, b, out32));
    CHECK_OK(kiln_array_read(q, d64, out64));
    for (int v = 0; v < 3; v++) {
        CHECK_MSG(!memcmp(out32[v], philox_kat[v] + 6, 16), "device philox kat %d", v);
        CHECK_MSG(!memcmp(out32[v] + 4, threefry4_kat[v] + 8, 16), "device threefry4x32 kat %d", v);
        CHECK_MSG(!memcmp(out64[v], threefry2_kat[v] + 4, 16), "device threefry2x64 kat %d", v);
    }
    KT_RELEASE(a, b, c64, d64, ew);
}

/* ---- fills against the host reference */

static float ref_u01f(uint32_t w) {
    return (float)(w >> 8) * 0x1p-24f;
}
static double ref_u01d(uint32_t lo, uint32_t hi) {
    return (double)((((uint64_t)hi << 32) | lo) >> 11) * 0x1p-53;
}

static kiln_rng *make_rng(kiln_rng_algorithm alg, uint64_t seed, uint64_t sub, uint64_t off) {
    kiln_rng *r = NULL;
    kiln_rng_desc d =
        KILN_RNG_DESC(.algorithm = alg, .seed = seed, .substream = sub, .offset = off);
    CHECK_OK(kiln_rng_create(&d, &r));
    return r;
}

/* uniform float32 of every algorithm: bits equal the host reference, one
 * fill of n equals fills of ragged pieces, the offset advances by n. */
static void uniform_f32(kiln_queue *q, kiln_rng_algorithm alg, size_t n) {
    kiln_context *c = kiln_queue_context(q);
    uint64_t seed = 0x123456789abcdefull ^ (uint64_t)alg, off0 = 5;
    kiln_rng *r = make_rng(alg, seed, 7, off0);
    float *whole = malloc(n * 4), *parts = malloc(n * 4);
    uint32_t *w = malloc(n * 4);
    kiln_array *a = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &a));
    CHECK_OK(kiln_rng_uniform(q, r, a, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, a, whole));
    kiln_array_release(a);
    uint64_t off = 0;
    CHECK_OK(kiln_rng_get_offset(r, &off));
    CHECK_MSG(off == off0 + n, "offset %llu after %zu", (unsigned long long)off, n);
    /* ragged pieces from a fresh generator at the same offset */
    kiln_rng_set_offset(r, off0);
    size_t done = 0, piece = 1;
    while (done < n) {
        size_t m = piece < n - done ? piece : n - done;
        kiln_array *p = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &m, &p));
        CHECK_OK(kiln_rng_uniform(q, r, p, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, p, parts + done));
        kiln_array_release(p);
        done += m;
        piece = piece * 7 + 3; /* 1, 10, 73, 514, ... */
    }
    CHECK_MSG(!memcmp(whole, parts, n * 4), "alg %d: ragged pieces differ from one fill", alg);
    CHECK_OK(kiln_rng_words_host(alg, seed, 7, off0, n, w));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += whole[i] != ref_u01f(w[i]) || !(whole[i] >= 0.0f && whole[i] < 1.0f);
    CHECK_MSG(bad == 0, "alg %d: %zu uniforms differ from the host reference", alg, bad);
    free(whole), free(parts), free(w);
    kiln_rng_release(r);
}

/* Fills across the carry of the counter's low word (block 2^32: word
 * 2^34): uniform float32 of every algorithm equals the host reference, and
 * normal float32 of a contiguous array equals a strided view's (the
 * per-element kernel) bit for bit. The CPU fills compute sixteen blocks
 * per item (kiln_rng_block16), the GPU fills one. */
static int has_fp64(kiln_queue *q);
static void counter_carry(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    enum { N = 1001 };
    uint64_t off0 = ((uint64_t)1 << 34) - 333;
    kiln_array *a = NULL, *b = NULL, *v = NULL;
    size_t n = N, n3 = 3 * N;
    float h[N], hb[3 * N];
    uint32_t w[N];
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &a));
    for (int alg = 0; alg <= KILN_RNG_THREEFRY2X64_20; alg++) {
        kiln_rng *r = make_rng((kiln_rng_algorithm)alg, 0xfeedull << alg, 3, off0);
        CHECK_OK(kiln_rng_uniform(q, r, a, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, a, h));
        CHECK_OK(kiln_rng_words_host((kiln_rng_algorithm)alg, 0xfeedull << alg, 3, off0, N, w));
        size_t bad = 0;
        for (size_t i = 0; i < N; i++)
            bad += h[i] != ref_u01f(w[i]);
        CHECK_MSG(bad == 0, "alg %d: %zu uniforms across the counter carry differ", alg, bad);
        kiln_rng_release(r);
    }
    kiln_slice sl = KILN_SLICE(1, PTRDIFF_MAX, 3);
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &n3, 0, NULL, NULL, &b));
    CHECK_OK(kiln_array_view(b, &sl, &v));
    kiln_rng *r = make_rng(KILN_RNG_PHILOX4X32_10, 77, 0, off0);
    CHECK_OK(kiln_rng_normal(q, r, a, -1.0, 3.0, 0, NULL, NULL));
    CHECK_OK(kiln_rng_set_offset(r, off0));
    CHECK_OK(kiln_rng_normal(q, r, v, -1.0, 3.0, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, a, h));
    CHECK_OK(kiln_array_read(q, b, hb));
    size_t bad = 0;
    for (size_t i = 0; i < N; i++)
        bad += memcmp(&h[i], &hb[3 * i + 1], 4) != 0;
    CHECK_MSG(bad == 0, "normal float32: %zu of a strided view differ from a contiguous fill", bad);
    KT_RELEASE(r, v, b, a);
    if (!has_fp64(q))
        return;
    /* float64: uniform against the host, normal contiguous vs strided */
    static double d[N], db[3 * N];
    static uint32_t w2[2 * N];
    r = make_rng(KILN_RNG_PHILOX4X32_10, 78, 5, off0 - 1); /* even */
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, 1, &n, &a));
    CHECK_OK(kiln_rng_uniform(q, r, a, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, a, d));
    CHECK_OK(kiln_rng_words_host(KILN_RNG_PHILOX4X32_10, 78, 5, off0 - 1, 2 * N, w2));
    bad = 0;
    for (size_t i = 0; i < N; i++)
        bad += d[i] != ref_u01d(w2[2 * i], w2[2 * i + 1]);
    CHECK_MSG(bad == 0, "float64: %zu uniforms across the counter carry differ", bad);
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT64, 1, &n3, 0, NULL, NULL, &b));
    CHECK_OK(kiln_array_view(b, &sl, &v));
    CHECK_OK(kiln_rng_set_offset(r, off0 - 1));
    CHECK_OK(kiln_rng_normal(q, r, a, 0.5, 2.0, 0, NULL, NULL));
    CHECK_OK(kiln_rng_set_offset(r, off0 - 1));
    CHECK_OK(kiln_rng_normal(q, r, v, 0.5, 2.0, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, a, d));
    CHECK_OK(kiln_array_read(q, b, db));
    bad = 0;
    for (size_t i = 0; i < N; i++)
        bad += memcmp(&d[i], &db[3 * i + 1], 8) != 0;
    CHECK_MSG(bad == 0, "normal float64: %zu of a strided view differ from a contiguous fill", bad);
    KT_RELEASE(r, v, b, a);
}

/* n normals (mean 1.5, sd 2) of dtype dt from r into a new array, read
 * back into host. */
static void normals(kiln_queue *q, kiln_rng *r, kiln_dtype dt, size_t n, void *host) {
    kiln_array *a = NULL;
    CHECK_OK(kiln_array_empty(kiln_queue_context(q), dt, 1, &n, &a));
    CHECK_OK(kiln_rng_normal(q, r, a, 1.5, 2.0, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, a, host));
    kiln_array_release(a);
}

/* Normals of dtype (float32 or float64) in one fill equal those of ragged
 * pieces bit for bit (the pair of a normal is fixed by its stream
 * position, so every walk of the fill kernels computes the same values). */
static void normal_ragged(kiln_queue *q, kiln_dtype dt, size_t n) {
    size_t es = kiln_dtype_size(dt);
    char *whole = malloc(n * es), *parts = malloc(n * es);
    kiln_rng *r = make_rng(KILN_RNG_PHILOX4X32_10, 99, 1, 6);
    normals(q, r, dt, n, whole);
    kiln_rng_set_offset(r, 6);
    size_t done = 0, piece = 1;
    while (done < n) {
        size_t m = piece < n - done ? piece : n - done;
        normals(q, r, dt, m, parts + done * es);
        done += m;
        piece = piece * 5 + 2; /* 1, 7, 37, 187, ... */
    }
    CHECK_MSG(!memcmp(whole, parts, n * es), "normal %s: ragged pieces differ from one fill",
              kiln_dtype_name(dt));
    free(whole), free(parts);
    kiln_rng_release(r);
}

static int has_fp64(kiln_queue *q) {
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    return info.fp64;
}

/* float64 uniform and both normals (Philox) against the host. */
static void float_fills(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 4099;
    uint32_t *w = malloc(n * 4 * 4);
    float *f = malloc(n * 4);
    double *dd = malloc(n * 8);
    kiln_rng *r = make_rng(KILN_RNG_PHILOX4X32_10, 42, 0, 3);
    kiln_array *a = NULL;
    /* normal float32: one word each; the pair of words at stream
     * positions 2m, 2m+1 gives cos to 2m and sin to 2m+1 (offset 3: odd) */
    normals(q, r, KILN_FLOAT32, n, f);
    CHECK_OK(kiln_rng_words_host(KILN_RNG_PHILOX4X32_10, 42, 0, 2, n + 2, w));
    size_t bad = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        size_t p = 3 + i, pair = (p & ~(size_t)1) - 2;
        double u1 = (double)((w[pair] >> 8) + 1) * 0x1p-24, u2 = ref_u01f(w[pair + 1]);
        double t = 2 * M_PI * u2;
        double z = 1.5 + 2.0 * sqrt(-2 * log(u1)) * (p & 1 ? sin(t) : cos(t));
        double e = fabs(f[i] - z) / (1 + fabs(z));
        worst = e > worst ? e : worst;
        bad += !(e <= 1e-5);
    }
    CHECK_MSG(bad == 0, "normal float32: %zu beyond 1e-5 relative (worst %g)", bad, worst);
    uint64_t off = 0;
    kiln_rng_get_offset(r, &off);
    CHECK(off == 3 + n);
    if (has_fp64(q)) {
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, 1, &n, &a));
        CHECK_OK(kiln_rng_uniform(q, r, a, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, a, dd));
        CHECK_OK(kiln_rng_words_host(KILN_RNG_PHILOX4X32_10, 42, 0, off, 2 * n, w));
        bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += dd[i] != ref_u01d(w[2 * i], w[2 * i + 1]) || !(dd[i] < 1.0);
        CHECK_MSG(bad == 0, "uniform float64: %zu differ", bad);
        off += 2 * n; /* odd: the float64 pairs (4 words) straddle it */
        CHECK_OK(kiln_rng_normal(q, r, a, 0.0, 1.0, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, a, dd));
        kiln_array_release(a);
        uint64_t base = off & ~(uint64_t)3;
        CHECK_OK(kiln_rng_words_host(KILN_RNG_PHILOX4X32_10, 42, 0, base, 2 * n + 8, w));
        bad = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t p = off + 2 * i;
            uint32_t *v = w + ((p & ~(uint64_t)3) - base);
            double u1 = (double)(((((uint64_t)v[1] << 32) | v[0]) >> 11) + 1) * 0x1p-53;
            double t = 2 * M_PI * ref_u01d(v[2], v[3]);
            double z = sqrt(-2 * log(u1)) * (p & 2 ? sin(t) : cos(t));
            bad += !(fabs(dd[i] - z) <= 1e-12 * (1 + fabs(z)));
        }
        CHECK_MSG(bad == 0, "normal float64: %zu beyond 1e-12 relative", bad);
    }
    free(w), free(f), free(dd);
    kiln_rng_release(r);
}

/* integers: in [low, high); where the first candidate is accepted (Lemire's
 * threshold) the value is the host's; the offset advances by k*n. */
static void integer_fills(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 10007;
    uint32_t *w = malloc(n * 8);
    int64_t *h = malloc(n * 8);
    kiln_rng *r = make_rng(KILN_RNG_THREEFRY4X32_20, 9, 1, 0);
    struct {
        kiln_dtype dt;
        int64_t lo, hi;
        unsigned k;
    } cases[] = { { KILN_INT32, -5, 7, 1 },
                  { KILN_UINT32, 0, (int64_t)1 << 32, 1 },
                  { KILN_UINT32, 10, 3000000011ll, 1 },
                  { KILN_INT64, -(1ll << 62), (1ll << 62) + 12345, 2 },
                  { KILN_INT32, INT32_MIN, (int64_t)INT32_MAX + 1, 1 } };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        kiln_array *a = NULL;
        uint64_t off = 0;
        kiln_rng_get_offset(r, &off);
        CHECK_OK(kiln_array_empty(c, cases[t].dt, 1, &n, &a));
        CHECK_OK(kiln_rng_integers(q, r, a, cases[t].lo, cases[t].hi, 0, NULL, NULL));
        void *raw = malloc(n * 8);
        CHECK_OK(kiln_array_read(q, a, raw));
        kiln_array_release(a);
        for (size_t i = 0; i < n; i++)
            h[i] = cases[t].dt == KILN_INT32    ? ((int32_t *)raw)[i]
                   : cases[t].dt == KILN_UINT32 ? ((uint32_t *)raw)[i]
                                                : ((int64_t *)raw)[i];
        free(raw);
        CHECK_OK(kiln_rng_words_host(KILN_RNG_THREEFRY4X32_20, 9, 1, off, cases[t].k * n, w));
        uint64_t range = (uint64_t)cases[t].hi - (uint64_t)cases[t].lo;
        size_t bad = 0, out = 0, rejected = 0;
        for (size_t i = 0; i < n; i++) {
            out += h[i] < cases[t].lo || h[i] >= cases[t].hi;
            uint64_t want;
            if (cases[t].k == 1) {
                uint32_t r32 = (uint32_t)range;
                uint64_t m = (uint64_t)w[i] * r32;
                if (r32 && (uint32_t)m < (0u - r32) % r32) {
                    rejected++;
                    continue;
                }
                want = r32 ? m >> 32 : w[i];
            } else {
                uint64_t x = ((uint64_t)w[2 * i + 1] << 32) | w[2 * i];
                unsigned __int128 m = (unsigned __int128)x * range;
                if ((uint64_t)m < (0 - range) % range) {
                    rejected++;
                    continue;
                }
                want = (uint64_t)(m >> 64);
            }
            bad += (uint64_t)h[i] != (uint64_t)cases[t].lo + want;
        }
        CHECK_MSG(out == 0 && bad == 0, "integers case %zu: %zu outside, %zu differ", t, out, bad);
        if (t == 2)
            CHECK_MSG(rejected > 0, "the rejection path ran (%zu)", rejected);
        uint64_t after = 0;
        kiln_rng_get_offset(r, &after);
        CHECK(after == off + cases[t].k * n);
    }
    free(w), free(h);
    kiln_rng_release(r);
}

/* offsets, substreams, bad input */
static void state_and_bad_input(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_rng *r = make_rng(KILN_RNG_PHILOX4X32_10, 1, 0, 0), *s = NULL;
    uint64_t off = 0;
    CHECK_OK(kiln_rng_skip_ahead(r, 100));
    CHECK_OK(kiln_rng_get_offset(r, &off));
    CHECK(off == 100);
    CHECK_STATUS(kiln_rng_skip_ahead(r, UINT64_MAX - 50), KILN_ERROR_OUT_OF_RANGE);
    CHECK_OK(kiln_rng_get_offset(r, &off));
    CHECK(off == 100);
    CHECK_OK(kiln_rng_substream_create(r, 5, &s));
    CHECK_OK(kiln_rng_get_offset(s, &off));
    CHECK(off == 0);
    /* substream 5 of the generator is the host stream of substream 5 */
    size_t n = 64;
    float a[64], b[64];
    uint32_t w[64];
    kiln_array *x = NULL, *h = NULL, *i8 = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &x));
    CHECK_OK(kiln_rng_uniform(q, s, x, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, x, a));
    CHECK_OK(kiln_rng_words_host(KILN_RNG_PHILOX4X32_10, 1, 5, 0, n, w));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += a[i] != ref_u01f(w[i]);
    CHECK(bad == 0);
    CHECK_OK(kiln_rng_set_offset(r, 0));
    CHECK_OK(kiln_rng_uniform(q, r, x, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, x, b));
    CHECK(memcmp(a, b, sizeof a) != 0);
    /* a fill that would wrap: refused, the offset unchanged */
    CHECK_OK(kiln_rng_set_offset(r, UINT64_MAX - 10));
    kiln_event *ev = (kiln_event *)1;
    CHECK_STATUS(kiln_rng_uniform(q, r, x, 0, NULL, &ev), KILN_ERROR_OUT_OF_RANGE);
    CHECK(ev == NULL);
    CHECK_OK(kiln_rng_get_offset(r, &off));
    CHECK(off == UINT64_MAX - 10);
    CHECK_OK(kiln_rng_set_offset(r, 0));
    /* bad input */
    CHECK_STATUS(kiln_rng_integers(q, r, x, 5, 5, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_rng_integers(q, r, x, 0, 10, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_OK(kiln_array_empty(c, KILN_INT8, 1, &n, &i8));
    CHECK_STATUS(kiln_rng_uniform(q, r, i8, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_rng_normal(q, r, i8, 0, 1, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_rng_integers(q, r, i8, 0, 10, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &h));
    CHECK_STATUS(kiln_rng_integers(q, r, h, 0, (int64_t)1 << 40, 0, NULL, NULL),
                 KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_rng_integers(q, r, h, 10, 5, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_OK(kiln_rng_get_offset(r, &off));
    CHECK_MSG(off == 0, "refused fills took no words (%llu)", (unsigned long long)off);
    CHECK_STATUS(kiln_rng_uniform(NULL, r, x, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_rng_uniform(q, NULL, x, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_rng_uniform(q, r, NULL, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    kiln_rng *bad_rng = (kiln_rng *)1;
    kiln_rng_desc d = { 0 };
    CHECK_STATUS(kiln_rng_create(&d, &bad_rng), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(bad_rng == NULL);
    d = KILN_RNG_DESC(.algorithm = (kiln_rng_algorithm)7);
    CHECK_STATUS(kiln_rng_create(&d, &bad_rng), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_rng_create(NULL, &bad_rng), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_rng_words_host((kiln_rng_algorithm)3, 0, 0, 0, 1, w),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_OK(kiln_rng_retain(r));
    kiln_rng_release(r);
    kiln_rng_release(NULL);
    kiln_array_release(x), kiln_array_release(h), kiln_array_release(i8);
    kiln_rng_release(r), kiln_rng_release(s);
}

/* Monte-Carlo pi, the one-line reduction of docs/algorithms.md, and the
 * per-item helpers against the host stream. */
static void inside_kernels(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 1 << 20;
    kiln_reduction *red = NULL;
    kiln_reduction_desc d = KILN_REDUCTION_DESC(
            .arguments = "ulong seed, const uchar *point", .out_type = "long", .neutral = "0",
            .reduce = "a + b",
            .map = "kiln_rand_uniform_n(seed, i, 0) * kiln_rand_uniform_n(seed, i, 0)"
                   " + kiln_rand_uniform_n(seed, i, 1) * kiln_rand_uniform_n(seed, i, 1) < 1.0f");
    kiln_array *pts = NULL;
    if (!CHECK_OK(kiln_reduction_create(c, &d, &red)))
        return;
    CHECK_OK(kiln_array_zeros(q, KILN_UINT8, 1, &n, 0, NULL, NULL, &pts));
    int64_t hits = 0;
    kiln_arg args[2] = { KILN_ARG_U64(2026), KILN_ARG_ARRAY(pts) };
    CHECK_OK(kiln_reduction_run(q, red, n, 2, args, &hits));
    /* the same count on the host */
    int64_t want = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t ctr[4] = { 0, 0, (uint32_t)i, (uint32_t)((uint64_t)i >> 32) },
                 key[2] = { 2026, 0 }, o[4];
        kiln_rng_philox4x32_10(ctr, key, o);
        float x = ref_u01f(o[0]), y = ref_u01f(o[1]);
        want += x * x + y * y < 1.0f;
    }
    double pi = 4.0 * (double)hits / (double)n;
    printf("pi ~ %.6f from %zu points (host count %lld, device %lld)\n", pi, n, (long long)want,
           (long long)hits);
    CHECK_MSG(hits == want, "pi: device %lld hits, host %lld", (long long)hits, (long long)want);
    CHECK(fabs(pi - M_PI) < 0.01);
    KT_RELEASE(pts, red);
    /* a user kernel with kiln_rng_kernel_source() in front */
    const char *src = kiln_rng_kernel_source();
    CHECK(strstr(src, "kiln_rng_philox4x32_10") != NULL);
    size_t len = strlen(src) + 512;
    char *full = malloc(len);
    snprintf(full, len,
             "%s\nKILN_KERNEL void draw(KILN_GLOBAL float *y, ulong seed) {\n"
             "    size_t i = kiln_global_id(0);\n    y[i] = kiln_rand_uniform(seed, i);\n}\n",
             src);
    kiln_program *prog = NULL;
    kiln_kernel *k = NULL;
    kiln_buffer *buf = NULL;
    if (CHECK_OK(kiln_program_create(c, full, NULL, &prog)) &&
        CHECK_OK(kiln_kernel_create(prog, "draw", &k)) &&
        CHECK_OK(kiln_buffer_create(c, 64 * 4, 0, NULL, &buf))) {
        kiln_arg ka[2] = { KILN_ARG_BUF(buf), KILN_ARG_U64(77) };
        size_t g = 64;
        float y[64];
        CHECK_OK(kiln_kernel_launch(q, k, 1, &g, NULL, 2, ka, 0, NULL, NULL));
        CHECK_OK(kiln_buffer_read(q, buf, 0, sizeof y, y));
        size_t bad = 0;
        for (uint32_t i = 0; i < 64; i++) {
            uint32_t ctr[4] = { 0, 0, i, 0 }, key[2] = { 77, 0 }, o[4];
            kiln_rng_philox4x32_10(ctr, key, o);
            bad += y[i] != ref_u01f(o[0]);
        }
        CHECK_MSG(bad == 0, "user kernel: %zu differ", bad);
    }
    KT_RELEASE(buf, k, prog);
    free(full);
}

/* A strided view (per-element kernel) and a contiguous array (blocked
 * kernel) give the same stream; so does an offset that is not a multiple
 * of 4 (elements straddle generator blocks). */
static void layouts(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 3001, nv = 1001;
    kiln_array *a = NULL, *v = NULL;
    kiln_slice sl = KILN_SLICE(0, PTRDIFF_MAX, 3);
    float h[3001];
    double hd[1001];
    uint32_t w[4004];
    kiln_rng *r = make_rng(KILN_RNG_THREEFRY2X64_20, 3, 4, 6);
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &a));
    CHECK_OK(kiln_array_view(a, &sl, &v));
    CHECK(kiln_array_size(v) == nv);
    CHECK_OK(kiln_rng_normal(q, r, v, 0.0, 1.0, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, a, h));
    float first[1001];
    for (size_t i = 0; i < nv; i++)
        first[i] = h[3 * i];
    kiln_array *b = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &nv, &b));
    CHECK_OK(kiln_rng_set_offset(r, 6));
    CHECK_OK(kiln_rng_normal(q, r, b, 0.0, 1.0, 0, NULL, NULL));
    float second[1001];
    CHECK_OK(kiln_array_read(q, b, second));
    CHECK_MSG(!memcmp(first, second, sizeof first), "strided view and contiguous normals differ");
    for (uint64_t off = 1; off < 4 && has_fp64(q); off++) {
        kiln_array *d = NULL;
        CHECK_OK(kiln_rng_set_offset(r, off));
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, 1, &nv, &d));
        CHECK_OK(kiln_rng_uniform(q, r, d, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, d, hd));
        kiln_array_release(d);
        CHECK_OK(kiln_rng_words_host(KILN_RNG_THREEFRY2X64_20, 3, 4, off, 2 * nv, w));
        size_t bad = 0;
        for (size_t i = 0; i < nv; i++)
            bad += hd[i] != ref_u01d(w[2 * i], w[2 * i + 1]);
        CHECK_MSG(bad == 0, "float64 at offset %llu: %zu differ", (unsigned long long)off, bad);
    }
    kiln_array_release(a), kiln_array_release(v), kiln_array_release(b);
    kiln_rng_release(r);
}

/* A scan expression draws too: a random walk y[i] = sum of steps +-1 with
 * step i from kiln_rand_u32(seed, i), against the host. */
static void inside_scan(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 100003;
    kiln_scan *sc = NULL;
    kiln_array *y = NULL;
    kiln_scan_desc d =
        KILN_SCAN_DESC(.arguments = "ulong seed, int *y", .scan_type = "int", .neutral = "0",
                       .scan = "a + b", .input = "(kiln_rand_u32(seed, i) >> 31) ? 1 : -1",
                       .output = "y[i] = item");
    if (!CHECK_OK(kiln_scan_create(c, &d, &sc)))
        return;
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &y));
    kiln_arg args[2] = { KILN_ARG_U64(99), KILN_ARG_ARRAY(y) };
    CHECK_OK(kiln_scan_launch(q, sc, n, 2, args, 0, NULL, NULL));
    int32_t *h = malloc(n * 4);
    CHECK_OK(kiln_array_read(q, y, h));
    int32_t walk = 0;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t ctr[4] = { 0, 0, (uint32_t)i, 0 }, key[2] = { 99, 0 }, o[4];
        kiln_rng_philox4x32_10(ctr, key, o);
        walk += (o[0] >> 31) ? 1 : -1;
        bad += h[i] != walk;
    }
    CHECK_MSG(bad == 0, "random walk scan: %zu differ", bad);
    free(h);
    KT_RELEASE(y, sc);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kat_device(q);
    uniform_f32(q, KILN_RNG_PHILOX4X32_10, (size_t)1 << 20);
    uniform_f32(q, KILN_RNG_THREEFRY4X32_20, 100003);
    uniform_f32(q, KILN_RNG_THREEFRY2X64_20, 100003);
    counter_carry(q);
    float_fills(q);
    normal_ragged(q, KILN_FLOAT32, 70001);
    if (has_fp64(q))
        normal_ragged(q, KILN_FLOAT64, 30011);
    integer_fills(q);
    state_and_bad_input(q);
    layouts(q);
    inside_kernels(q);
    inside_scan(q);
}

/* Two devices (PoCL sub-devices in CI) give identical bits: uniform
 * float32 and int64 integers of the same (seed, offset), one fill per
 * device, and one fill split between them. */
static void two_devices(void) {
    kiln_device *dev = NULL, *subs[64];
    size_t nsub = 0;
    kiln_device_info info;
    if (kiln_device_select(NULL, &dev) != KILN_OK || kiln_device_get_info(dev, &info) != KILN_OK ||
        info.compute_units < 2 || kiln_device_partition(dev, 1, subs, 64, &nsub) != KILN_OK ||
        nsub < 2) {
        printf("two devices: the default device cannot be partitioned; left out\n");
        return;
    }
    kiln_context *c = NULL;
    kiln_queue *q[2] = { NULL, NULL };
    if (!CHECK_OK(kiln_context_create(subs, 2, &c)))
        return;
    CHECK_OK(kiln_queue_create(c, subs[0], 0, &q[0]));
    CHECK_OK(kiln_queue_create(c, subs[1], 0, &q[1]));
    size_t n = 100000, half = n / 2 + 17, rest = n - half;
    float *f[3];
    int64_t *g[3];
    for (int d = 0; d < 3; d++)
        f[d] = malloc(n * 4), g[d] = malloc(n * 8);
    for (int d = 0; d < 2; d++) {
        kiln_rng *r = make_rng(KILN_RNG_PHILOX4X32_10, 31337, 2, 11);
        kiln_array *a = NULL, *b = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &a));
        CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &n, &b));
        CHECK_OK(kiln_rng_uniform(q[d], r, a, 0, NULL, NULL));
        CHECK_OK(kiln_rng_integers(q[d], r, b, -1000, 1000000007, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q[d], a, f[d]));
        CHECK_OK(kiln_array_read(q[d], b, g[d]));
        kiln_array_release(a), kiln_array_release(b);
        kiln_rng_release(r);
    }
    /* split: the first part on device 0, the rest on device 1 */
    kiln_rng *r = make_rng(KILN_RNG_PHILOX4X32_10, 31337, 2, 11);
    kiln_array *p0 = NULL, *p1 = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &half, &p0));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &rest, &p1));
    CHECK_OK(kiln_rng_uniform(q[0], r, p0, 0, NULL, NULL));
    CHECK_OK(kiln_rng_uniform(q[1], r, p1, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q[0], p0, f[2]));
    CHECK_OK(kiln_array_read(q[1], p1, f[2] + half));
    kiln_array_release(p0), kiln_array_release(p1);
    kiln_rng_release(r);
    CHECK_MSG(!memcmp(f[0], f[1], n * 4), "uniform: the two devices differ");
    CHECK_MSG(!memcmp(g[0], g[1], n * 8), "integers: the two devices differ");
    CHECK_MSG(!memcmp(f[0], f[2], n * 4), "uniform split over two devices differs");
    printf("two devices (%zu sub-devices): identical bits\n", nsub);
    for (int d = 0; d < 3; d++)
        free(f[d]), free(g[d]);
    kiln_queue_release(q[0]), kiln_queue_release(q[1]);
    kiln_context_release(c);
}

int main(void) {
    kat_host();
    kt_for_each_device(run, NULL);
    two_devices();
    return kt_report();
}
