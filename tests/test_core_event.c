/* Events: profiling times, user events gating work, markers and barriers,
 * callbacks (each exactly once, on the kiln-callback thread, also when
 * registered after completion), continuations, out-of-order queues. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

typedef kt_inc_twice env;

/* Waits (up to 10 s) until *counter reaches want. */
static int wait_count(atomic_int *counter, int want) {
    for (int i = 0; i < 10000 && atomic_load(counter) < want; i++)
        usleep(1000);
    usleep(2000); /* a little more, to catch extra calls */
    return atomic_load(counter) == want;
}

static kiln_status launch(env *e, kiln_kernel *k, kiln_buffer *b, int n, size_t nw,
                          kiln_event *const *w, kiln_event **ev) {
    kiln_arg args[] = { KILN_ARG_BUF(b), KILN_ARG_I32(n) };
    size_t g = (size_t)n;
    return kiln_kernel_launch(e->q, k, 1, &g, NULL, 2, args, nw, w, ev);
}

static void test_profiling(env *e) {
    kiln_buffer *b = NULL;
    int data[1024] = { 0 };
    CHECK_OK(kiln_buffer_create(e->ctx, sizeof data, 0, data, &b));
    kiln_event *ev[3] = { NULL, NULL, NULL };
    CHECK_OK(kiln_buffer_write_async(e->q, b, 0, sizeof data, data, 0, NULL, &ev[0]));
    CHECK_OK(launch(e, e->inc, b, 1024, 1, &ev[0], &ev[1]));
    CHECK_OK(kiln_buffer_read_async(e->q, b, 0, sizeof data, data, 1, &ev[1], &ev[2]));
    CHECK_OK(kiln_event_wait_all(3, ev));
    uint64_t prev_end = 0;
    for (int i = 0; i < 3; i++) {
        kiln_event_times t;
        if (!CHECK_OK(kiln_event_get_times(ev[i], &t)))
            continue;
        CHECK_MSG(t.queued <= t.submitted && t.submitted <= t.started && t.started <= t.ended,
                  "event %d: %llu %llu %llu %llu", i, (unsigned long long)t.queued,
                  (unsigned long long)t.submitted, (unsigned long long)t.started,
                  (unsigned long long)t.ended);
        CHECK(t.ended > 0);
        CHECK_MSG(t.started >= prev_end, "in-order commands do not overlap (%d)", i);
        prev_end = t.ended;
        kiln_event_state s;
        CHECK_OK(kiln_event_get_state(ev[i], &s));
        CHECK(s == KILN_EVENT_COMPLETE);
    }
    CHECK(data[0] == 1 && data[1023] == 1);
    for (int i = 0; i < 3; i++)
        kiln_event_release(ev[i]);
    /* no profiling on this queue */
    kiln_queue *plain = NULL;
    CHECK_OK(kiln_queue_create(e->ctx, kiln_queue_device(e->q), 0, &plain));
    kiln_event *pe = NULL;
    CHECK_OK(kiln_buffer_read_async(plain, b, 0, 4, data, 0, NULL, &pe));
    CHECK_OK(kiln_event_wait(pe));
    kiln_event_times t;
    CHECK_STATUS(kiln_event_get_times(pe, &t), KILN_ERROR_WRONG_STATE);
    CHECK_MSG(strstr(kiln_last_error_message(), "PROFILING") != NULL, "%s",
              kiln_last_error_message());
    KT_RELEASE(pe, plain);
    /* a user event has no times; an incomplete event neither */
    kiln_event *u = NULL, *k = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &u));
    CHECK_STATUS(kiln_event_get_times(u, &t), KILN_ERROR_WRONG_STATE);
    CHECK_OK(launch(e, e->inc, b, 1024, 1, &u, &k));
    CHECK_STATUS(kiln_event_get_times(k, &t), KILN_ERROR_WRONG_STATE);
    CHECK_OK(kiln_event_set_complete(u, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(k));
    CHECK_OK(kiln_event_get_times(k, &t));
    KT_RELEASE(u, k, b);
}

static void test_user_events(env *e) {
    int data[100], out[100];
    for (int i = 0; i < 100; i++)
        data[i] = i;
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(e->ctx, sizeof data, 0, data, &b));
    kiln_event *gate = NULL, *k1 = NULL, *k2 = NULL, *marker = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &gate));
    kiln_event_state s;
    CHECK_OK(kiln_event_get_state(gate, &s));
    CHECK(s != KILN_EVENT_COMPLETE);
    CHECK_OK(launch(e, e->inc, b, 100, 1, &gate, &k1));
    CHECK_OK(launch(e, e->twice, b, 100, 1, &k1, &k2));
    CHECK_OK(kiln_queue_marker(e->q, 1, &k2, &marker));
    CHECK_OK(kiln_queue_flush(e->q));
    usleep(20000);
    CHECK_OK(kiln_event_get_state(k1, &s));
    CHECK_MSG(s != KILN_EVENT_COMPLETE, "the kernel ran before its gate opened (state %d)", s);
    CHECK_OK(kiln_event_get_state(marker, &s));
    CHECK(s != KILN_EVENT_COMPLETE);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_STATUS(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE), KILN_ERROR_WRONG_STATE);
    CHECK_STATUS(kiln_event_set_complete(gate, KILN_EVENT_ERROR), KILN_ERROR_WRONG_STATE);
    CHECK_OK(kiln_event_wait(marker));
    CHECK_OK(kiln_event_get_state(k2, &s));
    CHECK(s == KILN_EVENT_COMPLETE);
    CHECK_OK(kiln_buffer_read(e->q, b, 0, sizeof out, out));
    int good = 1;
    for (int i = 0; i < 100; i++)
        good &= out[i] == (i + 1) * 2;
    CHECK(good);
    /* only user events are completed by the host */
    CHECK_STATUS(kiln_event_set_complete(k1, KILN_EVENT_COMPLETE), KILN_ERROR_WRONG_STATE);
    kiln_event *u2 = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &u2));
    CHECK_STATUS(kiln_event_set_complete(u2, KILN_EVENT_RUNNING), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_OK(kiln_event_set_complete(u2, KILN_EVENT_COMPLETE));
    kiln_event_release(u2);
    /* a barrier with no wait list, then a marker with none */
    kiln_event *bar = NULL, *mk = NULL;
    CHECK_OK(launch(e, e->inc, b, 100, 0, NULL, NULL));
    CHECK_OK(kiln_queue_barrier(e->q, 0, NULL, &bar));
    CHECK_OK(kiln_queue_marker(e->q, 0, NULL, &mk));
    CHECK_OK(kiln_queue_barrier(e->q, 0, NULL, NULL));
    kiln_event *both[2] = { bar, mk };
    CHECK_OK(kiln_event_wait_all(2, both));
    CHECK_OK(kiln_buffer_read(e->q, b, 0, sizeof out, out));
    CHECK(out[5] == 13);
    KT_RELEASE(bar, mk);
    /* events of two contexts in one wait */
    kiln_device *dev = kiln_queue_device(e->q);
    kiln_context *ctx2 = NULL;
    kiln_event *mixed[3] = { NULL, NULL, NULL };
    CHECK_OK(kiln_context_create(&dev, 1, &ctx2));
    CHECK_OK(kiln_event_create_user(ctx2, &mixed[0]));
    CHECK_OK(kiln_queue_marker(e->q, 0, NULL, &mixed[2]));
    CHECK_OK(kiln_event_set_complete(mixed[0], KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait_all(3, mixed));
    KT_RELEASE(mixed[0], mixed[2], ctx2);
    /* a failed user event fails what waits on it */
    kiln_event *bad = NULL, *dep = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &bad));
    CHECK_OK(kiln_queue_marker(e->q, 1, &bad, &dep));
    CHECK_OK(kiln_event_set_complete(bad, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_event_wait(bad), KILN_ERROR_EVENT_FAILED);
    CHECK_OK(kiln_event_get_state(bad, &s));
    CHECK(s == KILN_EVENT_ERROR);
    /* KILN_EVENT_ERROR covers "a dependency failed" (kiln.h): PoCL, NVIDIA's
     * OpenCL and the CUDA backend all fail the marker */
    CHECK_STATUS(kiln_event_wait(dep), KILN_ERROR_EVENT_FAILED);
    CHECK_OK(kiln_event_get_state(dep, &s));
    CHECK(s == KILN_EVENT_ERROR);
    KT_RELEASE(bad, dep);
    kiln_queue_finish(e->q); /* may report the failure */
    KT_RELEASE(gate, k1, k2, marker, b);
}

#define NCB 64
static atomic_int cb_total, cb_each[NCB], cb_bad_thread, cb_errors;

static void count_cb(kiln_event *ev, kiln_event_state state, void *user) {
    intptr_t i = (intptr_t)user;
    char name[32] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    if (strcmp(name, "kiln-callback") != 0)
        atomic_fetch_add(&cb_bad_thread, 1);
    /* the event is alive and complete while its callback runs */
    kiln_event_state s = KILN_EVENT_QUEUED;
    if (kiln_event_get_state(ev, &s) != KILN_OK || s != state)
        atomic_fetch_add(&cb_errors, 1);
    if (state == KILN_EVENT_ERROR)
        atomic_fetch_add(&cb_errors, 100);
    atomic_fetch_add(&cb_each[i], 1);
    atomic_fetch_add(&cb_total, 1);
}

static atomic_int err_cb_calls, err_cb_state;
static void error_cb(kiln_event *ev, kiln_event_state state, void *user) {
    (void)ev, (void)user;
    atomic_store(&err_cb_state, (int)state);
    atomic_fetch_add(&err_cb_calls, 1);
}

typedef struct chain_ctx {
    env *e;
    kiln_buffer *b;
    atomic_int done;
} chain_ctx;

/* A callback that enqueues more work. */
static void enqueue_cb(kiln_event *ev, kiln_event_state state, void *user) {
    (void)ev, (void)state;
    chain_ctx *c = user;
    kiln_event *k = NULL;
    if (launch(c->e, c->e->inc, c->b, 10, 0, NULL, &k) == KILN_OK) {
        kiln_event_wait(k);
        kiln_event_release(k);
    }
    atomic_store(&c->done, 1);
}

static void test_callbacks(env *e) {
    kiln_buffer *b = NULL;
    int zero[256] = { 0 };
    CHECK_OK(kiln_buffer_create(e->ctx, sizeof zero, 0, zero, &b));
    atomic_store(&cb_total, 0);
    for (int i = 0; i < NCB; i++)
        atomic_store(&cb_each[i], 0);
    kiln_event *gate = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &gate));
    /* half registered while pending (gated), half after completion */
    kiln_event *evs[NCB];
    for (int i = 0; i < NCB / 2; i++) {
        CHECK_OK(launch(e, e->inc, b, 256, 1, &gate, &evs[i]));
        CHECK_OK(kiln_event_on_complete(evs[i], count_cb, (void *)(intptr_t)i));
        kiln_event_release(evs[i]); /* the callback keeps it alive */
    }
    usleep(10000);
    CHECK(atomic_load(&cb_total) == 0);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    for (int i = NCB / 2; i < NCB; i++) {
        CHECK_OK(kiln_buffer_read_async(e->q, b, 0, 4, &zero[i], 0, NULL, &evs[i]));
        CHECK_OK(kiln_event_wait(evs[i]));
        CHECK_OK(kiln_event_on_complete(evs[i], count_cb, (void *)(intptr_t)i));
    }
    CHECK_OK(kiln_queue_finish(e->q));
    CHECK_MSG(wait_count(&cb_total, NCB), "callbacks: %d of %d", atomic_load(&cb_total), NCB);
    int once = 1;
    for (int i = 0; i < NCB; i++)
        once &= atomic_load(&cb_each[i]) == 1;
    CHECK_MSG(once, "every callback exactly once");
    CHECK(atomic_load(&cb_bad_thread) == 0);
    CHECK(atomic_load(&cb_errors) == 0);
    for (int i = NCB / 2; i < NCB; i++)
        kiln_event_release(evs[i]);
    /* several callbacks on one event */
    atomic_store(&cb_total, 0);
    for (int i = 0; i < NCB; i++)
        atomic_store(&cb_each[i], 0);
    kiln_event *one = NULL;
    CHECK_OK(launch(e, e->inc, b, 256, 0, NULL, &one));
    for (int i = 0; i < 8; i++)
        CHECK_OK(kiln_event_on_complete(one, count_cb, (void *)(intptr_t)i));
    kiln_event_release(one);
    CHECK(wait_count(&cb_total, 8));
    /* a failed event: the callback says so (counted from 0 on each device) */
    atomic_store(&err_cb_calls, 0);
    kiln_event *bad = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &bad));
    CHECK_OK(kiln_event_on_complete(bad, error_cb, NULL));
    CHECK_OK(kiln_event_set_complete(bad, KILN_EVENT_ERROR));
    CHECK(wait_count(&err_cb_calls, 1));
    CHECK(atomic_load(&err_cb_state) == KILN_EVENT_ERROR);
    /* registered after the failure: still called, still told */
    atomic_store(&err_cb_state, 0);
    CHECK_OK(kiln_event_on_complete(bad, error_cb, NULL));
    CHECK(wait_count(&err_cb_calls, 2));
    CHECK(atomic_load(&err_cb_state) == KILN_EVENT_ERROR);
    kiln_event_release(bad);
    /* a callback may enqueue work */
    chain_ctx c = { .e = e, .b = b };
    atomic_init(&c.done, 0);
    kiln_event *first = NULL;
    CHECK_OK(launch(e, e->inc, b, 10, 0, NULL, &first));
    CHECK_OK(kiln_event_on_complete(first, enqueue_cb, &c));
    CHECK(wait_count(&c.done, 1));
    kiln_event_release(first);
    /* a failed enqueue never calls back: nothing to register on */
    kiln_event *none = (kiln_event *)&none;
    CHECK_STATUS(kiln_buffer_read_async(e->q, b, 0, 1 << 20, zero, 0, NULL, &none),
                 KILN_ERROR_OUT_OF_RANGE);
    CHECK(none == NULL);
    KT_RELEASE(gate, b);
}

static atomic_int cont_order[4], cont_seq;
static kiln_status cont_step(kiln_event_state state, void *user) {
    intptr_t i = (intptr_t)user;
    atomic_store(&cont_order[i], atomic_fetch_add(&cont_seq, 1) + 1);
    return state == KILN_EVENT_COMPLETE ? KILN_OK : KILN_ERROR_EVENT_FAILED;
}
static kiln_status cont_fail(kiln_event_state state, void *user) {
    (void)state, (void)user;
    return KILN_ERROR_INTERNAL;
}

static void test_continuations(env *e) {
    int data[64];
    for (int i = 0; i < 64; i++)
        data[i] = i;
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(e->ctx, sizeof data, 0, data, &b));
    atomic_store(&cont_seq, 0);
    kiln_event *gate = NULL, *k1 = NULL, *n1 = NULL, *n2 = NULL, *k2 = NULL, *n3 = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &gate));
    CHECK_OK(launch(e, e->inc, b, 64, 1, &gate, &k1));
    CHECK_OK(kiln_event_then(k1, cont_step, (void *)(intptr_t)0, &n1));
    CHECK_OK(kiln_event_then(n1, cont_step, (void *)(intptr_t)1, &n2));
    /* device work waiting on a host step */
    CHECK_OK(launch(e, e->twice, b, 64, 1, &n2, &k2));
    CHECK_OK(kiln_event_then(k2, cont_step, (void *)(intptr_t)2, &n3));
    CHECK_STATUS(kiln_event_set_complete(n1, KILN_EVENT_COMPLETE), KILN_ERROR_WRONG_STATE);
    usleep(10000);
    CHECK(atomic_load(&cont_seq) == 0);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(n3));
    CHECK(atomic_load(&cont_order[0]) == 1 && atomic_load(&cont_order[1]) == 2 &&
          atomic_load(&cont_order[2]) == 3);
    int out[64];
    CHECK_OK(kiln_buffer_read(e->q, b, 0, sizeof out, out));
    int good = 1;
    for (int i = 0; i < 64; i++)
        good &= out[i] == (i + 1) * 2;
    CHECK(good);
    /* a failing continuation fails its event, and what follows sees it */
    kiln_event *f1 = NULL, *f2 = NULL;
    CHECK_OK(kiln_event_then(n3, cont_fail, NULL, &f1));
    CHECK_STATUS(kiln_event_wait(f1), KILN_ERROR_EVENT_FAILED);
    atomic_store(&cont_order[3], 0);
    CHECK_OK(kiln_event_then(f1, cont_step, (void *)(intptr_t)3, &f2));
    CHECK_STATUS(kiln_event_wait(f2), KILN_ERROR_EVENT_FAILED);
    CHECK(atomic_load(&cont_order[3]) != 0);
    kiln_event *list[] = { gate, k1, n1, n2, k2, n3, f1, f2 };
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        kiln_event_release(list[i]);
    kiln_buffer_release(b);
}

static void test_out_of_order(env *e) {
    kiln_queue *oq = NULL;
    kiln_status st =
        kiln_queue_create(e->ctx, kiln_queue_device(e->q), KILN_QUEUE_OUT_OF_ORDER, &oq);
    if (st == KILN_ERROR_UNSUPPORTED) { /* CUDA: a queue is one stream */
        printf("  out-of-order queues unsupported: %s\n", kiln_last_error_message());
        CHECK_MSG(strstr(kiln_last_error_message(), "out-of-order") != NULL, "%s",
                  kiln_last_error_message());
        CHECK(oq == NULL);
        return;
    }
    if (!CHECK_OK(st))
        return;
    enum { N = 5000 };
    int *data = malloc(N * sizeof *data), *out = malloc(N * sizeof *out);
    for (int i = 0; i < N; i++)
        data[i] = (int)(kt_rand_u64() % 1000);
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(e->ctx, N * sizeof *data, 0, NULL, &b));
    for (int round = 0; round < 5; round++) {
        kiln_event *w = NULL, *k1 = NULL, *k2 = NULL, *r = NULL;
        CHECK_OK(kiln_buffer_write_async(oq, b, 0, N * sizeof *data, data, 0, NULL, &w));
        kiln_arg args[] = { KILN_ARG_BUF(b), KILN_ARG_I32(N) };
        size_t g = N;
        CHECK_OK(kiln_kernel_launch(oq, e->inc, 1, &g, NULL, 2, args, 1, &w, &k1));
        CHECK_OK(kiln_kernel_launch(oq, e->twice, 1, &g, NULL, 2, args, 1, &k1, &k2));
        CHECK_OK(kiln_buffer_read_async(oq, b, 0, N * sizeof *out, out, 1, &k2, &r));
        CHECK_OK(kiln_event_wait(r));
        int good = 1;
        for (int i = 0; i < N; i++)
            good &= out[i] == (data[i] + 1) * 2;
        CHECK_MSG(good, "out-of-order round %d", round);
        KT_RELEASE(w, k1, k2, r);
    }
    /* a barrier orders what comes after it */
    kiln_event *bar = NULL;
    CHECK_OK(kiln_buffer_write_async(oq, b, 0, N * sizeof *data, data, 0, NULL, NULL));
    CHECK_OK(kiln_queue_barrier(oq, 0, NULL, &bar));
    kiln_arg args[] = { KILN_ARG_BUF(b), KILN_ARG_I32(N) };
    size_t g = N;
    CHECK_OK(kiln_kernel_launch(oq, e->inc, 1, &g, NULL, 2, args, 0, NULL, NULL));
    CHECK_OK(kiln_queue_barrier(oq, 0, NULL, NULL));
    CHECK_OK(kiln_buffer_read(oq, b, 0, N * sizeof *out, out));
    CHECK_OK(kiln_queue_finish(oq));
    int good = 1;
    for (int i = 0; i < N; i++)
        good &= out[i] == data[i] + 1;
    CHECK(good);
    /* a marker with no wait list waits for every command before it */
    kiln_event *gate = NULL, *m = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &gate));
    CHECK_OK(kiln_buffer_write_async(oq, b, 0, N * sizeof *data, data, 1, &gate, NULL));
    CHECK_OK(kiln_kernel_launch(oq, e->inc, 1, &g, NULL, 2, args, 0, NULL, NULL));
    CHECK_OK(kiln_queue_marker(oq, 0, NULL, &m));
    kiln_event_state ms = KILN_EVENT_COMPLETE;
    usleep(20000);
    CHECK_OK(kiln_event_get_state(m, &ms));
    CHECK_MSG(ms != KILN_EVENT_COMPLETE, "the marker completed before a gated command");
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(m));
    CHECK_OK(kiln_queue_finish(oq));
    KT_RELEASE(gate, m, bar, b, oq);
    KT_FREE(data, out);
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* kiln_event_wait_timeout: a gate that never opens times out after about
 * the time asked (and the work behind it still runs once it opens); a
 * completed event returns at once; a failed one is EVENT_FAILED. */
static void test_wait_timeout(env *e) {
    int data[64] = { 0 }, out[64];
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(e->ctx, sizeof data, 0, data, &b));
    kiln_event *gate = NULL, *k = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &gate));
    CHECK_OK(launch(e, e->inc, b, 64, 1, &gate, &k));
    double t0 = now_ms();
    CHECK_STATUS(kiln_event_wait_timeout(k, 50), KILN_ERROR_TIMEOUT);
    double spent = now_ms() - t0;
    CHECK_MSG(spent >= 49 && spent < 5000, "timed out after %.1f ms, asked 50", spent);
    CHECK(strstr(kiln_last_error_message(), "50 ms") != NULL);
    CHECK_STATUS(kiln_event_wait_timeout(k, 0), KILN_ERROR_TIMEOUT);
    CHECK_STATUS(kiln_event_wait_timeout(gate, 1), KILN_ERROR_TIMEOUT);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait_timeout(k, 60000));
    CHECK_OK(kiln_event_wait_timeout(k, 0)); /* complete: at once */
    CHECK_OK(kiln_buffer_read(e->q, b, 0, sizeof out, out));
    CHECK(out[0] == 1 && out[63] == 1);
    kiln_event *bad = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &bad));
    CHECK_OK(kiln_event_set_complete(bad, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_event_wait_timeout(bad, 1000), KILN_ERROR_EVENT_FAILED);
    CHECK_STATUS(kiln_event_wait_timeout(NULL, 10), KILN_ERROR_NULL_HANDLE);
    KT_RELEASE(bad, k, gate, b);
}

/* A command enqueued after an event it waits on has failed ends, and so
 * does a chain behind it, on every device: PoCL 5 hung it, and every later
 * wait on the queue (pocl/pocl#2214), so there kiln runs it as behind a
 * completed event (waitlist.c); other drivers fail it (then nothing ran)
 * or run it. */
static void test_after_failure(env *e) {
    int data[4] = { 1, 2, 3, 4 }, got[4] = { 0 };
    kiln_buffer *b = NULL;
    kiln_event *bad = NULL, *bad2 = NULL, *k1 = NULL, *k2 = NULL;
    CHECK_OK(kiln_buffer_create(e->ctx, sizeof data, 0, data, &b));
    CHECK_OK(kiln_event_create_user(e->ctx, &bad));
    CHECK_OK(kiln_event_create_user(e->ctx, &bad2));
    CHECK_OK(kiln_event_set_complete(bad, KILN_EVENT_ERROR));
    CHECK_OK(kiln_event_set_complete(bad2, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_event_wait(bad), KILN_ERROR_EVENT_FAILED);
    kiln_event *both[2] = { bad, bad2 };
    /* NVIDIA's OpenCL refuses the enqueue itself
     * (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST): nothing runs */
    kiln_status st = launch(e, e->inc, b, 4, 2, both, &k1);
    CHECK(st == KILN_OK || st == KILN_ERROR_EVENT_FAILED);
    if (st == KILN_OK)
        CHECK_OK(launch(e, e->inc, b, 4, 1, &k1, &k2));
    if (k2)
        st = kiln_event_wait(k2);
    CHECK(st == KILN_OK || st == KILN_ERROR_EVENT_FAILED);
    kiln_device_info info;
    CHECK_OK(kiln_device_get_info(kiln_queue_device(e->q), &info));
    if (strstr(info.version, "PoCL"))
        CHECK_STATUS(st, KILN_OK);
    kiln_queue_finish(e->q); /* may report the failure */
    CHECK_OK(kiln_buffer_read(e->q, b, 0, sizeof got, got));
    int ran = got[0] == 3 && got[3] == 6, none = got[0] == 1 && got[3] == 4;
    CHECK_MSG(st == KILN_OK ? ran : none, "after a failed dependency (%s): %d %d",
              kiln_status_name(st), got[0], got[3]);
    CHECK_STATUS(kiln_event_wait(bad2), KILN_ERROR_EVENT_FAILED); /* still reports it */
    kiln_event *held[] = { bad, bad2, k1, k2 };
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
        kiln_event_release(held[i]);
    kiln_buffer_release(b);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    env e;
    if (!kt_inc_twice_open(&e, q, NULL)) {
        kt_inc_twice_close(&e);
        return;
    }
    static void (*const steps[])(
        env *) = { test_profiling,     test_user_events,  test_wait_timeout, test_callbacks,
                   test_continuations, test_out_of_order, test_after_failure };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        steps[i](&e);
    kt_inc_twice_close(&e);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
