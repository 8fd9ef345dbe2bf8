/* A kernel that faults on the device (issue 13, finding 3d): the wait on
 * its event fails with a status and a message naming the kernel, instead
 * of a bare driver code (CL_UNKNOWN_ERROR on NVIDIA's OpenCL, an illegal
 * address on CUDA), and nothing hangs afterwards. GPUs only: on a CPU
 * device the fault is a segmentation fault in the runtime's worker thread,
 * which takes the process down (README, "Guarantees and limits"). On CUDA
 * the fault poisons the context: this test must run in its own process
 * (it is its own ctest test). */
#include <stdio.h>
#include <string.h>

#include "harness.h"

static int gpus_tested;

static void test_fault(kiln_queue *q, void *user) {
    (void)user;
    kiln_device_info info;
    if (!CHECK_OK(kiln_device_get_info(kiln_queue_device(q), &info)))
        return;
    if (info.type != KILN_DEVICE_GPU) {
        /* no check here: a device this test cannot run on is a skip */
        printf("  (not a GPU: a fault would end the process; left out)\n");
        return;
    }
    gpus_tested++;
    kiln_context *ctx = kiln_queue_context(q);
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    kiln_buffer *b = NULL;
    /* Far past the buffer: an address no allocation holds. */
    CHECK_OK(kiln_program_create(ctx,
                                 "KILN_KERNEL void wild_store(KILN_GLOBAL int *x) {\n"
                                 "  x[kiln_global_id(0) + (1L << 40)] = 1; }\n",
                                 NULL, &p));
    CHECK_OK(kiln_kernel_create(p, "wild_store", &k));
    CHECK_OK(kiln_buffer_create(ctx, 64, 0, NULL, &b));
    kiln_arg a[] = { KILN_ARG_BUF(b) };
    size_t n = 256;
    kiln_event *e = NULL;
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 1, a, 0, NULL, &e));
    kiln_status st = kiln_event_wait_timeout(e, 30000);
    printf("  wait: %s: %s\n", kiln_status_name(st), kiln_last_error_message());
    CHECK(st != KILN_OK && st != KILN_ERROR_TIMEOUT);
    CHECK(strstr(kiln_last_error_message(), "kernel 'wild_store'") != NULL);
    /* Later calls report an error or succeed; none hangs. */
    kiln_event *m = NULL;
    st = kiln_queue_marker(q, 0, NULL, &m);
    if (st == KILN_OK) {
        st = kiln_event_wait_timeout(m, 30000);
        CHECK(st != KILN_ERROR_TIMEOUT);
        kiln_event_release(m);
    }
    printf("  afterwards: %s\n", kiln_status_name(st));
    kiln_event_release(e);
    kiln_buffer_release(b);
    kiln_kernel_release(k);
    kiln_program_release(p);
}

int main(void) {
    kt_for_each_device(test_fault, NULL);
    if (!gpus_tested)
        KT_SKIP("no GPU among the test devices: a fault in a kernel on a CPU device "
                "ends the process, so there is nothing this test can check here");
    return kt_report();
}
