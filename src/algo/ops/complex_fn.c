/* The complex functions past exp/sqrt/log (issue 42 item 3): the kernel
 * helpers of sin ... atanh, log1p, expm1, log2, log10, sign, round and pow
 * on cfloat/cdouble, written once below with placeholders and put into the
 * kernel's preamble (only those the op needs) rather than into every
 * kernel's prelude. The placeholders: $R the part type, $C the complex
 * type, $M its make function, $F the float suffix ("f" for cfloat, also on
 * literals), $L a magnitude past which 1/|z|^2 is below the epsilon $E.
 *
 * The formulas: sinh/cosh/tanh by their real parts (tanh as glibc, scaled
 * for large |x|); sin, cos, tan, asinh, atan from them by sin z = -i sinh iz
 * and the like; asin/acos by Hull, Fairgrieve and Tang (ACM TOMS 23, 1997);
 * atanh by Kahan's log1p form; log1p, expm1, log2, log10, sign and pow as
 * NumPy 2 computes them (log1p is NumPy's log(|1 + z|) + i arg(1 + z), not
 * more accurate than NumPy's). Special values as C99 Annex G. */
#include <string.h>

#include "algo/ops/complex.h"
#include "base/strbuf.h"

/* The helpers, one KILN_FUNC each, in the order of the H_ names below. */
static const char helper_text[] = {
    /* Annex G: sinh(+-0 + i inf) = +-0 + i NaN, sinh(+-inf + i inf) = inf +
     * i NaN (the sign glibc gives) ... */
    "KILN_FUNC $C kiln_csinh$F($C a) {\n"
    "    $R x = a.x, y = a.y;\n"
    "    if ((x == 0 || isinf(x)) && !isfinite(y))\n"
    "        return $M(x == 0 ? x : fabs(x), y - y);\n"
    "    if (y == 0)\n"
    "        return $M(sinh(x), y);\n"
    "    return $M(sinh(x) * cos(y), cosh(x) * sin(y));\n"
    "}\n"

    "KILN_FUNC $C kiln_ccosh$F($C a) {\n"
    "    $R x = a.x, y = a.y;\n"
    "    if (x == 0 && !isfinite(y))\n"
    "        return $M(y - y, ($R)0);\n"
    "    if (isinf(x) && !isfinite(y))\n"
    "        return $M(fabs(x), y - y);\n"
    "    if (y == 0)\n"
    "        return $M(cosh(x), x == x ? copysign(($R)1, x) * y : y);\n"
    "    return $M(cosh(x) * cos(y), sinh(x) * sin(y));\n"
    "}\n"

    "KILN_FUNC $C kiln_ctanh$F($C a) {\n"
    "    $R x = a.x, y = a.y;\n"
    "    if (isinf(x))\n"
    "        return $M(copysign(($R)1, x),\n"
    "                  copysign(($R)0, isfinite(y) ? sin(y) * cos(y) : y));\n"
    "    if (!isfinite(y))\n"
    "        return $M(x == 0 ? x : y - y, y - y);\n"
    "    if (y == 0)\n"
    "        return $M(tanh(x), y);\n"
    "    if (fabs(x) > 20)\n"
    "        return $M(copysign(($R)1, x), 4 * sin(y) * cos(y) * exp(-2 * fabs(x)));\n"
    "    $R s = sinh(x), c = cos(y), d = s * s + c * c;\n"
    "    return $M(s * cosh(x) / d, sin(y) * c / d);\n"
    "}\n"

    /* f(z) = -i g(iz) for g the hyperbolic twin; cos z = cosh iz; sin(x + i
     * inf) for x infinite or NaN is NaN + i inf, as glibc. */
    "KILN_FUNC $C kiln_csin$F($C a) {\n"
    "    if (!isfinite(a.x) && isinf(a.y))\n"
    "        return $M(a.x - a.x, fabs(a.y));\n"
    "    $C r = kiln_csinh$F($M(-a.y, a.x));\n"
    "    return $M(r.y, -r.x);\n"
    "}\n"
    "KILN_FUNC $C kiln_ccos$F($C a) {\n"
    "    return kiln_ccosh$F($M(-a.y, a.x));\n"
    "}\n"
    "KILN_FUNC $C kiln_ctan$F($C a) {\n"
    "    $C r = kiln_ctanh$F($M(-a.y, a.x));\n"
    "    return $M(r.y, -r.x);\n"
    "}\n"

    /* Hull, Fairgrieve and Tang for x, y >= 0 (or NaN): the real part of asin
     * (of acos when c) and the magnitude of the imaginary part. */
    "KILN_FUNC $C kiln_casin_k$F($R x, $R y, int c) {\n"
    "    const $R pi2 = 1.57079632679489661923$F;\n"
    "    if (isnan(x) || isnan(y)) {\n"
    "        if (isinf(x) || isinf(y))\n"
    "            return $M(x + y, isinf(x) ? x : y);\n"
    "        return $M(x == 0 ? (c ? pi2 : x) : x + y, x + y);\n"
    "    }\n"
    "    if (x > $L || y > $L) /* acos z = arg z - i log 2|z| */\n"
    "        return $M(c ? atan2(y, x) : atan2(x, y),\n"
    "                  log(hypot(x * 0.5$F, y * 0.5$F)) + 1.38629436111989061883$F);\n"
    "    $R r = hypot(x + 1, y), s = hypot(x - 1, y), A = 0.5$F * (r + s), B = x / A;\n"
    "    $R y2 = y * y, xp = r + (x + 1), q, re, im;\n"
    "    if (B <= 0.6417$F) {\n"
    "        re = c ? acos(B) : asin(B);\n"
    "    } else {\n"
    "        if (x <= 1)\n"
    "            q = sqrt(0.5$F * (A + x) * (y2 / xp + (s + (1 - x))));\n"
    "        else\n"
    "            q = y * sqrt(0.5$F * ((A + x) / xp + (A + x) / (s + (x - 1))));\n"
    "        re = c ? atan2(q, x) : atan2(x, q);\n"
    "    }\n"
    "    if (x < 1 && y < $E * (1 - x)) {\n"
    "        im = y / sqrt((1 - x) * (1 + x));\n"
    "    } else if (A <= 1.5$F) {\n"
    "        $R am1 = 0.5$F * (y2 / xp + (x < 1 ? y2 / (s + (1 - x)) : s + (x - 1)));\n"
    "        im = log1p(am1 + sqrt(am1 * (A + 1)));\n"
    "    } else {\n"
    "        im = log(A + sqrt(A * A - 1));\n"
    "    }\n"
    "    return $M(re, im);\n"
    "}\n"

    /* asin by odd and conjugate symmetry; acos z = pi - acos(-z); asinh z =
     * -i asin iz; acosh from acos with Re >= 0 (Annex G). Where a NaN's
     * sign picks a result's, it is read (signbit) or flipped by copysign,
     * never by -v: CUDA's negation of a NaN gives a NaN of either sign. */
    "KILN_FUNC $C kiln_casin$F($C a) {\n"
    "    $C k = kiln_casin_k$F(fabs(a.x), fabs(a.y), 0);\n"
    "    return $M(copysign(k.x, a.x), copysign(k.y, a.y));\n"
    "}\n"
    "KILN_FUNC $C kiln_cacos$F($C a) {\n"
    "    $C k = kiln_casin_k$F(fabs(a.x), fabs(a.y), 1);\n"
    "    return $M(signbit(a.x) ? 3.14159265358979323846$F - k.x : k.x,\n"
    "              signbit(a.y) ? k.y : -k.y);\n"
    "}\n"
    "KILN_FUNC $C kiln_casinh$F($C a) {\n"
    "    $C r = kiln_casin$F($M(-a.y, a.x));\n"
    "    return $M(r.y, -r.x);\n"
    "}\n"
    "KILN_FUNC $C kiln_cacosh$F($C a) {\n"
    "    $C r = kiln_cacos$F(a);\n"
    "    return $M(fabs(r.y), copysign(r.x, a.y));\n"
    "}\n"

    /* atanh for x, y >= 0 (or NaN): 1/4 log1p(4x / ((1-x)^2 + y^2)) + i/2
     * atan2(2y, (1-x)(1+x) - y^2); Re 1/z and pi/2 past $L. */
    "KILN_FUNC $C kiln_catanh_k$F($R x, $R y) {\n"
    "    const $R pi2 = 1.57079632679489661923$F;\n"
    "    if (isinf(y))\n"
    "        return $M(($R)0, pi2);\n"
    "    if (isnan(y))\n"
    "        return $M(isinf(x) ? ($R)0 : x == 0 ? x : y, y);\n"
    "    if (isinf(x))\n"
    "        return $M(($R)0, pi2);\n"
    "    if (x > $L || y > $L) {\n"
    "        $R h = hypot(x, y);\n"
    "        return $M(x / h / h, pi2);\n"
    "    }\n"
    "    $R t = 1 - x;\n"
    "    return $M(0.25$F * log1p(4 * x / (t * t + y * y)),\n"
    "              0.5$F * atan2(2 * y, t * (1 + x) - y * y));\n"
    "}\n"
    "KILN_FUNC $C kiln_catanh$F($C a) {\n"
    "    $C k = kiln_catanh_k$F(fabs(a.x), fabs(a.y));\n"
    "    return $M(copysign(k.x, a.x), copysign(k.y, a.y));\n"
    "}\n"
    "KILN_FUNC $C kiln_catan$F($C a) {\n"
    "    $C r = kiln_catanh$F($M(copysign(a.y, signbit(a.y) ? ($R)1 : ($R)-1), a.x));\n"
    "    return $M(r.y, -r.x);\n"
    "}\n"

    /* NumPy's nc_log1p, nc_expm1, nc_log2, nc_log10, sign and rint. */
    "KILN_FUNC $C kiln_clog1p$F($C a) {\n"
    "    $R x = a.x + 1;\n"
    "    return $M(log(hypot(x, a.y)), atan2(a.y, x));\n"
    "}\n"
    "KILN_FUNC $C kiln_cexpm1$F($C a) {\n"
    "    $R h = sin(a.y * 0.5$F);\n"
    "    return $M(expm1(a.x) * cos(a.y) - 2 * h * h, exp(a.x) * sin(a.y));\n"
    "}\n"
    "KILN_FUNC $C kiln_clog2$F($C a) {\n"
    "    $C w = kiln_clog$F(a);\n"
    "    const $R k = 1.44269504088896340736$F;\n"
    "    return $M(w.x * k, w.y * k);\n"
    "}\n"
    "KILN_FUNC $C kiln_clog10$F($C a) {\n"
    "    $C w = kiln_clog$F(a);\n"
    "    const $R k = 0.434294481903251827651$F;\n"
    "    return $M(w.x * k, w.y * k);\n"
    "}\n"
    "KILN_FUNC $C kiln_csign$F($C a) {\n"
    "    $R h = hypot(a.x, a.y);\n"
    "    if (isnan(h) || (isinf(a.x) && isinf(a.y)))\n"
    "        return $M(h - h, h - h);\n"
    "    if (isinf(a.x))\n"
    "        return $M(($R)(a.x > 0 ? 1 : -1), ($R)0);\n"
    "    if (isinf(a.y))\n"
    "        return $M(($R)0, ($R)(a.y > 0 ? 1 : -1));\n"
    "    if (h == 0)\n"
    "        return $M(($R)0, ($R)0);\n"
    "    return $M(a.x / h, a.y / h);\n"
    "}\n"
    "KILN_FUNC $C kiln_cround$F($C a) {\n"
    "    return $M(rint(a.x), rint(a.y));\n"
    "}\n"

    /* NumPy's nc_pow: 1 for b = 0; 0 ** b is 0 for Re b > 0, else NaN; whole
     * real b in (-100, 100) by squaring; else exp(b log a) (glibc's cpow). */
    "KILN_FUNC $C kiln_cpow$F($C a, $C b) {\n"
    "    if (b.x == 0 && b.y == 0)\n"
    "        return $M(($R)1, ($R)0);\n"
    "    if (a.x == 0 && a.y == 0)\n"
    "        return b.x > 0 ? $M(($R)0, ($R)0) : $M(a.x / a.x, a.x / a.x);\n"
    "    if (b.y == 0 && fabs(b.x) < 100 && b.x == floor(b.x)) {\n"
    "        int n = (int)fabs(b.x), mask = 1;\n"
    "        if (n <= 3 && b.x > 0)\n"
    "            return n == 1 ? a : n == 2 ? kiln_cmul$F(a, a) : kiln_cmul$F(a, kiln_cmul$F(a, "
    "a));\n"
    "        $C p = a, r = $M(($R)1, ($R)0);\n"
    "        for (;;) {\n"
    "            if (n & mask)\n"
    "                r = kiln_cmul$F(r, p);\n"
    "            mask <<= 1;\n"
    "            if (n < mask)\n"
    "                break;\n"
    "            p = kiln_cmul$F(p, p);\n"
    "        }\n"
    "        return b.x < 0 ? kiln_cdiv$F($M(($R)1, ($R)0), r) : r;\n"
    "    }\n"
    "    $C l = kiln_clog$F(a), t = kiln_cmul$F(b, l);\n"
    "    if (isnan(t.x) && isnan(t.y)) { /* C99 G.5.1's product, as glibc's cpow */\n"
    "        $R p = b.x, q = b.y, r = l.x, s = l.y, inf = ($R)1 / ($R)0;\n"
    "        int bi = isinf(p) || isinf(q), li = isinf(r) || isinf(s);\n"
    "        int big = isinf(p * r) || isinf(q * s) || isinf(p * s) || isinf(q * r);\n"
    "        if (bi || li || big) {\n"
    "            p = bi ? copysign(($R)(isinf(p) ? 1 : 0), p) : isnan(p) ? copysign(($R)0, p) : "
    "p;\n"
    "            q = bi ? copysign(($R)(isinf(q) ? 1 : 0), q) : isnan(q) ? copysign(($R)0, q) : "
    "q;\n"
    "            r = li ? copysign(($R)(isinf(r) ? 1 : 0), r) : isnan(r) ? copysign(($R)0, r) : "
    "r;\n"
    "            s = li ? copysign(($R)(isinf(s) ? 1 : 0), s) : isnan(s) ? copysign(($R)0, s) : "
    "s;\n"
    "            t = $M(inf * (p * r - q * s), inf * (p * s + q * r));\n"
    "        }\n"
    "    }\n"
    "    return kiln_cexp$F(t);\n"
    "}\n"
};

/* clang-format off */
enum { H_SINH, H_COSH, H_TANH, H_SIN, H_COS, H_TAN, H_ASIN_K, H_ASIN, H_ACOS, H_ASINH, H_ACOSH,
       H_ATANH_K, H_ATANH, H_ATAN, H_LOG1P, H_EXPM1, H_LOG2, H_LOG10, H_SIGN, H_ROUND, H_POW,
       H_COUNT };
/* clang-format on */

#define B(h) (1u << (h))

/* Each helper's name and the helpers it calls (earlier in the text). */
static const struct helper {
    const char *name;
    unsigned needs;
} helpers[H_COUNT] = {
    [H_SINH] = { "kiln_csinh", 0 },
    [H_COSH] = { "kiln_ccosh", 0 },
    [H_TANH] = { "kiln_ctanh", 0 },
    [H_SIN] = { "kiln_csin", B(H_SINH) },
    [H_COS] = { "kiln_ccos", B(H_COSH) },
    [H_TAN] = { "kiln_ctan", B(H_TANH) },
    [H_ASIN_K] = { NULL, 0 },
    [H_ASIN] = { "kiln_casin", B(H_ASIN_K) },
    [H_ACOS] = { "kiln_cacos", B(H_ASIN_K) },
    [H_ASINH] = { "kiln_casinh", B(H_ASIN) | B(H_ASIN_K) },
    [H_ACOSH] = { "kiln_cacosh", B(H_ACOS) | B(H_ASIN_K) },
    [H_ATANH_K] = { NULL, 0 },
    [H_ATANH] = { "kiln_catanh", B(H_ATANH_K) },
    [H_ATAN] = { "kiln_catan", B(H_ATANH) | B(H_ATANH_K) },
    [H_LOG1P] = { "kiln_clog1p", 0 },
    [H_EXPM1] = { "kiln_cexpm1", 0 },
    [H_LOG2] = { "kiln_clog2", 0 },
    [H_LOG10] = { "kiln_clog10", 0 },
    [H_SIGN] = { "kiln_csign", 0 },
    [H_ROUND] = { "kiln_cround", 0 },
    [H_POW] = { "kiln_cpow", 0 },
};

/* The unary ops' helpers. */
static int unary_helper(kiln_unary_op op) {
    static const struct {
        kiln_unary_op op;
        int h;
    } map[] = {
        { KILN_OP_SIN, H_SIN },     { KILN_OP_COS, H_COS },     { KILN_OP_TAN, H_TAN },
        { KILN_OP_ASIN, H_ASIN },   { KILN_OP_ACOS, H_ACOS },   { KILN_OP_ATAN, H_ATAN },
        { KILN_OP_SINH, H_SINH },   { KILN_OP_COSH, H_COSH },   { KILN_OP_TANH, H_TANH },
        { KILN_OP_ASINH, H_ASINH }, { KILN_OP_ACOSH, H_ACOSH }, { KILN_OP_ATANH, H_ATANH },
        { KILN_OP_LOG1P, H_LOG1P }, { KILN_OP_EXPM1, H_EXPM1 }, { KILN_OP_LOG2, H_LOG2 },
        { KILN_OP_LOG10, H_LOG10 }, { KILN_OP_SIGN, H_SIGN },   { KILN_OP_ROUND, H_ROUND },
    };
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (map[k].op == op)
            return map[k].h;
    return -1;
}

/* Appends the n characters of template t with the placeholders of cfloat
 * (f) or cdouble. */
static void expand(kiln__sb *sb, const char *t, size_t n, int f) {
    const char *r = f ? "float" : "double";
    const char *end = t + n;
    for (;;) {
        const char *d = memchr(t, '$', (size_t)(end - t));
        if (!d) {
            kiln__sb_addn(sb, t, (size_t)(end - t));
            return;
        }
        kiln__sb_addn(sb, t, (size_t)(d - t));
        if (d[1] == 'C' || d[1] == 'M')
            kiln__sb_addf(sb, d[1] == 'C' ? "c%s" : "kiln_c%s_make", r);
        else if (d[1] == 'R' || d[1] == 'F')
            kiln__sb_add(sb, d[1] == 'R' ? r : f ? "f" : "");
        else if (d[1] == 'L')
            kiln__sb_add(sb, f ? "1e8f" : "1e17");
        else /* E */
            kiln__sb_add(sb, f ? "1.1920928955078125e-7f" : "2.220446049250313080847e-16");
        t = d + 2;
    }
}

const char *kiln__complex_fn(int unary, int op, kiln_dtype d, kiln__sb *pre) {
    int h = unary ? unary_helper((kiln_unary_op)op) : op == KILN_OP_POW ? H_POW : -1;
    if (h < 0)
        return NULL;
    unsigned need = helpers[h].needs | B(h);
    const char *t = strstr(helper_text, "KILN_FUNC");
    for (int k = 0; k < H_COUNT && t; k++) {
        const char *next = strstr(t + 1, "KILN_FUNC");
        size_t n = next ? (size_t)(next - t) : strlen(t);
        if (need & B(k))
            expand(pre, t, n, d == KILN_COMPLEX64);
        t = next;
    }
    return helpers[h].name;
}
