/* Work split across the sub-devices of a CPU device (PoCL): one large
 * elementwise operation on one sub-device, split over all of them
 * (kiln_elementwise_launch_split, weights by kiln_split_weigh and by
 * compute units), and on the whole device, in one run.
 *
 *   bench_split [n] [rounds]     (default 2^24 float32, 7 rounds; KILN_DEVICE)
 *
 * The operation is compute-bound on purpose (a few dozen flops an item);
 * the figure the issue asks for is split / one sub-device >= 1.6x. */
#include <stdio.h>
#include <stdlib.h>

#include "bench_timing.h"
#include "kiln.h"

#define FAIL_IF(cond, what)                                                            \
    do {                                                                               \
        if (cond) {                                                                    \
            fprintf(stderr, "bench_split: %s: %s\n", what, kiln_last_error_message()); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : (size_t)1 << 24;
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    if (n == 0 || rounds < 1 || rounds > 101)
        return 2;
    kiln_device *dev;
    FAIL_IF(kiln_device_select(NULL, &dev) != KILN_OK, "device");
    kiln_device_info info;
    kiln_device_get_info(dev, &info);
    kiln_device *parts[64];
    size_t np = 0;
    kiln_split_desc d = KILN_SPLIT_DESC(.units_each = 1);
    FAIL_IF(kiln_device_split(dev, &d, parts, 64, &np) != KILN_OK || np < 2, "split");
    kiln_context *ctx;
    FAIL_IF(kiln_context_create(parts, np, &ctx) != KILN_OK, "context");
    kiln_queue *qs[64];
    for (size_t k = 0; k < np; k++)
        FAIL_IF(kiln_queue_create(ctx, parts[k], 0, &qs[k]) != KILN_OK, "queue");
    kiln_context *whole_ctx;
    kiln_queue *whole;
    FAIL_IF(kiln_context_create(&dev, 1, &whole_ctx) != KILN_OK, "context");
    FAIL_IF(kiln_queue_create(whole_ctx, dev, 0, &whole) != KILN_OK, "queue");
    const char *op = "float v = x[i]; for (int k = 0; k < 16; k++) v = v * 0.999f + 0.5f; "
                     "z[i] = v";
    kiln_elementwise *ew, *ew_whole;
    FAIL_IF(kiln_elementwise_create(
                ctx,
                &KILN_ELEMENTWISE_DESC(.arguments = "const float *x, float *z", .operation = op),
                &ew) != KILN_OK,
            "generator");
    FAIL_IF(kiln_elementwise_create(
                whole_ctx,
                &KILN_ELEMENTWISE_DESC(.arguments = "const float *x, float *z", .operation = op),
                &ew_whole) != KILN_OK,
            "generator");
    kiln_array *x, *z, *xw, *zw;
    FAIL_IF(kiln_array_zeros(qs[0], KILN_FLOAT32, 1, &n, 0, NULL, NULL, &x) != KILN_OK, "array");
    FAIL_IF(kiln_array_zeros(qs[0], KILN_FLOAT32, 1, &n, 0, NULL, NULL, &z) != KILN_OK, "array");
    FAIL_IF(kiln_array_zeros(whole, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &xw) != KILN_OK, "array");
    FAIL_IF(kiln_array_zeros(whole, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &zw) != KILN_OK, "array");
    kiln_queue_finish(qs[0]);
    kiln_arg args[] = { KILN_ARG_ARRAY(x), KILN_ARG_ARRAY(z) };
    kiln_arg wargs[] = { KILN_ARG_ARRAY(xw), KILN_ARG_ARRAY(zw) };
    double w[64];
    FAIL_IF(kiln_split_weigh(np, qs, ew, n, 2, args, w) != KILN_OK, "weigh");
    double *one = calloc((size_t)rounds, sizeof(double)),
           *sw = calloc((size_t)rounds, sizeof(double));
    double *su = calloc((size_t)rounds, sizeof(double)),
           *wh = calloc((size_t)rounds, sizeof(double));
    kiln_elementwise_launch(whole, ew_whole, n, 2, wargs, 0, NULL, NULL); /* warm */
    kiln_queue_finish(whole);
    for (int r = 0; r < rounds; r++) {
        double t = bench_now();
        FAIL_IF(kiln_elementwise_launch(qs[0], ew, n, 2, args, 0, NULL, NULL) != KILN_OK, "one");
        kiln_queue_finish(qs[0]);
        one[r] = bench_now() - t;
        kiln_event *e;
        t = bench_now();
        FAIL_IF(kiln_elementwise_launch_split(np, qs, w, ew, n, 2, args, 0, NULL, &e) != KILN_OK,
                "split");
        kiln_event_wait(e);
        kiln_event_release(e);
        sw[r] = bench_now() - t;
        t = bench_now();
        FAIL_IF(kiln_elementwise_launch_split(np, qs, NULL, ew, n, 2, args, 0, NULL, &e) != KILN_OK,
                "split");
        kiln_event_wait(e);
        kiln_event_release(e);
        su[r] = bench_now() - t;
        t = bench_now();
        kiln_elementwise_launch(whole, ew_whole, n, 2, wargs, 0, NULL, NULL);
        kiln_queue_finish(whole);
        wh[r] = bench_now() - t;
    }
    double m1 = median(one, rounds), mw = median(sw, rounds), mu = median(su, rounds),
           mh = median(wh, rounds);
    printf("device: %s (%s), %zu sub-devices of 1 unit\n", info.name, info.id, np);
    printf("%zu float32, compute-bound elementwise, %d rounds, medians:\n", n, rounds);
    printf("  one sub-device:                 %8.2f ms\n", m1 * 1e3);
    printf("  split, measured weights:        %8.2f ms   (%.2fx one sub-device)\n", mw * 1e3,
           m1 / mw);
    printf("  split, by compute units:        %8.2f ms   (%.2fx one sub-device)\n", mu * 1e3,
           m1 / mu);
    printf("  whole device, one launch:       %8.2f ms   (%.2fx one sub-device)\n", mh * 1e3,
           m1 / mh);
    printf("  measured weights:");
    for (size_t k = 0; k < np; k++)
        printf(" %.3g", w[k]);
    printf(" items/s\n");
    kiln_array_release(x);
    kiln_array_release(z);
    kiln_array_release(xw);
    kiln_array_release(zw);
    kiln_elementwise_release(ew);
    kiln_elementwise_release(ew_whole);
    for (size_t k = 0; k < np; k++)
        kiln_queue_release(qs[k]);
    kiln_queue_release(whole);
    kiln_context_release(ctx);
    kiln_context_release(whole_ctx);
    free(one);
    free(sw);
    free(su);
    free(wh);
    return 0;
}
