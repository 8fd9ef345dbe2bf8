/* Buffers: create/write/read/copy/fill/map/unmap and sub-buffers against a
 * host reference, random data, awkward sizes; overruns refused. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void fill_random(unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)kt_rand_u64();
}

static int event_complete(kiln_event *e) {
    kiln_event_state s = KILN_EVENT_ERROR;
    return e && kiln_event_get_state(e, &s) == KILN_OK && s == KILN_EVENT_COMPLETE;
}

static void test_sizes(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 100003);
    for (size_t s = 0; s < ns; s++) {
        size_t n = sizes[s];
        if (n == 0)
            continue;
        unsigned char *ref = malloc(n), *got = malloc(n), *other = malloc(n);
        fill_random(ref, n);
        fill_random(other, n);
        kiln_buffer *a = NULL, *b = NULL;
        CHECK_OK(kiln_buffer_create(ctx, n, 0, ref, &a));
        CHECK_OK(kiln_buffer_create(ctx, n, KILN_BUFFER_READ_WRITE, NULL, &b));
        CHECK(kiln_buffer_size(a) == n);
        CHECK(kiln_buffer_context(a) == ctx);
        /* created from host data */
        memset(got, 0, n);
        CHECK_OK(kiln_buffer_read(q, a, 0, n, got));
        CHECK_MSG(memcmp(got, ref, n) == 0, "create with host data, n=%zu", n);
        /* async write, copy, async read chained by events */
        kiln_event *w = NULL, *c = NULL, *r = NULL;
        CHECK_OK(kiln_buffer_write_async(q, b, 0, n, other, 0, NULL, &w));
        CHECK_OK(kiln_buffer_copy(q, b, 0, a, 0, n, 1, &w, &c));
        memset(got, 0, n);
        CHECK_OK(kiln_buffer_read_async(q, a, 0, n, got, 1, &c, &r));
        CHECK_OK(kiln_event_wait(r));
        CHECK_MSG(memcmp(got, other, n) == 0, "write/copy/read, n=%zu", n);
        KT_RELEASE(w, c, r);
        /* a partial write and read at an odd offset */
        if (n > 3) {
            size_t off = n / 3, len = n - off - 1;
            memcpy(other + off, ref + off, len);
            CHECK_OK(kiln_buffer_write(q, a, off, len, ref + off));
            memset(got, 0, n);
            CHECK_OK(kiln_buffer_read(q, a, 0, n, got));
            CHECK_MSG(memcmp(got, other, n) == 0, "partial write, n=%zu", n);
            /* copy within one buffer, ranges not overlapping */
            size_t half = n / 2;
            CHECK_OK(kiln_buffer_copy(q, a, 0, a, n - half, half, 0, NULL, NULL));
            memcpy(other + n - half, other, half);
            CHECK_OK(kiln_queue_finish(q));
            CHECK_OK(kiln_buffer_read(q, a, 0, n, got));
            CHECK_MSG(memcmp(got, other, n) == 0, "copy within a buffer, n=%zu", n);
        }
        KT_RELEASE(a, b);
        KT_FREE(ref, got, other);
    }
}

static void test_fill(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    const size_t n = 4096 + 128;
    unsigned char *ref = malloc(n), *got = malloc(n);
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(ctx, n, 0, NULL, &b));
    /* kind 0: random patterns; 1-3: patterns that repeat every 1, 2 or
     * 4 bytes (zeros of a wide type, say: CUDA fills those with one
     * memset of the shorter period) */
    for (int kind = 0; kind < 4; kind++)
        for (size_t ps = 1; ps <= 128; ps *= 2) {
            unsigned char pattern[128];
            fill_random(pattern, ps);
            size_t per = kind ? (size_t)1 << (kind - 1) : ps;
            for (size_t i = per; i < ps; i++)
                pattern[i] = pattern[i % per];
            if (kind == 1 && ps % 16 == 0)
                memset(pattern, 0, ps); /* zeros too */
            fill_random(ref, n);
            CHECK_OK(kiln_buffer_write(q, b, 0, n, ref));
            size_t off = ps * 3, len = ps * (n / ps - 5);
            for (size_t i = 0; i < len; i++)
                ref[off + i] = pattern[i % ps];
            kiln_event *e = NULL;
            CHECK_OK(kiln_buffer_fill(q, b, pattern, ps, off, len, 0, NULL, &e));
            CHECK_OK(kiln_event_wait(e));
            kiln_event_release(e);
            CHECK_OK(kiln_buffer_read(q, b, 0, n, got));
            CHECK_MSG(memcmp(got, ref, n) == 0, "fill with a %zu-byte pattern (kind %d)", ps, kind);
        }
    /* fills larger than 1 MiB: on CUDA a kernel of 16-byte stores where
     * the start and length are 16-byte aligned (aligned: offset 0, length
     * a multiple of 16), else memsets or the pattern doubled by copies
     * (offset ps, an odd item count) */
    {
        const size_t big = ((size_t)3 << 20) + 8 * 7;
        unsigned char *bref = malloc(big), *bgot = malloc(big);
        kiln_buffer *bb = NULL;
        if (CHECK_OK(kiln_buffer_create(ctx, big, 0, NULL, &bb))) {
            for (size_t at = 0; at < 12; at++) {
                size_t ps = (size_t)1 << (at / 2), aligned = at % 2 == 0;
                size_t unit = ps > 16 ? ps : 16;
                unsigned char pattern[32];
                fill_random(pattern, ps);
                fill_random(bref, big);
                CHECK_OK(kiln_buffer_write(q, bb, 0, big, bref));
                size_t off = aligned ? 0 : ps;
                size_t len = aligned ? (big - 64) / unit * unit : (big - 2 * ps) / ps * ps;
                for (size_t i = 0; i < len; i++)
                    bref[off + i] = pattern[i % ps];
                CHECK_OK(kiln_buffer_fill(q, bb, pattern, ps, off, len, 0, NULL, NULL));
                CHECK_OK(kiln_buffer_read(q, bb, 0, big, bgot));
                CHECK_MSG(memcmp(bgot, bref, big) == 0, "a %zu-byte fill of %zu bytes", ps, len);
            }
        }
        kiln_buffer_release(bb);
        KT_FREE(bref, bgot);
    }
    int pat = 0;
    CHECK_STATUS(kiln_buffer_fill(q, b, &pat, 3, 0, 9, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_buffer_fill(q, b, &pat, 0, 0, 8, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_buffer_fill(q, b, &pat, 256, 0, 256, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_buffer_fill(q, b, &pat, 4, 2, 8, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_buffer_fill(q, b, &pat, 4, 0, 6, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_buffer_fill(q, b, &pat, 4, n - 4, 8, 0, NULL, NULL), KILN_ERROR_OUT_OF_RANGE);
    kiln_buffer_release(b);
    KT_FREE(ref, got);
}

static void test_map(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    const size_t n = 10007;
    unsigned char *ref = malloc(n), *got = malloc(n);
    fill_random(ref, n);
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(ctx, n, 0, ref, &b));
    void *p = NULL;
    CHECK_OK(kiln_buffer_map(q, b, KILN_MAP_READ | KILN_MAP_WRITE, 100, 5000, &p));
    if (p) {
        CHECK(memcmp(p, ref + 100, 5000) == 0);
        memset(p, 0xAB, 17);
        memset(ref + 100, 0xAB, 17);
        kiln_event *e = NULL;
        CHECK_OK(kiln_buffer_unmap(q, b, p, 0, NULL, &e));
        CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
    }
    CHECK_OK(kiln_buffer_read(q, b, 0, n, got));
    CHECK(memcmp(got, ref, n) == 0);
    p = NULL;
    CHECK_OK(kiln_buffer_map(q, b, KILN_MAP_WRITE_INVALIDATE, 0, 64, &p));
    if (p) {
        memset(p, 0x11, 64);
        memset(ref, 0x11, 64);
        CHECK_OK(kiln_buffer_unmap(q, b, p, 0, NULL, NULL));
        CHECK_OK(kiln_buffer_read(q, b, 0, n, got));
        CHECK(memcmp(got, ref, n) == 0);
    }
    CHECK_STATUS(kiln_buffer_map(q, b, KILN_MAP_READ, n - 10, 11, &p), KILN_ERROR_OUT_OF_RANGE);
    CHECK(p == NULL);
    CHECK_STATUS(kiln_buffer_map(q, b, 0, 0, 16, &p), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_buffer_map(q, b, 64, 0, 16, &p), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_buffer_map(q, b, KILN_MAP_READ, 0, 0, &p), KILN_ERROR_INVALID_ARGUMENT);
    kiln_buffer_release(b);
    KT_FREE(ref, got);
}

static void test_sub(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    const size_t n = 8192;
    unsigned char *ref = malloc(n), *got = malloc(n);
    fill_random(ref, n);
    kiln_buffer *parent = NULL, *sub = NULL, *subsub = NULL;
    CHECK_OK(kiln_buffer_create(ctx, n, 0, ref, &parent));
    CHECK_OK(kiln_buffer_create_sub(parent, 1024, 4096, &sub));
    CHECK(kiln_buffer_size(sub) == 4096);
    CHECK(kiln_buffer_context(sub) == ctx);
    /* a view of a view */
    CHECK_OK(kiln_buffer_create_sub(sub, 2048, 1000, &subsub));
    /* the view holds the parent: release ours */
    kiln_buffer_release(parent);
    CHECK_OK(kiln_buffer_read(q, sub, 0, 4096, got));
    CHECK(memcmp(got, ref + 1024, 4096) == 0);
    CHECK_OK(kiln_buffer_read(q, subsub, 0, 1000, got));
    CHECK(memcmp(got, ref + 1024 + 2048, 1000) == 0);
    unsigned char patch[300];
    fill_random(patch, sizeof patch);
    CHECK_OK(kiln_buffer_write(q, subsub, 7, sizeof patch, patch));
    memcpy(ref + 1024 + 2048 + 7, patch, sizeof patch);
    CHECK_OK(kiln_buffer_read(q, sub, 0, 4096, got));
    CHECK(memcmp(got, ref + 1024, 4096) == 0);
    /* overlapping copies inside one root are refused */
    CHECK_STATUS(kiln_buffer_copy(q, sub, 2048, subsub, 0, 100, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_buffer_copy(q, sub, 0, sub, 50, 100, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* views out of range */
    kiln_buffer *bad = NULL;
    CHECK_STATUS(kiln_buffer_create_sub(sub, 4000, 200, &bad), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_buffer_create_sub(sub, 5000, 1, &bad), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_buffer_create_sub(sub, SIZE_MAX, 2, &bad), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_buffer_create_sub(sub, 0, 0, &bad), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(bad == NULL);
    CHECK_OK(kiln_buffer_retain(subsub));
    KT_RELEASE(subsub, sub);
    CHECK_OK(kiln_buffer_read(q, subsub, 0, 300, got)); /* still alive through the chain */
    CHECK(memcmp(got, ref + 1024 + 2048, 300) == 0);
    kiln_buffer_release(subsub);
    KT_FREE(ref, got);
}

static void test_errors(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    const size_t n = 1000;
    unsigned char ref[1000], got[1000], junk[2000];
    fill_random(ref, n);
    fill_random(junk, sizeof junk);
    kiln_buffer *b = NULL, *b2 = NULL;
    CHECK_STATUS(kiln_buffer_create(ctx, 0, 0, NULL, &b), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(b == NULL);
    CHECK_STATUS(kiln_buffer_create(ctx, 16, 0x80, NULL, &b), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(
        kiln_buffer_create(ctx, 16, KILN_BUFFER_READ_ONLY | KILN_BUFFER_WRITE_ONLY, NULL, &b),
        KILN_ERROR_INVALID_ARGUMENT);
    CHECK_OK(kiln_buffer_create(ctx, n, 0, ref, &b));
    CHECK_OK(kiln_buffer_create(ctx, n, 0, ref, &b2));
    /* overruns: refused, nothing enqueued, contents unchanged */
    kiln_event *e = (kiln_event *)&e;
    CHECK_STATUS(kiln_buffer_write(q, b, 1, n, junk), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_buffer_write(q, b, n + 1, 0, junk), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_buffer_write(q, b, SIZE_MAX, 2, junk), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_buffer_write_async(q, b, 0, n + 1, junk, 0, NULL, &e),
                 KILN_ERROR_OUT_OF_RANGE);
    CHECK(e == NULL);
    CHECK_STATUS(kiln_buffer_write_async(q, b, 2, SIZE_MAX, junk, 0, NULL, &e),
                 KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_buffer_read(q, b, n - 1, 2, got), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_buffer_read_async(q, b, 0, 2 * n, got, 0, NULL, &e), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_buffer_copy(q, b, 1, b2, 0, n, 0, NULL, &e), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_buffer_copy(q, b, 0, b2, 1, n, 0, NULL, &e), KILN_ERROR_OUT_OF_RANGE);
    CHECK_MSG(strstr(kiln_last_error_message(), "dst") != NULL, "%s", kiln_last_error_message());
    CHECK_OK(kiln_queue_finish(q));
    CHECK_OK(kiln_buffer_read(q, b, 0, n, got));
    CHECK(memcmp(got, ref, n) == 0);
    CHECK_OK(kiln_buffer_read(q, b2, 0, n, got));
    CHECK(memcmp(got, ref, n) == 0);
    /* the last byte exactly is fine */
    CHECK_OK(kiln_buffer_read(q, b, n - 1, 1, got));
    CHECK(got[0] == ref[n - 1]);
    /* zero-size transfers: a completed event, nothing else */
    kiln_event *z = NULL;
    CHECK_OK(kiln_buffer_write_async(q, b, n, 0, junk, 0, NULL, &z));
    CHECK(event_complete(z));
    kiln_event_release(z);
    CHECK_OK(kiln_buffer_read_async(q, b, 0, 0, got, 0, NULL, &z));
    CHECK(event_complete(z));
    CHECK_OK(kiln_event_wait(z));
    kiln_event_release(z);
    CHECK_OK(kiln_buffer_copy(q, b, 0, b2, 0, 0, 0, NULL, &z));
    CHECK(event_complete(z));
    kiln_event_release(z);
    int pat = 5;
    CHECK_OK(kiln_buffer_fill(q, b, &pat, 4, 0, 0, 0, NULL, &z));
    CHECK(event_complete(z));
    kiln_event_release(z);
    CHECK_OK(kiln_buffer_write(q, b, 0, 0, NULL));
    CHECK_OK(kiln_buffer_read(q, b, 0, 0, NULL));

    /* a buffer of another context */
    kiln_device *dev = kiln_queue_device(q);
    kiln_context *ctx2 = NULL;
    kiln_buffer *foreign = NULL;
    kiln_event *ue = NULL;
    CHECK_OK(kiln_context_create(&dev, 1, &ctx2));
    CHECK_OK(kiln_buffer_create(ctx2, n, 0, NULL, &foreign));
    CHECK_STATUS(kiln_buffer_write(q, foreign, 0, 4, junk), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_buffer_read_async(q, foreign, 0, 4, got, 0, NULL, &e), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_buffer_copy(q, b, 0, foreign, 0, 4, 0, NULL, &e), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_buffer_fill(q, foreign, &pat, 4, 0, 4, 0, NULL, &e), KILN_ERROR_MISMATCH);
    void *p = NULL;
    CHECK_STATUS(kiln_buffer_map(q, foreign, KILN_MAP_READ, 0, 4, &p), KILN_ERROR_MISMATCH);
    /* an event of another context in a wait list is bridged: the write
     * waits for it (tests/test_cross_context.c covers the rest) */
    CHECK_OK(kiln_event_create_user(ctx2, &ue));
    CHECK_OK(kiln_buffer_write_async(q, b, 0, 4, junk, 1, &ue, &e));
    kiln_event_state es = KILN_EVENT_COMPLETE;
    CHECK_OK(kiln_event_get_state(e, &es));
    CHECK(es != KILN_EVENT_COMPLETE);
    CHECK_OK(kiln_event_set_complete(ue, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(e));
    KT_RELEASE(e, ue, foreign, ctx2, b, b2);
}

int main(void) {
    KT_FOR_EACH_DEVICE_STEPS(test_sizes, test_fill, test_map, test_sub, test_errors);
    return kt_report();
}
