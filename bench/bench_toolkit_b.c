/* bench_toolkit_b: axis sums of a float32 matrix (axis 0: columns, axis 1:
 * rows), histograms of n float32 values into 256 bins (uniform input, and
 * skewed: 90% of the values in one bin), bincount of n int32 values into
 * 256 bins, and a hash table's build (insert of nh distinct uint32 keys
 * into a table of capacity nh) and lookup (nh keys, half of them absent),
 * each against a device copy of the bytes it reads (the bandwidth floor).
 *   bench_toolkit_b [rows cols [n [nh]]]   defaults 4096 4096 2^24 2^22
 *   (the GPU figures of issue 12: 16384 16384 268435456 67108864)
 * device: $KILN_DEVICE. Prints a table and `RESULT op seconds` lines for
 * bench/peers_toolkit_b.py.
 *
 * Each figure is the median of 7 runs after a warm-up, timed with device
 * events (marker to the end of the last command), except the hash build,
 * which blocks to report a full table: host wall time (it includes one
 * 16-byte read back). The warm-up and the last run of every op are checked
 * against a host reference; a wrong answer makes the program fail. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"
#include "kiln.h"

#define RUNS 7
#define DIE(st)                                                                                 \
    do {                                                                                        \
        fprintf(stderr, "bench_toolkit_b: %s at line %d: %s\n", kiln_status_name(st), __LINE__, \
                kiln_last_error_message());                                                     \
        exit(1);                                                                                \
    } while (0)
#define TRY(call)                 \
    do {                          \
        kiln_status st_ = (call); \
        if (st_ != KILN_OK)       \
            DIE(st_);             \
    } while (0)

static kiln_queue *q;
static size_t rows, cols, n, nh;
static kiln_array *M, *U, *S, *B, *K, *V, *L, *Out;
static kiln_buffer *cb_src, *cb_dst;
static size_t copy_bytes;
static float *hm, *hu, *hs;
static int *hb;
static uint32_t *hk;
static kiln_hash_table *table;
static kiln_array *result; /* the last op's output */

static kiln_status op_copy(kiln_event **e) {
    return kiln_buffer_copy(q, cb_src, 0, cb_dst, 0, copy_bytes, 0, NULL, e);
}
static kiln_status sum_axis(int ax, kiln_event **e) {
    kiln_array_release(result);
    return kiln_array_reduce_axis(q, KILN_REDUCE_SUM, M, ax, 0, 0, NULL, e, &result);
}
static kiln_status op_sum0(kiln_event **e) {
    return sum_axis(0, e);
}
static kiln_status op_sum1(kiln_event **e) {
    return sum_axis(1, e);
}
static kiln_status op_hist_u(kiln_event **e) {
    kiln_array_release(result);
    return kiln_array_histogram(q, U, 256, 0, 1, NULL, 0, NULL, e, &result);
}
static kiln_status op_hist_s(kiln_event **e) {
    kiln_array_release(result);
    return kiln_array_histogram(q, S, 256, 0, 1, NULL, 0, NULL, e, &result);
}
static kiln_status op_lookup(kiln_event **e) {
    uint32_t miss = 0xFFFFFFFFu;
    return kiln_hash_table_lookup(q, table, L, Out, KILN_ARG_U32(miss), NULL, 0, NULL, e);
}

/* ---- checks against host references */
static int check_axis(int ax) {
    size_t no = ax ? rows : cols;
    float *got = malloc(no * 4);
    TRY(kiln_array_read(q, result, got));
    int ok = 1;
    for (size_t o = 0; o < no && ok; o++) {
        double s = 0, sa = 0;
        for (size_t k = 0; k < (ax ? cols : rows); k++) {
            double v = ax ? hm[o * cols + k] : hm[k * cols + o];
            s += v;
            sa += fabs(v);
        }
        ok = fabs(got[o] - s) <= 1e-5 * sa + 1e-6;
    }
    free(got);
    return ok;
}
static int check_sum0(void) {
    return check_axis(0);
}
static int check_sum1(void) {
    return check_axis(1);
}
static int check_hist(const float *x) {
    int64_t got[256], want[256] = { 0 };
    for (size_t i = 0; i < n; i++) {
        /* float edges k/256 are exact: the bin is floor(x*256) */
        int b = (int)(x[i] * 256.0f);
        if (x[i] >= 0 && x[i] <= 1)
            want[b > 255 ? 255 : b]++;
    }
    TRY(kiln_array_read(q, result, got));
    return !memcmp(got, want, sizeof got);
}
static int check_hist_u(void) {
    return check_hist(hu);
}
static int check_hist_s(void) {
    return check_hist(hs);
}
static int check_bincount(void) {
    /* the result has max + 1 bins (minlength 0): fewer than 256 when no
     * value is 255, which small n often gives (the sweep's 2^10) */
    int64_t got[256] = { 0 }, want[256] = { 0 };
    for (size_t i = 0; i < n; i++)
        want[hb[i]]++;
    if (kiln_array_size(result) > 256)
        return 0;
    TRY(kiln_array_read(q, result, got));
    return !memcmp(got, want, sizeof got);
}
static int check_lookup(void) {
    uint32_t *got = malloc(nh * 4);
    TRY(kiln_array_read(q, Out, got));
    int ok = 1;
    for (size_t i = 0; i < nh && ok; i++) /* even: present, value = key+1 */
        ok = got[i] == (i & 1 ? 0xFFFFFFFFu : hk[i] + 1);
    free(got);
    return ok;
}

typedef kiln_status (*op_fn)(kiln_event **e);
static kiln_status run_op(void *arg, kiln_event **e) {
    return (*(op_fn *)arg)(e);
}
static int events_ok = 1;

static double median(double *t, int k) {
    qsort(t, (size_t)k, sizeof *t, bench_cmp_double);
    return t[k / 2];
}

static double time_op(const char *name, op_fn f, int (*check)(void)) {
    double t[RUNS], wall;
    kiln_status st;
    for (int r = -1; r < RUNS; r++) {
        double d = bench_time_enqueue(q, run_op, &f, &events_ok, &wall, &st);
        if (st != KILN_OK)
            DIE(st);
        if ((r == -1 || r == RUNS - 1) && check && !check()) {
            fprintf(stderr, "bench_toolkit_b: %s gave a WRONG result\n", name);
            exit(1);
        }
        if (r >= 0)
            t[r] = d;
    }
    return median(t, RUNS);
}

/* bincount blocks (its length depends on the data): host wall time */
static double time_bincount(void) {
    double t[RUNS];
    for (int r = -1; r < RUNS; r++) {
        kiln_array_release(result);
        double t0 = bench_now();
        TRY(kiln_array_bincount(q, B, NULL, 0, &result));
        if (r >= 0)
            t[r] = bench_now() - t0;
        if ((r == -1 || r == RUNS - 1) && !check_bincount()) {
            fprintf(stderr, "bench_toolkit_b: bincount gave a WRONG result\n");
            exit(1);
        }
    }
    return median(t, RUNS);
}

static double time_build(void) {
    double t[RUNS];
    for (int r = -1; r < RUNS; r++) {
        TRY(kiln_hash_table_clear(q, table));
        double t0 = bench_now();
        TRY(kiln_hash_table_insert(q, table, K, V));
        if (r >= 0)
            t[r] = bench_now() - t0;
    }
    size_t count = 0;
    TRY(kiln_hash_table_count(q, table, &count));
    if (count != nh / 2) {
        fprintf(stderr, "bench_toolkit_b: hash build holds %zu keys, not %zu\n", count, nh / 2);
        exit(1);
    }
    return median(t, RUNS);
}

static void row(const char *name, double t, double bytes, double tcopy, double items) {
    printf("%-14s %10.3f %10.2f %9.0f%% %12.1f\n", name, t * 1e3, bytes / t * 1e-9, tcopy / t * 100,
           items / t * 1e-6);
    printf("RESULT %s %.9f\n", name, t);
}

int main(int argc, char **argv) {
    rows = argc > 2 ? (size_t)strtoull(argv[1], NULL, 0) : 4096;
    cols = argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : 4096;
    n = argc > 3 ? (size_t)strtoull(argv[3], NULL, 0) : (size_t)1 << 24;
    nh = argc > 4 ? (size_t)strtoull(argv[4], NULL, 0) : (size_t)1 << 22;
    if (!rows || !cols || !n || nh < 2) {
        fprintf(stderr, "usage: bench_toolkit_b [rows cols [n [nh]]] (>= 1, "
                        "nh >= 2)\n");
        return 1;
    }
    size_t rc = rows * cols;
    hm = malloc(rc * 4);
    hu = malloc(n * 4);
    hs = malloc(n * 4);
    hb = malloc(n * 4);
    hk = malloc(nh * 4);
    uint32_t *hv = malloc(nh / 2 * 4), *hkeys = malloc(nh / 2 * 4);
    if (!hm || !hu || !hs || !hb || !hk || !hv || !hkeys) {
        fprintf(stderr, "bench_toolkit_b: out of host memory\n");
        return 1;
    }
    uint64_t s = 0x9E3779B97F4A7C15ull;
#define NEXT() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, s)
    for (size_t i = 0; i < rc; i++)
        hm[i] = (float)(NEXT() >> 40) / 16777216.0f - 0.5f;
    for (size_t i = 0; i < n; i++) {
        hu[i] = (float)(NEXT() >> 40) / 16777216.0f;
        /* skewed: 90% in bin 128, the rest uniform (a fixed pattern) */
        hs[i] = i % 10 ? 0.5009765625f : hu[i];
        hb[i] = (int)(NEXT() >> 56);
    }
    /* even i: the keys inserted (value key+1); odd i: absent keys. An odd
     * multiplier is a bijection mod 2^31: distinct keys, none reserved. */
    for (size_t i = 0; i < nh; i++)
        hk[i] = (uint32_t)(i * 2654435761u) & 0x7FFFFFFFu;
    for (size_t i = 0; i < nh / 2; i++) {
        hkeys[i] = hk[2 * i];
        hv[i] = hk[2 * i] + 1;
    }
    kiln_device_info info;
    TRY(kiln_queue_create_default(NULL, KILN_QUEUE_PROFILING, &q));
    TRY(kiln_device_get_info(kiln_queue_device(q), &info));
    kiln_context *c = kiln_queue_context(q);
    size_t shape[2] = { rows, cols }, half = nh / 2;
    TRY(kiln_array_from_host(c, KILN_FLOAT32, 2, shape, hm, &M));
    TRY(kiln_array_from_host(c, KILN_FLOAT32, 1, &n, hu, &U));
    TRY(kiln_array_from_host(c, KILN_FLOAT32, 1, &n, hs, &S));
    TRY(kiln_array_from_host(c, KILN_INT32, 1, &n, hb, &B));
    TRY(kiln_array_from_host(c, KILN_UINT32, 1, &half, hkeys, &K));
    TRY(kiln_array_from_host(c, KILN_UINT32, 1, &half, hv, &V));
    TRY(kiln_array_from_host(c, KILN_UINT32, 1, &nh, hk, &L));
    TRY(kiln_array_empty(c, KILN_UINT32, 1, &nh, &Out));
    TRY(kiln_hash_table_create(q, half, KILN_UINT32, KILN_UINT32, &table));
    size_t big = rc > n ? rc : n; /* the copies' buffers: the largest of */
    if (nh > big)                 /* the three sizes they stand for */
        big = nh;
    TRY(kiln_buffer_create(c, big * 4, 0, NULL, &cb_src));
    TRY(kiln_buffer_create(c, big * 4, 0, NULL, &cb_dst));

    printf("device: %s (%s), matrix %zux%zu, n = %zu, hash keys %zu\n", info.name, info.id, rows,
           cols, n, nh);
    printf("%-14s %10s %10s %10s %12s\n", "op", "ms", "GB/s", "% copy", "Melem/s");
    copy_bytes = rc * 4;
    double tcm = time_op("copy_matrix", op_copy, NULL);
    row("copy_matrix", tcm, 2.0 * (double)rc * 4, tcm, (double)rc);
    row("sum_axis0", time_op("sum_axis0", op_sum0, check_sum0), (double)rc * 4, tcm / 2,
        (double)rc);
    row("sum_axis1", time_op("sum_axis1", op_sum1, check_sum1), (double)rc * 4, tcm / 2,
        (double)rc);
    copy_bytes = n * 4;
    double tc = time_op("copy_n", op_copy, NULL);
    row("copy_n", tc, 2.0 * (double)n * 4, tc, (double)n);
    row("hist_uniform", time_op("hist_uniform", op_hist_u, check_hist_u), (double)n * 4, tc / 2,
        (double)n);
    row("hist_skewed", time_op("hist_skewed", op_hist_s, check_hist_s), (double)n * 4, tc / 2,
        (double)n);
    row("bincount", time_bincount(), (double)n * 4, tc / 2, (double)n);
    copy_bytes = nh * 4;
    double tch = time_op("copy_nh", op_copy, NULL);
    row("copy_nh", tch, 2.0 * (double)nh * 4, tch, (double)nh);
    /* build: reads keys and values, writes a slot's key and value each */
    row("hash_build", time_build(), (double)half * 16, tch, (double)half);
    row("hash_lookup", time_op("hash_lookup", op_lookup, check_lookup), (double)nh * 8, tch,
        (double)nh);
    printf("timing: median of %d; %s; hash_build and bincount: host wall "
           "time (they block)\n",
           RUNS, events_ok ? "device events" : "host wall time");
    printf("%% copy: the copy's time for the bytes the op reads (reads + "
           "writes for hash_lookup) over the op's\n");

    kiln_array_release(result);
    kiln_hash_table_release(table);
    kiln_array_release(M);
    kiln_array_release(U);
    kiln_array_release(S);
    kiln_array_release(B);
    kiln_array_release(K);
    kiln_array_release(V);
    kiln_array_release(L);
    kiln_array_release(Out);
    kiln_buffer_release(cb_src);
    kiln_buffer_release(cb_dst);
    kiln_queue_release(q);
    free(hm);
    free(hu);
    free(hs);
    free(hb);
    free(hk);
    free(hv);
    free(hkeys);
    return 0;
}
