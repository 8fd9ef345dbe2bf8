/* histogram (equal bins over a range, explicit edges), bincount: every
 * dtype, awkward sizes, values on the edges, out of range and NaN, counts
 * and weights, privatised and global-atomic bin counts, strided views,
 * against serial references; bad input as errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int is_float(kiln_dtype d) {
    return d == KILN_FLOAT32 || d == KILN_FLOAT64;
}
static int is_signed(kiln_dtype d) {
    return d == KILN_INT8 || d == KILN_INT16 || d == KILN_INT32 || d == KILN_INT64 || is_float(d);
}

/* The bin of x over edges e[0..nb] (NumPy: e[b] <= x < e[b+1], the last
 * bin closed), -1 if none; a linear search, independent of the kernel's. */
static long ref_bin(double x, const double *e, size_t nb) {
    if (!(x >= e[0] && x <= e[nb]))
        return -1;
    if (x == e[nb]) {
        long b = (long)nb - 1;
        return b;
    }
    long b = -1;
    for (size_t k = 0; k < nb; k++)
        if (e[k] <= x && x < e[k + 1])
            b = (long)k;
    return b;
}

/* Random values around [lo, hi] (and exactly on edges) of dtype d. */
static void fill(kiln_dtype d, void *h, double *x, size_t n, double lo, double hi, const double *e,
                 size_t nb) {
    for (size_t i = 0; i < n; i++) {
        double v;
        uint64_t r = kt_rand_u64() % 10;
        if (r == 0)
            v = e[kt_rand_u64() % (nb + 1)]; /* on an edge */
        else if (is_float(d))
            v = lo - 0.1 * (hi - lo) + kt_rand_unit() * 1.2 * (hi - lo);
        else
            v = floor(lo - 3 + kt_rand_unit() * (hi - lo + 6));
        if (!is_signed(d) && v < 0)
            v = 0;
        kt_set(d, h, i, v);
        x[i] = kt_get(d, h, i);
    }
    if (is_float(d) && n > 2) {
        kt_set(d, h, 1, NAN);
        x[1] = NAN;
    }
}

static void check_counts(kiln_queue *q, kiln_array *H, const double *x, size_t n, const double *w,
                         const double *e, size_t nb, const char *label) {
    kiln_array_info hi;
    kiln_array_get_info(H, &hi);
    CHECK(hi.ndim == 1 && hi.size == nb);
    double *want = calloc(nb, sizeof *want);
    char *got = malloc(nb * 8);
    for (size_t i = 0; i < n; i++) {
        long b = ref_bin(x[i], e, nb);
        if (b >= 0)
            want[b] += w ? w[i] : 1;
    }
    CHECK_OK(kiln_array_read(q, H, got));
    int bad = 0;
    for (size_t b = 0; b < nb && bad < 3; b++) {
        double g = kt_get(hi.dtype, got, b);
        if (g != want[b])
            bad++;
        CHECK_MSG(g == want[b], "%s bin %zu: got %.17g want %.17g", label, b, g, want[b]);
    }
    KT_FREE(want, got);
}

static void check_uniform(kiln_queue *q, kiln_dtype d, size_t n, size_t nb, kiln_dtype wd) {
    kiln_context *c = kiln_queue_context(q);
    double lo = is_float(d) ? -1.5 : 2, hi = is_float(d) ? 2.25 : 100;
    if (!is_signed(d))
        lo = 0;
    /* NumPy's edges: linspace in double, rounded to float for float32 */
    double *e = malloc((nb + 1) * sizeof *e);
    for (size_t k = 0; k <= nb; k++) {
        e[k] = k == nb ? hi : lo + (double)k * ((hi - lo) / (double)nb);
        if (d == KILN_FLOAT32)
            e[k] = (float)e[k];
    }
    size_t es = kiln_dtype_size(d);
    char *h = malloc(n * es + 8);
    double *x = malloc(n * sizeof *x + 8), *w = NULL;
    fill(d, h, x, n, lo, hi, e, nb);
    kiln_array *A = NULL, *W = NULL, *H = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, h, &A));
    if (wd) {
        char *wh = malloc(n * 8 + 8);
        w = malloc(n * sizeof *w + 8);
        for (size_t i = 0; i < n; i++) {
            /* small integers: every order of the atomic adds is exact */
            kt_set(wd, wh, i, (double)(kt_rand_u64() % 9) - 2);
            w[i] = kt_get(wd, wh, i);
        }
        CHECK_OK(kiln_array_from_host(c, wd, 1, &n, wh, &W));
        free(wh);
    }
    char label[96];
    snprintf(label, sizeof label, "histogram %s n=%zu bins=%zu w=%s", kiln_dtype_name(d), n, nb,
             wd ? kiln_dtype_name(wd) : "-");
    kiln_event *ev = NULL;
    if (CHECK_OK(kiln_array_histogram(q, A, nb, lo, hi, W, 0, NULL, &ev, &H))) {
        CHECK_OK(kiln_event_wait(ev));
        kiln_event_release(ev);
        CHECK(kiln_array_dtype(H) == (wd ? wd : KILN_INT64));
        check_counts(q, H, x, n, w, e, nb, label);
    }
    KT_RELEASE(H, A, W);
    KT_FREE(h, x, w, e);
}

/* Explicit edges with a repeated edge, on a strided view of the input. */
static void check_edges(kiln_queue *q, kiln_dtype d) {
    kiln_context *c = kiln_queue_context(q);
    double e[7] = { -3, -1, 0.5, 0.5, 2, 7.25, 40 };
    size_t nb = 6, n = 2 * 1001;
    size_t es = kiln_dtype_size(d);
    char *h = malloc(n * es);
    double *xall = malloc(n * sizeof *xall), *x = malloc(n * sizeof *x);
    fill(d, h, xall, n, -4, 42, e, nb);
    for (size_t i = 0; i < n / 2; i++)
        x[i] = xall[2 * i + 1]; /* the view: odd elements */
    kiln_array *A = NULL, *V = NULL, *E = NULL, *H = NULL;
    size_t ne = 7;
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, h, &A));
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 1, &ne, e, &E));
    kiln_slice odd = KILN_SLICE(1, PTRDIFF_MAX, 2);
    CHECK_OK(kiln_array_view(A, &odd, &V));
    if (CHECK_OK(kiln_array_histogram_edges(q, V, E, NULL, 0, NULL, NULL, &H)))
        check_counts(q, H, x, n / 2, NULL, e, nb, "histogram_edges");
    kiln_array_release(H);
    /* edges out of order; too few; wrong dtype */
    double bad[3] = { 0, 2, 1 };
    kiln_array *B = NULL, *F = NULL;
    size_t three = 3, one = 1;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 1, &three, bad, &B));
    CHECK_STATUS(kiln_array_histogram_edges(q, A, B, NULL, 0, NULL, NULL, &H),
                 KILN_ERROR_INVALID_ARGUMENT);
    kiln_array_release(B);
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 1, &one, bad, &B));
    CHECK_STATUS(kiln_array_histogram_edges(q, A, B, NULL, 0, NULL, NULL, &H), KILN_ERROR_MISMATCH);
    float fe[3] = { 0, 1, 2 };
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 1, &three, fe, &F));
    CHECK_STATUS(kiln_array_histogram_edges(q, A, F, NULL, 0, NULL, NULL, &H), KILN_ERROR_MISMATCH);
    CHECK(H == NULL);
    KT_RELEASE(B, F, E, V, A);
    KT_FREE(h, xall, x);
}

static void check_bincount(kiln_queue *q, kiln_dtype d, size_t n, size_t top, size_t minlength,
                           kiln_dtype wd) {
    kiln_context *c = kiln_queue_context(q);
    size_t es = kiln_dtype_size(d);
    char *h = malloc(n * es + 8), *wh = malloc(n * 8 + 8);
    double *w = malloc(n * sizeof *w + 8);
    size_t len = minlength;
    for (size_t i = 0; i < n; i++) {
        size_t v = (size_t)(kt_rand_u64() % (top + 1));
        kt_set(d, h, i, (double)v);
        if (v + 1 > len)
            len = v + 1;
        if (wd) {
            kt_set(wd, wh, i, (double)(kt_rand_u64() % 5));
            w[i] = kt_get(wd, wh, i);
        }
    }
    kiln_array *A = NULL, *W = NULL, *H = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 1, &n, h, &A));
    if (wd)
        CHECK_OK(kiln_array_from_host(c, wd, 1, &n, wh, &W));
    if (CHECK_OK(kiln_array_bincount(q, A, W, minlength, &H))) {
        kiln_array_info hi;
        kiln_array_get_info(H, &hi);
        CHECK_MSG(hi.size == len, "bincount %s n=%zu: length %zu want %zu", kiln_dtype_name(d), n,
                  hi.size, len);
        CHECK(hi.dtype == (wd ? wd : KILN_INT64));
        if (hi.size == len && len) {
            double *want = calloc(len, sizeof *want);
            char *got = malloc(len * 8);
            for (size_t i = 0; i < n; i++)
                want[(size_t)kt_get(d, h, i)] += wd ? w[i] : 1;
            CHECK_OK(kiln_array_read(q, H, got));
            int ok = 1;
            for (size_t b = 0; b < len; b++)
                ok &= kt_get(hi.dtype, got, b) == want[b];
            CHECK_MSG(ok, "bincount %s n=%zu top=%zu", kiln_dtype_name(d), n, top);
            KT_FREE(want, got);
        }
    }
    KT_RELEASE(H, A, W);
    KT_FREE(h, wh, w);
}

static void check_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 10, m = 9;
    kiln_array *A = NULL, *W = NULL, *U = NULL, *H = (kiln_array *)1;
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &A));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &m, 0, NULL, NULL, &W));
    CHECK_OK(kiln_array_zeros(q, KILN_UINT8, 1, &n, 0, NULL, NULL, &U));
    CHECK_STATUS(kiln_array_histogram(q, A, 0, 0, 1, NULL, 0, NULL, NULL, &H),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(H == NULL);
    CHECK_STATUS(kiln_array_histogram(q, A, 4, 1, 0, NULL, 0, NULL, NULL, &H),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_histogram(q, A, 4, 0, INFINITY, NULL, 0, NULL, NULL, &H),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_histogram(q, A, 4, 0, NAN, NULL, 0, NULL, NULL, &H),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_histogram(q, A, 4, 0, 1, W, 0, NULL, NULL, &H), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_histogram(q, A, 4, 0, 1, U, 0, NULL, NULL, &H), KILN_ERROR_UNSUPPORTED);
    CHECK_STATUS(kiln_array_histogram(q, NULL, 4, 0, 1, NULL, 0, NULL, NULL, &H),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_histogram(q, A, 4, 0, 1, NULL, 0, NULL, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_bincount(q, A, NULL, 0, &H), KILN_ERROR_MISMATCH);
    /* complex: no order to bin by, refused with a pointer to real/imag */
    kiln_array *Z = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_COMPLEX64, 1, &n, 0, NULL, NULL, &Z));
    CHECK_STATUS(kiln_array_histogram(q, Z, 4, 0, 1, NULL, 0, NULL, NULL, &H),
                 KILN_ERROR_UNSUPPORTED);
    CHECK(strstr(kiln_last_error_message(), "kiln_array_real") != NULL);
    CHECK_STATUS(kiln_array_bincount(q, Z, NULL, 0, &H), KILN_ERROR_UNSUPPORTED);
    kiln_array_release(Z);
    int neg[3] = { 1, -2, 3 };
    size_t three = 3;
    kiln_array *N = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &three, neg, &N));
    CHECK_STATUS(kiln_array_bincount(q, N, NULL, 0, &H), KILN_ERROR_INVALID_ARGUMENT);
    kiln_array_release(N);
    /* bool counts as 0/1, as numpy.bincount([True, False, True, True]) = [1, 3] */
    uint8_t flags[4] = { 1, 0, 1, 1 };
    size_t four = 4;
    kiln_array *B = NULL;
    int64_t bc[2] = { -1, -1 };
    CHECK_OK(kiln_array_from_host(c, KILN_BOOL, 1, &four, flags, &B));
    if (CHECK_OK(kiln_array_bincount(q, B, NULL, 0, &H))) {
        CHECK(kiln_array_size(H) == 2 && CHECK_OK(kiln_array_read(q, H, bc)) && bc[0] == 1 &&
              bc[1] == 3);
        kiln_array_release(H);
    }
    kiln_array_release(B);
    /* minlength far past any count array: refused at once (above 2^63 it
     * hung, issue 41), with or without data */
    size_t huge[] = { ((size_t)1 << 63) + 1, SIZE_MAX, ((size_t)1 << 40) + 1 };
    for (size_t k = 0; k < sizeof huge / sizeof huge[0]; k++) {
        kiln_array *I = NULL;
        int iv[3] = { 0, 1, 2 };
        size_t len = k == 1 ? 0 : 3;
        CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, len ? &len : &three, iv, &I));
        if (!len) {
            kiln_array_release(I);
            I = NULL;
            CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &len, &I));
        }
        H = (kiln_array *)1;
        CHECK_STATUS(kiln_array_bincount(q, I, NULL, huge[k], &H), KILN_ERROR_INVALID_ARGUMENT);
        CHECK(H == NULL);
        CHECK(strstr(kiln_last_error_message(), "minlength") != NULL);
        kiln_array_release(I);
    }
    /* lo == hi: NumPy widens the range by 0.5 each side; all 10 zeros in
     * the middle bin of 3 */
    if (CHECK_OK(kiln_array_histogram(q, A, 3, 0, 0, NULL, 0, NULL, NULL, &H))) {
        int64_t got[3];
        CHECK_OK(kiln_array_read(q, H, got));
        CHECK(got[0] == 0 && got[1] == 10 && got[2] == 0);
        kiln_array_release(H);
    }
    /* empty input: zero counts; bincount of nothing: minlength zeros */
    size_t zero = 0;
    kiln_array *Zc = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &zero, &Zc));
    if (CHECK_OK(kiln_array_histogram(q, Zc, 5, 0, 1, NULL, 0, NULL, NULL, &H))) {
        int64_t got[5] = { 1, 1, 1, 1, 1 };
        CHECK_OK(kiln_array_read(q, H, got));
        CHECK(!got[0] && !got[1] && !got[2] && !got[3] && !got[4]);
        kiln_array_release(H);
    }
    if (CHECK_OK(kiln_array_bincount(q, Zc, NULL, 0, &H))) {
        CHECK(kiln_array_size(H) == 0);
        kiln_array_release(H);
    }
    if (CHECK_OK(kiln_array_bincount(q, Zc, NULL, 4, &H))) {
        CHECK(kiln_array_size(H) == 4);
        kiln_array_release(H);
    }
    KT_RELEASE(Zc, A, W, U);
}

/* Histograms with other ranges and bin counts enqueued back to back,
 * without waiting, on this queue and on an out-of-order one of the same
 * context: the equal-width edges live in a context scratch buffer reused
 * while the range stays the same and rewritten when it changes, and no
 * rewrite may reach a histogram that still reads the edges before it. */
static void check_alternating(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_queue *q2 = NULL;
    if (!CHECK_OK(kiln_queue_create(c, kiln_queue_device(q), KILN_QUEUE_OUT_OF_ORDER, &q2)))
        return;
    enum { K = 12 };
    size_t n = 70001;
    float *h = malloc(n * sizeof *h);
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        h[i] = (float)(kt_rand_u64() % 5000) / 1000.0f - 1.0f; /* [-1, 4) */
        x[i] = h[i];
    }
    kiln_array *A = NULL, *H[K] = { 0 };
    kiln_event *ev[K] = { 0 };
    double lo[K], hi[K];
    size_t nb[K];
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 1, &n, h, &A));
    for (int k = 0; k < K; k++) {
        /* the same range twice in a row now and then (a reuse), else new */
        lo[k] = (k / 2) % 3 == 0 ? -1.0 : k % 3 == 1 ? 0.0 : 0.5 - k * 0.01;
        hi[k] = lo[k] + 1.0 + (k % 4);
        nb[k] = 7 + (size_t)(k % 5) * 50;
        CHECK_OK(kiln_array_histogram(k % 3 == 2 ? q2 : q, A, nb[k], lo[k], hi[k], NULL, 0, NULL,
                                      &ev[k], &H[k]));
    }
    for (int k = 0; k < K; k++) {
        if (!H[k])
            continue;
        CHECK_OK(kiln_event_wait(ev[k]));
        kiln_event_release(ev[k]);
        double *e = malloc((nb[k] + 1) * sizeof *e);
        for (size_t b = 0; b <= nb[k]; b++)
            e[b] =
                (float)(b == nb[k] ? hi[k] : lo[k] + (double)b * ((hi[k] - lo[k]) / (double)nb[k]));
        char label[64];
        snprintf(label, sizeof label, "alternating histogram %d", k);
        check_counts(q, H[k], x, n, NULL, e, nb[k], label);
        free(e);
        kiln_array_release(H[k]);
    }
    KT_RELEASE(A, q2);
    KT_FREE(h, x);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 70000);
    for (size_t di = 0; di < KT_NDTYPES; di++) {
        kiln_dtype d = kt_dtypes[di];
        /* 7 and 256 bins: privatised; 5000: global atomics */
        for (size_t s = 0; s < ns; s += 3)
            check_uniform(q, d, sizes[s], 7, 0);
        check_uniform(q, d, 65537, 256, 0);
        check_uniform(q, d, 20011, 5000, 0);
        check_edges(q, d);
        if (!is_float(d)) {
            check_bincount(q, d, 1, 0, 0, 0);
            check_bincount(q, d, 10007, 100, 0, 0);
            check_bincount(q, d, 3001, 5, 20, 0);
            check_bincount(q, d, 30011, d == KILN_INT8 ? 127 : d == KILN_UINT8 ? 255 : 6000, 0, 0);
        }
    }
    static const kiln_dtype wds[4] = { KILN_FLOAT32, KILN_FLOAT64, KILN_INT32, KILN_INT64 };
    for (int k = 0; k < 4; k++) {
        check_uniform(q, KILN_FLOAT32, 4099, 17, wds[k]);
        check_uniform(q, KILN_INT16, 1025, 300, wds[k]);
        check_bincount(q, KILN_INT32, 5003, 77, 3, wds[k]);
    }
    check_alternating(q);
    check_errors(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
