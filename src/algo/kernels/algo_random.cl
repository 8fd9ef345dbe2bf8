/* Counter-based random numbers (Random123: Salmon et al., SC'11) in the
 * portable dialect. Put before every generated kernel (gen_source.c), so
 * elementwise, reduction and scan expressions can call them; user kernels
 * get the same text from kiln_rng_kernel_source(). Also compiled as host C
 * (src/algo/random_host.c, KILN_RANDOM_HOST): one text, checked against
 * Random123's known-answer vectors on both sides.
 *
 * Raw generators (counter and key in, words out):
 *   kiln_rng_philox4x32_10(kiln_u32x4 ctr, kiln_u32x2 key)    -> kiln_u32x4
 *   kiln_rng_threefry4x32_20(kiln_u32x4 ctr, kiln_u32x4 key)  -> kiln_u32x4
 *   kiln_rng_threefry2x64_20(kiln_u64x2 ctr, kiln_u64x2 key)  -> kiln_u64x2
 * Streams (what kiln_rng's arrays use): word w of (algorithm, seed,
 * substream) is word w % 4 of block w / 4, see kiln_rng_block.
 * Per-item helpers for expressions: kiln_rand_uniform(seed, index) (float
 * in [0,1)), kiln_rand_uniform_n(seed, index, k) (k = 0..3),
 * kiln_rand_uniform_double, kiln_rand_normal, kiln_rand_u32, kiln_rand_u32x4:
 * Philox4x32-10 with substream = index, so each index is its own stream.
 * On OpenCL CPU devices (KILN_CPU) also the fills' wide helpers
 * (kiln_rng_block16: sixteen blocks in uint16 lanes, and their float16 /
 * double16 distributions and stores). */
#ifndef KILN_RANDOM_CL
#define KILN_RANDOM_CL

typedef struct kiln_u32x2 { uint x, y; } kiln_u32x2;
typedef struct kiln_u32x4 { uint x, y, z, w; } kiln_u32x4;
typedef struct kiln_u64x2 { kiln_uint64 x, y; } kiln_u64x2;

KILN_FUNC kiln_u32x2 kiln_make_u32x2(uint x, uint y)
{
    kiln_u32x2 r; r.x = x; r.y = y; return r;
}
KILN_FUNC kiln_u32x4 kiln_make_u32x4(uint x, uint y, uint z, uint w)
{
    kiln_u32x4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;
}
KILN_FUNC kiln_u64x2 kiln_make_u64x2(kiln_uint64 x, kiln_uint64 y)
{
    kiln_u64x2 r; r.x = x; r.y = y; return r;
}

/* ---- Philox4x32-10 */
KILN_FUNC kiln_u32x4 kiln__philox4x32_round(kiln_u32x4 c, kiln_u32x2 k)
{
    kiln_uint64 p0 = (kiln_uint64)0xD2511F53u * c.x;
    kiln_uint64 p1 = (kiln_uint64)0xCD9E8D57u * c.z;
    return kiln_make_u32x4((uint)(p1 >> 32) ^ c.y ^ k.x, (uint)p1,
                           (uint)(p0 >> 32) ^ c.w ^ k.y, (uint)p0);
}
KILN_FUNC kiln_u32x4 kiln_rng_philox4x32_10(kiln_u32x4 c, kiln_u32x2 k)
{
    for (int r = 0; r < 10; r++) {
        if (r) {
            k.x += 0x9E3779B9u;
            k.y += 0xBB67AE85u;
        }
        c = kiln__philox4x32_round(c, k);
    }
    return c;
}

/* ---- Threefry4x32-20 */
KILN_FUNC uint kiln__rotl32(uint x, int s)
{
    return (x << s) | (x >> (32 - s));
}
KILN_FUNC kiln_u32x4 kiln_rng_threefry4x32_20(kiln_u32x4 c, kiln_u32x4 k)
{
    /* Rotation pairs of rounds r % 8 (Random123's R_32x4). */
    const int ra[8] = {10, 11, 13, 23, 6, 17, 25, 18};
    const int rb[8] = {26, 21, 27, 5, 20, 11, 10, 20};
    uint ks[5];
    ks[0] = k.x; ks[1] = k.y; ks[2] = k.z; ks[3] = k.w;
    ks[4] = 0x1BD11BDAu ^ k.x ^ k.y ^ k.z ^ k.w;
    uint x0 = c.x + ks[0], x1 = c.y + ks[1], x2 = c.z + ks[2],
         x3 = c.w + ks[3];
    for (int r = 0; r < 20; r++) {
        if ((r & 1) == 0) {
            x0 += x1; x1 = kiln__rotl32(x1, ra[r & 7]); x1 ^= x0;
            x2 += x3; x3 = kiln__rotl32(x3, rb[r & 7]); x3 ^= x2;
        } else {
            x0 += x3; x3 = kiln__rotl32(x3, ra[r & 7]); x3 ^= x0;
            x2 += x1; x1 = kiln__rotl32(x1, rb[r & 7]); x1 ^= x2;
        }
        if ((r & 3) == 3) { /* key injection s = r/4 + 1 */
            uint s = (uint)(r / 4 + 1);
            x0 += ks[s % 5]; x1 += ks[(s + 1) % 5];
            x2 += ks[(s + 2) % 5]; x3 += ks[(s + 3) % 5] + s;
        }
    }
    return kiln_make_u32x4(x0, x1, x2, x3);
}

/* ---- Threefry2x64-20 */
KILN_FUNC kiln_uint64 kiln__rotl64(kiln_uint64 x, int s)
{
    return (x << s) | (x >> (64 - s));
}
KILN_FUNC kiln_u64x2 kiln_rng_threefry2x64_20(kiln_u64x2 c, kiln_u64x2 k)
{
    const int rot[8] = {16, 42, 12, 31, 16, 32, 24, 21}; /* R_64x2 */
    kiln_uint64 ks[3];
    ks[0] = k.x; ks[1] = k.y;
    ks[2] = (kiln_uint64)0x1BD11BDAA9FC1A22ull ^ k.x ^ k.y;
    kiln_uint64 x0 = c.x + ks[0], x1 = c.y + ks[1];
    for (int r = 0; r < 20; r++) {
        x0 += x1; x1 = kiln__rotl64(x1, rot[r & 7]); x1 ^= x0;
        if ((r & 3) == 3) {
            uint s = (uint)(r / 4 + 1);
            x0 += ks[s % 3]; x1 += ks[(s + 1) % 3] + s;
        }
    }
    return kiln_make_u64x2(x0, x1);
}

/* ---- streams: block b (4 words) of (algorithm, seed, substream).
 * Algorithms: 0 Philox4x32-10, 1 Threefry4x32-20, 2 Threefry2x64-20 (the
 * values of kiln_rng_algorithm). Counter = (b, substream), key = seed. */
KILN_FUNC kiln_u32x4 kiln_rng_block(int alg, kiln_uint64 seed,
                                    kiln_uint64 sub, kiln_uint64 b)
{
    uint blo = (uint)b, bhi = (uint)(b >> 32);
    uint slo = (uint)sub, shi = (uint)(sub >> 32);
    uint klo = (uint)seed, khi = (uint)(seed >> 32);
    if (alg == 2) {
        kiln_u64x2 r = kiln_rng_threefry2x64_20(kiln_make_u64x2(b, sub),
                                            kiln_make_u64x2(seed, 0));
        return kiln_make_u32x4((uint)r.x, (uint)(r.x >> 32), (uint)r.y,
                               (uint)(r.y >> 32));
    }
    kiln_u32x4 c = kiln_make_u32x4(blo, bhi, slo, shi);
    if (alg == 1)
        return kiln_rng_threefry4x32_20(c, kiln_make_u32x4(klo, khi, 0, 0));
    return kiln_rng_philox4x32_10(c, kiln_make_u32x2(klo, khi));
}

KILN_FUNC uint kiln__u32x4_get(kiln_u32x4 v, uint lane)
{
    return lane == 0 ? v.x : lane == 1 ? v.y : lane == 2 ? v.z : v.w;
}

/* Words w .. w+k-1 (k <= 4) of a stream into out[0..k-1]: one block, or two
 * where they straddle a block boundary. */
KILN_FUNC void kiln_rng_words(int alg, kiln_uint64 seed, kiln_uint64 sub,
                              kiln_uint64 w, int k, uint *out)
{
    kiln_u32x4 a = kiln_rng_block(alg, seed, sub, w >> 2);
    uint lane = (uint)(w & 3);
    kiln_u32x4 b = a;
    if (lane + (uint)k > 4)
        b = kiln_rng_block(alg, seed, sub, (w >> 2) + 1);
    for (int j = 0; j < k; j++) {
        uint l = lane + (uint)j;
        out[j] = l < 4 ? kiln__u32x4_get(a, l) : kiln__u32x4_get(b, l - 4);
    }
}

/* ---- integer distributions without modulo bias (Lemire's multiply and
 * reject). The first candidate comes from the stream's own word(s); a
 * rejected candidate is replaced by words of the side stream (key: the
 * bitwise-not of the seed, substream: the word index, counter: the try),
 * so the result depends only on (algorithm, seed, substream, word). */
KILN_FUNC uint kiln_rng_bounded_u32(int alg, kiln_uint64 seed,
                                    kiln_uint64 sub, kiln_uint64 w,
                                    uint first, uint range)
{
    /* range 0 means 2^32 */
    if (range == 0)
        return first;
    uint threshold = (0u - range) % range;
    uint x = first;
    for (kiln_uint64 t = 1;; t++) {
        kiln_uint64 m = (kiln_uint64)x * range;
        if ((uint)m >= threshold)
            return (uint)(m >> 32);
        x = kiln_rng_block(alg, ~seed, w ^ (sub << 1), t).x;
    }
}

KILN_FUNC kiln_uint64 kiln__mulhi64(kiln_uint64 a, kiln_uint64 b,
                                    kiln_uint64 *lo)
{
    kiln_uint64 al = a & 0xffffffffu, ah = a >> 32;
    kiln_uint64 bl = b & 0xffffffffu, bh = b >> 32;
    kiln_uint64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    kiln_uint64 mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    *lo = (mid << 32) | (ll & 0xffffffffu);
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

KILN_FUNC kiln_uint64 kiln_rng_bounded_u64(int alg, kiln_uint64 seed,
                                           kiln_uint64 sub, kiln_uint64 w,
                                           kiln_uint64 first,
                                           kiln_uint64 range)
{
    if (range == 0) /* 2^64 */
        return first;
    kiln_uint64 threshold = (0 - range) % range;
    kiln_uint64 x = first;
    for (kiln_uint64 t = 1;; t++) {
        kiln_uint64 lo;
        kiln_uint64 hi = kiln__mulhi64(x, range, &lo);
        if (lo >= threshold)
            return hi;
        kiln_u32x4 v = kiln_rng_block(alg, ~seed, w ^ (sub << 1), t);
        x = ((kiln_uint64)v.y << 32) | v.x;
    }
}

#ifndef KILN_RANDOM_HOST
/* ---- floating-point distributions */
/* chosen by the language, never the backend: OpenCL C's overloads, or
 * CUDA C's float functions */
#ifdef __OPENCL_VERSION__
#define kiln__sqrtf sqrt
#define kiln__logf log
#define kiln__cosf cos
#define kiln__sincosf(t, s, c) (*(s) = sincos((t), (c)))
#define kiln__sincos(t, s, c) (*(s) = sincos((t), (c)))
#else
#define kiln__sqrtf sqrtf
#define kiln__logf logf
#define kiln__cosf cosf
#define kiln__sincosf(t, s, c) sincosf((t), (s), (c))
#define kiln__sincos(t, s, c) sincos((t), (s), (c))
#endif
/* cos and sin of 2 pi u, u in [0, 1). CUDA: cuRAND's choice, the fast
 * __sincosf, taken on t = 2 pi (u - 1/2) in [-pi, pi), where its absolute
 * error is at most 2^-21.41 (CUDA's math API), and negated (cos and sin
 * of t + pi). The full sincosf carries a general argument reduction; the
 * float32 normal fill on an H200 was 9% behind torch.randn with it. */
#if defined(__CUDACC__)
#define kiln__sincos2pif(u, s, c)                                              \
    do {                                                                       \
        float kiln_t_ = 6.28318530717958647692f * ((u) - 0.5f);                \
        __sincosf(kiln_t_, (s), (c));                                          \
        *(s) = -*(s);                                                          \
        *(c) = -*(c);                                                          \
    } while (0)
#define kiln__cos2pif(u) (-__cosf(6.28318530717958647692f * ((u) - 0.5f)))
#elif defined(__OPENCL_VERSION__) && defined(KILN_CPU) && !KILN_CPU
/* OpenCL GPUs in generated kernels: the same with native_sin/native_cos
 * (the hardware's; on NVIDIA the instruction __sincosf uses). With the
 * full sincos NVIDIA's OpenCL normal fill took 1.29x cuda:0's time. */
#define kiln__sincos2pif(u, s, c)                                              \
    do {                                                                       \
        float kiln_t_ = 6.28318530717958647692f * ((u) - 0.5f);                \
        *(s) = -native_sin(kiln_t_);                                           \
        *(c) = -native_cos(kiln_t_);                                           \
    } while (0)
#define kiln__cos2pif(u) (-native_cos(6.28318530717958647692f * ((u) - 0.5f)))
#else
#define kiln__cos2pif(u) kiln__cosf(6.28318530717958647692f * (u))
#define kiln__sincos2pif(u, s, c) kiln__sincosf(6.28318530717958647692f * (u), (s), (c))
#endif
/* 16-byte stores of four 32-bit or two 64-bit values (the fills' aligned
 * path; p must be 16-byte aligned). */
#ifdef __OPENCL_VERSION__
#define KILN_RNG_ST4_float(p, a, b, c, d) (*(__global float4 *)(p) = (float4)((a), (b), (c), (d)))
#define KILN_RNG_ST4_int(p, a, b, c, d) (*(__global int4 *)(p) = (int4)((a), (b), (c), (d)))
#define KILN_RNG_ST4_uint(p, a, b, c, d) (*(__global uint4 *)(p) = (uint4)((a), (b), (c), (d)))
#define KILN_RNG_ST2_double(p, a, b) (*(__global double2 *)(p) = (double2)((a), (b)))
#define KILN_RNG_ST2_long(p, a, b) (*(__global long2 *)(p) = (long2)((a), (b)))
#elif defined(__CUDACC__)
/* CUDA: inline PTX. A plain float4 store came out of NVRTC as four 32-bit
 * stores (the grid-stride loop's strength-reduced pointer lost the
 * 16-byte alignment), and the H100 fill ran at 0.62 ms where NVIDIA's
 * OpenCL compiler, storing 16 bytes, took 0.42. Global memory's generic
 * addresses are its global ones, so st.global takes the pointer as is
 * (as CUTLASS does). */
__device__ __forceinline__ void kiln__rng_st4u(void *p, unsigned a, unsigned b, unsigned c,
                                               unsigned d)
{
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a), "r"(b), "r"(c),
                 "r"(d)
                 : "memory");
}
__device__ __forceinline__ void kiln__rng_st2u(void *p, unsigned long long a,
                                               unsigned long long b)
{
    asm volatile("st.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
#define KILN_RNG_ST4_float(p, a, b, c, d)                                                   \
    kiln__rng_st4u((p), __float_as_uint(a), __float_as_uint(b), __float_as_uint(c),          \
                   __float_as_uint(d))
#define KILN_RNG_ST4_int(p, a, b, c, d)                                                     \
    kiln__rng_st4u((p), (unsigned)(a), (unsigned)(b), (unsigned)(c), (unsigned)(d))
#define KILN_RNG_ST4_uint(p, a, b, c, d) KILN_RNG_ST4_int(p, a, b, c, d)
#define KILN_RNG_ST2_double(p, a, b)                                                        \
    kiln__rng_st2u((p), (unsigned long long)__double_as_longlong(a),                         \
                   (unsigned long long)__double_as_longlong(b))
#define KILN_RNG_ST2_long(p, a, b)                                                          \
    kiln__rng_st2u((p), (unsigned long long)(a), (unsigned long long)(b))
#else /* host C (random_host.c): no vector stores */
#define KILN_RNG_ST4_float(p, a, b, c, d) ((p)[0] = (a), (p)[1] = (b), (p)[2] = (c), (p)[3] = (d))
#define KILN_RNG_ST4_int KILN_RNG_ST4_float
#define KILN_RNG_ST4_uint KILN_RNG_ST4_float
#define KILN_RNG_ST2_double(p, a, b) ((p)[0] = (a), (p)[1] = (b))
#define KILN_RNG_ST2_long KILN_RNG_ST2_double
#endif
#if !defined(__OPENCL_VERSION__) || defined(cl_khr_fp64)
#define KILN_RNG_FP64 1
#endif

/* ---- CPU fills (OpenCL C on a CPU device, KILN_CPU): sixteen consecutive
 * blocks at once, word j of block b0 + l in lane l of the j-th vector, so
 * the CPU compiler emits SIMD for every step (one AVX-512 or two AVX2
 * registers a word). The same words as kiln_rng_block; b0 must be a
 * multiple of 16 (the low counter word then does not carry inside). */
#if defined(__OPENCL_VERSION__) && defined(KILN_CPU) && KILN_CPU
#define KILN_RNG_X16 1
typedef struct kiln_u32x4x16 { uint16 x, y, z, w; } kiln_u32x4x16;

/* x * m per lane, 32 x 32 -> 64 bits: returns the high words, *lo the low
 * ones. Even and odd lanes as 64-bit products (one vpmuludq each), far
 * cheaper than the generic mul_hi of PoCL's library (16-bit pieces). Right
 * on either byte order: each lane's product goes back to its own half. */
KILN_FUNC uint16 kiln__mulhilo16(uint16 x, uint m, uint16 *lo)
{
    ulong8 e = as_ulong8(x) & 0xffffffffUL, o = as_ulong8(x) >> 32;
    ulong8 pe = e * (ulong)m, po = o * (ulong)m;
    *lo = as_uint16((pe & 0xffffffffUL) | (po << 32));
    return as_uint16((pe >> 32) | (po & 0xffffffff00000000UL));
}

KILN_FUNC kiln_u32x4x16 kiln_rng_block16(int alg, kiln_uint64 seed,
                                         kiln_uint64 sub, kiln_uint64 b0)
{
    const uint16 lane = (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                 13, 14, 15);
    kiln_u32x4x16 r;
    uint16 x0 = (uint16)((uint)b0) + lane, x1 = (uint16)((uint)(b0 >> 32));
    uint16 x2 = (uint16)((uint)sub), x3 = (uint16)((uint)(sub >> 32));
    uint klo = (uint)seed, khi = (uint)(seed >> 32);
    if (alg == 0) { /* Philox4x32-10, as kiln_rng_philox4x32_10 */
        for (int i = 0; i < 10; i++) {
            if (i) {
                klo += 0x9E3779B9u;
                khi += 0xBB67AE85u;
            }
            uint16 l0, l1;
            uint16 h0 = kiln__mulhilo16(x0, 0xD2511F53u, &l0);
            uint16 h1 = kiln__mulhilo16(x2, 0xCD9E8D57u, &l1);
            x0 = h1 ^ x1 ^ klo;
            x1 = l1;
            x2 = h0 ^ x3 ^ khi;
            x3 = l0;
        }
    } else if (alg == 1) { /* Threefry4x32-20, as kiln_rng_threefry4x32_20 */
        const int ra[8] = {10, 11, 13, 23, 6, 17, 25, 18};
        const int rb[8] = {26, 21, 27, 5, 20, 11, 10, 20};
        uint ks[5];
        ks[0] = klo; ks[1] = khi; ks[2] = 0; ks[3] = 0;
        ks[4] = 0x1BD11BDAu ^ klo ^ khi;
        x0 += ks[0]; x1 += ks[1]; x2 += ks[2]; x3 += ks[3];
        for (int i = 0; i < 20; i++) {
            if ((i & 1) == 0) {
                x0 += x1; x1 = rotate(x1, (uint16)ra[i & 7]); x1 ^= x0;
                x2 += x3; x3 = rotate(x3, (uint16)rb[i & 7]); x3 ^= x2;
            } else {
                x0 += x3; x3 = rotate(x3, (uint16)ra[i & 7]); x3 ^= x0;
                x2 += x1; x1 = rotate(x1, (uint16)rb[i & 7]); x1 ^= x2;
            }
            if ((i & 3) == 3) {
                uint s = (uint)(i / 4 + 1);
                x0 += ks[s % 5]; x1 += ks[(s + 1) % 5];
                x2 += ks[(s + 2) % 5]; x3 += ks[(s + 3) % 5] + s;
            }
        }
    } else { /* Threefry2x64-20: block by block */
        uint w[4][16];
        for (int l = 0; l < 16; l++) {
            kiln_u32x4 v = kiln_rng_block(alg, seed, sub, b0 + (uint)l);
            w[0][l] = v.x; w[1][l] = v.y; w[2][l] = v.z; w[3][l] = v.w;
        }
        x0 = vload16(0, w[0]); x1 = vload16(0, w[1]);
        x2 = vload16(0, w[2]); x3 = vload16(0, w[3]);
    }
    r.x = x0; r.y = x1; r.z = x2; r.w = x3;
    return r;
}

/* kiln_rng_u01f on every lane. */
KILN_FUNC float16 kiln_rng_u01f16(uint16 x)
{
    return convert_float16(x >> 8) * 5.9604644775390625e-8f;
}
/* kiln_rng_normal2f on every lane, with the device's vector log, sqrt and
 * sincos (on PoCL SIMD code, not one library call per element). */
KILN_FUNC void kiln_rng_normal2f16(uint16 a, uint16 b, float16 *c,
                                   float16 *s)
{
    float16 u1 = convert_float16((a >> 8) + 1u) * 5.9604644775390625e-8f;
    float16 r = sqrt(-2.0f * log(u1)), cs;
    *s = r * sincos(6.28318530717958647692f * kiln_rng_u01f16(b), &cs);
    *c = r * cs;
}

/* The body of both put16s: Q(lane, p, o) stores lane's vector of each
 * a_j at p + o vectors; W values of T go to y[e..e+W-1], only those in
 * [0, n) (through t when not all are). */
#define KILN_RNG_EACH16(Q, p) Q(0, p, 0); Q(1, p, 1); Q(2, p, 2); Q(3, p, 3); \
    Q(4, p, 4); Q(5, p, 5); Q(6, p, 6); Q(7, p, 7); Q(8, p, 8); Q(9, p, 9); \
    Q(a, p, 10); Q(b, p, 11); Q(c, p, 12); Q(d, p, 13); Q(e, p, 14); Q(f, p, 15)
#define KILN_RNG_PUT16(T, W, Q)                 \
    if (e >= 0 && e + W <= n) {                 \
        KILN_GLOBAL T *p = y + e;               \
        KILN_RNG_EACH16(Q, p);                  \
    } else {                                    \
        T t[W];                                 \
        KILN_RNG_EACH16(Q, t);                  \
        for (int l = 0; l < W; l++)             \
            if (e + l >= 0 && e + l < n)        \
                y[e + l] = t[l];                \
    }
/* Stores 64 float32 values, element e + 4l + j = a_j[l], to y[e..e+63],
 * only those in [0, n). */
KILN_FUNC void kiln_rng_put16_float(KILN_GLOBAL float *y, long e, long n,
                                    float16 a0, float16 a1, float16 a2,
                                    float16 a3)
{
#define KILN_RNG_Q(l, p, o) vstore4((float4)(a0.s##l, a1.s##l, a2.s##l, a3.s##l), o, p)
    KILN_RNG_PUT16(float, 64, KILN_RNG_Q)
#undef KILN_RNG_Q
}

#ifdef KILN_RNG_FP64
/* kiln_rng_u01d on every lane. */
KILN_FUNC double16 kiln_rng_u01d16(uint16 lo, uint16 hi)
{
    ulong16 v = ((convert_ulong16(hi) << 32) | convert_ulong16(lo)) >> 11;
    return convert_double16(v) * 1.1102230246251565404236316680908203125e-16;
}
/* kiln_rng_normal2d on every lane (the device's vector log, sqrt, cospi,
 * sinpi). */
KILN_FUNC void kiln_rng_normal2d16(uint16 a0, uint16 a1, uint16 b0,
                                   uint16 b1, double16 *c, double16 *s)
{
    ulong16 v = (((convert_ulong16(a1) << 32) | convert_ulong16(a0)) >> 11) + 1;
    double16 u1 = convert_double16(v) * 1.1102230246251565404236316680908203125e-16;
    double16 r = sqrt(-2.0 * log(u1)), t = 2.0 * kiln_rng_u01d16(b0, b1);
    *c = r * cospi(t);
    *s = r * sinpi(t);
}
/* Stores 32 float64 values, element e + 2l + j = a_j[l], to y[e..e+31],
 * only those in [0, n). */
KILN_FUNC void kiln_rng_put16_double(KILN_GLOBAL double *y, long e, long n,
                                     double16 a0, double16 a1)
{
#define KILN_RNG_D(l, p, o) vstore2((double2)(a0.s##l, a1.s##l), o, p)
    KILN_RNG_PUT16(double, 32, KILN_RNG_D)
#undef KILN_RNG_D
}
#endif
#endif

/* float in [0, 1): the top 24 bits times 2^-24 (exact, never 1). */
KILN_FUNC float kiln_rng_u01f(uint x)
{
    return (float)(x >> 8) * 5.9604644775390625e-8f;
}
/* (0, 1]: for logarithms. */
KILN_FUNC float kiln_rng_u01f_open0(uint x)
{
    return (float)((x >> 8) + 1u) * 5.9604644775390625e-8f;
}
/* Box-Muller, the cosine branch: sqrt(-2 log u1) cos(2 pi u2) (the
 * per-item kiln_rand_normal; the fills use both branches). */
KILN_FUNC float kiln_rng_normalf(uint a, uint b)
{
    float r = kiln__sqrtf(-2.0f * kiln__logf(kiln_rng_u01f_open0(a)));
    return r * kiln__cos2pif(kiln_rng_u01f(b));
}

/* Box-Muller with both branches: the pair of words (a, b) at stream
 * positions 2m, 2m+1 gives *c = r cos(2 pi u2) to position 2m and
 * *s = r sin(2 pi u2) to position 2m+1 (the fills: one word per normal). */
KILN_FUNC void kiln_rng_normal2f(uint a, uint b, float *c, float *s)
{
#ifdef KILN_RNG_X16
    /* the wide fills' vector math on one lane, so that every fill (wide,
     * blocked or per element) gives the same bits on a CPU device */
    float16 c16, s16;
    kiln_rng_normal2f16((uint16)a, (uint16)b, &c16, &s16);
    *c = c16.s0;
    *s = s16.s0;
#else
    float r = kiln__sqrtf(-2.0f * kiln__logf(kiln_rng_u01f_open0(a)));
    float cs, sn;
    kiln__sincos2pif(kiln_rng_u01f(b), &sn, &cs);
    *c = r * cs;
    *s = r * sn;
#endif
}
/* The normal at stream position p (one word each): its pair's branch. */
KILN_FUNC float kiln_rng_normalf_at(int alg, kiln_uint64 seed,
                                    kiln_uint64 sub, kiln_uint64 p)
{
    uint w[2];
    float c, s;
    kiln_rng_words(alg, seed, sub, p & ~(kiln_uint64)1, 2, w);
    kiln_rng_normal2f(w[0], w[1], &c, &s);
    return (p & 1) ? s : c;
}

#ifdef KILN_RNG_FP64
/* double in [0, 1): the top 53 of 64 bits (lo word, hi word) times 2^-53. */
KILN_FUNC double kiln_rng_u01d(uint lo, uint hi)
{
    kiln_uint64 v = (((kiln_uint64)hi << 32) | lo) >> 11;
    return (double)v * 1.1102230246251565404236316680908203125e-16;
}
/* float64 pairs: words 4m..4m+3 (u1 from the first two, u2 from the
 * last two) give cos to position 4m and sin to position 4m+2. */
KILN_FUNC void kiln_rng_normal2d(uint a0, uint a1, uint b0, uint b1,
                                 double *c, double *s)
{
#ifdef KILN_RNG_X16
    /* as kiln_rng_normal2f: the wide fills' vector math on one lane */
    double16 c16, s16;
    kiln_rng_normal2d16((uint16)a0, (uint16)a1, (uint16)b0, (uint16)b1, &c16,
                        &s16);
    *c = c16.s0;
    *s = s16.s0;
#else
    kiln_uint64 v = ((((kiln_uint64)a1 << 32) | a0) >> 11) + 1;
    double u1 = (double)v * 1.1102230246251565404236316680908203125e-16;
    double r = sqrt(-2.0 * log(u1)), t = 2.0 * kiln_rng_u01d(b0, b1);
    *c = r * cospi(t);
    *s = r * sinpi(t);
#endif
}
/* The float64 normal whose two words start at stream position p. */
KILN_FUNC double kiln_rng_normald_at(int alg, kiln_uint64 seed,
                                     kiln_uint64 sub, kiln_uint64 p)
{
    uint w[4];
    double c, s;
    kiln_rng_words(alg, seed, sub, p & ~(kiln_uint64)3, 4, w);
    kiln_rng_normal2d(w[0], w[1], w[2], w[3], &c, &s);
    return (p & 2) ? s : c;
}
KILN_FUNC double kiln_rand_uniform_double(kiln_uint64 seed, kiln_uint64 index)
{
    kiln_u32x4 v = kiln_rng_block(0, seed, index, 0);
    return kiln_rng_u01d(v.x, v.y);
}
#endif

/* ---- per-item helpers for expressions: each index is its own substream
 * of Philox4x32-10 under seed; n selects the block (0, 1, ...) when an item
 * needs more than one number. */
KILN_FUNC kiln_u32x4 kiln_rand_u32x4(kiln_uint64 seed, kiln_uint64 index,
                                     kiln_uint64 n)
{
    return kiln_rng_block(0, seed, index, n);
}
KILN_FUNC uint kiln_rand_u32(kiln_uint64 seed, kiln_uint64 index)
{
    return kiln_rng_block(0, seed, index, 0).x;
}
KILN_FUNC float kiln_rand_uniform(kiln_uint64 seed, kiln_uint64 index)
{
    return kiln_rng_u01f(kiln_rng_block(0, seed, index, 0).x);
}
/* Word k (0..3) of the item's first block as a float in [0, 1): up to four
 * independent uniforms per index, e.g. a point (x, y) for Monte Carlo. */
KILN_FUNC float kiln_rand_uniform_n(kiln_uint64 seed, kiln_uint64 index,
                                    uint k)
{
    return kiln_rng_u01f(kiln__u32x4_get(kiln_rng_block(0, seed, index, 0),
                                         k & 3u));
}
KILN_FUNC float kiln_rand_normal(kiln_uint64 seed, kiln_uint64 index)
{
    kiln_u32x4 v = kiln_rng_block(0, seed, index, 0);
    return kiln_rng_normalf(v.x, v.y);
}
#endif /* KILN_RANDOM_HOST */

#endif /* KILN_RANDOM_CL */
