/* The chain of commands (src/algo/gen/chain.h) and the sticky checker
 * (src/base/check.h), issue 43 item 3: the first failure wins, the steps
 * after it are no-ops that enqueue nothing, and everything the chain holds
 * (events, temporaries, arrays) is released on every path (the ASan build's
 * LeakSanitizer fails the test otherwise). Buffer copies and fills only:
 * no kernel is built. Sizes 0, 1, a prime and 2^k+1 words. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "testing/kiln_test_internal.h"

static int evaluated;

static int touch(int v) {
    evaluated++;
    return v;
}

/* The checker: a failed check keeps the first status and message, and the
 * checks after it evaluate neither their condition nor their call. */
static void checker(void) {
    kiln__check ck = KILN__CHECK_INIT;
    evaluated = 0;
    CHECK(KILN__CHECK(&ck, touch(1), KILN_ERROR_MISMATCH, "t: one") == KILN_OK);
    CHECK(KILN__CHECK_CALL(&ck, (touch(0), KILN_OK)) == KILN_OK);
    CHECK(evaluated == 2);
    CHECK(KILN__CHECK(&ck, touch(0), KILN_ERROR_OUT_OF_RANGE, "t: x is %d", 7) ==
          KILN_ERROR_OUT_OF_RANGE);
    CHECK(strstr(kiln_last_error_message(), "t: x is 7") != NULL);
    CHECK(KILN__CHECK(&ck, touch(0), KILN_ERROR_MISMATCH, "t: later") == KILN_ERROR_OUT_OF_RANGE);
    CHECK(KILN__CHECK_CALL(&ck, (touch(0), KILN_ERROR_INTERNAL)) == KILN_ERROR_OUT_OF_RANGE);
    CHECK(evaluated == 3);
    CHECK(ck.st == KILN_ERROR_OUT_OF_RANGE);
    CHECK(strstr(kiln_last_error_message(), "t: x is 7") != NULL);
}

static void chain_ok(kiln_queue *q, size_t words) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t bytes = words * 4;
    uint32_t *host = malloc(bytes ? bytes : 4), *back = malloc(bytes ? bytes : 4);
    for (size_t i = 0; i < words; i++)
        host[i] = (uint32_t)(i * 2654435761u + 1);
    kiln_buffer *src = NULL, *dst = NULL;
    CHECK_OK(kiln_buffer_create(ctx, bytes ? bytes : 4, 0, NULL, &src));
    CHECK_OK(kiln_buffer_create(ctx, bytes ? bytes : 4, 0, NULL, &dst));
    if (bytes)
        CHECK_OK(kiln_buffer_write(q, src, 0, bytes, host));
    /* src -> tmp -> dst, with a zeroed array held until the end */
    kiln__chain c = KILN__CHAIN_INIT(q, 0, NULL);
    kiln_buffer *tmp = NULL;
    kiln_array *held = NULL;
    CHECK_OK(kiln__chain_tmp(&c, bytes, &tmp));
    CHECK_OK(kiln__chain_array(&c, KILN_INT32, 1, &words, &held));
    if (bytes) {
        CHECK_OK(kiln__chain_zero(&c, tmp, bytes));
        CHECK_OK(kiln__chain_copy(&c, src, tmp, bytes));
        CHECK_OK(kiln__chain_copy(&c, tmp, dst, bytes));
    }
    CHECK(c.ntmp == 1 && c.narrays == 1 && (c.last != NULL || !bytes));
    kiln_event *e = NULL;
    CHECK_OK(kiln__chain_end(&c, KILN_OK, &e));
    CHECK(e != NULL && c.ntmp == 0 && c.narrays == 0 && c.last == NULL);
    if (e)
        CHECK_OK(kiln_event_wait(e));
    kiln_event_release(e);
    memset(back, 0, bytes ? bytes : 4);
    if (bytes)
        CHECK_OK(kiln_buffer_read(q, dst, 0, bytes, back));
    CHECK_MSG(memcmp(back, host, bytes) == 0, "%zu words through the chain", words);
    KT_RELEASE(src, dst);
    KT_FREE(host, back);
}

/* A step that fails (a copy past the end of its buffer) wins; the steps
 * after it enqueue nothing (dst keeps its contents) and an earlier
 * failure is never replaced by a later one. */
static void chain_fails(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    uint32_t mark[5] = { 1, 2, 3, 4, 5 }, back[5] = { 0 };
    kiln_buffer *small = NULL, *dst = NULL;
    CHECK_OK(kiln_buffer_create(ctx, sizeof mark, 0, NULL, &small));
    CHECK_OK(kiln_buffer_create(ctx, sizeof mark, 0, NULL, &dst));
    CHECK_OK(kiln_buffer_write(q, dst, 0, sizeof mark, mark));
    kiln__chain c = KILN__CHAIN_INIT(q, 0, NULL);
    kiln_buffer *tmp = NULL;
    CHECK_OK(kiln__chain_tmp(&c, 64, &tmp));
    CHECK_OK(kiln__chain_copy(&c, small, tmp, sizeof mark));
    kiln_status bad = kiln__chain_copy(&c, tmp, small, 64); /* past small's end */
    CHECK(bad != KILN_OK);
    CHECK(c.st == bad);
    /* no-ops from here: nothing enqueued, nothing taken */
    CHECK(kiln__chain_zero(&c, dst, sizeof mark) == bad);
    kiln_buffer *none = (kiln_buffer *)&c;
    CHECK(kiln__chain_tmp(&c, 16, &none) == bad && none == NULL);
    kiln_array *no_array = (kiln_array *)&c;
    size_t one = 1;
    CHECK(kiln__chain_array(&c, KILN_INT32, 1, &one, &no_array) == bad && no_array == NULL);
    CHECK(kiln__chain_fail(&c, KILN_ERROR_INTERNAL) == bad);
    CHECK(KILN__CHAIN_DO(&c, (evaluated = -1, KILN_OK)) == bad && evaluated != -1);
    kiln_event *e = NULL;
    CHECK(kiln__chain_end(&c, KILN_OK, &e) == bad);
    CHECK(e == NULL && c.last == NULL && c.ntmp == 0);
    CHECK_OK(kiln_queue_finish(q));
    CHECK_OK(kiln_buffer_read(q, dst, 0, sizeof back, back));
    CHECK(memcmp(back, mark, sizeof mark) == 0);
    /* a failure outside the chain, given at its end, wins too */
    kiln__chain d = KILN__CHAIN_INIT(q, 0, NULL);
    CHECK_OK(kiln__chain_copy(&d, dst, small, sizeof mark));
    CHECK(kiln__chain_end(&d, KILN_ERROR_MISMATCH, &e) == KILN_ERROR_MISMATCH && e == NULL);
    KT_RELEASE(small, dst);
}

/* A chain with no command hands back a marker of the caller's wait list. */
static void chain_empty(kiln_queue *q) {
    kiln_event *first = NULL, *e = NULL;
    CHECK_OK(kiln_queue_marker(q, 0, NULL, &first));
    kiln__chain c = KILN__CHAIN_INIT(q, 1, &first);
    CHECK(kiln__chain_nw(&c) == 1 && kiln__chain_w(&c)[0] == first);
    CHECK_OK(kiln__chain_end(&c, KILN_OK, &e));
    CHECK(e != NULL && e != first);
    if (e)
        CHECK_OK(kiln_event_wait(e));
    KT_RELEASE(e, first);
    kiln__chain n = KILN__CHAIN_INIT(q, 0, NULL);
    CHECK_OK(kiln__chain_end(&n, KILN_OK, NULL));
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    static const size_t sizes[] = { 0, 1, 2, 13, 257, 4097 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        chain_ok(q, sizes[i]);
    chain_fails(q);
    chain_empty(q);
}

int main(void) {
    checker();
    kt_for_each_device(run, NULL);
    return kt_report();
}
