/* The result convention (docs/api.md rule 21, issue 42 item 5): the
 * new-array forms against serial C references (and against their _out
 * forms' shapes and dtypes), right-sized selections, the non-blocking
 * bincount and hash-table inserts, at awkward sizes; and their refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static kiln_array *from_f64(kiln_queue *q, unsigned nd, const size_t *shape, const double *h) {
    kiln_array *a = NULL;
    CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_FLOAT64, nd, shape, h, &a));
    return a;
}

static int info_is(const kiln_array *a, kiln_dtype d, unsigned nd, const size_t *shape) {
    kiln_array_info in;
    if (!a || kiln_array_get_info(a, &in) != KILN_OK)
        return 0;
    if (in.dtype != d || in.ndim != nd || !in.contiguous)
        return 0;
    for (unsigned k = 0; k < nd; k++)
        if (in.shape[k] != shape[k])
            return 0;
    return 1;
}

/* a op b through kiln_array_binary: a new array of dtype d and shape so
 * (2-D), waited for and read into h; NULL if the call failed. */
static kiln_array *binary_read(kiln_queue *q, kiln_binary_op op, kiln_array *a, kiln_array *b,
                               kiln_dtype d, const size_t *so, void *h) {
    kiln_array *r = NULL;
    kiln_event *e = NULL;
    if (CHECK_OK(kiln_array_binary(q, op, a, b, 0, NULL, &e, &r))) {
        CHECK(info_is(r, d, 2, so));
        CHECK_OK(kiln_event_wait(e));
        CHECK_OK(kiln_array_read(q, r, h));
    }
    kiln_event_release(e);
    return r;
}

/* binary with broadcasting (3,1) + (1,n), comparisons to bool, unary,
 * astype, copy of a transposed view, where, clip, cumsum. */
static void check_elementwise(kiln_queue *q, size_t n) {
    size_t sa[2] = { 3, 1 }, sb[2] = { 1, n }, so[2] = { 3, n }, st[2] = { n, 3 };
    double ha[3] = { -1.5, 0.0, 2.25 }, *hb = malloc((n + 1) * sizeof *hb);
    double *got = malloc((3 * n + 1) * sizeof *got);
    unsigned char *gb = malloc(3 * n + 1);
    for (size_t j = 0; j < n; j++)
        hb[j] = (double)j * 0.5 - 3.0;
    kiln_array *A = from_f64(q, 2, sa, ha), *B = from_f64(q, 2, sb, hb);
    kiln_array *R = binary_read(q, KILN_OP_ADD, A, B, KILN_FLOAT64, so, got);
    if (R) {
        int bad = 0;
        for (size_t i = 0; i < 3; i++)
            for (size_t j = 0; j < n; j++)
                bad += got[i * n + j] != ha[i] + hb[j];
        CHECK_MSG(bad == 0, "binary add (3,1)+(1,%zu): %d wrong", n, bad);
    }
    kiln_array *C = binary_read(q, KILN_OP_LT, A, B, KILN_BOOL, so, gb);
    if (C) {
        int bad = 0;
        for (size_t i = 0; i < 3; i++)
            for (size_t j = 0; j < n; j++)
                bad += gb[i * n + j] != (ha[i] < hb[j]);
        CHECK_MSG(bad == 0, "binary lt: %d wrong", bad);
    }
    /* where(C, R, 0-d 7.0), clip, cumsum, unary and astype of R */
    kiln_array *S = NULL, *W = NULL, *K = NULL, *U = NULL, *I = NULL, *T = NULL, *TC = NULL,
               *CS = NULL;
    double seven = 7.0;
    S = from_f64(q, 0, NULL, &seven);
    CHECK_OK(kiln_array_where(q, C, R, S, 0, NULL, NULL, &W));
    CHECK_OK(kiln_array_clip(q, R, KILN_ARG_F64(-1.0), KILN_ARG_F64(1.0), 0, NULL, NULL, &K));
    CHECK_OK(kiln_array_unary(q, KILN_OP_ABS, R, 0, NULL, NULL, &U));
    CHECK_OK(kiln_array_astype(q, R, KILN_INT32, 0, NULL, NULL, &I));
    CHECK_OK(kiln_array_swapaxes(R, 0, 1, &T));
    CHECK_OK(kiln_array_copy(q, T, 0, NULL, NULL, &TC));
    CHECK_OK(kiln_array_cumsum(q, B, 0, 0, NULL, NULL, &CS));
    CHECK(info_is(W, KILN_FLOAT64, 2, so) && info_is(K, KILN_FLOAT64, 2, so) &&
          info_is(U, KILN_FLOAT64, 2, so) && info_is(I, KILN_INT32, 2, so) &&
          info_is(TC, KILN_FLOAT64, 2, st) && info_is(CS, KILN_FLOAT64, 2, sb));
    if (W && K && U && I && TC && CS && R && C) {
        double *r = malloc((3 * n + 1) * sizeof *r);
        int32_t *gi = malloc((3 * n + 1) * sizeof *gi);
        CHECK_OK(kiln_array_read(q, R, r));
        int bad = 0;
        CHECK_OK(kiln_array_read(q, W, got));
        for (size_t k = 0; k < 3 * n; k++)
            bad += got[k] != (gb[k] ? r[k] : 7.0);
        CHECK_OK(kiln_array_read(q, K, got));
        for (size_t k = 0; k < 3 * n; k++)
            bad += got[k] != fmin(fmax(r[k], -1.0), 1.0);
        CHECK_OK(kiln_array_read(q, U, got));
        for (size_t k = 0; k < 3 * n; k++)
            bad += got[k] != fabs(r[k]);
        CHECK_OK(kiln_array_read(q, I, gi));
        for (size_t k = 0; k < 3 * n; k++)
            bad += gi[k] != (int32_t)r[k];
        CHECK_OK(kiln_array_read(q, TC, got));
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < 3; i++)
                bad += got[j * 3 + i] != r[i * n + j];
        CHECK_OK(kiln_array_read(q, CS, got));
        double acc = 0;
        for (size_t j = 0; j < n; j++) {
            acc += hb[j];
            bad += got[j] != acc;
        }
        CHECK_MSG(bad == 0, "where/clip/abs/astype/copy/cumsum n=%zu: %d wrong", n, bad);
        KT_FREE(r, gi);
    }
    kiln_array *arrs[] = { A, B, R, C, S, W, K, U, I, T, TC, CS };
    for (size_t k = 0; k < sizeof arrs / sizeof *arrs; k++)
        kiln_array_release(arrs[k]);
    KT_FREE(hb, got, gb);
}

static int cmp_f32(const void *x, const void *y) {
    float a = *(const float *)x, b = *(const float *)y;
    return (a > b) - (a < b);
}

/* sort, argsort, searchsorted, take: new arrays against qsort */
static void check_sort(kiln_queue *q, size_t n) {
    float *h = malloc((n + 1) * sizeof *h), *want = malloc((n + 1) * sizeof *want),
          *got = malloc((n + 1) * sizeof *got);
    int64_t *idx = malloc((n + 1) * sizeof *idx);
    for (size_t k = 0; k < n; k++)
        h[k] = (float)(kt_rand_u64() % 1000) - 500.0f;
    memcpy(want, h, n * sizeof *h);
    qsort(want, n, sizeof *want, cmp_f32);
    kiln_array *A = NULL, *S = NULL, *I = NULL, *P = NULL, *G = NULL;
    CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_FLOAT32, 1, &n, h, &A));
    if (CHECK_OK(kiln_array_sort(q, A, NULL, 0, NULL, NULL, &S))) {
        CHECK(info_is(S, KILN_FLOAT32, 1, &n));
        CHECK_OK(kiln_array_read(q, S, got));
        CHECK_MSG(memcmp(got, want, n * sizeof *got) == 0, "sort n=%zu", n);
    }
    if (CHECK_OK(kiln_array_argsort(q, A, NULL, 0, NULL, NULL, &I))) {
        CHECK(info_is(I, KILN_INT64, 1, &n));
        CHECK_OK(kiln_array_read(q, I, idx));
        int bad = 0;
        for (size_t k = 0; k < n; k++)
            bad += idx[k] < 0 || (size_t)idx[k] >= n || h[idx[k]] != want[k];
        CHECK_MSG(bad == 0, "argsort n=%zu: %d wrong", n, bad);
        /* take(a, argsort(a)) is sort(a) */
        kiln_event *e = NULL;
        if (CHECK_OK(kiln_array_take(q, A, I, KILN_INDEX_ERROR, 0, NULL, &e, &G))) {
            CHECK_OK(kiln_event_wait(e));
            CHECK(info_is(G, KILN_FLOAT32, 1, &n));
            CHECK_OK(kiln_array_read(q, G, got));
            CHECK_MSG(memcmp(got, want, n * sizeof *got) == 0, "take of argsort n=%zu", n);
        }
        kiln_event_release(e);
    }
    if (S && CHECK_OK(kiln_array_searchsorted(q, S, A, 0, 0, NULL, NULL, &P))) {
        CHECK(info_is(P, KILN_INT64, 1, &n));
        CHECK_OK(kiln_array_read(q, P, idx));
        int bad = 0;
        for (size_t k = 0; k < n; k++) {
            size_t j = 0;
            while (j < n && want[j] < h[k])
                j++;
            bad += idx[k] != (int64_t)j;
        }
        CHECK_MSG(bad == 0, "searchsorted n=%zu: %d wrong", n, bad);
    }
    KT_RELEASE(A, S, I, P, G);
    KT_FREE(h, want, got, idx);
}

/* copy_if and unique give arrays of exactly the selected length */
static void check_select(kiln_queue *q, size_t n) {
    int32_t *h = malloc((n + 1) * sizeof *h), *got = malloc((n + 1) * sizeof *got);
    int64_t *cnt = malloc((n + 1) * sizeof *cnt);
    for (size_t k = 0; k < n; k++)
        h[k] = (int32_t)(kt_rand_u64() % 7) - 3 + (int32_t)(k / 5) * 0;
    kiln_array *A = NULL, *O = NULL, *U = NULL, *UC = NULL;
    CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_INT32, 1, &n, h, &A));
    if (CHECK_OK(kiln_array_copy_if(q, A, "x > 0", &O))) {
        size_t c = 0;
        for (size_t k = 0; k < n; k++)
            c += h[k] > 0;
        CHECK_MSG(info_is(O, KILN_INT32, 1, &c), "copy_if n=%zu: size %zu wanted, %zu given", n, c,
                  kiln_array_size(O));
        if (c && kiln_array_size(O) == c) {
            CHECK_OK(kiln_array_read(q, O, got));
            int bad = 0;
            for (size_t k = 0, j = 0; k < n; k++)
                if (h[k] > 0)
                    bad += got[j++] != h[k];
            CHECK_MSG(bad == 0, "copy_if n=%zu: %d wrong", n, bad);
        }
    }
    if (CHECK_OK(kiln_array_unique(q, A, &U, &UC))) {
        size_t runs = 0;
        for (size_t k = 0; k < n; k++)
            runs += k == 0 || h[k] != h[k - 1];
        CHECK_MSG(info_is(U, KILN_INT32, 1, &runs) && info_is(UC, KILN_INT64, 1, &runs),
                  "unique n=%zu: %zu runs wanted", n, runs);
        if (runs && kiln_array_size(U) == runs && kiln_array_size(UC) == runs) {
            CHECK_OK(kiln_array_read(q, U, got));
            CHECK_OK(kiln_array_read(q, UC, cnt));
            int bad = 0;
            size_t r = 0;
            for (size_t k = 0; k < n; r++) {
                size_t e = k;
                while (e < n && h[e] == h[k])
                    e++;
                bad += got[r] != h[k] || cnt[r] != (int64_t)(e - k);
                k = e;
            }
            CHECK_MSG(bad == 0, "unique n=%zu: %d wrong", n, bad);
        }
    }
    KT_RELEASE(A, O, U, UC);
    KT_FREE(h, got, cnt);
}

/* bincount_async with a given length (values past it are not counted) */
static void check_bincount(kiln_queue *q, size_t n) {
    int32_t *h = malloc((n + 1) * sizeof *h);
    const size_t len = 37;
    int64_t want[37] = { 0 }, got[37];
    for (size_t k = 0; k < n; k++) {
        h[k] = (int32_t)(kt_rand_u64() % 45);
        if (h[k] < (int32_t)len)
            want[h[k]]++;
    }
    kiln_array *A = NULL, *R = NULL;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_INT32, 1, &n, h, &A));
    if (CHECK_OK(kiln_array_bincount_async(q, A, NULL, len, 0, NULL, &e, &R))) {
        CHECK(info_is(R, KILN_INT64, 1, &len));
        CHECK_OK(kiln_event_wait(e));
        CHECK_OK(kiln_array_read(q, R, got));
        CHECK_MSG(memcmp(got, want, sizeof got) == 0, "bincount_async n=%zu", n);
    }
    KT_RELEASE(e, A, R);
    free(h);
}

/* insert_async/add_async, then lookup; a full table fails the event */
static void check_hash(kiln_queue *q) {
    enum { N = 1000 };
    kiln_context *c = kiln_queue_context(q);
    int32_t keys[N], vals[N], got[N];
    for (int k = 0; k < N; k++) {
        keys[k] = k * 7 + 1;
        vals[k] = k;
    }
    size_t n = N;
    kiln_hash_table *t = NULL;
    kiln_array *K = NULL, *V = NULL, *G = NULL;
    CHECK_OK(kiln_hash_table_create(q, 2048, KILN_INT32, KILN_INT32, &t));
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, keys, &K));
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, vals, &V));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &G));
    kiln_event *e1 = NULL, *e2 = NULL, *e3 = NULL;
    const int32_t missing = -5;
    if (t && CHECK_OK(kiln_hash_table_insert_async(q, t, K, V, 0, NULL, &e1)) &&
        CHECK_OK(kiln_hash_table_add_async(q, t, K, V, 1, &e1, &e2)) &&
        CHECK_OK(kiln_hash_table_lookup(q, t, K, G, KILN_ARG_I32(missing), NULL, 1, &e2, &e3))) {
        CHECK_OK(kiln_event_wait(e3));
        CHECK_OK(kiln_array_read(q, G, got));
        int bad = 0;
        for (int k = 0; k < N; k++)
            bad += got[k] != 2 * vals[k];
        CHECK_MSG(bad == 0, "insert_async + add_async: %d wrong", bad);
    }
    KT_RELEASE(e1, e2, e3, t);
    /* a table of capacity 64 cannot take 1000 keys: the event fails */
    t = NULL;
    e1 = NULL;
    CHECK_OK(kiln_hash_table_create(q, 64, KILN_INT32, KILN_INT32, &t));
    if (t && CHECK_OK(kiln_hash_table_insert_async(q, t, K, V, 0, NULL, &e1)))
        CHECK_STATUS(kiln_event_wait(e1), KILN_ERROR_EVENT_FAILED);
    kiln_event_release(e1);
    /* the blocking form after it still says what happened, its own way */
    if (t)
        CHECK_STATUS(kiln_hash_table_insert(q, t, K, V), KILN_ERROR_OUT_OF_RANGE);
    KT_RELEASE(t, K, V, G);
}

static void check_matmul(kiln_queue *q) {
    size_t sa[3] = { 2, 3, 4 }, sb[2] = { 4, 5 }, so[3] = { 2, 3, 5 };
    double ha[24], hb[20], got[30];
    for (int k = 0; k < 24; k++)
        ha[k] = k - 11;
    for (int k = 0; k < 20; k++)
        hb[k] = 0.5 * k - 3;
    kiln_array *A = from_f64(q, 3, sa, ha), *B = from_f64(q, 2, sb, hb), *C = NULL;
    kiln_event *e = NULL;
    kiln_status st = kiln_linalg_matmul(q, A, B, 0, NULL, &e, &C);
    if (st == KILN_ERROR_NO_RUNTIME || st == KILN_ERROR_UNSUPPORTED) {
        printf("matmul: %s (no BLAS here), left out\n", kiln_last_error_message());
    } else if (CHECK_OK(st)) {
        CHECK(info_is(C, KILN_FLOAT64, 3, so));
        CHECK_OK(kiln_event_wait(e));
        CHECK_OK(kiln_array_read(q, C, got));
        int bad = 0;
        for (int b = 0; b < 2; b++)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 5; j++) {
                    double s = 0;
                    for (int k = 0; k < 4; k++)
                        s += ha[b * 12 + i * 4 + k] * hb[k * 5 + j];
                    bad += fabs(got[b * 15 + i * 5 + j] - s) > 1e-12 * (1 + fabs(s));
                }
        CHECK_MSG(bad == 0, "matmul (2,3,4)@(4,5): %d wrong", bad);
    }
    KT_RELEASE(e, A, B, C);
}

/* reductions over axes with initial=, empty axes included */
static void check_reduce_initial(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t se[2] = { 3, 0 }, s2[2] = { 4, 5 }, three = 3, five = 5;
    float fi = 5.0f, got[5];
    int32_t h[20], ii = 7, gi[5];
    for (int k = 0; k < 20; k++)
        h[k] = (k * 37) % 23 - 11;
    kiln_array *E = NULL, *A = NULL, *R = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 2, se, &E));
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 2, s2, h, &A));
    CHECK_STATUS(kiln_array_reduce_axis(q, KILN_REDUCE_MIN, E, 1, 0, 0, NULL, NULL, &R),
                 KILN_ERROR_INVALID_ARGUMENT);
    if (CHECK_OK(kiln_array_reduce_axis_initial(q, KILN_REDUCE_MIN, E, -1, KILN_ARG_F32(fi), 0, 0,
                                                NULL, NULL, &R))) {
        CHECK(info_is(R, KILN_FLOAT32, 1, &three));
        CHECK_OK(kiln_array_read(q, R, got));
        CHECK(got[0] == 5.0f && got[1] == 5.0f && got[2] == 5.0f);
    }
    kiln_array_release(R);
    R = NULL;
    static const kiln_reduce_op ops[3] = { KILN_REDUCE_MAX, KILN_REDUCE_MIN, KILN_REDUCE_SUM };
    for (int o = 0; o < 3; o++) {
        int axis = 0;
        if (!CHECK_OK(kiln_array_reduce_axes_initial(q, ops[o], A, 1, &axis, KILN_ARG_I32(ii), 0, 0,
                                                     NULL, NULL, &R)))
            continue;
        CHECK(info_is(R, KILN_INT32, 1, &five));
        CHECK_OK(kiln_array_read(q, R, gi));
        int bad = 0;
        for (int j = 0; j < 5; j++) {
            int32_t w = ii;
            for (int i = 0; i < 4; i++) {
                int32_t v = h[i * 5 + j];
                w = o == 0 ? (v > w ? v : w) : o == 1 ? (v < w ? v : w) : w + v;
            }
            bad += gi[j] != w;
        }
        CHECK_MSG(bad == 0, "reduce_axes_initial op %d: %d wrong", (int)ops[o], bad);
        kiln_array_release(R);
        R = NULL;
    }
    CHECK_STATUS(kiln_array_reduce_axis_initial(q, KILN_REDUCE_ARGMIN, A, 0, KILN_ARG_I32(ii), 0, 0,
                                                NULL, NULL, &R),
                 KILN_ERROR_INVALID_ARGUMENT);
    KT_RELEASE(E, A);
}

static void check_errors(kiln_queue *q) {
    size_t n = 4, m = 5;
    double h[5] = { 1, 2, 3, 4, 5 };
    kiln_array *A = from_f64(q, 1, &n, h), *B = from_f64(q, 1, &m, h), *R = A;
    CHECK_STATUS(kiln_array_binary(q, KILN_OP_ADD, A, B, 0, NULL, NULL, &R),
                 KILN_ERROR_MISMATCH); /* (4,) and (5,) do not broadcast */
    CHECK(R == NULL);
    CHECK(strstr(kiln_last_error_message(), "kiln_array_binary") != NULL);
    R = A;
    CHECK_STATUS(kiln_array_binary(q, KILN_OP_BITWISE_AND, A, A, 0, NULL, NULL, &R),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(R == NULL);
    CHECK(strstr(kiln_last_error_message(), "bitwise_and") != NULL);
    CHECK_STATUS(kiln_array_sort(q, NULL, NULL, 0, NULL, NULL, &R), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_sort(q, A, NULL, 0, NULL, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_copy_if(q, A, "x >", &R), KILN_ERROR_BUILD);
    CHECK(R == NULL);
    CHECK_STATUS(kiln_array_bincount_async(q, A, NULL, 3, 0, NULL, NULL, &R),
                 KILN_ERROR_MISMATCH); /* float input */
    KT_RELEASE(A, B);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 1100);
    for (size_t s = 0; s < ns; s++) {
        if (sizes[s])
            check_elementwise(q, sizes[s]);
        check_sort(q, sizes[s]);
        check_select(q, sizes[s]);
        check_bincount(q, sizes[s]);
    }
    KT_STEPS(q, check_hash, check_matmul, check_reduce_initial, check_errors);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
