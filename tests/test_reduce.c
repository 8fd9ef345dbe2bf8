/* Reductions: built-ins (sum, prod, min, max, norms, argmin/argmax, dot)
 * for every dtype at awkward sizes against serial references, a custom
 * reduction with a preamble, strided views, device and host results, build
 * errors and mismatches. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int is_signed(kiln_dtype d) {
    return d == KILN_INT8 || d == KILN_INT16 || d == KILN_INT32 ||
           d == KILN_INT64 || d == KILN_FLOAT32 || d == KILN_FLOAT64;
}

/* Values small enough that sums cannot overflow the dtype for the sizes
 * used (int8/uint8 sums use tiny sizes, see below), integer-valued so float
 * sums are exact below 2^24. */
static double rnd(kiln_dtype d) {
    double v = (double)(kt_rand_u64() % 7);
    if (is_signed(d) && (kt_rand_u64() & 1))
        v = -v;
    return v;
}

static void check_dtype(kiln_queue *q, kiln_dtype d, size_t n) {
    kiln_context *c = kiln_queue_context(q);
    size_t es = kiln_dtype_size(d);
    char *x = malloc(n * es + 8), *y = malloc(n * es + 8);
    for (size_t i = 0; i < n; i++) {
        kt_set(d, x, i, rnd(d));
        kt_set(d, y, i, rnd(d));
    }
    kiln_array *X = NULL, *Y = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, x, &X));
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, y, &Y));
    double sum = 0, mn = HUGE_VAL, mx = -HUGE_VAL, n1 = 0, n2 = 0, ninf = 0,
           dot = 0;
    long amin = -1, amax = -1;
    for (size_t i = 0; i < n; i++) {
        double v = kt_get(d, x, i);
        sum += v;
        dot += v * kt_get(d, y, i);
        n1 += fabs(v);
        n2 += v * v;
        if (fabs(v) > ninf)
            ninf = fabs(v);
        if (v < mn) {
            mn = v;
            amin = (long)i;
        }
        if (v > mx) {
            mx = v;
            amax = (long)i;
        }
    }
    const char *t = kiln_dtype_name(d);
    union {
        int64_t i64;
        double f64;
        char bytes[16];
    } r;
    kiln_event *e = NULL;
#define RUN(op, want)                                                          \
    do {                                                                       \
        memset(&r, 0, sizeof r);                                               \
        if (CHECK_OK(                                                          \
                kiln_array_reduce_async(q, op, X, NULL, &r, 0, NULL, &e))) {   \
            CHECK_OK(kiln_event_wait(e));                                      \
            kiln_event_release(e);                                             \
            kiln_dtype rd = kiln_reduce_result_dtype(op, d);                   \
            double got = kt_get(rd, &r, 0);                                    \
            double w = (want);                                                 \
            CHECK_MSG(got == w ||                                              \
                          fabs(got - w) <=                                     \
                              1e-12 * fabs(w) +                                \
                                  (rd == KILN_FLOAT32 ? 1e-5 * fabs(w) : 0),   \
                      "%s %s n=%zu: got %.17g want %.17g", #op, t, n, got, w); \
        }                                                                      \
    } while (0)
    /* sums of int8/uint8 wrap like the device does */
    double wsum = sum;
    if (d == KILN_INT8)
        wsum = (double)(int8_t)(int64_t)sum;
    if (d == KILN_UINT8)
        wsum = (double)(uint8_t)(int64_t)sum;
    if (d == KILN_UINT16)
        wsum = (double)(uint16_t)(int64_t)sum;
    if (d == KILN_INT16)
        wsum = (double)(int16_t)(int64_t)sum;
    /* Every program costs a compile (~1 s on PoCL), so every dtype runs
     * sum, max and argmin, and int32/float32/float64 run everything. */
    int full = d == KILN_INT32 || d == KILN_FLOAT32 || d == KILN_FLOAT64;
    RUN(KILN_REDUCE_SUM, wsum);
    if (n)
        RUN(KILN_REDUCE_MAX, mx);
    RUN(KILN_REDUCE_ARGMIN, (double)amin);
    /* the blocking forms give the same */
    int64_t bam = -2;
    CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_ARGMIN, X, &bam));
    CHECK_MSG(bam == amin, "blocking argmin %s n=%zu: %lld vs %ld", t, n,
              (long long)bam, amin);
    if (d == KILN_INT32) {
        int32_t bdot = -1;
        CHECK_OK(kiln_array_dot(q, X, Y, &bdot));
        CHECK_MSG(bdot == (int32_t)(int64_t)dot, "blocking dot n=%zu: %d", n,
                  (int)bdot);
    }
    if (full) {
        if (n)
            RUN(KILN_REDUCE_MIN, mn);
        RUN(KILN_REDUCE_NORM1, n1);
        RUN(KILN_REDUCE_NORM2, sqrt(n2));
        RUN(KILN_REDUCE_NORM_INF, ninf);
        RUN(KILN_REDUCE_ARGMAX, (double)amax);
    }
#undef RUN
    /* dot into a device array, then read it */
    if (full || d == KILN_UINT64) {
        size_t one = 1;
        kiln_array *R = NULL;
        CHECK_OK(kiln_array_empty(c, d, 1, &one, &R));
        CHECK_OK(kiln_array_dot_async(q, X, Y, R, NULL, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, R, &r));
        double got = kt_get(d, &r, 0);
        double w = dot;
        if (d == KILN_UINT32)
            w = (double)(uint32_t)(int64_t)dot;
        if (d == KILN_UINT64)
            w = (double)(uint64_t)(int64_t)dot;
        CHECK_MSG(got == w, "dot %s n=%zu: got %.17g want %.17g", t, n, got, w);
        kiln_array_release(R);
    }
    kiln_array_release(X);
    kiln_array_release(Y);
    free(x);
    free(y);
}

static void t_builtins(kiln_queue *q) {
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    size_t sizes[64];
    for (size_t di = 0; di < KT_NDTYPES; di++) {
        kiln_dtype d = kt_dtypes[di];
        if (d == KILN_FLOAT64 && !info.fp64)
            continue;
        /* Each dtype at a few awkward sizes; float32 and int32 at all. */
        size_t ns = kt_awkward_sizes(sizes, (1u << 20) + 1);
        for (size_t si = 0; si < ns; si++) {
            if (d != KILN_FLOAT32 && d != KILN_INT32 && si % 4 != 1 &&
                sizes[si] != 0)
                continue;
            check_dtype(q, d, sizes[si]);
        }
    }
    /* prod of ±1 and 2s stays exact */
    size_t n = 1025;
    double *x = malloc(n * sizeof *x);
    double want = 1;
    for (size_t i = 0; i < n; i++) {
        x[i] = (i % 100 == 0) ? 2.0 : ((kt_rand_u64() & 1) ? 1.0 : -1.0);
        want *= x[i];
    }
    kiln_array *X = NULL;
    CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_FLOAT64, 1, &n,
                                  x, &X));
    double got = 0;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_PROD, X, NULL, &got, 0,
                                     NULL, &e));
    CHECK_OK(kiln_event_wait(e));
    CHECK_MSG(got == want, "prod: %g vs %g", got, want);
    kiln_event_release(e);
    kiln_array_release(X);
    free(x);
}

/* Float sums of random values against a double reference, with a bound of
 * n*eps relative to sum|x| (worst case of any summation order). */
static void t_float_sum_tolerance(kiln_queue *q) {
    size_t n = (1u << 20) + 3;
    float *x = malloc(n * sizeof *x);
    double ref = 0, abs = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(kt_rand_unit() * 2 - 0.5);
        ref += x[i];
        abs += fabs(x[i]);
    }
    kiln_array *X = NULL;
    CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_FLOAT32, 1, &n,
                                  x, &X));
    float got = 0;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_SUM, X, NULL, &got, 0, NULL,
                                     &e));
    CHECK_OK(kiln_event_wait(e));
    double tol = (double)n * 1.2e-7 * abs;
    CHECK_MSG(fabs(got - ref) <= tol, "float sum %.9g vs %.9g (tol %g)", got,
              ref, tol);
    kiln_event_release(e);
    kiln_array_release(X);
    free(x);
}

static void t_custom_and_strided(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    /* Sum of squared differences over strided 2-D views. */
    size_t s[2] = {64, 33};
    int A[64 * 33];
    for (size_t i = 0; i < 64 * 33; i++)
        A[i] = (int)(kt_rand_u64() % 100) - 50;
    kiln_array *a = NULL, *x = NULL, *y = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 2, s, A, &a));
    kiln_slice sx[2] = {KILN_SLICE(0, 64, 2), KILN_SLICE_ALL};
    kiln_slice sy[2] = {KILN_SLICE(63, PTRDIFF_MIN, -2), KILN_SLICE_REVERSED};
    CHECK_OK(kiln_array_view(a, sx, &x));
    CHECK_OK(kiln_array_view(a, sy, &y));
    kiln_reduction_desc d = KILN_REDUCTION_DESC(
        "const int *x, const int *y", "long", 0, "0", "a + b",
        "sq((long)x[i] - (long)y[i])",
        "KILN_FUNC long sq(long v) { return v * v; }", "ssd");
    kiln_reduction *r = NULL;
    CHECK_OK(kiln_reduction_create(c, &d, &r));
    kiln_arg v[2] = {KILN_ARG_ARRAY(x), KILN_ARG_ARRAY(y)};
    int64_t got = 0;
    kiln_event *e = NULL;
    CHECK_OK(kiln_reduction_launch(q, r, kiln_array_size(x), 2, v, NULL, &got,
                                   0, NULL, &e));
    CHECK_OK(kiln_event_wait(e));
    kiln_event_release(e);
    int64_t want = 0;
    for (size_t i = 0; i < 32; i++)
        for (size_t k = 0; k < 33; k++) {
            int64_t dlt = (int64_t)A[(2 * i) * 33 + k] -
                          (int64_t)A[(63 - 2 * i) * 33 + (32 - k)];
            want += dlt * dlt;
        }
    CHECK_MSG(got == want, "strided ssd %lld vs %lld", (long long)got,
              (long long)want);
    /* argmax over a strided view gives the view's C-order index */
    int64_t am = -2;
    CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_ARGMAX, y, NULL, &am, 0,
                                     NULL, &e));
    CHECK_OK(kiln_event_wait(e));
    kiln_event_release(e);
    int best = -1000;
    int64_t bi = -1;
    for (size_t i = 0; i < 32; i++)
        for (size_t k = 0; k < 33; k++) {
            int val = A[(63 - 2 * i) * 33 + (32 - k)];
            if (val > best) {
                best = val;
                bi = (int64_t)(i * 33 + k);
            }
        }
    CHECK_MSG(am == bi, "strided argmax %lld vs %lld", (long long)am,
              (long long)bi);

    /* errors */
    size_t one = 1;
    kiln_array *rf = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &one, &rf));
    CHECK_STATUS(kiln_reduction_launch(q, r, kiln_array_size(x), 2, v, rf, NULL,
                                       0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_reduction_launch(q, r, kiln_array_size(x), 2, v, NULL,
                                       NULL, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    kiln_arg v1[2] = {KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(y)};
    CHECK_STATUS(kiln_reduction_launch(q, r, kiln_array_size(x), 2, v1, NULL,
                                       &got, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    /* n = 11 < the arrays' 1056 elements: a mismatch, not a partial read */
    CHECK_STATUS(
        kiln_reduction_launch(q, r, 11, 2, v, NULL, &got, 0, NULL, NULL),
        KILN_ERROR_MISMATCH);
    /* the blocking form */
    got = -1;
    CHECK_OK(kiln_reduction_run(q, r, kiln_array_size(x), 2, v, &got));
    CHECK_MSG(got == want, "reduction_run %lld vs %lld", (long long)got,
              (long long)want);
    CHECK_STATUS(kiln_reduction_run(q, r, kiln_array_size(x), 2, v, NULL),
                 KILN_ERROR_NULL_HANDLE);
    /* n = 0 over empty arrays: the neutral element */
    {
        size_t zero = 0;
        kiln_array *e0 = NULL, *e1 = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &zero, &e0));
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &zero, &e1));
        kiln_arg ve[2] = {KILN_ARG_ARRAY(e0), KILN_ARG_ARRAY(e1)};
        got = -1;
        CHECK_OK(kiln_reduction_run(q, r, 0, 2, ve, &got));
        CHECK_MSG(got == 0, "empty reduction: %lld", (long long)got);
        kiln_array_release(e0);
        kiln_array_release(e1);
    }
    CHECK_OK(kiln_reduction_retain(r));
    kiln_reduction_release(r);
    kiln_reduction_release(r);
    kiln_reduction_release(NULL);
    CHECK_STATUS(kiln_reduction_retain(NULL), KILN_ERROR_NULL_HANDLE);
    kiln_reduction_desc raw = d;
    raw.struct_size = sizeof raw / 2;
    CHECK_STATUS(kiln_reduction_create(c, &raw, &r),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(r == NULL);
    char longname[201];
    memset(longname, 'r', 200);
    longname[200] = 0;
    raw = d;
    raw.name = longname;
    CHECK_STATUS(kiln_reduction_create(c, &raw, &r),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* an unknown op: the same status as for the elementwise operators */
    CHECK_STATUS(kiln_array_reduce(q, (kiln_reduce_op)99, a, &got),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_reduce_async(q, (kiln_reduce_op)0, a, NULL, &got, 0,
                                         NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_reduce(q, KILN_REDUCE_SUM, a, NULL),
                 KILN_ERROR_NULL_HANDLE);
    kiln_reduction_desc bad = d;
    bad.reduce = "a + + b;";
    bad.name = "badred";
    r = (kiln_reduction *)1;
    CHECK_STATUS(kiln_reduction_create(c, &bad, &r), KILN_ERROR_BUILD);
    CHECK(r == NULL);
    CHECK_MSG(strstr(kiln_last_error_message(), "a + + b;") != NULL, "%s",
              kiln_last_error_message());
    CHECK_MSG(strstr(kiln_last_build_log(), "reduce") != NULL, "%s",
              kiln_last_build_log());
    /* the user's line under its label, mapped back on every compiler */
    CHECK_MSG(strstr(kiln_last_build_log(), "reduce:1: a + + b;") != NULL, "%s",
              kiln_last_build_log());
    CHECK_STATUS(kiln_array_dot_async(q, a, rf, NULL, &got, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_reduce_async(q, KILN_REDUCE_SUM, NULL, NULL, &got,
                                         0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    kiln_array_release(rf);
    kiln_array_release(a);
    kiln_array_release(x);
    kiln_array_release(y);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    t_builtins(q);
    t_float_sum_tolerance(q);
    t_custom_and_strided(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
