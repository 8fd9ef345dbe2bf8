/* Failure propagation (issue 13, finding 9): a command behind a user event
 * completed with an error fails, and kiln_queue_finish reports that a
 * command on the queue failed (the drivers' own finish does not), on every
 * backend; the queue works afterwards. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness.h"

/* The kernel put (x[i] = v) and a buffer of 4 ints on ctx. */
static void open_put4(kiln_context *ctx, kiln_program **p, kiln_kernel **k, kiln_buffer **b) {
    KT_BUILD(ctx, "KILN_KERNEL void put(KILN_GLOBAL int *x, int v) { x[kiln_global_id(0)] = v; }\n",
             NULL, p, "put", k);
    CHECK_OK(kiln_buffer_create(ctx, 4 * sizeof(int), 0, NULL, b));
}

static void test_finish_reports(kiln_queue *q, void *user) {
    (void)user;
    kiln_context *ctx = kiln_queue_context(q);
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    kiln_buffer *b = NULL;
    open_put4(ctx, &p, &k, &b);
    size_t n = 4;
    kiln_arg a1[] = { KILN_ARG_BUF(b), KILN_ARG_I32(1) };
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 2, a1, 0, NULL, NULL));
    CHECK_OK(kiln_queue_finish(q)); /* nothing failed */

    kiln_event *gate = NULL, *e = NULL;
    CHECK_OK(kiln_event_create_user(ctx, &gate));
    kiln_arg a2[] = { KILN_ARG_BUF(b), KILN_ARG_I32(2) };
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 2, a2, 1, &gate, &e));
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_ERROR));
    kiln_status st = kiln_queue_finish(q);
    printf("  finish after a failed gate: %s: %s\n", kiln_status_name(st),
           kiln_last_error_message());
    CHECK_STATUS(st, KILN_ERROR_EVENT_FAILED);
    CHECK_STATUS(kiln_event_wait(e), KILN_ERROR_EVENT_FAILED);
    int got[4] = { 0 };
    /* The gated launch did not run: the buffer still holds 1s. */
    kiln_event *r = NULL;
    kiln_status rs = kiln_buffer_read_async(q, b, 0, sizeof got, got, 0, NULL, &r);
    if (rs == KILN_OK) {
        rs = kiln_event_wait(r);
        kiln_event_release(r);
    }
    printf("  a read after it: %s (%d)\n", kiln_status_name(rs), got[0]);
    /* The gated launch did not run, on every backend (CUDA holds such
     * commands on the host: a stream cannot skip one). */
    CHECK(rs != KILN_OK || (got[0] == 1 && got[3] == 1));
    /* Reported once: the next finish has nothing new to report, and the
     * queue works. */
    CHECK_OK(kiln_queue_finish(q));
    kiln_arg a3[] = { KILN_ARG_BUF(b), KILN_ARG_I32(3) };
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 2, a3, 0, NULL, NULL));
    CHECK_OK(kiln_buffer_read(q, b, 0, sizeof got, got));
    CHECK(got[0] == 3 && got[3] == 3);
    /* A gate completed without error: finish is OK and the launch ran. */
    kiln_event *ok_gate = NULL;
    CHECK_OK(kiln_event_create_user(ctx, &ok_gate));
    kiln_arg a4[] = { KILN_ARG_BUF(b), KILN_ARG_I32(4) };
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 2, a4, 1, &ok_gate, NULL));
    CHECK_OK(kiln_event_set_complete(ok_gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_queue_finish(q));
    CHECK_OK(kiln_buffer_read(q, b, 0, sizeof got, got));
    CHECK(got[0] == 4);
    kiln_event_release(ok_gate);

    KT_RELEASE(e, gate, b, k, p);
}

/* Releasing the last handle on a queue whose work waits behind a user
 * event does not block (finding 3c): the queue goes once that work ends;
 * completing the event afterwards still runs the work. */
static void test_release_gated(kiln_queue *unused, void *user) {
    (void)user;
    kiln_device *dev = kiln_queue_device(unused);
    kiln_context *ctx = NULL;
    kiln_queue *q = NULL;
    CHECK_OK(kiln_context_create(&dev, 1, &ctx));
    CHECK_OK(kiln_queue_create(ctx, dev, 0, &q));
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    kiln_buffer *b = NULL;
    open_put4(ctx, &p, &k, &b);
    kiln_event *gate = NULL, *done = NULL;
    CHECK_OK(kiln_event_create_user(ctx, &gate));
    size_t n = 4;
    kiln_arg a[] = { KILN_ARG_BUF(b), KILN_ARG_I32(9) };
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 2, a, 1, &gate, &done));
    kiln_queue_release(q); /* returns at once */
    KT_RELEASE(k, p);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(done));
    kiln_queue *q2 = NULL;
    int got[4] = { 0 };
    CHECK_OK(kiln_queue_create(ctx, dev, 0, &q2));
    CHECK_OK(kiln_buffer_read(q2, b, 0, sizeof got, got));
    CHECK(got[0] == 9 && got[3] == 9);
    KT_RELEASE(q2, done, gate);

    /* A user event released unset fails: the read behind it fails instead
     * of waiting for ever, and the context goes (NVIDIA's OpenCL hung in
     * clReleaseContext over a user event released unset). */
    kiln_queue *q3 = NULL;
    kiln_event *lost = NULL, *behind = NULL;
    int got3[4] = { 0 };
    CHECK_OK(kiln_queue_create(ctx, dev, 0, &q3));
    CHECK_OK(kiln_event_create_user(ctx, &lost));
    CHECK_OK(kiln_buffer_read_async(q3, b, 0, sizeof got3, got3, 1, &lost, &behind));
    kiln_event_release(lost);
    CHECK_STATUS(kiln_event_wait(behind), KILN_ERROR_EVENT_FAILED);
    KT_RELEASE(behind, q3, b, ctx);
}

/* ---- commands of every kind behind a user event (CUDA: held on the host) */

#define GN 1031 /* a prime, more than one work-group */

static const char *put_src = "KILN_KERNEL void put(KILN_GLOBAL int *x, int v, int n) {\n"
                             "    int i = (int)kiln_global_id(0); if (i < n) x[i] = v; }\n";

typedef struct gated_rig {
    kiln_context *ctx;
    kiln_program *p;
    kiln_kernel *k;
    kiln_buffer *a, *b, *c, *d;
} gated_rig;

static void rig_make(kiln_queue *q, gated_rig *r) {
    memset(r, 0, sizeof *r);
    r->ctx = kiln_queue_context(q);
    KT_BUILD(r->ctx, put_src, NULL, &r->p, "put", &r->k);
    kiln_buffer **bs[4] = { &r->a, &r->b, &r->c, &r->d };
    for (int i = 0; i < 4; i++) {
        CHECK_OK(kiln_buffer_create(r->ctx, GN * sizeof(int), 0, NULL, bs[i]));
        int v = i + 1; /* a=1, b=2, c=3, d=4 */
        CHECK_OK(kiln_buffer_fill(q, *bs[i], &v, sizeof v, 0, GN * sizeof(int), 0, NULL, NULL));
    }
    CHECK_OK(kiln_queue_finish(q));
}

static void rig_free(gated_rig *r) {
    KT_RELEASE(r->a, r->b, r->c, r->d, r->k, r->p);
}

/* Every element of buffer x is v. */
static int all_are(kiln_queue *q, kiln_buffer *x, int v) {
    static int h[GN];
    if (kiln_buffer_read(q, x, 0, sizeof h, h) != KILN_OK)
        return 0;
    for (int i = 0; i < GN; i++)
        if (h[i] != v)
            return 0;
    return 1;
}

/* Behind a gate on queue q: a launch (a := 5), a fill (b := 9), a write
 * (c := 6 from host), a copy on a second queue behind the launch (d := a),
 * and an async read of b. Then the gate completes with `how`. */
static void gated_commands(kiln_queue *q, int fail) {
    gated_rig r;
    rig_make(q, &r);
    kiln_queue *q2 = NULL;
    CHECK_OK(kiln_queue_create(r.ctx, kiln_queue_device(q), 0, &q2));
    kiln_event *gate = NULL, *ev[5] = { NULL };
    CHECK_OK(kiln_event_create_user(r.ctx, &gate));
    size_t n = GN;
    int five = 5, nine = 9, six[GN], back[GN];
    for (int i = 0; i < GN; i++) {
        six[i] = 6;
        back[i] = -1;
    }
    kiln_arg args[] = { KILN_ARG_BUF(r.a), KILN_ARG_I32(five), KILN_ARG_I32(GN) };
    CHECK_OK(kiln_kernel_launch(q, r.k, 1, &n, NULL, 3, args, 1, &gate, &ev[0]));
    CHECK_OK(kiln_buffer_fill(q, r.b, &nine, sizeof nine, 0, sizeof six, 1, &gate, &ev[1]));
    CHECK_OK(kiln_buffer_write_async(q, r.c, 0, sizeof six, six, 1, &gate, &ev[2]));
    CHECK_OK(kiln_buffer_copy(q2, r.a, 0, r.d, 0, sizeof six, 1, &ev[0], &ev[3]));
    CHECK_OK(kiln_buffer_read_async(q, r.b, 0, sizeof back, back, 1, &ev[1], &ev[4]));
    /* nothing has run: the gate is still open */
    kiln_event_state s = KILN_EVENT_COMPLETE;
    CHECK_OK(kiln_event_get_state(ev[3], &s));
    CHECK(s != KILN_EVENT_COMPLETE && s != KILN_EVENT_ERROR);
    CHECK_STATUS(kiln_event_wait_timeout(ev[0], 20), KILN_ERROR_TIMEOUT);
    CHECK_OK(kiln_event_set_complete(gate, fail ? KILN_EVENT_ERROR : KILN_EVENT_COMPLETE));
    for (int i = 0; i < 5; i++)
        CHECK_STATUS(kiln_event_wait(ev[i]), fail ? KILN_ERROR_EVENT_FAILED : KILN_OK);
    CHECK_STATUS(kiln_queue_finish(q), fail ? KILN_ERROR_EVENT_FAILED : KILN_OK);
    CHECK_STATUS(kiln_queue_finish(q2), fail ? KILN_ERROR_EVENT_FAILED : KILN_OK);
    if (fail) { /* nothing ran: every buffer as before, the host array too */
        CHECK(all_are(q, r.a, 1) && all_are(q, r.b, 2));
        CHECK(all_are(q, r.c, 3) && all_are(q, r.d, 4));
        CHECK(back[0] == -1 && back[GN - 1] == -1);
    } else {
        CHECK(all_are(q, r.a, 5) && all_are(q, r.b, 9));
        CHECK(all_are(q, r.c, 6) && all_are(q, r.d, 5));
        CHECK(back[0] == 9 && back[GN - 1] == 9);
    }
    /* the queues work afterwards */
    kiln_arg a2[] = { KILN_ARG_BUF(r.a), KILN_ARG_I32(7), KILN_ARG_I32(GN) };
    CHECK_OK(kiln_kernel_launch(q, r.k, 1, &n, NULL, 3, a2, 0, NULL, NULL));
    CHECK_OK(kiln_queue_finish(q));
    CHECK_OK(kiln_buffer_copy(q2, r.a, 0, r.d, 0, sizeof six, 0, NULL, NULL));
    CHECK(all_are(q2, r.d, 7));
    for (int i = 0; i < 5; i++)
        kiln_event_release(ev[i]);
    KT_RELEASE(gate, q2);
    rig_free(&r);
}

static void test_gated_failed(kiln_queue *q, void *user) {
    (void)user;
    gated_commands(q, 1);
}

static void test_gated_ok(kiln_queue *q, void *user) {
    (void)user;
    gated_commands(q, 0);
}

/* Objects released while the work that uses them waits behind a gate:
 * the work still runs right once the gate completes. A callback asked for
 * on the gated launch fires once, after the gate. */
static atomic_int cb_calls, cb_state;
static void on_done(kiln_event *e, kiln_event_state st, void *u) {
    (void)e;
    (void)u;
    atomic_store(&cb_state, (int)st);
    atomic_fetch_add(&cb_calls, 1);
}

static void test_gated_releases(kiln_queue *q, void *user) {
    (void)user;
    gated_rig r;
    rig_make(q, &r);
    kiln_event *gate = NULL, *launched = NULL, *copied = NULL;
    CHECK_OK(kiln_event_create_user(r.ctx, &gate));
    size_t n = GN;
    kiln_arg args[] = { KILN_ARG_BUF(r.a), KILN_ARG_I32(8), KILN_ARG_I32(GN) };
    CHECK_OK(kiln_kernel_launch(q, r.k, 1, &n, NULL, 3, args, 1, &gate, &launched));
    atomic_store(&cb_calls, 0);
    atomic_store(&cb_state, 99);
    CHECK_OK(kiln_event_on_complete(launched, on_done, NULL));
    CHECK_OK(kiln_buffer_copy(q, r.a, 0, r.b, 0, GN * sizeof(int), 0, NULL, &copied));
    /* a, the kernel and the program go now */
    kiln_buffer_release(r.a);
    r.a = NULL;
    kiln_kernel_release(r.k);
    r.k = NULL;
    kiln_program_release(r.p);
    r.p = NULL;
    CHECK(atomic_load(&cb_calls) == 0);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(copied));
    CHECK(all_are(q, r.b, 8));
    CHECK_OK(kiln_queue_finish(q));
    for (int i = 0; i < 500 && atomic_load(&cb_calls) == 0; i++) {
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
    }
    CHECK(atomic_load(&cb_calls) == 1);
    CHECK(atomic_load(&cb_state) == KILN_EVENT_COMPLETE);
    KT_RELEASE(launched, copied, gate);
    rig_free(&r);
}

/* A blocking read on another thread behind gated work: it returns once the
 * gate completes, with the launch's result. */
typedef struct reader {
    kiln_queue *q;
    kiln_buffer *x;
    int got[GN];
    kiln_status st;
} reader;

static void *read_blocking(void *p) {
    reader *rd = p;
    rd->st = kiln_buffer_read(rd->q, rd->x, 0, sizeof rd->got, rd->got);
    return NULL;
}

static void test_gated_blocking_read(kiln_queue *q, void *user) {
    (void)user;
    gated_rig r;
    rig_make(q, &r);
    kiln_event *gate = NULL;
    CHECK_OK(kiln_event_create_user(r.ctx, &gate));
    size_t n = GN;
    kiln_arg args[] = { KILN_ARG_BUF(r.a), KILN_ARG_I32(11), KILN_ARG_I32(GN) };
    CHECK_OK(kiln_kernel_launch(q, r.k, 1, &n, NULL, 3, args, 1, &gate, NULL));
    static reader rd;
    memset(&rd, 0, sizeof rd);
    rd.q = q;
    rd.x = r.a;
    rd.st = KILN_ERROR_WRONG_STATE;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, read_blocking, &rd) == 0);
    struct timespec ts = { 0, 30000000 };
    nanosleep(&ts, NULL);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    pthread_join(t, NULL);
    CHECK_OK(rd.st);
    CHECK(rd.got[0] == 11 && rd.got[GN - 1] == 11);
    kiln_event_release(gate);
    rig_free(&r);
}

/* Out of order: work that does not wait for the gate runs while it is
 * open; a marker without a wait list waits for the gated launch too. */
static void test_gated_out_of_order(kiln_queue *unused, void *user) {
    (void)user;
    kiln_context *ctx = kiln_queue_context(unused);
    kiln_queue *q = NULL;
    kiln_status st = kiln_queue_create(ctx, kiln_queue_device(unused), KILN_QUEUE_OUT_OF_ORDER, &q);
    if (st == KILN_ERROR_UNSUPPORTED) {
        printf("  out-of-order queues: not supported here\n");
        return;
    }
    CHECK_OK(st);
    gated_rig r;
    rig_make(q, &r);
    kiln_event *gate = NULL, *gated = NULL, *free_run = NULL, *mark = NULL;
    CHECK_OK(kiln_event_create_user(ctx, &gate));
    size_t n = GN;
    kiln_arg a1[] = { KILN_ARG_BUF(r.a), KILN_ARG_I32(12), KILN_ARG_I32(GN) };
    kiln_arg a2[] = { KILN_ARG_BUF(r.b), KILN_ARG_I32(13), KILN_ARG_I32(GN) };
    CHECK_OK(kiln_kernel_launch(q, r.k, 1, &n, NULL, 3, a1, 1, &gate, &gated));
    CHECK_OK(kiln_kernel_launch(q, r.k, 1, &n, NULL, 3, a2, 0, NULL, &free_run));
    CHECK_OK(kiln_queue_marker(q, 0, NULL, &mark));
    /* kiln's CUDA queues run it while the gate is open; an OpenCL driver
     * may run an out-of-order queue in order (NVIDIA's does) */
    kiln_device_info info;
    memset(&info, 0, sizeof info);
    CHECK_OK(kiln_device_get_info(kiln_queue_device(q), &info));
    kiln_status fr = kiln_event_wait_timeout(free_run, 2000);
    printf("  independent work beside an open gate: %s\n", kiln_status_name(fr));
    if (info.backend == KILN_BACKEND_CUDA)
        CHECK_OK(fr);
    CHECK_STATUS(kiln_event_wait_timeout(mark, 20), KILN_ERROR_TIMEOUT);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(mark));
    CHECK_OK(kiln_event_wait(gated));
    CHECK(all_are(q, r.a, 12) && all_are(q, r.b, 13));
    KT_RELEASE(gate, gated, free_run, mark);
    rig_free(&r);
    kiln_queue_release(q);
}

int main(void) {
    KT_FOR_EACH_DEVICE_FNS(test_finish_reports, test_release_gated, test_gated_failed,
                           test_gated_ok, test_gated_releases, test_gated_blocking_read,
                           test_gated_out_of_order);
    return kt_report();
}
