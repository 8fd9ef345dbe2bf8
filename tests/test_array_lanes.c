/* kiln's own elementwise operators (add and the other binary operators,
 * binary_scalar, unary, axpy, where, fill, astype) and built-in
 * reductions (sum, max, any, dot; their GPU stage 1 reads in lanes too) on contiguous 1-D views at
 * offsets 0..4 elements, every dtype, awkward sizes: on GPUs these run in
 * lanes (4 items a work-item, one access per array when every array is
 * aligned for it, the scalar loop when one is not, and for the last n % 4
 * items; src/algo/gen/elementwise.c). ctest runs it again with KILN_PLAN_GPU=1
 * so that PoCL runs the lanes kernels; KILN_EW_LANES=0 turns them off.
 * Each result against a serial C loop (toolkit_ref.h), every element. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "toolkit_ref.h"

/* A 1-D view of n elements at element offset off of a fresh array of
 * n + off + 1 elements (one more after it: a store past the view shows),
 * with random host data. */
typedef struct lane_arr {
    kiln_dtype d;
    size_t n, off;
    char *host; /* the whole base array */
    kiln_array *base, *view;
} lane_arr;

/* CHECK that gives its verdict (host allocations) */
static int need(int ok, const char *what) {
    CHECK_MSG(ok, "%s", what);
    return ok;
}

static int make(kiln_queue *q, kiln_dtype d, size_t n, size_t off, int small, lane_arr *a) {
    memset(a, 0, sizeof *a);
    a->d = d;
    a->n = n;
    a->off = off;
    size_t total = n + off + 1, es = kiln_dtype_size(d);
    a->host = malloc(total * es);
    if (!need(a->host != NULL, "host memory"))
        return 0;
    for (size_t k = 0; k < total; k++)
        tr_random(d, a->host, k, small);
    kiln_slice s = KILN_SLICE((ptrdiff_t)off, (ptrdiff_t)(off + n), 1);
    return CHECK_OK(kiln_array_from_host(kiln_queue_context(q), d, 1, &total, a->host, &a->base)) &&
           CHECK_OK(kiln_array_view(a->base, &s, &a->view));
}

static void drop(lane_arr *a) {
    KT_RELEASE(a->view, a->base);
    free(a->host);
    memset(a, 0, sizeof *a);
}

static tr_val at(const lane_arr *a, size_t i) {
    return tr_load(a->d, a->host, a->off + i);
}

/* Reads the whole base array of out back and compares the view's elements
 * with want (n elements of out's dtype) and the rest with out's host data
 * (untouched). */
static void compare(kiln_queue *q, const lane_arr *out, const char *want, const char *what) {
    size_t total = out->n + out->off + 1, es = kiln_dtype_size(out->d);
    char *got = malloc(total * es);
    if (!need(got != NULL, "host memory") || !CHECK_OK(kiln_array_read(q, out->base, got))) {
        free(got);
        return;
    }
    size_t bad = 0, first = 0;
    for (size_t k = 0; k < total; k++) {
        int in = k >= out->off && k < out->off + out->n;
        int ok = in ? tr_same(out->d, got + k * es, want + (k - out->off) * es, 0)
                    : tr_same(out->d, got, out->host, k);
        if (!ok && !bad++)
            first = k;
    }
    CHECK_MSG(bad == 0, "%s %s n=%zu out offset %zu: %zu wrong, first at base index %zu", what,
              kiln_dtype_name(out->d), out->n, out->off, bad, first);
    free(got);
}

/* out = a OP b (dtypes da, db; out of the promoted dtype), offsets oa, ob,
 * oo; in place (out is a) when inplace and the dtypes allow. */
static void check_binary(kiln_queue *q, kiln_binary_op op, kiln_dtype da, kiln_dtype db, size_t n,
                         const size_t off[3], int inplace) {
    kiln_dtype p = kiln_dtype_promote(da, db);
    inplace = inplace && p == da;
    lane_arr A, B, O;
    int ok = make(q, da, n, off[0], 0, &A) && make(q, db, n, off[1], 0, &B) &&
             (inplace || make(q, p, n, off[2], 0, &O));
    lane_arr *out = inplace ? &A : &O;
    char *want = malloc((n + 1) * kiln_dtype_size(p));
    if (ok && need(want != NULL, "host memory") &&
        CHECK_OK(kiln_array_binary_out(q, op, out->view, A.view, B.view, 0, NULL, NULL))) {
        for (size_t i = 0; i < n; i++)
            tr_store(p, want, i,
                     tr_binary(op, p, tr_cast(da, p, at(&A, i)), tr_cast(db, p, at(&B, i))));
        char what[64];
        snprintf(what, sizeof what, "binary op %d %s,%s%s", (int)op, kiln_dtype_name(da),
                 kiln_dtype_name(db), inplace ? " in place" : "");
        compare(q, out, want, what);
    }
    free(want);
    drop(&A);
    drop(&B);
    if (!inplace)
        drop(&O);
}

/* out = a * 3 (binary_scalar), out = -a (unary), z = 2*a + b (axpy),
 * out = c ? a : b (where, c int8), fill with a's element 0; one dtype. */
static void check_same_dtype(kiln_queue *q, kiln_dtype d, size_t n, const size_t off[3]) {
    lane_arr A, B, C, O;
    size_t es = kiln_dtype_size(d);
    char *want = malloc((n + 1) * es);
    if (!make(q, d, n, off[0], 0, &A) || !make(q, d, n, off[1], 0, &B) ||
        !make(q, KILN_INT8, n, off[1], 1, &C) || !make(q, d, n, off[2], 0, &O) ||
        !need(want != NULL, "host memory"))
        goto out;
    tr_val three = tr_cast(KILN_INT64, d, (tr_val){ 3, 3, 0 });
    tr_val two = tr_cast(KILN_INT64, d, (tr_val){ 2, 2, 0 });
    tr_val zero = { 0, 0, 0 };
    if (CHECK_OK(kiln_array_binary_scalar_out(q, KILN_OP_MUL, O.view, A.view, kt_scalar(d, 3.0), 0,
                                              NULL, NULL))) {
        for (size_t i = 0; i < n; i++)
            tr_store(d, want, i, tr_binary(KILN_OP_MUL, d, at(&A, i), three));
        compare(q, &O, want, "binary_scalar mul");
    }
    if (CHECK_OK(kiln_array_unary_out(q, KILN_OP_NEG, O.view, A.view, 0, NULL, NULL))) {
        for (size_t i = 0; i < n; i++) {
            tr_val x = at(&A, i), r = tr_binary(KILN_OP_SUB, d, zero, x);
            if (tr_is_float(d))
                r.f = -x.f;
            tr_store(d, want, i, r);
        }
        compare(q, &O, want, "unary neg");
    }
    if (CHECK_OK(
            kiln_array_axpy_out(q, O.view, kt_scalar(d, 2.0), A.view, B.view, 0, NULL, NULL))) {
        for (size_t i = 0; i < n; i++)
            tr_store(
                d, want, i,
                tr_binary(KILN_OP_ADD, d, tr_binary(KILN_OP_MUL, d, two, at(&A, i)), at(&B, i)));
        compare(q, &O, want, "axpy");
    }
    if (CHECK_OK(kiln_array_where_out(q, O.view, C.view, A.view, B.view, 0, NULL, NULL))) {
        for (size_t i = 0; i < n; i++)
            memcpy(want + i * es,
                   (at(&C, i).i ? A.host + (A.off + i) * es : B.host + (B.off + i) * es), es);
        compare(q, &O, want, "where");
    }
    if (CHECK_OK(kiln_array_fill(q, O.view, kt_arg(d, A.host), 0, NULL, NULL))) {
        for (size_t i = 0; i < n; i++)
            memcpy(want + i * es, A.host, es);
        compare(q, &O, want, "fill");
    }
out:
    free(want);
    drop(&A);
    drop(&B);
    drop(&C);
    drop(&O);
}

/* out = a.astype(to) (the per-element kernel; float32 sources at offsets
 * that are multiples of 4 take astype's own vector kernel on GPUs). */
static void check_astype(kiln_queue *q, kiln_dtype from, kiln_dtype to, size_t n,
                         const size_t off[3]) {
    lane_arr A, O;
    char *want = malloc((n + 1) * kiln_dtype_size(to));
    if (make(q, from, n, off[0], 0, &A) && make(q, to, n, off[2], 0, &O) &&
        need(want != NULL, "host memory") &&
        CHECK_OK(kiln_array_astype_out(q, O.view, A.view, 0, NULL, NULL))) {
        for (size_t i = 0; i < n; i++)
            tr_store(to, want, i, tr_cast(from, to, at(&A, i)));
        char what[64];
        snprintf(what, sizeof what, "astype from %s", kiln_dtype_name(from));
        compare(q, &O, want, what);
    }
    free(want);
    drop(&A);
    drop(&O);
}

/* sum, max, any of a and dot(a, b) on small values (integers of
 * -4..4: float sums stay exact, so the order of the additions does not
 * matter; integer sums wrap in the result dtype). */
static void check_reduce(kiln_queue *q, kiln_dtype d, size_t n, const size_t off[3]) {
    lane_arr A, B;
    if (!make(q, d, n, off[0], 1, &A) || !make(q, d, n, off[1], 1, &B)) {
        drop(&A);
        drop(&B);
        return;
    }
    static const kiln_reduce_op ops[3] = { KILN_REDUCE_SUM, KILN_REDUCE_MAX, KILN_REDUCE_ANY };
    for (int k = 0; k < 4; k++) {
        kiln_reduce_op op = k < 3 ? ops[k] : KILN_REDUCE_SUM;
        kiln_dtype rd = kiln_dtype_reduce_result(op, d);
        tr_val acc = { 0, 0, 0 };
        if (op == KILN_REDUCE_MAX) {
            acc = tr_cast(d, rd, at(&A, 0));
            if (n == 0)
                continue; /* the dtype's smallest: test_reduce's case */
        }
        for (size_t i = 0; i < n; i++) {
            tr_val x = tr_cast(d, rd, at(&A, i));
            if (k == 3) /* dot */
                x = tr_binary(KILN_OP_MUL, rd, x, tr_cast(d, rd, at(&B, i)));
            if (op == KILN_REDUCE_SUM)
                acc = tr_binary(KILN_OP_ADD, rd, acc, x);
            else if (op == KILN_REDUCE_MAX)
                acc = tr_binary(KILN_OP_MAX, rd, acc, x);
            else if (tr_is_float(d)      ? at(&A, i).f != 0
                     : tr_is_unsigned(d) ? at(&A, i).u != 0
                                         : at(&A, i).i != 0)
                acc = (tr_val){ 1, 1, 1 };
        }
        char got[16] = { 0 }, want[16] = { 0 };
        tr_store(rd, want, 0, acc);
        kiln_status st =
            k == 3 ? kiln_array_dot(q, A.view, B.view, got) : kiln_array_reduce(q, op, A.view, got);
        if (CHECK_OK(st))
            CHECK_MSG(tr_same(rd, got, want, 0),
                      "%s of %s n=%zu offsets %zu,%zu: got %.17g/%lld want "
                      "%.17g/%lld",
                      k == 3                  ? "dot"
                      : op == KILN_REDUCE_SUM ? "sum"
                      : op == KILN_REDUCE_MAX ? "max"
                                              : "any",
                      kiln_dtype_name(d), n, off[0], off[1], tr_load(rd, got, 0).f,
                      (long long)tr_load(rd, got, 0).i, tr_load(rd, want, 0).f,
                      (long long)tr_load(rd, want, 0).i);
    }
    drop(&A);
    drop(&B);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    /* element offsets of (a, b, out): aligned, all off by one, only the
     * output off, 2 (16 bytes for 8-byte types), 4 (16 bytes for 4-byte
     * types) */
    static const size_t offs[5][3] = {
        { 0, 0, 0 }, { 1, 1, 1 }, { 0, 0, 3 }, { 2, 2, 2 }, { 4, 0, 4 }
    };
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 70000);
    sizes[ns++] = 300007; /* several quads a work-item on a CPU */
    /* mixed element sizes in one kernel: 1 -> 4, 2 -> 8, 2 with 4 -> 8 */
    static const kiln_dtype mixed[][2] = { { KILN_INT8, KILN_FLOAT32 },
                                           { KILN_FLOAT16, KILN_FLOAT64 },
                                           { KILN_UINT16, KILN_INT32 } };
    for (size_t k = 0; k < ns; k++) {
        for (int t = 0; t < TR_N; t++) {
            kiln_dtype d = tr_all[t];
            if (d == KILN_FLOAT64 && !info.fp64)
                continue;
            const size_t *o1 = offs[(k + (size_t)t) % 5];
            const size_t *o2 = offs[(k + (size_t)t + 2) % 5];
            check_binary(q, KILN_OP_ADD, d, d, sizes[k], o1, 0);
            check_binary(q, KILN_OP_ADD, d, d, sizes[k], o2, 1);
            check_same_dtype(q, d, sizes[k], (k & 1) ? o1 : o2);
            check_reduce(q, d, sizes[k], (k & 1) ? o2 : o1);
        }
        for (size_t m = 0; m < sizeof mixed / sizeof mixed[0]; m++)
            if (info.fp64 || mixed[m][1] != KILN_FLOAT64) {
                check_binary(q, (k & 1) ? KILN_OP_MUL : KILN_OP_SUB, mixed[m][0], mixed[m][1],
                             sizes[k], offs[k % 5], 0);
                check_astype(q, mixed[m][1], mixed[m][0], sizes[k], offs[(k + m) % 5]);
                check_astype(q, mixed[m][0], mixed[m][1], sizes[k], offs[(k + m + 1) % 5]);
            }
    }
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
