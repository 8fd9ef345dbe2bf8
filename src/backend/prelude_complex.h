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
    float m = exp(a.x);
    return a.y == 0.0f ? kiln_cfloat_make(m, a.y) : kiln_cfloat_make(m * cos(a.y), m * sin(a.y));
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
    double m = exp(a.x);
    return a.y == 0.0 ? kiln_cdouble_make(m, a.y) : kiln_cdouble_make(m * cos(a.y), m * sin(a.y));
}
KILN_FUNC int kiln_ceq(cdouble a, cdouble b) {
    return a.x == b.x && a.y == b.y;
}
#endif
