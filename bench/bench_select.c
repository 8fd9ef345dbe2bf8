/* bench_select: selection against a device-to-device copy of the input's
 * bytes (the bandwidth reference).
 *   bench_select [n]        n elements (default 2^24); device: $KILN_DEVICE
 * Ops: copy_if of float32 x > 0.5 (uniform x in [0, 1): half selected),
 * unique of sorted int32 (runs of 4 on average), unique with counts, and
 * sort_unique_i32: the same keys shuffled, sorted and then made unique (a
 * kiln_array_sort_out and a kiln_array_unique_out behind it, as torch.unique,
 * cp.unique and np.unique do it in one call).
 * Prints a table and `RESULT op seconds` lines for bench/peers_select.py.
 *
 * Each figure is the median of 11 timed runs after 2 warm-up runs, timed
 * with device events (bench_timing.h): the count stays on the device (no
 * host round trip inside the timing). Every run is verified against a host
 * reference (count and items) after the outputs were overwritten with
 * garbage: a wrong fast answer makes the program fail. KILN_BENCH_QUICK=1
 * verifies the warm-ups only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"
#include "kiln.h"

#define RUNS 11
#define DIE(st)                                                                              \
    do {                                                                                     \
        fprintf(stderr, "bench_select: %s at line %d: %s\n", kiln_status_name(st), __LINE__, \
                kiln_last_error_message());                                                  \
        exit(1);                                                                             \
    } while (0)

typedef kiln_status (*op_fn)(kiln_event **e);
static kiln_status run_op(void *arg, kiln_event **e) {
    return (*(op_fn *)arg)(e);
}
typedef int (*check_fn)(void);

static kiln_queue *q;
static kiln_array *X, *Y, *K, *KS, *SK, *U, *UC, *CNT;
static kiln_buffer *cb_src, *cb_dst;
static size_t n, n_sel, n_uniq;
static float *hx, *hy, *hsel;
static int32_t *hk, *hks, *hu, *huniq;
static int64_t *hc, *hcounts;

static kiln_status op_copy(kiln_event **e) {
    return kiln_buffer_copy(q, cb_src, 0, cb_dst, 0, n * 4, 0, NULL, e);
}
static kiln_status op_copy_if(kiln_event **e) {
    return kiln_array_copy_if_out(q, Y, CNT, NULL, X, "x > 0.5f", 0, NULL, e);
}
static kiln_status op_unique(kiln_event **e) {
    return kiln_array_unique_out(q, U, NULL, CNT, NULL, K, 0, NULL, e);
}
static kiln_status op_unique_counts(kiln_event **e) {
    return kiln_array_unique_out(q, U, UC, CNT, NULL, K, 0, NULL, e);
}
/* the shuffled keys sorted into SK, then unique behind the sort's event */
static kiln_status op_sort_unique(kiln_event **e) {
    kiln_event *sorted = NULL;
    kiln_status st = kiln_array_sort_out(q, SK, NULL, KS, NULL, NULL, 0, NULL, &sorted);
    if (st == KILN_OK)
        st = kiln_array_unique_out(q, U, NULL, CNT, NULL, SK, 1, &sorted, e);
    kiln_event_release(sorted);
    return st;
}

static void scramble(void) {
    static const unsigned char ff[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    kiln_status st;
    if ((st = kiln_buffer_fill(q, cb_dst, ff, 4, 0, n * 4, 0, NULL, NULL)) ||
        (st = kiln_array_fill(q, Y, bench_garbage(Y), 0, NULL, NULL)) ||
        (st = kiln_array_fill(q, U, bench_garbage(U), 0, NULL, NULL)) ||
        (st = kiln_array_fill(q, UC, bench_garbage(UC), 0, NULL, NULL)) ||
        (st = kiln_array_fill(q, CNT, bench_garbage(CNT), 0, NULL, NULL)) ||
        (st = kiln_queue_finish(q)))
        DIE(st);
}
static int64_t read_count(void) {
    int64_t c = -1;
    kiln_status st = kiln_array_read(q, CNT, &c);
    if (st != KILN_OK)
        DIE(st);
    return c;
}
static int check_copy(void) {
    kiln_status st = kiln_buffer_read(q, cb_dst, 0, n * 4, hy);
    if (st != KILN_OK)
        DIE(st);
    return memcmp(hy, hx, n * 4) == 0;
}
static int check_copy_if(void) {
    if (read_count() != (int64_t)n_sel)
        return 0;
    kiln_status st = kiln_array_read(q, Y, hy);
    if (st != KILN_OK)
        DIE(st);
    return memcmp(hy, hsel, n_sel * 4) == 0;
}
static int check_unique_common(int counts) {
    if (read_count() != (int64_t)n_uniq)
        return 0;
    kiln_status st = kiln_array_read(q, U, hu);
    if (st == KILN_OK && counts)
        st = kiln_array_read(q, UC, hc);
    if (st != KILN_OK)
        DIE(st);
    return memcmp(hu, huniq, n_uniq * 4) == 0 && (!counts || memcmp(hc, hcounts, n_uniq * 8) == 0);
}
static int check_unique(void) {
    return check_unique_common(0);
}
static int check_unique_counts(void) {
    return check_unique_common(1);
}

static int events_ok = 1, quick;

static double run_once(const char *name, op_fn f, check_fn check, double *wall, int verify) {
    scramble();
    kiln_status st;
    double dev = bench_time_enqueue(q, run_op, &f, &events_ok, wall, &st);
    if (st != KILN_OK)
        DIE(st);
    if (verify && !check()) {
        fprintf(stderr, "bench_select: %s gave a WRONG result (n = %zu)\n", name, n);
        exit(1);
    }
    return dev;
}

static double timeit(const char *name, op_fn f, check_fn check, double *wall_median) {
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

/* xorshift64*: the same inputs every run */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
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
    hsel = malloc(n * 4);
    hk = malloc(n * 4);
    hks = malloc(n * 4);
    hu = malloc(n * 4);
    huniq = malloc(n * 4);
    hc = malloc(n * 8);
    hcounts = malloc(n * 8);
    if (!hx || !hy || !hsel || !hk || !hks || !hu || !huniq || !hc || !hcounts) {
        fprintf(stderr, "bench_select: out of host memory\n");
        return 1;
    }
    /* uniform floats in [0, 1); sorted int32 with runs of 1..7 */
    int32_t key = 0;
    for (size_t i = 0; i < n; i++) {
        hx[i] = (float)(rnd() >> 40) * (1.0f / 16777216.0f);
        if (hx[i] > 0.5f)
            hsel[n_sel++] = hx[i];
        if (i && rnd() % 4 == 0)
            key++;
        hk[i] = key;
        if (i == 0 || hk[i] != hk[i - 1]) {
            huniq[n_uniq] = key;
            hcounts[n_uniq++] = 0;
        }
        hcounts[n_uniq - 1]++;
    }
    /* the keys shuffled (Fisher-Yates) for sort_unique_i32 */
    memcpy(hks, hk, n * 4);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(rnd() % (i + 1));
        int32_t tmp = hks[i];
        hks[i] = hks[j];
        hks[j] = tmp;
    }
    size_t one = 1;
    if ((st = kiln_array_from_host(c, KILN_FLOAT32, 1, &n, hx, &X)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &n, &Y)) ||
        (st = kiln_array_from_host(c, KILN_INT32, 1, &n, hk, &K)) ||
        (st = kiln_array_from_host(c, KILN_INT32, 1, &n, hks, &KS)) ||
        (st = kiln_array_empty(c, KILN_INT32, 1, &n, &SK)) ||
        (st = kiln_array_empty(c, KILN_INT32, 1, &n, &U)) ||
        (st = kiln_array_empty(c, KILN_INT64, 1, &n, &UC)) ||
        (st = kiln_array_empty(c, KILN_INT64, 1, &one, &CNT)) ||
        (st = kiln_buffer_create(c, n * 4, 0, hx, &cb_src)) ||
        (st = kiln_buffer_create(c, n * 4, 0, NULL, &cb_dst)))
        DIE(st);
    double wc;
    double tc = timeit("copy", op_copy, check_copy, &wc);
    double copy_bw = 2.0 * 4 * (double)n / tc;
    /* bytes: the input read once, the kept items (and counts) written */
    struct {
        const char *name;
        op_fn f;
        check_fn check;
        double bytes;
    } ops[] = {
        { "copy_if_f32", op_copy_if, check_copy_if, 4.0 * (double)n + 4.0 * (double)n_sel },
        { "unique_i32", op_unique, check_unique, 4.0 * (double)n + 4.0 * (double)n_uniq },
        { "unique_counts_i32", op_unique_counts, check_unique_counts,
          4.0 * (double)n + 12.0 * (double)n_uniq },
        /* bytes as unique's: the sort's passes are not counted */
        { "sort_unique_i32", op_sort_unique, check_unique, 4.0 * (double)n + 4.0 * (double)n_uniq },
    };
    printf("device: %s (%s), n = %zu, selected %zu, unique %zu\n", info.name, info.id, n, n_sel,
           n_uniq);
    printf("%-18s %10s %10s %12s %10s %10s\n", "op", "ms", "GB/s", "Melem/s", "of copy", "wall ms");
    printf("%-18s %10.3f %10.2f %12.1f %9.0f%% %10.3f\n", "copy", tc * 1e3, copy_bw * 1e-9,
           (double)n / tc * 1e-6, 100.0, wc * 1e3);
    printf("RESULT copy %.9f\n", tc);
    const char *only = getenv("KILN_BENCH_OPS");
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        double w;
        if (only && !bench_op_listed(only, ops[k].name))
            continue;
        double t = timeit(ops[k].name, ops[k].f, ops[k].check, &w);
        double bw = ops[k].bytes / t;
        printf("%-18s %10.3f %10.2f %12.1f %9.0f%% %10.3f\n", ops[k].name, t * 1e3, bw * 1e-9,
               (double)n / t * 1e-6, 100.0 * bw / copy_bw, w * 1e3);
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
    kiln_array_release(K);
    kiln_array_release(KS);
    kiln_array_release(SK);
    kiln_array_release(U);
    kiln_array_release(UC);
    kiln_array_release(CNT);
    kiln_buffer_release(cb_src);
    kiln_buffer_release(cb_dst);
    kiln_queue_release(q);
    free(hx);
    free(hy);
    free(hsel);
    free(hk);
    free(hks);
    free(hu);
    free(huniq);
    free(hc);
    free(hcounts);
    return 0;
}
