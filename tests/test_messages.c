/* Error messages name the user's call and values, not kiln's internals
 * (issue 41): a bad wait list given to kiln_array_sort_out names
 * kiln_array_sort_out, not its kernel; a gemv shape names gemv, not the
 * one-column gemm it becomes; ops are named, not numbered; a NULL argument
 * is named; the prefix is not doubled; a bad counts dtype of unique names
 * unique and the dtypes it takes; a failed generator build carries the
 * note about `half` only when the source uses half. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "testing/kiln_test_internal.h"

static const char *msg(void) {
    return kiln_last_error_message();
}

static int has(const char *needle) {
    return strstr(msg(), needle) != NULL;
}

/* Exactly one "name:" at the start: never "name: name: ...". */
static int once(const char *name) {
    size_t n = strlen(name);
    return !strncmp(msg(), name, n) && msg()[n] == ':' && strncmp(msg() + n + 2, name, n) != 0;
}

#define SAYS(cond)                                         \
    CHECK_MSG(cond, "message: \"%s\" (%s)", msg(), #cond); \
    if (getenv("KT_VERBOSE"))                              \
    printf("  %s\n", msg())

static void test_sort_wait(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 1000;
    kiln_array *k = NULL, *o = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &n, 0, NULL, NULL, &k));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &o));
    kiln_event *none = NULL;
    /* a wait list of one NULL event */
    CHECK_STATUS(kiln_array_sort_out(q, o, NULL, k, NULL, NULL, 1, &none, NULL),
                 KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_array_sort_out") && !has("onesweep") && !has("kernel"));
    CHECK_STATUS(kiln_array_sort_out(q, o, NULL, k, NULL, NULL, 1, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_array_sort_out"));
    kiln_array *ix = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &n, &ix));
    CHECK_STATUS(kiln_array_argsort_out(q, ix, k, NULL, 1, &none, NULL), KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_array_argsort_out"));
    KT_RELEASE(ix, k, o);
}

/* A NULL event in the wait list of a call that launches kernels: the
 * message names the call (it named kiln_kernel_launch of an internal
 * kernel). */
static void test_wait_lists(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 300, one = 1;
    kiln_array *a = NULL, *o = NULL, *cnt = NULL, *f = NULL, *h = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &n, 0, NULL, NULL, &a));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &o));
    CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &one, &cnt));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &f));
    kiln_rng *rng = NULL;
    CHECK_OK(kiln_rng_create(&KILN_RNG_DESC(.seed = 1), &rng));
    kiln_event *none = NULL;
    int zero = 0;
    int64_t hc;
    struct {
        const char *name;
        kiln_status st;
    } calls[] = {
        { "kiln_array_sort_out", kiln_array_sort_out(q, o, NULL, a, NULL, NULL, 1, &none, NULL) },
        { "kiln_array_topk_out", kiln_array_topk_out(q, o, NULL, a, 3, 1, 1, &none, NULL) },
        { "kiln_array_searchsorted_out",
          kiln_array_searchsorted_out(q, o, a, a, 0, 1, &none, NULL) },
        { "kiln_array_copy_if_out",
          kiln_array_copy_if_out(q, o, cnt, &hc, a, "x > 0", 1, &none, NULL) },
        { "kiln_array_unique_out", kiln_array_unique_out(q, o, NULL, cnt, &hc, a, 1, &none, NULL) },
        { "kiln_array_cumsum_out", kiln_array_cumsum_out(q, o, a, 0, 1, &none, NULL) },
        { "kiln_array_fill", kiln_array_fill(q, o, KILN_ARG_I32(zero), 1, &none, NULL) },
        { "kiln_array_astype_out", kiln_array_astype_out(q, f, a, 1, &none, NULL) },
        { "kiln_rng_uniform", kiln_rng_uniform(q, rng, f, 1, &none, NULL) },
        { "kiln_array_histogram", kiln_array_histogram(q, f, 8, 0, 1, NULL, 1, &none, NULL, &h) },
    };
    for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
        CHECK_MSG(calls[k].st == KILN_ERROR_NULL_HANDLE, "%s with wait[0] NULL: %s", calls[k].name,
                  kiln_status_name(calls[k].st));
    }
    /* the messages, one call at a time (each call overwrites the last) */
    CHECK_STATUS(kiln_array_sort_out(q, o, NULL, a, NULL, NULL, 1, &none, NULL),
                 KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_array_sort_out") && has("wait[0]"));
    CHECK_STATUS(kiln_array_topk_out(q, o, NULL, a, 3, 1, 1, &none, NULL), KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_array_topk_out") && has("wait[0]"));
    CHECK_STATUS(kiln_array_copy_if_out(q, o, cnt, &hc, a, "x > 0", 1, &none, NULL),
                 KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_array_copy_if_out") && has("wait[0]"));
    CHECK_STATUS(kiln_array_unique_out(q, o, NULL, cnt, &hc, a, 1, &none, NULL),
                 KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_array_unique_out") && has("wait[0]"));
    CHECK_STATUS(kiln_array_cumsum_out(q, o, a, 0, 1, &none, NULL), KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_array_cumsum_out") && has("wait[0]"));
    CHECK_STATUS(kiln_rng_uniform(q, rng, f, 1, &none, NULL), KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_rng_uniform") && has("wait[0]"));
    CHECK_STATUS(kiln_array_histogram(q, f, 8, 0, 1, NULL, 1, &none, NULL, &h),
                 KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_array_histogram") && has("wait[0]"));
    KT_RELEASE(rng, a, o, cnt, f);
}

static void test_gemv_shape(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t sa[2] = { 3, 4 }, s5 = 5, s3 = 3;
    kiln_array *a = NULL, *x = NULL, *y = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 2, sa, 0, NULL, NULL, &a));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &s5, &x));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &s3, &y));
    kiln_status st =
        kiln_blas_gemv(q, KILN_BLAS_N, KILN_ARG_F64(1), a, x, KILN_ARG_F64(0), y, 0, NULL, NULL);
    if (st == KILN_ERROR_NO_RUNTIME || st == KILN_ERROR_UNSUPPORTED) {
        printf("  (no BLAS here: %s)\n", msg());
    } else {
        CHECK_STATUS(st, KILN_ERROR_MISMATCH);
        SAYS(once("kiln_blas_gemv") && !has("gemm") && has("(3, 4)") && has("(5,)") &&
             has("x needs 4"));
    }
    KT_RELEASE(a, x, y);
}

static void test_ops_named(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 4;
    kiln_array *a = NULL, *z = NULL, *o = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &n, 0, NULL, NULL, &a));
    CHECK_OK(kiln_array_zeros(q, KILN_COMPLEX64, 1, &n, 0, NULL, NULL, &z));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &o));
    /* an op that needs a float dtype, on ints: its name, not its number */
    CHECK_STATUS(kiln_array_unary_out(q, KILN_OP_SQRT, o, a, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    SAYS(once("kiln_array_unary_out") && has("sqrt") && has("int"));
    /* an order on complex numbers */
    char r[16];
    CHECK_STATUS(kiln_array_reduce(q, KILN_REDUCE_MAX, z, r), KILN_ERROR_UNSUPPORTED);
    SAYS(once("kiln_array_reduce") && has("MAX"));
    /* an unknown op: its number is all there is */
    CHECK_STATUS(kiln_array_binary_out(q, (kiln_binary_op)999, o, a, a, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    SAYS(once("kiln_array_binary_out") && has("999"));
    KT_RELEASE(a, z, o);
}

static void test_null_named(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 4;
    kiln_array *a = NULL;
    kiln_rng *rng = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &a));
    CHECK_OK(kiln_rng_create(&KILN_RNG_DESC(.seed = 1), &rng));
    CHECK_STATUS(kiln_rng_uniform(NULL, rng, a, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_rng_uniform") && has("queue is NULL"));
    CHECK_STATUS(kiln_rng_normal(q, NULL, a, 0.0, 1.0, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_rng_normal") && has("rng is NULL"));
    CHECK_STATUS(kiln_rng_uniform(q, rng, NULL, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    SAYS(once("kiln_rng_uniform") && has("array is NULL"));
    KT_RELEASE(rng, a);
}

static void test_unique_counts(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 8, one = 1;
    kiln_array *a = NULL, *o = NULL, *cnt = NULL, *bad = NULL;
    CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &n, 0, NULL, NULL, &a));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &o));
    CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &one, &cnt));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &bad));
    int64_t hc = 0;
    CHECK_STATUS(kiln_array_unique_out(q, o, bad, cnt, &hc, a, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    SAYS(once("kiln_array_unique_out") && has("counts is float") && has("must be long") &&
         !has("input's dtype"));
    KT_RELEASE(a, o, cnt, bad);
}

/* A generator that fails to build: the note on `half` only where the
 * source names half and the device has no fp16. */
static void test_half_note(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_device_info info;
    CHECK_OK(kiln_device_get_info(kiln_queue_device(q), &info));
    kiln_elementwise *ew = (kiln_elementwise *)1;
    CHECK_STATUS(kiln_elementwise_create(
                     c,
                     &KILN_ELEMENTWISE_DESC(.arguments = "float *x",
                                            .operation = "x[i] = no_such_function(x[i])"),
                     &ew),
                 KILN_ERROR_BUILD);
    CHECK(ew == NULL);
    SAYS(has("kiln_elementwise") && !has("cl_khr_fp16") && !has("'half'"));
    kiln_status st = kiln_elementwise_create(
        c,
        &KILN_ELEMENTWISE_DESC(.arguments = "float *x",
                               .operation = "half h = (half)x[i]; x[i] = no_such_function(h)"),
        &ew);
    CHECK_STATUS(st, KILN_ERROR_BUILD);
    if (!info.fp16) {
        SAYS(has("cl_khr_fp16"));
    } else {
        SAYS(!has("cl_khr_fp16"));
    }
    if (st == KILN_OK)
        kiln_elementwise_release(ew);
}

/* No "kiln_x: kiln_x" in any message of a call whose n-th host
 * allocation is refused, for every n (the out-of-memory paths prefixed the
 * call's name to a message that was only the call's name). */
static int doubled(const char *name) {
    char twice[128];
    snprintf(twice, sizeof twice, "%s: %s", name, name);
    return strstr(msg(), twice) != NULL;
}

static void test_no_doubled_prefix(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 64, one = 1;
    int hk[64];
    for (int i = 0; i < 64; i++)
        hk[i] = i / 3;
    kiln_array *a = NULL, *o = NULL, *cnt = NULL, *uc = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, hk, &a));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &o));
    CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &one, &cnt));
    CHECK_OK(kiln_array_empty(c, KILN_INT64, 1, &n, &uc));
    int64_t hc = 0;
    kiln_event *e = NULL;
    /* once unarmed, to build the kernels */
    CHECK_OK(kiln_array_unique_out(q, o, uc, cnt, &hc, a, 0, NULL, &e));
    CHECK_OK(kiln_event_wait(e));
    kiln_event_release(e);
    int bad = 0, fired = 1;
    unsigned long k;
    for (k = 1; fired && k < 2000; k++) {
        e = NULL;
        kiln__fault_arm(KILN__FAULT_HOST_ALLOC, k);
        kiln_status st = kiln_array_unique_out(q, o, uc, cnt, &hc, a, 0, NULL, &e);
        fired = kiln__fault_fired();
        kiln__fault_arm(KILN__FAULT_HOST_ALLOC, 0);
        if (st == KILN_OK)
            kiln_event_wait(e);
        kiln_event_release(e);
        kiln_queue_finish(q);
        if (st != KILN_OK && doubled("kiln_array_unique_out")) {
            if (!bad++)
                printf("  allocation %lu: \"%s\"\n", k, msg());
        }
    }
    printf("  kiln_array_unique_out: %lu host allocations refused in turn\n", k - 2);
    CHECK_MSG(!bad, "%d messages of kiln_array_unique_out doubled its name", bad);
    CHECK(k > 2);
    KT_RELEASE(a, o, cnt, uc);
}

int main(void) {
    KT_FOR_EACH_DEVICE_STEPS(test_sort_wait, test_wait_lists, test_gemv_shape, test_ops_named,
                             test_null_named, test_unique_counts, test_half_note,
                             test_no_doubled_prefix);
    return kt_report();
}
