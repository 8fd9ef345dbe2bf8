/* Gather, scatter and boolean masks (issue 12, item 1): take and put with
 * every data dtype and every integer index dtype, the three bounds modes,
 * repeated and out-of-range indices (a failed event, never a crash), the
 * deterministic and the atomic-add put (8/16-bit and float16 adds are
 * emulated), mask fill and assign, empty inputs and mismatches, against
 * serial C references. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "toolkit_ref.h"

static const kiln_dtype index_dtypes[8] = { KILN_INT8,  KILN_UINT8,  KILN_INT16, KILN_UINT16,
                                            KILN_INT32, KILN_UINT32, KILN_INT64, KILN_UINT64 };

/* The index value v stored in dtype it (clamped to what it can hold). */
static int64_t store_index(kiln_dtype it, void *p, size_t k, int64_t v) {
    double lo, hi;
    tr_range(it, &lo, &hi);
    if ((double)v < lo)
        v = (int64_t)lo;
    if ((double)v >= hi)
        v = (int64_t)(hi - 1);
    tr_store(it, p, k, (tr_val){ v, (uint64_t)v, 0 });
    return v;
}

/* The reference of an index of an axis of na elements under mode: the
 * position, or -1 when it is out of range (KILN_INDEX_ERROR). */
static int64_t resolve(int64_t j, int64_t na, kiln_index_mode mode) {
    if (mode == KILN_INDEX_CLIP)
        return j < 0 ? 0 : j >= na ? na - 1 : j;
    if (mode == KILN_INDEX_WRAP)
        return ((j % na) + na) % na;
    if (j < 0)
        j += na;
    return j < 0 || j >= na ? -1 : j;
}

static int event_ok(kiln_event *e) {
    kiln_status st = kiln_event_wait(e);
    kiln_event_release(e);
    return st == KILN_OK;
}

/* take of n indices (dtype it) from na elements of dtype d. bad: one index
 * out of range (KILN_INDEX_ERROR must then fail). */
static void check_take(kiln_queue *q, kiln_dtype d, kiln_dtype it, size_t na, size_t n,
                       kiln_index_mode mode, int bad, int strided) {
    kiln_context *c = kiln_queue_context(q);
    size_t ma = strided ? 2 * na : na;
    char *ha = malloc(ma * 8 + 8), *hi = malloc(n * 8 + 8), *got = malloc(n * 8 + 8),
         *want = malloc(n * 8 + 8);
    int64_t *ix = malloc((n + 1) * sizeof *ix);
    for (size_t k = 0; k < ma; k++)
        tr_random(d, ha, k, 0);
    int sgn = !tr_is_unsigned(it);
    for (size_t k = 0; k < n; k++) {
        int64_t span = mode == KILN_INDEX_ERROR ? (int64_t)na : 3 * (int64_t)na + 1;
        int64_t v = (int64_t)(kt_rand_u64() % (uint64_t)(span ? span : 1));
        if (sgn && (kt_rand_u64() & 1))
            v = -v - (mode == KILN_INDEX_ERROR ? 1 : 0);
        if (mode == KILN_INDEX_ERROR && v >= 0 && v >= (int64_t)na)
            v = 0;
        ix[k] = store_index(it, hi, k, v);
    }
    if (bad && n)
        ix[n / 2] = store_index(it, hi, n / 2, (int64_t)na + 5);
    kiln_array *A = NULL, *AV = NULL, *I = NULL, *O = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 1, &ma, ha, &A));
    kiln_slice s = KILN_SLICE(0, PTRDIFF_MAX, strided ? 2 : 1);
    CHECK_OK(kiln_array_view(A, &s, &AV));
    CHECK_OK(kiln_array_from_host(c, it, 1, &n, hi, &I));
    CHECK_OK(kiln_array_empty(c, d, 1, &n, &O));
    kiln_event *e = NULL;
    int any_bad = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t j = resolve(ix[k], (int64_t)na, mode);
        any_bad |= j < 0;
        tr_val v = j < 0 ? (tr_val){ 0, 0, 0 } : tr_load(d, ha, (size_t)j * (strided ? 2 : 1));
        tr_store(d, want, k, v);
    }
    if (CHECK_OK(kiln_array_take_out(q, O, AV, I, mode, 0, NULL, &e))) {
        int ok = event_ok(e);
        CHECK_MSG(ok == !any_bad,
                  "take %s[%s] mode %d: event %s, %s bad "
                  "index",
                  kiln_dtype_name(d), kiln_dtype_name(it), (int)mode, ok ? "ok" : "failed",
                  any_bad ? "a" : "no");
        CHECK_OK(kiln_array_read(q, O, got));
        int wrong = 0;
        for (size_t k = 0; k < n; k++)
            wrong += !tr_same(d, got, want, k);
        CHECK_MSG(wrong == 0, "take %s[%s] na=%zu n=%zu mode %d: %d wrong", kiln_dtype_name(d),
                  kiln_dtype_name(it), na, n, (int)mode, wrong);
    }
    KT_RELEASE(A, AV, I, O);
    KT_FREE(ha, hi, got, want, ix);
}

/* put of n values at random (repeating) indices of na elements. */
static void check_put(kiln_queue *q, kiln_dtype d, kiln_dtype it, size_t na, size_t n,
                      kiln_index_mode mode, kiln_put_mode put, int one_value) {
    kiln_context *c = kiln_queue_context(q);
    size_t nv = one_value ? 1 : n;
    char *ha = malloc(na * 8 + 8), *hv = malloc(nv * 8 + 8), *hi = malloc(n * 8 + 8),
         *got = malloc(na * 8 + 8), *want = malloc(na * 8 + 8);
    int64_t *ix = malloc((n + 1) * sizeof *ix);
    /* small integer values: float adds are exact in any order */
    for (size_t k = 0; k < na; k++)
        tr_random(d, ha, k, 1);
    for (size_t k = 0; k < nv; k++)
        tr_random(d, hv, k, 1);
    int64_t span = put == KILN_PUT_ASSIGN ? (int64_t)na : (int64_t)(na / 3 + 1);
    int sgn = !tr_is_unsigned(it) && mode != KILN_INDEX_CLIP;
    for (size_t k = 0; k < n; k++) {
        int64_t v = (int64_t)(kt_rand_u64() % (uint64_t)span);
        if (sgn && mode == KILN_INDEX_WRAP && (kt_rand_u64() & 1))
            v -= 2 * (int64_t)na;
        ix[k] = store_index(it, hi, k, v);
    }
    if (put == KILN_PUT_ASSIGN) { /* unique targets: a permutation prefix */
        for (size_t k = 0; k < n; k++)
            ix[k] = store_index(it, hi, k, (int64_t)((k * 7919) % na));
    }
    if (mode == KILN_INDEX_ERROR && n > 2) /* skipped, and the event fails */
        ix[1] = store_index(it, hi, 1, (int64_t)na);
    memcpy(want, ha, na * kiln_dtype_size(d));
    int any_bad = 0;
    for (size_t k = 0; k < n; k++) {
        int64_t j = resolve(ix[k], (int64_t)na, mode);
        if (j < 0) {
            any_bad = 1;
            continue;
        }
        tr_val v = tr_load(d, hv, one_value ? 0 : k);
        if (put == KILN_PUT_ADD) {
            tr_val w = tr_load(d, want, (size_t)j);
            w.i += v.i;
            w.u += v.u;
            w.f += v.f;
            v = w;
        }
        tr_store(d, want, (size_t)j, v); /* sequential: the last one wins */
    }
    kiln_array *A = NULL, *V = NULL, *I = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 1, &na, ha, &A));
    CHECK_OK(kiln_array_from_host(c, d, 1, &nv, hv, &V));
    CHECK_OK(kiln_array_from_host(c, it, 1, &n, hi, &I));
    kiln_event *e = NULL;
    if (CHECK_OK(kiln_array_put(q, A, I, V, mode, put, 0, NULL, &e))) {
        int ok = event_ok(e);
        CHECK_MSG(ok == !any_bad, "put %s[%s] mode %d: event %s", kiln_dtype_name(d),
                  kiln_dtype_name(it), (int)mode, ok ? "ok" : "failed");
        CHECK_OK(kiln_array_read(q, A, got));
        int wrong = 0;
        for (size_t k = 0; k < na; k++) {
            if (tr_same(d, got, want, k))
                continue;
            /* KILN_PUT_ASSIGN: a target named by several indices (narrow
             * index dtypes clamp to repeats) holds one of their values,
             * which one depends on scheduling (docs/algorithms.md) */
            int one_of = 0;
            for (size_t m = 0; put == KILN_PUT_ASSIGN && !one_of && m < n; m++)
                if (resolve(ix[m], (int64_t)na, mode) == (int64_t)k) {
                    tr_store(d, want, k, tr_load(d, hv, one_value ? 0 : m));
                    one_of = tr_same(d, got, want, k);
                }
            wrong += !one_of;
        }
        CHECK_MSG(wrong == 0, "put %d %s[%s] na=%zu n=%zu mode %d one=%d: %d wrong", (int)put,
                  kiln_dtype_name(d), kiln_dtype_name(it), na, n, (int)mode, one_value, wrong);
    }
    KT_RELEASE(A, V, I);
    KT_FREE(ha, hv, hi, got, want, ix);
}

static int truthy(kiln_dtype d, const void *p, size_t k) {
    tr_val v = tr_load(d, p, k);
    return tr_is_float(d) ? (v.f != 0 || v.f != v.f) : (v.i != 0 || v.u != 0);
}

/* a[mask] = value / values on a (rows, cols) array; transposed views for
 * strided: a and mask are then strided views. */
static void check_mask(kiln_queue *q, kiln_dtype d, kiln_dtype md, size_t rows, size_t cols,
                       int strided, int one, int extra) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = rows * cols, shape[2] = { rows, cols }, tshape[2] = { cols, rows };
    char *ha = malloc(n * 8 + 8), *hm = malloc(n * 8 + 8), *hv = malloc(n * 8 + 16),
         *got = malloc(n * 8 + 8), *want = malloc(n * 8 + 8);
    for (size_t k = 0; k < n; k++) {
        tr_random(d, ha, k, 0);
        tr_random(md, hm, k, 1);
    }
    if (tr_is_float(md) && n > 2) {
        tr_store(md, hm, 0, (tr_val){ 0, 0, NAN });
        tr_store(md, hm, 1, (tr_val){ 0, 0, -0.0 });
    }
    /* C order of the logical array: element (r, c) of the view */
    size_t count = 0;
    memcpy(want, ha, n * kiln_dtype_size(d));
    for (size_t r = 0; r < rows; r++)
        for (size_t cc = 0; cc < cols; cc++) {
            size_t at = strided ? cc * rows + r : r * cols + cc;
            if (truthy(md, hm, at))
                count++;
        }
    size_t nv = one ? 1 : count + (size_t)extra;
    for (size_t k = 0; k < nv; k++)
        tr_random(d, hv, k, 0);
    size_t pos = 0;
    for (size_t r = 0; r < rows; r++)
        for (size_t cc = 0; cc < cols; cc++) {
            size_t at = strided ? cc * rows + r : r * cols + cc;
            if (!truthy(md, hm, at))
                continue;
            if (one)
                tr_store(d, want, at, tr_load(d, hv, 0));
            else if (pos < nv)
                tr_store(d, want, at, tr_load(d, hv, pos));
            pos++;
        }
    kiln_array *A = NULL, *M = NULL, *V = NULL, *AV = NULL, *MV = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 2, strided ? tshape : shape, ha, &A));
    CHECK_OK(kiln_array_from_host(c, md, 2, strided ? tshape : shape, hm, &M));
    CHECK_OK(kiln_array_from_host(c, d, 1, &nv, hv, &V));
    if (strided) {
        CHECK_OK(kiln_array_swapaxes(A, 0, 1, &AV));
        CHECK_OK(kiln_array_swapaxes(M, 0, 1, &MV));
    } else {
        kiln_array_retain(A);
        kiln_array_retain(M);
        AV = A;
        MV = M;
    }
    kiln_event *e = NULL;
    kiln_status st = one ? kiln_array_mask_fill(q, AV, MV, kt_arg(d, hv), 0, NULL, &e)
                         : kiln_array_mask_assign(q, AV, MV, V, 0, NULL, &e);
    if (CHECK_OK(st)) {
        int ok = event_ok(e);
        CHECK_MSG(ok == (extra == 0), "mask %s/%s extra %d: event %s", kiln_dtype_name(d),
                  kiln_dtype_name(md), extra, ok ? "ok" : "failed");
        CHECK_OK(kiln_array_read(q, A, got));
        int wrong = 0;
        for (size_t k = 0; k < n; k++)
            wrong += !tr_same(d, got, want, k);
        CHECK_MSG(wrong == 0, "mask %s %s/%s %zux%zu strided %d: %d wrong", one ? "fill" : "assign",
                  kiln_dtype_name(d), kiln_dtype_name(md), rows, cols, strided, wrong);
    }
    KT_RELEASE(A, M, V, AV, MV);
    KT_FREE(ha, hm, hv, got, want);
}

static void check_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t s3 = 3, s4 = 4, s0 = 0;
    kiln_array *f = NULL, *i = NULL, *o = NULL, *e0 = NULL, *i4 = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &s3, 0, NULL, NULL, &f));
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &s3, 0, NULL, NULL, &i));
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &s4, 0, NULL, NULL, &i4));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &s3, &o));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &s0, &e0));
    kiln_event *e = NULL;
    /* float indices */
    CHECK_STATUS(kiln_array_take_out(q, o, f, f, KILN_INDEX_CLIP, 0, NULL, &e),
                 KILN_ERROR_MISMATCH);
    /* out of another dtype / shape */
    CHECK_STATUS(kiln_array_take_out(q, i, f, i, KILN_INDEX_CLIP, 0, NULL, &e),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_take_out(q, o, f, i4, KILN_INDEX_CLIP, 0, NULL, &e),
                 KILN_ERROR_MISMATCH);
    /* KILN_INDEX_ERROR needs the event it reports through */
    CHECK_STATUS(kiln_array_take_out(q, o, f, i, KILN_INDEX_ERROR, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_take_out(q, o, f, i, (kiln_index_mode)7, 0, NULL, &e),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* nothing to clip or wrap to */
    CHECK_STATUS(kiln_array_take_out(q, o, e0, i, KILN_INDEX_WRAP, 0, NULL, &e),
                 KILN_ERROR_OUT_OF_RANGE);
    /* an empty a in error mode: every index is bad, the event fails */
    if (CHECK_OK(kiln_array_take_out(q, o, e0, i, KILN_INDEX_ERROR, 0, NULL, &e)))
        CHECK(!event_ok(e));
    /* put: values of another dtype or count */
    CHECK_STATUS(kiln_array_put(q, f, i, i, KILN_INDEX_CLIP, KILN_PUT_ASSIGN, 0, NULL, &e),
                 KILN_ERROR_MISMATCH);
    kiln_array *f4 = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &s4, 0, NULL, NULL, &f4));
    CHECK_STATUS(kiln_array_put(q, f, i, f4, KILN_INDEX_CLIP, KILN_PUT_ADD, 0, NULL, &e),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_put(q, f, i, f, KILN_INDEX_CLIP, (kiln_put_mode)9, 0, NULL, &e),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* empty indices: nothing happens, the event completes */
    kiln_array *ie = NULL, *oe = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &s0, &ie));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &s0, &oe));
    if (CHECK_OK(kiln_array_take_out(q, oe, f, ie, KILN_INDEX_ERROR, 0, NULL, &e)))
        CHECK(event_ok(e));
    if (CHECK_OK(kiln_array_put(q, f, ie, oe, KILN_INDEX_ERROR, KILN_PUT_ADD, 0, NULL, &e)))
        CHECK(event_ok(e));
    /* masks: another shape; a count check needs the event */
    CHECK_STATUS(kiln_array_mask_fill(q, f, i4, KILN_ARG_F32(3), 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_mask_assign(q, f, i, f, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_mask_assign(q, f, i, i, 0, NULL, &e), KILN_ERROR_MISMATCH);
    CHECK_OK(kiln_queue_finish(q));
    KT_RELEASE(f, f4, i, i4, o, e0, ie, oe);
}

static int has_int64_atomics(kiln_queue *q) {
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    return info.backend == KILN_BACKEND_CUDA || strstr(kiln_device_extensions(kiln_queue_device(q)),
                                                       "cl_khr_int64_base_atomics") != NULL;
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    int a64 = has_int64_atomics(q);
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 20000);
    for (int k = 0; k < TR_N; k++) {
        kiln_dtype d = tr_all[k];
        if (d == KILN_FLOAT64 && !info.fp64)
            continue;
        for (int m = 0; m < 3; m++) {
            kiln_dtype it = index_dtypes[(k + m) % 8];
            kiln_index_mode mode = (kiln_index_mode)m;
            check_take(q, d, it, 1000, 3001, mode, 0, k & 1);
            if (mode == KILN_INDEX_ERROR)
                check_take(q, d, it, 97, 500, mode, 1, 0);
            check_put(q, d, it, 1000, 900, mode, KILN_PUT_ASSIGN, 0);
            check_put(q, d, it, 1000, 3001, mode, KILN_PUT_ASSIGN_LAST, 0);
            if (kiln_dtype_size(d) < 8 || a64)
                check_put(q, d, it, 1000, 3001, mode, KILN_PUT_ADD, m == 1);
        }
        check_mask(q, d, tr_all[(k + 3) % TR_N], 17, 31, k & 1, 1, 0);
        check_mask(q, d, tr_all[(k + 5) % TR_N], 17, 31, !(k & 1), 0, 0);
    }
    /* awkward sizes: the index count and the array size */
    for (size_t s = 0; s < ns; s++) {
        size_t n = sizes[s];
        if (n)
            check_take(q, KILN_FLOAT32, KILN_INT64, n, n, KILN_INDEX_WRAP, 0, s & 1);
        check_take(q, KILN_INT16, KILN_UINT32, 257, n, KILN_INDEX_CLIP, 0, 0);
        if (n)
            check_put(q, KILN_UINT8, KILN_INT32, n / 4 + 1, n, KILN_INDEX_WRAP, KILN_PUT_ADD, 0);
        check_put(q, KILN_FLOAT16, KILN_INT64, 300, n, KILN_INDEX_CLIP, KILN_PUT_ADD, 0);
        check_mask(q, KILN_INT32, KILN_UINT8, n, 1, 0, 0, 0);
    }
    /* a count of values that does not match the mask fails the event */
    check_mask(q, KILN_FLOAT32, KILN_INT8, 9, 13, 0, 0, 2);
    check_mask(q, KILN_FLOAT32, KILN_INT8, 9, 13, 1, 0, -1);
    check_errors(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
