/* FFTs (c2c, r2c, c2r; 1-, 2- and 3-D; batched; forward and inverse; the
 * three NumPy norms) in single and double precision against a naive DFT in
 * double: lengths 1, primes, non-powers of two; strided and in-place
 * arrays; errors. Runs with the device's library (FFTW on PoCL) and, as
 * test_fft_clfft, with KILN_FFT=clfft (which refuses lengths with prime
 * factors above 13: checked as KILN_ERROR_UNSUPPORTED). */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int clfft;

static int radix_ok(size_t n) {
    static const size_t p[] = { 2, 3, 5, 7, 11, 13 };
    for (int k = 0; k < 6; k++)
        while (n > 1 && n % p[k] == 0)
            n /= p[k];
    return n == 1;
}

/* In-place naive DFT along one axis of a dense (outer, len, inner) block. */
static void dft_axis(double complex *x, size_t outer, size_t len, size_t inner, int inverse) {
    double complex *t = malloc((len + 1) * sizeof *t);
    double sg = inverse ? 2 * M_PI : -2 * M_PI;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            double complex *b = x + o * len * inner + i;
            for (size_t k = 0; k < len; k++) {
                double complex s = 0;
                for (size_t j = 0; j < len; j++)
                    s += b[j * inner] * cexp(I * sg * (double)((j * k) % len) / (double)len);
                t[k] = s;
            }
            for (size_t k = 0; k < len; k++)
                b[k * inner] = t[k];
        }
    free(t);
}

/* The reference: x has shape sh[0..nd), the last `axes` transformed. */
static void dft(double complex *x, unsigned nd, const size_t *sh, unsigned axes, int inverse,
                double scale) {
    size_t total = 1;
    for (unsigned d = 0; d < nd; d++)
        total *= sh[d];
    for (unsigned d = nd - axes; d < nd; d++) {
        size_t outer = 1, inner = 1;
        for (unsigned e = 0; e < d; e++)
            outer *= sh[e];
        for (unsigned e = d + 1; e < nd; e++)
            inner *= sh[e];
        dft_axis(x, outer, sh[d], inner, inverse);
    }
    for (size_t i = 0; i < total; i++)
        x[i] *= scale;
}

static double norm_scale(kiln_fft_norm norm, int inverse, size_t n) {
    if (norm == KILN_FFT_NORM_ORTHO)
        return 1 / sqrt((double)n);
    return (norm == KILN_FFT_NORM_BACKWARD) == (inverse != 0) ? 1.0 / n : 1;
}

static void put(int dbl, int cplx, void *p, size_t i, double complex v) {
    if (dbl) {
        double *d = p;
        if (cplx) {
            d[2 * i] = creal(v);
            d[2 * i + 1] = cimag(v);
        } else {
            d[i] = creal(v);
        }
    } else {
        float *f = p;
        if (cplx) {
            f[2 * i] = (float)creal(v);
            f[2 * i + 1] = (float)cimag(v);
        } else {
            f[i] = (float)creal(v);
        }
    }
}
static double complex get(int dbl, int cplx, const void *p, size_t i) {
    if (dbl) {
        const double *d = p;
        return cplx ? CMPLX(d[2 * i], d[2 * i + 1]) : d[i];
    }
    const float *f = p;
    return cplx ? CMPLX(f[2 * i], f[2 * i + 1]) : f[i];
}

static kiln_dtype dt(int dbl, int cplx) {
    return cplx ? (dbl ? KILN_COMPLEX128 : KILN_COMPLEX64) : (dbl ? KILN_FLOAT64 : KILN_FLOAT32);
}

/* Compares got (n elements of dtype) with ref; tolerance relative to the
 * input's energy. */
static size_t compare(int dbl, int cplx, const void *got, const double complex *ref, size_t n,
                      double energy) {
    double tol = (dbl ? 1e-11 : 2e-5) * (1 + sqrt(energy));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !(cabs(get(dbl, cplx, got, i) - ref[i]) <= tol);
    return bad;
}

static int any_bad_radix(unsigned nd, const size_t *sh, unsigned axes) {
    for (unsigned d = nd - axes; d < nd; d++)
        if (!radix_ok(sh[d]))
            return 1;
    return 0;
}

/* c2c: every norm and both directions; strided (step 2) input when
 * strided; in place when inplace. */
static void check_c2c(kiln_queue *q, int dbl, unsigned nd, const size_t *sh, unsigned axes,
                      int inverse, kiln_fft_norm norm, int strided, int inplace) {
    kiln_context *c = kiln_queue_context(q);
    size_t total = 1, tn = 1;
    for (unsigned d = 0; d < nd; d++)
        total *= sh[d];
    for (unsigned d = nd - axes; d < nd; d++)
        tn *= sh[d];
    double complex *x = malloc((total + 1) * sizeof *x);
    double energy = 0;
    for (size_t i = 0; i < total; i++) {
        x[i] = CMPLX(kt_rand_unit() * 2 - 1, kt_rand_unit() * 2 - 1);
        energy += creal(x[i] * conj(x[i]));
    }
    kiln_dtype d = dt(dbl, 1);
    size_t es = kiln_dtype_size(d);
    char *h = malloc(2 * total * es + es), *g = malloc(total * es + es);
    kiln_array *in = NULL, *out = NULL, *full = NULL;
    if (strided) { /* every other element of the last dim */
        size_t fsh[3];
        memcpy(fsh, sh, nd * sizeof *sh);
        fsh[nd - 1] *= 2;
        for (size_t i = 0; i < total; i++)
            put(dbl, 1, h, 2 * i, x[i]);
        CHECK_OK(kiln_array_from_host(c, d, nd, fsh, h, &full));
        kiln_slice s[3] = { KILN_SLICE_ALL, KILN_SLICE_ALL, KILN_SLICE_ALL };
        s[nd - 1] = KILN_SLICE(0, PTRDIFF_MAX, 2);
        CHECK_OK(kiln_array_view(full, s, &in));
    } else {
        for (size_t i = 0; i < total; i++)
            put(dbl, 1, h, i, x[i]);
        CHECK_OK(kiln_array_from_host(c, d, nd, sh, h, &in));
    }
    if (inplace)
        CHECK_OK(kiln_array_retain(in) == KILN_OK && (out = in) ? KILN_OK : KILN_OK);
    else
        CHECK_OK(kiln_array_empty(c, d, nd, sh, &out));
    kiln_status st = kiln_fft_c2c_out(q, out, in, axes, inverse, norm, 0, NULL, NULL);
    if (clfft && any_bad_radix(nd, sh, axes)) {
        CHECK_MSG(st == KILN_ERROR_UNSUPPORTED, "clFFT with a prime length");
    } else {
        CHECK_MSG(st == KILN_OK, "fft: %s", kiln_last_error_message());
        CHECK_OK(kiln_array_read(q, out, g));
        dft(x, nd, sh, axes, inverse, norm_scale(norm, inverse, tn));
        size_t bad = compare(dbl, 1, g, x, total, energy);
        CHECK_MSG(bad == 0,
                  "c2c %s nd %u (%zu,%zu,%zu) axes %u inv %d norm %d strided "
                  "%d inplace %d: %zu wrong",
                  dbl ? "double" : "float", nd, sh[0], nd > 1 ? sh[1] : 0, nd > 2 ? sh[2] : 0, axes,
                  inverse, (int)norm, strided, inplace, bad);
    }
    KT_FREE(x, h, g);
    KT_RELEASE(in, out, full);
}

/* r2c of a random real array, then c2r of the result back. */
static void check_real(kiln_queue *q, int dbl, unsigned nd, const size_t *sh, unsigned axes,
                       kiln_fft_norm norm) {
    kiln_context *c = kiln_queue_context(q);
    size_t total = 1, tn = 1, hsh[3];
    memcpy(hsh, sh, nd * sizeof *sh);
    hsh[nd - 1] = sh[nd - 1] / 2 + 1;
    size_t htotal = 1;
    for (unsigned d = 0; d < nd; d++) {
        total *= sh[d];
        htotal *= hsh[d];
    }
    for (unsigned d = nd - axes; d < nd; d++)
        tn *= sh[d];
    double complex *x = malloc((total + 1) * sizeof *x), *ref = malloc((total + 1) * sizeof *ref);
    double energy = 0;
    for (size_t i = 0; i < total; i++) {
        x[i] = kt_rand_unit() * 2 - 1;
        energy += creal(x[i]) * creal(x[i]);
    }
    kiln_dtype rd = dt(dbl, 0), cd = dt(dbl, 1);
    char *h = malloc(total * 8 + 8), *g = malloc(htotal * 16 + 16), *back = malloc(total * 8 + 8);
    for (size_t i = 0; i < total; i++)
        put(dbl, 0, h, i, x[i]);
    kiln_array *r = NULL, *cx = NULL, *r2 = NULL;
    CHECK_OK(kiln_array_from_host(c, rd, nd, sh, h, &r));
    CHECK_OK(kiln_array_empty(c, cd, nd, hsh, &cx));
    CHECK_OK(kiln_array_empty(c, rd, nd, sh, &r2));
    kiln_status st = kiln_fft_r2c_out(q, cx, r, axes, norm, 0, NULL, NULL);
    if (clfft && any_bad_radix(nd, sh, axes)) {
        CHECK_MSG(st == KILN_ERROR_UNSUPPORTED, "clFFT with a prime length");
        goto done;
    }
    CHECK_MSG(st == KILN_OK, "rfft: %s", kiln_last_error_message());
    CHECK_OK(kiln_array_read(q, cx, g));
    memcpy(ref, x, total * sizeof *x);
    dft(ref, nd, sh, axes, 0, norm_scale(norm, 0, tn));
    /* the reference's first n/2+1 of the last dim */
    size_t bad = 0, last = sh[nd - 1], hl = hsh[nd - 1];
    double tol = (dbl ? 1e-11 : 2e-5) * (1 + sqrt(energy));
    for (size_t i = 0; i < htotal; i++) {
        size_t row = i / hl, k = i % hl;
        bad += !(cabs(get(dbl, 1, g, i) - ref[row * last + k]) <= tol);
    }
    CHECK_MSG(bad == 0, "r2c %s nd %u last %zu axes %u norm %d: %zu wrong",
              dbl ? "double" : "float", nd, last, axes, (int)norm, bad);
    /* c2r back: the original (in is kept) */
    CHECK_OK(kiln_fft_c2r_out(q, r2, cx, axes, norm, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, r2, back));
    bad = compare(dbl, 0, back, x, total, energy);
    char *g2 = malloc(htotal * 16 + 16);
    CHECK_OK(kiln_array_read(q, cx, g2));
    bad += memcmp(g, g2, htotal * kiln_dtype_size(cd)) != 0;
    free(g2);
    CHECK_MSG(bad == 0, "c2r %s nd %u last %zu axes %u norm %d: %zu wrong",
              dbl ? "double" : "float", nd, last, axes, (int)norm, bad);
done:
    KT_FREE(x, ref, h, g, back);
    KT_RELEASE(r, cx, r2);
}

static void check_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t s8 = 8, s5 = 5, s9 = 9;
    kiln_array *a = NULL, *b = NULL, *f = NULL, *h5 = NULL, *f9 = NULL, *d = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_COMPLEX64, 1, &s8, &a));
    CHECK_OK(kiln_array_empty(c, KILN_COMPLEX64, 1, &s5, &b));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &s8, &f));
    CHECK_OK(kiln_array_empty(c, KILN_COMPLEX64, 1, &s5, &h5));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &s9, &f9));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &s8, &d));
    CHECK_STATUS(kiln_fft_c2c_out(q, b, a, 1, 0, 0, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_fft_c2c_out(q, f, a, 1, 0, 0, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_fft_c2c_out(q, d, d, 1, 0, 0, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_fft_c2c_out(q, a, a, 0, 0, 0, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_fft_c2c_out(q, a, a, 2, 0, 0, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_fft_c2c_out(q, a, a, 1, 0, (kiln_fft_norm)7, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_fft_c2c_out(q, a, NULL, 1, 0, 0, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_fft_r2c_out(q, a, f, 1, 0, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_OK(kiln_fft_r2c_out(q, h5, f, 1, 0, 0, NULL, NULL));
    CHECK_OK(kiln_fft_c2r_out(q, f9, h5, 1, 0, 0, NULL, NULL) == KILN_OK || (clfft && !radix_ok(9))
                 ? KILN_OK
                 : KILN_ERROR_INTERNAL); /* n = 9 also fits 5 = 9/2 + 1 */
    CHECK_STATUS(kiln_fft_c2r_out(q, a, h5, 1, 0, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK(kiln_fft_library(q) != NULL && kiln_fft_library(NULL) == NULL);
    /* a transformed axis of length 0: NumPy raises (invalid number of FFT
     * data points); kiln said KILN_OK (issue 41). An empty batch is fine. */
    {
        size_t s0 = 0, s1 = 1, s30[2] = { 3, 0 }, s08[2] = { 0, 8 }, s31[2] = { 3, 1 };
        kiln_array *z = NULL, *zr = NULL, *h1 = NULL, *z2 = NULL, *zr2 = NULL, *hb = NULL,
                   *e2 = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_COMPLEX64, 1, &s0, &z));
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &s0, &zr));
        CHECK_OK(kiln_array_empty(c, KILN_COMPLEX64, 1, &s1, &h1));
        CHECK_OK(kiln_array_empty(c, KILN_COMPLEX64, 2, s30, &z2));
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 2, s30, &zr2));
        CHECK_OK(kiln_array_empty(c, KILN_COMPLEX64, 2, s31, &hb));
        CHECK_OK(kiln_array_empty(c, KILN_COMPLEX64, 2, s08, &e2));
        for (int inv = 0; inv < 2; inv++) {
            CHECK_STATUS(kiln_fft_c2c_out(q, z, z, 1, inv, 0, 0, NULL, NULL),
                         KILN_ERROR_INVALID_ARGUMENT);
            CHECK(strstr(kiln_last_error_message(), "kiln_fft_c2c_out") != NULL &&
                  strstr(kiln_last_error_message(), "length 0") != NULL);
        }
        CHECK_STATUS(kiln_fft_c2c_out(q, z2, z2, 1, 0, 0, 0, NULL, NULL),
                     KILN_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(kiln_fft_c2c_out(q, z2, z2, 2, 0, 0, 0, NULL, NULL),
                     KILN_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(kiln_fft_r2c_out(q, h1, zr, 1, 0, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(kiln_last_error_message(), "kiln_fft_r2c_out") != NULL);
        CHECK_STATUS(kiln_fft_r2c_out(q, hb, zr2, 1, 0, 0, NULL, NULL),
                     KILN_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(kiln_fft_c2r_out(q, zr, h1, 1, 0, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
        kiln_event *ev = NULL;
        CHECK_OK(kiln_fft_c2c_out(q, e2, e2, 1, 0, 0, 0, NULL, &ev)); /* 0 transforms of 8 */
        CHECK(ev != NULL);
        if (ev)
            CHECK_OK(kiln_event_wait(ev));
        kiln_event_release(ev);
        kiln_array *zl[] = { z, zr, h1, z2, zr2, hb, e2 };
        for (size_t k = 0; k < 7; k++)
            kiln_array_release(zl[k]);
    }
    kiln_array *list[] = { a, b, f, h5, f9, d };
    for (size_t k = 0; k < 6; k++)
        kiln_array_release(list[k]);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_device_info info = { 0 };
    kiln_device_get_info(kiln_queue_device(q), &info);
    const char *lib = kiln_fft_library(q);
    printf("  FFT library: %s\n", lib ? lib : "(none)");
    clfft = lib && strcmp(lib, "clFFT") == 0;
    {
        size_t one = 1;
        kiln_array *t = NULL;
        kiln_array_zeros(q, KILN_COMPLEX64, 1, &one, 0, NULL, NULL, &t);
        kiln_status st = kiln_fft_c2c_out(q, t, t, 1, 0, 0, 0, NULL, NULL);
        kiln_array_release(t);
        /* no library here, or the one KILN_FFT names does not serve this
         * device (KILN_BLAS=clblast on cuda:0): nothing to test */
        if (st == KILN_ERROR_NO_RUNTIME || (st == KILN_ERROR_UNSUPPORTED && getenv("KILN_FFT")))
            KT_SKIP("%s", kiln_last_error_message());
    }
    static const size_t n1[] = { 1, 2, 3, 7, 16, 17, 60, 100, 127, 1000, 1024, 4099 };
    /* clFFT on PoCL compiles a program per plan (seconds each): fewer
     * lengths there, still 1, a prime, non-powers of two */
    static const size_t n1_clfft[] = { 1, 12, 17, 1000 };
    const size_t *lens = clfft ? n1_clfft : n1;
    size_t nlens = clfft ? 4 : sizeof n1 / sizeof n1[0];
    for (int dbl = 0; dbl < 2; dbl++) {
        if (dbl && !info.fp64)
            continue;
        /* clFFT in double: one length and 2-D shape (its own scaling) */
        size_t first = clfft && dbl ? 1 : 0, last = clfft && dbl ? 2 : nlens;
        for (size_t k = first; k < last; k++) {
            size_t n = lens[k];
            for (int inv = 0; inv < 2; inv++)
                check_c2c(q, dbl, 1, &n, 1, inv, KILN_FFT_NORM_BACKWARD, 0, 0);
            size_t b1[2] = { 1, n }, b5[2] = { 5, n };
            if (n <= 1024) {
                check_c2c(q, dbl, 2, b1, 1, 0, KILN_FFT_NORM_ORTHO, 0, 0);
                check_c2c(q, dbl, 2, b5, 1, 1, KILN_FFT_NORM_FORWARD, k % 2, !(k % 2));
            }
            check_real(q, dbl, 1, &n, 1, (kiln_fft_norm)(k % 3));
            if (n <= 1024)
                check_real(q, dbl, 2, b5, 1, KILN_FFT_NORM_BACKWARD);
        }
        /* 2-D and 3-D, batched 2-D, all norms */
        static const size_t s2[][2] = { { 6, 10 }, { 7, 5 }, { 1, 8 }, { 16, 3 } };
        static const size_t s3[][3] = { { 3, 4, 5 }, { 2, 3, 7 }, { 4, 1, 6 }, { 8, 8, 8 } };
        for (int k = 0; k < (clfft ? 2 - dbl : 4); k++) {
            for (int norm = 0; norm < 3; norm++)
                check_c2c(q, dbl, 2, s2[k], 2, norm % 2, (kiln_fft_norm)norm, norm == 1, norm == 2);
            check_c2c(q, dbl, 3, s3[k], 3, k % 2, (kiln_fft_norm)(k % 3), 0, 0);
            check_c2c(q, dbl, 3, s3[k], 2, 1, KILN_FFT_NORM_BACKWARD, 1, 0);
            check_real(q, dbl, 2, s2[k], 2, (kiln_fft_norm)(k % 3));
            check_real(q, dbl, 3, s3[k], 3, KILN_FFT_NORM_ORTHO);
            check_real(q, dbl, 3, s3[k], 2, KILN_FFT_NORM_FORWARD);
        }
    }
    /* an out-of-order queue: copies, transform, scaling, copy back */
    kiln_queue *oq = NULL;
    if (kiln_queue_create(kiln_queue_context(q), kiln_queue_device(q), KILN_QUEUE_OUT_OF_ORDER,
                          &oq) == KILN_OK) {
        size_t s2[2] = { 3, 12 };
        check_c2c(oq, 0, 2, s2, 1, 1, KILN_FFT_NORM_BACKWARD, 1, 0);
        check_real(oq, 0, 2, s2, 2, KILN_FFT_NORM_ORTHO);
        kiln_queue_release(oq);
    }
    check_errors(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
