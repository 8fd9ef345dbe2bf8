/* The list builder (kiln_allocate): 0..k items per input item at awkward
 * sizes and every item dtype, against a serial reference (the flat array
 * in item order, emission order within an item, and the offsets); errors
 * at create and run. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* item i emits (i * 7 + s) % 5 values (i + t*3) for t = 0.. (0..4 each),
 * skipping those where mask[i] is 0. */
static void check_emit(kiln_queue *q, const char *type, kiln_dtype d, size_t n) {
    kiln_context *c = kiln_queue_context(q);
    kiln_allocate *a = NULL;
    if (!CHECK_OK(kiln_allocate_create(
            c,
            &KILN_ALLOCATE_DESC(.arguments = "const uchar *mask, long s", .item_type = type,
                                .operation = "if (mask[i])\n"
                                             "    for (long t = 0; t < (i * 7 + s) % 5; t++)\n"
                                             "        KILN_EMIT(i + t * 3);",
                                .preamble = "/* nothing */"),
            &a)))
        return;
    uint8_t *mask = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        mask[i] = (uint8_t)(kt_rand_u64() % 4 != 0);
    size_t n1 = n ? n : 1;
    kiln_array *M = NULL, *items = NULL, *offs = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_UINT8, 1, &n1, mask, &M));
    long s = 3;
    kiln_arg args[2] = { KILN_ARG_ARRAY(M), KILN_ARG_I64(s) };
    if (CHECK_OK(kiln_allocate_run(q, a, n, 2, args, &items, &offs))) {
        /* the reference */
        int64_t *want_off = malloc((n + 1) * 8);
        double *want = malloc((5 * n + 1) * sizeof *want);
        size_t total = 0;
        for (size_t i = 0; i < n; i++) {
            want_off[i] = (int64_t)total;
            if (mask[i])
                for (size_t t = 0; t < (i * 7 + (size_t)s) % 5; t++)
                    want[total++] = (double)(i + t * 3);
        }
        want_off[n] = (int64_t)total;
        kiln_array_info ii, oi;
        kiln_array_get_info(items, &ii);
        kiln_array_get_info(offs, &oi);
        CHECK(ii.dtype == d && ii.ndim == 1 && ii.size == total);
        CHECK(oi.dtype == KILN_INT64 && oi.size == n + 1);
        int64_t *off = malloc((n + 1) * 8);
        char *got = malloc(total * 8 + 8);
        CHECK_OK(kiln_array_read(q, offs, off));
        if (total)
            CHECK_OK(kiln_array_read(q, items, got));
        int ok = ii.size == total && !memcmp(off, want_off, (n + 1) * 8);
        for (size_t k = 0; ok && k < total; k++)
            ok &= kt_get(d, got, k) == want[k];
        CHECK_MSG(ok, "allocate %s n=%zu: %zu items", type, n, total);
        free(off);
        free(got);
        free(want);
        free(want_off);
    }
    kiln_array_release(items);
    kiln_array_release(offs);
    kiln_array_release(M);
    kiln_allocate_release(a);
    free(mask);
}

static void check_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_allocate *a = (kiln_allocate *)1;
    CHECK_STATUS(kiln_allocate_create(c,
                                      &KILN_ALLOCATE_DESC(.arguments = "const int *x",
                                                          .item_type = "struct pair",
                                                          .operation = "KILN_EMIT(x[i]);"),
                                      &a),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(a == NULL);
    CHECK_STATUS(
        kiln_allocate_create(c,
                             &KILN_ALLOCATE_DESC(.arguments = "const int *x", .item_type = "int",
                                                 .operation = "KILN_EMIT(x[i]) +;"),
                             &a),
        KILN_ERROR_BUILD);
    CHECK_STATUS(kiln_allocate_create(
                     c, &KILN_ALLOCATE_DESC(.arguments = "const int *x", .item_type = "int"), &a),
                 KILN_ERROR_NULL_HANDLE);
    kiln_allocate_desc zero = { 0 };
    CHECK_STATUS(kiln_allocate_create(c, &zero, &a), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_OK(
        kiln_allocate_create(c,
                             &KILN_ALLOCATE_DESC(.arguments = "const int *x", .item_type = "int",
                                                 .operation = "KILN_EMIT(x[i]);"),
                             &a));
    kiln_array *X = NULL, *I = NULL, *O = NULL;
    size_t n = 4;
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &X));
    kiln_arg good = KILN_ARG_ARRAY(X);
    CHECK_STATUS(kiln_allocate_run(q, a, n, 0, NULL, &I, &O), KILN_ERROR_KERNEL_ARGS);
    CHECK_STATUS(kiln_allocate_run(q, a, n, 1, &good, &I, &O),
                 KILN_ERROR_MISMATCH); /* float array for an int pointer */
    CHECK(I == NULL && O == NULL);
    CHECK_STATUS(kiln_allocate_run(q, a, n, 1, &good, NULL, &O), KILN_ERROR_NULL_HANDLE);
    CHECK_OK(kiln_allocate_retain(a));
    kiln_allocate_release(a);
    kiln_allocate_release(a);
    kiln_array_release(X);
}

/* An operation that emits more (or fewer) items in the fill pass than in
 * the count pass (it counts its own runs in calls[i]) must not write past
 * the items and must be reported, not KILN_OK (issue 41: it corrupted the
 * heap). The library works afterwards. */
static void check_nondeterministic(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    static const struct {
        const char *op;
        const char *what;
    } ops[] = {
        { "int r = calls[i]++; for (int t = 0; t < 1 + 7 * r; t++) KILN_EMIT(t);", "more" },
        { "int r = calls[i]++; if (!r || i % 3) KILN_EMIT(i);", "fewer" },
        { "int r = calls[i]++; if (r) KILN_EMIT(i);", "more from a total of 0" },
    };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        kiln_allocate *a = NULL;
        if (!CHECK_OK(kiln_allocate_create(c,
                                           &KILN_ALLOCATE_DESC(.arguments = "int *calls",
                                                               .item_type = "long",
                                                               .operation = ops[k].op),
                                           &a)))
            continue;
        size_t n = 1000;
        kiln_array *calls = NULL, *items = (kiln_array *)1, *offs = (kiln_array *)1;
        CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &n, 0, NULL, NULL, &calls));
        kiln_arg arg = KILN_ARG_ARRAY(calls);
        kiln_status st = kiln_allocate_run(q, a, n, 1, &arg, &items, &offs);
        CHECK_MSG(st == KILN_ERROR_INVALID_ARGUMENT,
                  "allocate whose fill emits %s than its count: %s (%s)", ops[k].what,
                  kiln_status_name(st), kiln_last_error_message());
        CHECK(strstr(kiln_last_error_message(), "kiln_allocate_run") != NULL);
        CHECK(items == NULL && offs == NULL);
        if (st == KILN_OK) {
            kiln_array_release(items);
            kiln_array_release(offs);
        }
        kiln_array_release(calls);
        kiln_allocate_release(a);
    }
    /* still usable */
    check_emit(q, "int", KILN_INT32, 1000);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 200000);
    for (size_t s = 0; s < ns; s++)
        check_emit(q, "int", KILN_INT32, sizes[s]);
    static const struct {
        const char *type;
        kiln_dtype d;
    } types[] = {
        { "char", KILN_INT8 },     { "uchar", KILN_UINT8 },   { "short", KILN_INT16 },
        { "ushort", KILN_UINT16 }, { "uint", KILN_UINT32 },   { "long", KILN_INT64 },
        { "ulong", KILN_UINT64 },  { "float", KILN_FLOAT32 }, { "double", KILN_FLOAT64 }
    };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        check_emit(q, types[k].type, types[k].d, 100);
    check_errors(q);
    check_nondeterministic(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
