/* a[key] and a[key] = v with keys that mix slices, integers and integer
 * arrays (kiln_array_index_key and _put, NumPy's advanced indexing),
 * against NumPy's answers (tests/numpy_index_keys.h, made by
 * scripts/gen-numpy-tables.py --index-keys): 400 random keys on arrays of
 * rank 1-4 (empty axes, negative and out-of-range slice bounds, negative
 * indices, broadcast index arrays of several integer dtypes, adjacent and
 * split blocks, out-of-range indices), each through a dense and a strided
 * a, and puts of values broadcast to the selection; a 0-d array; bad calls are refused with a
 * message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "numpy_index_keys.h"

#define NUM_CASES (sizeof np_key / sizeof np_key[0])

static size_t count(unsigned n, const size_t *s) {
    size_t r = 1;
    for (unsigned d = 0; d < n; d++)
        r *= s[d];
    return r;
}

static size_t differ(const int64_t *got, const int64_t *want, size_t n) {
    size_t bad = 0;
    for (size_t j = 0; j < n; j++)
        bad += got[j] != want[j];
    return bad;
}

/* case t's index array for axis d, in one of four integer dtypes */
static kiln_array *index_array(kiln_context *ctx, size_t t, unsigned d) {
    static const kiln_dtype dts[] = { KILN_INT64, KILN_INT32, KILN_INT8, KILN_INT16 };
    kiln_dtype dt = dts[(t + d) % 4];
    size_t n = count(np_key[t].ind[d], np_key[t].ishape[d]), es = kiln_dtype_size(dt);
    const int64_t *v = np_key_ivals + np_key[t].ioff[d];
    unsigned char *raw = malloc(n * es + 1);
    for (size_t j = 0; j < n; j++) {
        int64_t x64 = v[j];
        int32_t x32 = (int32_t)v[j];
        int16_t x16 = (int16_t)v[j];
        int8_t x8 = (int8_t)v[j];
        const void *src = es == 8   ? (const void *)&x64
                          : es == 4 ? (const void *)&x32
                          : es == 2 ? (const void *)&x16
                                    : (const void *)&x8;
        memcpy(raw + j * es, src, es);
    }
    kiln_array *r = NULL;
    CHECK_OK(kiln_array_from_host(ctx, dt, np_key[t].ind[d], np_key[t].ishape[d], raw, &r));
    free(raw);
    return r;
}

/* a = arange(size).reshape(shape) as int64, dense or strided */
static kiln_array *source_array(kiln_queue *q, size_t t, int strided) {
    unsigned nd = np_key[t].nd;
    size_t n = count(nd, np_key[t].shape);
    int64_t *h = malloc((n + 1) * sizeof *h);
    for (size_t j = 0; j < n; j++)
        h[j] = (int64_t)j;
    kiln_array *a = NULL;
    CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_INT64, nd, np_key[t].shape, h, &a));
    free(h);
    return strided ? kt_strided_same(q, a) : a;
}

/* the case's key; *idx gets the index arrays made for it (NULL elsewhere) */
static void make_key(kiln_context *ctx, size_t t, kiln_index_key *key, kiln_array **idx) {
    for (unsigned d = 0; d < np_key[t].nk; d++) {
        idx[d] = NULL;
        if (np_key[t].kind[d] == KILN_INDEX_SLICE)
            key[d] =
                KILN_KEY_SLICE(np_key[t].slice[d][0], np_key[t].slice[d][1], np_key[t].slice[d][2]);
        else if (np_key[t].kind[d] == KILN_INDEX_INTEGER)
            key[d] = KILN_KEY_INT(np_key[t].integer[d]);
        else
            key[d] = KILN_KEY_ARRAY(idx[d] = index_array(ctx, t, d));
    }
}

/* NumPy's IndexError: refused at once (an integer) or the event fails (an
 * array's index) */
static void check_refused(kiln_status st, kiln_event *e, const char *what) {
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    CHECK_MSG(st == KILN_ERROR_OUT_OF_RANGE || st == KILN_ERROR_EVENT_FAILED,
              "%s of an out-of-range key gave %s", what, kiln_status_name(st));
}

static void check_get(kiln_queue *q, size_t t, int strided, const kiln_index_key *key) {
    kiln_array *a = source_array(q, t, strided), *r = NULL;
    kiln_event *e = NULL;
    kiln_status st = kiln_array_index_key(q, a, np_key[t].nk, key, 0, NULL, &e, &r);
    if (!np_key[t].ok) {
        check_refused(st, e, "a[key]");
    } else if (CHECK_OK(st) && CHECK_OK(kiln_event_wait(e))) {
        kiln_array_info in;
        CHECK_OK(kiln_array_get_info(r, &in));
        size_t m = count(np_key[t].rnd, np_key[t].rshape);
        int shape_ok = in.ndim == np_key[t].rnd &&
                       memcmp(in.shape, np_key[t].rshape, in.ndim * sizeof *in.shape) == 0;
        CHECK_MSG(shape_ok, "case %zu: a[key] has rank %u, NumPy's %u", t, in.ndim, np_key[t].rnd);
        int64_t *got = malloc((m + 1) * sizeof *got);
        if (shape_ok && CHECK_OK(kiln_array_read(q, r, got))) {
            size_t bad = differ(got, np_key_rvals + np_key[t].roff, m);
            CHECK_MSG(bad == 0, "case %zu (strided %d): %zu of %zu elements differ from NumPy's", t,
                      strided, bad, m);
        }
        free(got);
    }
    KT_RELEASE(e, r, a);
}

/* z = zeros(a's shape); z[key] = v (vnd, vshape); z against want (NULL:
 * the key is out of range, refused) */
static void put_and_compare(kiln_queue *q, size_t t, const kiln_index_key *key, unsigned vnd,
                            const size_t *vshape, const int64_t *v, const int64_t *want,
                            const char *what) {
    size_t n = count(np_key[t].nd, np_key[t].shape);
    int64_t *got = malloc((n + 1) * sizeof *got);
    kiln_array *a = NULL, *vals = NULL;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_INT64, np_key[t].nd, np_key[t].shape, 0, NULL, NULL, &a));
    CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_INT64, vnd, vshape, v, &vals));
    kiln_status st = kiln_array_index_key_put(q, a, np_key[t].nk, key, vals, 0, NULL, &e);
    if (!want) {
        check_refused(st, e, what);
    } else if (CHECK_OK(st) && CHECK_OK(kiln_event_wait(e)) &&
               CHECK_OK(kiln_array_read(q, a, got))) {
        size_t bad = differ(got, want, n);
        CHECK_MSG(bad == 0, "case %zu: %s: %zu of %zu elements differ from NumPy's", t, what, bad,
                  n);
    }
    KT_RELEASE(e, vals, a);
    free(got);
}

/* z[key] = arange(1, m + 1) in C order, one value per selected element */
static void check_put(kiln_queue *q, size_t t, const kiln_index_key *key) {
    size_t m = count(np_key[t].rnd, np_key[t].rshape), nv = m ? m : 1;
    int64_t *v = malloc(nv * sizeof *v);
    for (size_t j = 0; j < nv; j++)
        v[j] = (int64_t)j + 1;
    put_and_compare(q, t, key, 1, &nv, v, np_key[t].ok ? np_key_rvals + np_key[t].roff + m : NULL,
                    "a[key] = v");
    free(v);
}

/* a[key] = v with v of a shape that broadcasts to the selection's: the
 * selection's dimensions kept or made 1 by the case's number, a leading 1
 * for every third case. The reference assigns in the selection's C order
 * (the last repeat wins, as in NumPy) at the flat positions NumPy's a[key]
 * of arange gave. */
static void check_put_broadcast(kiln_queue *q, size_t t, const kiln_index_key *key) {
    unsigned rnd = np_key[t].rnd, lead = t % 3 == 0 && rnd < 8, vnd = rnd + lead;
    if (!np_key[t].ok)
        return;
    size_t vshape[9] = { 1 }, n = count(np_key[t].nd, np_key[t].shape);
    size_t m = count(rnd, np_key[t].rshape);
    for (unsigned d = 0; d < rnd; d++)
        vshape[lead + d] = (t >> d) & 1 ? np_key[t].rshape[d] : 1;
    size_t nv = count(vnd, vshape);
    int64_t *v = malloc((nv + 1) * sizeof *v), *want = calloc(n + 1, sizeof *want);
    for (size_t k = 0; k < nv; k++)
        v[k] = 100 + (int64_t)k;
    for (size_t j = 0; j < m; j++) {
        size_t rest = j, vi = 0, vstride = 1;
        for (unsigned d = rnd; d-- > 0;) {
            size_t x = rest % np_key[t].rshape[d];
            rest /= np_key[t].rshape[d];
            vi += (vshape[lead + d] == 1 ? 0 : x) * vstride;
            vstride *= vshape[lead + d];
        }
        want[np_key_rvals[np_key[t].roff + j]] = v[vi];
    }
    put_and_compare(q, t, key, vnd, vshape, v, want, "a[key] = v broadcast");
    KT_FREE(v, want);
}

/* values that do not broadcast to the selection: refused, naming both */
static void check_put_mismatch(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t sa[3] = { 4, 3, 5 }, two = 2, four = 4, vs[2] = { 2, 5 };
    int64_t h[60] = { 0 }, ix[2] = { 1, 3 };
    kiln_array *a = NULL, *i = NULL, *v4 = NULL, *v25 = NULL;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 3, sa, h, &a));
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 1, &two, ix, &i));
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 1, &four, h, &v4));
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 2, vs, h, &v25));
    CHECK_STATUS(kiln_array_index_put(q, a, i, v4, 0, NULL, &e), KILN_ERROR_MISMATCH);
    CHECK(strstr(kiln_last_error_message(), "(4,)") != NULL &&
          strstr(kiln_last_error_message(), "(2, 3, 5)") != NULL);
    /* (2, 5) against (2, 3, 5): the 2 meets the 3 */
    CHECK_STATUS(kiln_array_index_put(q, a, i, v25, 0, NULL, &e), KILN_ERROR_MISMATCH);
    CHECK(e == NULL);
    kiln_array *held[] = { a, i, v4, v25 };
    kt_release_arrays(4, held);
}

/* a 0-d array: the empty key gives a 0-d copy */
static void check_scalar(kiln_queue *q) {
    double h = 2.5, got = 0;
    kiln_array *arrays[2] = { NULL, NULL }; /* a, a[()] */
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_from_host(kiln_queue_context(q), KILN_FLOAT64, 0, NULL, &h, &arrays[0]));
    if (CHECK_OK(kiln_array_index_key(q, arrays[0], 0, NULL, 0, NULL, &e, &arrays[1])) &&
        CHECK_OK(kiln_event_wait(e)) && CHECK_OK(kiln_array_read(q, arrays[1], &got))) {
        kiln_array_info in;
        CHECK_OK(kiln_array_get_info(arrays[1], &in));
        CHECK(in.ndim == 0 && in.size == 1 && got == 2.5);
    }
    kiln_event_release(e);
    kt_release_arrays(2, arrays);
}

/* NumPy checks the indices where a slice empties the result (x[0:0, [7]]
 * raises), not where the indices broadcast to nothing (x[[], [9]] is
 * empty) */
static void check_empty(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t sa[2] = { 3, 4 }, one = 1, none = 0;
    double h[12] = { 0 };
    int64_t seven = 7, nine = 9;
    kiln_array *a = NULL, *i7 = NULL, *i9 = NULL, *i0 = NULL, *r[2] = { NULL, NULL };
    kiln_event *e[2] = { NULL, NULL };
    CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT64, 2, sa, h, &a));
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 1, &one, &seven, &i7));
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT64, 1, &one, &nine, &i9));
    CHECK_OK(kiln_array_empty(ctx, KILN_INT64, 1, &none, &i0));
    kiln_index_key sliced[2] = { KILN_KEY_SLICE(0, 0, 1), KILN_KEY_ARRAY(i7) };
    kiln_index_key nothing[2] = { KILN_KEY_ARRAY(i0), KILN_KEY_ARRAY(i9) };
    /* both in flight before either is waited for */
    kiln_status st = kiln_array_index_key(q, a, 2, sliced, 0, NULL, &e[0], &r[0]);
    CHECK(st != KILN_ERROR_OUT_OF_RANGE || strstr(kiln_last_error_message(), "out of range"));
    kiln_status st1 = kiln_array_index_key(q, a, 2, nothing, 0, NULL, &e[1], &r[1]);
    CHECK_STATUS(st, KILN_ERROR_OUT_OF_RANGE);
    if (CHECK_OK(st1) && CHECK_OK(kiln_event_wait(e[1]))) {
        kiln_array_info in;
        CHECK_OK(kiln_array_get_info(r[1], &in));
        CHECK(in.ndim == 1 && in.shape[0] == 0);
    }
    KT_RELEASE(e[0], e[1]);
    kiln_array *held[] = { a, i7, i9, i0, r[0], r[1] };
    kt_release_arrays(6, held);
}

static void check_errors(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t sa[2] = { 4, 3 }, two = 2;
    double h[12] = { 0 };
    float fl[2] = { 0, 1 };
    kiln_array *a = NULL, *f = NULL, *r = NULL, *tv = NULL, *vals = NULL;
    kiln_event *e = NULL;
    CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT64, 2, sa, h, &a));
    CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &two, fl, &f));
    CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT64, 1, &two, h, &vals));
    kiln_index_key three[3] = { KILN_KEY_ALL, KILN_KEY_ALL, KILN_KEY_ALL };
    CHECK_STATUS(kiln_array_index_key(q, a, 3, three, 0, NULL, &e, &r), KILN_ERROR_OUT_OF_RANGE);
    CHECK(strstr(kiln_last_error_message(), "kiln_array_index_key") != NULL);
    kiln_index_key step0[1] = { KILN_KEY_SLICE(0, 2, 0) };
    CHECK_STATUS(kiln_array_index_key(q, a, 1, step0, 0, NULL, &e, &r),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "step 0") != NULL);
    kiln_index_key past[2] = { KILN_KEY_ALL, KILN_KEY_INT(3) };
    CHECK_STATUS(kiln_array_index_key(q, a, 2, past, 0, NULL, &e, &r), KILN_ERROR_OUT_OF_RANGE);
    CHECK(strstr(kiln_last_error_message(), "index 3") != NULL);
    kiln_index_key flt[1] = { KILN_KEY_ARRAY(f) };
    CHECK_STATUS(kiln_array_index_key(q, a, 1, flt, 0, NULL, &e, &r), KILN_ERROR_MISMATCH);
    kiln_index_key nul[1] = { KILN_KEY_ARRAY(NULL) };
    CHECK_STATUS(kiln_array_index_key(q, a, 1, nul, 0, NULL, &e, &r), KILN_ERROR_NULL_HANDLE);
    kiln_index_key kind[1] = { { .kind = (kiln_index_kind)7 } };
    CHECK_STATUS(kiln_array_index_key(q, a, 1, kind, 0, NULL, &e, &r), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "kind 7") != NULL);
    CHECK_STATUS(kiln_array_index_key(q, a, 1, NULL, 0, NULL, &e, &r), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_index_key(q, a, 0, NULL, 0, NULL, NULL, &r), KILN_ERROR_NULL_HANDLE);
    CHECK(r == NULL && e == NULL);
    /* the put needs a dense a and an event */
    CHECK_OK(kiln_array_swapaxes(a, 0, 1, &tv));
    kiln_index_key row[1] = { KILN_KEY_INT(0) };
    CHECK_STATUS(kiln_array_index_key_put(q, tv, 1, row, vals, 0, NULL, &e),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "dense") != NULL);
    CHECK_STATUS(kiln_array_index_key_put(q, a, 1, row, vals, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    kiln_array *held[] = { a, f, tv, vals };
    kt_release_arrays(4, held);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_context *ctx = kiln_queue_context(q);
    for (size_t t = 0; t < NUM_CASES; t++) {
        kiln_index_key key[4];
        kiln_array *idx[4] = { NULL, NULL, NULL, NULL };
        make_key(ctx, t, key, idx);
        check_get(q, t, 0, key);
        check_get(q, t, 1, key);
        check_put(q, t, key);
        check_put_broadcast(q, t, key);
        for (unsigned d = 0; d < 4; d++)
            kiln_array_release(idx[d]);
    }
    check_scalar(q);
    check_empty(q);
    check_errors(q);
    check_put_mismatch(q);
    printf("%zu keys checked against NumPy %s\n", NUM_CASES, NP_INDEX_KEYS_NUMPY_VERSION);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
