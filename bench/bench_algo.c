/* bench_algo: axpy, sum, dot (float32) and int32 inclusive scan against a
 * device-to-device copy of the same bytes as the bandwidth reference.
 *   bench_algo [n]          n elements (default 2^24); device: $KILN_DEVICE
 * Prints a table and `RESULT op seconds` lines for bench/peers_algo.py.
 *
 * Each figure is the median of 11 timed runs after 2 warm-up runs, timed
 * with device events on a profiling queue: from a marker enqueued just
 * before the operation to the end of its last command (so the host round
 * trip to collect a result is not included; the reductions leave their
 * result in a device array). The host wall time of the same runs (enqueue
 * to completion) is printed too. Every run, warm-ups included, is verified
 * against a host reference after its output was overwritten with garbage:
 * a wrong fast answer makes the program fail.
 *
 * KILN_BENCH_OPS: comma-separated subset of axpy,sum,dot,scan_int32 to run
 * (the copy always runs: it is the reference); KILN_BENCH_QUICK=1 checks
 * only the warm-up runs (for tuning sweeps, never for reported figures). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_timing.h"
#include "kiln.h"


#define RUNS 11
#define DIE(st)                                                                \
    do {                                                                       \
        fprintf(stderr, "bench_algo: %s at line %d: %s\n",                     \
                kiln_status_name(st), __LINE__, kiln_last_error_message());    \
        exit(1);                                                               \
    } while (0)

typedef kiln_status (*op_fn)(kiln_event **e);
/* bench_time_enqueue's callback: arg points at the op_fn to run. */
static kiln_status run_op(void *arg, kiln_event **e) { return (*(op_fn *)arg)(e); }
typedef int (*check_fn)(void);
static kiln_queue *q;
static kiln_array *X, *Y, *Z, *I, *O, *R;
static kiln_buffer *cb_src, *cb_dst;
static size_t n;
static float *hx, *hy, *hz;
static int *hi, *ho, *href;
static double ref_sum, ref_dot;

static kiln_status op_copy(kiln_event **e) {
    return kiln_buffer_copy(q, cb_src, 0, cb_dst, 0, n * 4, 0, NULL, e);
}
static kiln_status op_axpy(kiln_event **e) {
    return kiln_array_axpy(q, Z, 2.0, X, Y, 0, NULL, e);
}
static kiln_status op_sum(kiln_event **e) {
    return kiln_array_reduce_async(q, KILN_REDUCE_SUM, X, R, NULL, 0, NULL, e);
}
static kiln_status op_dot(kiln_event **e) {
    return kiln_array_dot_async(q, X, Y, R, NULL, 0, NULL, e);
}
static kiln_status op_scan(kiln_event **e) {
    return kiln_array_cumsum(q, O, I, 0, 0, NULL, e);
}

/* Garbage into every output before a run. */
static void scramble(void) {
    static const unsigned char ff[4] = {0xff, 0xff, 0xff, 0xff};
    kiln_status st;
    if ((st = kiln_buffer_fill(q, cb_dst, ff, 4, 0, n * 4, 0, NULL,
                                     NULL)) ||
        (st = kiln_array_fill(q, Z, ff, 0, NULL, NULL)) ||
        (st = kiln_array_fill(q, O, ff, 0, NULL, NULL)) ||
        (st = kiln_array_fill(q, R, ff, 0, NULL, NULL)) ||
        (st = kiln_queue_finish(q)))
        DIE(st);
}

static int check_copy(void) {
    kiln_status st = kiln_buffer_read(q, cb_dst, 0, n * 4, hz);
    if (st != KILN_OK)
        DIE(st);
    return memcmp(hz, hx, n * 4) == 0;
}
static int check_axpy(void) {
    kiln_status st = kiln_array_read(q, Z, hz);
    if (st != KILN_OK)
        DIE(st);
    for (size_t i = 0; i < n; i++)
        if (hz[i] != 2.0f * hx[i] + hy[i]) /* 2x is exact: one rounding */
            return 0;
    return 1;
}
static int check_red(double ref) {
    float r = 0;
    kiln_status st = kiln_array_read(q, R, &r);
    if (st != KILN_OK)
        DIE(st);
    return fabs((double)r - ref) <= 1e-4 * fabs(ref) + 1e-3;
}
static int check_sum(void) { return check_red(ref_sum); }
static int check_dot(void) { return check_red(ref_dot); }
static int check_scan(void) {
    kiln_status st = kiln_array_read(q, O, ho);
    if (st != KILN_OK)
        DIE(st);
    return memcmp(ho, href, n * 4) == 0;
}

static int events_ok = 1;
static int quick; /* KILN_BENCH_QUICK: verify the warm-ups only */

/* One run: returns the device time (marker to end), wall time in *wall. */
static double run_once(const char *name, op_fn f, check_fn check,
                       double *wall, int verify) {
    scramble();
    kiln_status st;
    double dev = bench_time_enqueue(q, run_op, &f, &events_ok, wall, &st);
    if (st != KILN_OK)
        DIE(st);
    if (verify && !check()) {
        fprintf(stderr, "bench_algo: %s gave a WRONG result (n = %zu)\n",
                name, n);
        exit(1);
    }
    return dev;
}

static double timeit(const char *name, op_fn f, check_fn check,
                     double *wall_median) {
    double t[RUNS], w[RUNS], wall;
    for (int k = 0; k < 2; k++)
        run_once(name, f, check, &wall, 1);
    for (int k = 0; k < RUNS; k++)
        t[k] = run_once(name, f, check, &w[k], !quick);
    qsort(t, RUNS, sizeof t[0], bench_cmp_double);
    qsort(w, RUNS, sizeof w[0], bench_cmp_double);
    *wall_median = w[RUNS / 2];
    return t[RUNS / 2];
}

int main(int argc, char **argv) {
    n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : (size_t)1 << 24;
    if (!n)
        n = 1;
    quick = getenv("KILN_BENCH_QUICK") && atoi(getenv("KILN_BENCH_QUICK"));
    kiln_status st = kiln_queue_create_default(NULL, KILN_QUEUE_PROFILING, &q);
    if (st != KILN_OK)
        DIE(st);
    kiln_context *c = kiln_queue_context(q);
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    hx = malloc(n * 4);
    hy = malloc(n * 4);
    hz = malloc(n * 4);
    hi = malloc(n * 4);
    ho = malloc(n * 4);
    href = malloc(n * 4);
    if (!hx || !hy || !hz || !hi || !ho || !href) {
        fprintf(stderr, "bench_algo: out of host memory\n");
        return 1;
    }
    ref_sum = ref_dot = 0;
    unsigned acc = 0;
    for (size_t i = 0; i < n; i++) {
        hx[i] = (float)(i % 1000) * 0.001f;
        hy[i] = 1.0f + (float)(i % 3) * 0.5f;
        hi[i] = (int)(i % 7);
        acc += (unsigned)hi[i];
        href[i] = (int)acc;
        ref_sum += hx[i];
        ref_dot += (double)hx[i] * hy[i];
    }
    size_t one = 1;
    if ((st = kiln_array_from_host(c, KILN_FLOAT32, 1, &n, hx, &X)) ||
        (st = kiln_array_from_host(c, KILN_FLOAT32, 1, &n, hy, &Y)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &n, &Z)) ||
        (st = kiln_array_from_host(c, KILN_INT32, 1, &n, hi, &I)) ||
        (st = kiln_array_empty(c, KILN_INT32, 1, &n, &O)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &one, &R)) ||
        (st = kiln_buffer_create(c, n * 4, 0, hx, &cb_src)) ||
        (st = kiln_buffer_create(c, n * 4, 0, NULL, &cb_dst)))
        DIE(st);
    double wc;
    double tc = timeit("copy", op_copy, check_copy, &wc);
    double copy_bw = 2.0 * 4 * (double)n / tc;
    struct {
        const char *name;
        op_fn f;
        check_fn check;
        double bytes;
    } ops[] = {
        {"axpy", op_axpy, check_axpy, 12.0 * (double)n},
        {"sum", op_sum, check_sum, 4.0 * (double)n},
        {"dot", op_dot, check_dot, 8.0 * (double)n},
        {"scan_int32", op_scan, check_scan, 8.0 * (double)n},
    };
    printf("device: %s (%s), n = %zu\n", info.name, info.id, n);
    printf("%-12s %10s %10s %12s %10s %10s\n", "op", "ms", "GB/s", "Melem/s",
           "of copy", "wall ms");
    printf("%-12s %10.3f %10.2f %12.1f %9.0f%% %10.3f\n", "copy", tc * 1e3,
           copy_bw * 1e-9, (double)n / tc * 1e-6, 100.0, wc * 1e3);
    printf("RESULT copy %.9f\n", tc);
    const char *only = getenv("KILN_BENCH_OPS");
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        double w;
        if (only && !strstr(only, ops[k].name))
            continue;
        double t = timeit(ops[k].name, ops[k].f, ops[k].check, &w);
        double bw = ops[k].bytes / t;
        printf("%-12s %10.3f %10.2f %12.1f %9.0f%% %10.3f\n", ops[k].name,
               t * 1e3, bw * 1e-9, (double)n / t * 1e-6, 100.0 * bw / copy_bw,
               w * 1e3);
        printf("RESULT %s %.9f\n", ops[k].name, t);
        printf("WALL %s %.9f\n", ops[k].name, w);
    }
    printf(quick ? "timing: %s; warm-up runs verified (KILN_BENCH_QUICK)\n"
                 : "timing: %s; every run verified\n",
           events_ok ? "device events (marker to end), median of 11"
                     : "host wall time (profiling events unavailable), "
                       "median of 11");
    kiln_array_release(X);
    kiln_array_release(Y);
    kiln_array_release(Z);
    kiln_array_release(I);
    kiln_array_release(O);
    kiln_array_release(R);
    kiln_buffer_release(cb_src);
    kiln_buffer_release(cb_dst);
    kiln_queue_release(q);
    free(hx);
    free(hy);
    free(hz);
    free(hi);
    free(ho);
    free(href);
    return 0;
}
