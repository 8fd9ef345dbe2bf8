/* bench_sort: radix sort of int32 keys, argsort of int32 keys with int64
 * indices, and sort of int64 keys (n/2 of them, as the 2^27),
 * against a device-to-device copy of the int32 keys.
 *   bench_sort [n]          n elements (default 2^24); device: $KILN_DEVICE
 * Prints a table and `RESULT op seconds` lines for bench/peers_sort.py.
 *
 * Each figure is the median of 11 timed runs after 2 warm-up runs, timed
 * with device events (a marker just before the sort to the end of its last
 * command). Keys are uniform random bits. The sorts are out of place (the
 * input is untouched, so every run sorts the same data). The first warm-up
 * and the last timed run are verified on the host (sorted, the same
 * multiset by a checksum; argsort: a permutation whose keys are sorted and
 * stable); a wrong answer makes the program fail. KILN_BENCH_OPS:
 * comma-separated subset of sort_int32,argsort_int32,sort_int64. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"
#include "kiln.h"

#define RUNS 11
#define DIE(st)                                                                            \
    do {                                                                                   \
        fprintf(stderr, "bench_sort: %s at line %d: %s\n", kiln_status_name(st), __LINE__, \
                kiln_last_error_message());                                                \
        exit(1);                                                                           \
    } while (0)

static kiln_queue *q;
static kiln_array *K32, *O32, *K64, *O64, *IDX;
static kiln_buffer *cb_src, *cb_dst;
static size_t n, n64;
static int32_t *h32, *r32;
static int64_t *h64, *r64, *ridx;
static uint64_t sum32, sum64;

typedef kiln_status (*op_fn)(kiln_event **e);
static kiln_status run_op(void *arg, kiln_event **e) {
    return (*(op_fn *)arg)(e);
}

static kiln_status op_copy(kiln_event **e) {
    return kiln_buffer_copy(q, cb_src, 0, cb_dst, 0, n * 4, 0, NULL, e);
}
static kiln_status op_sort32(kiln_event **e) {
    return kiln_array_sort_out(q, O32, NULL, K32, NULL, NULL, 0, NULL, e);
}
static kiln_status op_argsort(kiln_event **e) {
    return kiln_array_argsort_out(q, IDX, K32, NULL, 0, NULL, e);
}
static kiln_status op_sort64(kiln_event **e) {
    return kiln_array_sort_out(q, O64, NULL, K64, NULL, NULL, 0, NULL, e);
}

static int check_none(void) {
    return 1;
}
static int check_sort32(void) {
    kiln_status st = kiln_array_read(q, O32, r32);
    if (st != KILN_OK)
        DIE(st);
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        s += (uint32_t)r32[i];
        if (i && r32[i] < r32[i - 1])
            return 0;
    }
    return s == sum32;
}
static int check_sort64(void) {
    kiln_status st = kiln_array_read(q, O64, r64);
    if (st != KILN_OK)
        DIE(st);
    uint64_t s = 0;
    for (size_t i = 0; i < n64; i++) {
        s += (uint64_t)r64[i];
        if (i && r64[i] < r64[i - 1])
            return 0;
    }
    return s == sum64;
}
static int check_argsort(void) {
    kiln_status st = kiln_array_read(q, IDX, ridx);
    if (st != KILN_OK)
        DIE(st);
    unsigned char *seen = calloc(n, 1);
    int ok = seen != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        int64_t j = ridx[i];
        ok = j >= 0 && (size_t)j < n && !seen[j];
        if (ok)
            seen[j] = 1;
        if (ok && i) {
            int32_t a = h32[ridx[i - 1]], b = h32[j];
            ok = a < b || (a == b && ridx[i - 1] < j);
        }
    }
    free(seen);
    return ok;
}

static int events_ok = 1;

static double timeit(const char *name, op_fn f, int (*check)(void), double *wall) {
    double t[RUNS], w[RUNS];
    for (int r = 0; r < RUNS + 2; r++) {
        kiln_status st;
        double wl;
        double d = bench_time_enqueue(q, run_op, &f, &events_ok, &wl, &st);
        if (st != KILN_OK)
            DIE(st);
        if ((r == 0 || r == RUNS + 1) && !check()) {
            fprintf(stderr, "bench_sort: %s gave a WRONG result (n = %zu)\n", name, n);
            exit(1);
        }
        if (r >= 2)
            t[r - 2] = d, w[r - 2] = wl;
    }
    qsort(t, RUNS, sizeof t[0], bench_cmp_double);
    qsort(w, RUNS, sizeof w[0], bench_cmp_double);
    *wall = w[RUNS / 2];
    return t[RUNS / 2];
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv) {
    n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : (size_t)1 << 24;
    if (n < 2)
        n = 2;
    n64 = n / 2;
    kiln_status st = kiln_queue_create_default(NULL, KILN_QUEUE_PROFILING, &q);
    if (st != KILN_OK)
        DIE(st);
    kiln_context *c = kiln_queue_context(q);
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    h32 = malloc(n * 4), r32 = malloc(n * 4);
    h64 = malloc(n64 * 8), r64 = malloc(n64 * 8), ridx = malloc(n * 8);
    if (!h32 || !r32 || !h64 || !r64 || !ridx) {
        fprintf(stderr, "bench_sort: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        h32[i] = (int32_t)next();
        sum32 += (uint32_t)h32[i];
    }
    for (size_t i = 0; i < n64; i++) {
        h64[i] = (int64_t)next();
        sum64 += (uint64_t)h64[i];
    }
    if ((st = kiln_array_from_host(c, KILN_INT32, 1, &n, h32, &K32)) ||
        (st = kiln_array_empty(c, KILN_INT32, 1, &n, &O32)) ||
        (st = kiln_array_empty(c, KILN_INT64, 1, &n, &IDX)) ||
        (st = kiln_array_from_host(c, KILN_INT64, 1, &n64, h64, &K64)) ||
        (st = kiln_array_empty(c, KILN_INT64, 1, &n64, &O64)) ||
        (st = kiln_buffer_create(c, n * 4, 0, h32, &cb_src)) ||
        (st = kiln_buffer_create(c, n * 4, 0, NULL, &cb_dst)))
        DIE(st);
    double wc;
    double tc = timeit("copy", op_copy, check_none, &wc);
    struct {
        const char *name;
        op_fn f;
        int (*check)(void);
        size_t items;
    } ops[] = {
        { "sort_int32", op_sort32, check_sort32, n },
        { "argsort_int32", op_argsort, check_argsort, n },
        { "sort_int64", op_sort64, check_sort64, n64 },
    };
    printf("device: %s (%s), n = %zu (int64 keys: %zu)\n", info.name, info.id, n, n64);
    printf("%-14s %10s %12s %10s\n", "op", "ms", "Mkeys/s", "wall ms");
    printf("%-14s %10.3f %12.1f %10.3f\n", "copy", tc * 1e3, (double)n / tc * 1e-6, wc * 1e3);
    printf("RESULT copy %.9f\n", tc);
    const char *only = getenv("KILN_BENCH_OPS");
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        double w;
        if (only && !bench_op_listed(only, ops[k].name))
            continue;
        double t = timeit(ops[k].name, ops[k].f, ops[k].check, &w);
        printf("%-14s %10.3f %12.1f %10.3f\n", ops[k].name, t * 1e3,
               (double)ops[k].items / t * 1e-6, w * 1e3);
        printf("RESULT %s %.9f\n", ops[k].name, t);
    }
    printf("timing: %s; first and last runs verified\n",
           events_ok ? "device events (marker to end), median of 11"
                     : "host wall time, median of 11");
    kiln_array_release(K32);
    kiln_array_release(O32);
    kiln_array_release(K64);
    kiln_array_release(O64);
    kiln_array_release(IDX);
    kiln_buffer_release(cb_src);
    kiln_buffer_release(cb_dst);
    kiln_queue_release(q);
    free(h32), free(r32), free(h64), free(r64), free(ridx);
    return 0;
}
