/* a[i0, ..., ik-1] and a[i0, ..., ik-1] = v (kiln_array_index_many and
 * _put: one integer index array per leading axis, broadcast together, as
 * NumPy's integer-array indexing), against a serial C loop over the
 * broadcast positions: ranks 1-4, k from 1 to the rank, index arrays of
 * several integer dtypes and shapes (0-d, broadcast, empty), negative
 * indices, a strided a; an index out of its axis fails the event; bad
 * calls are refused with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { MAXD = 4, MAXK = 4 };

typedef struct {
    unsigned nd;            /* a's rank */
    size_t shape[MAXD];     /* a's shape */
    unsigned k;             /* index arrays */
    unsigned ind[MAXK];     /* each one's rank */
    size_t ishape[MAXK][2]; /* and shape (at most 2-D here) */
    kiln_dtype idt[MAXK];   /* and dtype */
} case_t;

/* The broadcast shape of the index arrays (right-aligned, 1 stretches). */
static unsigned bcast(const case_t *c, size_t *b) {
    unsigned nb = 0;
    for (unsigned j = 0; j < c->k; j++)
        nb = c->ind[j] > nb ? c->ind[j] : nb;
    for (unsigned d = 0; d < nb; d++)
        b[d] = 1;
    for (unsigned j = 0; j < c->k; j++)
        for (unsigned d = 0; d < c->ind[j]; d++) {
            size_t *t = &b[nb - c->ind[j] + d];
            if (*t == 1)
                *t = c->ishape[j][d];
        }
    return nb;
}

/* index j's value at broadcast position p (C order over b) */
static int64_t idx_at(const case_t *c, int64_t *const *ix, unsigned j, unsigned nb, const size_t *b,
                      size_t p) {
    size_t coord[2] = { 0, 0 }, flat = 0;
    for (unsigned d = nb; d-- > 0;) {
        size_t cd = p % b[d];
        p /= b[d];
        if (d >= nb - c->ind[j])
            coord[d - (nb - c->ind[j])] = c->ishape[j][d - (nb - c->ind[j])] == 1 ? 0 : cd;
    }
    for (unsigned d = 0; d < c->ind[j]; d++)
        flat = flat * c->ishape[j][d] + coord[d];
    return ix[j][flat];
}

static void release_all(size_t n, kiln_array **arrays) {
    for (size_t t = 0; t < n; t++)
        kiln_array_release(arrays[t]);
}

static size_t count(unsigned n, const size_t *s) {
    size_t r = 1;
    for (unsigned d = 0; d < n; d++)
        r *= s[d];
    return r;
}

static kiln_array *index_array(kiln_context *ctx, const case_t *c, unsigned j, int64_t *vals) {
    size_t n = count(c->ind[j], c->ishape[j]), es = kiln_dtype_size(c->idt[j]);
    unsigned char *raw = malloc(n * es + 1);
    for (size_t t = 0; t < n; t++) { /* in [-n, n) of its axis */
        int64_t v = (int64_t)(kt_rand_u64() % (2 * c->shape[j])) - (int64_t)c->shape[j];
        if (c->idt[j] == KILN_UINT16 && v < 0)
            v += (int64_t)c->shape[j]; /* unsigned: no negatives */
        vals[t] = v;
        if (es == 1) {
            int8_t x = (int8_t)v;
            memcpy(raw + t, &x, 1);
        } else if (es == 2) {
            uint16_t x = (uint16_t)v;
            memcpy(raw + 2 * t, &x, 2);
        } else if (es == 4) {
            int32_t x = (int32_t)v;
            memcpy(raw + 4 * t, &x, 4);
        } else {
            memcpy(raw + 8 * t, &v, 8);
        }
    }
    kiln_array *a = NULL;
    CHECK_OK(kiln_array_from_host(ctx, c->idt[j], c->ind[j], c->ishape[j], raw, &a));
    free(raw);
    return a;
}

/* The element of a (C order over its shape) that the indices pick at
 * broadcast position p and row element r. */
static size_t source(const case_t *c, int64_t *const *ix, unsigned nb, const size_t *b, size_t p,
                     size_t r) {
    size_t rest = count(c->nd - c->k, c->shape + c->k), flat = 0;
    for (unsigned j = 0; j < c->k; j++) {
        int64_t v = idx_at(c, ix, j, nb, b, p);
        flat = flat * c->shape[j] + (size_t)(v < 0 ? v + (int64_t)c->shape[j] : v);
    }
    return flat * rest + r;
}

static void check_case(kiln_queue *q, const case_t *c, int strided) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t n = count(c->nd, c->shape), b[MAXK], rest = count(c->nd - c->k, c->shape + c->k);
    unsigned nb = bcast(c, b);
    size_t m = count(nb, b);
    double *h = malloc((n + 1) * sizeof *h), *got = malloc((m * rest + 1) * sizeof *got);
    for (size_t t = 0; t < n; t++)
        h[t] = (double)t * 0.5 - 3.0;
    int64_t *ix[MAXK];
    kiln_array *I[MAXK];
    for (unsigned j = 0; j < c->k; j++) {
        ix[j] = malloc((count(c->ind[j], c->ishape[j]) + 1) * sizeof *ix[j]);
        I[j] = index_array(ctx, c, j, ix[j]);
    }
    kiln_array *A = NULL, *R = NULL;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT64, c->nd, c->shape, h, &A));
    if (strided)
        A = kt_strided_same(q, A);
    if (CHECK_OK(kiln_array_index_many(q, A, c->k, I, 0, NULL, &e, &R))) {
        CHECK_OK(kiln_event_wait(e));
        kiln_array_info in;
        CHECK_OK(kiln_array_get_info(R, &in));
        CHECK(in.ndim == nb + c->nd - c->k && in.size == m * rest);
        CHECK_OK(kiln_array_read(q, R, got));
        size_t bad = 0;
        for (size_t p = 0; p < m; p++)
            for (size_t r = 0; r < rest; r++)
                bad += got[p * rest + r] != h[source(c, ix, nb, b, p, r)];
        CHECK_MSG(bad == 0, "a[...] rank %u, k %u, strided %d: %zu of %zu wrong", c->nd, c->k,
                  strided, bad, m * rest);
    }
    kiln_event_release(e);
    kiln_array *held[] = { R, A };
    release_all(2, held);
    release_all(c->k, I);
    for (unsigned j = 0; j < c->k; j++)
        free(ix[j]);
    KT_FREE(h, got);
}

/* a[i, j] = v with repeated positions (the last wins), and = one value */
static void check_put(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t sa[2] = { 5, 3 }, ni = 6, nv = 6, one = 1;
    int32_t h[15], want[15], got[15], v[6], seven = 7;
    int64_t i0[6] = { 0, 4, -1, 2, 0, 3 }, i1[6] = { 1, 2, 2, -3, 1, 0 };
    for (int t = 0; t < 15; t++)
        h[t] = want[t] = t;
    for (int t = 0; t < 6; t++) {
        v[t] = 100 + t;
        size_t r = (size_t)(i0[t] < 0 ? i0[t] + 5 : i0[t]),
               s = (size_t)(i1[t] < 0 ? i1[t] + 3 : i1[t]);
        want[r * 3 + s] = v[t]; /* sequential: (0, 1) gets v[4] */
    }
    kiln_array *A = NULL, *I[2] = { NULL, NULL }, *V = NULL, *S = NULL;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT32, 2, sa, h, &A));
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 1, &ni, i0, &I[0]));
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 1, &ni, i1, &I[1]));
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT32, 1, &nv, v, &V));
    if (CHECK_OK(kiln_array_index_many_put(q, A, 2, I, V, 0, NULL, &e)))
        CHECK_OK(kiln_event_wait(e));
    kiln_event_release(e);
    e = NULL;
    CHECK_OK(kiln_array_read(q, A, got));
    CHECK(memcmp(got, want, sizeof got) == 0);
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT32, 1, &one, &seven, &S));
    if (CHECK_OK(kiln_array_index_many_put(q, A, 2, I, S, 0, NULL, &e)))
        CHECK_OK(kiln_event_wait(e));
    CHECK_OK(kiln_array_read(q, A, got));
    int sevens = 0;
    for (int t = 0; t < 15; t++)
        sevens += got[t] == 7;
    CHECK_MSG(sevens == 5, "a[i, j] = 7 set %d elements (5 distinct positions)", sevens);
    kiln_event_release(e);
    kiln_array *held[] = { A, I[0], I[1], V, S };
    release_all(5, held);
}

/* an index past its own axis fails the event, even where the merged
 * index would lie inside a (row 0, column 3 of a 4 x 3 array is element
 * 3); refusals name the call */
static void check_errors(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t sa[2] = { 4, 3 }, two = 2, three = 3;
    double h[12] = { 0 };
    int64_t r[2] = { 0, 1 }, col[2] = { 3, 0 }, c3[3] = { 0, 1, 2 };
    float fl[2] = { 0, 1 };
    kiln_array *A = NULL, *I[3] = { NULL, NULL, NULL }, *R = NULL, *F = NULL, *C3 = NULL;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT64, 2, sa, h, &A));
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 1, &two, r, &I[0]));
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 1, &two, col, &I[1]));
    if (CHECK_OK(kiln_array_index_many(q, A, 2, I, 0, NULL, &e, &R)))
        CHECK_STATUS(kiln_event_wait(e), KILN_ERROR_EVENT_FAILED);
    KT_RELEASE(e, R);
    R = NULL;
    e = NULL;
    I[2] = I[0];
    CHECK_STATUS(kiln_array_index_many(q, A, 3, I, 0, NULL, &e, &R), KILN_ERROR_OUT_OF_RANGE);
    CHECK(strstr(kiln_last_error_message(), "kiln_array_index_many") != NULL);
    CHECK_STATUS(kiln_array_index_many(q, A, 0, I, 0, NULL, &e, &R), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_array_index_many(q, A, 2, I, 0, NULL, NULL, &R), KILN_ERROR_NULL_HANDLE);
    CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &two, fl, &F));
    kiln_array *withf[2] = { I[0], F };
    CHECK_STATUS(kiln_array_index_many(q, A, 2, withf, 0, NULL, &e, &R), KILN_ERROR_MISMATCH);
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 1, &three, c3, &C3));
    kiln_array *clash[2] = { I[0], C3 }; /* (2,) and (3,) do not broadcast */
    CHECK_STATUS(kiln_array_index_many(q, A, 2, clash, 0, NULL, &e, &R), KILN_ERROR_MISMATCH);
    CHECK(strstr(kiln_last_error_message(), "indices[1]") != NULL);
    kiln_array *nul[2] = { I[0], NULL };
    CHECK_STATUS(kiln_array_index_many(q, A, 2, nul, 0, NULL, &e, &R), KILN_ERROR_NULL_HANDLE);
    CHECK(R == NULL && e == NULL);
    kiln_array *held[] = { A, I[0], I[1], F, C3 };
    release_all(5, held);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    static const case_t cases[] = {
        { 1, { 7 }, 1, { 1 }, { { 5 } }, { KILN_INT32 } },
        { 2, { 5, 7 }, 2, { 1, 1 }, { { 6 }, { 6 } }, { KILN_INT64, KILN_INT8 } },
        { 2, { 5, 7 }, 2, { 2, 1 }, { { 4, 1 }, { 3 } }, { KILN_INT32, KILN_UINT16 } },
        { 2, { 5, 7 }, 1, { 2 }, { { 2, 3 } }, { KILN_INT64 } },
        { 3, { 3, 4, 5 }, 2, { 0, 1 }, { { 0 }, { 9 } }, { KILN_INT64, KILN_INT32 } },
        { 3,
          { 3, 4, 5 },
          3,
          { 1, 2, 1 },
          { { 1 }, { 2, 13 }, { 13 } },
          { KILN_INT8, KILN_INT64, KILN_INT32 } },
        { 4,
          { 2, 3, 131, 2 },
          3,
          { 1, 1, 1 },
          { { 257 }, { 257 }, { 1 } },
          { KILN_INT32, KILN_INT32, KILN_INT64 } },
        { 2, { 5, 7 }, 2, { 1, 1 }, { { 0 }, { 1 } }, { KILN_INT64, KILN_INT64 } },
        { 4,
          { 3, 2, 2, 3 },
          4,
          { 0, 0, 0, 0 },
          { { 0 }, { 0 }, { 0 }, { 0 } },
          { KILN_INT64, KILN_INT32, KILN_INT8, KILN_UINT16 } },
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++)
        for (int strided = 0; strided < 2; strided++)
            check_case(q, &cases[t], strided);
    check_put(q);
    check_errors(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
