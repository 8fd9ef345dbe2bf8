/* Complex arrays: arithmetic, abs/exp/conj, real/imag views, casts,
 * comparisons, fills of strided views, reductions (sum, prod, norms, dot,
 * vdot) for complex64 and complex128 at awkward sizes against serial C99
 * complex references; a user kernel with the dialect's helpers; errors. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const kiln_dtype cdt[2] = { KILN_COMPLEX64, KILN_COMPLEX128 };

/* Element i of a complex host array of dtype d, as double complex. */
static double complex cget(kiln_dtype d, const void *p, size_t i) {
    if (d == KILN_COMPLEX64) {
        const float *f = p;
        return CMPLX(f[2 * i], f[2 * i + 1]);
    }
    const double *f = p;
    return CMPLX(f[2 * i], f[2 * i + 1]);
}
static void cset(kiln_dtype d, void *p, size_t i, double complex v) {
    if (d == KILN_COMPLEX64) {
        ((float *)p)[2 * i] = (float)creal(v);
        ((float *)p)[2 * i + 1] = (float)cimag(v);
    } else {
        ((double *)p)[2 * i] = creal(v);
        ((double *)p)[2 * i + 1] = cimag(v);
    }
}
static double tol(kiln_dtype d) {
    return d == KILN_COMPLEX64 ? 2e-5 : 1e-12;
}
static int close_c(double complex got, double complex want, double t) {
    return cabs(got - want) <= t * (1 + cabs(want));
}
static double complex crnd(void) {
    return CMPLX(kt_rand_unit() * 4 - 2, kt_rand_unit() * 4 - 2);
}

static int has_fp64(kiln_queue *q) {
    kiln_device_info info = { 0 };
    return kiln_device_get_info(kiln_queue_device(q), &info) == KILN_OK && info.fp64;
}

static void check_elementwise(kiln_queue *q, kiln_dtype d, size_t n) {
    kiln_context *c = kiln_queue_context(q);
    size_t es = kiln_dtype_size(d);
    char *x = malloc(n * es + 16), *y = malloc(n * es + 16), *z = malloc(n * es + 16);
    for (size_t i = 0; i < n; i++) {
        cset(d, x, i, crnd());
        cset(d, y, i, i % 5 == 0 ? cget(d, x, i) : crnd()); /* some equal */
    }
    kiln_array *X = NULL, *Y = NULL, *Z = NULL, *R = NULL, *E = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, x, &X));
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, y, &Y));
    CHECK_OK(kiln_array_empty(c, d, 1, &n, &Z));
    kiln_dtype pd = d == KILN_COMPLEX64 ? KILN_FLOAT32 : KILN_FLOAT64;
    CHECK_OK(kiln_array_empty(c, pd, 1, &n, &R));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &E));
    const kiln_binary_op ops[4] = { KILN_OP_ADD, KILN_OP_SUB, KILN_OP_MUL, KILN_OP_DIV };
    for (int k = 0; k < 4; k++) {
        CHECK_OK(kiln_array_binary_out(q, ops[k], Z, X, Y, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, Z, z));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            double complex a = cget(d, x, i), b = cget(d, y, i), w;
            w = k == 0 ? a + b : k == 1 ? a - b : k == 2 ? a * b : a / b;
            bad += !close_c(cget(d, z, i), w, tol(d));
        }
        CHECK_MSG(bad == 0, "%s op %d n=%zu: %zu wrong", kiln_dtype_name(d), (int)ops[k], n, bad);
        /* with a real scalar and a complex one (both parts reach the kernel) */
        for (int sc = 0; sc < 2; sc++) {
            double complex s = sc ? CMPLX(0.5, -2) : 1.5;
            CHECK_OK(kiln_array_binary_scalar_out(
                q, ops[k], Z, X, sc ? KILN_ARG_C128(0.5, -2) : KILN_ARG_F64(1.5), 0, NULL, NULL));
            CHECK_OK(kiln_array_read(q, Z, z));
            bad = 0;
            for (size_t i = 0; i < n; i++) {
                double complex a = cget(d, x, i), w;
                w = k == 0 ? a + s : k == 1 ? a - s : k == 2 ? a * s : a / s;
                bad += !close_c(cget(d, z, i), w, tol(d));
            }
            CHECK_MSG(bad == 0, "%s scalar %d op %d n=%zu: %zu wrong", kiln_dtype_name(d), sc,
                      (int)ops[k], n, bad);
        }
    }
    /* equality into int32 */
    int32_t *e = malloc(n * 4 + 4);
    CHECK_OK(kiln_array_binary_out(q, KILN_OP_EQ, E, X, Y, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, E, e));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += e[i] != (cget(d, x, i) == cget(d, y, i));
    CHECK_OK(kiln_array_binary_out(q, KILN_OP_NE, E, X, Y, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, E, e));
    for (size_t i = 0; i < n; i++)
        bad += e[i] != (cget(d, x, i) != cget(d, y, i));
    CHECK_MSG(bad == 0, "%s eq/ne n=%zu: %zu wrong", kiln_dtype_name(d), n, bad);
    /* abs into the real dtype; exp; neg; conj */
    void *r = malloc(n * es / 2 + 8);
    CHECK_OK(kiln_array_unary_out(q, KILN_OP_ABS, R, X, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, R, r));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += fabs(kt_get(pd, r, i) - cabs(cget(d, x, i))) > tol(d) * (1 + cabs(cget(d, x, i)));
    CHECK_MSG(bad == 0, "%s abs n=%zu: %zu wrong", kiln_dtype_name(d), n, bad);
    for (int k = 0; k < 3; k++) {
        if (k < 2)
            CHECK_OK(kiln_array_unary_out(q, k ? KILN_OP_EXP : KILN_OP_NEG, Z, X, 0, NULL, NULL));
        else
            CHECK_OK(kiln_array_conj_out(q, Z, X, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, Z, z));
        bad = 0;
        for (size_t i = 0; i < n; i++) {
            double complex a = cget(d, x, i);
            double complex w = k == 0 ? -a : k == 1 ? cexp(a) : conj(a);
            bad += !close_c(cget(d, z, i), w, tol(d) * 4);
        }
        CHECK_MSG(bad == 0, "%s unary %d n=%zu: %zu wrong", kiln_dtype_name(d), k, n, bad);
    }
    /* real and imag views: read, then write through them */
    kiln_array *re = NULL, *im = NULL;
    CHECK_OK(kiln_array_real(X, &re));
    CHECK_OK(kiln_array_imag(X, &im));
    CHECK(kiln_array_dtype(re) == pd && kiln_array_size(im) == n);
    CHECK_OK(kiln_array_read(q, im, r));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += kt_get(pd, r, i) != cimag(cget(d, x, i));
    CHECK_OK(kiln_array_read(q, re, r));
    for (size_t i = 0; i < n; i++)
        bad += kt_get(pd, r, i) != creal(cget(d, x, i));
    double seven = 7;
    float seven_f = 7;
    CHECK_OK(kiln_array_fill(
        q, im, pd == KILN_FLOAT32 ? KILN_ARG_F32(seven_f) : KILN_ARG_F64(seven), 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, X, z));
    for (size_t i = 0; i < n; i++)
        bad += cget(d, z, i) != CMPLX(creal(cget(d, x, i)), 7);
    CHECK_MSG(bad == 0, "%s real/imag views n=%zu: %zu wrong", kiln_dtype_name(d), n, bad);
    KT_RELEASE(re, im);
    KT_FREE(e, r, x, y, z);
    KT_RELEASE(X, Y, Z, R, E);
}

static void check_reductions(kiln_queue *q, kiln_dtype d, size_t n) {
    kiln_context *c = kiln_queue_context(q);
    size_t es = kiln_dtype_size(d);
    char *x = malloc(n * es + 16), *y = malloc(n * es + 16);
    double complex sum = 0, prod = 1, dot = 0, vdot = 0;
    double n1 = 0, n2 = 0, ninf = 0;
    for (size_t i = 0; i < n; i++) {
        double complex a = crnd(), b = crnd();
        double complex p = CMPLX(cos(i * 0.3), sin(i * 0.3)); /* |p| = 1 */
        cset(d, x, i, n > 100 ? a : p);
        cset(d, y, i, b);
        a = cget(d, x, i);
        b = cget(d, y, i);
        sum += a;
        prod *= a;
        dot += a * b;
        vdot += conj(a) * b;
        n1 += cabs(a);
        n2 += creal(a) * creal(a) + cimag(a) * cimag(a);
        ninf = fmax(ninf, cabs(a));
    }
    n2 = sqrt(n2);
    kiln_array *X = NULL, *Y = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, x, &X));
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, y, &Y));
    double res[2] = { 0, 0 };
    double t = tol(d) * 8 * (1 + sqrt((double)n));
    CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_SUM, X, res));
    CHECK_MSG(close_c(cget(d, res, 0), sum, t), "%s sum n=%zu", kiln_dtype_name(d), n);
    if (n <= 100) {
        CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_PROD, X, res));
        CHECK_MSG(close_c(cget(d, res, 0), prod, t), "%s prod n=%zu", kiln_dtype_name(d), n);
    }
    CHECK_OK(kiln_array_dot(q, X, Y, res));
    CHECK_MSG(close_c(cget(d, res, 0), dot, t), "%s dot n=%zu", kiln_dtype_name(d), n);
    CHECK_OK(kiln_array_vdot(q, X, Y, res));
    CHECK_MSG(close_c(cget(d, res, 0), vdot, t), "%s vdot n=%zu", kiln_dtype_name(d), n);
    kiln_dtype pd = d == KILN_COMPLEX64 ? KILN_FLOAT32 : KILN_FLOAT64;
    const kiln_reduce_op nops[3] = { KILN_REDUCE_NORM1, KILN_REDUCE_NORM2, KILN_REDUCE_NORM_INF };
    const double want[3] = { n1, n2, ninf };
    for (int k = 0; k < 3; k++) {
        CHECK(kiln_dtype_reduce_result(nops[k], d) == pd);
        CHECK_OK(kiln_array_reduce(q, nops[k], X, res));
        CHECK_MSG(fabs(kt_get(pd, res, 0) - want[k]) <= t * (1 + want[k]),
                  "%s norm %d n=%zu: %g vs %g", kiln_dtype_name(d), k, n, kt_get(pd, res, 0),
                  want[k]);
    }
    KT_FREE(x, y);
    KT_RELEASE(X, Y);
}

static void check_casts(kiln_queue *q, kiln_dtype d) {
    kiln_context *c = kiln_queue_context(q);
    const kiln_dtype reals[4] = { KILN_INT32, KILN_FLOAT16, KILN_FLOAT32, KILN_FLOAT64 };
    size_t n = 37, es = kiln_dtype_size(d);
    char *z = malloc(n * es), *h = malloc(n * 8);
    for (int k = 0; k < 4; k++) {
        kiln_dtype rd = reals[k];
        if (rd == KILN_FLOAT16) { /* no kt_set for half: small integers */
            uint16_t *hh = (uint16_t *)h;
            for (size_t i = 0; i < n; i++)
                hh[i] = (uint16_t)(0x3c00 + (i % 3) * 0x400); /* 1, 2, 4 */
        } else {
            for (size_t i = 0; i < n; i++)
                kt_set(rd, h, i, (double)i - 11);
        }
        kiln_array *R = NULL, *Z = NULL, *B = NULL;
        CHECK_OK(kiln_array_from_host(c, rd, 1, &n, h, &R));
        CHECK_OK(kiln_array_empty(c, d, 1, &n, &Z));
        CHECK_OK(kiln_array_empty(c, rd, 1, &n, &B));
        CHECK_OK(kiln_array_complex_cast_out(q, Z, R, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, Z, z));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            double v = rd == KILN_FLOAT16 ? (double)(1u << (i % 3)) : (double)i - 11;
            bad += cget(d, z, i) != CMPLX(v, 0);
        }
        /* and back: the real part */
        for (size_t i = 0; i < n; i++)
            cset(d, z, i, CMPLX(creal(cget(d, z, i)), 5));
        CHECK_OK(kiln_array_write(q, Z, z));
        CHECK_OK(kiln_array_complex_cast_out(q, B, Z, 0, NULL, NULL));
        char *back = malloc(n * 8);
        CHECK_OK(kiln_array_read(q, B, back));
        bad += memcmp(back, h, n * kiln_dtype_size(rd)) != 0;
        free(back);
        CHECK_MSG(bad == 0, "cast %s <-> %s: %zu wrong", kiln_dtype_name(rd), kiln_dtype_name(d),
                  bad);
        /* two real dtypes: not this call's job */
        CHECK_STATUS(kiln_array_complex_cast_out(q, B, R, 0, NULL, NULL),
                     KILN_ERROR_INVALID_ARGUMENT);
        KT_RELEASE(R, Z, B);
    }
    /* complex64 <-> complex128 */
    kiln_dtype o = d == KILN_COMPLEX64 ? KILN_COMPLEX128 : KILN_COMPLEX64;
    for (size_t i = 0; i < n; i++)
        cset(d, z, i, CMPLX(i * 0.5, -(double)i));
    kiln_array *A = NULL, *B = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, z, &A));
    CHECK_OK(kiln_array_empty(c, o, 1, &n, &B));
    CHECK_OK(kiln_array_complex_cast_out(q, B, A, 0, NULL, NULL));
    char *w = malloc(n * 16);
    CHECK_OK(kiln_array_read(q, B, w));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += cget(o, w, i) != CMPLX(i * 0.5, -(double)i);
    CHECK_MSG(bad == 0, "cast %s -> %s", kiln_dtype_name(d), kiln_dtype_name(o));
    KT_FREE(w, z, h);
    KT_RELEASE(A, B);
}

/* 2-D strided views: a transposed copy, a fill of a strided view. */
static void check_views(kiln_queue *q, kiln_dtype d) {
    kiln_context *c = kiln_queue_context(q);
    size_t sh[2] = { 7, 5 }, n = 35, es = kiln_dtype_size(d);
    char *x = malloc(n * es), *y = malloc(n * es);
    for (size_t i = 0; i < n; i++)
        cset(d, x, i, CMPLX(i, -(double)i * 2));
    kiln_array *X = NULL, *T = NULL, *Y = NULL, *V = NULL;
    size_t tsh[2] = { 5, 7 };
    CHECK_OK(kiln_array_from_host(c, d, 2, sh, x, &X));
    CHECK_OK(kiln_array_swapaxes(X, 0, 1, &T));
    CHECK_OK(kiln_array_empty(c, d, 2, tsh, &Y));
    CHECK_OK(kiln_array_copy_out(q, Y, T, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, Y, y));
    size_t bad = 0;
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 7; j++)
            bad += cget(d, y, i * 7 + j) != cget(d, x, j * 5 + i);
    CHECK_MSG(bad == 0, "%s transposed copy", kiln_dtype_name(d));
    kiln_slice sl[2] = { KILN_SLICE(1, 7, 2), KILN_SLICE(0, 5, 3) };
    CHECK_OK(kiln_array_view(X, sl, &V));
    double v64[2] = { 3, -4 };
    float v32[2] = { 3, -4 };
    CHECK_OK(kiln_array_fill(
        q, V, d == KILN_COMPLEX64 ? KILN_ARG_C64(v32[0], v32[1]) : KILN_ARG_C128(v64[0], v64[1]), 0,
        NULL, NULL));
    CHECK_OK(kiln_array_read(q, X, y));
    bad = 0;
    for (size_t i = 0; i < 7; i++)
        for (size_t j = 0; j < 5; j++) {
            int in = i % 2 == 1 && j % 3 == 0;
            bad += cget(d, y, i * 5 + j) != (in ? CMPLX(3, -4) : cget(d, x, i * 5 + j));
        }
    CHECK_MSG(bad == 0, "%s fill of a strided view", kiln_dtype_name(d));
    KT_FREE(x, y);
    KT_RELEASE(X, T, Y, V);
}

static void check_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 4, m = 5;
    kiln_array *A = NULL, *B = NULL, *F = NULL, *C5 = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_COMPLEX64, 1, &n, 0, NULL, NULL, &A));
    CHECK_OK(kiln_array_zeros(q, KILN_COMPLEX64, 1, &n, 0, NULL, NULL, &B));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &F));
    CHECK_OK(kiln_array_empty(c, KILN_COMPLEX64, 1, &m, &C5));
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_ADD, C5, A, B, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_ADD, A, A, F, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_LT, A, A, B, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT); /* no order: not in the array API */
    CHECK_STATUS(kiln_array_unary_out(q, KILN_OP_ABS, A, A, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH); /* abs gives the real dtype */
    CHECK_STATUS(kiln_array_unary_out(q, KILN_OP_FLOOR, A, A, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT); /* sin and the rest: test_array_complex_fn */
    char res[16];
    CHECK_STATUS(kiln_array_reduce(q, KILN_REDUCE_MAX, A, res), KILN_ERROR_UNSUPPORTED);
    CHECK(kiln_dtype_reduce_result(KILN_REDUCE_ARGMIN, KILN_COMPLEX64) == 0);
    CHECK_STATUS(kiln_array_dot(q, A, F, res), KILN_ERROR_MISMATCH);
    kiln_array *v = NULL;
    CHECK_STATUS(kiln_array_imag(F, &v), KILN_ERROR_MISMATCH);
    CHECK(v == NULL);
    CHECK_STATUS(kiln_array_real(NULL, &v), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_conj_out(q, A, C5, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    kiln_array *ar = NULL;
    CHECK_STATUS(kiln_array_arange(q, KILN_COMPLEX64, 4, 0, 1, 0, NULL, NULL, &ar),
                 KILN_ERROR_UNSUPPORTED);
    CHECK(kiln_dtype_size(KILN_COMPLEX64) == 8 && kiln_dtype_size(KILN_COMPLEX128) == 16);
    CHECK(strcmp(kiln_dtype_name(KILN_COMPLEX64), "cfloat") == 0 &&
          strcmp(kiln_dtype_name(KILN_COMPLEX128), "cdouble") == 0);
    KT_RELEASE(A, B, F, C5);
}

/* A user kernel in the portable dialect with the complex helpers. */
static void check_dialect(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_elementwise *ew = NULL;
    CHECK_OK(kiln_elementwise_create(
        c,
        &KILN_ELEMENTWISE_DESC(.arguments = "const cfloat *x, cfloat *z, float *m",
                               .operation = "z[i] = kiln_cdivf(kiln_cmulf(x[i], kiln_conjf(x[i])),"
                                            " kiln_caddf(x[i], kiln_cfloat_make(1.0f, 0.0f)));"
                                            " m[i] = kiln_cabsf(kiln_cexpf(x[i]))"),
        &ew));
    size_t n = 100;
    float x[200], z[200], m[100];
    for (size_t i = 0; i < 2 * n; i++)
        x[i] = (float)(kt_rand_unit() * 2 - 1);
    kiln_array *X = NULL, *Z = NULL, *M = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_COMPLEX64, 1, &n, x, &X));
    CHECK_OK(kiln_array_empty(c, KILN_COMPLEX64, 1, &n, &Z));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &M));
    kiln_arg a[3] = { KILN_ARG_ARRAY(X), KILN_ARG_ARRAY(Z), KILN_ARG_ARRAY(M) };
    CHECK_OK(kiln_elementwise_launch(q, ew, n, 3, a, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, Z, z));
    CHECK_OK(kiln_array_read(q, M, m));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double complex v = CMPLX(x[2 * i], x[2 * i + 1]);
        double complex w = v * conj(v) / (v + 1);
        bad += !close_c(CMPLX(z[2 * i], z[2 * i + 1]), w, 1e-4);
        bad += fabs(m[i] - cabs(cexp(v))) > 1e-5;
    }
    CHECK_MSG(bad == 0, "dialect helpers: %zu wrong", bad);
    KT_RELEASE(ew, X, Z, M);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 70000);
    for (int k = 0; k < 2; k++) {
        kiln_dtype d = cdt[k];
        if (d == KILN_COMPLEX128 && !has_fp64(q)) {
            printf("  complex128 skipped: no fp64 on this device\n");
            continue;
        }
        for (size_t s = 0; s < ns; s++) {
            if (sizes[s] == 0)
                continue;
            check_elementwise(q, d, sizes[s]);
            check_reductions(q, d, sizes[s]);
        }
        check_casts(q, d);
        check_views(q, d);
    }
    check_dialect(q);
    check_errors(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
