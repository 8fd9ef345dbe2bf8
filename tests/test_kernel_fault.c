/* A kernel that faults on the device (issue 13, finding 3d): the wait on
 * its event fails with a status and a message naming the kernel, instead
 * of a bare driver code (CL_UNKNOWN_ERROR on NVIDIA's OpenCL, an illegal
 * address on CUDA), and nothing hangs afterwards. GPUs only: on a CPU
 * device the fault is a segmentation fault in the runtime's worker thread,
 * which takes the process down (README, "Guarantees and limits"). On CUDA
 * the fault poisons the context: this test must run in its own process
 * (it is its own ctest test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int gpus_tested;

/* "name: status (message)" and 1 if the call failed, as every call on a
 * poisoned CUDA context must (a launch or marker may be accepted: then the
 * wait on its event must fail). */
static int failed(const char *name, kiln_status st) {
    printf("    %-28s %s (%s)\n", name, kiln_status_name(st), st ? kiln_last_error_message() : "");
    return st != KILN_OK && st != KILN_ERROR_TIMEOUT;
}

/* A launch, with its event waited on: 1 if it failed either way. */
static int launch_fails(kiln_queue *q, kiln_kernel *k, kiln_buffer *b) {
    kiln_arg a[] = { KILN_ARG_BUF(b) };
    size_t one = 1;
    kiln_event *e = NULL;
    kiln_status st = kiln_kernel_launch(q, k, 1, &one, NULL, 1, a, 0, NULL, &e);
    if (st == KILN_OK) {
        st = kiln_event_wait_timeout(e, 30000);
        CHECK(st != KILN_ERROR_TIMEOUT);
    }
    kiln_event_release(e);
    return failed("launch (and its wait)", st);
}

/* A fresh context on dev: a kernel writes 7, the host reads it back. */
static kiln_status fresh_context_works(kiln_device *dev) {
    kiln_context *c = NULL;
    kiln_queue *q = NULL;
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    kiln_buffer *b = NULL;
    int got = 0;
    kiln_status st = kiln_context_create(&dev, 1, &c);
    if (st == KILN_OK)
        st = kiln_queue_create(c, dev, 0, &q);
    if (st == KILN_OK)
        st = kiln_program_create(c, "KILN_KERNEL void seven(KILN_GLOBAL int *x) { x[0] = 7; }\n",
                                 NULL, &p);
    if (st == KILN_OK)
        st = kiln_kernel_create(p, "seven", &k);
    if (st == KILN_OK)
        st = kiln_buffer_create(c, sizeof got, 0, NULL, &b);
    if (st == KILN_OK) {
        kiln_arg a[] = { KILN_ARG_BUF(b) };
        size_t one = 1;
        st = kiln_kernel_launch(q, k, 1, &one, NULL, 1, a, 0, NULL, NULL);
    }
    if (st == KILN_OK)
        st = kiln_buffer_read(q, b, 0, sizeof got, &got);
    if (st == KILN_OK && got != 7)
        st = KILN_ERROR_INTERNAL;
    KT_RELEASE(b, k, p, q, c);
    return st;
}

/* CUDA errors of a faulting kernel are sticky (issue 41, item 11): every
 * later call on the poisoned context must report an error (none may say
 * KILN_OK with nothing done, none may hang), and a fresh context must work:
 * in this process if kiln can give one, else in a new process (the primary
 * context, which every kiln context on the device shares, stays poisoned
 * for the process; see README). */
static void check_poisoned(kiln_queue *q, kiln_kernel *k, kiln_buffer *b) {
    kiln_context *ctx = kiln_queue_context(q);
    printf("  calls on the poisoned context:\n");
    int host[16] = { 0 };
    kiln_buffer *nb = NULL;
    CHECK(failed("kiln_buffer_create", kiln_buffer_create(ctx, 1 << 20, 0, NULL, &nb)));
    kiln_buffer_release(nb);
    CHECK(failed("kiln_buffer_write", kiln_buffer_write(q, b, 0, sizeof host, host)));
    CHECK(failed("kiln_buffer_read", kiln_buffer_read(q, b, 0, sizeof host, host)));
    CHECK(launch_fails(q, k, b));
    kiln_event *m = NULL;
    kiln_status st = kiln_queue_marker(q, 0, NULL, &m);
    if (st == KILN_OK)
        st = kiln_event_wait_timeout(m, 30000);
    kiln_event_release(m);
    CHECK(failed("marker (and its wait)", st));
    CHECK(failed("kiln_queue_finish", kiln_queue_finish(q)));
    kiln_program *p = NULL;
    st = kiln_program_create(ctx, "KILN_KERNEL void other(KILN_GLOBAL int *x) { x[1] = 2; }\n",
                             NULL, &p);
    CHECK(failed("kiln_program_create", st));
    kiln_program_release(p);
    size_t n = 1000;
    kiln_array *a = NULL;
    st = kiln_array_zeros(q, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &a);
    if (st == KILN_OK) {
        float sum = 0;
        st = kiln_array_reduce(q, KILN_REDUCE_SUM, a, &sum);
    }
    kiln_array_release(a);
    CHECK(failed("kiln_array_zeros + reduce", st));
    /* a fresh context */
    st = fresh_context_works(kiln_queue_device(q));
    printf("  a fresh context in this process: %s (%s)\n", kiln_status_name(st),
           st ? kiln_last_error_message() : "works");
    if (st != KILN_OK) {
        /* a new process on the same device */
        char cmd[4200];
        const char *self = getenv("KT_SELF");
        snprintf(cmd, sizeof cmd, "'%s' --fresh", self ? self : "/proc/self/exe");
        int rc = system(cmd);
        printf("  a fresh context in a new process: exit %d\n", rc);
        CHECK_MSG(rc == 0, "a new process could not use the device after the fault");
        CHECK_MSG(st != KILN_ERROR_INTERNAL, "a fresh context gave a wrong answer");
    }
}

static const char *wild_store_src = "KILN_KERNEL void wild_store(KILN_GLOBAL int *x) {\n"
                                    "  x[kiln_global_id(0) + (1L << 40)] = 1; }\n";

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
    KT_BUILD(ctx, wild_store_src, NULL, &p, "wild_store", &k);
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
    if (!strcmp(info.backend_name, "cuda"))
        check_poisoned(q, k, b);
    KT_RELEASE(e, b, k, p);
}

static void fresh_only(kiln_queue *q, void *user) {
    (void)user;
    CHECK_OK(fresh_context_works(kiln_queue_device(q)));
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--fresh")) { /* the new process of check_poisoned */
        kt_for_each_device(fresh_only, NULL);
        return kt_report();
    }
    if (argc > 0 && argv[0][0] == '/')
        setenv("KT_SELF", argv[0], 1);
    kt_for_each_device(test_fault, NULL);
    if (!gpus_tested)
        KT_SKIP("no GPU among the test devices: a fault in a kernel on a CPU device "
                "ends the process, so there is nothing this test can check here");
    return kt_report();
}
