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
 * (the copy always runs: it is the reference), or scan_int64 (an int64
 * inclusive scan, 16 bytes an item: run only when named here, its arrays
 * take 4n more bytes of each memory); KILN_BENCH_QUICK=1 checks
 * only the warm-up runs (for tuning sweeps, never for reported figures);
 * KILN_BENCH_WARM=1 overwrites the outputs before the warm-ups only, so the
 * timed runs find their data in the GPU's caches as the peers' loops do
 * (a timed run that did nothing would still verify: for diagnosis).
 * KILN_BENCH_VERIFY=last (scripts/gpu-bench-algo.sh's default; any other
 * value, e.g. all, verifies every run) verifies the warm-ups and the last
 * timed run only, so the timed runs follow each other without the host's check of
 * the previous result in between, as the peers' timing loops do (each
 * still starts from scrambled outputs): on an H200 the GPU idling ~0.3 s
 * for each check of 2^28 results made axpy ~2.5% slower (0.762 against
 * 0.743 ms in one call).
 *
 *   bench_algo --sweep [max_n]
 * Size sweep (issue 16): the same five operations, timed and verified the
 * same way, for n = 2^10, 2^12, 2^14, ... up to max_n (and max_n itself
 * when it is not on that grid). Default max_n: 2^28 when kiln reports a GPU
 * device, else 2^24; lowered (with a note on stderr) until the seven
 * arrays/buffers fit in the device memory and max allocation. The arrays
 * are allocated once at max_n; each size works on views of their first n
 * elements (offset 0, dense: the same contiguous kernels as a fresh
 * array). Median of 11 runs after 2 warm-ups for n <= 2^24, of 5 runs
 * (after the same 2 warm-ups) above, to keep the sweep short. Prints one
 * `SWEEP op n device_seconds wall_seconds` line per op and size (as they
 * are measured), then a table in microseconds. Up to n = 2^16 it also
 * times what a program waits for a small op: the call without event or
 * timing marker plus kiln_queue_finish (`ROUNDTRIP op n seconds` lines and
 * a second table), to compare with a raw launch + synchronise.
 *
 *   bench_algo --enqueue
 * Host cost of a call (issue 16, small sizes): each op over 1024 elements
 * called 100 times without event, then kiln_queue_finish; the enqueue time
 * per call (median of 15 rounds), beside kiln_array_binary_out (add) and a
 * kiln_kernel_launch of the same axpy written by hand (the floor: what the
 * array layer adds is the difference). `ENQUEUE op seconds` lines. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_timing.h"
#include "kiln.h"

#define RUNS 11
#define DIE(st)                                                                            \
    do {                                                                                   \
        fprintf(stderr, "bench_algo: %s at line %d: %s\n", kiln_status_name(st), __LINE__, \
                kiln_last_error_message());                                                \
        exit(1);                                                                           \
    } while (0)

typedef kiln_status (*op_fn)(kiln_event **e);
/* bench_time_enqueue's callback: arg points at the op_fn to run. */
static kiln_status run_op(void *arg, kiln_event **e) {
    return (*(op_fn *)arg)(e);
}
typedef int (*check_fn)(void);
static kiln_queue *q;
static kiln_array *X, *Y, *Z, *I, *O, *R;
/* --sweep: the arrays at max_n; X, Y, Z, I, O are views of their first n. */
static kiln_array *Xf, *Yf, *Zf, *If, *Of;
static kiln_buffer *cb_src, *cb_dst;
static size_t n;
static float *hx, *hy, *hz;
static int *hi, *ho, *href;
static double ref_sum, ref_dot;

static kiln_status op_copy(kiln_event **e) {
    return kiln_buffer_copy(q, cb_src, 0, cb_dst, 0, n * 4, 0, NULL, e);
}
static kiln_status op_axpy(kiln_event **e) {
    return kiln_array_axpy_out(q, Z, KILN_ARG_F64(2.0), X, Y, 0, NULL, e);
}
static kiln_status op_sum(kiln_event **e) {
    return kiln_array_reduce_async(q, KILN_REDUCE_SUM, X, R, NULL, 0, NULL, e);
}
static kiln_status op_dot(kiln_event **e) {
    return kiln_array_dot_async(q, X, Y, R, NULL, 0, NULL, e);
}
static kiln_status op_scan(kiln_event **e) {
    return kiln_array_cumsum_out(q, O, I, 0, 0, NULL, e);
}
/* scan_int64 (opt-in): its arrays and reference */
static kiln_array *I64, *O64;
static int64_t *hi64, *ho64, *href64;
static kiln_status op_scan64(kiln_event **e) {
    return kiln_array_cumsum_out(q, O64, I64, 0, 0, NULL, e);
}
static int check_scan64(void) {
    kiln_status st = kiln_array_read(q, O64, ho64);
    if (st != KILN_OK)
        DIE(st);
    return memcmp(ho64, href64, n * 8) == 0;
}

/* Garbage into every output before a run. */
static void scramble(void) {
    static const unsigned char ff[4] = { 0xff, 0xff, 0xff, 0xff };
    kiln_status st;
    if ((st = kiln_buffer_fill(q, cb_dst, ff, 4, 0, n * 4, 0, NULL, NULL)) ||
        (st = kiln_array_fill(q, Z, bench_garbage(Z), 0, NULL, NULL)) ||
        (st = kiln_array_fill(q, O, bench_garbage(O), 0, NULL, NULL)) ||
        (st = kiln_array_fill(q, R, bench_garbage(R), 0, NULL, NULL)) ||
        (O64 && (st = kiln_array_fill(q, O64, bench_garbage(O64), 0, NULL, NULL))) ||
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
static int check_sum(void) {
    return check_red(ref_sum);
}
static int check_dot(void) {
    return check_red(ref_dot);
}
static int check_scan(void) {
    kiln_status st = kiln_array_read(q, O, ho);
    if (st != KILN_OK)
        DIE(st);
    return memcmp(ho, href, n * 4) == 0;
}

static int events_ok = 1;
static int quick;       /* KILN_BENCH_QUICK: verify the warm-ups only */
static int verify_last; /* KILN_BENCH_VERIFY=last: and the last timed run */
static int warm;        /* KILN_BENCH_WARM: scramble before the warm-ups only */

/* One run: returns the device time (marker to end), wall time in *wall. */
static double run_once(const char *name, op_fn f, check_fn check, double *wall, int verify) {
    if (!warm || verify == 2)
        scramble();
    kiln_status st;
    double dev = bench_time_enqueue(q, run_op, &f, &events_ok, wall, &st);
    if (st != KILN_OK)
        DIE(st);
    if (verify && !check()) {
        fprintf(stderr, "bench_algo: %s gave a WRONG result (n = %zu)\n", name, n);
        exit(1);
    }
    return dev;
}

/* Median of runs (<= RUNS) timed runs after 2 verified warm-ups. */
static double timeit_runs(const char *name, op_fn f, check_fn check, double *wall_median,
                          int runs) {
    double t[RUNS], w[RUNS], wall;
    for (int k = 0; k < 2; k++)
        run_once(name, f, check, &wall, 2); /* 2: a warm-up */
    for (int k = 0; k < runs; k++)
        t[k] = run_once(name, f, check, &w[k], verify_last ? k == runs - 1 : !quick);
    qsort(t, (size_t)runs, sizeof t[0], bench_cmp_double);
    qsort(w, (size_t)runs, sizeof w[0], bench_cmp_double);
    *wall_median = w[runs / 2];
    return t[runs / 2];
}

static double timeit(const char *name, op_fn f, check_fn check, double *wall_median) {
    return timeit_runs(name, f, check, wall_median, RUNS);
}

/* Host data for indices [0, count) and the references for its first n
 * elements (the data at index i depends on i only, so the first n elements
 * of a larger fill are the data of size n). */
static void fill_host(size_t count) {
    unsigned acc = 0;
    for (size_t i = 0; i < count; i++) {
        hx[i] = (float)(i % 1000) * 0.001f;
        hy[i] = 1.0f + (float)(i % 3) * 0.5f;
        hi[i] = (int)(i % 7);
        acc += (unsigned)hi[i];
        href[i] = (int)acc;
    }
}
static void set_refs(void) {
    ref_sum = ref_dot = 0;
    for (size_t i = 0; i < n; i++) {
        ref_sum += hx[i];
        ref_dot += (double)hx[i] * hy[i];
    }
}

#define SWEEP_OPS 5
#define SWEEP_MAX_SIZES 40
#define ROUNDTRIP_MAX ((size_t)1 << 16) /* sizes that get a round trip */

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* What a program waits for a small op: the call (no event, no marker)
 * and kiln_queue_finish, host wall time, median of RUNS after 2 warm-ups;
 * the result checked once after the last (issue 16 compares it with a raw
 * launch + synchronise: bench_launch_cuda's round trip). */
static double roundtrip(const char *name, op_fn f, check_fn check) {
    double t[RUNS];
    kiln_status st;
    for (int k = -2; k < RUNS; k++) {
        double t0 = now_s();
        if ((st = f(NULL)) || (st = kiln_queue_finish(q)))
            DIE(st);
        if (k >= 0)
            t[k] = now_s() - t0;
    }
    if (!check()) {
        fprintf(stderr, "bench_algo: %s gave a WRONG result (n = %zu)\n", name, n);
        exit(1);
    }
    qsort(t, RUNS, sizeof t[0], bench_cmp_double);
    return t[RUNS / 2];
}

/* The host inputs, outputs and references for m items, filled; 0 (with a
 * message) when out of memory. */
static int host_arrays(size_t m) {
    hx = malloc(m * 4);
    hy = malloc(m * 4);
    hz = malloc(m * 4);
    hi = malloc(m * 4);
    ho = malloc(m * 4);
    href = malloc(m * 4);
    if (!hx || !hy || !hz || !hi || !ho || !href) {
        fprintf(stderr, "bench_algo: out of host memory\n");
        return 0;
    }
    fill_host(m);
    return 1;
}

static int sweep(kiln_context *c, const kiln_device_info *info, const char *arg) {
    size_t max_n = info->type & KILN_DEVICE_GPU ? (size_t)1 << 28 : (size_t)1 << 24;
    if (arg)
        max_n = (size_t)strtoull(arg, NULL, 0);
    if (max_n < 1)
        max_n = 1;
    /* X, Y, Z, I, O, the copy source and destination: 7 x 4 bytes each */
    while (
        max_n > 1024 &&
        ((info->global_mem_bytes && 28.0 * (double)max_n > 0.8 * (double)info->global_mem_bytes) ||
         (info->max_alloc_bytes && 4.0 * (double)max_n > (double)info->max_alloc_bytes))) {
        max_n /= 4;
        fprintf(stderr,
                "bench_algo: max_n lowered to %zu to fit the device "
                "memory\n",
                max_n);
    }
    size_t sizes[SWEEP_MAX_SIZES];
    int ns = 0;
    for (size_t m = 1024; m <= max_n && ns < SWEEP_MAX_SIZES - 1; m *= 4)
        sizes[ns++] = m;
    if (ns == 0 || sizes[ns - 1] != max_n)
        sizes[ns++] = max_n;
    if (!host_arrays(max_n))
        return 1;
    size_t one = 1;
    kiln_status st;
    if ((st = kiln_array_from_host(c, KILN_FLOAT32, 1, &max_n, hx, &Xf)) ||
        (st = kiln_array_from_host(c, KILN_FLOAT32, 1, &max_n, hy, &Yf)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &max_n, &Zf)) ||
        (st = kiln_array_from_host(c, KILN_INT32, 1, &max_n, hi, &If)) ||
        (st = kiln_array_empty(c, KILN_INT32, 1, &max_n, &Of)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &one, &R)) ||
        (st = kiln_buffer_create(c, max_n * 4, 0, hx, &cb_src)) ||
        (st = kiln_buffer_create(c, max_n * 4, 0, NULL, &cb_dst)))
        DIE(st);
    static const char *names[SWEEP_OPS] = { "copy", "axpy", "sum", "dot", "scan_int32" };
    static const op_fn fns[SWEEP_OPS] = { op_copy, op_axpy, op_sum, op_dot, op_scan };
    static const check_fn checks[SWEEP_OPS] = { check_copy, check_axpy, check_sum, check_dot,
                                                check_scan };
    static double res[SWEEP_MAX_SIZES][SWEEP_OPS][3];
    const char *only = getenv("KILN_BENCH_OPS");
    printf("device: %s (%s), sweep n = %zu .. %zu\n", info->name, info->id, sizes[0],
           sizes[ns - 1]);
    fflush(stdout);
    for (int s = 0; s < ns; s++) {
        n = sizes[s];
        kiln_slice sl = KILN_SLICE(0, (ptrdiff_t)n, 1);
        if ((st = kiln_array_view(Xf, &sl, &X)) || (st = kiln_array_view(Yf, &sl, &Y)) ||
            (st = kiln_array_view(Zf, &sl, &Z)) || (st = kiln_array_view(If, &sl, &I)) ||
            (st = kiln_array_view(Of, &sl, &O)))
            DIE(st);
        set_refs();
        int runs = n <= (size_t)1 << 24 ? RUNS : 5;
        for (int k = 0; k < SWEEP_OPS; k++) {
            res[s][k][0] = res[s][k][1] = res[s][k][2] = -1;
            if (k && only && !bench_op_listed(only, names[k]))
                continue;
            double w;
            double t = timeit_runs(names[k], fns[k], checks[k], &w, runs);
            res[s][k][0] = t;
            res[s][k][1] = w;
            printf("SWEEP %s %zu %.9f %.9f\n", names[k], n, t, w);
            if (n <= ROUNDTRIP_MAX) {
                res[s][k][2] = roundtrip(names[k], fns[k], checks[k]);
                printf("ROUNDTRIP %s %zu %.9f\n", names[k], n, res[s][k][2]);
            }
            fflush(stdout);
        }
        kiln_array_release(X);
        kiln_array_release(Y);
        kiln_array_release(Z);
        kiln_array_release(I);
        kiln_array_release(O);
        X = Y = Z = I = O = NULL;
    }
    printf("\ntime per op in us, device (marker to end) / host wall "
           "(enqueue to completion)\n");
    printf("%-10s", "n");
    for (int k = 0; k < SWEEP_OPS; k++)
        printf(" %21s", names[k]);
    printf("\n");
    for (int s = 0; s < ns; s++) {
        printf("%-10zu", sizes[s]);
        for (int k = 0; k < SWEEP_OPS; k++) {
            char cell[64] = "-";
            if (res[s][k][0] >= 0)
                snprintf(cell, sizeof cell, "%.1f / %.1f", res[s][k][0] * 1e6, res[s][k][1] * 1e6);
            printf(" %21s", cell);
        }
        printf("\n");
    }
    printf("\nround trip in us: the op (no event) + kiln_queue_finish, host "
           "wall, median of 11\n");
    printf("%-10s", "n");
    for (int k = 0; k < SWEEP_OPS; k++)
        printf(" %11s", names[k]);
    printf("\n");
    for (int s = 0; s < ns && sizes[s] <= ROUNDTRIP_MAX; s++) {
        printf("%-10zu", sizes[s]);
        for (int k = 0; k < SWEEP_OPS; k++)
            if (res[s][k][2] >= 0)
                printf(" %11.1f", res[s][k][2] * 1e6);
            else
                printf(" %11s", "-");
        printf("\n");
    }
    printf(verify_last ? "timing: %s; warm-ups and the last timed run verified "
                         "(KILN_BENCH_VERIFY=last)\n"
           : quick     ? "timing: %s; warm-up runs verified (KILN_BENCH_QUICK)\n"
                       : "timing: %s; every run verified\n",
           events_ok ? "device events (marker to end), median of 11 "
                       "(of 5 above n = 2^24)"
                     : "host wall time (profiling events unavailable), "
                       "median of 11 (of 5 above n = 2^24)");
    kiln_array_release(Xf);
    kiln_array_release(Yf);
    kiln_array_release(Zf);
    kiln_array_release(If);
    kiln_array_release(Of);
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

static kiln_kernel *hand_axpy;
static kiln_status op_binary(kiln_event **e) {
    return kiln_array_binary_out(q, KILN_OP_ADD, Z, X, Y, 0, NULL, e);
}
static kiln_status op_hand(kiln_event **e) {
    kiln_arg a[] = { KILN_ARG_BUF(kiln_array_buffer(Z)), KILN_ARG_BUF(kiln_array_buffer(X)),
                     KILN_ARG_BUF(kiln_array_buffer(Y)), KILN_ARG_F32(2.0f),
                     KILN_ARG_I64((int64_t)n) };
    size_t g = n;
    return kiln_kernel_launch(q, hand_axpy, 1, &g, NULL, 5, a, 0, NULL, e);
}

static int enqueue_costs(kiln_context *c) {
    kiln_status st;
    n = 1024;
    size_t one = 1;
    kiln_program *p = NULL;
    if ((st = kiln_array_empty(c, KILN_FLOAT32, 1, &n, &X)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &n, &Y)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &n, &Z)) ||
        (st = kiln_array_empty(c, KILN_INT32, 1, &n, &I)) ||
        (st = kiln_array_empty(c, KILN_INT32, 1, &n, &O)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &one, &R)) ||
        (st = kiln_program_create(
             c,
             "KILN_KERNEL void hand_axpy(KILN_GLOBAL float *z, KILN_GLOBAL const float *x,\n"
             "    KILN_GLOBAL const float *y, float a, long n) {\n"
             "    long i = kiln_global_id(0); if (i < n) z[i] = a * x[i] + y[i]; }\n",
             NULL, &p)) ||
        (st = kiln_kernel_create(p, "hand_axpy", &hand_axpy)))
        DIE(st);
    static const char *const names[6] = { "axpy", "binary_add", "sum",
                                          "dot",  "scan_int32", "kernel_launch" };
    static const op_fn fns[6] = { op_axpy, op_binary, op_sum, op_dot, op_scan, op_hand };
    printf("host cost per call, n = 1024, us (enqueue only; 100 calls, then "
           "finish; median of 15 rounds)\n");
    for (int k = 0; k < 6; k++) {
        double t[15];
        for (int r = -2; r < 15; r++) {
            double t0 = now_s();
            for (int i = 0; i < 100; i++)
                if ((st = fns[k](NULL)))
                    DIE(st);
            double dt = (now_s() - t0) / 100;
            if ((st = kiln_queue_finish(q)))
                DIE(st);
            if (r >= 0)
                t[r] = dt;
        }
        qsort(t, 15, sizeof t[0], bench_cmp_double);
        printf("  %-14s %8.2f\n", names[k], t[7] * 1e6);
        printf("ENQUEUE %s %.9f\n", names[k], t[7]);
    }
    kiln_kernel_release(hand_axpy);
    kiln_program_release(p);
    return 0;
}

int main(int argc, char **argv) {
    int sweep_mode = argc > 1 && strcmp(argv[1], "--sweep") == 0;
    int enqueue_mode = argc > 1 && strcmp(argv[1], "--enqueue") == 0;
    n = argc > 1 && !sweep_mode && !enqueue_mode ? (size_t)strtoull(argv[1], NULL, 0)
                                                 : (size_t)1 << 24;
    if (!n)
        n = 1;
    quick = getenv("KILN_BENCH_QUICK") && atoi(getenv("KILN_BENCH_QUICK"));
    warm = getenv("KILN_BENCH_WARM") && atoi(getenv("KILN_BENCH_WARM"));
    verify_last = getenv("KILN_BENCH_VERIFY") && strcmp(getenv("KILN_BENCH_VERIFY"), "last") == 0;
    /* --enqueue: a plain queue, as a program that does not time would use */
    kiln_status st = kiln_queue_create_default(
        NULL, enqueue_mode ? KILN_QUEUE_IN_ORDER : KILN_QUEUE_PROFILING, &q);
    if (st != KILN_OK)
        DIE(st);
    kiln_context *c = kiln_queue_context(q);
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    if (sweep_mode)
        return sweep(c, &info, argc > 2 ? argv[2] : NULL);
    if (enqueue_mode)
        return enqueue_costs(c);
    if (!host_arrays(n))
        return 1;
    set_refs();
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
        { "axpy", op_axpy, check_axpy, 12.0 * (double)n },
        { "sum", op_sum, check_sum, 4.0 * (double)n },
        { "dot", op_dot, check_dot, 8.0 * (double)n },
        { "scan_int32", op_scan, check_scan, 8.0 * (double)n },
        { "scan_int64", op_scan64, check_scan64, 16.0 * (double)n },
    };
    printf("device: %s (%s), n = %zu\n", info.name, info.id, n);
    printf("%-12s %10s %10s %12s %10s %10s\n", "op", "ms", "GB/s", "Melem/s", "of copy", "wall ms");
    printf("%-12s %10.3f %10.2f %12.1f %9.0f%% %10.3f\n", "copy", tc * 1e3, copy_bw * 1e-9,
           (double)n / tc * 1e-6, 100.0, wc * 1e3);
    printf("RESULT copy %.9f\n", tc);
    const char *only = getenv("KILN_BENCH_OPS");
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        double w;
        int opt_in = ops[k].f == op_scan64;
        if ((only || opt_in) && !(only && bench_op_listed(only, ops[k].name)))
            continue;
        if (opt_in) {
            /* values up to 12 << 20: the sums pass 2^32 early */
            hi64 = malloc(n * 8);
            ho64 = malloc(n * 8);
            href64 = malloc(n * 8);
            if (!hi64 || !ho64 || !href64) {
                fprintf(stderr, "bench_algo: out of host memory\n");
                return 1;
            }
            int64_t acc = 0;
            for (size_t i = 0; i < n; i++) {
                hi64[i] = (int64_t)(i % 13) << 20;
                acc += hi64[i];
                href64[i] = acc;
            }
            if ((st = kiln_array_from_host(c, KILN_INT64, 1, &n, hi64, &I64)) ||
                (st = kiln_array_empty(c, KILN_INT64, 1, &n, &O64)))
                DIE(st);
        }
        double t = timeit(ops[k].name, ops[k].f, ops[k].check, &w);
        double bw = ops[k].bytes / t;
        printf("%-12s %10.3f %10.2f %12.1f %9.0f%% %10.3f\n", ops[k].name, t * 1e3, bw * 1e-9,
               (double)n / t * 1e-6, 100.0 * bw / copy_bw, w * 1e3);
        printf("RESULT %s %.9f\n", ops[k].name, t);
        printf("WALL %s %.9f\n", ops[k].name, w);
    }
    printf(verify_last ? "timing: %s; warm-ups and the last timed run verified "
                         "(KILN_BENCH_VERIFY=last)\n"
           : quick     ? "timing: %s; warm-up runs verified (KILN_BENCH_QUICK)\n"
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
    kiln_array_release(I64);
    kiln_array_release(O64);
    free(hi64);
    free(ho64);
    free(href64);
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
