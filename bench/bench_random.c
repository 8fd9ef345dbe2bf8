/* bench_random: kiln_rng fills (uniform and normal float32, Philox4x32-10)
 * against a fill of the same bytes (kiln_buffer_fill: a write-only kernel,
 * the floor) on the device of $KILN_DEVICE.
 *   bench_random [n]        n elements (default 2^24)
 * Prints a table and `RESULT op seconds` lines; "of fill" is the fraction of
 * the fill's write bandwidth reached (fill time / op time).
 *
 * Each figure is the median of 11 timed runs after 2 warm-up runs, timed
 * with device events on a profiling queue (marker just before the fill to
 * the end of the fill; host wall time if the device has no profiling).
 * Every run is verified: the warm-ups element by element against the host
 * reference (kiln_rng_words_host; above 2^24 elements at 2^20 spread
 * indices), each timed run at 4096 spread indices;
 * a wrong fast answer makes the program fail. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_timing.h"
#include "kiln.h"

#define RUNS 11
#define DIE(st)                                                                              \
    do {                                                                                     \
        fprintf(stderr, "bench_random: %s at line %d: %s\n", kiln_status_name(st), __LINE__, \
                kiln_last_error_message());                                                  \
        exit(1);                                                                             \
    } while (0)

static kiln_queue *q;
static kiln_array *X;
static kiln_rng *rng;
static size_t n;
static float *host;
static uint32_t *words;
static int events_ok = 1;

enum { OP_FILL, OP_UNIFORM, OP_NORMAL };

static kiln_status enqueue(int op, kiln_event **e) {
    static const float pattern = 0.25f;
    if (op == OP_FILL)
        return kiln_buffer_fill(q, kiln_array_buffer(X), &pattern, 4, 0, n * 4, 0, NULL, e);
    if (op == OP_UNIFORM)
        return kiln_rng_uniform(q, rng, X, 0, NULL, e);
    return kiln_rng_normal(q, rng, X, 0.0, 1.0, 0, NULL, e);
}

/* bench_time_enqueue's callback: arg points at the op. */
static kiln_status run_op(void *arg, kiln_event **e) {
    return enqueue(*(int *)arg, e);
}

/* Checks element i of the fill that started at word offset start: a
 * uniform reads word start + i, a normal the Box-Muller pair of words at
 * (start + i) & ~1 (cos for an even position, sin for an odd one). words,
 * when set, holds the stream from word base on. */
static uint64_t base;
static int element_ok(int op, size_t i, uint64_t start) {
    uint32_t w[2];
    if (op == OP_FILL)
        return host[i] == 0.25f;
    uint64_t p = start + i, first = op == OP_UNIFORM ? p : p & ~(uint64_t)1;
    unsigned k = op == OP_UNIFORM ? 1 : 2;
    if (words)
        w[0] = words[first - base], w[1] = k == 2 ? words[first - base + 1] : 0;
    else if (kiln_rng_words_host(KILN_RNG_PHILOX4X32_10, 1234, 0, first, k, w) != KILN_OK)
        return 0;
    if (op == OP_UNIFORM)
        return host[i] == (float)(w[0] >> 8) * 0x1p-24f;
    double u1 = (double)((w[0] >> 8) + 1) * 0x1p-24, t = 2 * M_PI * (double)(w[1] >> 8) * 0x1p-24;
    double z = sqrt(-2 * log(u1)) * (p & 1 ? sin(t) : cos(t));
    return fabs(host[i] - z) <= 1e-5 * (1 + fabs(z));
}

/* Above this many elements a warm-up is checked at 2^20 spread indices
 * rather than every one: the host reference of 2^28 normals alone took
 * longer than the whole benchmark's time limit. */
#define FULL_CHECK_MAX ((size_t)1 << 24)

static void verify(int op, uint64_t start, int full) {
    kiln_status st = kiln_array_read(q, X, host);
    if (st != KILN_OK)
        DIE(st);
    words = NULL;
    if (full && n > FULL_CHECK_MAX) {
        full = 0;
        for (size_t i = 0; i < n; i += n >> 20)
            if (!element_ok(op, i, start)) {
                fprintf(stderr, "bench_random: op %d WRONG at %zu (n = %zu)\n", op, i, n);
                exit(1);
            }
    }
    size_t step = full ? 1 : (n / 4096 ? n / 4096 : 1), bad = 0;
    uint32_t *all = NULL;
    if (full && op != OP_FILL) {
        base = start & ~(uint64_t)1;
        all = malloc((n + 2) * 4);
        if (!all || kiln_rng_words_host(KILN_RNG_PHILOX4X32_10, 1234, 0, base, n + 2, all))
            DIE(KILN_ERROR_OUT_OF_HOST_MEMORY);
        words = all;
    }
    for (size_t i = 0; i < n; i += step)
        bad += !element_ok(op, i, start);
    bad += !element_ok(op, n - 1, start);
    words = NULL;
    free(all);
    if (bad) {
        fprintf(stderr, "bench_random: op %d gave %zu WRONG elements (n = %zu)\n", op, bad, n);
        exit(1);
    }
}

static double run_once(int op, int full, double *wall) {
    memset(host, 0xff, n * 4);
    uint64_t start = 0;
    kiln_rng_get_offset(rng, &start);
    kiln_status st;
    double dev = bench_time_enqueue(q, run_op, &op, &events_ok, wall, &st);
    if (st != KILN_OK)
        DIE(st);
    verify(op, start, full);
    return dev;
}

/* KILN_BENCH_VERIFY=last (as bench_algo): the timed runs follow each other
 * as the peers' do and only the last is checked; reading back and checking
 * every run idles the GPU between them, and a short op timed right after
 * an idle gap runs slower than back to back. */
static int verify_last;

static double timeit(int op, double *wall_median) {
    double t[RUNS], w[RUNS], wall;
    run_once(op, 1, &wall);
    run_once(op, 1, &wall);
    for (int r = 0; r < RUNS; r++) {
        if (verify_last && r < RUNS - 1) {
            kiln_status st;
            t[r] = bench_time_enqueue(q, run_op, &op, &events_ok, &w[r], &st);
            if (st != KILN_OK)
                DIE(st);
            continue;
        }
        t[r] = run_once(op, 0, &w[r]);
    }
    qsort(t, RUNS, sizeof *t, bench_cmp_double);
    qsort(w, RUNS, sizeof *w, bench_cmp_double);
    *wall_median = w[RUNS / 2];
    return t[RUNS / 2];
}

int main(int argc, char **argv) {
    n = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)1 << 24;
    verify_last = getenv("KILN_BENCH_VERIFY") && strcmp(getenv("KILN_BENCH_VERIFY"), "last") == 0;
    if (n < 1) {
        fprintf(stderr, "bench_random: n must be >= 1\n");
        return 1;
    }
    kiln_status st =
        kiln_queue_create_default(NULL, KILN_QUEUE_IN_ORDER | KILN_QUEUE_PROFILING, &q);
    if (st != KILN_OK)
        DIE(st);
    kiln_rng_desc d = KILN_RNG_DESC(.seed = 1234);
    if ((st = kiln_rng_create(&d, &rng)) != KILN_OK ||
        (st = kiln_array_empty(kiln_queue_context(q), KILN_FLOAT32, 1, &n, &X)) != KILN_OK)
        DIE(st);
    host = malloc(n * 4);
    if (!host)
        DIE(KILN_ERROR_OUT_OF_HOST_MEMORY);
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    printf("bench_random: n = %zu float32 (%.1f MiB) on %s\n", n, n * 4.0 / 1048576, info.name);
    static const char *const names[3] = { "fill (floor)", "uniform f32", "normal f32" };
    static const char *const keys[3] = { "fill_f32", "uniform_f32", "normal_f32" };
    double t[3], wall[3];
    for (int op = 0; op < 3; op++)
        t[op] = timeit(op, &wall[op]);
    printf("%-14s %12s %12s %10s %10s\n", "op", "device ms", "wall ms", "GB/s", "of fill");
    for (int op = 0; op < 3; op++)
        printf("%-14s %12.3f %12.3f %10.1f %9.0f%%\n", names[op], t[op] * 1e3, wall[op] * 1e3,
               n * 4.0 / t[op] * 1e-9, 100 * t[0] / t[op]);
    printf("(%s, median of %d; %s)\n",
           events_ok ? "device events" : "host wall time (no profiling events)", RUNS,
           verify_last ? "warm-ups and the last run verified (KILN_BENCH_VERIFY=last)"
                       : "every run verified");
    for (int op = 0; op < 3; op++)
        printf("RESULT %s %.6e\n", keys[op], t[op]);
    kiln_array_release(X);
    kiln_rng_release(rng);
    kiln_queue_release(q);
    free(host);
    return 0;
}
