/* where, clip, any/all, initial values of reductions and build options of
 * the generators (issue 12, items 2 and 3), against serial C references:
 * every dtype, awkward sizes, NaN like NumPy, empty inputs, broadcasting
 * and mismatches as errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "toolkit_ref.h"

static int truthy(kiln_dtype d, const void *p, size_t k) {
    tr_val v = tr_load(d, p, k);
    return tr_is_float(d) ? (v.f != 0 || v.f != v.f) : (v.i != 0 || v.u != 0);
}

/* out (n) = where(cond (n), a (n), b (1)) with dtypes dc, da, db. */
static void check_where(kiln_queue *q, kiln_dtype dc, kiln_dtype da, kiln_dtype db, size_t n) {
    kiln_context *c = kiln_queue_context(q);
    kiln_dtype p = kiln_dtype_promote(da, db);
    char *hc = malloc(n * 8 + 8), *ha = malloc(n * 8 + 8), hb[8], *got = malloc(n * 8 + 8),
         *want = malloc(n * 8 + 8);
    for (size_t k = 0; k < n; k++) {
        tr_random(dc, hc, k, 1);
        tr_random(da, ha, k, 0);
    }
    if (n && tr_is_float(dc)) { /* NaN is true, -0.0 false */
        tr_store(dc, hc, 0, (tr_val){ 0, 0, NAN });
        if (n > 1)
            tr_store(dc, hc, 1, (tr_val){ 0, 0, -0.0 });
    }
    tr_random(db, hb, 0, 0);
    size_t one = 1;
    kiln_array *C = NULL, *A = NULL, *B = NULL, *O = NULL;
    CHECK_OK(kiln_array_from_host(c, dc, 1, &n, hc, &C));
    CHECK_OK(kiln_array_from_host(c, da, 1, &n, ha, &A));
    CHECK_OK(kiln_array_from_host(c, db, 1, &one, hb, &B));
    CHECK_OK(kiln_array_empty(c, p, 1, &n, &O));
    kiln_event *e = NULL;
    if (CHECK_OK(kiln_array_where_out(q, O, C, A, B, 0, NULL, &e))) {
        CHECK_OK(kiln_event_wait(e));
        CHECK_OK(kiln_array_read(q, O, got));
        int bad = 0;
        for (size_t k = 0; k < n; k++) {
            tr_val v = truthy(dc, hc, k) ? tr_cast(da, p, tr_load(da, ha, k))
                                         : tr_cast(db, p, tr_load(db, hb, 0));
            tr_store(p, want, k, v);
            bad += !tr_same(p, got, want, k);
        }
        CHECK_MSG(bad == 0, "where %s ? %s : %s n=%zu: %d wrong", kiln_dtype_name(dc),
                  kiln_dtype_name(da), kiln_dtype_name(db), n, bad);
    }
    KT_RELEASE(e, C, A, B, O);
    KT_FREE(hc, ha, got, want);
}

static void check_clip(kiln_queue *q, kiln_dtype d, size_t n, double lo, double hi) {
    kiln_context *c = kiln_queue_context(q);
    char *h = malloc(n * 8 + 8), *got = malloc(n * 8 + 8), *want = malloc(n * 8 + 8);
    for (size_t k = 0; k < n; k++)
        tr_random(d, h, k, 0);
    kiln_array *A = NULL, *O = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, h, &A));
    CHECK_OK(kiln_array_empty(c, d, 1, &n, &O));
    kiln_event *e = NULL;
    if (CHECK_OK(kiln_array_clip_out(q, O, A, KILN_ARG_F64(lo), KILN_ARG_F64(hi), 0, NULL, &e))) {
        CHECK_OK(kiln_event_wait(e));
        CHECK_OK(kiln_array_read(q, O, got));
        int bad = 0;
        for (size_t k = 0; k < n; k++) {
            tr_val v = tr_load(d, h, k);
            if (tr_is_float(d)) {
                double l = d == KILN_FLOAT16   ? tr_h2d(tr_d2h(lo))
                           : d == KILN_FLOAT32 ? (float)lo
                                               : lo;
                double u = d == KILN_FLOAT16   ? tr_h2d(tr_d2h(hi))
                           : d == KILN_FLOAT32 ? (float)hi
                                               : hi;
                double x = v.f;
                x = (x != x || l != l) ? NAN : (l > x ? l : x);
                x = (x != x || u != u) ? NAN : (u < x ? u : x);
                v.f = x;
            } else {
                /* the integers in [lo, hi]: ceil(lo), floor(hi),
                 * saturated (tr_cast saturates), then max, then min */
                tr_val l = tr_cast(KILN_FLOAT64, d, (tr_val){ 0, 0, ceil(lo) });
                tr_val u = tr_cast(KILN_FLOAT64, d, (tr_val){ 0, 0, floor(hi) });
                if (tr_is_unsigned(d)) {
                    v.u = v.u < l.u ? l.u : v.u;
                    v.u = v.u > u.u ? u.u : v.u;
                } else {
                    v.i = v.i < l.i ? l.i : v.i;
                    v.i = v.i > u.i ? u.i : v.i;
                }
            }
            tr_store(d, want, k, v);
            bad += !tr_same(d, got, want, k);
        }
        CHECK_MSG(bad == 0, "clip %s [%g, %g] n=%zu: %d wrong", kiln_dtype_name(d), lo, hi, n, bad);
    }
    KT_RELEASE(e, A, O);
    KT_FREE(h, got, want);
}

/* any / all, and sum / max with an initial value, of n elements. */
static void check_reduce(kiln_queue *q, kiln_dtype d, size_t n) {
    kiln_context *c = kiln_queue_context(q);
    char *h = malloc(n * 8 + 8);
    for (size_t k = 0; k < n; k++)
        tr_random(d, h, k, 1);
    /* mostly non-zero, so that all() is sometimes true */
    int zeros = (int)(kt_rand_u64() % 3);
    for (size_t k = 0; k < n; k++)
        if (truthy(d, h, k) == 0 && zeros)
            tr_store(d, h, k, (tr_val){ 2, 2, 2.0 });
    kiln_array *A = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, h, &A));
    int any = 0, all = 1;
    for (size_t k = 0; k < n; k++) {
        any |= truthy(d, h, k);
        all &= truthy(d, h, k);
    }
    uint8_t r = 7;
    if (CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_ANY, A, &r)))
        CHECK_MSG(r == any, "any %s n=%zu: got %d want %d", kiln_dtype_name(d), n, r, any);
    r = 7;
    if (CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_ALL, A, &r)))
        CHECK_MSG(r == all, "all %s n=%zu: got %d want %d", kiln_dtype_name(d), n, r, all);
    /* ANY with initial 1 is always true, ALL with initial 0 always false */
    uint8_t one = 1, zero = 0;
    if (CHECK_OK(kiln_array_reduce_initial(q, KILN_REDUCE_ANY, A, KILN_ARG_BOOL(one), &r)))
        CHECK(r == 1);
    if (CHECK_OK(kiln_array_reduce_initial(q, KILN_REDUCE_ALL, A, KILN_ARG_BOOL(zero), &r)))
        CHECK(r == 0);
    /* sum with initial 5, max with initial 3 (small values: exact) */
    kiln_dtype rd = kiln_dtype_reduce_result(KILN_REDUCE_SUM, d);
    char init[8], got[8], want[8];
    double sum = 5, mx = 3;
    int nan = 0;
    for (size_t k = 0; k < n; k++) {
        tr_val v = tr_load(d, h, k);
        double x = tr_is_float(d) ? v.f : tr_is_unsigned(d) ? (double)v.u : (double)v.i;
        sum += x;
        nan |= x != x;
        if (x > mx)
            mx = x;
    }
    tr_store(rd, init, 0, tr_cast(KILN_FLOAT64, rd, (tr_val){ 0, 0, 5.0 }));
    tr_store(rd, want, 0, tr_cast(KILN_FLOAT64, rd, (tr_val){ 0, 0, nan ? NAN : sum }));
    if (!tr_is_float(d)) /* the sum wraps in narrow integer dtypes */
        tr_store(rd, want, 0,
                 tr_cast(KILN_INT64, rd, (tr_val){ (int64_t)sum, (uint64_t)(int64_t)sum, 0 }));
    if (CHECK_OK(kiln_array_reduce_initial(q, KILN_REDUCE_SUM, A, kt_arg(rd, init), got)))
        CHECK_MSG(tr_same(rd, got, want, 0), "sum+5 %s n=%zu", kiln_dtype_name(d), n);
    tr_store(rd, init, 0, tr_cast(KILN_FLOAT64, rd, (tr_val){ 0, 0, 3.0 }));
    tr_store(rd, want, 0, tr_cast(KILN_FLOAT64, rd, (tr_val){ 0, 0, nan ? NAN : mx }));
    if (CHECK_OK(kiln_array_reduce_initial(q, KILN_REDUCE_MAX, A, kt_arg(rd, init), got)))
        CHECK_MSG(tr_same(rd, got, want, 0), "max(initial 3) %s n=%zu", kiln_dtype_name(d), n);
    CHECK_STATUS(kiln_array_reduce_initial(q, KILN_REDUCE_ARGMAX, A, kt_arg(rd, init), got),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_reduce_initial(q, KILN_REDUCE_SUM, A, KILN_ARG_ARRAY(A), got),
                 KILN_ERROR_INVALID_ARGUMENT);
    kiln_array_release(A);
    free(h);
}

/* Build options (-D) reach every generator; a reduction generator's
 * initial expression of a scalar argument. */
static void check_options(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 1000;
    float h[1000];
    for (size_t k = 0; k < n; k++)
        h[k] = (float)(k % 10);
    kiln_array *X = NULL, *Y = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 1, &n, h, &X));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &Y));
    kiln_elementwise *ew = NULL;
    kiln_elementwise_desc ed = KILN_ELEMENTWISE_DESC(.arguments = "const float *x, float *y",
                                                     .operation = "y[i] = SCALE * x[i]",
                                                     .name = "scaled", .options = "-DSCALE=3");
    if (CHECK_OK(kiln_elementwise_create(c, &ed, &ew))) {
        kiln_arg v[2] = { KILN_ARG_ARRAY(X), KILN_ARG_ARRAY(Y) };
        CHECK_OK(kiln_elementwise_launch(q, ew, n, 2, v, 0, NULL, NULL));
        float g[1000];
        CHECK_OK(kiln_array_read(q, Y, g));
        int bad = 0;
        for (size_t k = 0; k < n; k++)
            bad += g[k] != 3 * h[k];
        CHECK_MSG(bad == 0, "elementwise with -DSCALE=3: %d wrong", bad);
    }
    kiln_elementwise_release(ew);
    /* without the option the expression does not build */
    ed.options = NULL;
    CHECK_STATUS(kiln_elementwise_create(c, &ed, &ew), KILN_ERROR_BUILD);
    kiln_reduction *r = NULL;
    kiln_reduction_desc rd =
        KILN_REDUCTION_DESC(.arguments = "const float *x, float start", .out_type = "float",
                            .neutral = "0", .reduce = "a + b", .map = "OFFSET + x[i]",
                            .initial = "start", .options = "-DOFFSET=1");
    if (CHECK_OK(kiln_reduction_create(c, &rd, &r))) {
        kiln_arg v[2] = { KILN_ARG_ARRAY(X), KILN_ARG_F32(100) };
        float s = 0, want = 100;
        for (size_t k = 0; k < n; k++)
            want += 1 + h[k];
        CHECK_OK(kiln_reduction_run(q, r, n, 2, v, &s));
        CHECK_MSG(s == want, "reduction with initial: %g want %g", s, want);
        size_t zero = 0;
        kiln_array *E = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &zero, &E));
        v[0] = KILN_ARG_ARRAY(E);
        CHECK_OK(kiln_reduction_run(q, r, 0, 2, v, &s));
        CHECK_MSG(s == 100, "empty reduction gives initial: %g", s);
        kiln_array_release(E);
    }
    kiln_reduction_release(r);
    kiln_scan *sc = NULL;
    kiln_scan_desc sd =
        KILN_SCAN_DESC(.arguments = "const float *x, float *y", .scan_type = "float",
                       .neutral = "0", .scan = "a + b", .input = "x[i] * STEP",
                       .output = "y[i] = item", .options = "-DSTEP=2");
    if (CHECK_OK(kiln_scan_create(c, &sd, &sc))) {
        kiln_arg v[2] = { KILN_ARG_ARRAY(X), KILN_ARG_ARRAY(Y) };
        CHECK_OK(kiln_scan_launch(q, sc, n, 2, v, 0, NULL, NULL));
        float g[1000], acc = 0;
        CHECK_OK(kiln_array_read(q, Y, g));
        int bad = 0;
        for (size_t k = 0; k < n; k++) {
            acc += 2 * h[k];
            bad += g[k] != acc;
        }
        CHECK_MSG(bad == 0, "scan with -DSTEP=2: %d wrong", bad);
    }
    KT_RELEASE(sc, X, Y);
}

static void check_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t s3 = 3, s4 = 4;
    kiln_array *a = NULL, *b = NULL, *o = NULL, *i8 = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &s3, 0, NULL, NULL, &a));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &s4, 0, NULL, NULL, &b));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &s3, &o));
    CHECK_OK(kiln_array_zeros(q, KILN_INT8, 1, &s3, 0, NULL, NULL, &i8));
    CHECK_STATUS(kiln_array_where_out(q, o, a, a, b, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    const char *m = kiln_last_error_message();
    CHECK_MSG(strstr(m, "(3,)") && strstr(m, "(4,)"), "message: %s", m);
    /* int8 with float32 is float32: an int8 out is refused */
    CHECK_STATUS(kiln_array_where_out(q, i8, a, i8, a, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_where_out(q, o, NULL, a, a, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    /* clip: dtypes that differ, a NaN bound for integers, a complex bound */
    kiln_arg zero = KILN_ARG_F64(0), one = KILN_ARG_F64(1), nan = KILN_ARG_F64(NAN);
    CHECK_STATUS(kiln_array_clip_out(q, i8, a, zero, one, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_clip_out(q, i8, i8, nan, one, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_clip_out(q, o, b, zero, one, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_clip_out(q, a, a, zero, KILN_ARG_C64(1, 1), 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "kiln_array_clip_out: hi"));
    CHECK_OK(kiln_queue_finish(q));
    KT_RELEASE(a, b, o, i8);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 70000);
    for (int k = 0; k < TR_N; k++) {
        kiln_dtype d = tr_all[k];
        if (d == KILN_FLOAT64 && !info.fp64)
            continue;
        /* where: cond of every dtype; a of every dtype with float32 and
         * with its own dtype */
        check_where(q, d, d, d, 1000);
        check_where(q, KILN_UINT8, d, KILN_INT16, 777);
        if (info.fp64 || kiln_dtype_promote(d, KILN_FLOAT32) != KILN_FLOAT64)
            check_where(q, KILN_FLOAT16, d, KILN_FLOAT32, 513);
        check_clip(q, d, 1000, -5.5, 7.25);
        check_clip(q, d, 300, 10, -10);
        check_clip(q, d, 300, -INFINITY, 0);
        if (tr_is_float(d))
            check_clip(q, d, 100, NAN, 1);
        for (size_t s = 0; s < ns; s += 3)
            check_reduce(q, d, sizes[s]);
    }
    for (size_t s = 0; s < ns; s++)
        check_where(q, KILN_INT32, KILN_FLOAT32, KILN_FLOAT32, sizes[s]);
    check_options(q);
    check_errors(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
