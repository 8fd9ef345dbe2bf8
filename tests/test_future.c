/* Futures: values read without blocking, continuations that enqueue more
 * work, when_all / when_any, failures that travel down a chain with the
 * first message, cancellation of steps not yet run, the callback-thread
 * wait that would deadlock, device work waiting on a future, bad input. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

typedef struct env {
    kiln_queue *q;
    kiln_context *ctx;
    kiln_buffer *b; /* 64 ints: 0, 1, 2, ... */
} env;

static atomic_int calls;

/* then: value * 10 as a host value */
static kiln_status times_ten(const void *value, size_t size, void *user, kiln_future **next) {
    env *e = user;
    atomic_fetch_add(&calls, 1);
    if (size != sizeof(int))
        return KILN_ERROR_MISMATCH;
    int v = *(const int *)value * 10;
    return kiln_future_ready(e->ctx, &v, sizeof v, next);
}

/* then: enqueue device work (write value + 1 into element 63, read it back
 * as a future) and return that future */
static kiln_status via_device(const void *value, size_t size, void *user, kiln_future **next) {
    env *e = user;
    atomic_fetch_add(&calls, 1);
    (void)size;
    static int v; /* the write reads it before the read is enqueued */
    v = *(const int *)value + 1;
    kiln_status st = kiln_buffer_write(e->q, e->b, 63 * sizeof(int), sizeof v, &v);
    if (st != KILN_OK)
        return st;
    return kiln_buffer_read_future(e->q, e->b, 63 * sizeof(int), sizeof(int), 0, NULL, next);
}

static kiln_status fails(const void *value, size_t size, void *user, kiln_future **next) {
    (void)value, (void)size, (void)user, (void)next;
    atomic_fetch_add(&calls, 1);
    return KILN_ERROR_INVALID_ARGUMENT;
}

static atomic_int inner_status = 1;
static kiln_future *pending_for_inner;
/* a continuation that waits on a future that has not settled */
static kiln_status waits_inside(const void *value, size_t size, void *user, kiln_future **next) {
    (void)value, (void)size, (void)user, (void)next;
    atomic_store(&inner_status, (int)kiln_future_wait(pending_for_inner));
    return KILN_OK;
}

static int read_int(kiln_future *f) {
    int v = -1;
    CHECK_OK(kiln_future_copy(f, &v, sizeof v));
    return v;
}

static void chain(env *e) {
    kiln_future *f1 = NULL, *f2 = NULL, *f3 = NULL;
    kiln_event *gate = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &gate));
    CHECK_OK(kiln_buffer_read_future(e->q, e->b, 7 * sizeof(int), sizeof(int), 1, &gate, &f1));
    CHECK_OK(kiln_future_then(f1, times_ten, e, &f2));
    CHECK_OK(kiln_future_then(f2, via_device, e, &f3));
    kiln_event_state s = KILN_EVENT_COMPLETE;
    CHECK_OK(kiln_future_get_state(f3, &s));
    CHECK_MSG(s == KILN_EVENT_QUEUED, "the chain settled before its gate opened (%d)", (int)s);
    CHECK(kiln_future_value(f1, NULL) == NULL);
    atomic_store(&calls, 0);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK(read_int(f3) == 71);
    CHECK(read_int(f2) == 70);
    CHECK(read_int(f1) == 7);
    size_t size = 0;
    const int *p = kiln_future_value(f1, &size);
    CHECK(p && *p == 7 && size == sizeof(int));
    CHECK(atomic_load(&calls) == 2);
    /* device work that waits on a future's event */
    kiln_event *fe = kiln_future_event(f3);
    CHECK_OK(kiln_buffer_copy(e->q, e->b, 63 * sizeof(int), e->b, 0, sizeof(int), 1, &fe, NULL));
    int first = -1;
    CHECK_OK(kiln_buffer_read(e->q, e->b, 0, sizeof first, &first));
    CHECK(first == 71);
    kiln_future_release(f1), kiln_future_release(f2), kiln_future_release(f3);
    kiln_event_release(gate);
}

static void failures(env *e) {
    kiln_future *f1 = NULL, *f2 = NULL, *f3 = NULL, *g = NULL, *h = NULL;
    kiln_event *gate = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &gate));
    CHECK_OK(kiln_buffer_read_future(e->q, e->b, 0, sizeof(int), 1, &gate, &f1));
    CHECK_OK(kiln_future_then(f1, times_ten, e, &f2));
    CHECK_OK(kiln_future_then(f2, times_ten, e, &f3));
    atomic_store(&calls, 0);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_future_wait(f3), KILN_ERROR_EVENT_FAILED);
    char msg3[512];
    snprintf(msg3, sizeof msg3, "%s", kiln_last_error_message());
    CHECK_STATUS(kiln_future_wait(f1), KILN_ERROR_EVENT_FAILED);
    CHECK_MSG(!strcmp(msg3, kiln_last_error_message()),
              "the first failure's message did not travel: '%s' vs '%s'", msg3,
              kiln_last_error_message());
    CHECK(atomic_load(&calls) == 0);
    kiln_event_state s;
    CHECK_OK(kiln_future_get_state(f2, &s));
    CHECK(s == KILN_EVENT_ERROR);
    /* a continuation that fails: its status and message */
    kiln_future *ok = NULL;
    int v = 5;
    CHECK_OK(kiln_future_ready(e->ctx, &v, sizeof v, &ok));
    CHECK_OK(kiln_future_then(ok, fails, e, &g));
    CHECK_OK(kiln_future_then(g, times_ten, e, &h));
    CHECK_STATUS(kiln_future_wait(h), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(kiln_last_error_message(), "continuation returned") != NULL, "message: %s",
              kiln_last_error_message());
    int out = 0;
    CHECK_STATUS(kiln_future_copy(ok, &out, 2), KILN_ERROR_MISMATCH);
    kiln_future_release(ok), kiln_future_release(g), kiln_future_release(h);
    kiln_future_release(f1), kiln_future_release(f2), kiln_future_release(f3);
    kiln_event_release(gate);
}

static void joins(env *e) {
    /* one queue per read: on one in-order queue the third read would wait
     * for the first two whatever their gates say */
    kiln_event *gate[3] = { NULL, NULL, NULL };
    kiln_queue *qs[3] = { NULL, NULL, NULL };
    kiln_future *f[3] = { NULL, NULL, NULL }, *all = NULL, *any = NULL;
    for (int i = 0; i < 3; i++) {
        CHECK_OK(kiln_queue_create(e->ctx, kiln_queue_device(e->q), 0, &qs[i]));
        CHECK_OK(kiln_event_create_user(e->ctx, &gate[i]));
        CHECK_OK(kiln_buffer_read_future(qs[i], e->b, (size_t)(10 + i) * sizeof(int), sizeof(int),
                                         1, &gate[i], &f[i]));
    }
    CHECK_OK(kiln_future_when_all(3, f, &all));
    CHECK_OK(kiln_future_when_any(3, f, &any));
    CHECK_OK(kiln_event_set_complete(gate[2], KILN_EVENT_COMPLETE));
    size_t first = 99;
    CHECK_OK(kiln_future_copy(any, &first, sizeof first));
    CHECK_MSG(first == 2, "when_any gave index %zu, expected 2", first);
    kiln_event_state s;
    CHECK_OK(kiln_future_get_state(all, &s));
    CHECK(s == KILN_EVENT_QUEUED);
    CHECK_OK(kiln_event_set_complete(gate[0], KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_set_complete(gate[1], KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_future_wait(all));
    CHECK(read_int(f[0]) == 10 && read_int(f[1]) == 11 && read_int(f[2]) == 12);
    kiln_future_release(all), kiln_future_release(any);
    for (int i = 0; i < 3; i++) {
        KT_RELEASE(f[i], gate[i]);
    }
    /* when_all fails at the first failure, while another is still pending */
    kiln_event *g1 = NULL, *g2 = NULL;
    kiln_future *a = NULL, *b = NULL, *both = NULL, *either = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &g1));
    CHECK_OK(kiln_event_create_user(e->ctx, &g2));
    CHECK_OK(kiln_buffer_read_future(qs[0], e->b, 0, 4, 1, &g1, &a));
    CHECK_OK(kiln_buffer_read_future(qs[1], e->b, 4, 4, 1, &g2, &b));
    kiln_future *ab[2] = { a, b };
    CHECK_OK(kiln_future_when_all(2, ab, &both));
    CHECK_OK(kiln_future_when_any(2, ab, &either));
    CHECK_OK(kiln_event_set_complete(g1, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_future_wait(both), KILN_ERROR_EVENT_FAILED);
    CHECK_OK(kiln_future_get_state(either, &s));
    CHECK_MSG(s == KILN_EVENT_QUEUED, "when_any settled after one of two failed (%d)", (int)s);
    CHECK_OK(kiln_event_set_complete(g2, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_future_wait(either), KILN_ERROR_EVENT_FAILED);
    kiln_future_release(a), kiln_future_release(b);
    kiln_future_release(both), kiln_future_release(either);
    kiln_event_release(g1), kiln_event_release(g2);
    for (int i = 0; i < 3; i++)
        kiln_queue_release(qs[i]);
}

static void cancel_and_deadlock(env *e) {
    kiln_event *gate = NULL;
    kiln_future *f = NULL, *step = NULL, *after = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &gate));
    CHECK_OK(kiln_buffer_read_future(e->q, e->b, 0, sizeof(int), 1, &gate, &f));
    CHECK_OK(kiln_future_then(f, times_ten, e, &step));
    CHECK_OK(kiln_future_then(step, times_ten, e, &after));
    CHECK_STATUS(kiln_future_cancel(f), KILN_ERROR_WRONG_STATE); /* with the driver */
    CHECK_OK(kiln_future_cancel(step));
    CHECK_STATUS(kiln_future_wait(step), KILN_ERROR_CANCELED);
    CHECK_STATUS(kiln_future_wait(after), KILN_ERROR_CANCELED);
    atomic_store(&calls, 0);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_future_wait(f));
    usleep(20000); /* the canceled step's turn comes and goes */
    CHECK(atomic_load(&calls) == 0);
    CHECK_STATUS(kiln_future_cancel(f), KILN_ERROR_WRONG_STATE); /* complete */
    kiln_future_release(f), kiln_future_release(step), kiln_future_release(after);
    kiln_event_release(gate);

    /* a continuation waiting for an unsettled future is refused at once */
    kiln_event *never = NULL;
    kiln_future *ready = NULL, *w = NULL;
    CHECK_OK(kiln_event_create_user(e->ctx, &never));
    CHECK_OK(kiln_buffer_read_future(e->q, e->b, 0, sizeof(int), 1, &never, &pending_for_inner));
    int v = 1;
    CHECK_OK(kiln_future_ready(e->ctx, &v, sizeof v, &ready));
    CHECK_OK(kiln_future_then(ready, waits_inside, NULL, &w));
    CHECK_OK(kiln_future_wait(w));
    CHECK_MSG(atomic_load(&inner_status) == KILN_ERROR_WRONG_STATE,
              "kiln_future_wait on the callback thread gave %d", atomic_load(&inner_status));
    CHECK_OK(kiln_event_set_complete(never, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_future_wait(pending_for_inner));
    kiln_future_release(pending_for_inner), kiln_future_release(ready), kiln_future_release(w);
    kiln_event_release(never);
}

static void arrays_and_bad_input(env *e) {
    size_t n = 1031;
    kiln_array *a = NULL;
    CHECK_OK(kiln_array_arange(e->q, KILN_FLOAT32, n, 0.0, 1.0, 0, NULL, NULL, &a));
    kiln_future *f = NULL;
    CHECK_OK(kiln_array_read_future(e->q, a, 0, NULL, &f));
    CHECK_OK(kiln_future_wait(f));
    size_t size = 0;
    const float *x = kiln_future_value(f, &size);
    size_t bad = 0;
    for (size_t i = 0; x && i < n; i++)
        bad += x[i] != (float)i;
    CHECK_MSG(x && size == n * 4 && bad == 0, "array future: size %zu, %zu wrong", size, bad);
    KT_RELEASE(f, a);

    /* A future released before it settles fails its event, so whoever
     * holds the event stops waiting (and no backend user event is left
     * unset: NVIDIA's OpenCL hung in clReleaseContext over the one of a
     * future whose read was refused below). */
    kiln_future *lone = NULL;
    if (CHECK_OK(kiln_future_create(e->ctx, 4, &lone))) {
        kiln_event *lone_done = kiln_future_event(lone);
        CHECK_OK(kiln_event_retain(lone_done));
        kiln_future_release(lone);
        CHECK_STATUS(kiln_event_wait(lone_done), KILN_ERROR_EVENT_FAILED);
        kiln_event_release(lone_done);
    }

    kiln_future *out = (kiln_future *)&out;
    CHECK_STATUS(kiln_buffer_read_future(NULL, e->b, 0, 4, 0, NULL, &out), KILN_ERROR_NULL_HANDLE);
    CHECK(out == NULL);
    CHECK_STATUS(kiln_buffer_read_future(e->q, e->b, 250, 8, 0, NULL, &out),
                 KILN_ERROR_OUT_OF_RANGE);
    CHECK(out == NULL);
    CHECK_STATUS(kiln_future_when_all(0, NULL, &out), KILN_ERROR_INVALID_ARGUMENT);
    kiln_future *none[1] = { NULL };
    CHECK_STATUS(kiln_future_when_any(1, none, &out), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_future_then(NULL, times_ten, NULL, &out), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_future_wait(NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_future_cancel(NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_future_ready(e->ctx, NULL, 4, &out), KILN_ERROR_NULL_HANDLE);
    CHECK(kiln_future_value(NULL, &size) == NULL && size == 0);
    kiln_future_release(NULL);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    env e = { .q = q, .ctx = kiln_queue_context(q) };
    int init[64];
    for (int i = 0; i < 64; i++)
        init[i] = i;
    if (!CHECK_OK(kiln_buffer_create(e.ctx, sizeof init, 0, NULL, &e.b)))
        return;
    CHECK_OK(kiln_buffer_write(q, e.b, 0, sizeof init, init));
    chain(&e);
    CHECK_OK(kiln_buffer_write(q, e.b, 0, sizeof init, init));
    failures(&e);
    joins(&e);
    cancel_and_deadlock(&e);
    arrays_and_bad_input(&e);
    kiln_buffer_release(e.b);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
