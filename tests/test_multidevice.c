/* A context over several devices, a queue on each, work split between them
 * and a dependency across the queues. Device fission gives us two devices
 * even on a CPU-only machine (PoCL), so this runs in CI. Without a device
 * that can be partitioned (and no second device of the same backend) the
 * test is skipped (exit 77). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *source =
    "KILN_KERNEL void scale(KILN_GLOBAL const float *x, KILN_GLOBAL float *y, float a) {\n"
    "    size_t i = kiln_global_id(0);\n"
    "    y[i] = a * x[i];\n"
    "}\n"
    "KILN_KERNEL void add_into(KILN_GLOBAL const float *x, KILN_GLOBAL float *y) {\n"
    "    size_t i = kiln_global_id(0);\n"
    "    y[i] += x[i];\n"
    "}\n";

/* Two devices that can share a context: sub-devices of the default device,
 * else the first two devices of its backend and platform. 0 if none. */
static int pick_two(kiln_device *two[2]) {
    kiln_device *dev = NULL;
    if (kiln_device_select(NULL, &dev) != KILN_OK)
        return 0;
    kiln_device_info info;
    kiln_device_get_info(dev, &info);
    kiln_device *subs[64];
    size_t n = 0;
    if (info.compute_units >= 2 && kiln_device_partition(dev, 1, subs, 64, &n) == KILN_OK &&
        n >= 2) {
        two[0] = subs[0];
        two[1] = subs[1];
        return 1;
    }
    size_t count = 0, found = 0;
    kiln_device_count(&count);
    for (size_t i = 0; i < count && found < 2; i++) {
        kiln_device *d = NULL;
        kiln_device_info di;
        if (kiln_device_at(i, &d) == KILN_OK && kiln_device_get_info(d, &di) == KILN_OK &&
            di.backend == info.backend && !di.is_subdevice &&
            strcmp(di.platform, info.platform) == 0)
            two[found++] = d;
    }
    return found == 2;
}

int main(void) {
    kiln_device *two[2];
    if (!pick_two(two))
        KT_SKIP("no two devices of one backend, and the default device cannot be partitioned");
    kiln_device_info i0, i1;
    kiln_device_get_info(two[0], &i0);
    kiln_device_get_info(two[1], &i1);
    printf("devices: %s and %s\n", i0.id, i1.id);

    kiln_context *ctx = NULL;
    if (!CHECK_OK(kiln_context_create(two, 2, &ctx)))
        return kt_report();
    CHECK(kiln_context_num_devices(ctx) == 2);
    CHECK(kiln_context_device(ctx, 0) == two[0]);
    CHECK(kiln_context_device(ctx, 1) == two[1]);
    CHECK(kiln_context_device(ctx, 2) == NULL);

    /* One program, built for both devices. */
    kiln_program *prog = NULL;
    kiln_kernel *scale = NULL, *add_into = NULL;
    kiln_queue *q[2] = { NULL, NULL };
    kiln_buffer *x = NULL, *y = NULL, *half[2] = { NULL, NULL }, *yhalf[2] = { NULL, NULL };
    if (!CHECK_OK(kiln_program_create(ctx, source, NULL, &prog)) ||
        !CHECK_OK(kiln_kernel_create(prog, "scale", &scale)) ||
        !CHECK_OK(kiln_kernel_create(prog, "add_into", &add_into)))
        goto out;
    for (int d = 0; d < 2; d++)
        if (!CHECK_OK(kiln_queue_create(ctx, two[d], KILN_QUEUE_PROFILING, &q[d])))
            goto out;

    /* y = 3x, computed half on each device; then device 1 adds x into the
     * half that device 0 wrote, after waiting for device 0's event. */
    enum { N = 4099 * 64 }; /* halves start at a 128-byte-aligned offset */
    float *hx = malloc(N * sizeof *hx), *hy = malloc(N * sizeof *hy);
    if (!hx || !hy) {
        KT_FREE(hx, hy);
        goto out;
    }
    for (int i = 0; i < N; i++)
        hx[i] = (float)(kt_rand_u64() % 1000) - 500.0f;
    size_t half_n = N / 2, half_bytes = half_n * sizeof(float);
    if (CHECK_OK(kiln_buffer_create(ctx, N * sizeof(float), 0, hx, &x)) &&
        CHECK_OK(kiln_buffer_create(ctx, N * sizeof(float), 0, NULL, &y))) {
        kiln_event *done[2] = { NULL, NULL }, *added = NULL;
        for (int d = 0; d < 2; d++) {
            CHECK_OK(kiln_buffer_create_sub(x, d * half_bytes, half_bytes, &half[d]));
            CHECK_OK(kiln_buffer_create_sub(y, d * half_bytes, half_bytes, &yhalf[d]));
            kiln_arg args[] = { KILN_ARG_BUF(half[d]), KILN_ARG_BUF(yhalf[d]), KILN_ARG_F32(3.0f) };
            CHECK_OK(kiln_kernel_launch(q[d], scale, 1, &half_n, NULL, 3, args, 0, NULL, &done[d]));
        }
        /* device 1 works on device 0's output: a cross-queue dependency */
        kiln_arg add_args[] = { KILN_ARG_BUF(half[0]), KILN_ARG_BUF(yhalf[0]) };
        CHECK_OK(
            kiln_kernel_launch(q[1], add_into, 1, &half_n, NULL, 2, add_args, 1, &done[0], &added));
        CHECK_OK(kiln_event_wait_all(1, &added));
        CHECK_OK(kiln_event_wait(done[1]));
        CHECK_OK(kiln_buffer_read(q[0], y, 0, N * sizeof(float), hy));
        int bad = 0;
        for (size_t i = 0; i < (size_t)N; i++) {
            float want = i < half_n ? 4.0f * hx[i] : 3.0f * hx[i];
            bad += hy[i] != want;
        }
        CHECK_MSG(bad == 0, "%d wrong elements", bad);
        /* both devices really ran: each kernel event has profiling times */
        for (int d = 0; d < 2; d++) {
            kiln_event_times t;
            if (CHECK_OK(kiln_event_get_times(done[d], &t)))
                CHECK(t.ended >= t.started);
        }
        KT_RELEASE(done[0], done[1], added);
    }
    KT_FREE(hx, hy);
    for (int d = 0; d < 2; d++)
        CHECK_OK(kiln_queue_finish(q[d]));

out:
    for (int d = 0; d < 2; d++) {
        KT_RELEASE(half[d], yhalf[d], q[d]);
    }
    KT_RELEASE(x, y, scale, add_into, prog, ctx);
    return kt_report();
}
