/* float16 arrays that compute on every device (also without cl_khr_fp16):
 * half bits stored, math in float, one round-to-nearest-even per result.
 * The reference is a host half<->float conversion written here (double
 * arithmetic, independent of the kernels' integer code), itself checked
 * against known bit patterns first. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* ------------------------------------------------------ host reference */

static float h2f(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v;
    if (e == 0x1f)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexpf((float)m, -24);
    else
        v = ldexpf((float)(1024 + m), e - 25);
    return (h & 0x8000) ? -v : v;
}

static uint16_t f2h(float f) {
    uint16_t s = signbit(f) ? 0x8000 : 0;
    double x = fabs((double)f);
    if (isnan(f))
        return 0x7e00 | s;
    if (x < ldexp(1.0, -14)) /* subnormal: quantum 2^-24; 1024 is 0x0400 */
        return (uint16_t)(s | (uint16_t)nearbyint(x * ldexp(1.0, 24)));
    if (isinf(f))
        return 0x7c00 | s;
    int E;
    frexp(x, &E); /* x = m 2^E, m in [0.5, 1): 11 significant bits */
    double n = nearbyint(ldexp(x, 11 - E));
    if (n == 2048) {
        n = 1024;
        E++;
    }
    if (E + 14 >= 31)
        return 0x7c00 | s;
    return (uint16_t)(s | ((E + 14) << 10) | ((int)n - 1024));
}

static int hnan(uint16_t h) {
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

/* Distance in representable halfs (inf next to 65504); NaN matches NaN. */
static int hdist(uint16_t a, uint16_t b) {
    if (hnan(a) || hnan(b))
        return hnan(a) && hnan(b) ? 0 : 1 << 20;
    int ia = (a & 0x8000) ? -(a & 0x7fff) : a;
    int ib = (b & 0x8000) ? -(b & 0x7fff) : b;
    return abs(ia - ib);
}

static const uint16_t specials[] = { 0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400,
                                     0x83ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00,
                                     0xfe00, 0x3c00, 0xbc00, 0x3555, 0x0200, 0x7a00 };
#define NSPEC (sizeof specials / sizeof specials[0])

/* Random halfs: specials now and then, else mostly moderate magnitudes
 * (2^-6..2^6), sometimes any finite bit pattern. */
static uint16_t rand_half(void) {
    uint64_t r = kt_rand_u64();
    if ((r & 15) == 0)
        return specials[(r >> 4) % NSPEC];
    uint16_t h = (uint16_t)(r >> 16);
    if ((r >> 8) & 3) /* exponent 9..21 */
        h = (uint16_t)((h & 0x83ff) | ((9 + (int)((r >> 40) % 13)) << 10));
    else if (((h >> 10) & 0x1f) == 0x1f)
        h &= 0xbfff;
    return h;
}

static void host_conversion(void) {
    static const struct {
        uint16_t h;
        float f;
    } kat[] = { { 0x3c00, 1.0f },
                { 0xc000, -2.0f },
                { 0x7bff, 65504.0f },
                { 0x0001, 5.9604644775390625e-8f },
                { 0x0400, 6.103515625e-5f },
                { 0x3555, 0.333251953125f },
                { 0x0000, 0.0f },
                { 0x03ff, 6.097555160522461e-5f } };
    for (size_t k = 0; k < sizeof kat / sizeof kat[0]; k++) {
        CHECK_MSG(h2f(kat[k].h) == kat[k].f, "h2f(%04x) = %g", kat[k].h, (double)h2f(kat[k].h));
        CHECK_MSG(f2h(kat[k].f) == kat[k].h, "f2h(%g) = %04x", (double)kat[k].f, f2h(kat[k].f));
    }
    CHECK(h2f(0x7c00) == INFINITY && h2f(0xfc00) == -INFINITY);
    CHECK(isnan(h2f(0x7e00)) && h2f(0x8000) == 0 && signbit(h2f(0x8000)));
    CHECK(f2h(-0.0f) == 0x8000 && f2h(INFINITY) == 0x7c00 && f2h(-INFINITY) == 0xfc00 &&
          hnan(f2h(NAN)));
    CHECK(f2h(2049.0f) == 0x6800); /* tie to even: 2048 */
    CHECK(f2h(2051.0f) == 0x6802); /* tie to even: 2052 */
    CHECK(f2h(2050.0f) == 0x6801);
    CHECK(f2h(65520.0f) == 0x7c00 && f2h(65519.0f) == 0x7bff);
    CHECK(f2h(1e-8f) == 0 && f2h(-1e-8f) == 0x8000);
    CHECK(f2h(ldexpf(1, -25)) == 0);            /* tie to even: 0 */
    CHECK(f2h(ldexpf(3, -26)) == 0x0001);       /* 0.75 quantum: up */
    CHECK(f2h(ldexpf(3, -25)) == 0x0002);       /* 1.5 quanta: tie to even 2 */
    CHECK(f2h(ldexpf(1023.5f, -24)) == 0x0400); /* subnormal to normal */
    size_t bad = 0;
    for (uint32_t h = 0; h < 65536; h++)
        bad += !hnan((uint16_t)h) && f2h(h2f((uint16_t)h)) != h;
    CHECK_MSG(bad == 0, "host round trip: %zu wrong", bad);
}

/* ------------------------------------------------------------- helpers */

static kiln_array *f16_array(kiln_context *c, size_t n, const uint16_t *h) {
    kiln_array *a = NULL;
    static const uint16_t one = 0;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT16, 1, &n, n ? h : &one, &a));
    return a;
}

static int read_f16(kiln_queue *q, kiln_array *a, uint16_t *h) {
    return CHECK_OK(kiln_array_read(q, a, h));
}

static const char *op_name(int op) {
    static const char *names[] = { "?",  "add", "sub", "mul", "div", "min", "max",
                                   "eq", "ne",  "lt",  "le",  "gt",  "ge" };
    return op >= 0 && op <= 12 ? names[op] : "?";
}

/* The host result of op on two floats (the kernels' expressions). */
static float host_binary(kiln_binary_op op, float a, float b) {
    switch (op) {
    case KILN_OP_ADD:
        return a + b;
    case KILN_OP_SUB:
        return a - b;
    case KILN_OP_MUL:
        return a * b;
    case KILN_OP_DIV:
        return a / b;
    /* NaN propagates in either argument order (NumPy; docs/algorithms.md) */
    case KILN_OP_MIN:
        return isnan(a) || isnan(b) ? NAN : b < a ? b : a;
    case KILN_OP_MAX:
        return isnan(a) || isnan(b) ? NAN : b > a ? b : a;
    case KILN_OP_EQ:
        return a == b;
    case KILN_OP_NE:
        return a != b;
    case KILN_OP_LT:
        return a < b;
    case KILN_OP_LE:
        return a <= b;
    case KILN_OP_GT:
        return a > b;
    case KILN_OP_GE:
        return a >= b;
    default: /* the later ops: tests/test_array_dtype.c */
        break;
    }
    return NAN;
}

/* ---------------------------------------------------------- conversions */

/* The prelude's kiln_h2f / kiln_f2h on the device, through user kernels
 * that take float16 arrays as `ushort *` (the documented way). */
static void device_conversion(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 65536;
    uint16_t *h = malloc(n * 2), *h2 = malloc(n * 2);
    float *f = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        h[i] = (uint16_t)i;
    kiln_array *a = f16_array(c, n, h), *fa = NULL;
    kiln_elementwise *up = NULL, *down = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &fa));
    CHECK_OK(
        kiln_elementwise_create(c,
                                &KILN_ELEMENTWISE_DESC("const ushort *h, float *f",
                                                       "f[i] = kiln_h2f(h[i])", "t_h2f", NULL, 0),
                                &up));
    CHECK_OK(
        kiln_elementwise_create(c,
                                &KILN_ELEMENTWISE_DESC("const float *f, ushort *h",
                                                       "h[i] = kiln_f2h(f[i])", "t_f2h", NULL, 0),
                                &down));
    if (up && down && a && fa) {
        kiln_arg v[2] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(fa) };
        CHECK_OK(kiln_elementwise_launch(q, up, n, 2, v, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, fa, f));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            float w = h2f((uint16_t)i);
            uint32_t gb, wb;
            memcpy(&gb, &f[i], 4);
            memcpy(&wb, &w, 4);
            bad += isnan(w) ? !isnan(f[i]) || signbit(f[i]) != signbit(w) : gb != wb;
        }
        CHECK_MSG(bad == 0, "kiln_h2f: %zu of 65536 wrong", bad);
        /* kiln_f2h: every half midpoint (ties), its float neighbours, and
         * random floats over the half range and beyond. */
        size_t m = 0;
        for (uint32_t k = 0; k < 0x7bff && m + 3 <= n; k += 2) {
            float mid = (h2f((uint16_t)k) + h2f((uint16_t)(k + 1))) / 2;
            f[m++] = (k & 2) ? -mid : mid;
            f[m++] = nextafterf(mid, INFINITY);
            f[m++] = -nextafterf(mid, 0);
        }
        while (m < n) {
            uint64_t r = kt_rand_u64();
            uint32_t bits = (uint32_t)r;
            if (r >> 62) /* exponents 95..145: subnormals to overflow */
                bits = (bits & 0x807fffffu) | ((uint32_t)(95 + (r >> 32) % 51) << 23);
            memcpy(&f[m++], &bits, 4);
        }
        f[0] = 65520.0f, f[1] = 2049.0f, f[2] = 1e-8f, f[3] = -0.0f;
        f[4] = NAN, f[5] = -INFINITY, f[6] = 65519.996f, f[7] = 1e-45f;
        CHECK_OK(kiln_array_write(q, fa, f));
        kiln_arg w[2] = { KILN_ARG_ARRAY(fa), KILN_ARG_ARRAY(a) };
        CHECK_OK(kiln_elementwise_launch(q, down, n, 2, w, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, a, h2));
        bad = 0;
        for (size_t i = 0; i < n; i++) {
            uint16_t want = f2h(f[i]);
            int ok = hnan(want) ? hnan(h2[i]) : h2[i] == want;
            if (!ok && bad++ < 5)
                printf("  kiln_f2h(%a) = %04x, want %04x\n", (double)f[i], h2[i], want);
        }
        CHECK_MSG(bad == 0, "kiln_f2h: %zu of %zu wrong", bad, n);
    }
    KT_RELEASE(up, down, a, fa);
    KT_FREE(h, h2, f);
}

/* ------------------------------------------------------------- astype */

/* kiln_f2h's bits: a NaN keeps its top payload bits, quiet (f2h above
 * gives one NaN). */
static uint16_t f2h_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)(((x >> 16) & 0x8000u) | 0x7e00u | ((x >> 13) & 0x3ffu));
    return f2h(f);
}

/* Floats that test the conversion: NaNs with payloads, +-inf, +-0,
 * values rounding to subnormal halves, overflow, ties of both parities
 * and their neighbours; after them random bit patterns over the half
 * range and beyond. */
static float astype_value(size_t k) {
    static const uint32_t bits[] = {
        0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfe000u, 0xffc12345u, 0x7fffffffu,
        0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x80400000u,
        0x33000000u, 0x33000001u, 0xb3800000u, 0x387fc000u, 0x38800000u, 0x477fe000u,
        0x477fefffu, 0x477ff000u, 0xc77ff000u, 0x501502f9u, 0x45001000u, 0x45003000u,
        0x45002000u, 0x3f801000u, 0x3f803000u, 0x3f801001u, 0xbf802fffu, 0x34400000u
    };
    enum { NB = sizeof bits / sizeof bits[0] };
    uint32_t b;
    if (k < NB) {
        b = bits[k];
    } else {
        uint64_t r = kt_rand_u64();
        b = (uint32_t)r;
        if ((r >> 61) != 0) /* exponents 95..145: subnormals to overflow */
            b = (b & 0x807fffffu) | ((uint32_t)(95 + (r >> 32) % 51) << 23);
    }
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* astype float32 -> float16 bit for bit against f2h_bits: contiguous
 * arrays whose first elements are aligned to four (the vector path where
 * it is on: GPUs, or KILN_CAST_VEC=2 as test_float16_vec runs), views
 * starting 1..3 elements later on either side (the scalar kernel) and a
 * strided source. */
static void astype_f32_to_f16(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    static const size_t sizes[] = { 0, 1, 3, 4, 5, 7, 8, 1023, 1024, 1025, 4099, 65539 };
    /* source offset, result offset, source step */
    static const int cases[][3] = { { 0, 0, 1 }, { 1, 0, 1 }, { 2, 0, 1 }, { 3, 0, 1 },
                                    { 0, 2, 1 }, { 4, 4, 1 }, { 0, 0, 2 }, { 1, 3, 3 } };
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            size_t so = (size_t)cases[ci][0], ro = (size_t)cases[ci][1],
                   step = (size_t)cases[ci][2];
            size_t m = so + step * n + 4, mr = ro + n + 4;
            float *f = malloc(m * 4);
            uint16_t *h = malloc(mr * 2), *want = malloc(mr * 2);
            for (size_t k = 0; k < m; k++)
                f[k] = astype_value(k >= so && (k - so) % step == 0 ? (k - so) / step : 1000);
            for (size_t k = 0; k < mr; k++)
                h[k] = want[k] = (uint16_t)(0x5555 + k);
            for (size_t k = 0; k < n; k++)
                want[ro + k] = f2h_bits(f[so + step * k]);
            kiln_array *A = NULL, *R = NULL, *V = NULL, *W = NULL;
            CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 1, &m, f, &A));
            R = f16_array(c, mr, h);
            kiln_slice sv = KILN_SLICE((ptrdiff_t)so, (ptrdiff_t)(so + step * n), (ptrdiff_t)step);
            kiln_slice sw = KILN_SLICE((ptrdiff_t)ro, (ptrdiff_t)(ro + n), 1);
            if (A && R && CHECK_OK(kiln_array_view(A, &sv, &V)) &&
                CHECK_OK(kiln_array_view(R, &sw, &W)) &&
                CHECK_OK(kiln_array_astype_out(q, W, V, 0, NULL, NULL)) && read_f16(q, R, h)) {
                size_t bad = 0;
                for (size_t k = 0; k < mr; k++)
                    if (h[k] != want[k] && bad++ < 3)
                        printf("  [%zu] of %a: got %04x, want %04x\n", k,
                               k >= ro && k < ro + n ? (double)f[so + step * (k - ro)] : 0.0, h[k],
                               want[k]);
                CHECK_MSG(bad == 0,
                          "astype float32 -> float16, n %zu, source offset "
                          "%zu step %zu, result offset %zu: %zu wrong",
                          n, so, step, ro, bad);
            }
            KT_RELEASE(V, W, A, R);
            KT_FREE(f, h, want);
        }
    }
}

/* -------------------------------------------------------- elementwise */

static void elementwise(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    static const size_t sizes[] = { 0, 1, 2, 3, 7, 31, 33, 127, 257, 1023, 1025, 4093, 65537 };
    size_t nmax = 65537;
    uint16_t *ha = malloc(nmax * 2), *hb = malloc(nmax * 2), *hz = malloc(nmax * 2);
    int8_t *h8 = malloc(nmax);
    int32_t *h32 = malloc(nmax * 4);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        for (size_t i = 0; i < n; i++) {
            ha[i] = rand_half();
            hb[i] = rand_half();
        }
        kiln_array *a = f16_array(c, n, ha), *b = f16_array(c, n, hb);
        kiln_array *z = NULL, *z8 = NULL, *z32 = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT16, 1, &n, &z));
        CHECK_OK(kiln_array_empty(c, KILN_INT8, 1, &n, &z8));
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &z32));
        if (!a || !b || !z || !z8 || !z32)
            goto next;
        for (int op = KILN_OP_ADD; op <= KILN_OP_GE; op++) {
            int cmp = op >= KILN_OP_EQ;
            /* comparisons: eq, ne, lt into int8; le, gt, ge into int32 */
            int wide = op >= KILN_OP_LE;
            kiln_array *out = !cmp ? z : wide ? z32 : z8;
            if (!CHECK_OK(kiln_array_binary_out(q, (kiln_binary_op)op, out, a, b, 0, NULL, NULL)))
                continue;
            size_t bad = 0;
            if (!cmp) {
                if (!read_f16(q, z, hz))
                    continue;
                for (size_t i = 0; i < n; i++) {
                    uint16_t want = f2h(host_binary((kiln_binary_op)op, h2f(ha[i]), h2f(hb[i])));
                    /* OpenCL does not require a correctly rounded float
                     * divide: 1 half ulp there, bit-exact elsewhere. */
                    int tol = op == KILN_OP_DIV ? 1 : 0;
                    if (hdist(hz[i], want) > tol && bad++ < 3)
                        printf("  %s(%04x, %04x) = %04x, want %04x\n", op_name(op), ha[i], hb[i],
                               hz[i], want);
                }
            } else {
                int ok = wide ? CHECK_OK(kiln_array_read(q, z32, h32))
                              : CHECK_OK(kiln_array_read(q, z8, h8));
                if (!ok)
                    continue;
                for (size_t i = 0; i < n; i++) {
                    int want = host_binary((kiln_binary_op)op, h2f(ha[i]), h2f(hb[i])) != 0;
                    int got = wide ? h32[i] : h8[i];
                    bad += got != want;
                }
            }
            CHECK_MSG(bad == 0, "%s n=%zu: %zu wrong", op_name(op), n, bad);
        }
        /* scalars (rounded to half first, as any scalar to the dtype); the
         * scalar path is shared by all ops, so a few (each op is one more
         * kernel build, ~0.5 s on PoCL) */
        static const double scal[] = { 0.1, -3.0, 1e-7, 70000.0, 2049.0 };
        static const int sops[] = { KILN_OP_ADD, KILN_OP_MUL, KILN_OP_DIV,
                                    KILN_OP_MAX, KILN_OP_LT,  KILN_OP_EQ };
        for (size_t so = 0; so < sizeof sops / sizeof sops[0]; so++) {
            int op = sops[so];
            double sd = scal[(so + si) % 5];
            float s = h2f(f2h((float)sd)); /* 0.1 is a float first: exact */
            int cmp = op >= KILN_OP_EQ;
            kiln_array *out = cmp ? z8 : z;
            if (!CHECK_OK(kiln_array_binary_scalar_out(q, (kiln_binary_op)op, out, a,
                                                       KILN_ARG_F64(sd), 0, NULL, NULL)))
                continue;
            size_t bad = 0;
            if (!cmp) {
                if (!read_f16(q, z, hz))
                    continue;
                for (size_t i = 0; i < n; i++) {
                    uint16_t want = f2h(host_binary((kiln_binary_op)op, h2f(ha[i]), s));
                    bad += hdist(hz[i], want) > (op == KILN_OP_DIV);
                }
            } else {
                if (!CHECK_OK(kiln_array_read(q, z8, h8)))
                    continue;
                for (size_t i = 0; i < n; i++)
                    bad += h8[i] != (host_binary((kiln_binary_op)op, h2f(ha[i]), s) != 0);
            }
            CHECK_MSG(bad == 0, "%s scalar %g n=%zu: %zu wrong", op_name(op), sd, n, bad);
        }
        /* unary: neg/abs exact, the math functions within 1 half ulp */
        for (int op = KILN_OP_NEG; op <= KILN_OP_COS; op++) {
            if (!CHECK_OK(kiln_array_unary_out(q, (kiln_unary_op)op, z, a, 0, NULL, NULL)) ||
                !read_f16(q, z, hz))
                continue;
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                float x = h2f(ha[i]), r = 0;
                switch ((kiln_unary_op)op) {
                case KILN_OP_NEG:
                    r = -x;
                    break;
                case KILN_OP_ABS:
                    r = fabsf(x);
                    break;
                case KILN_OP_SQRT:
                    r = sqrtf(x);
                    break;
                case KILN_OP_EXP:
                    r = expf(x);
                    break;
                case KILN_OP_LOG:
                    r = logf(x);
                    break;
                case KILN_OP_SIN:
                    r = sinf(x);
                    break;
                case KILN_OP_COS:
                    r = cosf(x);
                    break;
                default: /* the later ops: tests/test_array_dtype.c */
                    break;
                }
                int tol = op > KILN_OP_ABS;
                uint16_t want = f2h(r);
                /* neg/abs of NaN: a NaN; of anything else: exact bits */
                if (hdist(hz[i], want) > tol && bad++ < 3)
                    printf("  unary %d(%04x) = %04x, want %04x\n", op, ha[i], hz[i], want);
            }
            CHECK_MSG(bad == 0, "unary %d n=%zu: %zu wrong", op, n, bad);
        }
        /* axpy: a*x + y in float (contracted to an fma or not) */
        if (CHECK_OK(kiln_array_axpy_out(q, z, KILN_ARG_F64(-1.5), a, b, 0, NULL, NULL)) &&
            read_f16(q, z, hz)) {
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                float x = h2f(ha[i]), y = h2f(hb[i]);
                volatile float p = -1.5f * x;
                uint16_t w1 = f2h(p + y), w2 = f2h(fmaf(-1.5f, x, y));
                bad += hdist(hz[i], w1) != 0 && hdist(hz[i], w2) != 0;
            }
            CHECK_MSG(bad == 0, "axpy n=%zu: %zu wrong", n, bad);
        }
    next:
        KT_RELEASE(a, b, z, z8, z32);
    }
    KT_FREE(ha, hb, hz, h8, h32);
}

/* Known answers, not through the host reference: overflow, underflow,
 * signed zero, ties. */
static void known_answers(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    static const uint16_t xa[] = { 0x7bff, 0x0001, 0x8000, 0x3c00, 0x3c00,
                                   0x7c00, 0x7c00, 0x0001, 0x0200 };
    static const uint16_t xb[] = { 0x7bff, 0x3800, 0x8000, 0x1000, 0x1600,
                                   0xfc00, 0x3c00, 0x0001, 0x0200 };
    /* add: inf, 2^-24+0.5, -0, 1+2^-11 (tie: 1), 1+1.5*2^-10 (tie: even) */
    static const uint16_t add[] = { 0x7c00, 0x3800, 0x8000, 0x3c00, 0x3c02,
                                    0x7e00, 0x7c00, 0x0002, 0x0400 };
    /* mul: inf, 2^-25 (tie: 0), +0, tiny, tiny, -inf, inf, 0, 0 */
    static const uint16_t mul[] = { 0x7c00, 0x0000, 0x0000, 0x1000, 0x1600,
                                    0xfc00, 0x7c00, 0x0000, 0x0000 };
    size_t n = sizeof xa / sizeof xa[0];
    kiln_array *a = f16_array(c, n, xa), *b = f16_array(c, n, xb), *z = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT16, 1, &n, &z));
    uint16_t r[9];
    if (CHECK_OK(kiln_array_binary_out(q, KILN_OP_ADD, z, a, b, 0, NULL, NULL)) &&
        read_f16(q, z, r))
        for (size_t i = 0; i < n; i++)
            CHECK_MSG(hdist(r[i], add[i]) == 0, "add %04x+%04x = %04x want %04x", xa[i], xb[i],
                      r[i], add[i]);
    if (CHECK_OK(kiln_array_binary_out(q, KILN_OP_MUL, z, a, b, 0, NULL, NULL)) &&
        read_f16(q, z, r))
        for (size_t i = 0; i < n; i++)
            CHECK_MSG(hdist(r[i], mul[i]) == 0, "mul %04x*%04x = %04x want %04x", xa[i], xb[i],
                      r[i], mul[i]);
    /* in place: z = z + z */
    if (CHECK_OK(kiln_array_binary_out(q, KILN_OP_ADD, a, a, a, 0, NULL, NULL)) &&
        read_f16(q, a, r))
        CHECK(r[0] == 0x7c00 && r[1] == 0x0002 && r[3] == 0x4000);
    KT_RELEASE(a, b, z);
    /* a comparison of int32 arrays into a float16 output: 1.0 / 0.0 */
    {
        int32_t ia[4] = { 1, 5, -3, 7 }, ib[4] = { 2, 5, -4, 8 };
        size_t four = 4;
        uint16_t hc[4];
        kiln_array *x = NULL, *y = NULL, *o = NULL;
        CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &four, ia, &x));
        CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &four, ib, &y));
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT16, 1, &four, &o));
        if (x && y && o && CHECK_OK(kiln_array_binary_out(q, KILN_OP_LT, o, x, y, 0, NULL, NULL)) &&
            read_f16(q, o, hc))
            CHECK(hc[0] == 0x3c00 && hc[1] == 0 && hc[2] == 0 && hc[3] == 0x3c00);
        KT_RELEASE(x, y, o);
    }
    /* arange, full, zeros */
    kiln_array *g = NULL;
    uint16_t hg[300];
    if (CHECK_OK(kiln_array_arange(q, KILN_FLOAT16, 300, 2000.0, 0.5, 0, NULL, NULL, &g)) &&
        read_f16(q, g, hg)) {
        size_t bad = 0;
        for (size_t i = 0; i < 300; i++)
            bad += hg[i] != f2h((float)(2000.0 + 0.5 * (double)i));
        CHECK_MSG(bad == 0, "arange: %zu wrong", bad);
        CHECK(hg[98] == 0x6800 && hg[102] == 0x6802); /* 2049, 2051 */
    }
    kiln_array_release(g);
    size_t five = 5;
    uint16_t one = 0x3c00, h5[5];
    g = NULL;
    if (CHECK_OK(kiln_array_full(q, KILN_FLOAT16, 1, &five, KILN_ARG_F16_BITS(one), 0, NULL, NULL,
                                 &g)) &&
        read_f16(q, g, h5))
        CHECK(h5[0] == 0x3c00 && h5[4] == 0x3c00);
    kiln_array_release(g);
}

/* ------------------------------------------------------------- strided */

static void strided(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t shape[2] = { 37, 41 }, n = 37 * 41;
    uint16_t *h = malloc(n * 2), *r = malloc(n * 2);
    for (size_t i = 0; i < n; i++)
        h[i] = f2h((float)((int)(kt_rand_u64() % 129) - 64) / 8);
    kiln_array *a = NULL, *t = NULL, *v = NULL, *z = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT16, 2, shape, h, &a));
    kiln_slice s[2] = { KILN_SLICE(1, PTRDIFF_MAX, 2), KILN_SLICE_REVERSED };
    if (a)
        CHECK_OK(kiln_array_view(a, s, &v)); /* a[1::2, ::-1]: 18 x 41 */
    if (a)
        CHECK_OK(kiln_array_swapaxes(a, 0, 1, &t)); /* 41 x 37 */
    size_t vs[2] = { 18, 41 }, ts[2] = { 41, 37 };
    if (v && CHECK_OK(kiln_array_empty(c, KILN_FLOAT16, 2, vs, &z))) {
        /* z = v * v + ... : binary on a strided view */
        if (CHECK_OK(kiln_array_binary_out(q, KILN_OP_MUL, z, v, v, 0, NULL, NULL)) &&
            read_f16(q, z, r)) {
            size_t bad = 0;
            for (size_t i = 0; i < 18; i++)
                for (size_t j = 0; j < 41; j++) {
                    float x = h2f(h[(1 + 2 * i) * 41 + (40 - j)]);
                    bad += r[i * 41 + j] != f2h(x * x);
                }
            CHECK_MSG(bad == 0, "strided mul: %zu wrong", bad);
        }
        /* the strided view as the output of a unary op: v = -v */
        if (CHECK_OK(kiln_array_unary_out(q, KILN_OP_NEG, v, v, 0, NULL, NULL)) &&
            CHECK_OK(kiln_array_read(q, a, r))) {
            size_t bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += r[i] != ((i / 41) % 2 ? (uint16_t)(h[i] ^ 0x8000) : h[i]);
            CHECK_MSG(bad == 0, "strided neg in place: %zu wrong", bad);
            memcpy(h, r, n * 2);
        }
    }
    kiln_array_release(z);
    z = NULL;
    if (t) {
        /* reductions and scans over a transposed view */
        float sum = -1;
        int64_t am = -2;
        double ws = 0, wm = -INFINITY;
        int64_t wam = -1;
        for (size_t j = 0; j < 41; j++)
            for (size_t i = 0; i < 37; i++) {
                float x = h2f(h[i * 41 + j]);
                ws += x;
                if (x > wm) {
                    wm = x;
                    wam = (int64_t)(j * 37 + i);
                }
            }
        CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_SUM, t, NULL, &sum, 0, NULL, NULL));
        CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_ARGMAX, t, NULL, &am, 0, NULL, NULL));
        CHECK_OK(kiln_queue_finish(q));
        CHECK_MSG(sum == (float)ws, "strided sum %g want %g", (double)sum, ws);
        CHECK_MSG(am == wam, "strided argmax %lld want %lld", (long long)am, (long long)wam);
        if (CHECK_OK(kiln_array_empty(c, KILN_FLOAT16, 2, ts, &z)) &&
            CHECK_OK(kiln_array_cumsum_out(q, z, t, 0, 0, NULL, NULL)) && read_f16(q, z, r)) {
            size_t bad = 0;
            float run = 0;
            for (size_t k = 0; k < n; k++) {
                run += h2f(h[(k % 37) * 41 + k / 37]);
                bad += r[k] != f2h(run);
            }
            CHECK_MSG(bad == 0, "strided cumsum: %zu wrong", bad);
        }
    }
    KT_RELEASE(z, t, v, a);
    KT_FREE(h, r);
}

/* ---------------------------------------------------------- reductions */

static void reductions(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    CHECK(kiln_dtype_reduce_result(KILN_REDUCE_SUM, KILN_FLOAT16) == KILN_FLOAT32);
    CHECK(kiln_dtype_reduce_result(KILN_REDUCE_MIN, KILN_FLOAT16) == KILN_FLOAT32);
    CHECK(kiln_dtype_reduce_result(KILN_REDUCE_NORM2, KILN_FLOAT16) == KILN_FLOAT32);
    CHECK(kiln_dtype_reduce_result(KILN_REDUCE_ARGMAX, KILN_FLOAT16) == KILN_INT64);
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 70000);
    size_t nmax = 65537;
    uint16_t *hx = malloc(nmax * 2), *hy = malloc(nmax * 2), *hz = malloc(nmax * 2);
    for (size_t si = 0; si < ns; si++) {
        size_t n = sizes[si];
        /* multiples of 1/8 in [-16, 16]: sums and scans are exact in float */
        for (size_t i = 0; i < n; i++) {
            hx[i] = f2h((float)((int)(kt_rand_u64() % 257) - 128) / 8);
            hy[i] = rand_half();
            if (hnan(hy[i]) || (hy[i] & 0x7c00) == 0x7c00)
                hy[i] = 0x3c00;
        }
        kiln_array *x = f16_array(c, n, hx), *y = f16_array(c, n, hy);
        kiln_array *z = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT16, 1, &n, &z));
        if (!x || !y || !z)
            goto next;
        double ws = 0, wmin = INFINITY, wmax = -INFINITY, wdot = 0, wabs = 0;
        double wn1 = 0, wn2 = 0, winf = 0, wsy = 0;
        int64_t wamin = -1, wamax = -1;
        for (size_t i = 0; i < n; i++) {
            double a = h2f(hx[i]), b = h2f(hy[i]);
            ws += a;
            if (a < wmin)
                wmin = a, wamin = (int64_t)i;
            if (a > wmax)
                wmax = a, wamax = (int64_t)i;
            wdot += a * b;
            wabs += fabs(a * b);
            wsy += b;
            wn1 += fabs(b);
            wn2 += b * b;
            if (fabs(b) > winf)
                winf = fabs(b);
        }
        float sum = -1, mn = -1, mxv = -1, dot = -1, n2 = -1, ninf = -1, sy = -1;
        int64_t amin = -2, amax = -2;
        CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_SUM, x, NULL, &sum, 0, NULL, NULL));
        /* min/max of nothing raise (NumPy); with the dtype's extremes as
         * initial values they give them */
        if (n) {
            CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_MIN, x, NULL, &mn, 0, NULL, NULL));
            CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_MAX, x, NULL, &mxv, 0, NULL, NULL));
        } else {
            float pinf = INFINITY, minf = -INFINITY;
            CHECK_STATUS(kiln_array_reduce_async(q, KILN_REDUCE_MIN, x, NULL, &mn, 0, NULL, NULL),
                         KILN_ERROR_INVALID_ARGUMENT);
            CHECK_OK(kiln_array_reduce_initial(q, KILN_REDUCE_MIN, x, KILN_ARG_F32(pinf), &mn));
            CHECK_OK(kiln_array_reduce_initial(q, KILN_REDUCE_MAX, x, KILN_ARG_F32(minf), &mxv));
        }
        CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_ARGMIN, x, NULL, &amin, 0, NULL, NULL));
        CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_ARGMAX, x, NULL, &amax, 0, NULL, NULL));
        CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_SUM, y, NULL, &sy, 0, NULL, NULL));
        CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_NORM2, y, NULL, &n2, 0, NULL, NULL));
        CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_NORM_INF, y, NULL, &ninf, 0, NULL, NULL));
        CHECK_OK(kiln_array_dot_async(q, x, y, NULL, &dot, 0, NULL, NULL));
        CHECK_OK(kiln_queue_finish(q));
        /* exact: sums of 1/8 multiples, min, max, arg*, norm_inf */
        CHECK_MSG(sum == (float)ws, "sum n=%zu: %.9g want %.9g", n, (double)sum, ws);
        CHECK_MSG(!n || (mn == (float)wmin && mxv == (float)wmax),
                  "min/max n=%zu: %g %g want %g %g", n, (double)mn, (double)mxv, wmin, wmax);
        CHECK_MSG(amin == wamin && amax == wamax, "argmin/argmax n=%zu: %lld %lld want %lld %lld",
                  n, (long long)amin, (long long)amax, (long long)wamin, (long long)wamax);
        CHECK_MSG(ninf == (float)winf, "norm_inf n=%zu", n);
        /* float32 accumulation of general halfs: relative to sum |terms| */
        double tol = 1e-5;
        CHECK_MSG(fabs(dot - wdot) <= tol * wabs + 1e-30, "dot n=%zu: %.9g want %.9g", n,
                  (double)dot, wdot);
        CHECK_MSG(fabs(sy - wsy) <= tol * wn1 + 1e-30, "sum(y) n=%zu: %.9g want %.9g", n,
                  (double)sy, wsy);
        CHECK_MSG(fabs(n2 - sqrt(wn2)) <= tol * sqrt(wn2) + 1e-30, "norm2 n=%zu: %.9g want %.9g", n,
                  (double)n2, sqrt(wn2));
        /* the result into a device float32 array */
        if (n == 1025) {
            kiln_array *r = NULL;
            size_t one = 1;
            float hr = 0;
            if (CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &one, &r)) &&
                CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_SUM, x, r, NULL, 0, NULL, NULL)) &&
                CHECK_OK(kiln_array_read(q, r, &hr)))
                CHECK(hr == (float)ws);
            kiln_array_release(r);
        }
        /* cumsum, inclusive and exclusive, exact */
        for (int ex = 0; ex < 2; ex++) {
            if (!CHECK_OK(kiln_array_cumsum_out(q, z, x, ex, 0, NULL, NULL)) || !read_f16(q, z, hz))
                continue;
            size_t bad = 0;
            float run = 0;
            for (size_t i = 0; i < n; i++) {
                float prev = run;
                run += h2f(hx[i]);
                uint16_t want = f2h(ex ? prev : run);
                if (hz[i] != want && bad++ < 3)
                    printf("  cumsum%s[%zu] = %04x want %04x\n", ex ? " (exclusive)" : "", i, hz[i],
                           want);
            }
            CHECK_MSG(bad == 0, "cumsum ex=%d n=%zu: %zu wrong", ex, n, bad);
        }
    next:
        KT_RELEASE(x, y, z);
    }
    /* prod and cumprod of {1, -1, 2, 0.5} (exact), in place for cumprod */
    {
        size_t n = 1025;
        static const uint16_t pv[] = { 0x3c00, 0xbc00, 0x4000, 0x3800, 0x3c00 };
        for (size_t i = 0; i < n; i++)
            hx[i] = pv[kt_rand_u64() % 5];
        kiln_array *x = f16_array(c, n, hx);
        float prod = 0;
        double wp = 1;
        for (size_t i = 0; i < n; i++)
            wp *= h2f(hx[i]);
        if (x &&
            CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_PROD, x, NULL, &prod, 0, NULL, NULL)) &&
            CHECK_OK(kiln_queue_finish(q)))
            CHECK_MSG(prod == (float)wp, "prod %g want %g", (double)prod, wp);
        if (x && CHECK_OK(kiln_array_cumprod_out(q, x, x, 0, 0, NULL, NULL)) &&
            read_f16(q, x, hz)) {
            size_t bad = 0;
            float run = 1;
            for (size_t i = 0; i < n; i++) {
                run *= h2f(hx[i]);
                bad += hz[i] != f2h(run);
            }
            CHECK_MSG(bad == 0, "cumprod in place: %zu wrong", bad);
        }
        kiln_array_release(x);
    }
    /* empty input: sum 0 and argmax -1; min has no identity (NumPy
     * raises) unless an initial value is given */
    {
        kiln_array *e = f16_array(c, 0, NULL);
        float s = -1, mn = 0, init = 7;
        int64_t am = 0;
        CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_SUM, e, NULL, &s, 0, NULL, NULL));
        CHECK_STATUS(kiln_array_reduce_async(q, KILN_REDUCE_MIN, e, NULL, &mn, 0, NULL, NULL),
                     KILN_ERROR_INVALID_ARGUMENT);
        CHECK_OK(kiln_array_reduce_initial(q, KILN_REDUCE_MIN, e, KILN_ARG_F32(init), &mn));
        CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_ARGMAX, e, NULL, &am, 0, NULL, NULL));
        CHECK_OK(kiln_queue_finish(q));
        CHECK(s == 0 && mn == 7 && am == -1);
        kiln_array_release(e);
    }
    KT_FREE(hx, hy, hz);
}

/* ------------------------------------------------------------- errors */

static void errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 8, m = 9, one = 1;
    uint16_t h[9] = { 0 };
    kiln_array *a = f16_array(c, n, h), *f = NULL, *a9 = f16_array(c, m, h), *r16 = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &f));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT16, 1, &one, &r16));
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_ADD, a, a, f, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_ADD, f, a, a, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH); /* arithmetic keeps the dtype */
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_ADD, a, a, a9, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_unary_out(q, KILN_OP_SQRT, f, a, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_axpy_out(q, a, KILN_ARG_F64(1.0), a, f, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_dot_async(q, a, f, NULL, h, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_cumsum_out(q, f, a, 0, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    /* reductions of float16 write float32: a float16 result array is wrong */
    CHECK_STATUS(kiln_array_reduce_async(q, KILN_REDUCE_SUM, a, r16, NULL, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_ADD, a, NULL, a, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_binary_out(q, (kiln_binary_op)99, a, a, a, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* user kernels: float16 arrays fit `ushort *`, not `float *` */
    kiln_elementwise *ew = NULL;
    if (CHECK_OK(kiln_elementwise_create(
            c, &KILN_ELEMENTWISE_DESC("const float *x, float *y", "y[i] = x[i]", "t_f32", NULL, 0),
            &ew))) {
        kiln_arg v[2] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(f) };
        CHECK_STATUS(kiln_elementwise_launch(q, ew, kiln_array_size(a), 2, v, 0, NULL, NULL),
                     KILN_ERROR_MISMATCH);
    }
    kiln_elementwise_release(ew);
    /* `half *` needs native half; without it the build error says so */
    kiln_device_info info;
    ew = NULL;
    if (CHECK_OK(kiln_device_get_info(kiln_queue_device(q), &info)) && !info.fp16) {
        CHECK_STATUS(
            kiln_elementwise_create(c,
                                    &KILN_ELEMENTWISE_DESC("const half *x, float *y",
                                                           "y[i] = x[i] * 2.0f", "t_half", NULL, 0),
                                    &ew),
            KILN_ERROR_BUILD);
        const char *msg = kiln_last_error_message();
        CHECK_MSG(msg && strstr(msg, "cl_khr_fp16") && strstr(msg, "kiln_h2f"), "message: %s",
                  msg ? msg : "(null)");
        CHECK(ew == NULL);
    }
    kiln_elementwise_release(ew);
    /* a user reduction and scan over float16 bits */
    kiln_reduction_desc d =
        KILN_REDUCTION_DESC("const ushort *x", "float", 0, "0", "a + b",
                            "kiln_h2f(x[i]) * kiln_h2f(x[i])", NULL, "t_sumsq16");
    kiln_reduction *red = NULL;
    uint16_t hv[8] = { 0x3c00, 0x4000, 0xc200, 0x3800, 0x0000, 0x8000, 0x4400, 0x3400 };
    CHECK_OK(kiln_array_write(q, a, hv));
    if (CHECK_OK(kiln_reduction_create(c, &d, &red))) {
        float s = 0;
        kiln_arg v = KILN_ARG_ARRAY(a);
        CHECK_OK(kiln_reduction_run(q, red, 8, 1, &v, &s));
        /* 1 + 4 + 9 + 0.25 + 0 + 0 + 16 + 0.0625 */
        CHECK_MSG(s == 30.3125f, "user float16 reduction: %g", (double)s);
    }
    KT_RELEASE(red, a, a9, f, r16);
}

int main(void) {
    host_conversion();
    KT_FOR_EACH_DEVICE_STEPS(device_conversion, astype_f32_to_f16, known_answers, elementwise,
                             strided, reductions, errors);
    return kt_report();
}
