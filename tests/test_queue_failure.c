/* Failure propagation (issue 13, finding 9): a command behind a user event
 * completed with an error fails, and kiln_queue_finish reports that a
 * command on the queue failed (the drivers' own finish does not), on every
 * backend; the queue works afterwards. */
#include <stdio.h>
#include <string.h>

#include "harness.h"

static void test_finish_reports(kiln_queue *q, void *user) {
    (void)user;
    kiln_context *ctx = kiln_queue_context(q);
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_program_create(ctx,
        "KILN_KERNEL void put(KILN_GLOBAL int *x, int v) { x[kiln_global_id(0)] = v; }\n",
        NULL, &p));
    CHECK_OK(kiln_kernel_create(p, "put", &k));
    CHECK_OK(kiln_buffer_create(ctx, 4 * sizeof(int), 0, NULL, &b));
    size_t n = 4;
    kiln_arg a1[] = {KILN_ARG_BUF(b), KILN_ARG_I32(1)};
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 2, a1, 0, NULL, NULL));
    CHECK_OK(kiln_queue_finish(q)); /* nothing failed */

    kiln_event *gate = NULL, *e = NULL;
    CHECK_OK(kiln_event_create_user(ctx, &gate));
    kiln_arg a2[] = {KILN_ARG_BUF(b), KILN_ARG_I32(2)};
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 2, a2, 1, &gate, &e));
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_ERROR));
    kiln_status st = kiln_queue_finish(q);
    printf("  finish after a failed gate: %s: %s\n", kiln_status_name(st),
           kiln_last_error_message());
    CHECK_STATUS(st, KILN_ERROR_EVENT_FAILED);
    CHECK_STATUS(kiln_event_wait(e), KILN_ERROR_EVENT_FAILED);
    int got[4] = {0};
    /* The gated launch did not run: the buffer still holds 1s. */
    kiln_event *r = NULL;
    kiln_status rs = kiln_buffer_read_async(q, b, 0, sizeof got, got, 0, NULL, &r);
    if (rs == KILN_OK) {
        rs = kiln_event_wait(r);
        kiln_event_release(r);
    }
    printf("  a read after it: %s (%d)\n", kiln_status_name(rs), got[0]);
    /* Reported once: the next finish has nothing new to report, and the
     * queue works. */
    CHECK_OK(kiln_queue_finish(q));
    kiln_arg a3[] = {KILN_ARG_BUF(b), KILN_ARG_I32(3)};
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 2, a3, 0, NULL, NULL));
    CHECK_OK(kiln_buffer_read(q, b, 0, sizeof got, got));
    CHECK(got[0] == 3 && got[3] == 3);
    /* A gate completed without error: finish is OK and the launch ran. */
    kiln_event *ok_gate = NULL;
    CHECK_OK(kiln_event_create_user(ctx, &ok_gate));
    kiln_arg a4[] = {KILN_ARG_BUF(b), KILN_ARG_I32(4)};
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 2, a4, 1, &ok_gate, NULL));
    CHECK_OK(kiln_event_set_complete(ok_gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_queue_finish(q));
    CHECK_OK(kiln_buffer_read(q, b, 0, sizeof got, got));
    CHECK(got[0] == 4);
    kiln_event_release(ok_gate);

    kiln_event_release(e);
    kiln_event_release(gate);
    kiln_buffer_release(b);
    kiln_kernel_release(k);
    kiln_program_release(p);
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
    CHECK_OK(kiln_program_create(ctx,
        "KILN_KERNEL void put(KILN_GLOBAL int *x, int v) { x[kiln_global_id(0)] = v; }\n",
        NULL, &p));
    CHECK_OK(kiln_kernel_create(p, "put", &k));
    CHECK_OK(kiln_buffer_create(ctx, 4 * sizeof(int), 0, NULL, &b));
    kiln_event *gate = NULL, *done = NULL;
    CHECK_OK(kiln_event_create_user(ctx, &gate));
    size_t n = 4;
    kiln_arg a[] = {KILN_ARG_BUF(b), KILN_ARG_I32(9)};
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 2, a, 1, &gate, &done));
    kiln_queue_release(q); /* returns at once */
    kiln_kernel_release(k);
    kiln_program_release(p);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(done));
    kiln_queue *q2 = NULL;
    int got[4] = {0};
    CHECK_OK(kiln_queue_create(ctx, dev, 0, &q2));
    CHECK_OK(kiln_buffer_read(q2, b, 0, sizeof got, got));
    CHECK(got[0] == 9 && got[3] == 9);
    kiln_queue_release(q2);
    kiln_event_release(done);
    kiln_event_release(gate);

    /* A user event released unset fails: the read behind it fails instead
     * of waiting for ever, and the context goes (NVIDIA's OpenCL hung in
     * clReleaseContext over a user event released unset). */
    kiln_queue *q3 = NULL;
    kiln_event *lost = NULL, *behind = NULL;
    int got3[4] = {0};
    CHECK_OK(kiln_queue_create(ctx, dev, 0, &q3));
    CHECK_OK(kiln_event_create_user(ctx, &lost));
    CHECK_OK(kiln_buffer_read_async(q3, b, 0, sizeof got3, got3, 1, &lost, &behind));
    kiln_event_release(lost);
    CHECK_STATUS(kiln_event_wait(behind), KILN_ERROR_EVENT_FAILED);
    kiln_event_release(behind);
    kiln_queue_release(q3);
    kiln_buffer_release(b);
    kiln_context_release(ctx);
}

int main(void) {
    kt_for_each_device(test_finish_reports, NULL);
    kt_for_each_device(test_release_gated, NULL);
    return kt_report();
}
