/* Statistics of kiln_rng's fills at fixed seeds (so they cannot flake:
 * the numbers are the same on every run and device), with thresholds of
 * about 5 standard deviations or p < 1e-3: mean and variance, a chi-square
 * test of uniform and integer bins, a Kolmogorov-Smirnov test of normals,
 * and no correlation between adjacent substreams (of kiln_rng, and of the
 * per-item helper kiln_rand_uniform(seed, index) inside an expression). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define N ((size_t)1 << 20)

static kiln_rng *rng(kiln_rng_algorithm alg, uint64_t seed, uint64_t sub) {
    kiln_rng *r = NULL;
    kiln_rng_desc d = KILN_RNG_DESC(.algorithm = alg, .seed = seed, .substream = sub);
    CHECK_OK(kiln_rng_create(&d, &r));
    return r;
}

static int fill_f32(kiln_queue *q, kiln_rng *r, int normal, float *out, size_t n) {
    kiln_array *a = NULL;
    int ok = CHECK_OK(kiln_array_empty(kiln_queue_context(q), KILN_FLOAT32, 1, &n, &a)) &&
             CHECK_OK(normal ? kiln_rng_normal(q, r, a, 0.0, 1.0, 0, NULL, NULL)
                             : kiln_rng_uniform(q, r, a, 0, NULL, NULL)) &&
             CHECK_OK(kiln_array_read(q, a, out));
    kiln_array_release(a);
    return ok;
}

static void mean_var(const float *x, size_t n, double *mean, double *var) {
    double s = 0, s2 = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++)
        s2 += (x[i] - *mean) * (x[i] - *mean);
    *var = s2 / (double)(n - 1);
}

/* chi-square of counts against equal expectation; df = bins - 1. Passes
 * when within 5 standard deviations (sqrt(2 df)) of df. */
static void chi_square(const size_t *count, size_t bins, size_t n, const char *what) {
    double e = (double)n / (double)bins, chi = 0;
    for (size_t b = 0; b < bins; b++)
        chi += (count[b] - e) * (count[b] - e) / e;
    double df = (double)bins - 1, lim = 5 * sqrt(2 * df);
    printf("%s: chi-square %.1f (df %.0f)\n", what, chi, df);
    CHECK_MSG(fabs(chi - df) < lim, "%s: chi-square %.1f, df %.0f", what, chi, df);
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void uniform_stats(kiln_queue *q, kiln_rng_algorithm alg, float *x) {
    kiln_rng *r = rng(alg, 20261124, 0);
    if (fill_f32(q, r, 0, x, N)) {
        double m, v;
        mean_var(x, N, &m, &v);
        printf("uniform alg %d: mean %.6f var %.6f\n", alg, m, v);
        CHECK_MSG(fabs(m - 0.5) < 5 * sqrt(1.0 / 12 / N), "alg %d mean %f", alg, m);
        /* var of the sample variance of U(0,1): (1/80 - 1/144) / n */
        CHECK_MSG(fabs(v - 1.0 / 12) < 5 * sqrt((1.0 / 80 - 1.0 / 144) / N), "alg %d var %f", alg,
                  v);
        size_t count[1024] = { 0 };
        for (size_t i = 0; i < N; i++)
            count[(size_t)(x[i] * 1024)]++;
        chi_square(count, 1024, N,
                   alg == 0   ? "uniform philox"
                   : alg == 1 ? "uniform threefry4x32"
                              : "uniform threefry2x64");
    }
    kiln_rng_release(r);
}

static void normal_stats(kiln_queue *q, float *x) {
    kiln_rng *r = rng(KILN_RNG_PHILOX4X32_10, 99, 3);
    if (fill_f32(q, r, 1, x, N)) {
        double m, v;
        mean_var(x, N, &m, &v);
        printf("normal: mean %.6f var %.6f\n", m, v);
        CHECK_MSG(fabs(m) < 5 / sqrt((double)N), "normal mean %f", m);
        CHECK_MSG(fabs(v - 1) < 5 * sqrt(2.0 / N), "normal var %f", v);
        qsort(x, N, sizeof *x, cmp_float);
        double d = 0;
        for (size_t i = 0; i < N; i++) {
            double cdf = 0.5 * erfc(-x[i] / sqrt(2.0));
            double lo = cdf - (double)i / N, hi = (double)(i + 1) / N - cdf;
            d = fmax(d, fmax(lo, hi));
        }
        /* Kolmogorov: P(sqrt(n) D > 1.95) ~ 0.001 */
        printf("normal: KS sqrt(n) D = %.4f\n", d * sqrt((double)N));
        CHECK_MSG(d * sqrt((double)N) < 1.95, "normal KS %f", d * sqrt((double)N));
    }
    kiln_rng_release(r);
}

static void integer_stats(kiln_queue *q) {
    size_t n = N;
    kiln_array *a = NULL;
    int32_t *h = malloc(n * 4);
    kiln_rng *r = rng(KILN_RNG_THREEFRY2X64_20, 5, 0);
    if (CHECK_OK(kiln_array_empty(kiln_queue_context(q), KILN_INT32, 1, &n, &a)) &&
        CHECK_OK(kiln_rng_integers(q, r, a, -3, 7, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, a, h))) {
        size_t count[10] = { 0 }, out = 0;
        for (size_t i = 0; i < n; i++) {
            if (h[i] < -3 || h[i] >= 7)
                out++;
            else
                count[h[i] + 3]++;
        }
        CHECK(out == 0);
        chi_square(count, 10, n, "integers [-3, 7)");
    }
    KT_RELEASE(a, r);
    free(h);
}

static double correlation(const float *a, const float *b, size_t n) {
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++)
        ma += a[i], mb += b[i];
    ma /= (double)n, mb /= (double)n;
    for (size_t i = 0; i < n; i++) {
        sab += (a[i] - ma) * (b[i] - mb);
        saa += (a[i] - ma) * (a[i] - ma);
        sbb += (b[i] - mb) * (b[i] - mb);
    }
    return sab / sqrt(saa * sbb);
}

/* adjacent substreams s, s+1 of kiln_rng; and items i, i+1 of the per-item
 * helper (each index its own substream) */
static void substream_correlation(kiln_queue *q, float *x, float *y) {
    size_t n = N / 4;
    double lim = 5 / sqrt((double)n);
    for (int alg = 0; alg < 3; alg++)
        for (uint64_t s = 0; s < 3; s++) {
            kiln_rng *r0 = rng((kiln_rng_algorithm)alg, 7, s), *r1 = NULL;
            CHECK_OK(kiln_rng_substream_create(r0, s + 1, &r1));
            if (fill_f32(q, r0, 0, x, n) && fill_f32(q, r1, 0, y, n)) {
                double c = correlation(x, y, n);
                CHECK_MSG(fabs(c) < lim, "alg %d substreams %llu/%llu: correlation %f", alg,
                          (unsigned long long)s, (unsigned long long)s + 1, c);
            }
            kiln_rng_release(r0), kiln_rng_release(r1);
        }
    kiln_elementwise *ew = NULL;
    kiln_elementwise_desc d =
        KILN_ELEMENTWISE_DESC(.arguments = "ulong seed, float *y",
                              .operation = "y[i] = kiln_rand_uniform(seed, i)");
    kiln_array *a = NULL;
    size_t m = n + 1;
    if (CHECK_OK(kiln_elementwise_create(kiln_queue_context(q), &d, &ew)) &&
        CHECK_OK(kiln_array_empty(kiln_queue_context(q), KILN_FLOAT32, 1, &m, &a))) {
        kiln_arg args[2] = { KILN_ARG_U64(11), KILN_ARG_ARRAY(a) };
        CHECK_OK(kiln_elementwise_launch(q, ew, m, 2, args, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, a, x));
        double c = correlation(x, x + 1, n);
        printf("per-item helper: lag-1 correlation %f\n", c);
        CHECK_MSG(fabs(c) < lim, "kiln_rand_uniform items i, i+1: correlation %f", c);
    }
    KT_RELEASE(a, ew);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    float *x = malloc(N * 4), *y = malloc(N * 4);
    for (int alg = 0; alg < 3; alg++)
        uniform_stats(q, (kiln_rng_algorithm)alg, x);
    normal_stats(q, x);
    integer_stats(q);
    substream_correlation(q, x, y);
    free(x), free(y);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
