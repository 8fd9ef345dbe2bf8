/* bench_algo: axpy, sum, dot (float32) and int32 inclusive scan against a
 * device-to-device copy of the same bytes as the bandwidth reference.
 *   bench_algo [n]          n elements (default 2^24); device: $KILN_DEVICE
 * Prints a table and `RESULT op seconds` lines for bench/peers_algo.py.
 * Each figure is the median of 11 timed runs after 2 warm-up runs, host
 * wall time from enqueue to completion (results delivered to the host for
 * the reductions, as a user would get them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kiln.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define RUNS 11
#define DIE(st)                                                                \
    do {                                                                       \
        fprintf(stderr, "bench_algo: %s at line %d: %s\n",                     \
                kiln_status_name(st), __LINE__, kiln_last_error_message());    \
        exit(1);                                                               \
    } while (0)

typedef kiln_status (*op_fn)(void);
static kiln_queue *q;
static kiln_array *X, *Y, *Z, *I, *O;
static kiln_buffer *cb_src, *cb_dst;
static size_t n;
static float host_f;

static kiln_status op_copy(void) {
    kiln_event *e = NULL;
    kiln_status st = kiln_buffer_copy_async(q, cb_src, 0, cb_dst, 0, n * 4, 0,
                                            NULL, &e);
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    return st;
}
static kiln_status op_axpy(void) {
    kiln_event *e = NULL;
    kiln_status st = kiln_array_axpy(q, Z, 2.0, X, Y, 0, NULL, &e);
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    return st;
}
static kiln_status op_sum(void) {
    kiln_event *e = NULL;
    kiln_status st = kiln_array_reduce(q, KILN_REDUCE_SUM, X, NULL, &host_f,
                                       0, NULL, &e);
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    return st;
}
static kiln_status op_dot(void) {
    kiln_event *e = NULL;
    kiln_status st = kiln_array_dot(q, X, Y, NULL, &host_f, 0, NULL, &e);
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    return st;
}
static kiln_status op_scan(void) {
    kiln_event *e = NULL;
    kiln_status st = kiln_array_cumsum(q, O, I, 0, 0, NULL, &e);
    if (st == KILN_OK)
        st = kiln_event_wait(e);
    kiln_event_release(e);
    return st;
}

static double timeit(op_fn f) {
    double t[RUNS];
    for (int k = 0; k < 2; k++) {
        kiln_status st = f();
        if (st != KILN_OK)
            DIE(st);
    }
    for (int k = 0; k < RUNS; k++) {
        double t0 = now();
        kiln_status st = f();
        if (st != KILN_OK)
            DIE(st);
        t[k] = now() - t0;
    }
    qsort(t, RUNS, sizeof t[0], cmp);
    return t[RUNS / 2];
}

int main(int argc, char **argv) {
    n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : (size_t)1 << 24;
    if (!n)
        n = 1;
    kiln_status st = kiln_queue_create_default(NULL, 0, &q);
    if (st != KILN_OK)
        DIE(st);
    kiln_context *c = kiln_queue_context(q);
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    float *hx = malloc(n * 4), *hy = malloc(n * 4);
    int *hi = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        hx[i] = (float)(i % 1000) * 0.001f;
        hy[i] = 1.0f;
        hi[i] = (int)(i % 7);
    }
    if ((st = kiln_array_from_host(c, KILN_FLOAT32, 1, &n, hx, &X)) ||
        (st = kiln_array_from_host(c, KILN_FLOAT32, 1, &n, hy, &Y)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &n, &Z)) ||
        (st = kiln_array_from_host(c, KILN_INT32, 1, &n, hi, &I)) ||
        (st = kiln_array_empty(c, KILN_INT32, 1, &n, &O)) ||
        (st = kiln_buffer_create(c, n * 4, 0, hx, &cb_src)) ||
        (st = kiln_buffer_create(c, n * 4, 0, NULL, &cb_dst)))
        DIE(st);
    double tc = timeit(op_copy);
    double copy_bw = 2.0 * 4 * (double)n / tc;
    struct {
        const char *name;
        op_fn f;
        double bytes;
    } ops[] = {
        {"axpy", op_axpy, 12.0 * (double)n},
        {"sum", op_sum, 4.0 * (double)n},
        {"dot", op_dot, 8.0 * (double)n},
        {"scan_int32", op_scan, 8.0 * (double)n},
    };
    printf("device: %s (%s), n = %zu\n", info.name, info.id, n);
    printf("%-12s %10s %10s %12s %10s\n", "op", "ms", "GB/s", "Melem/s",
           "of copy");
    printf("%-12s %10.3f %10.2f %12.1f %9.0f%%\n", "copy", tc * 1e3,
           copy_bw * 1e-9, (double)n / tc * 1e-6, 100.0);
    printf("RESULT copy %.9f\n", tc);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        double t = timeit(ops[k].f);
        double bw = ops[k].bytes / t;
        printf("%-12s %10.3f %10.2f %12.1f %9.0f%%\n", ops[k].name, t * 1e3,
               bw * 1e-9, (double)n / t * 1e-6, 100.0 * bw / copy_bw);
        printf("RESULT %s %.9f\n", ops[k].name, t);
    }
    kiln_array_release(X);
    kiln_array_release(Y);
    kiln_array_release(Z);
    kiln_array_release(I);
    kiln_array_release(O);
    kiln_buffer_release(cb_src);
    kiln_buffer_release(cb_dst);
    kiln_queue_release(q);
    free(hx);
    free(hy);
    free(hi);
    return 0;
}
