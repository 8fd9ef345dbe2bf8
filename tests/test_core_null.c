/* NULL handles everywhere: every call refuses with KILN_ERROR_NULL_HANDLE
 * (never a crash), and release(NULL) is a no-op. */
#include <string.h>

#include "harness.h"

#define NULLH(expr) CHECK_STATUS(expr, KILN_ERROR_NULL_HANDLE)

static void cb(kiln_event *e, kiln_event_state s, void *u) {
    (void)e, (void)s, (void)u;
}
static kiln_status cont(kiln_event_state s, void *u) {
    (void)s, (void)u;
    return KILN_OK;
}

static void with_queue(kiln_queue *q, void *user) {
    (void)user;
    kiln_context *ctx = kiln_queue_context(q);
    kiln_device *dev = kiln_queue_device(q);
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(ctx, 256, 0, NULL, &b));
    kiln_program *p = NULL;
    CHECK_OK(
        kiln_program_create(ctx, "KILN_KERNEL void f(KILN_GLOBAL int *x, int n) { }", NULL, &p));
    kiln_kernel *k = NULL;
    CHECK_OK(kiln_kernel_create(p, "f", &k));
    kiln_event *ev = NULL;
    CHECK_OK(kiln_event_create_user(ctx, &ev));
    char host[256] = { 0 };
    void *ptr = NULL;
    size_t g = 1;
    kiln_arg args[2] = { KILN_ARG_BUF(b), KILN_ARG_I32(1) };
    kiln_event *out = (kiln_event *)&out; /* must be set to NULL on failure */

    /* contexts and queues */
    kiln_context *cout = NULL;
    kiln_queue *qout = NULL;
    NULLH(kiln_context_create(&dev, 1, NULL));
    NULLH(kiln_context_retain(NULL));
    NULLH(kiln_queue_create(NULL, dev, 0, &qout));
    NULLH(kiln_queue_create(ctx, NULL, 0, &qout));
    NULLH(kiln_queue_create(ctx, dev, 0, NULL));
    CHECK(qout == NULL && cout == NULL);
    NULLH(kiln_queue_create_default(NULL, 0, NULL));
    NULLH(kiln_queue_retain(NULL));
    NULLH(kiln_queue_finish(NULL));
    NULLH(kiln_queue_flush(NULL));
    NULLH(kiln_queue_marker(NULL, 0, NULL, &out));
    CHECK(out == NULL);
    NULLH(kiln_queue_barrier(NULL, 0, NULL, NULL));
    CHECK(kiln_queue_context(NULL) == NULL);
    CHECK(kiln_queue_device(NULL) == NULL);
    size_t n = 0;
    kiln_device *subs[2];
    NULLH(kiln_device_partition(dev, 1, subs, 2, NULL));

    /* buffers */
    kiln_buffer *bout = NULL;
    NULLH(kiln_buffer_create(NULL, 16, 0, NULL, &bout));
    NULLH(kiln_buffer_create(ctx, 16, 0, NULL, NULL));
    NULLH(kiln_buffer_create_sub(NULL, 0, 16, &bout));
    NULLH(kiln_buffer_create_sub(b, 0, 16, NULL));
    CHECK(bout == NULL);
    NULLH(kiln_buffer_retain(NULL));
    CHECK(kiln_buffer_size(NULL) == 0);
    CHECK(kiln_buffer_context(NULL) == NULL);
    NULLH(kiln_buffer_write(NULL, b, 0, 4, host));
    NULLH(kiln_buffer_write(q, NULL, 0, 4, host));
    NULLH(kiln_buffer_write(q, b, 0, 4, NULL));
    NULLH(kiln_buffer_read(NULL, b, 0, 4, host));
    NULLH(kiln_buffer_read(q, NULL, 0, 4, host));
    NULLH(kiln_buffer_read(q, b, 0, 4, NULL));
    out = (kiln_event *)&out;
    NULLH(kiln_buffer_write_async(NULL, b, 0, 4, host, 0, NULL, &out));
    CHECK(out == NULL);
    NULLH(kiln_buffer_write_async(q, NULL, 0, 4, host, 0, NULL, &out));
    NULLH(kiln_buffer_write_async(q, b, 0, 4, NULL, 0, NULL, &out));
    NULLH(kiln_buffer_read_async(NULL, b, 0, 4, host, 0, NULL, &out));
    NULLH(kiln_buffer_read_async(q, NULL, 0, 4, host, 0, NULL, &out));
    NULLH(kiln_buffer_read_async(q, b, 0, 4, NULL, 0, NULL, &out));
    NULLH(kiln_buffer_copy(NULL, b, 0, b, 128, 4, 0, NULL, &out));
    NULLH(kiln_buffer_copy(q, NULL, 0, b, 128, 4, 0, NULL, &out));
    NULLH(kiln_buffer_copy(q, b, 0, NULL, 128, 4, 0, NULL, &out));
    int pat = 0;
    NULLH(kiln_buffer_fill(NULL, b, &pat, 4, 0, 16, 0, NULL, &out));
    NULLH(kiln_buffer_fill(q, NULL, &pat, 4, 0, 16, 0, NULL, &out));
    NULLH(kiln_buffer_fill(q, b, NULL, 4, 0, 16, 0, NULL, &out));
    NULLH(kiln_buffer_map(NULL, b, KILN_MAP_READ, 0, 16, &ptr));
    NULLH(kiln_buffer_map(q, NULL, KILN_MAP_READ, 0, 16, &ptr));
    NULLH(kiln_buffer_map(q, b, KILN_MAP_READ, 0, 16, NULL));
    NULLH(kiln_buffer_unmap(NULL, b, host, 0, NULL, &out));
    NULLH(kiln_buffer_unmap(q, NULL, host, 0, NULL, &out));
    NULLH(kiln_buffer_unmap(q, b, NULL, 0, NULL, &out));
    CHECK(out == NULL);
    /* wait lists: NULL list with a count, NULL entries */
    NULLH(kiln_buffer_write_async(q, b, 0, 4, host, 1, NULL, &out));
    kiln_event *wl[2] = { ev, NULL };
    NULLH(kiln_buffer_write_async(q, b, 0, 4, host, 2, wl, &out));
    CHECK_MSG(strstr(kiln_last_error_message(), "wait[1]") != NULL, "%s",
              kiln_last_error_message());
    NULLH(kiln_queue_marker(q, 2, wl, &out));
    NULLH(kiln_kernel_launch(q, k, 1, &g, NULL, 2, args, 2, wl, &out));
    CHECK(out == NULL);

    /* programs and kernels */
    kiln_program *pout = NULL;
    kiln_kernel *kout = NULL;
    NULLH(kiln_program_create(NULL, "x", NULL, &pout));
    NULLH(kiln_program_create(ctx, NULL, NULL, &pout));
    NULLH(kiln_program_create(ctx, "x", NULL, NULL));
    NULLH(kiln_program_create_from_file(NULL, "x.cl", NULL, &pout));
    NULLH(kiln_program_create_from_file(ctx, NULL, NULL, &pout));
    NULLH(kiln_program_create_from_file(ctx, "x.cl", NULL, NULL));
    CHECK(pout == NULL);
    NULLH(kiln_program_retain(NULL));
    CHECK(kiln_program_build_log(NULL, dev) != NULL);
    CHECK(kiln_program_build_log(p, NULL) != NULL);
    CHECK(kiln_program_from_cache(NULL, dev) == 0);
    NULLH(kiln_kernel_create(NULL, "f", &kout));
    NULLH(kiln_kernel_create(p, NULL, &kout));
    NULLH(kiln_kernel_create(p, "f", NULL));
    CHECK(kout == NULL);
    NULLH(kiln_kernel_retain(NULL));
    CHECK(kiln_kernel_num_args(NULL) == 0);
    NULLH(kiln_kernel_launch(NULL, k, 1, &g, NULL, 2, args, 0, NULL, &out));
    NULLH(kiln_kernel_launch(q, NULL, 1, &g, NULL, 2, args, 0, NULL, &out));
    NULLH(kiln_kernel_launch(q, k, 1, NULL, NULL, 2, args, 0, NULL, &out));
    NULLH(kiln_kernel_launch(q, k, 1, &g, NULL, 2, NULL, 0, NULL, &out));
    CHECK(out == NULL);
    /* a NULL buffer argument is an argument error naming the parameter */
    kiln_arg nullbuf[2] = { KILN_ARG_BUF(NULL), KILN_ARG_I32(1) };
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, &g, NULL, 2, nullbuf, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    CHECK_MSG(strstr(kiln_last_error_message(), "'x'") != NULL, "%s", kiln_last_error_message());

    /* events */
    kiln_event_state st;
    kiln_event_times t;
    NULLH(kiln_event_retain(NULL));
    NULLH(kiln_event_wait(NULL));
    NULLH(kiln_event_wait_all(2, NULL));
    CHECK_OK(kiln_event_wait_all(0, NULL));
    kiln_event *nulls[3] = { NULL, NULL, NULL };
    CHECK_OK(kiln_event_wait_all(3, nulls)); /* NULL entries are skipped */
    NULLH(kiln_event_get_state(NULL, &st));
    NULLH(kiln_event_get_state(ev, NULL));
    NULLH(kiln_event_get_times(NULL, &t));
    NULLH(kiln_event_get_times(ev, NULL));
    NULLH(kiln_event_on_complete(NULL, cb, NULL));
    NULLH(kiln_event_on_complete(ev, NULL, NULL));
    NULLH(kiln_event_create_user(NULL, &out));
    NULLH(kiln_event_create_user(ctx, NULL));
    NULLH(kiln_event_set_complete(NULL, KILN_EVENT_COMPLETE));
    NULLH(kiln_event_then(NULL, cont, NULL, &out));
    NULLH(kiln_event_then(ev, NULL, NULL, &out));
    NULLH(kiln_event_then(ev, cont, NULL, NULL));
    CHECK(out == NULL);

    /* devices */
    kiln_device_info info;
    NULLH(kiln_device_get_info(dev, NULL));
    NULLH(kiln_device_get_info(NULL, &info));
    NULLH(kiln_device_select(NULL, NULL));
    (void)n;

    /* release(NULL) is a no-op */
    kiln_context_release(NULL);
    kiln_queue_release(NULL);
    kiln_buffer_release(NULL);
    kiln_program_release(NULL);
    kiln_kernel_release(NULL);
    kiln_event_release(NULL);

    CHECK_OK(kiln_event_set_complete(ev, KILN_EVENT_COMPLETE));
    KT_RELEASE(ev, k, p, b);
}

int main(void) {
    kt_for_each_device(with_queue, NULL);
    return kt_report();
}
