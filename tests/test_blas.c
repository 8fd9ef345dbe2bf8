/* BLAS (matmul, gemm, gemv, axpy, scal, dot, nrm2) for float32, float64,
 * complex64 and complex128 (float16 where the library has it) against a
 * naive double-precision reference: sizes 1, primes, non-square; operands
 * dense, transposed views and strided views; batches of 1 and many, a 2-D
 * operand broadcast over a batch; gemm's ops and scalars; errors. Runs with
 * the device's library (OpenBLAS on PoCL) and, as test_blas_clblast, with
 * KILN_BLAS=clblast. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const kiln_dtype dts[4] = { KILN_FLOAT32, KILN_FLOAT64, KILN_COMPLEX64, KILN_COMPLEX128 };

static int is_c(kiln_dtype d) {
    return d == KILN_COMPLEX64 || d == KILN_COMPLEX128;
}

/* A scalar factor of dtype d's kind: complex for complex dtypes (a
 * complex one for a real dtype is refused). */
static kiln_arg factor(kiln_dtype d, double complex z) {
    return is_c(d) ? KILN_ARG_C128(creal(z), cimag(z)) : KILN_ARG_F64(creal(z));
}

static void put(kiln_dtype d, void *p, size_t i, double complex v) {
    switch (d) {
    case KILN_FLOAT32:
        ((float *)p)[i] = (float)creal(v);
        break;
    case KILN_FLOAT64:
        ((double *)p)[i] = creal(v);
        break;
    case KILN_COMPLEX64:
        ((float *)p)[2 * i] = (float)creal(v);
        ((float *)p)[2 * i + 1] = (float)cimag(v);
        break;
    case KILN_COMPLEX128:
        ((double *)p)[2 * i] = creal(v);
        ((double *)p)[2 * i + 1] = cimag(v);
        break;
    case KILN_FLOAT16: { /* small integers / 4: exact in half */
        double x = creal(v);
        uint16_t h = 0;
        if (x != 0) {
            int e;
            double m = frexp(fabs(x), &e); /* x = m 2^e, m in [0.5,1) */
            uint16_t mant = (uint16_t)((m * 2 - 1) * 1024);
            h = (uint16_t)(((e - 1 + 15) << 10) | mant);
            if (x < 0)
                h |= 0x8000;
        }
        ((uint16_t *)p)[i] = h;
        break;
    }
    default:
        break;
    }
}

static double complex get(kiln_dtype d, const void *p, size_t i) {
    switch (d) {
    case KILN_FLOAT32:
        return ((const float *)p)[i];
    case KILN_FLOAT64:
        return ((const double *)p)[i];
    case KILN_COMPLEX64:
        return CMPLX(((const float *)p)[2 * i], ((const float *)p)[2 * i + 1]);
    case KILN_COMPLEX128:
        return CMPLX(((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]);
    case KILN_FLOAT16: {
        uint16_t h = ((const uint16_t *)p)[i];
        int e = (h >> 10) & 31;
        double m = (h & 1023) / 1024.0;
        double v = e ? ldexp(1 + m, e - 15) : ldexp(m, -14);
        return h & 0x8000 ? -v : v;
    }
    default:
        return 0;
    }
}

static double complex rnd(kiln_dtype d) {
    if (d == KILN_FLOAT16) /* quarters in [-2, 2]: exact products and sums */
        return (double)((int)(kt_rand_u64() % 17) - 8) / 4;
    double re = kt_rand_unit() * 2 - 1;
    return is_c(d) ? CMPLX(re, kt_rand_unit() * 2 - 1) : re;
}

static double eps(kiln_dtype d) {
    return d == KILN_FLOAT32 || d == KILN_COMPLEX64 ? 1e-6 : d == KILN_FLOAT16 ? 1e-3 : 1e-14;
}

/* A logical (batch, rows, cols) matrix stack x on the device, as a dense
 * array (mode 0), a transposed view (1) or a column-strided view (2);
 * ndim 2 when batch is 0. */
static kiln_array *upload(kiln_queue *q, kiln_dtype d, size_t batch, size_t rows, size_t cols,
                          const double complex *x, int mode) {
    kiln_context *c = kiln_queue_context(q);
    size_t B = batch ? batch : 1, es = kiln_dtype_size(d);
    size_t sc = mode == 2 ? 2 * cols : cols;
    size_t n = B * rows * sc;
    char *h = calloc(n ? n : 1, es);
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++) {
                double complex v = x[(b * rows + i) * cols + j];
                if (mode == 1)
                    put(d, h, (b * cols + j) * rows + i, v);
                else
                    put(d, h, (b * rows + i) * sc + (mode == 2 ? 2 * j : j), v);
            }
    size_t shape[3] = { B, mode == 1 ? cols : rows, mode == 1 ? rows : sc };
    unsigned nd = batch ? 3 : 2;
    kiln_array *a = NULL, *v = NULL;
    CHECK_OK(kiln_array_from_host(c, d, nd, batch ? shape : shape + 1, h, &a));
    free(h);
    if (mode == 0 || !a)
        return a;
    if (mode == 1) {
        CHECK_OK(kiln_array_swapaxes(a, nd - 2, nd - 1, &v));
    } else {
        kiln_slice s[3] = { KILN_SLICE_ALL, KILN_SLICE_ALL, KILN_SLICE(0, PTRDIFF_MAX, 2) };
        CHECK_OK(kiln_array_view(a, batch ? s : s + 1, &v));
    }
    kiln_array_release(a);
    return v;
}

/* Reads an array back into logical order (any layout). */
static double complex *download(kiln_queue *q, kiln_array *a, size_t n) {
    kiln_dtype d = kiln_array_dtype(a);
    char *h = malloc(n * kiln_dtype_size(d) + 16);
    double complex *x = malloc((n + 1) * sizeof *x);
    CHECK_OK(kiln_array_read(q, a, h));
    for (size_t i = 0; i < n; i++)
        x[i] = get(d, h, i);
    free(h);
    return x;
}

static double complex op_elem(const double complex *x, size_t rows, size_t cols, int op, size_t i,
                              size_t j) {
    /* element (i, j) of op(x), x rows x cols */
    if (op == 0)
        return x[i * cols + j];
    double complex v = x[j * cols + i];
    return op == 2 ? conj(v) : v;
    (void)rows;
}

/* c = alpha op(a) op(b) + beta c, all batched (ba, bb: 0 = 2-D operand). */
static void check_gemm(kiln_queue *q, kiln_dtype d, size_t batch, int ba, int bb, size_t m,
                       size_t n, size_t k, int opa, int opb, int ma, int mb, int mc,
                       double complex alpha, double complex beta, int use_matmul) {
    size_t B = batch ? batch : 1;
    size_t ar = opa ? k : m, ac = opa ? m : k, br = opb ? n : k, bc = opb ? k : n;
    size_t na = (ba ? B : 1) * ar * ac, nb = (bb ? B : 1) * br * bc, nc = B * m * n;
    double complex *A = malloc((na + 1) * sizeof *A), *Bm = malloc((nb + 1) * sizeof *Bm),
                   *C = calloc(nc + 1, sizeof *C);
    for (size_t i = 0; i < na; i++)
        A[i] = rnd(d);
    for (size_t i = 0; i < nb; i++)
        Bm[i] = rnd(d);
    for (size_t i = 0; i < nc; i++)
        C[i] = use_matmul ? NAN : rnd(d); /* matmul must not read c */
    kiln_array *a = upload(q, d, ba ? batch : 0, ar, ac, A, ma);
    kiln_array *b = upload(q, d, bb ? batch : 0, br, bc, Bm, mb);
    kiln_array *c = upload(q, d, batch, m, n, C, mc);
    kiln_status st;
    if (use_matmul)
        st = kiln_linalg_matmul_out(q, c, a, b, 0, NULL, NULL);
    else
        st = kiln_blas_gemm(q, (kiln_blas_op)opa, (kiln_blas_op)opb, factor(d, alpha), a, b,
                            factor(d, beta), c, 0, NULL, NULL);
    CHECK_MSG(st == KILN_OK, "%s gemm: %s", kiln_dtype_name(d), kiln_last_error_message());
    double complex *got = download(q, c, nc);
    size_t bad = 0;
    double worst = 0;
    for (size_t t = 0; t < B; t++)
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                double complex s = 0;
                double mag = 0;
                const double complex *Ab = A + (ba ? t * ar * ac : 0);
                const double complex *Bb = Bm + (bb ? t * br * bc : 0);
                for (size_t l = 0; l < k; l++) {
                    double complex p =
                        op_elem(Ab, ar, ac, opa, i, l) * op_elem(Bb, br, bc, opb, l, j);
                    s += p;
                    mag += cabs(p);
                }
                double complex want = alpha * s;
                if (!use_matmul)
                    want += beta * C[(t * m + i) * n + j];
                double err = cabs(got[(t * m + i) * n + j] - want);
                double lim = eps(d) * 8 * (k + 2) * (mag + 1);
                if (!(err <= lim))
                    bad++;
                if (err > worst)
                    worst = err;
            }
    CHECK_MSG(bad == 0,
              "%s %s batch %zu (a %d, b %d) m %zu n %zu k %zu ops %d%d "
              "modes %d%d%d: %zu wrong (worst %g)",
              kiln_dtype_name(d), use_matmul ? "matmul" : "gemm", batch, ba, bb, m, n, k, opa, opb,
              ma, mb, mc, bad, worst);
    KT_FREE(got, A, Bm, C);
    KT_RELEASE(a, b, c);
}

static void check_level1(kiln_queue *q, kiln_dtype d, size_t n, int strided) {
    kiln_context *ctx = kiln_queue_context(q);
    double complex *X = malloc((n + 1) * sizeof *X), *Y = malloc((n + 1) * sizeof *Y);
    for (size_t i = 0; i < n; i++) {
        X[i] = rnd(d);
        Y[i] = rnd(d);
    }
    int mode = strided ? 2 : 0;
    /* vectors as (1, n) matrices viewed as 1-D: row 0 of a matrix */
    kiln_array *xm = upload(q, d, 0, 1, n, X, mode);
    kiln_array *ym = upload(q, d, 0, 1, n, Y, mode);
    kiln_slice row[2] = { KILN_SLICE(0, 1, 1), KILN_SLICE_ALL };
    (void)row;
    kiln_array *x = NULL, *y = NULL;
    CHECK_OK(kiln_array_reshape(xm, 1, &n, &x) == KILN_OK || strided ? KILN_OK
                                                                     : KILN_ERROR_INTERNAL);
    if (!x) { /* strided: a 1-D view with step 2 */
        size_t n2 = 2 * n;
        char *h = calloc(n2 ? n2 : 1, kiln_dtype_size(d));
        for (size_t i = 0; i < n; i++)
            put(d, h, 2 * i, X[i]);
        kiln_array *full = NULL;
        CHECK_OK(kiln_array_from_host(ctx, d, 1, &n2, h, &full));
        kiln_slice s = KILN_SLICE(0, PTRDIFF_MAX, 2);
        CHECK_OK(kiln_array_view(full, &s, &x));
        kiln_array_release(full);
        for (size_t i = 0; i < n; i++)
            put(d, h, 2 * i, Y[i]);
        CHECK_OK(kiln_array_from_host(ctx, d, 1, &n2, h, &full));
        CHECK_OK(kiln_array_view(full, &s, &y));
        kiln_array_release(full);
        free(h);
    } else {
        CHECK_OK(kiln_array_reshape(ym, 1, &n, &y));
    }
    KT_RELEASE(xm, ym);
    double complex alpha = is_c(d) ? CMPLX(0.5, -1.25) : 0.75;
    double t = eps(d) * 16 * (n + 4);
    /* dot, dotc, nrm2 into device arrays */
    size_t one = 1;
    kiln_array *r = NULL, *rn = NULL;
    kiln_dtype pd = d == KILN_COMPLEX64 ? KILN_FLOAT32 : d == KILN_COMPLEX128 ? KILN_FLOAT64 : d;
    CHECK_OK(kiln_array_empty(ctx, d, 1, &one, &r));
    CHECK_OK(kiln_array_empty(ctx, pd, 1, &one, &rn));
    double complex dot = 0, dotc = 0;
    double nrm = 0, mag = 0;
    for (size_t i = 0; i < n; i++) {
        dot += X[i] * Y[i];
        dotc += conj(X[i]) * Y[i];
        nrm += creal(X[i] * conj(X[i]));
        mag += cabs(X[i]) * cabs(Y[i]);
    }
    nrm = sqrt(nrm);
    for (int c = 0; c < 2; c++) {
        CHECK_OK(kiln_blas_dot(q, c, x, y, r, 0, NULL, NULL));
        double complex *g = download(q, r, 1);
        double complex want = c && is_c(d) ? dotc : dot;
        CHECK_MSG(cabs(g[0] - want) <= t * (mag + 1), "%s dot conj %d n %zu strided %d",
                  kiln_dtype_name(d), c, n, strided);
        free(g);
    }
    CHECK_OK(kiln_blas_nrm2(q, x, rn, 0, NULL, NULL));
    double complex *g = download(q, rn, 1);
    CHECK_MSG(fabs(creal(g[0]) - nrm) <= t * (nrm + 1), "%s nrm2 n %zu", kiln_dtype_name(d), n);
    free(g);
    /* y = alpha x + y, then x = alpha x */
    kiln_event *e1 = NULL;
    CHECK_OK(kiln_blas_axpy(q, factor(d, alpha), x, y, 0, NULL, &e1));
    CHECK_OK(kiln_blas_scal(q, factor(d, alpha), x, 1, &e1, NULL));
    kiln_event_release(e1);
    double complex *gy = download(q, y, n), *gx = download(q, x, n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad += cabs(gy[i] - (alpha * X[i] + Y[i])) > t * 4;
        bad += cabs(gx[i] - alpha * X[i]) > t * 4;
    }
    CHECK_MSG(bad == 0, "%s axpy/scal n %zu strided %d: %zu wrong", kiln_dtype_name(d), n, strided,
              bad);
    KT_FREE(gx, gy, X, Y);
    KT_RELEASE(x, y, r, rn);
}

static void check_gemv(kiln_queue *q, kiln_dtype d, size_t m, size_t n, int op, int mode) {
    size_t ar = op ? n : m, ac = op ? m : n;
    double complex *A = malloc((ar * ac + 1) * sizeof *A), *X = malloc((n + 1) * sizeof *X),
                   *Y = malloc((m + 1) * sizeof *Y);
    for (size_t i = 0; i < ar * ac; i++)
        A[i] = rnd(d);
    for (size_t i = 0; i < n; i++)
        X[i] = rnd(d);
    for (size_t i = 0; i < m; i++)
        Y[i] = rnd(d);
    kiln_context *ctx = kiln_queue_context(q);
    kiln_array *a = upload(q, d, 0, ar, ac, A, mode), *x = NULL, *y = NULL;
    char *h = malloc((m + n + 1) * kiln_dtype_size(d));
    for (size_t i = 0; i < n; i++)
        put(d, h, i, X[i]);
    CHECK_OK(kiln_array_from_host(ctx, d, 1, &n, h, &x));
    for (size_t i = 0; i < m; i++)
        put(d, h, i, Y[i]);
    CHECK_OK(kiln_array_from_host(ctx, d, 1, &m, h, &y));
    free(h);
    double complex alpha = is_c(d) ? CMPLX(1, 2) : 2, beta = -0.5;
    CHECK_OK(kiln_blas_gemv(q, (kiln_blas_op)op, factor(d, alpha), a, x, KILN_ARG_F64(-0.5), y, 0,
                            NULL, NULL));
    double complex *g = download(q, y, m);
    size_t bad = 0;
    for (size_t i = 0; i < m; i++) {
        double complex s = 0;
        double mag = 0;
        for (size_t j = 0; j < n; j++) {
            s += op_elem(A, ar, ac, is_c(d) ? op : (op ? 1 : 0), i, j) * X[j];
            mag += cabs(A[0]) + 2;
        }
        bad += cabs(g[i] - (alpha * s + beta * Y[i])) > eps(d) * 16 * (n + 2) * (mag + 1);
    }
    CHECK_MSG(bad == 0, "%s gemv m %zu n %zu op %d mode %d: %zu wrong", kiln_dtype_name(d), m, n,
              op, mode, bad);
    KT_FREE(g, A, X, Y);
    KT_RELEASE(a, x, y);
}

static void check_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t s23[2] = { 2, 3 }, s34[2] = { 3, 4 }, s24[2] = { 2, 4 }, s33[2] = { 3, 3 };
    size_t s4 = 4, s5 = 5;
    kiln_array *a = NULL, *b = NULL, *o = NULL, *bad = NULL, *i32 = NULL, *bd = NULL, *v4 = NULL,
               *v5 = NULL, *rev = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 2, s23, 0, NULL, NULL, &a));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 2, s34, 0, NULL, NULL, &b));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 2, s24, 0, NULL, NULL, &o));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 2, s33, 0, NULL, NULL, &bad));
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 2, s23, 0, NULL, NULL, &i32));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT64, 2, s34, 0, NULL, NULL, &bd));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &s4, 0, NULL, NULL, &v4));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &s5, 0, NULL, NULL, &v5));
    kiln_slice r = KILN_SLICE_REVERSED;
    CHECK_OK(kiln_array_view(v4, &r, &rev));
    CHECK_OK(kiln_linalg_matmul_out(q, o, a, b, 0, NULL, NULL));
    CHECK_STATUS(kiln_linalg_matmul_out(q, o, a, bad, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_linalg_matmul_out(q, bad, a, b, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_linalg_matmul_out(q, o, a, bd, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_linalg_matmul_out(q, o, a, v4, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_linalg_matmul_out(q, o, NULL, b, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_blas_gemm(q, (kiln_blas_op)7, KILN_BLAS_N, KILN_ARG_F64(1), a, b,
                                KILN_ARG_F64(0), o, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* scalar factors follow the scalar rule: complex ones for a real
     * dtype, and things that are not scalars, are refused by name */
    CHECK_STATUS(kiln_blas_gemm(q, KILN_BLAS_N, KILN_BLAS_N, KILN_ARG_C128(1, 1), a, b,
                                KILN_ARG_F64(0), o, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "kiln_blas_gemm: alpha") &&
          strstr(kiln_last_error_message(), "complex"));
    CHECK_STATUS(kiln_blas_scal(q, KILN_ARG_BUF(NULL), v4, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "kiln_blas_scal: alpha"));
    kiln_array *o2 = NULL, *i2 = NULL, *i3 = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 2, s24, 0, NULL, NULL, &o2));
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 2, s34, 0, NULL, NULL, &i3));
    i2 = i32;
    CHECK_STATUS(kiln_linalg_matmul_out(q, o2, i2, i3, 0, NULL, NULL), KILN_ERROR_UNSUPPORTED);
    CHECK_STATUS(kiln_blas_axpy(q, KILN_ARG_F64(1), v4, v5, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_blas_axpy(q, KILN_ARG_F64(1), rev, v4, 0, NULL, NULL),
                 KILN_ERROR_UNSUPPORTED);
    CHECK_STATUS(kiln_blas_dot(q, 0, v4, v4, NULL, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_blas_nrm2(q, v4, bd, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(
        kiln_blas_gemv(q, KILN_BLAS_N, KILN_ARG_F64(1), a, v4, KILN_ARG_F64(0), v5, 0, NULL, NULL),
        KILN_ERROR_MISMATCH);
    CHECK(kiln_blas_library(q) != NULL);
    CHECK(kiln_blas_library(NULL) == NULL);
    /* empty: a dot of nothing is 0 */
    size_t zero = 0, one = 1;
    kiln_array *e = NULL, *res = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &zero, &e));
    float nine = 9, got = 1;
    CHECK_OK(kiln_array_full(q, KILN_FLOAT32, 1, &one, KILN_ARG_F32(nine), 0, NULL, NULL, &res));
    CHECK_OK(kiln_blas_dot(q, 0, e, e, res, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, res, &got));
    CHECK(got == 0);
    kiln_array *list[] = { a, b, o, bad, i32, bd, v4, v5, rev, o2, i3, e, res };
    for (size_t k = 0; k < sizeof list / sizeof list[0]; k++)
        kiln_array_release(list[k]);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_device_info info = { 0 };
    kiln_device_get_info(kiln_queue_device(q), &info);
    printf("  BLAS library: %s\n", kiln_blas_library(q));
    kiln_status st;
    {
        size_t one = 1;
        kiln_array *t = NULL;
        kiln_array_zeros(q, KILN_FLOAT32, 1, &one, 0, NULL, NULL, &t);
        st = kiln_blas_scal(q, KILN_ARG_F64(1), t, 0, NULL, NULL);
        kiln_array_release(t);
        /* no library here, or the one KILN_BLAS names does not serve this
         * device (KILN_BLAS=clblast on cuda:0): nothing to test */
        if (st == KILN_ERROR_NO_RUNTIME || (st == KILN_ERROR_UNSUPPORTED && getenv("KILN_BLAS")))
            KT_SKIP("%s", kiln_last_error_message());
    }
    static const size_t mnk[][3] = {
        { 1, 1, 1 },   { 1, 7, 3 },    { 5, 1, 9 },   { 7, 13, 5 },
        { 31, 17, 1 }, { 64, 33, 17 }, { 3, 129, 2 }, { 97, 101, 103 }
    };
    for (int di = 0; di < 4; di++) {
        kiln_dtype d = dts[di];
        if ((d == KILN_FLOAT64 || d == KILN_COMPLEX128) && !info.fp64)
            continue;
        for (size_t s = 0; s < sizeof mnk / sizeof mnk[0]; s++) {
            size_t m = mnk[s][0], n = mnk[s][1], k = mnk[s][2];
            check_gemm(q, d, 0, 0, 0, m, n, k, 0, 0, 0, 0, 0, 1, 0, 1);
            /* layouts: transposed and strided operands and outputs */
            for (int ma = 0; ma < 3; ma++)
                for (int mb = 0; mb < 3; mb++)
                    check_gemm(q, d, 0, 0, 0, m, n, k, 0, 0, ma, mb, (ma + mb) % 3, 1, 0, 1);
        }
        /* gemm ops and scalars, over layouts */
        double complex al = is_c(d) ? CMPLX(0.5, 2) : -1.5;
        double complex be = is_c(d) ? CMPLX(-1, 0.25) : 0.5;
        for (int opa = 0; opa < 3; opa++)
            for (int opb = 0; opb < 3; opb++)
                for (int mode = 0; mode < 3; mode++)
                    check_gemm(q, d, 0, 0, 0, 6, 11, 7, opa, opb, mode, (mode + 1) % 3,
                               (mode + 2) % 3, al, be, 0);
        /* batches: of 1, of many, a 2-D operand broadcast */
        check_gemm(q, d, 1, 1, 1, 5, 7, 3, 0, 0, 0, 0, 0, 1, 0, 1);
        check_gemm(q, d, 9, 1, 1, 13, 6, 11, 0, 0, 0, 1, 0, 1, 0, 1);
        check_gemm(q, d, 4, 1, 0, 8, 5, 3, 0, 0, 2, 0, 1, 1, 0, 1);
        check_gemm(q, d, 3, 0, 1, 2, 9, 4, 1, 2, 0, 0, 0, al, be, 0);
        check_gemm(q, d, 40, 1, 1, 3, 3, 3, 0, 0, 0, 0, 0, 1, 0, 1);
        for (int op = 0; op < 3; op++)
            for (int mode = 0; mode < 3; mode++)
                check_gemv(q, d, 9, 14, op, mode);
        check_gemv(q, d, 1, 1, 0, 0);
        size_t ns[] = { 0, 1, 2, 31, 1000, 4099 };
        for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
            for (int strided = 0; strided < 2; strided++)
                check_level1(q, d, ns[s], strided);
    }
    if (info.fp16 || strcmp(kiln_blas_library(q), "cuBLAS") == 0) {
        check_gemm(q, KILN_FLOAT16, 0, 0, 0, 7, 13, 5, 0, 0, 0, 1, 0, 1, 0, 1);
        check_gemm(q, KILN_FLOAT16, 3, 1, 1, 16, 8, 9, 1, 0, 0, 0, 0, 1, 0, 0);
    } else {
        size_t s22[2] = { 2, 2 };
        kiln_array *h = NULL;
        CHECK_OK(kiln_array_zeros(q, KILN_FLOAT16, 2, s22, 0, NULL, NULL, &h));
        CHECK_STATUS(kiln_linalg_matmul_out(q, h, h, h, 0, NULL, NULL), KILN_ERROR_UNSUPPORTED);
        kiln_array_release(h);
    }
    /* an out-of-order queue: temporaries, the library call and the copy
     * back are ordered by kiln's barriers */
    kiln_queue *oq = NULL;
    if (kiln_queue_create(kiln_queue_context(q), kiln_queue_device(q), KILN_QUEUE_OUT_OF_ORDER,
                          &oq) == KILN_OK) {
        check_gemm(oq, KILN_FLOAT32, 0, 0, 0, 37, 29, 41, 0, 0, 2, 1, 2, 1, 0, 1);
        check_gemm(oq, KILN_COMPLEX64, 3, 1, 1, 5, 6, 7, 2, 1, 1, 2, 0, CMPLX(0.5, 1), CMPLX(2, -1),
                   0);
        check_level1(oq, KILN_FLOAT32, 1000, 1);
        kiln_queue_release(oq);
    }
    check_errors(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
