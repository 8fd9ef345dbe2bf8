/* Reductions: built-ins (sum, prod, min, max, norms, argmin/argmax, dot)
 * for every dtype at awkward sizes against serial references, a custom
 * reduction with a preamble, strided views, device and host results, build
 * errors and mismatches; the single-launch path of a one-group stage 1
 * against the two-launch path and serial references. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "testing/kiln_test_internal.h"

static int is_signed(kiln_dtype d) {
    return d == KILN_INT8 || d == KILN_INT16 || d == KILN_INT32 || d == KILN_INT64 ||
           d == KILN_FLOAT32 || d == KILN_FLOAT64;
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
    double sum = 0, mn = HUGE_VAL, mx = -HUGE_VAL, n1 = 0, n2 = 0, ninf = 0, dot = 0;
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
#define RUN(op, want)                                                                              \
    do {                                                                                           \
        memset(&r, 0, sizeof r);                                                                   \
        if (CHECK_OK(kiln_array_reduce_async(q, op, X, NULL, &r, 0, NULL, &e))) {                  \
            CHECK_OK(kiln_event_wait(e));                                                          \
            kiln_event_release(e);                                                                 \
            kiln_dtype rd = kiln_dtype_reduce_result(op, d);                                       \
            double got = kt_get(rd, &r, 0);                                                        \
            double w = (want);                                                                     \
            CHECK_MSG(got == w || fabs(got - w) <=                                                 \
                                      1e-12 * fabs(w) + (rd == KILN_FLOAT32 ? 1e-5 * fabs(w) : 0), \
                      "%s %s n=%zu: got %.17g want %.17g", #op, t, n, got, w);                     \
        }                                                                                          \
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
    CHECK_MSG(bam == amin, "blocking argmin %s n=%zu: %lld vs %ld", t, n, (long long)bam, amin);
    if (d == KILN_INT32) {
        int32_t bdot = -1;
        CHECK_OK(kiln_array_dot(q, X, Y, &bdot));
        CHECK_MSG(bdot == (int32_t)(int64_t)dot, "blocking dot n=%zu: %d", n, (int)bdot);
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
    KT_RELEASE(X, Y);
    KT_FREE(x, y);
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
            if (d != KILN_FLOAT32 && d != KILN_INT32 && si % 4 != 1 && sizes[si] != 0)
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
    CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_FLOAT64, 1, &n, x, &X));
    double got = 0;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_PROD, X, NULL, &got, 0, NULL, &e));
    CHECK_OK(kiln_event_wait(e));
    CHECK_MSG(got == want, "prod: %g vs %g", got, want);
    KT_RELEASE(e, X);
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
    CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_FLOAT32, 1, &n, x, &X));
    float got = 0;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_SUM, X, NULL, &got, 0, NULL, &e));
    CHECK_OK(kiln_event_wait(e));
    double tol = (double)n * 1.2e-7 * abs;
    CHECK_MSG(fabs(got - ref) <= tol, "float sum %.9g vs %.9g (tol %g)", got, ref, tol);
    KT_RELEASE(e, X);
    free(x);
}

static void t_custom_and_strided(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    /* Sum of squared differences over strided 2-D views. */
    size_t s[2] = { 64, 33 };
    int A[64 * 33];
    for (size_t i = 0; i < 64 * 33; i++)
        A[i] = (int)(kt_rand_u64() % 100) - 50;
    kiln_array *a = NULL, *x = NULL, *y = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 2, s, A, &a));
    kiln_slice sx[2] = { KILN_SLICE(0, 64, 2), KILN_SLICE_ALL };
    kiln_slice sy[2] = { KILN_SLICE(63, PTRDIFF_MIN, -2), KILN_SLICE_REVERSED };
    CHECK_OK(kiln_array_view(a, sx, &x));
    CHECK_OK(kiln_array_view(a, sy, &y));
    kiln_reduction_desc d = KILN_REDUCTION_DESC(
        "const int *x, const int *y", "long", 0, "0", "a + b", "sq((long)x[i] - (long)y[i])",
        "KILN_FUNC long sq(long v) { return v * v; }", "ssd");
    kiln_reduction *r = NULL;
    CHECK_OK(kiln_reduction_create(c, &d, &r));
    kiln_arg v[2] = { KILN_ARG_ARRAY(x), KILN_ARG_ARRAY(y) };
    int64_t got = 0;
    kiln_event *e = NULL;
    CHECK_OK(kiln_reduction_run_async(q, r, kiln_array_size(x), 2, v, NULL, &got, 0, NULL, &e));
    CHECK_OK(kiln_event_wait(e));
    kiln_event_release(e);
    int64_t want = 0;
    for (size_t i = 0; i < 32; i++)
        for (size_t k = 0; k < 33; k++) {
            int64_t dlt = (int64_t)A[(2 * i) * 33 + k] - (int64_t)A[(63 - 2 * i) * 33 + (32 - k)];
            want += dlt * dlt;
        }
    CHECK_MSG(got == want, "strided ssd %lld vs %lld", (long long)got, (long long)want);
    /* argmax over a strided view gives the view's C-order index */
    int64_t am = -2;
    CHECK_OK(kiln_array_reduce_async(q, KILN_REDUCE_ARGMAX, y, NULL, &am, 0, NULL, &e));
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
    CHECK_MSG(am == bi, "strided argmax %lld vs %lld", (long long)am, (long long)bi);

    /* errors */
    size_t one = 1;
    kiln_array *rf = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &one, &rf));
    CHECK_STATUS(kiln_reduction_run_async(q, r, kiln_array_size(x), 2, v, rf, NULL, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(
        kiln_reduction_run_async(q, r, kiln_array_size(x), 2, v, NULL, NULL, 0, NULL, NULL),
        KILN_ERROR_NULL_HANDLE);
    kiln_arg v1[2] = { KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(y) };
    CHECK_STATUS(
        kiln_reduction_run_async(q, r, kiln_array_size(x), 2, v1, NULL, &got, 0, NULL, NULL),
        KILN_ERROR_MISMATCH);
    /* n = 11 < the arrays' 1056 elements: a mismatch, not a partial read */
    CHECK_STATUS(kiln_reduction_run_async(q, r, 11, 2, v, NULL, &got, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    /* the blocking form */
    got = -1;
    CHECK_OK(kiln_reduction_run(q, r, kiln_array_size(x), 2, v, &got));
    CHECK_MSG(got == want, "reduction_run %lld vs %lld", (long long)got, (long long)want);
    CHECK_STATUS(kiln_reduction_run(q, r, kiln_array_size(x), 2, v, NULL), KILN_ERROR_NULL_HANDLE);
    /* n = 0 over empty arrays: the neutral element */
    {
        size_t zero = 0;
        kiln_array *e0 = NULL, *e1 = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &zero, &e0));
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &zero, &e1));
        kiln_arg ve[2] = { KILN_ARG_ARRAY(e0), KILN_ARG_ARRAY(e1) };
        got = -1;
        CHECK_OK(kiln_reduction_run(q, r, 0, 2, ve, &got));
        CHECK_MSG(got == 0, "empty reduction: %lld", (long long)got);
        KT_RELEASE(e0, e1);
    }
    CHECK_OK(kiln_reduction_retain(r));
    KT_RELEASE(r, r);
    kiln_reduction_release(NULL);
    CHECK_STATUS(kiln_reduction_retain(NULL), KILN_ERROR_NULL_HANDLE);
    kiln_reduction_desc raw = d;
    raw.struct_size = sizeof raw / 2;
    CHECK_STATUS(kiln_reduction_create(c, &raw, &r), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(r == NULL);
    char longname[201];
    kt_long_name(longname, sizeof longname, 'r');
    raw = d;
    raw.name = longname;
    CHECK_STATUS(kiln_reduction_create(c, &raw, &r), KILN_ERROR_INVALID_ARGUMENT);
    /* an unknown op: the same status as for the elementwise operators */
    CHECK_STATUS(kiln_array_reduce(q, (kiln_reduce_op)99, a, &got), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_reduce_async(q, (kiln_reduce_op)0, a, NULL, &got, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_reduce(q, KILN_REDUCE_SUM, a, NULL), KILN_ERROR_NULL_HANDLE);
    kiln_reduction_desc bad = d;
    bad.reduce = "a + + b;";
    bad.name = "badred";
    r = (kiln_reduction *)1;
    CHECK_STATUS(kiln_reduction_create(c, &bad, &r), KILN_ERROR_BUILD);
    CHECK(r == NULL);
    CHECK_MSG(strstr(kiln_last_error_message(), "a + + b;") != NULL, "%s",
              kiln_last_error_message());
    CHECK_MSG(strstr(kiln_last_build_log(), "reduce") != NULL, "%s", kiln_last_build_log());
    /* the user's line under its label, mapped back on every compiler */
    CHECK_MSG(strstr(kiln_last_build_log(), "reduce:1: a + + b;") != NULL, "%s",
              kiln_last_build_log());
    CHECK_STATUS(kiln_array_dot_async(q, a, rf, NULL, &got, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_reduce_async(q, KILN_REDUCE_SUM, NULL, NULL, &got, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    KT_RELEASE(rf, a, x, y);
}

/* The largest n whose stage 1 has one work-group on q's device. */
static size_t single_max(kiln_queue *q) {
    kiln__plan plan;
    if (!CHECK_OK(kiln__plan_for(q, &plan)))
        return 1;
    int64_t chunk;
    size_t lo = 1, hi = (size_t)1 << 26; /* groups(lo) == 1 < groups(hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (kiln__reduction_groups(&plan, plan.local, mid, &chunk) == 1)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* One reduction r over args at n, four ways: single launch (the default)
 * and two launches, each read to the host and written into element 1 of a
 * three-element result array. All four must be the same bytes; the value
 * goes to *out (final_size bytes). */
static void four_ways(kiln_queue *q, kiln_reduction *r, kiln_dtype fd, size_t n, size_t na,
                      const kiln_arg *args, void *out, const char *what) {
    kiln_context *c = kiln_queue_context(q);
    size_t es = kiln_dtype_size(fd), three = 3;
    unsigned char got[4][16], arr[3 * 16], fill[3 * 16];
    memset(got, 0xA5, sizeof got);
    memset(fill, 0x5A, sizeof fill);
    kiln_array *R3 = NULL, *R = NULL;
    CHECK_OK(kiln_array_from_host(c, fd, 1, &three, fill, &R3));
    kiln_slice one = KILN_SLICE(1, 2, 1);
    CHECK_OK(kiln_array_view(R3, &one, &R));
    for (int two = 0; two < 2; two++) {
        kiln_event *e = NULL;
        if (CHECK_OK(
                kiln__reduction_launch_ex(q, r, n, na, args, NULL, got[2 * two], two, 0, NULL, &e)))
            CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
        e = NULL;
        if (CHECK_OK(kiln__reduction_launch_ex(q, r, n, na, args, R, NULL, two, 0, NULL, &e)))
            CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
        CHECK_OK(kiln_array_read(q, R3, arr));
        memcpy(got[2 * two + 1], arr + es, es);
        CHECK_MSG(memcmp(arr, fill, es) == 0 && memcmp(arr + 2 * es, fill + 2 * es, es) == 0,
                  "%s n=%zu two=%d: wrote outside its element", what, n, two);
    }
    for (int k = 1; k < 4; k++)
        CHECK_MSG(memcmp(got[0], got[k], es) == 0, "%s n=%zu: single/host differs from way %d",
                  what, n, k);
    memcpy(out, got[0], es);
    KT_RELEASE(R, R3);
}

static void t_single_group(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t m = single_max(q);
    size_t sizes[5] = { 1, 2, 7, m, m + 1 };
    for (size_t si = 0; si < 5; si++) {
        size_t n = sizes[si];
        float *xf = malloc(n * sizeof *xf);
        int32_t *xi = malloc(n * sizeof *xi);
        for (size_t i = 0; i < n; i++) {
            xi[i] = (int32_t)(kt_rand_u64() % 2001) - 1000;
            xf[i] = (float)(kt_rand_unit() * 2 - 1); /* not integers */
        }
        if (n > 3) /* ties: the first index wins */
            xi[n - 1] = xi[n / 2] = xi[1];
        kiln_array *XF = NULL, *XI = NULL;
        CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 1, &n, xf, &XF));
        CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, xi, &XI));
        /* serial references */
        int64_t isum = 0, iarg = 0;
        int32_t imin = xi[0], imax = xi[0];
        double fsq = 0;
        float fmn = xf[0], fmx = xf[0];
        for (size_t i = 0; i < n; i++) {
            isum += xi[i];
            if (xi[i] < imin) {
                imin = xi[i];
                iarg = (int64_t)i;
            }
            imax = xi[i] > imax ? xi[i] : imax;
            fmn = xf[i] < fmn ? xf[i] : fmn;
            fmx = xf[i] > fmx ? xf[i] : fmx;
            fsq += (double)xf[i] * xf[i];
        }
        /* built-ins, to the host and to a result array */
        struct {
            kiln_reduce_op op;
            kiln_array *a;
            double want;
        } bi[6] = { { KILN_REDUCE_SUM, XI, (double)(int32_t)isum },
                    { KILN_REDUCE_MIN, XI, imin },
                    { KILN_REDUCE_MAX, XI, imax },
                    { KILN_REDUCE_ARGMIN, XI, (double)iarg },
                    { KILN_REDUCE_MIN, XF, fmn },
                    { KILN_REDUCE_MAX, XF, fmx } };
        for (int k = 0; k < 6; k++) {
            kiln_dtype rd = kiln_dtype_reduce_result(bi[k].op, kiln_array_dtype(bi[k].a));
            unsigned char h[16] = { 0 }, d[16] = { 0 };
            size_t one = 1;
            kiln_array *R = NULL;
            kiln_event *e = NULL;
            CHECK_OK(kiln_array_empty(c, rd, 1, &one, &R));
            if (CHECK_OK(kiln_array_reduce_async(q, bi[k].op, bi[k].a, NULL, h, 0, NULL, &e)))
                CHECK_OK(kiln_event_wait(e));
            kiln_event_release(e);
            CHECK_OK(kiln_array_reduce_async(q, bi[k].op, bi[k].a, R, NULL, 0, NULL, NULL));
            CHECK_OK(kiln_array_read(q, R, d));
            CHECK_MSG(kt_get(rd, h, 0) == bi[k].want && kt_get(rd, d, 0) == bi[k].want,
                      "built-in op %d #%d n=%zu: host %.9g array %.9g want "
                      "%.9g",
                      (int)bi[k].op, k, n, kt_get(rd, h, 0), kt_get(rd, d, 0), bi[k].want);
            kiln_array_release(R);
        }
        /* float sum as a built-in, near the reference */
        {
            double fs = 0, fa = 0;
            for (size_t i = 0; i < n; i++) {
                fs += xf[i];
                fa += fabs(xf[i]);
            }
            float h = 0;
            CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_SUM, XF, &h));
            CHECK_MSG(fabs(h - fs) <= (double)n * 1.2e-7 * fa, "sum float n=%zu: %.9g vs %.9g", n,
                      h, fs);
        }
        kiln_arg vf = KILN_ARG_ARRAY(XF), vi = KILN_ARG_ARRAY(XI);
        /* user reductions with a final step, four ways each */
        kiln_reduction_desc dn =
            KILN_REDUCTION_DESC(.arguments = "const float *x", .out_type = "float", .neutral = "0",
                                .reduce = "a + b", .map = "x[i] * x[i]", .name = "t_norm2");
        kiln_reduction *rn = NULL;
        if (CHECK_OK(kiln__reduction_create_ex(c, &dn, "sqrt(a)", NULL, 0, 1, &rn))) {
            float f = 0;
            four_ways(q, rn, KILN_FLOAT32, n, 1, &vf, &f, "norm2 float");
            double w = sqrt(fsq);
            CHECK_MSG(fabs(f - w) <= 1e-5 * w + 1e-30, "norm2 float n=%zu: %.9g vs %.9g", n, f, w);
            kiln_reduction_release(rn);
        }
        kiln_reduction_desc ds =
            KILN_REDUCTION_DESC(.arguments = "const int *x", .out_type = "long", .neutral = "0",
                                .reduce = "a + b", .map = "(long)x[i] * 3", .name = "t_sum3");
        kiln_reduction *rs = NULL;
        if (CHECK_OK(kiln__reduction_create_ex(c, &ds, "(int)(a - 1)", "int", 4, 1, &rs))) {
            int32_t v = 0;
            four_ways(q, rs, KILN_INT32, n, 1, &vi, &v, "sum3-1 int");
            CHECK_MSG(v == (int32_t)(isum * 3 - 1), "sum3-1 int n=%zu: %d vs %lld", n, (int)v,
                      (long long)(isum * 3 - 1));
            kiln_reduction_release(rs);
        }
        /* argmin of floats: a struct partial, a long final value */
        kiln_reduction_desc da = KILN_REDUCTION_DESC(.arguments = "const float *x");
        kiln__arg_text tx;
        kiln__arg_desc(0, KILN_FLOAT32, "x[i]", &tx, &da);
        da.name = "t_argmin";
        kiln_reduction *ra = NULL;
        if (CHECK_OK(kiln__reduction_create_ex(c, &da, "a.i == 9223372036854775807L ? -1L : a.i",
                                               "long", 8, 1, &ra))) {
            int64_t v = -2, w = 0;
            for (size_t i = 0; i < n; i++)
                if (xf[i] < xf[w])
                    w = (int64_t)i;
            four_ways(q, ra, KILN_INT64, n, 1, &vf, &v, "argmin float");
            CHECK_MSG(v == w, "argmin float n=%zu: %lld vs %lld", n, (long long)v, (long long)w);
            kiln_reduction_release(ra);
        }
        KT_RELEASE(XF, XI);
        KT_FREE(xf, xi);
    }
}

int main(void) {
    KT_FOR_EACH_DEVICE_STEPS(t_builtins, t_float_sum_tolerance, t_custom_and_strided,
                             t_single_group);
    return kt_report();
}
