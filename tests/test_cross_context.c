/* Wait lists across contexts: a command waits for an event of another
 * context (another device or backend in real use), bridged through the
 * host. A gate opened (or failed) from the other context, long mixed wait
 * lists, and empty operations that must still follow their wait list.
 * The second context is on the same device, or on $KILN_TEST_PEER (a
 * selector: on the GPU machine, cuda:0 with KILN_TEST_PEER=nvidia chains
 * CUDA and OpenCL). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

typedef kt_inc_twice side;

static kiln_status launch(side *s, kiln_kernel *k, kiln_buffer *b, int n, size_t nw,
                          kiln_event *const *w, kiln_event **ev) {
    kiln_arg args[] = { KILN_ARG_BUF(b), KILN_ARG_I32(n) };
    size_t g = (size_t)(n ? n : 1);
    return kiln_kernel_launch(s->q, k, 1, &g, NULL, 2, args, nw, w, ev);
}

static int pending(kiln_event *e) {
    kiln_event_state st = KILN_EVENT_COMPLETE;
    usleep(20000); /* long enough for a command that did not wait to end */
    return kiln_event_get_state(e, &st) == KILN_OK && st != KILN_EVENT_COMPLETE &&
           st != KILN_EVENT_ERROR;
}

/* A user event of A gates a write and a kernel on B. */
static void test_gate(side *a, side *b) {
    enum { N = 1000 };
    int host[N], got[N];
    for (int i = 0; i < N; i++)
        host[i] = (int)(kt_rand_u64() % 1000);
    kiln_buffer *buf = NULL;
    kiln_event *gate = NULL, *w = NULL, *k = NULL;
    CHECK_OK(kiln_buffer_create(b->ctx, sizeof host, 0, NULL, &buf));
    CHECK_OK(kiln_event_create_user(a->ctx, &gate));
    CHECK_OK(kiln_buffer_write_async(b->q, buf, 0, sizeof host, host, 1, &gate, &w));
    CHECK_OK(launch(b, b->inc, buf, N, 1, &w, &k));
    CHECK_MSG(pending(k), "work on B ran before A's gate opened");
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(k));
    CHECK_OK(kiln_buffer_read(b->q, buf, 0, sizeof got, got));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += got[i] != host[i] + 1;
    CHECK_MSG(bad == 0, "%d of %d wrong after the gate", bad, N);
    KT_RELEASE(gate, w, k);

    /* a failed gate: the failure does not cross contexts (documented in
     * kiln.h); the command behind it runs once the gate has ended */
    kiln_event *gate2 = NULL, *w2 = NULL;
    CHECK_OK(kiln_event_create_user(a->ctx, &gate2));
    CHECK_OK(kiln_buffer_write_async(b->q, buf, 0, sizeof host, host, 1, &gate2, &w2));
    CHECK_MSG(pending(w2), "a write ran before its gate ended");
    CHECK_OK(kiln_event_set_complete(gate2, KILN_EVENT_ERROR));
    CHECK_OK(kiln_event_wait(w2));
    CHECK_STATUS(kiln_event_wait(gate2), KILN_ERROR_EVENT_FAILED);
    KT_RELEASE(gate2, w2);
    CHECK_OK(kiln_queue_finish(b->q));
    kiln_buffer_release(buf);
}

/* 20 events, every other one from A, opened in reverse order; and an empty
 * write, which must still follow its wait list. */
static void test_long_list(side *a, side *b) {
    enum { M = 20 };
    kiln_event *w[M];
    for (int i = 0; i < M; i++)
        CHECK_OK(kiln_event_create_user(i % 2 ? a->ctx : b->ctx, &w[i]));
    kiln_buffer *buf = NULL;
    int v = 7, got = 0;
    kiln_event *e = NULL, *empty = NULL;
    CHECK_OK(kiln_buffer_create(b->ctx, sizeof v, 0, NULL, &buf));
    CHECK_OK(kiln_buffer_write_async(b->q, buf, 0, sizeof v, &v, M, w, &e));
    CHECK_OK(kiln_buffer_write_async(b->q, buf, 0, 0, &v, 1, &w[M - 1], &empty));
    for (int i = M - 1; i >= 1; i--)
        CHECK_OK(kiln_event_set_complete(w[i], KILN_EVENT_COMPLETE));
    CHECK_MSG(pending(e), "a command ran before the last of its %d events", M);
    /* (the empty write is behind e in this in-order queue) */
    CHECK_OK(kiln_event_set_complete(w[0], KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(e));
    CHECK_OK(kiln_event_wait(empty));
    CHECK_OK(kiln_buffer_read(b->q, buf, 0, sizeof got, &got));
    CHECK(got == 7);
    for (int i = 0; i < M; i++)
        kiln_event_release(w[i]);
    KT_RELEASE(e, empty);

    /* an empty write waiting on a closed gate is not complete */
    kiln_event *gate = NULL, *e2 = NULL;
    CHECK_OK(kiln_event_create_user(a->ctx, &gate));
    CHECK_OK(kiln_buffer_write_async(b->q, buf, 0, 0, &v, 1, &gate, &e2));
    CHECK_MSG(pending(e2), "an empty write ignored its wait list");
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(e2));
    KT_RELEASE(gate, e2, buf);
}

/* kiln_array_copy_between_async from `from` to `to`: gated by a user event
 * of `from`, it must not land before the gate opens; a kernel queued after
 * it on `to`'s queue sees the data; a strided destination; a failed source
 * fails the returned event; bad input. */
static void test_copy_between(side *from, side *to) {
    enum { N = 4099 };
    int host[N], got[2 * N];
    for (int i = 0; i < N; i++)
        host[i] = (int)(kt_rand_u64() % 100000);
    size_t n = N, n2 = 2 * N;
    kiln_array *from_arr = NULL, *dst = NULL, *wide = NULL, *strided = NULL;
    CHECK_OK(kiln_array_from_host(from->ctx, KILN_INT32, 1, &n, host, &from_arr));
    CHECK_OK(kiln_array_empty(to->ctx, KILN_INT32, 1, &n, &dst));
    kiln_event *gate = NULL, *copied = NULL;
    CHECK_OK(kiln_event_create_user(from->ctx, &gate));
    CHECK_OK(kiln_array_copy_between_async(to->q, dst, from->q, from_arr, 1, &gate, &copied));
    /* more work behind it on the destination's in-order queue */
    CHECK_OK(launch(to, to->inc, kiln_array_buffer(dst), N, 0, NULL, NULL));
    CHECK_MSG(pending(copied), "the copy ended before its gate opened");
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(copied));
    CHECK_OK(kiln_array_read(to->q, dst, got));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += got[i] != host[i] + 1;
    CHECK_MSG(bad == 0, "copy_between_async then inc: %d of %d wrong", bad, N);
    KT_RELEASE(gate, copied);

    /* into every other element of a wider array (a strided view) */
    int zero = 0;
    CHECK_OK(kiln_array_empty(to->ctx, KILN_INT32, 1, &n2, &wide));
    CHECK_OK(kiln_array_fill(to->q, wide, KILN_ARG_I32(zero), 0, NULL, NULL));
    kiln_slice every_other = { .start = 1, .stop = 2 * N, .step = 2 };
    CHECK_OK(kiln_array_view(wide, &every_other, &strided));
    CHECK_OK(kiln_array_copy_between_async(to->q, strided, from->q, from_arr, 0, NULL, &copied));
    CHECK_OK(kiln_event_wait(copied));
    CHECK_OK(kiln_array_read(to->q, wide, got));
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += got[2 * i] != 0 || got[2 * i + 1] != host[i];
    CHECK_MSG(bad == 0, "strided copy_between_async: %d of %d wrong", bad, N);
    kiln_event_release(copied);

    /* a failed source fails the copy's event */
    CHECK_OK(kiln_event_create_user(from->ctx, &gate));
    CHECK_OK(kiln_array_copy_between_async(to->q, dst, from->q, from_arr, 1, &gate, &copied));
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_event_wait(copied), KILN_ERROR_EVENT_FAILED);
    KT_RELEASE(gate, copied);

    /* bad input: nothing enqueued, no event */
    copied = (kiln_event *)&copied;
    CHECK_STATUS(kiln_array_copy_between_async(to->q, wide, from->q, from_arr, 0, NULL, &copied),
                 KILN_ERROR_MISMATCH);
    CHECK(copied == NULL);
    CHECK_STATUS(kiln_array_copy_between_async(to->q, NULL, from->q, from_arr, 0, NULL, &copied),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_copy_between_async(from->q, dst, from->q, from_arr, 0, NULL, &copied),
                 KILN_ERROR_MISMATCH); /* dst is not of from's context */
    kiln_queue_finish(to->q);
    kiln_array_release(strided), kiln_array_release(wide);
    kiln_array_release(from_arr), kiln_array_release(dst);
}

/* Names the step (a hang shows where it stopped), then runs it. */
#define STEP(call)                \
    do {                          \
        printf("   %s\n", #call); \
        fflush(stdout);           \
        call;                     \
    } while (0)

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_device *peer = kiln_queue_device(q);
    const char *sel = getenv("KILN_TEST_PEER");
    if (sel && *sel && !CHECK_OK(kiln_device_select(sel, &peer)))
        return;
    side a, b;
    if (kt_inc_twice_open(&a, q, NULL) && kt_inc_twice_open(&b, NULL, peer)) {
        kiln_device_info ia, ib;
        kiln_device_get_info(kiln_queue_device(a.q), &ia);
        kiln_device_get_info(kiln_queue_device(b.q), &ib);
        printf("   A: %s (%s), B: %s (%s), another context\n", ia.name, ia.id, ib.name, ib.id);
        STEP(test_gate(&a, &b));
        STEP(test_gate(&b, &a));
        STEP(test_long_list(&a, &b));
        STEP((test_copy_between(&a, &b), test_copy_between(&b, &a)));
    }
    kt_inc_twice_close(&a);
    kt_inc_twice_close(&b);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
