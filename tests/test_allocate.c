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
        KT_FREE(off, got, want, want_off);
    }
    KT_RELEASE(items, offs, M, a);
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
    KT_RELEASE(a, a, X);
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
            KT_RELEASE(items, offs);
        }
        KT_RELEASE(calls, a);
    }
    /* still usable */
    check_emit(q, "int", KILN_INT32, 1000);
}

/* The non-blocking form against the blocking one's reference: capacity at,
 * below and above the total (below: the first values, offsets still the
 * whole count), behind a user event (nothing runs before it is set), a
 * check array or none. */
/* A list builder of one operation on q's context; NULL (a failed check)
 * if it cannot be made. */
static kiln_allocate *make_builder(kiln_queue *q, const char *arguments, const char *item_type,
                                   const char *operation) {
    kiln_allocate *a = NULL;
    CHECK_OK(kiln_allocate_create(
        kiln_queue_context(q),
        &KILN_ALLOCATE_DESC(.arguments = arguments, .item_type = item_type, .operation = operation),
        &a));
    return a;
}

static void check_async(kiln_queue *q, size_t n) {
    kiln_context *c = kiln_queue_context(q);
    kiln_allocate *a = make_builder(q, "const int *x", "int",
                                    "for (int t = 0; t < x[i] % 4; t++) KILN_EMIT(x[i] + t);");
    if (!a)
        return;
    /* one block: offsets wanted and read, then x, the values wanted and
     * read (at most 3 per item, 10 past the total) */
    size_t n1 = n ? n : 1;
    int64_t *want_off = malloc(2 * (n + 1) * sizeof *want_off + (7 * n + 13) * sizeof(int));
    if (!want_off) {
        kiln_allocate_release(a);
        return;
    }
    int64_t *off = want_off + n + 1;
    int *x = (int *)(off + n + 1), *want = x + n1, *got = want + 3 * n + 1;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = (int)(kt_rand_u64() % 1000);
        want_off[i] = (int64_t)total;
        for (int t = 0; t < x[i] % 4; t++)
            want[total++] = x[i] + t;
    }
    want_off[n] = (int64_t)total;
    kiln_array *X = NULL, *check = NULL;
    size_t one = 1;
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n1, x, &X));
    CHECK_OK(kiln_array_full(q, KILN_INT64, 1, &one, KILN_ARG_I64(77), 0, NULL, NULL, &check));
    kiln_arg arg = KILN_ARG_ARRAY(X);
    const size_t caps[] = { total, total / 2, total + 10, 0 };
    for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
        size_t cap = caps[k];
        kiln_event *gate = NULL, *done = NULL;
        kiln_array *items = NULL, *offs = NULL;
        CHECK_OK(kiln_event_create_user(c, &gate));
        kiln_array *chk = k % 2 ? NULL : check;
        if (!CHECK_OK(kiln_allocate_run_async(q, a, n, 1, &arg, cap, chk, 1, &gate, &done, &items,
                                              &offs))) {
            kiln_event_set_complete(gate, KILN_EVENT_COMPLETE);
            kiln_event_release(gate);
            continue;
        }
        kiln_event_state s = KILN_EVENT_COMPLETE;
        CHECK_OK(kiln_event_get_state(done, &s));
        CHECK_MSG(s != KILN_EVENT_COMPLETE, "allocate_run_async n=%zu complete before its gate", n);
        CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
        CHECK_OK(kiln_event_wait(done));
        CHECK(kiln_array_size(items) == cap && kiln_array_size(offs) == n + 1);
        CHECK_OK(kiln_array_read(q, offs, off));
        CHECK_MSG(!memcmp(off, want_off, (n + 1) * sizeof *off), "async n=%zu cap=%zu: offsets", n,
                  cap);
        size_t have = cap < total ? cap : total;
        if (cap)
            CHECK_OK(kiln_array_read(q, items, got));
        CHECK_MSG(!have || !memcmp(got, want, have * sizeof *got),
                  "async n=%zu cap=%zu: the first %zu values", n, cap, have);
        if (chk) {
            int64_t ck = -1;
            CHECK_OK(kiln_array_read(q, chk, &ck));
            CHECK_MSG(ck == 0, "async n=%zu: check %lld", n, (long long)ck);
        }
        KT_RELEASE(gate, done, items, offs);
    }
    free(want_off);
    kt_release_arrays(2, (kiln_array *[]){ X, check });
    kiln_allocate_release(a);
}

/* The non-blocking form's bad calls, and an operation whose two passes
 * differ: reported in check, never a store past the capacity. */
static void check_async_errors(kiln_queue *q) {
    kiln_allocate *a =
        make_builder(q, "int *calls", "long",
                     "int r = calls[i]++; for (int t = 0; t < 1 + 7 * r; t++) KILN_EMIT(t);");
    if (!a)
        return;
    size_t n = 1000, one = 1, two = 2;
    kiln_array *calls = NULL, *check = NULL, *wrong = NULL, *empty = NULL;
    kiln_array *items = (kiln_array *)1, *offs = (kiln_array *)1;
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &n, 0, NULL, NULL, &calls));
    CHECK_OK(kiln_array_zeros(q, KILN_INT64, 1, &two, 0, NULL, NULL, &check));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &one, 0, NULL, NULL, &wrong));
    size_t zero = 0;
    CHECK_OK(kiln_array_zeros(q, KILN_INT64, 1, &zero, 0, NULL, NULL, &empty));
    kiln_arg arg = KILN_ARG_ARRAY(calls);
    CHECK_STATUS(kiln_allocate_run_async(q, a, n, 1, &arg, 10, wrong, 0, NULL, NULL, &items, &offs),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "kiln_allocate_run_async: check is") != NULL);
    CHECK(items == NULL && offs == NULL);
    CHECK_STATUS(kiln_allocate_run_async(q, a, n, 1, &arg, 10, empty, 0, NULL, NULL, &items, &offs),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_allocate_run_async(q, a, n, 1, &arg, 10, check, 1, NULL, NULL, &items, &offs),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_allocate_run_async(q, a, n, 0, NULL, 10, check, 0, NULL, NULL, &items, &offs),
                 KILN_ERROR_KERNEL_ARGS);
    CHECK_STATUS(kiln_allocate_run_async(q, a, n, 1, &arg, 10, check, 0, NULL, NULL, NULL, &offs),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(
        kiln_allocate_run_async(NULL, a, n, 1, &arg, 10, check, 0, NULL, NULL, &items, &offs),
        KILN_ERROR_NULL_HANDLE);
    /* the fill emits more than the count: 1000 counted, capacity 600 */
    kiln_event *done = NULL;
    if (CHECK_OK(
            kiln_allocate_run_async(q, a, n, 1, &arg, 600, check, 0, NULL, &done, &items, &offs))) {
        CHECK_OK(kiln_event_wait(done));
        int64_t ck[2] = { 0, 0 }, total = -1;
        CHECK_OK(kiln_array_read(q, check, ck));
        CHECK_MSG(ck[0] >= 1 && ck[0] <= (int64_t)n && ck[1] == 0, "check %lld %lld",
                  (long long)ck[0], (long long)ck[1]);
        int64_t *o = malloc((n + 1) * sizeof *o);
        if (o && CHECK_OK(kiln_array_read(q, offs, o)))
            total = o[n];
        free(o);
        CHECK(total == (int64_t)n && kiln_array_size(items) == 600);
        KT_RELEASE(done, items, offs);
    }
    kt_release_arrays(4, (kiln_array *[]){ calls, check, wrong, empty });
    kiln_allocate_release(a);
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
    const size_t async_sizes[] = { 0, 1, 2, 1000, 4099 };
    for (size_t k = 0; k < sizeof async_sizes / sizeof async_sizes[0]; k++)
        check_async(q, async_sizes[k]);
    check_async_errors(q);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
