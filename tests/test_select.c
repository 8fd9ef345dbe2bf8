/* Selection (include/kiln/select.h) against serial loops: copy_if,
 * remove_if and partition over every dtype at awkward sizes, predicates
 * selecting none, all and alternate items, strided inputs; the generator
 * with payloads (stability) and a rejected output; unique (with counts) on
 * runs, all-equal, all-distinct, NaN and signed zeros; reduce_by_key with
 * single-item runs and every op; the count on the device, through an
 * event, and on the host; bad input. The program runs itself a second time
 * with KILN_SCAN_VARIANT=onepass (the single-pass decoupled look-back
 * variant that OpenCL GPUs use; PoCL's CPU device otherwise takes the
 * three-phase one). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* float -> float16 bits for the values used here (exact in half), NaN and
 * signed zeros. */
static uint16_t half_bits(double v) {
    if (v != v)
        return 0x7e00;
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    v = fabs(v);
    if (v == 0)
        return sign;
    int e;
    double m = frexp(v, &e); /* v = m * 2^e, m in [0.5, 1) */
    return (uint16_t)(sign | (uint16_t)((e + 14) << 10) | (uint16_t)((m * 2 - 1) * 1024));
}

static double half_value(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* The second run (the single-pass variant forced) covers the main dtypes
 * only: every kernel is built again for it, and PoCL builds are slow. */
static int second_run(void) {
    return getenv("KILN_SCAN_VARIANT") != NULL;
}

/* Sizes up to 2^20+1 (hundreds of tiles); 65537 in the second run. */
static size_t max_size(void) {
    return second_run() ? 65537 : (1u << 20) + 1;
}

static size_t esize(kiln_dtype d) {
    return kiln_dtype_size(d);
}

static void put(kiln_dtype d, void *p, size_t i, double v) {
    if (d == KILN_FLOAT16)
        ((uint16_t *)p)[i] = half_bits(v);
    else
        kt_set(d, p, i, v);
}

static double get(kiln_dtype d, const void *p, size_t i) {
    return d == KILN_FLOAT16 ? half_value(((const uint16_t *)p)[i]) : kt_get(d, p, i);
}

/* Same bits, or both NaN. */
static int same(kiln_dtype d, const void *a, size_t i, const void *b, size_t j) {
    double x = get(d, a, i), y = get(d, b, j);
    if (x != x || y != y)
        return x != x && y != y;
    return !memcmp((const char *)a + i * esize(d), (const char *)b + j * esize(d), esize(d));
}

static int skip_dtype(kiln_queue *q, kiln_dtype d) {
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    return d == KILN_FLOAT64 && !info.fp64;
}

static const kiln_dtype all_dtypes[] = { KILN_INT8,    KILN_UINT8,   KILN_INT16,  KILN_UINT16,
                                         KILN_INT32,   KILN_UINT32,  KILN_INT64,  KILN_UINT64,
                                         KILN_FLOAT16, KILN_FLOAT32, KILN_FLOAT64 };
#define NDT (sizeof all_dtypes / sizeof all_dtypes[0])

static kiln_array *scalar_count(kiln_context *c) {
    size_t one = 1;
    kiln_array *cnt = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &one, &cnt));
    return cnt;
}

/* copy_if / remove_if / partition of x in [0, 8) with predicate x > 3:
 * the device count (through the event), host_count and the items. */
static void t_predicates(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, max_size());
    for (size_t di = 0; di < NDT; di++) {
        kiln_dtype d = all_dtypes[di];
        if (skip_dtype(q, d))
            continue;
        int main_dt = d == KILN_INT32 || d == KILN_FLOAT32;
        if (!main_dt && second_run())
            continue;
        for (size_t si = 0; si < ns; si++) {
            size_t n = sizes[si];
            if (!main_dt && si % 4 != 1 && si + 1 != ns)
                continue;
            char *x = malloc(n * esize(d) + 8), *y = malloc(n * esize(d) + 8);
            char *r = malloc(n * esize(d) + 8);
            for (size_t i = 0; i < n; i++)
                put(d, x, i, (double)(kt_rand_u64() % 8));
            kiln_array *X = NULL, *Y = NULL, *R = NULL, *cnt = scalar_count(c);
            size_t m = n ? n : 1;
            CHECK_OK(kiln_array_from_host(c, d, 1, &n, x, &X));
            CHECK_OK(kiln_array_empty(c, d, 1, &m, &Y));
            CHECK_OK(kiln_array_empty(c, d, 1, &m, &R));
            for (int op = 0; op < (main_dt ? 4 : 1); op++) {
                int64_t dc = -1, hc = -1;
                kiln_event *e = NULL;
                kiln_status st =
                    op == 0   ? kiln_array_copy_if_out(q, Y, cnt, &hc, X, "x > 3", 0, NULL, &e)
                    : op == 1 ? kiln_array_remove_if_out(q, Y, cnt, &hc, X, "x > 3", 0, NULL, &e)
                    : op == 2
                        ? kiln_array_partition_out(q, Y, R, cnt, &hc, X, "x > 3", 0, NULL, &e)
                        : kiln_array_partition_out(q, Y, NULL, cnt, &hc, X, "x > 3", 0, NULL, &e);
                if (!CHECK_OK(st))
                    continue;
                CHECK_OK(kiln_event_wait(e));
                kiln_event_release(e);
                CHECK_OK(kiln_array_read(q, cnt, &dc));
                CHECK_OK(kiln_array_read(q, Y, y));
                if (op == 2)
                    CHECK_OK(kiln_array_read(q, R, r));
                /* serial reference: kept (and rejected) in order */
                size_t k = 0, bad = 0, kr = 0;
                for (size_t i = 0; i < n; i++) {
                    int sel = get(d, x, i) > 3;
                    if (op == 1)
                        sel = !sel;
                    if (sel)
                        bad += !same(d, y, k++, x, i);
                    else if (op == 2)
                        bad += !same(d, r, kr++, x, i);
                }
                if (op == 3) /* rejected from the back, reversed */
                    for (size_t i = 0, j = n; i < n; i++)
                        if (!(get(d, x, i) > 3))
                            bad += !same(d, y, --j, x, i);
                CHECK_MSG(dc == (int64_t)k && hc == (int64_t)k && bad == 0,
                          "select op %d %s n=%zu: count %lld/%lld want %zu, "
                          "%zu wrong",
                          op, kiln_dtype_name(d), n, (long long)dc, (long long)hc, k, bad);
            }
            KT_RELEASE(X, Y, R, cnt);
            KT_FREE(x, y, r);
        }
    }
}

/* Predicates selecting none, all and alternate items; a strided input. */
static void t_none_all_alternate(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 100003);
    static const char *const preds[] = { "0", "1", "(i & 1) == 0", "x < 0" };
    for (size_t si = 0; si < ns; si++) {
        size_t n = sizes[si], m = n ? n : 1;
        int32_t *x = malloc(n * 4 + 4), *y = malloc(n * 4 + 4);
        for (size_t i = 0; i < n; i++)
            x[i] = (int32_t)(kt_rand_u64() % 1000);
        kiln_array *X = NULL, *Y = NULL;
        CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, x, &X));
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &m, &Y));
        for (int p = 0; p < 4; p++) {
            int64_t hc = -1;
            kiln_event *e = NULL;
            if (!CHECK_OK(kiln_array_copy_if_out(q, Y, NULL, &hc, X, preds[p], 0, NULL, &e)))
                continue;
            CHECK_OK(kiln_event_wait(e));
            kiln_event_release(e);
            CHECK_OK(kiln_array_read(q, Y, y));
            size_t want = p == 1 ? n : p == 2 ? (n + 1) / 2 : 0, bad = 0;
            for (size_t k = 0; k < want && k < (size_t)hc; k++)
                bad += y[k] != x[p == 2 ? 2 * k : k];
            CHECK_MSG(hc == (int64_t)want && bad == 0, "copy_if '%s' n=%zu: %lld of %zu, %zu wrong",
                      preds[p], n, (long long)hc, want, bad);
        }
        /* a reversed view: read at i only, in its order */
        kiln_array *V = NULL;
        kiln_slice rev = KILN_SLICE_REVERSED;
        CHECK_OK(kiln_array_view(X, &rev, &V));
        int64_t hc = -1;
        kiln_event *e = NULL;
        if (CHECK_OK(kiln_array_copy_if_out(q, Y, NULL, &hc, V, "x >= 500", 0, NULL, &e))) {
            CHECK_OK(kiln_event_wait(e));
            kiln_event_release(e);
            CHECK_OK(kiln_array_read(q, Y, y));
            size_t k = 0, bad = 0;
            for (size_t i = n; i-- > 0;)
                if (x[i] >= 500)
                    bad += k < (size_t)hc && y[k++] != x[i];
            CHECK_MSG(hc == (int64_t)k && bad == 0,
                      "copy_if reversed n=%zu: %lld of %zu, %zu wrong", n, (long long)hc, k, bad);
        }
        KT_RELEASE(V, X, Y);
        KT_FREE(x, y);
    }
}

/* A transposed 2-D view: items in the view's C order; the generator's
 * launch with a device count and no host copy. */
static void t_2d_and_launch(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t shape[2] = { 37, 53 }, n = 37 * 53;
    int32_t *x = malloc(n * 4), *y = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        x[i] = (int32_t)(kt_rand_u64() % 100);
    kiln_array *X = NULL, *T = NULL, *Y = NULL, *cnt = scalar_count(c);
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 2, shape, x, &X));
    CHECK_OK(kiln_array_swapaxes(X, 0, 1, &T));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &Y));
    kiln_event *e = NULL;
    int64_t hc = -1;
    if (CHECK_OK(kiln_array_copy_if_out(q, Y, NULL, &hc, T, "x % 3 == 1", 0, NULL, &e))) {
        CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
        CHECK_OK(kiln_array_read(q, Y, y));
        size_t k = 0, bad = 0;
        for (size_t j = 0; j < shape[1]; j++) /* the view's rows */
            for (size_t r = 0; r < shape[0]; r++) {
                int32_t v = x[r * shape[1] + j];
                if (v % 3 == 1)
                    bad += k < (size_t)hc && y[k++] != v;
            }
        CHECK_MSG(hc == (int64_t)k && bad == 0, "copy_if transposed: %lld of %zu, %zu wrong",
                  (long long)hc, k, bad);
    }
    kiln_select *sel = NULL;
    if (CHECK_OK(kiln_select_create(c,
                                    &KILN_SELECT_DESC(.arguments = "const int *x, int lo, int *y",
                                                      .predicate = "x[i] >= lo",
                                                      .output = "y[out_index] = x[i]"),
                                    &sel))) {
        kiln_arg a[3] = { KILN_ARG_ARRAY(X), KILN_ARG_I32(90), KILN_ARG_ARRAY(Y) };
        int64_t dc = -1;
        /* X is 2-D: the generator's first array has n elements */
        if (CHECK_OK(kiln_select_run_async(q, sel, n, 3, a, cnt, NULL, 0, NULL, &e))) {
            CHECK_OK(kiln_event_wait(e));
            kiln_event_release(e);
            CHECK_OK(kiln_array_read(q, cnt, &dc));
            CHECK_OK(kiln_array_read(q, Y, y));
            size_t k = 0, bad = 0;
            for (size_t i = 0; i < n; i++)
                if (x[i] >= 90)
                    bad += k < (size_t)dc && y[k++] != x[i];
            CHECK_MSG(dc == (int64_t)k && bad == 0, "select_launch: %lld of %zu, %zu wrong",
                      (long long)dc, k, bad);
        }
        /* n = 0 sets the count to 0 */
        kiln_array *E = NULL;
        size_t zero = 0;
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &zero, &E));
        a[0] = KILN_ARG_ARRAY(E);
        size_t got = 99;
        CHECK_OK(kiln_select_run(q, sel, 0, 3, a, &got));
        CHECK(got == 0);
        kiln_array_release(E);
    }
    KT_RELEASE(sel, X, T, Y, cnt);
    KT_FREE(x, y);
}

/* The generator: payloads show stability; a rejected output; the count
 * used by a later kernel on the device without a host round trip. */
static void t_generator(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_select *sel = NULL;
    if (!CHECK_OK(kiln_select_create(c,
                                     &KILN_SELECT_DESC(.arguments = "const int *k, const int *idx, "
                                                                    "int m, int *ok, int *oidx, "
                                                                    "int *rej",
                                                       .predicate = "k[i] % m == 0",
                                                       .output = "ok[out_index] = k[i]; "
                                                                 "oidx[out_index] = idx[i]",
                                                       .rejected_output = "rej[out_index] = idx[i]",
                                                       .name = "payload_select"),
                                     &sel)))
        return;
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, max_size());
    for (size_t si = 0; si < ns; si++) {
        size_t n = sizes[si], m = n ? n : 1;
        int32_t *k = malloc(n * 4 + 4), *idx = malloc(n * 4 + 4);
        int32_t *ok = malloc(n * 4 + 4), *oi = malloc(n * 4 + 4), *rj = malloc(n * 4 + 4);
        for (size_t i = 0; i < n; i++) {
            k[i] = (int32_t)(kt_rand_u64() % 5); /* many equal keys */
            idx[i] = (int32_t)i;
        }
        kiln_array *K = NULL, *I = NULL, *OK = NULL, *OI = NULL, *RJ = NULL;
        CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, k, &K));
        CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, idx, &I));
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &m, &OK));
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &m, &OI));
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &m, &RJ));
        kiln_arg a[6] = { KILN_ARG_ARRAY(K),  KILN_ARG_ARRAY(I),  KILN_ARG_I32(3),
                          KILN_ARG_ARRAY(OK), KILN_ARG_ARRAY(OI), KILN_ARG_ARRAY(RJ) };
        size_t cnt = (size_t)-1;
        CHECK_OK(kiln_select_run(q, sel, n, 6, a, &cnt));
        CHECK_OK(kiln_array_read(q, OK, ok));
        CHECK_OK(kiln_array_read(q, OI, oi));
        CHECK_OK(kiln_array_read(q, RJ, rj));
        size_t s = 0, r = 0, bad = 0;
        for (size_t i = 0; i < n; i++) {
            if (k[i] % 3 == 0)
                bad += s < cnt && (ok[s] != k[i] || oi[s] != (int)i), s++;
            else
                bad += rj[r++] != (int)i;
        }
        CHECK_MSG(cnt == s && bad == 0, "select generator n=%zu: %zu of %zu, %zu wrong", n, cnt, s,
                  bad);
        KT_RELEASE(K, I, OK, OI, RJ);
        KT_FREE(k, idx, ok, oi, rj);
    }
    /* The device count feeds a later kernel, ordered by events only. */
    {
        size_t n = 1000, one = 1;
        kiln_array *X = NULL, *Y = NULL, *cnt = scalar_count(c), *Z = NULL;
        CHECK_OK(kiln_array_arange(q, KILN_INT32, n, 0, 1, 0, NULL, NULL, &X));
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &Y));
        CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &one, &Z));
        kiln_event *e1 = NULL, *e2 = NULL;
        CHECK_OK(kiln_array_copy_if_out(q, Y, cnt, NULL, X, "x % 7 == 0", 0, NULL, &e1));
        kiln_elementwise *ew = NULL;
        CHECK_OK(
            kiln_elementwise_create(c,
                                    &KILN_ELEMENTWISE_DESC(.arguments = "const long *c, long *z",
                                                           .operation = "z[i] = c[i] * 10"),
                                    &ew));
        kiln_arg v[2] = { KILN_ARG_ARRAY(cnt), KILN_ARG_ARRAY(Z) };
        CHECK_OK(kiln_elementwise_launch(q, ew, 1, 2, v, 1, &e1, &e2));
        int64_t z = 0;
        CHECK_OK(kiln_event_wait(e2));
        CHECK_OK(kiln_array_read(q, Z, &z));
        CHECK_MSG(z == 1430, "count on the device: %lld", (long long)z);
        KT_RELEASE(e1, e2, ew, X, Y, Z, cnt);
    }
    kiln_select_release(sel);
}

/* unique of runs / all-equal / all-distinct, with and without counts. */
static void t_unique(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, max_size());
    for (size_t di = 0; di < NDT; di++) {
        kiln_dtype d = all_dtypes[di];
        if (skip_dtype(q, d))
            continue;
        int main_dt = d == KILN_INT32 || d == KILN_FLOAT32 || d == KILN_FLOAT16 || d == KILN_INT64;
        if (!main_dt && second_run())
            continue;
        for (size_t si = 0; si < ns; si++) {
            size_t n = sizes[si], m = n ? n : 1;
            if (!main_dt && si % 4 != 1 && si + 1 != ns)
                continue;
            int kind = (int)(si % 3); /* runs, all equal, all distinct */
            char *x = malloc(n * esize(d) + 8), *y = malloc(n * esize(d) + 8);
            int64_t *cn = malloc(n * 8 + 8);
            double v = 0;
            for (size_t i = 0; i < n; i++) {
                if (kind == 0 && kt_rand_u64() % 4 == 0)
                    v = fmod(v + 1 + (double)(kt_rand_u64() % 3), 100);
                else if (kind == 2)
                    v = (double)(i % 100); /* no neighbours equal */
                put(d, x, i, v);
            }
            kiln_array *X = NULL, *Y = NULL, *C = NULL, *cnt = scalar_count(c);
            CHECK_OK(kiln_array_from_host(c, d, 1, &n, x, &X));
            CHECK_OK(kiln_array_empty(c, d, 1, &m, &Y));
            CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &m, &C));
            for (int wc = 0; wc < (main_dt ? 2 : 1); wc++) {
                int64_t hc = -1;
                kiln_event *e = NULL;
                if (!CHECK_OK(kiln_array_unique_out(q, Y, wc ? C : NULL, cnt, &hc, X, 0, NULL, &e)))
                    continue;
                CHECK_OK(kiln_event_wait(e));
                kiln_event_release(e);
                CHECK_OK(kiln_array_read(q, Y, y));
                if (wc)
                    CHECK_OK(kiln_array_read(q, C, cn));
                size_t u = 0, bad = 0, run = 0;
                for (size_t i = 0; i < n; i++) {
                    if (i == 0 || get(d, x, i) != get(d, x, i - 1)) {
                        if (i && wc)
                            bad += cn[u - 1] != (int64_t)run;
                        bad += u < (size_t)hc && !same(d, y, u, x, i);
                        u++;
                        run = 0;
                    }
                    run++;
                }
                if (n && wc)
                    bad += cn[u - 1] != (int64_t)run;
                CHECK_MSG(hc == (int64_t)u && bad == 0,
                          "unique %s kind %d counts %d n=%zu: %lld of %zu, "
                          "%zu wrong",
                          kiln_dtype_name(d), kind, wc, n, (long long)hc, u, bad);
            }
            KT_RELEASE(X, Y, C, cnt);
            KT_FREE(x, y, cn);
        }
    }
    /* NaN is never equal (not merged); -0 == +0 (merged, the first kept) */
    static const kiln_dtype fds[] = { KILN_FLOAT16, KILN_FLOAT32, KILN_FLOAT64 };
    for (size_t di = 0; di < 3; di++) {
        kiln_dtype d = fds[di];
        if (skip_dtype(q, d))
            continue;
        static const double in[] = { 1, NAN, NAN, 2, -0.0, 0.0, 0.0, NAN };
        size_t n = 8;
        char x[64], y[64];
        int64_t cn[8], hc = -1;
        for (size_t i = 0; i < n; i++)
            put(d, x, i, in[i]);
        kiln_array *X = NULL, *Y = NULL, *C = NULL;
        CHECK_OK(kiln_array_from_host(c, d, 1, &n, x, &X));
        CHECK_OK(kiln_array_empty(c, d, 1, &n, &Y));
        CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &n, &C));
        kiln_event *e = NULL;
        if (CHECK_OK(kiln_array_unique_out(q, Y, C, NULL, &hc, X, 0, NULL, &e))) {
            CHECK_OK(kiln_event_wait(e));
            kiln_event_release(e);
            CHECK_OK(kiln_array_read(q, Y, y));
            CHECK_OK(kiln_array_read(q, C, cn));
            CHECK_MSG(hc == 6 && get(d, y, 0) == 1 && isnan(get(d, y, 1)) && isnan(get(d, y, 2)) &&
                          get(d, y, 3) == 2 && get(d, y, 4) == 0 && signbit(get(d, y, 4)) &&
                          isnan(get(d, y, 5)) && cn[4] == 3 && cn[1] == 1,
                      "unique %s with NaN and zeros: %lld items", kiln_dtype_name(d),
                      (long long)hc);
        }
        KT_RELEASE(X, Y, C);
    }
    /* a strided input (every other item) */
    {
        size_t n = 10001;
        int32_t *x = malloc(n * 4), *y = malloc(n * 4);
        for (size_t i = 0; i < n; i++)
            x[i] = (int32_t)(i / 6); /* runs of 3 in the view */
        kiln_array *X = NULL, *V = NULL, *Y = NULL;
        CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, x, &X));
        kiln_slice s = KILN_SLICE(0, PTRDIFF_MAX, 2);
        CHECK_OK(kiln_array_view(X, &s, &V));
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &Y));
        int64_t hc = -1;
        kiln_event *e = NULL;
        if (CHECK_OK(kiln_array_unique_out(q, Y, NULL, NULL, &hc, V, 0, NULL, &e))) {
            CHECK_OK(kiln_event_wait(e));
            kiln_event_release(e);
            CHECK_OK(kiln_array_read(q, Y, y));
            size_t bad = 0, want = (n - 1) / 6 + 1;
            for (size_t k = 0; k < want && k < (size_t)hc; k++)
                bad += y[k] != (int32_t)k;
            CHECK_MSG(hc == (int64_t)want && bad == 0, "unique strided: %lld of %zu, %zu wrong",
                      (long long)hc, want, bad);
        }
        KT_RELEASE(X, V, Y);
        KT_FREE(x, y);
    }
}

/* reduce_by_key: values summed / multiplied / min / max per run of keys,
 * against a serial loop; single-item runs; an operator expression. */
static void t_reduce_by_key(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    static const struct {
        kiln_dtype k, v;
        kiln_reduce_op op;
    } cases[] = {
        { KILN_INT32, KILN_INT32, KILN_REDUCE_SUM },
        { KILN_INT32, KILN_FLOAT32, KILN_REDUCE_SUM },
        { KILN_FLOAT32, KILN_INT64, KILN_REDUCE_MIN },
        { KILN_INT64, KILN_FLOAT64, KILN_REDUCE_MAX },
        { KILN_UINT8, KILN_FLOAT16, KILN_REDUCE_SUM },
        { KILN_INT16, KILN_UINT32, KILN_REDUCE_PROD },
        { KILN_INT32, KILN_FLOAT32, 0 }, /* the expression form */
    };
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, max_size());
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        kiln_dtype kd = cases[ci].k, vd = cases[ci].v;
        kiln_reduce_op op = cases[ci].op;
        if (skip_dtype(q, kd) || skip_dtype(q, vd) || (ci > 2 && second_run()))
            continue;
        for (size_t si = 0; si < ns; si++) {
            size_t n = sizes[si], m = n ? n : 1;
            if (ci && si % 3 != 1 && si + 1 != ns)
                continue;
            int single = si % 2; /* every run one item long */
            char *k = malloc(n * 8 + 8), *v = malloc(n * 8 + 8);
            char *ok = malloc(n * 8 + 8), *ov = malloc(n * 8 + 8);
            double key = 0;
            for (size_t i = 0; i < n; i++) {
                if (single || kt_rand_u64() % 5 == 0)
                    key = fmod(key + 1, 100);
                put(kd, k, i, key);
                /* small values: every sum / product stays exact */
                put(vd, v, i,
                    op == KILN_REDUCE_PROD ? (double)(1 + kt_rand_u64() % 2)
                                           : (double)(kt_rand_u64() % 4));
            }
            kiln_array *K = NULL, *V = NULL, *OK = NULL, *OV = NULL;
            CHECK_OK(kiln_array_from_host(c, kd, 1, &n, k, &K));
            CHECK_OK(kiln_array_from_host(c, vd, 1, &n, v, &V));
            CHECK_OK(kiln_array_empty(c, kd, 1, &m, &OK));
            CHECK_OK(kiln_array_empty(c, vd, 1, &m, &OV));
            int64_t hc = -1;
            kiln_event *e = NULL;
            kiln_status st =
                op ? kiln_array_reduce_by_key_out(q, OK, OV, NULL, &hc, K, V, op, 0, NULL, &e)
                   : kiln_array_reduce_by_key_expr_out(q, OK, OV, NULL, &hc, K, V, "a > b ? a : b",
                                                       "-INFINITY", 0, NULL, &e);
            if (CHECK_OK(st)) {
                CHECK_OK(kiln_event_wait(e));
                kiln_event_release(e);
                CHECK_OK(kiln_array_read(q, OK, ok));
                CHECK_OK(kiln_array_read(q, OV, ov));
                size_t r = 0, bad = 0;
                double acc = 0;
                for (size_t i = 0; i < n; i++) {
                    double x = get(vd, v, i);
                    int start = i == 0 || get(kd, k, i) != get(kd, k, i - 1);
                    if (start)
                        acc = x;
                    else if (op == KILN_REDUCE_SUM)
                        acc += x;
                    else if (op == KILN_REDUCE_PROD)
                        acc *= x;
                    else if (op == KILN_REDUCE_MIN)
                        acc = x < acc ? x : acc;
                    else
                        acc = x > acc ? x : acc;
                    if (i == n - 1 || get(kd, k, i + 1) != get(kd, k, i)) {
                        if (r < (size_t)hc)
                            bad += get(vd, ov, r) != acc || get(kd, ok, r) != get(kd, k, i);
                        r++;
                    }
                }
                CHECK_MSG(hc == (int64_t)r && bad == 0,
                          "reduce_by_key %s/%s op %d n=%zu: %lld runs of "
                          "%zu, %zu wrong",
                          kiln_dtype_name(kd), kiln_dtype_name(vd), (int)op, n, (long long)hc, r,
                          bad);
            }
            KT_RELEASE(K, V, OK, OV);
            KT_FREE(k, v, ok, ov);
        }
    }
}

/* Bad input: clear errors, nothing enqueued, no crash. */
static void t_bad_input(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 100, small = 10, one = 1;
    kiln_array *X = NULL, *Y = NULL, *S = NULL, *F = NULL, *C32 = NULL, *Y2 = NULL,
               *cnt = scalar_count(c);
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &Y2));
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &n, 0, NULL, NULL, &X));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &Y));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &small, &S));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &F));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &one, &C32));
    int64_t hc;
    CHECK_STATUS(kiln_array_copy_if_out(q, Y, cnt, NULL, X, "x >", 0, NULL, NULL),
                 KILN_ERROR_BUILD);
    CHECK_MSG(strstr(kiln_last_error_message(), "predicate") != NULL, "%s",
              kiln_last_error_message());
    CHECK_STATUS(kiln_array_copy_if_out(q, Y, cnt, NULL, X, NULL, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_copy_if_out(q, Y, NULL, NULL, X, "x", 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_copy_if_out(q, F, cnt, NULL, X, "x", 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK(strstr(kiln_last_error_message(), "out") != NULL);
    CHECK_STATUS(kiln_array_copy_if_out(q, S, cnt, NULL, X, "x", 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_copy_if_out(q, X, cnt, NULL, X, "x", 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_copy_if_out(q, Y, C32, NULL, X, "x", 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK(strstr(kiln_last_error_message(), "count") != NULL);
    CHECK_STATUS(kiln_array_partition_out(q, Y, Y, NULL, &hc, X, "x", 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_unique_out(q, Y, F, NULL, &hc, X, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK(strstr(kiln_last_error_message(), "counts") != NULL);
    CHECK_STATUS(
        kiln_array_reduce_by_key_out(q, Y, F, NULL, &hc, X, S, KILN_REDUCE_SUM, 0, NULL, NULL),
        KILN_ERROR_MISMATCH);
    CHECK(strstr(kiln_last_error_message(), "values") != NULL);
    CHECK_STATUS(
        kiln_array_reduce_by_key_out(q, Y, F, NULL, &hc, X, X, KILN_REDUCE_NORM2, 0, NULL, NULL),
        KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(
        kiln_array_reduce_by_key_expr_out(q, Y, S, NULL, &hc, X, F, "a + b", "0", 0, NULL, NULL),
        KILN_ERROR_MISMATCH);
    CHECK_STATUS(
        kiln_array_reduce_by_key_expr_out(q, Y, Y2, NULL, &hc, X, X, "a +* b", "0", 0, NULL, NULL),
        KILN_ERROR_BUILD);
    CHECK(strstr(kiln_last_error_message(), "reduce") != NULL);
    /* arrays of another context */
    kiln_device *dev = kiln_queue_device(q);
    kiln_context *c2 = NULL;
    kiln_array *V2 = NULL, *cnt2 = NULL;
    if (CHECK_OK(kiln_context_create(&dev, 1, &c2)) &&
        CHECK_OK(kiln_array_empty(c2, KILN_INT32, 1, &n, &V2)) &&
        CHECK_OK(kiln_array_empty(c2, KILN_INT64, 1, &one, &cnt2))) {
        CHECK_STATUS(kiln_array_reduce_by_key_out(q, Y, Y2, NULL, &hc, X, V2, KILN_REDUCE_SUM, 0,
                                                  NULL, NULL),
                     KILN_ERROR_MISMATCH);
        CHECK(strstr(kiln_last_error_message(), "values") != NULL);
        CHECK_STATUS(kiln_array_copy_if_out(q, V2, cnt, NULL, X, "x", 0, NULL, NULL),
                     KILN_ERROR_MISMATCH);
        CHECK_STATUS(kiln_array_copy_if_out(q, Y, cnt2, NULL, X, "x", 0, NULL, NULL),
                     KILN_ERROR_MISMATCH);
        CHECK(strstr(kiln_last_error_message(), "count") != NULL);
        CHECK_STATUS(kiln_array_unique_out(q, Y, NULL, NULL, &hc, V2, 0, NULL, NULL),
                     KILN_ERROR_MISMATCH);
    }
    KT_RELEASE(V2, cnt2, c2);
    kiln_select *sel = NULL;
    CHECK_STATUS(kiln_select_create(c,
                                    &KILN_SELECT_DESC(.arguments = "const int *x, int *y",
                                                      .predicate = "x[i] >>> 2",
                                                      .output = "y[out_index] = x[i]"),
                                    &sel),
                 KILN_ERROR_BUILD);
    CHECK(sel == NULL && strstr(kiln_last_error_message(), "predicate") != NULL);
    CHECK_STATUS(kiln_select_create(c,
                                    &KILN_SELECT_DESC(.arguments = "const int *x, int *y",
                                                      .predicate = "x[i] > 2"),
                                    &sel),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_select_create(c,
                                    &KILN_SELECT_DESC(.arguments = "const int *x, "
                                                                   "int *kiln_count",
                                                      .predicate = "x[i] > 2", .output = "(void)0"),
                                    &sel),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_OK(kiln_select_create(c,
                                &KILN_SELECT_DESC(.arguments = "const int *x, int *y",
                                                  .predicate = "x[i] > 2",
                                                  .output = "y[out_index] = x[i]"),
                                &sel));
    kiln_arg a1[1] = { KILN_ARG_ARRAY(X) };
    kiln_arg a2[2] = { KILN_ARG_ARRAY(X), KILN_ARG_ARRAY(F) };
    size_t got = 0;
    CHECK_STATUS(kiln_select_run(q, sel, n, 1, a1, &got), KILN_ERROR_KERNEL_ARGS);
    CHECK_STATUS(kiln_select_run(q, sel, n, 2, a2, &got), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_select_run_async(q, sel, n, 2, a2, NULL, NULL, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_select_retain(NULL), KILN_ERROR_NULL_HANDLE);
    kiln_select_release(NULL);
    KT_RELEASE(sel, X, Y, S, F, C32, Y2, cnt);
}

int main(int argc, char **argv) {
    (void)argc;
    KT_FOR_EACH_DEVICE_STEPS(t_bad_input, t_predicates, t_none_all_alternate, t_2d_and_launch,
                             t_generator, t_unique, t_reduce_by_key);
    /* once more with the single-pass scan variant forced (a child, since
     * the variant knob is read once per process), keeping the stored
     * values in registers as the warp scan does (KILN_SCAN_KEEP=1: off by
     * default in the OpenCL single pass), so that CI runs that path */
    if (!getenv("KILN_SCAN_VARIANT")) {
        pid_t pid = fork();
        if (pid == 0) {
            setenv("KILN_SCAN_VARIANT", "onepass", 1);
            setenv("KILN_SCAN_KEEP", "1", 0);
            execv(argv[0], argv);
            _exit(127);
        }
        int status = 0;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        CHECK_MSG(rc == 0 || rc == 77, "the run with KILN_SCAN_VARIANT=onepass exited %d", rc);
    }
    return kt_report();
}
