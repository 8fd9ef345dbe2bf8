/* Shared by both preludes (spliced in where a prelude says @embed
 * prelude_complex.h); needs KILN_FUNC, kiln_cfloat_make and, for the double
 * half, KILN_HAS_FP64 and kiln_cdouble_make. */
/* Complex numbers (docs/dialect.md): cfloat and cdouble hold (re, im) in
 * .x and .y, interleaved as in NumPy and C99 (complex64/complex128 arrays).
 * Functions ending in f take cfloat; the others cdouble. The operators are
 * functions because CUDA's float2 has no arithmetic operators. Both
 * halves come from one macro: T the part type, C the complex type (MAKE
 * builds one), F the names' and literals' suffix, BIG where csqrt starts
 * to scale (near T's largest value / 4). */
#define KILN__CX_CAT2(a, b) a##b
#define KILN__CX_CAT(a, b) KILN__CX_CAT2(a, b)
#define KILN__CX_FUNCS(T, C, F, MAKE, BIG)                                                    \
    KILN_FUNC T KILN__CX_CAT(kiln_creal, F)(C a) {                                            \
        return a.x;                                                                           \
    }                                                                                         \
    KILN_FUNC T KILN__CX_CAT(kiln_cimag, F)(C a) {                                            \
        return a.y;                                                                           \
    }                                                                                         \
    KILN_FUNC C KILN__CX_CAT(kiln_conj, F)(C a) {                                             \
        return MAKE(a.x, -a.y);                                                               \
    }                                                                                         \
    KILN_FUNC C KILN__CX_CAT(kiln_cadd, F)(C a, C b) {                                        \
        return MAKE(a.x + b.x, a.y + b.y);                                                    \
    }                                                                                         \
    KILN_FUNC C KILN__CX_CAT(kiln_csub, F)(C a, C b) {                                        \
        return MAKE(a.x - b.x, a.y - b.y);                                                    \
    }                                                                                         \
    KILN_FUNC C KILN__CX_CAT(kiln_cneg, F)(C a) {                                             \
        return MAKE(-a.x, -a.y);                                                              \
    }                                                                                         \
    KILN_FUNC C KILN__CX_CAT(kiln_cmul, F)(C a, C b) {                                        \
        return MAKE(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);                            \
    }                                                                                         \
    /* Smith's algorithm: no overflow of |b|^2 for large b. */                                \
    KILN_FUNC C KILN__CX_CAT(kiln_cdiv, F)(C a, C b) {                                        \
        if (fabs(b.x) >= fabs(b.y)) {                                                         \
            T r = b.y / b.x, d = b.x + b.y * r;                                               \
            return MAKE((a.x + a.y * r) / d, (a.y - a.x * r) / d);                            \
        }                                                                                     \
        T r = b.x / b.y, d = b.x * r + b.y;                                                   \
        return MAKE((a.x * r + a.y) / d, (a.y * r - a.x) / d);                                \
    }                                                                                         \
    KILN_FUNC T KILN__CX_CAT(kiln_cabs, F)(C a) {                                             \
        return hypot(a.x, a.y);                                                               \
    }                                                                                         \
    KILN_FUNC C KILN__CX_CAT(kiln_cexp, F)(C a) {                                             \
        if (isinf(a.x) && !isfinite(a.y)) /* Annex G: +inf + i nan, or 0 (glibc's signs) */   \
            return a.x > 0 ? MAKE(a.x, a.y - a.y)                                             \
                           : MAKE(KILN__CX_CAT(0.0, F), copysign(KILN__CX_CAT(0.0, F), a.y)); \
        T m = exp(a.x);                                                                       \
        return a.y == KILN__CX_CAT(0.0, F) ? MAKE(m, a.y) : MAKE(m * cos(a.y), m * sin(a.y)); \
    }                                                                                         \
    /* C99 Annex G's special values (as glibc, whose csqrt(f) NumPy calls);                   \
     * quarter-scaled near the largest T so that |x| + |z| cannot overflow. */                \
    KILN_FUNC C KILN__CX_CAT(kiln_csqrt, F)(C a) {                                            \
        T x = a.x, y = a.y;                                                                   \
        if (isinf(y))                                                                         \
            return MAKE(fabs(y), y);                                                          \
        if (isnan(x))                                                                         \
            return MAKE(x, x + y);                                                            \
        if (isinf(x)) {                                                                       \
            if (x > 0)                                                                        \
                return MAKE(x, isnan(y) ? y : copysign((T)0, y));                             \
            return MAKE(isnan(y) ? y : (T)0, copysign(-x, y));                                \
        }                                                                                     \
        if (isnan(y))                                                                         \
            return MAKE(y, y);                                                                \
        if (x == 0 && y == 0)                                                                 \
            return MAKE((T)0, y);                                                             \
        T scale = 1;                                                                          \
        if (fabs(x) > BIG || fabs(y) > BIG) {                                                 \
            x *= (T)0.25;                                                                     \
            y *= (T)0.25;                                                                     \
            scale = 2;                                                                        \
        }                                                                                     \
        T t = sqrt((fabs(x) + hypot(x, y)) * KILN__CX_CAT(0.5, F));                           \
        if (x >= 0)                                                                           \
            return MAKE(scale * t, scale * (y / (2 * t)));                                    \
        return MAKE(scale * (fabs(y) / (2 * t)), scale * copysign(t, y));                     \
    }                                                                                         \
    /* log|a| + i arg(a), Annex G's special values; log1p near |a| = 1. */                    \
    KILN_FUNC C KILN__CX_CAT(kiln_clog, F)(C a) {                                             \
        T x = a.x, y = a.y;                                                                   \
        if (isnan(x) || isnan(y))                                                             \
            return MAKE(isinf(x) ? fabs(x) : isinf(y) ? fabs(y) : x + y, x + y);              \
        T h = hypot(x, y), re;                                                                \
        if (h > (T)0.7 && h < (T)1.4) {                                                       \
            T ax = fabs(x), ay = fabs(y);                                                     \
            re = KILN__CX_CAT(0.5, F) *                                                       \
                 log1p((ax - KILN__CX_CAT(1.0, F)) * (ax + KILN__CX_CAT(1.0, F)) + ay * ay);  \
        } else {                                                                              \
            re = log(h);                                                                      \
        }                                                                                     \
        return MAKE(re, atan2(y, x));                                                         \
    }                                                                                         \
    KILN_FUNC int KILN__CX_CAT(kiln_ceq, F)(C a, C b) {                                       \
        return a.x == b.x && a.y == b.y;                                                      \
    }
KILN__CX_FUNCS(float, cfloat, f, kiln_cfloat_make, 8.5e37f)
#ifdef KILN_HAS_FP64
KILN__CX_FUNCS(double, cdouble, , kiln_cdouble_make, 4.4e307)
#endif
#undef KILN__CX_FUNCS
#undef KILN__CX_CAT
#undef KILN__CX_CAT2
