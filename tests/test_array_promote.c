/* Type promotion, broadcasting and astype (issue 12, item 2): NumPy's
 * promotion table, kiln_shape_broadcast, kiln_array_binary_out on every pair
 * of dtypes with broadcast shapes, and kiln_array_astype_out from every dtype
 * to every dtype on random data with NaN, infinities and out-of-range
 * values, against serial C references; mismatches as errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "toolkit_ref.h"

/* np.promote_types over tr_all x tr_all (rows a, columns b), written out
 * from NumPy 1.26/2.x. */
static const char *const numpy_table[TR_N] = {
    /*      i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 */
    /* i1 */ "i1 i2 i2 i4 i4 i8 i8 f8 f2 f4 f8",
    /* u1 */ "i2 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8",
    /* i2 */ "i2 i2 i2 i4 i4 i8 i8 f8 f4 f4 f8",
    /* u2 */ "i4 u2 i4 u2 i4 u4 i8 u8 f4 f4 f8",
    /* i4 */ "i4 i4 i4 i4 i4 i8 i8 f8 f8 f8 f8",
    /* u4 */ "i8 u4 i8 u4 i8 u4 i8 u8 f8 f8 f8",
    /* i8 */ "i8 i8 i8 i8 i8 i8 i8 f8 f8 f8 f8",
    /* u8 */ "f8 u8 f8 u8 f8 u8 f8 u8 f8 f8 f8",
    /* f2 */ "f2 f2 f4 f4 f8 f8 f8 f8 f2 f4 f8",
    /* f4 */ "f4 f4 f4 f4 f8 f8 f8 f8 f4 f4 f8",
    /* f8 */ "f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8",
};

static kiln_dtype code(const char *c) {
    static const char *const names[TR_N] = { "i1", "u1", "i2", "u2", "i4", "u4",
                                             "i8", "u8", "f2", "f4", "f8" };
    for (int k = 0; k < TR_N; k++)
        if (!strncmp(c, names[k], 2))
            return tr_all[k];
    return (kiln_dtype)0;
}

static void test_table(void) {
    for (int a = 0; a < TR_N; a++)
        for (int b = 0; b < TR_N; b++) {
            kiln_dtype want = code(numpy_table[a] + 3 * b);
            kiln_dtype got = kiln_dtype_promote(tr_all[a], tr_all[b]);
            CHECK_MSG(got == want, "promote %s %s: got %s want %s", kiln_dtype_name(tr_all[a]),
                      kiln_dtype_name(tr_all[b]), kiln_dtype_name(got), kiln_dtype_name(want));
        }
    CHECK(kiln_dtype_promote((kiln_dtype)0, KILN_INT8) == 0);
    CHECK(kiln_dtype_promote(KILN_FLOAT32, (kiln_dtype)99) == 0);
}

static void test_shapes(void) {
    size_t a[3] = { 4, 1, 5 }, b[2] = { 3, 1 }, r[KILN_ARRAY_MAX_DIMS];
    unsigned nr = 0;
    CHECK_OK(kiln_shape_broadcast(3, a, 2, b, &nr, r));
    CHECK(nr == 3 && r[0] == 4 && r[1] == 3 && r[2] == 5);
    size_t c[1] = { 0 }, d[2] = { 2, 1 };
    CHECK_OK(kiln_shape_broadcast(1, c, 2, d, &nr, r));
    CHECK(nr == 2 && r[0] == 2 && r[1] == 0);
    CHECK_OK(kiln_shape_broadcast(0, NULL, 1, c, &nr, r));
    CHECK(nr == 1 && r[0] == 0);
    size_t e[2] = { 3, 4 }, f[1] = { 5 };
    CHECK_STATUS(kiln_shape_broadcast(2, e, 1, f, &nr, r), KILN_ERROR_MISMATCH);
    const char *m = kiln_last_error_message();
    CHECK_MSG(strstr(m, "(3, 4)") && strstr(m, "(5,)"), "message: %s", m);
    CHECK_STATUS(kiln_shape_broadcast(2, e, 1, f, NULL, r), KILN_ERROR_NULL_HANDLE);
}

/* Values that keep the integer arithmetic defined in C for the reference
 * (the narrow types wrap in the promoted dtype anyway). */
static void fill(kiln_dtype d, void *p, size_t n) {
    for (size_t k = 0; k < n; k++)
        tr_random(d, p, k, 0);
}

/* a (4, 1, 5) OP b (3, 1) -> out (4, 3, 5), for dtypes da, db. */
static void check_binary(kiln_queue *q, kiln_binary_op op, kiln_dtype da, kiln_dtype db) {
    kiln_context *c = kiln_queue_context(q);
    size_t sa[3] = { 4, 1, 5 }, sb[2] = { 3, 1 }, so[3] = { 4, 3, 5 };
    size_t na = 20, nb = 3;
    kiln_dtype p = kiln_dtype_promote(da, db);
    kiln_dtype od = op >= KILN_OP_EQ ? KILN_INT32 : p;
    char ha[160], hb[24], ho[480], want[480];
    fill(da, ha, na);
    fill(db, hb, nb);
    kiln_array *A = NULL, *B = NULL, *O = NULL;
    CHECK_OK(kiln_array_from_host(c, da, 3, sa, ha, &A));
    CHECK_OK(kiln_array_from_host(c, db, 2, sb, hb, &B));
    CHECK_OK(kiln_array_empty(c, od, 3, so, &O));
    kiln_event *e = NULL;
    if (CHECK_OK(kiln_array_binary_out(q, op, O, A, B, 0, NULL, &e))) {
        CHECK_OK(kiln_event_wait(e));
        CHECK_OK(kiln_array_read(q, O, ho));
        int bad = 0;
        for (size_t i = 0; i < 4; i++)
            for (size_t j = 0; j < 3; j++)
                for (size_t k = 0; k < 5; k++) {
                    size_t o = (i * 3 + j) * 5 + k;
                    tr_val x = tr_cast(da, p, tr_load(da, ha, i * 5 + k));
                    tr_val y = tr_cast(db, p, tr_load(db, hb, j));
                    tr_store(od, want, o, tr_binary(op, p, x, y));
                    if (!tr_same(od, ho, want, o) && bad++ < 3)
                        CHECK_MSG(0, "op %d %s,%s at %zu: got %.17g want %.17g", (int)op,
                                  kiln_dtype_name(da), kiln_dtype_name(db), o,
                                  tr_load(od, ho, o).f + (double)tr_load(od, ho, o).i,
                                  tr_load(od, want, o).f + (double)tr_load(od, want, o).i);
                }
        CHECK_MSG(bad == 0, "op %d %s with %s: %d wrong", (int)op, kiln_dtype_name(da),
                  kiln_dtype_name(db), bad);
    }
    KT_RELEASE(e, A, B, O);
}

/* z (4, 3, 5) = 2*x (4, 1, 5) + y (3, 1) for dtypes dx, dy (alpha 2: the
 * product is exact, so a fused multiply-add rounds the same). */
static void check_axpy(kiln_queue *q, kiln_dtype dx, kiln_dtype dy) {
    kiln_context *c = kiln_queue_context(q);
    size_t sx[3] = { 4, 1, 5 }, sy[2] = { 3, 1 }, sz[3] = { 4, 3, 5 };
    kiln_dtype p = kiln_dtype_promote(dx, dy);
    char hx[160], hy[24], hz[480], want[480];
    fill(dx, hx, 20);
    fill(dy, hy, 3);
    kiln_array *X = NULL, *Y = NULL, *Z = NULL;
    CHECK_OK(kiln_array_from_host(c, dx, 3, sx, hx, &X));
    CHECK_OK(kiln_array_from_host(c, dy, 2, sy, hy, &Y));
    CHECK_OK(kiln_array_empty(c, p, 3, sz, &Z));
    tr_val two = tr_cast(KILN_INT64, p, (tr_val){ 2, 2, 0 });
    if (CHECK_OK(kiln_array_axpy_out(q, Z, kt_scalar(p, 2.0), X, Y, 0, NULL, NULL))) {
        CHECK_OK(kiln_array_read(q, Z, hz));
        int bad = 0;
        for (size_t i = 0; i < 4; i++)
            for (size_t j = 0; j < 3; j++)
                for (size_t k = 0; k < 5; k++) {
                    size_t o = (i * 3 + j) * 5 + k;
                    tr_val x = tr_cast(dx, p, tr_load(dx, hx, i * 5 + k));
                    tr_val y = tr_cast(dy, p, tr_load(dy, hy, j));
                    tr_val r = tr_binary(KILN_OP_ADD, p, tr_binary(KILN_OP_MUL, p, two, x), y);
                    tr_store(p, want, o, r);
                    bad += !tr_same(p, hz, want, o);
                }
        CHECK_MSG(bad == 0, "axpy %s, %s: %d wrong", kiln_dtype_name(dx), kiln_dtype_name(dy), bad);
    }
    KT_RELEASE(X, Y, Z);
}

static void check_astype(kiln_queue *q, kiln_dtype from, kiln_dtype to, size_t n, int strided) {
    kiln_context *c = kiln_queue_context(q);
    size_t m = strided ? 2 * n : n;
    char *h = malloc(m * 8 + 8), *got = malloc(n * 8 + 8), *want = malloc(n * 8 + 8);
    for (size_t k = 0; k < m; k++)
        tr_random(from, h, k, 0);
    kiln_array *A = NULL, *V = NULL, *O = NULL;
    CHECK_OK(kiln_array_from_host(c, from, 1, &m, h, &A));
    kiln_slice s = KILN_SLICE(0, PTRDIFF_MAX, strided ? 2 : 1);
    CHECK_OK(kiln_array_view(A, &s, &V));
    CHECK_OK(kiln_array_empty(c, to, 1, &n, &O));
    kiln_event *e = NULL;
    if (CHECK_OK(kiln_array_astype_out(q, O, V, 0, NULL, &e))) {
        CHECK_OK(kiln_event_wait(e));
        CHECK_OK(kiln_array_read(q, O, got));
        int bad = 0;
        for (size_t k = 0; k < n; k++) {
            tr_val v = tr_load(from, h, strided ? 2 * k : k);
            tr_store(to, want, k, tr_cast(from, to, v));
            if (!tr_same(to, got, want, k) && bad++ < 3)
                CHECK_MSG(0,
                          "astype %s->%s [%zu] of %.17g/%lld/%llu: got "
                          "%.17g/%lld want %.17g/%lld",
                          kiln_dtype_name(from), kiln_dtype_name(to), k, v.f, (long long)v.i,
                          (unsigned long long)v.u, tr_load(to, got, k).f,
                          (long long)tr_load(to, got, k).i, tr_load(to, want, k).f,
                          (long long)tr_load(to, want, k).i);
        }
        CHECK_MSG(bad == 0, "astype %s -> %s n=%zu: %d wrong", kiln_dtype_name(from),
                  kiln_dtype_name(to), n, bad);
    }
    KT_RELEASE(e, A, V, O);
    KT_FREE(h, got, want);
}

static void check_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t s3 = 3, s4 = 4, s34[2] = { 3, 4 };
    kiln_array *a = NULL, *b = NULL, *o = NULL, *o2 = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &s3, 0, NULL, NULL, &a));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 2, s34, 0, NULL, NULL, &b));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, 2, s34, &o));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 2, s34, &o2));
    /* (3,) and (3, 4) do not broadcast: both shapes named */
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_ADD, o, a, b, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    const char *m = kiln_last_error_message();
    CHECK_MSG(strstr(m, "(3,)") && strstr(m, "(3, 4)"), "message: %s", m);
    kiln_array *a4 = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &s4, 0, NULL, NULL, &a4));
    /* int32 + float32 is float64: a float32 out is refused */
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_ADD, o2, a4, b, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    m = kiln_last_error_message();
    CHECK_MSG(strstr(m, "double"), "message: %s", m);
    CHECK_OK(kiln_array_binary_out(q, KILN_OP_ADD, o, a4, b, 0, NULL, NULL));
    /* out is never broadcast */
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_ADD, a4, a4, b, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_astype_out(q, a, b, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_astype_out(q, NULL, b, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_OK(kiln_queue_finish(q));
    KT_RELEASE(a, a4, b, o, o2);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    for (int a = 0; a < TR_N; a++)
        for (int b = 0; b < TR_N; b++) {
            if (!info.fp64 && (tr_all[a] == KILN_FLOAT64 ||
                               kiln_dtype_promote(tr_all[a], tr_all[b]) == KILN_FLOAT64))
                continue;
            check_binary(q, KILN_OP_ADD, tr_all[a], tr_all[b]);
            if (!info.fp64 && tr_all[b] == KILN_FLOAT64)
                continue;
            check_astype(q, tr_all[a], tr_all[b], 1000, (a + b) & 1);
        }
    /* the other operators on a few mixed pairs */
    static const kiln_dtype pairs[][2] = {
        { KILN_INT8, KILN_UINT8 },   { KILN_INT16, KILN_FLOAT16 }, { KILN_UINT32, KILN_INT32 },
        { KILN_INT64, KILN_UINT64 }, { KILN_FLOAT32, KILN_INT32 }, { KILN_FLOAT16, KILN_UINT8 },
        { KILN_UINT16, KILN_UINT8 }
    };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++)
        for (int op = KILN_OP_SUB; op <= KILN_OP_GE; op++)
            if (info.fp64 || kiln_dtype_promote(pairs[k][0], pairs[k][1]) != KILN_FLOAT64)
                check_binary(q, (kiln_binary_op)op, pairs[k][0], pairs[k][1]);
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++)
        if (info.fp64 || kiln_dtype_promote(pairs[k][0], pairs[k][1]) != KILN_FLOAT64)
            check_axpy(q, pairs[k][0], pairs[k][1]);
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 70000);
    for (size_t k = 0; k < ns; k++)
        check_astype(q, KILN_FLOAT32, KILN_INT16, sizes[k], k & 1);
    check_errors(q);
}

int main(void) {
    test_table();
    test_shapes();
    kt_for_each_device(run, NULL);
    return kt_report();
}
