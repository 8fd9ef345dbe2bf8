/* bench_toolkit: take, put, put with atomic add, astype and where against
 * a device-to-device copy as the bandwidth reference (issue 12).
 *   bench_toolkit [n]       n elements (default 2^24); device: $KILN_DEVICE
 * Prints a table and `RESULT op seconds` lines for bench/peers_toolkit.py.
 *
 * Indices in KILN_INDEX_CLIP mode (torch.index_select and CuPy's take
 * check bounds too).
 *   take     out[k] = x[idx[k]], float32, n random int64 indices in [0, n)
 *   put      y[idx[k]] = x[k], float32, idx a random permutation
 *   put_add  y[idx[k]] += x[k] (KILN_PUT_ADD), float32, n random indices
 *            into n/16 targets (repeats: atomic contention)
 *   astype   float32 -> float16
 *   where    out = c ? x : y, uint8 c, float32 x and y
 * Timing as bench_algo (bench_timing.h): median of 11 device-event timings
 * after 2 warm-ups; the warm-ups and every timed run are verified against
 * a host reference (put_add is checked on the warm-ups only: it adds on
 * top of the last run's result); KILN_BENCH_QUICK=1 verifies the last
 * timed run only (every output is still overwritten before each run).
 * KILN_BENCH_OPS=take,astype,... runs a subset (copy always runs). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"
#include "kiln.h"

#define RUNS 11
#define DIE(st)                                                                               \
    do {                                                                                      \
        fprintf(stderr, "bench_toolkit: %s at line %d: %s\n", kiln_status_name(st), __LINE__, \
                kiln_last_error_message());                                                   \
        exit(1);                                                                              \
    } while (0)

static kiln_queue *q;
static size_t n, targets;
static kiln_array *X, *Y, *O, *H, *C, *IDX, *PERM, *ADDIDX, *ACC;
static kiln_buffer *cb_src, *cb_dst;
static float *hx, *hy, *ho;
static int64_t *hidx, *hperm, *hadd;
static uint8_t *hc;
static uint16_t *hh;
static float *half_value; /* [65536]: the value of each float16 bit pattern */

typedef kiln_status (*op_fn)(kiln_event **e);
typedef int (*check_fn)(void);
static kiln_status run_op(void *arg, kiln_event **e) {
    return (*(op_fn *)arg)(e);
}

static kiln_status op_copy(kiln_event **e) {
    return kiln_buffer_copy(q, cb_src, 0, cb_dst, 0, n * 4, 0, NULL, e);
}
static kiln_status op_take(kiln_event **e) {
    return kiln_array_take_out(q, O, X, IDX, KILN_INDEX_CLIP, 0, NULL, e);
}
static kiln_status op_put(kiln_event **e) {
    return kiln_array_put(q, O, PERM, X, KILN_INDEX_CLIP, KILN_PUT_ASSIGN, 0, NULL, e);
}
static kiln_status op_put_add(kiln_event **e) {
    static const float zero = 0;
    kiln_status st = kiln_array_fill(q, ACC, KILN_ARG_F32(zero), 0, NULL, NULL);
    if (st != KILN_OK)
        return st;
    return kiln_array_put(q, ACC, ADDIDX, X, KILN_INDEX_CLIP, KILN_PUT_ADD, 0, NULL, e);
}
static kiln_status op_astype(kiln_event **e) {
    return kiln_array_astype_out(q, H, X, 0, NULL, e);
}
static kiln_status op_where(kiln_event **e) {
    return kiln_array_where_out(q, O, C, X, Y, 0, NULL, e);
}

static void read_o(void) {
    kiln_status st = kiln_array_read(q, O, ho);
    if (st != KILN_OK)
        DIE(st);
}
static int check_copy(void) {
    kiln_status st = kiln_buffer_read(q, cb_dst, 0, n * 4, ho);
    if (st != KILN_OK)
        DIE(st);
    return memcmp(ho, hx, n * 4) == 0;
}
static int check_take(void) {
    read_o();
    for (size_t i = 0; i < n; i++)
        if (ho[i] != hx[hidx[i]])
            return 0;
    return 1;
}
static int check_put(void) {
    read_o();
    for (size_t i = 0; i < n; i++)
        if (ho[hperm[i]] != hx[i])
            return 0;
    return 1;
}
static int check_put_add(void) {
    float *acc = calloc(targets, sizeof *acc), *got = malloc(targets * 4);
    kiln_status st = kiln_array_read(q, ACC, got);
    if (st != KILN_OK)
        DIE(st);
    for (size_t i = 0; i < n; i++)
        acc[hadd[i]] += hx[i];
    int ok = 1;
    for (size_t t = 0; t < targets && ok; t++) /* order of adds differs */
        ok = fabsf(got[t] - acc[t]) <= 1e-3f * fabsf(acc[t]) + 1e-3f;
    free(acc);
    free(got);
    return ok;
}
static int check_astype(void) {
    kiln_status st = kiln_array_read(q, H, hh);
    if (st != KILN_OK)
        DIE(st);
    /* the inputs are multiples of 1/1024 below 1: exact in half */
    for (size_t i = 0; i < n; i++)
        if (half_value[hh[i]] != hx[i])
            return 0;
    return 1;
}

/* The values of the float16 bit patterns that can occur here (positive,
 * finite), decoded once: at 2^28 items a decode per item and run made
 * the check take longer than everything else. */
static void make_half_values(void) {
    half_value = malloc(65536 * sizeof *half_value);
    if (!half_value) {
        fprintf(stderr, "bench_toolkit: out of host memory\n");
        exit(1);
    }
    for (unsigned h = 0; h < 65536; h++) {
        int e = (h >> 10) & 31, m = h & 1023;
        half_value[h] = (h & 0x8000u) || e == 31 ? -1.0f /* never an input */
                        : e                      ? ldexpf((float)(1024 + m), e - 25)
                                                 : ldexpf((float)m, -24);
    }
}
static int check_where(void) {
    read_o();
    for (size_t i = 0; i < n; i++)
        if (ho[i] != (hc[i] ? hx[i] : hy[i]))
            return 0;
    return 1;
}

static int events_ok = 1;
/* KILN_BENCH_QUICK=1: check the warm-ups and the last timed run only (at
 * 2^28 the per-run host checks of take and put took minutes) */
static int quick;

static double run_once(const char *name, op_fn f, check_fn check, double *wall, int verify) {
    static const unsigned char ff[4] = { 0xff, 0xff, 0xff, 0xff };
    kiln_status st;
    if ((st = kiln_array_fill(q, O, bench_garbage(O), 0, NULL, NULL)) ||
        (st = kiln_array_fill(q, H, bench_garbage(H), 0, NULL, NULL)) ||
        (st = kiln_buffer_fill(q, cb_dst, ff, 4, 0, n * 4, 0, NULL, NULL)) ||
        (st = kiln_queue_finish(q)))
        DIE(st);
    double dev = bench_time_enqueue(q, run_op, &f, &events_ok, wall, &st);
    if (st != KILN_OK)
        DIE(st);
    if (verify && !check()) {
        fprintf(stderr, "bench_toolkit: %s gave a WRONG result (n = %zu)\n", name, n);
        exit(1);
    }
    return dev;
}

static double timeit(const char *name, op_fn f, check_fn check, int verify_all,
                     double *wall_median) {
    double t[RUNS], w[RUNS], wall;
    for (int k = 0; k < 2; k++)
        run_once(name, f, check, &wall, 1);
    for (int k = 0; k < RUNS; k++)
        t[k] = run_once(name, f, check, &w[k], verify_all && (!quick || k == RUNS - 1));
    qsort(t, RUNS, sizeof t[0], bench_cmp_double);
    qsort(w, RUNS, sizeof w[0], bench_cmp_double);
    *wall_median = w[RUNS / 2];
    return t[RUNS / 2];
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next_rand(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717u;
}

int main(int argc, char **argv) {
    n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : (size_t)1 << 24;
    if (!n)
        n = 1;
    targets = n / 16 ? n / 16 : 1;
    kiln_status st = kiln_queue_create_default(NULL, KILN_QUEUE_PROFILING, &q);
    if (st != KILN_OK)
        DIE(st);
    kiln_context *c = kiln_queue_context(q);
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    /* the index arrays (a 2^28 shuffle alone takes half a minute) only
     * when an op that uses them runs */
    const char *only = getenv("KILN_BENCH_OPS");
    quick = getenv("KILN_BENCH_QUICK") && atoi(getenv("KILN_BENCH_QUICK"));
    int need_idx = !only || strstr(only, "take") || strstr(only, "put");
    size_t ni = need_idx ? n : 0;
    size_t np = !only || strstr(only, "put") ? ni : 0; /* the shuffle */
    hx = malloc(n * 4);
    hy = malloc(n * 4);
    ho = malloc(n * 4);
    hh = malloc(n * 2);
    hc = malloc(n);
    hidx = malloc(ni * 8 + 8);
    hperm = malloc(ni * 8 + 8);
    hadd = malloc(ni * 8 + 8);
    if (!hx || !hy || !ho || !hh || !hc || !hidx || !hperm || !hadd) {
        fprintf(stderr, "bench_toolkit: out of host memory\n");
        return 1;
    }
    make_half_values();
    for (size_t i = 0; i < n; i++) {
        hx[i] = (float)(i % 1024) / 1024.0f;
        hy[i] = -(float)(i % 7);
        hc[i] = (uint8_t)(next_rand() & 1);
    }
    for (size_t i = 0; i < ni; i++) {
        hidx[i] = (int64_t)(next_rand() % n);
        hadd[i] = (int64_t)(next_rand() % targets);
        hperm[i] = (int64_t)i;
    }
    for (size_t i = np; i-- > 1;) { /* Fisher-Yates */
        size_t j = (size_t)(next_rand() % (i + 1));
        int64_t t = hperm[i];
        hperm[i] = hperm[j];
        hperm[j] = t;
    }
    if ((st = kiln_array_from_host(c, KILN_FLOAT32, 1, &n, hx, &X)) ||
        (st = kiln_array_from_host(c, KILN_FLOAT32, 1, &n, hy, &Y)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &n, &O)) ||
        (st = kiln_array_empty(c, KILN_FLOAT16, 1, &n, &H)) ||
        (st = kiln_array_from_host(c, KILN_UINT8, 1, &n, hc, &C)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &targets, &ACC)) ||
        (st = kiln_buffer_create(c, n * 4, 0, hx, &cb_src)) ||
        (st = kiln_buffer_create(c, n * 4, 0, NULL, &cb_dst)))
        DIE(st);
    if (need_idx && ((st = kiln_array_from_host(c, KILN_INT64, 1, &n, hidx, &IDX)) ||
                     (st = kiln_array_from_host(c, KILN_INT64, 1, &n, hperm, &PERM)) ||
                     (st = kiln_array_from_host(c, KILN_INT64, 1, &n, hadd, &ADDIDX))))
        DIE(st);
    double wc;
    double tc = timeit("copy", op_copy, check_copy, 1, &wc);
    double copy_bw = 2.0 * 4 * (double)n / tc;
    struct {
        const char *name;
        op_fn f;
        check_fn check;
        int verify_all;
        double bytes;
    } ops[] = {
        { "take", op_take, check_take, 1, 16.0 * (double)n },
        { "put", op_put, check_put, 1, 16.0 * (double)n },
        { "put_add", op_put_add, check_put_add, 0, 12.0 * (double)n },
        { "astype", op_astype, check_astype, 1, 6.0 * (double)n },
        { "where", op_where, check_where, 1, 13.0 * (double)n },
    };
    printf("device: %s (%s), n = %zu\n", info.name, info.id, n);
    printf("%-12s %10s %10s %12s %10s %10s\n", "op", "ms", "GB/s", "Melem/s", "of copy", "wall ms");
    printf("%-12s %10.3f %10.2f %12.1f %9.0f%% %10.3f\n", "copy", tc * 1e3, copy_bw * 1e-9,
           (double)n / tc * 1e-6, 100.0, wc * 1e3);
    printf("RESULT copy %.9f\n", tc);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        double w;
        if (only && !bench_op_listed(only, ops[k].name))
            continue;
        double t = timeit(ops[k].name, ops[k].f, ops[k].check, ops[k].verify_all, &w);
        double bw = ops[k].bytes / t;
        printf("%-12s %10.3f %10.2f %12.1f %9.0f%% %10.3f\n", ops[k].name, t * 1e3, bw * 1e-9,
               (double)n / t * 1e-6, 100.0 * bw / copy_bw, w * 1e3);
        printf("RESULT %s %.9f\n", ops[k].name, t);
        printf("WALL %s %.9f\n", ops[k].name, w);
    }
    printf("timing: %s\n", events_ok ? "device events (marker to end), median of 11"
                                     : "host wall time (profiling events unavailable), "
                                       "median of 11");
    kiln_array *all[] = { X, Y, O, H, C, IDX, PERM, ADDIDX, ACC };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        kiln_array_release(all[k]);
    kiln_buffer_release(cb_src);
    kiln_buffer_release(cb_dst);
    kiln_queue_release(q);
    free(hx);
    free(hy);
    free(ho);
    free(hh);
    free(hc);
    free(hidx);
    free(hperm);
    free(hadd);
    free(half_value);
    return 0;
}
