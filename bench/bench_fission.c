/* Latency on a reserved partition (issue 47 item 2): a small kernel on
 * sub-device A, launched and waited for one at a time, while sub-device B
 * runs a saturating workload (compute-bound, then memory-bound), against
 * the same kernel with B idle. p50/p99 of the host round trip (launch to
 * wait returning) and of the device time (profiling events).
 *
 *   bench_fission [samples]        (default 10000; KILN_DEVICE picks the
 *                                   device to split: PoCL's CPU here)
 *
 * Where the device cannot be split (CUDA: green contexts are not kiln
 * devices yet) it says so and measures two queues of the whole device:
 * the unreserved baseline.
 *
 * The reference is the same kernel on partition A with B idle; the goal is
 * p99 <= 1.5x idle. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_timing.h"
#include "kiln.h"

#define FAIL_IF(cond, what)                                                              \
    do {                                                                                 \
        if (cond) {                                                                      \
            fprintf(stderr, "bench_fission: %s: %s\n", what, kiln_last_error_message()); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

static const char *src =
    "KILN_KERNEL void small(KILN_GLOBAL float *p) { size_t i = kiln_global_id(0); p[i] += 1.0f; }\n"
    "KILN_KERNEL void burn(KILN_GLOBAL float *p) {\n"
    "    size_t i = kiln_global_id(0); float v = p[i];\n"
    "    for (int k = 0; k < 4096; k++) v = v * 0.9999f + 0.25f;\n"
    "    p[i] = v;\n"
    "}\n"
    "KILN_KERNEL void stream(KILN_GLOBAL const float *a, KILN_GLOBAL float *b) {\n"
    "    size_t i = kiln_global_id(0); b[i] = a[i] * 2.0f + b[i];\n"
    "}\n";

typedef struct load {
    kiln_queue *q;
    kiln_kernel *k;
    kiln_buffer *a, *b;
    size_t n;
    int memory;
    atomic_int stop;
} load;

static void *load_main(void *p) {
    load *l = p;
    while (!atomic_load(&l->stop)) {
        kiln_arg burn[] = { KILN_ARG_BUF(l->a) };
        kiln_arg stream[] = { KILN_ARG_BUF(l->a), KILN_ARG_BUF(l->b) };
        for (int r = 0; r < 4; r++)
            kiln_kernel_launch(l->q, l->k, 1, &l->n, NULL, l->memory ? 2 : 1,
                               l->memory ? stream : burn, 0, NULL, NULL);
        kiln_queue_finish(l->q);
    }
    return NULL;
}

static double pct(double *v, int n, double p) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    int i = (int)(p * (n - 1) + 0.5);
    return v[i];
}

/* samples launches of small on q, one at a time: round trips and device
 * times (microseconds) */
static void measure(kiln_queue *q, kiln_kernel *k, kiln_buffer *b, int samples, double *rt,
                    double *dev, int *dev_ok) {
    size_t g = 64;
    kiln_arg a[] = { KILN_ARG_BUF(b) };
    for (int s = 0; s < samples; s++) {
        kiln_event *e = NULL;
        double t = bench_now();
        FAIL_IF(kiln_kernel_launch(q, k, 1, &g, NULL, 1, a, 0, NULL, &e) != KILN_OK, "launch");
        kiln_event_wait(e);
        rt[s] = (bench_now() - t) * 1e6;
        kiln_event_times tm;
        if (kiln_event_get_times(e, &tm) == KILN_OK && tm.ended >= tm.started)
            dev[s] = (double)(tm.ended - tm.started) * 1e-3;
        else
            *dev_ok = 0;
        kiln_event_release(e);
    }
}

int main(int argc, char **argv) {
    int samples = argc > 1 ? atoi(argv[1]) : 10000;
    if (samples < 10)
        return 2;
    kiln_device *dev;
    FAIL_IF(kiln_device_select(NULL, &dev) != KILN_OK, "device");
    kiln_device_info info;
    kiln_device_get_info(dev, &info);
    kiln_device *parts[64];
    size_t np = 0;
    unsigned half = info.compute_units / 2 ? info.compute_units / 2 : 1;
    unsigned counts[2] = { half, info.compute_units - half ? info.compute_units - half : 1 };
    kiln_split_desc d = KILN_SPLIT_DESC(.num_counts = 2, .counts = counts);
    kiln_status split = kiln_device_split(dev, &d, parts, 64, &np);
    int reserved = split == KILN_OK && np == 2;
    if (!reserved) {
        /* No partitions (CUDA until green contexts are devices): the same
         * measurement on two queues of the whole device, the baseline that
         * a reservation is to improve on. */
        FAIL_IF(split != KILN_ERROR_UNSUPPORTED, "split");
        printf("no partition: %s\n  -> both queues on the whole device (NOT reserved)\n",
               kiln_last_error_message());
        parts[0] = parts[1] = dev;
    }
    kiln_context *ctx;
    FAIL_IF(kiln_context_create(parts, reserved ? 2 : 1, &ctx) != KILN_OK, "context");
    kiln_queue *qa, *qb;
    FAIL_IF(kiln_queue_create(ctx, parts[0], KILN_QUEUE_PROFILING, &qa) != KILN_OK, "queue");
    FAIL_IF(kiln_queue_create(ctx, parts[1], 0, &qb) != KILN_OK, "queue");
    kiln_program *prog;
    kiln_kernel *small, *burn, *stream;
    FAIL_IF(kiln_program_create(ctx, src, NULL, &prog) != KILN_OK, "build");
    kiln_kernel_create(prog, "small", &small);
    kiln_kernel_create(prog, "burn", &burn);
    kiln_kernel_create(prog, "stream", &stream);
    size_t big = (size_t)1 << 22;
    kiln_buffer *bs, *la, *lb;
    FAIL_IF(kiln_buffer_create(ctx, 256, 0, NULL, &bs) != KILN_OK, "buffer");
    FAIL_IF(kiln_buffer_create(ctx, big * 4, 0, NULL, &la) != KILN_OK, "buffer");
    FAIL_IF(kiln_buffer_create(ctx, big * 4, 0, NULL, &lb) != KILN_OK, "buffer");
    float zero = 0;
    kiln_buffer_fill(qb, la, &zero, 4, 0, big * 4, 0, NULL, NULL);
    kiln_buffer_fill(qb, lb, &zero, 4, 0, big * 4, 0, NULL, NULL);
    kiln_buffer_fill(qa, bs, &zero, 4, 0, 256, 0, NULL, NULL);
    kiln_queue_finish(qa);
    kiln_queue_finish(qb);
    double *rt = malloc((size_t)samples * sizeof *rt), *dv = malloc((size_t)samples * sizeof *dv);
    if (reserved)
        printf("device: %s (%s) split %u + %u units; %d samples of a 64-item kernel on part A\n",
               info.name, info.id, counts[0], counts[1], samples);
    else
        printf("device: %s (%s) unsplit, queues A and B; %d samples of a 64-item kernel on A\n",
               info.name, info.id, samples);
    printf("%-26s %10s %10s %10s %10s\n", "part B", "rt p50 us", "rt p99 us", "dev p50", "dev p99");
    double idle99 = 0;
    for (int mode = 0; mode < 3; mode++) {
        load l = { .q = qb,
                   .k = mode == 2 ? stream : burn,
                   .a = la,
                   .b = lb,
                   .n = mode == 2 ? big : big / 64,
                   .memory = mode == 2 };
        atomic_init(&l.stop, 0);
        pthread_t th;
        if (mode)
            pthread_create(&th, NULL, load_main, &l);
        int dev_ok = 1;
        measure(qa, small, bs, samples / 10, rt, dv, &dev_ok); /* warm */
        measure(qa, small, bs, samples, rt, dv, &dev_ok);
        if (mode) {
            atomic_store(&l.stop, 1);
            pthread_join(th, NULL);
        }
        double r50 = pct(rt, samples, 0.5), r99 = pct(rt, samples, 0.99);
        double d50 = dev_ok ? pct(dv, samples, 0.5) : -1,
               d99 = dev_ok ? pct(dv, samples, 0.99) : -1;
        if (!mode)
            idle99 = r99;
        printf("%-26s %10.1f %10.1f %10.1f %10.1f%s\n",
               mode == 0   ? "idle"
               : mode == 1 ? "compute-bound load"
                           : "memory-bound load",
               r50, r99, d50, d99, "");
        if (mode)
            printf("%-26s p99 round trip %.2fx idle (goal <= 1.5x)\n", "", r99 / idle99);
    }
    kiln_kernel_release(small);
    kiln_kernel_release(burn);
    kiln_kernel_release(stream);
    kiln_program_release(prog);
    kiln_buffer_release(bs);
    kiln_buffer_release(la);
    kiln_buffer_release(lb);
    kiln_queue_release(qa);
    kiln_queue_release(qb);
    kiln_context_release(ctx);
    free(rt);
    free(dv);
    return 0;
}
