/* Indexing as NumPy users write it (issue 42 item 4): a[idx], a[idx] = v,
 * a[mask], a[mask] = v on N-d arrays, against serial C loops at awkward
 * first-axis lengths; bad indices fail the event; refusals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int shape_is(const kiln_array *a, unsigned nd, const size_t *shape) {
    kiln_array_info in;
    if (!a || kiln_array_get_info(a, &in) != KILN_OK || in.ndim != nd)
        return 0;
    for (unsigned k = 0; k < nd; k++)
        if (in.shape[k] != shape[k])
            return 0;
    return 1;
}

static size_t norm(int64_t v, size_t n0) {
    return v < 0 ? (size_t)(v + (int64_t)n0) : (size_t)v;
}

/* a (n0, 3, 2) float32; idx (2, 3) int32 in [-n0, n0) */
static void check_index(kiln_queue *q, size_t n0) {
    kiln_context *c = kiln_queue_context(q);
    size_t sa[3] = { n0, 3, 2 }, si[2] = { 2, 3 }, so[4] = { 2, 3, 3, 2 }, r = 6;
    float *h = malloc(n0 * r * sizeof *h), got[36];
    int32_t idx[6];
    for (size_t k = 0; k < n0 * r; k++)
        h[k] = (float)k * 0.25f - 7.0f;
    for (int k = 0; k < 6; k++)
        idx[k] = (int32_t)(kt_rand_u64() % (2 * n0)) - (int32_t)n0;
    kiln_array *A = NULL, *I = NULL, *R = NULL;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 3, sa, h, &A));
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 2, si, idx, &I));
    if (CHECK_OK(kiln_array_index(q, A, I, 0, NULL, &e, &R))) {
        CHECK(shape_is(R, 4, so));
        CHECK_OK(kiln_event_wait(e));
        CHECK_OK(kiln_array_read(q, R, got));
        int bad = 0;
        for (int k = 0; k < 6; k++)
            for (size_t j = 0; j < r; j++)
                bad += got[k * r + j] != h[norm(idx[k], n0) * r + j];
        CHECK_MSG(bad == 0, "a[idx] n0=%zu: %d wrong", n0, bad);
    }
    KT_RELEASE(e, R, I);
    /* an index of n0 (one past the end) fails the event */
    int64_t badi[2] = { 0, (int64_t)n0 };
    size_t two = 2;
    e = NULL;
    R = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT64, 1, &two, badi, &I));
    if (CHECK_OK(kiln_array_index(q, A, I, 0, NULL, &e, &R)))
        CHECK_STATUS(kiln_event_wait(e), KILN_ERROR_EVENT_FAILED);
    KT_RELEASE(e, R, I, A);
    free(h);
}

/* a (n0, 4) int64: a[idx] = v (repeats: the last wins), a[idx] = 5 */
static void check_put(kiln_queue *q, size_t n0) {
    kiln_context *c = kiln_queue_context(q);
    size_t sa[2] = { n0, 4 }, ni = 7, nv = 28, one = 1;
    int64_t *h = malloc(n0 * 4 * sizeof *h), *want = malloc(n0 * 4 * sizeof *want),
            *got = malloc(n0 * 4 * sizeof *got), idx[7], v[28], five = 5;
    for (size_t k = 0; k < n0 * 4; k++)
        h[k] = want[k] = (int64_t)k;
    for (int k = 0; k < 7; k++)
        idx[k] = (int64_t)(kt_rand_u64() % (2 * n0)) - (int64_t)n0;
    for (int k = 0; k < 28; k++)
        v[k] = 1000 + k;
    for (int k = 0; k < 7; k++) /* sequential: the last wins */
        for (int j = 0; j < 4; j++)
            want[norm(idx[k], n0) * 4 + j] = v[k * 4 + j];
    kiln_array *A = NULL, *I = NULL, *V = NULL, *F = NULL;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT64, 2, sa, h, &A));
    CHECK_OK(kiln_array_from_host(c, KILN_INT64, 1, &ni, idx, &I));
    CHECK_OK(kiln_array_from_host(c, KILN_INT64, 1, &nv, v, &V));
    CHECK_OK(kiln_array_from_host(c, KILN_INT64, 1, &one, &five, &F));
    if (CHECK_OK(kiln_array_index_put(q, A, I, V, 0, NULL, &e))) {
        CHECK_OK(kiln_event_wait(e));
        CHECK_OK(kiln_array_read(q, A, got));
        CHECK_MSG(memcmp(got, want, n0 * 4 * sizeof *got) == 0, "a[idx] = v n0=%zu", n0);
    }
    kiln_event_release(e);
    e = NULL;
    for (int k = 0; k < 7; k++)
        for (int j = 0; j < 4; j++)
            want[norm(idx[k], n0) * 4 + j] = 5;
    if (CHECK_OK(kiln_array_index_put(q, A, I, F, 0, NULL, &e))) {
        CHECK_OK(kiln_event_wait(e));
        CHECK_OK(kiln_array_read(q, A, got));
        CHECK_MSG(memcmp(got, want, n0 * 4 * sizeof *got) == 0, "a[idx] = 5 n0=%zu", n0);
    }
    kiln_event_release(e);
    /* 3 values for 28 elements */
    size_t three = 3;
    kiln_array *V3 = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT64, 1, &three, v, &V3));
    e = NULL;
    CHECK_STATUS(kiln_array_index_put(q, A, I, V3, 0, NULL, &e), KILN_ERROR_MISMATCH);
    kiln_array *arrs[] = { A, I, V, F, V3 };
    for (size_t k = 0; k < 5; k++)
        kiln_array_release(arrs[k]);
    KT_FREE(h, want, got);
}

/* a[rows] = v on a (n0, 4) float64 that held h: the selected rows hold
 * want, the others h */
static void check_rows_put(kiln_queue *q, kiln_array *a, kiln_array *rows_mask, kiln_array *v,
                           const unsigned char *rows, const double *h, const double *want,
                           const char *what) {
    size_t n = kiln_array_size(a);
    double *got = malloc((n + 1) * sizeof *got);
    if (CHECK_OK(kiln_array_index_mask_put(q, a, rows_mask, v)) &&
        CHECK_OK(kiln_array_read(q, a, got))) {
        int bad = 0;
        for (size_t k = 0; k < n; k++)
            bad += got[k] != (rows[k / 4] ? want[k % 4] : h[k]);
        CHECK_MSG(bad == 0, "%s n0=%zu: %d wrong", what, n / 4, bad);
    }
    free(got);
}

/* a (n0, 4) float64: a[row mask], a[full mask], a[row mask] = -1, = a row */
static void check_mask(kiln_queue *q, size_t n0) {
    kiln_context *c = kiln_queue_context(q);
    size_t sa[2] = { n0, 4 }, n = n0 * 4, one = 1;
    double *h = malloc(n * sizeof *h), *got = malloc(n * sizeof *got), minus = -1;
    unsigned char *rows = malloc(n0), *full = malloc(n);
    size_t cr = 0, cf = 0;
    for (size_t k = 0; k < n; k++) {
        h[k] = (double)(kt_rand_u64() % 100) - 50;
        full[k] = h[k] > 0;
        cf += full[k];
    }
    for (size_t k = 0; k < n0; k++) {
        rows[k] = (unsigned char)(kt_rand_u64() & 1);
        cr += rows[k];
    }
    kiln_array *A = NULL, *MR = NULL, *MF = NULL, *R = NULL, *M1 = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 2, sa, h, &A));
    CHECK_OK(kiln_array_from_host(c, KILN_BOOL, 1, &n0, rows, &MR));
    CHECK_OK(kiln_array_from_host(c, KILN_BOOL, 2, sa, full, &MF));
    size_t sr[2] = { cr, 4 };
    if (CHECK_OK(kiln_array_index_mask(q, A, MR, &R))) {
        CHECK_MSG(shape_is(R, 2, sr), "a[rows] n0=%zu: shape (%zu, 4) wanted", n0, cr);
        if (cr && shape_is(R, 2, sr)) {
            CHECK_OK(kiln_array_read(q, R, got));
            int bad = 0;
            for (size_t k = 0, o = 0; k < n0; k++)
                if (rows[k])
                    for (size_t j = 0; j < 4; j++)
                        bad += got[o++] != h[k * 4 + j];
            CHECK_MSG(bad == 0, "a[rows] n0=%zu: %d wrong", n0, bad);
        }
    }
    kiln_array_release(R);
    R = NULL;
    if (CHECK_OK(kiln_array_index_mask(q, A, MF, &R))) {
        CHECK_MSG(shape_is(R, 1, &cf), "a[a > 0] n0=%zu: %zu wanted", n0, cf);
        if (cf && shape_is(R, 1, &cf)) {
            CHECK_OK(kiln_array_read(q, R, got));
            int bad = 0;
            for (size_t k = 0, o = 0; k < n; k++)
                if (full[k])
                    bad += got[o++] != h[k];
            CHECK_MSG(bad == 0, "a[a > 0] n0=%zu: %d wrong", n0, bad);
        }
    }
    kiln_array_release(R);
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 1, &one, &minus, &M1));
    double minus4[4] = { -1, -1, -1, -1 };
    check_rows_put(q, A, MR, M1, rows, h, minus4, "a[rows] = -1");
    /* a[rows] = row: one (4,) row broadcast to every selected row (the
     * size equals the selection's only when one row is picked) */
    double row[4] = { 7, -8, 9.5, 0.25 };
    size_t four = 4;
    kiln_array *ROW = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 1, &four, row, &ROW));
    check_rows_put(q, A, MR, ROW, rows, h, row, "a[rows] = row");
    kiln_array_release(ROW);
    /* a mask of another shape */
    size_t s3 = n0 + 1;
    kiln_array *MB = NULL;
    unsigned char *z = calloc(s3, 1);
    CHECK_OK(kiln_array_from_host(c, KILN_BOOL, 1, &s3, z, &MB));
    R = NULL;
    CHECK_STATUS(kiln_array_index_mask(q, A, MB, &R), KILN_ERROR_MISMATCH);
    CHECK(R == NULL);
    kiln_array *arrs[] = { A, MR, MF, M1, MB };
    for (size_t k = 0; k < 5; k++)
        kiln_array_release(arrs[k]);
    KT_FREE(h, got, rows, full, z);
}

static void check_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    double x = 1, f[2] = { 0, 1 };
    size_t two = 2;
    kiln_array *S = NULL, *F = NULL, *R = NULL;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 0, NULL, &x, &S));
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 1, &two, f, &F));
    CHECK_STATUS(kiln_array_index(q, S, F, 0, NULL, &e, &R), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_array_index(q, F, F, 0, NULL, &e, &R), KILN_ERROR_MISMATCH);
    CHECK(strstr(kiln_last_error_message(), "kiln_array_index") != NULL);
    CHECK_STATUS(kiln_array_index(q, F, F, 0, NULL, NULL, &R), KILN_ERROR_NULL_HANDLE);
    CHECK(R == NULL && e == NULL);
    KT_RELEASE(S, F);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    static const size_t n0s[] = { 1, 2, 7, 31, 33, 257 };
    for (size_t k = 0; k < sizeof n0s / sizeof *n0s; k++) {
        check_index(q, n0s[k]);
        check_put(q, n0s[k]);
        check_mask(q, n0s[k]);
    }
    check_errors(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
