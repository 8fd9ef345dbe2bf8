/* Shared by both preludes (spliced in where a prelude says @embed
 * prelude_complex.h); needs KILN_FUNC, kiln_cfloat_make and, for the double
 * half, KILN_HAS_FP64 and kiln_cdouble_make. */
/* Complex numbers (docs/dialect.md): cfloat and cdouble hold (re, im) in
 * .x and .y, interleaved as in NumPy and C99 (complex64/complex128 arrays).
 * Functions ending in f take cfloat; the others cdouble. The operators are
 * functions because CUDA's float2 has no arithmetic operators. */
KILN_FUNC float kiln_crealf(cfloat a) {
    return a.x;
}
KILN_FUNC float kiln_cimagf(cfloat a) {
    return a.y;
}
KILN_FUNC cfloat kiln_conjf(cfloat a) {
    return kiln_cfloat_make(a.x, -a.y);
}
KILN_FUNC cfloat kiln_caddf(cfloat a, cfloat b) {
    return kiln_cfloat_make(a.x + b.x, a.y + b.y);
}
KILN_FUNC cfloat kiln_csubf(cfloat a, cfloat b) {
    return kiln_cfloat_make(a.x - b.x, a.y - b.y);
}
KILN_FUNC cfloat kiln_cnegf(cfloat a) {
    return kiln_cfloat_make(-a.x, -a.y);
}
KILN_FUNC cfloat kiln_cmulf(cfloat a, cfloat b) {
    return kiln_cfloat_make(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
/* Smith's algorithm: no overflow of |b|^2 for large b. */
KILN_FUNC cfloat kiln_cdivf(cfloat a, cfloat b) {
    if (fabs(b.x) >= fabs(b.y)) {
        float r = b.y / b.x, d = b.x + b.y * r;
        return kiln_cfloat_make((a.x + a.y * r) / d, (a.y - a.x * r) / d);
    }
    float r = b.x / b.y, d = b.x * r + b.y;
    return kiln_cfloat_make((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}
KILN_FUNC float kiln_cabsf(cfloat a) {
    return hypot(a.x, a.y);
}
KILN_FUNC cfloat kiln_cexpf(cfloat a) {
    if (isinf(a.x) && !isfinite(a.y)) /* Annex G: +inf + i nan, or 0 (glibc's signs) */
        return a.x > 0 ? kiln_cfloat_make(a.x, a.y - a.y)
                       : kiln_cfloat_make(0.0f, copysign(0.0f, a.y));
    float m = exp(a.x);
    return a.y == 0.0f ? kiln_cfloat_make(m, a.y) : kiln_cfloat_make(m * cos(a.y), m * sin(a.y));
}
/* C99 Annex G's special values (as glibc, whose csqrtf NumPy calls);
 * quarter-scaled near the largest float so that |x| + |z| cannot overflow. */
KILN_FUNC cfloat kiln_csqrtf(cfloat a) {
    float x = a.x, y = a.y;
    if (isinf(y))
        return kiln_cfloat_make(fabs(y), y);
    if (isnan(x))
        return kiln_cfloat_make(x, x + y);
    if (isinf(x)) {
        if (x > 0)
            return kiln_cfloat_make(x, isnan(y) ? y : copysign((float)0, y));
        return kiln_cfloat_make(isnan(y) ? y : (float)0, copysign(-x, y));
    }
    if (isnan(y))
        return kiln_cfloat_make(y, y);
    if (x == 0 && y == 0)
        return kiln_cfloat_make((float)0, y);
    float scale = 1;
    if (fabs(x) > 8.5e37f || fabs(y) > 8.5e37f) {
        x *= (float)0.25;
        y *= (float)0.25;
        scale = 2;
    }
    float t = sqrt((fabs(x) + hypot(x, y)) * 0.5f);
    if (x >= 0)
        return kiln_cfloat_make(scale * t, scale * (y / (2 * t)));
    return kiln_cfloat_make(scale * (fabs(y) / (2 * t)), scale * copysign(t, y));
}
/* log|a| + i arg(a), Annex G's special values; log1p near |a| = 1. */
KILN_FUNC cfloat kiln_clogf(cfloat a) {
    float x = a.x, y = a.y;
    if (isnan(x) || isnan(y))
        return kiln_cfloat_make(isinf(x) ? fabs(x) : isinf(y) ? fabs(y) : x + y, x + y);
    float h = hypot(x, y), re;
    if (h > (float)0.7 && h < (float)1.4) {
        float ax = fabs(x), ay = fabs(y);
        re = 0.5f * log1p((ax - 1.0f) * (ax + 1.0f) + ay * ay);
    } else {
        re = log(h);
    }
    return kiln_cfloat_make(re, atan2(y, x));
}
KILN_FUNC int kiln_ceqf(cfloat a, cfloat b) {
    return a.x == b.x && a.y == b.y;
}
#ifdef KILN_HAS_FP64
KILN_FUNC double kiln_creal(cdouble a) {
    return a.x;
}
KILN_FUNC double kiln_cimag(cdouble a) {
    return a.y;
}
KILN_FUNC cdouble kiln_conj(cdouble a) {
    return kiln_cdouble_make(a.x, -a.y);
}
KILN_FUNC cdouble kiln_cadd(cdouble a, cdouble b) {
    return kiln_cdouble_make(a.x + b.x, a.y + b.y);
}
KILN_FUNC cdouble kiln_csub(cdouble a, cdouble b) {
    return kiln_cdouble_make(a.x - b.x, a.y - b.y);
}
KILN_FUNC cdouble kiln_cneg(cdouble a) {
    return kiln_cdouble_make(-a.x, -a.y);
}
KILN_FUNC cdouble kiln_cmul(cdouble a, cdouble b) {
    return kiln_cdouble_make(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
KILN_FUNC cdouble kiln_cdiv(cdouble a, cdouble b) {
    if (fabs(b.x) >= fabs(b.y)) {
        double r = b.y / b.x, d = b.x + b.y * r;
        return kiln_cdouble_make((a.x + a.y * r) / d, (a.y - a.x * r) / d);
    }
    double r = b.x / b.y, d = b.x * r + b.y;
    return kiln_cdouble_make((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}
KILN_FUNC double kiln_cabs(cdouble a) {
    return hypot(a.x, a.y);
}
KILN_FUNC cdouble kiln_cexp(cdouble a) {
    if (isinf(a.x) && !isfinite(a.y)) /* Annex G: +inf + i nan, or 0 (glibc's signs) */
        return a.x > 0 ? kiln_cdouble_make(a.x, a.y - a.y)
                       : kiln_cdouble_make(0.0, copysign(0.0, a.y));
    double m = exp(a.x);
    return a.y == 0.0 ? kiln_cdouble_make(m, a.y) : kiln_cdouble_make(m * cos(a.y), m * sin(a.y));
}
/* C99 Annex G's special values (as glibc, whose csqrt NumPy calls);
 * quarter-scaled near the largest double so that |x| + |z| cannot overflow. */
KILN_FUNC cdouble kiln_csqrt(cdouble a) {
    double x = a.x, y = a.y;
    if (isinf(y))
        return kiln_cdouble_make(fabs(y), y);
    if (isnan(x))
        return kiln_cdouble_make(x, x + y);
    if (isinf(x)) {
        if (x > 0)
            return kiln_cdouble_make(x, isnan(y) ? y : copysign((double)0, y));
        return kiln_cdouble_make(isnan(y) ? y : (double)0, copysign(-x, y));
    }
    if (isnan(y))
        return kiln_cdouble_make(y, y);
    if (x == 0 && y == 0)
        return kiln_cdouble_make((double)0, y);
    double scale = 1;
    if (fabs(x) > 4.4e307 || fabs(y) > 4.4e307) {
        x *= (double)0.25;
        y *= (double)0.25;
        scale = 2;
    }
    double t = sqrt((fabs(x) + hypot(x, y)) * 0.5);
    if (x >= 0)
        return kiln_cdouble_make(scale * t, scale * (y / (2 * t)));
    return kiln_cdouble_make(scale * (fabs(y) / (2 * t)), scale * copysign(t, y));
}
/* log|a| + i arg(a), Annex G's special values; log1p near |a| = 1. */
KILN_FUNC cdouble kiln_clog(cdouble a) {
    double x = a.x, y = a.y;
    if (isnan(x) || isnan(y))
        return kiln_cdouble_make(isinf(x) ? fabs(x) : isinf(y) ? fabs(y) : x + y, x + y);
    double h = hypot(x, y), re;
    if (h > (double)0.7 && h < (double)1.4) {
        double ax = fabs(x), ay = fabs(y);
        re = 0.5 * log1p((ax - 1.0) * (ax + 1.0) + ay * ay);
    } else {
        re = log(h);
    }
    return kiln_cdouble_make(re, atan2(y, x));
}
KILN_FUNC int kiln_ceq(cdouble a, cdouble b) {
    return a.x == b.x && a.y == b.y;
}
#endif
