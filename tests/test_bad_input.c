/* Bad input that once gave KILN_OK and a wrong answer or a hang (issue 13):
 * runaway launch sizes, allocations larger than the device, declared type
 * sizes that do not match, NaN in comparisons, and unchecked arguments.
 * Each case must fail with a clear status and a message that names the
 * numbers, and leave the library working. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int msg_has(const char *needle) {
    const char *m = kiln_last_error_message();
    int ok = m && strstr(m, needle) != NULL;
    if (!ok)
        printf("  message: %s\n  (expected to contain \"%s\")\n", m ? m : "(null)", needle);
    return ok;
}

/* Finding 3: a global size of SIZE_MAX (an `n - 1` underflow) or
 * {2^32, 2^32} (a product past 2^64) is refused before the launch. */
static void test_runaway_launch(kiln_queue *q, void *user) {
    (void)user;
    kiln_context *ctx = kiln_queue_context(q);
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    CHECK_OK(kiln_program_create(ctx,
        "KILN_KERNEL void touch(KILN_GLOBAL int *out) { if (kiln_global_id(0) == 0) out[0] = 7; }\n",
        NULL, &p));
    CHECK_OK(kiln_kernel_create(p, "touch", &k));
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(ctx, sizeof(int), 0, NULL, &b));
    kiln_arg args[] = {KILN_ARG_BUF(b)};
    size_t huge = SIZE_MAX;
    kiln_event *e = (kiln_event *)1;
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, &huge, NULL, 1, args, 0, NULL, &e),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(e == NULL);
    char want[64];
    snprintf(want, sizeof want, "{%zu}", (size_t)SIZE_MAX);
    CHECK(msg_has(want));
    size_t sq[2] = {(size_t)1 << 32, (size_t)1 << 32};
    CHECK_STATUS(kiln_kernel_launch(q, k, 2, sq, NULL, 1, args, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(msg_has("{4294967296, 4294967296}"));
    size_t cube[3] = {(size_t)1 << 20, (size_t)1 << 20, (size_t)1 << 10};
    CHECK_STATUS(kiln_kernel_launch(q, k, 3, cube, NULL, 1, args, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* A 0 anywhere is an empty launch, whatever the other sizes; and the
     * kernel still runs afterwards. */
    size_t empty[2] = {SIZE_MAX, 0};
    CHECK_OK(kiln_kernel_launch(q, k, 2, empty, NULL, 1, args, 0, NULL, NULL));
    size_t one = 1;
    CHECK_OK(kiln_kernel_launch(q, k, 1, &one, NULL, 1, args, 0, NULL, NULL));
    int got = 0;
    CHECK_OK(kiln_buffer_read(q, b, 0, sizeof got, &got));
    CHECK(got == 7);
    kiln_buffer_release(b);
    kiln_kernel_release(k);
    kiln_program_release(p);
}

int main(void) {
    kt_for_each_device(test_runaway_launch, NULL);
    return kt_report();
}
