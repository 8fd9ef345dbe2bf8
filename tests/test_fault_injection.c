/* Fault injection (issue 13): the N-th host allocation, device allocation or
 * program build of a representative workload is made to fail, for every N
 * up to the workload's count of such events. Each run must end with an
 * error status or with right answers, never a crash; the library must work
 * afterwards (a launch on a fresh context right after each failure, and
 * the whole workload unarmed after each walk); and nothing may leak
 * (LeakSanitizer checks the whole process at exit under `make test`).
 *
 * The workload, on a fresh context each time: a kernel launch, an array op,
 * the four generators (elementwise, reduction, scan, random), an offload
 * run inside a data region, and the disk cache (a program stored by one
 * context and loaded by another). Host and device faults run with a warm
 * cache directory (builds are loads, so the walk stays quick); build faults
 * with an empty one per run (every program is compiled). */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "testing/kiln_test_internal.h"

enum { N = 37 }; /* more than one work-group's worth on no device; prime */

typedef struct {
    kiln_device *device;
    unsigned long salt; /* makes the cache step's source new every run */
    int wrong;          /* a step returned KILN_OK with a wrong answer */
    const char *wrong_step;
    int no_blas, no_fft; /* no BLAS / FFT library here (seen at the warm-up) */
} workload;

static void wrong(workload *w, const char *step) {
    if (!w->wrong)
        w->wrong_step = step;
    w->wrong = 1;
}

#define TRY(expr)          \
    do {                   \
        st = (expr);       \
        if (st != KILN_OK) \
            goto out;      \
    } while (0)

static kiln_status step_launch(kiln_queue *q, workload *w) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    kiln_buffer *b = NULL;
    kiln_status st;
    int host[N];
    TRY(kiln_program_create(ctx,
                            "KILN_KERNEL void sq(KILN_GLOBAL int *x, int n) {\n"
                            "  long i = kiln_global_id(0); if (i < n) x[i] = (int)(i * i); }\n",
                            NULL, &p));
    TRY(kiln_kernel_create(p, "sq", &k));
    TRY(kiln_buffer_create(ctx, sizeof host, 0, NULL, &b));
    kiln_arg args[] = { KILN_ARG_BUF(b), KILN_ARG_I32(N) };
    size_t global = N;
    TRY(kiln_kernel_launch(q, k, 1, &global, NULL, 2, args, 0, NULL, NULL));
    TRY(kiln_buffer_read(q, b, 0, sizeof host, host));
    for (int i = 0; i < N; i++)
        if (host[i] != i * i)
            wrong(w, "launch");
out:
    KT_RELEASE(b, k, p);
    return st;
}

static kiln_status step_array(kiln_queue *q, workload *w) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_array *a = NULL, *b = NULL, *c = NULL;
    float ha[N], hb[N], hc[N];
    for (int i = 0; i < N; i++) {
        ha[i] = (float)i;
        hb[i] = 0.5f * (float)i;
    }
    size_t shape = N;
    kiln_status st;
    TRY(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &shape, ha, &a));
    TRY(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &shape, hb, &b));
    TRY(kiln_array_empty(ctx, KILN_FLOAT32, 1, &shape, &c));
    TRY(kiln_array_binary_out(q, KILN_OP_ADD, c, a, b, 0, NULL, NULL));
    TRY(kiln_array_read(q, c, hc));
    for (int i = 0; i < N; i++)
        if (hc[i] != ha[i] + hb[i])
            wrong(w, "array add");
    double sum = 0;
    float fsum = 0;
    TRY(kiln_array_reduce(q, KILN_REDUCE_SUM, c, &fsum));
    for (int i = 0; i < N; i++)
        sum += hc[i];
    if (fabs(fsum - sum) > 1e-3 * sum)
        wrong(w, "array sum");
out:
    KT_RELEASE(a, b, c);
    return st;
}

static kiln_status step_generators(kiln_queue *q, workload *w) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_array *x = NULL, *y = NULL, *r = NULL;
    kiln_elementwise *ew = NULL;
    kiln_reduction *red = NULL;
    kiln_scan *sc = NULL;
    kiln_rng *rng = NULL;
    int hx[N], hy[N];
    for (int i = 0; i < N; i++)
        hx[i] = i % 7 - 3;
    size_t shape = N;
    kiln_status st;
    TRY(kiln_array_from_host(ctx, KILN_INT32, 1, &shape, hx, &x));
    TRY(kiln_array_empty(ctx, KILN_INT32, 1, &shape, &y));

    kiln_elementwise_desc ed =
        KILN_ELEMENTWISE_DESC(.arguments = "int a, const int *x, int *y",
                              .operation = "y[i] = a * x[i] + 1", .name = "fi_axpy");
    TRY(kiln_elementwise_create(ctx, &ed, &ew));
    kiln_arg ea[] = { KILN_ARG_I32(3), KILN_ARG_ARRAY(x), KILN_ARG_ARRAY(y) };
    TRY(kiln_elementwise_launch(q, ew, N, 3, ea, 0, NULL, NULL));
    TRY(kiln_array_read(q, y, hy));
    for (int i = 0; i < N; i++)
        if (hy[i] != 3 * hx[i] + 1)
            wrong(w, "elementwise");

    kiln_reduction_desc rd =
        KILN_REDUCTION_DESC(.arguments = "const int *x", .out_type = "long", .neutral = "0",
                            .reduce = "a + b", .map = "(long)x[i] * x[i]", .name = "fi_sumsq");
    TRY(kiln_reduction_create(ctx, &rd, &red));
    kiln_arg ra[] = { KILN_ARG_ARRAY(x) };
    long got = -1, want = 0;
    TRY(kiln_reduction_run(q, red, N, 1, ra, &got));
    for (int i = 0; i < N; i++)
        want += (long)hx[i] * hx[i];
    if (got != want)
        wrong(w, "reduction");

    kiln_scan_desc sd = KILN_SCAN_DESC(.arguments = "const int *x, int *y", .scan_type = "int",
                                       .neutral = "0", .scan = "a + b", .input = "x[i]",
                                       .output = "y[i] = item", .name = "fi_cumsum");
    TRY(kiln_scan_create(ctx, &sd, &sc));
    kiln_arg sa[] = { KILN_ARG_ARRAY(x), KILN_ARG_ARRAY(y) };
    TRY(kiln_scan_launch(q, sc, N, 2, sa, 0, NULL, NULL));
    TRY(kiln_array_read(q, y, hy));
    for (int i = 0, acc = 0; i < N; i++) {
        acc += hx[i];
        if (hy[i] != acc)
            wrong(w, "scan");
    }

    kiln_rng_desc gd = KILN_RNG_DESC(.seed = 42);
    TRY(kiln_rng_create(&gd, &rng));
    TRY(kiln_array_empty(ctx, KILN_FLOAT32, 1, &shape, &r));
    TRY(kiln_rng_uniform(q, rng, r, 0, NULL, NULL));
    float hr[N];
    TRY(kiln_array_read(q, r, hr));
    /* Philox with seed 42 at offset 0: the first value on every device. */
    static float first = -1;
    if (first < 0)
        first = hr[0];
    for (int i = 0; i < N; i++)
        if (!(hr[i] >= 0 && hr[i] < 1))
            wrong(w, "random range");
    if (hr[0] != first)
        wrong(w, "random stream");
out:
    KT_RELEASE(rng, sc, red, ew, x, y, r);
    return st;
}

static kiln_status step_offload(kiln_queue *q, workload *w) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_offload *off = NULL;
    kiln_data_region *region = NULL;
    double v[N];
    for (int i = 0; i < N; i++)
        v[i] = i;
    kiln_status st;
    TRY(kiln_offload_create(ctx, "double *v, double s", "v[i] = s * v[i] + 1;", 1, NULL, &off));
    kiln_arg maps[] = { KILN_TOFROM(v, sizeof v) };
    TRY(kiln_data_region_begin(q, NULL, 1, maps, &region));
    size_t range = N;
    kiln_arg args[] = { KILN_PRESENT(v), KILN_ARG_F64(2.0) };
    TRY(kiln_offload_run(q, off, region, &range, 2, args));
    kiln_data_region *done = region;
    region = NULL;
    TRY(kiln_data_region_end(done));
    for (int i = 0; i < N; i++)
        if (v[i] != 2.0 * i + 1)
            wrong(w, "offload");
out:
    if (region)
        kiln_data_region_end(region);
    kiln_offload_release(off);
    return st;
}

/* A program new to the disk cache: stored by this context, then loaded by
 * a second one (a fresh context has an empty memory cache). */
static kiln_status step_cache(kiln_queue *q, workload *w) {
    char src[256];
    snprintf(src, sizeof src,
             "/* run %08lu */ KILN_KERNEL void seven(KILN_GLOBAL int *x) { x[0] = 7; }\n", w->salt);
    kiln_context *c2 = NULL;
    kiln_queue *q2 = NULL;
    kiln_program *p1 = NULL, *p2 = NULL;
    kiln_kernel *k = NULL;
    kiln_buffer *b = NULL;
    kiln_status st;
    TRY(kiln_program_create(kiln_queue_context(q), src, NULL, &p1));
    TRY(kiln_context_create(&w->device, 1, &c2));
    TRY(kiln_queue_create(c2, w->device, 0, &q2));
    TRY(kiln_program_create(c2, src, NULL, &p2));
    TRY(kiln_kernel_create(p2, "seven", &k));
    TRY(kiln_buffer_create(c2, sizeof(int), 0, NULL, &b));
    kiln_arg a[] = { KILN_ARG_BUF(b) };
    size_t one = 1;
    TRY(kiln_kernel_launch(q2, k, 1, &one, NULL, 1, a, 0, NULL, NULL));
    int got = 0;
    TRY(kiln_buffer_read(q2, b, 0, sizeof got, &got));
    if (got != 7)
        wrong(w, "cache");
out:
    KT_RELEASE(b, k, p2, p1, q2, c2);
    return st;
}

/* The whole workload on a fresh context; the first failing status. */
static kiln_status run_workload(workload *w) {
    kiln_context *ctx = NULL;
    kiln_queue *q = NULL;
    kiln_status st;
    w->wrong = 0;
    w->wrong_step = NULL;
    TRY(kiln_context_create(&w->device, 1, &ctx));
    TRY(kiln_queue_create(ctx, w->device, 0, &q));
    TRY(step_launch(q, w));
    TRY(step_array(q, w));
    TRY(step_generators(q, w));
    TRY(step_offload(q, w));
    TRY(step_cache(q, w));
out:
    KT_RELEASE(q, ctx);
    return st;
}

/* ---- the algorithms' own workload (issue 41): sort, selection, random,
 * histogram, hash table, axis reduction, BLAS, FFT, the list builder. */

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static kiln_status step_sort_select(kiln_queue *q, workload *w) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_array *k = NULL, *v = NULL, *ko = NULL, *vo = NULL, *ix = NULL, *out = NULL, *cnt = NULL,
               *uc = NULL;
    int hk[N], hv[N], gk[N], gv[N], ref[N];
    int64_t gi[N];
    for (int i = 0; i < N; i++) {
        hk[i] = (i * 7919) % 23 - 11;
        hv[i] = i;
        ref[i] = hk[i];
    }
    qsort(ref, N, sizeof ref[0], cmp_int);
    size_t shape = N, one = 1;
    kiln_status st;
    TRY(kiln_array_from_host(ctx, KILN_INT32, 1, &shape, hk, &k));
    TRY(kiln_array_from_host(ctx, KILN_INT32, 1, &shape, hv, &v));
    TRY(kiln_array_empty(ctx, KILN_INT32, 1, &shape, &ko));
    TRY(kiln_array_empty(ctx, KILN_INT32, 1, &shape, &vo));
    TRY(kiln_array_empty(ctx, KILN_INT64, 1, &shape, &ix));
    TRY(kiln_array_sort_out(q, ko, vo, k, v, NULL, 0, NULL, NULL));
    TRY(kiln_array_read(q, ko, gk));
    TRY(kiln_array_read(q, vo, gv));
    for (int i = 0; i < N; i++)
        if (gk[i] != ref[i] || gv[i] < 0 || gv[i] >= N || hk[gv[i]] != gk[i] ||
            (i && gk[i] == gk[i - 1] && gv[i] < gv[i - 1]))
            wrong(w, "sort");
    TRY(kiln_array_argsort_out(q, ix, k, NULL, 0, NULL, NULL));
    TRY(kiln_array_read(q, ix, gi));
    for (int i = 0; i < N; i++)
        if (gi[i] < 0 || gi[i] >= N || hk[gi[i]] != ref[i])
            wrong(w, "argsort");
    /* copy_if of the positive keys, unique (with counts) of the sorted */
    int64_t hc = -1;
    TRY(kiln_array_empty(ctx, KILN_INT32, 1, &shape, &out));
    TRY(kiln_array_empty(ctx, KILN_INT64, 1, &one, &cnt));
    TRY(kiln_array_empty(ctx, KILN_INT64, 1, &shape, &uc));
    kiln_event *e = NULL;
    TRY(kiln_array_copy_if_out(q, out, cnt, &hc, k, "x > 0", 0, NULL, &e));
    st = kiln_event_wait(e);
    kiln_event_release(e);
    e = NULL;
    if (st != KILN_OK)
        goto out;
    TRY(kiln_array_read(q, out, gk));
    int64_t want = 0;
    for (int i = 0; i < N; i++)
        if (hk[i] > 0 && (want >= hc || gk[want++] != hk[i]))
            wrong(w, "copy_if");
    if (hc != want)
        wrong(w, "copy_if count");
    hc = -1;
    TRY(kiln_array_unique_out(q, out, uc, cnt, &hc, ko, 0, NULL, &e));
    st = kiln_event_wait(e);
    kiln_event_release(e);
    e = NULL;
    if (st != KILN_OK)
        goto out;
    int64_t runs = 0;
    for (int i = 0; i < N; i++)
        runs += !i || ref[i] != ref[i - 1];
    if (hc != runs)
        wrong(w, "unique");
out:
    KT_RELEASE(k, v, ko, vo, ix, out, cnt, uc);
    return st;
}

static kiln_status step_random_hist(kiln_queue *q, workload *w) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_rng *rng = NULL;
    kiln_array *r = NULL, *f = NULL, *h = NULL, *bc = NULL;
    kiln_event *e = NULL;
    size_t shape = N;
    kiln_status st;
    TRY(kiln_rng_create(&KILN_RNG_DESC(.seed = 7), &rng));
    TRY(kiln_array_empty(ctx, KILN_INT32, 1, &shape, &r));
    TRY(kiln_array_empty(ctx, KILN_FLOAT32, 1, &shape, &f));
    TRY(kiln_rng_integers(q, rng, r, 0, 5, 0, NULL, NULL));
    TRY(kiln_rng_normal(q, rng, f, 0.0, 1.0, 0, NULL, NULL));
    int hr[N];
    float hf[N];
    TRY(kiln_array_read(q, r, hr));
    TRY(kiln_array_read(q, f, hf));
    int64_t want[5] = { 0 }, got[5] = { 0 };
    for (int i = 0; i < N; i++) {
        if (hr[i] < 0 || hr[i] >= 5)
            wrong(w, "random integers");
        else
            want[hr[i]]++;
        if (!isfinite(hf[i]))
            wrong(w, "random normal");
    }
    TRY(kiln_array_bincount(q, r, NULL, 5, &bc));
    TRY(kiln_array_read(q, bc, got));
    for (int b = 0; b < 5; b++)
        if (got[b] != want[b])
            wrong(w, "bincount");
    TRY(kiln_array_histogram(q, f, 4, -1, 1, NULL, 0, NULL, &e, &h));
    TRY(kiln_event_wait(e));
    int64_t hh[4] = { 0 }, wh[4] = { 0 };
    TRY(kiln_array_read(q, h, hh));
    for (int i = 0; i < N; i++)
        if (hf[i] >= -1 && hf[i] <= 1) {
            int b = (int)((hf[i] + 1) * 2);
            wh[b > 3 ? 3 : b]++;
        }
    for (int b = 0; b < 4; b++)
        if (hh[b] != wh[b] && llabs(hh[b] - wh[b]) > 1) /* edge rounding */
            wrong(w, "histogram");
out:
    KT_RELEASE(e, rng, r, f, h, bc);
    return st;
}

static kiln_status step_hash_axis_allocate(kiln_queue *q, workload *w) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_hash_table *t = NULL;
    kiln_array *k = NULL, *v = NULL, *g = NULL, *m = NULL, *s = NULL, *it = NULL, *of = NULL;
    kiln_allocate *al = NULL;
    kiln_event *e = NULL;
    uint32_t hk[N], hv[N], hg[N];
    for (uint32_t i = 0; i < N; i++) {
        hk[i] = i * 3 + 1;
        hv[i] = i * i;
    }
    size_t shape = N;
    kiln_status st;
    TRY(kiln_hash_table_create(q, 64, KILN_UINT32, KILN_UINT32, &t));
    TRY(kiln_array_from_host(ctx, KILN_UINT32, 1, &shape, hk, &k));
    TRY(kiln_array_from_host(ctx, KILN_UINT32, 1, &shape, hv, &v));
    TRY(kiln_array_empty(ctx, KILN_UINT32, 1, &shape, &g));
    TRY(kiln_hash_table_insert(q, t, k, v));
    uint32_t missing = 0xdead;
    TRY(kiln_hash_table_lookup(q, t, k, g, KILN_ARG_U32(missing), NULL, 0, NULL, NULL));
    TRY(kiln_array_read(q, g, hg));
    for (int i = 0; i < N; i++)
        if (hg[i] != hv[i])
            wrong(w, "hash lookup");
    size_t count = 0;
    TRY(kiln_hash_table_count(q, t, &count));
    if (count != N)
        wrong(w, "hash count");
    /* column sums of a (5, 7) float32 matrix */
    float hm[35], hs[7];
    size_t ms[2] = { 5, 7 };
    for (int i = 0; i < 35; i++)
        hm[i] = (float)(i % 11);
    TRY(kiln_array_from_host(ctx, KILN_FLOAT32, 2, ms, hm, &m));
    TRY(kiln_array_reduce_axis(q, KILN_REDUCE_SUM, m, 0, 0, 0, NULL, &e, &s));
    TRY(kiln_event_wait(e));
    TRY(kiln_array_read(q, s, hs));
    for (int c = 0; c < 7; c++) {
        float want = 0;
        for (int r = 0; r < 5; r++)
            want += hm[r * 7 + c];
        if (hs[c] != want)
            wrong(w, "sum axis 0");
    }
    /* the list builder: item i emits i % 3 values */
    TRY(kiln_allocate_create(ctx,
                             &KILN_ALLOCATE_DESC(.arguments = "const uint *k", .item_type = "uint",
                                                 .operation = "for (int t = 0; t < i % 3; t++) "
                                                              "KILN_EMIT(k[i] + t);",
                                                 .name = "fi_list"),
                             &al));
    kiln_arg aa[] = { KILN_ARG_ARRAY(k) };
    TRY(kiln_allocate_run(q, al, N, 1, aa, &it, &of));
    int64_t ho[N + 1];
    uint32_t hi[2 * N];
    TRY(kiln_array_read(q, of, ho));
    if (ho[N] > 0)
        TRY(kiln_array_read(q, it, hi));
    for (int i = 0, at = 0; i < N; i++) {
        if (ho[i] != at)
            wrong(w, "allocate offsets");
        for (int j = 0; j < i % 3; j++, at++)
            if (at < ho[N] && hi[at] != hk[i] + (uint32_t)j)
                wrong(w, "allocate items");
        if (i == N - 1 && ho[N] != at)
            wrong(w, "allocate total");
    }
out:
    KT_RELEASE(e, al, t, k, v, g, m, s, it, of);
    return st;
}

/* The event of a call that runs on a host library. Bounded: once (host
 * site 1027 of a full walk, in kiln_fft_c2c_out) such an event never completed;
 * not understood. A wait that times out is a failed check, not a hang. */
static kiln_status wait_host_call(workload *w, kiln_event *e, const char *what) {
    kiln_status st = kiln_event_wait_timeout(e, 120000);
    if (st == KILN_ERROR_TIMEOUT) {
        CHECK_MSG(0, "the event of %s never completed (120 s)", what);
        wrong(w, what);
    }
    return st;
}

static kiln_status step_blas_fft(kiln_queue *q, workload *w) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_array *a = NULL, *b = NULL, *c = NULL, *z = NULL;
    kiln_status st = KILN_OK;
    if (!w->no_blas) {
        float ha[12], hb[8], hc[6];
        size_t sa[2] = { 3, 4 }, sb[2] = { 4, 2 }, sc[2] = { 3, 2 };
        for (int i = 0; i < 12; i++)
            ha[i] = (float)(i % 5 - 2);
        for (int i = 0; i < 8; i++)
            hb[i] = (float)(i % 3);
        TRY(kiln_array_from_host(ctx, KILN_FLOAT32, 2, sa, ha, &a));
        TRY(kiln_array_from_host(ctx, KILN_FLOAT32, 2, sb, hb, &b));
        TRY(kiln_array_empty(ctx, KILN_FLOAT32, 2, sc, &c));
        /* a host library runs on kiln's callback thread: its failure
         * (a host allocation there) is the event's */
        kiln_event *e = NULL;
        TRY(kiln_linalg_matmul_out(q, c, a, b, 0, NULL, &e));
        st = wait_host_call(w, e, "matmul");
        kiln_event_release(e);
        if (st != KILN_OK)
            goto out;
        TRY(kiln_array_read(q, c, hc));
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 2; j++) {
                float want = 0;
                for (int k = 0; k < 4; k++)
                    want += ha[i * 4 + k] * hb[k * 2 + j];
                if (hc[i * 2 + j] != want)
                    wrong(w, "matmul");
            }
    }
    if (!w->no_fft) {
        /* the FFT of a unit impulse at 1: exp(-2 pi i k / 8) */
        float hz[16] = { 0 }, gz[16];
        hz[2] = 1;
        size_t n8 = 8;
        TRY(kiln_array_from_host(ctx, KILN_COMPLEX64, 1, &n8, hz, &z));
        kiln_event *e = NULL;
        TRY(kiln_fft_c2c_out(q, z, z, 1, 0, KILN_FFT_NORM_BACKWARD, 0, NULL, &e));
        st = wait_host_call(w, e, "fft");
        kiln_event_release(e);
        if (st != KILN_OK)
            goto out;
        TRY(kiln_array_read(q, z, gz));
        for (int k = 0; k < 8; k++)
            if (fabs(gz[2 * k] - cos(-2 * M_PI * k / 8)) > 1e-5 ||
                fabs(gz[2 * k + 1] - sin(-2 * M_PI * k / 8)) > 1e-5)
                wrong(w, "fft");
    }
out:
    KT_RELEASE(a, b, c, z);
    return st;
}

/* The algorithms' workload on a fresh context. */
static kiln_status run_algo(workload *w) {
    kiln_context *ctx = NULL;
    kiln_queue *q = NULL;
    kiln_status st;
    w->wrong = 0;
    w->wrong_step = NULL;
    TRY(kiln_context_create(&w->device, 1, &ctx));
    TRY(kiln_queue_create(ctx, w->device, 0, &q));
    TRY(step_sort_select(q, w));
    TRY(step_random_hist(q, w));
    TRY(step_hash_axis_allocate(q, w));
    TRY(step_blas_fft(q, w));
out:
    KT_RELEASE(q, ctx);
    return st;
}

/* One launch on a fresh context. */
static kiln_status run_quick(workload *w) {
    kiln_context *ctx = NULL;
    kiln_queue *q = NULL;
    kiln_status st;
    w->wrong = 0;
    w->wrong_step = NULL;
    TRY(kiln_context_create(&w->device, 1, &ctx));
    TRY(kiln_queue_create(ctx, w->device, 0, &q));
    TRY(step_launch(q, w));
out:
    KT_RELEASE(q, ctx);
    return st;
}

static char cache_root[256];

static void use_cache_dir(const char *name, int empty) {
    char dir[320];
    snprintf(dir, sizeof dir, "%s/%s", cache_root, name);
    if (empty) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            printf("  (could not empty %s)\n", dir);
    }
    mkdir(dir, 0700);
    setenv("KILN_CACHE_DIR", dir, 1);
}

static const char *kind_names[] = { "host allocation", "device allocation", "program build" };

/* Fails event n of kind for n = 1, 2, ... until a run sees fewer than n
 * events; returns the number of sites walked. fn is the workload; stride
 * > 1 fails only every stride-th site (from a start that varies with
 * $KILN_TEST_SEED), to keep a long walk short in CI. */
static unsigned long walk(workload *w, kiln__fault_kind kind, kiln_status (*fn)(workload *),
                          const char *label, unsigned long stride) {
    unsigned long n, failed_status = 0, recovered = 0, tried = 0;
    /* KT_FAULT_FROM=n starts every walk at n (to replay one site). */
    const char *from = getenv("KT_FAULT_FROM");
    unsigned long first = from ? strtoul(from, NULL, 10) : 1;
    if (!from && stride > 1)
        first = 1 + kt_rand_u64() % stride;
    for (n = first;; n += stride) {
        w->salt++;
        use_cache_dir(kind == KILN__FAULT_PROGRAM_BUILD ? "cold" : "warm",
                      kind == KILN__FAULT_PROGRAM_BUILD);
        if (getenv("KT_FAULT_VERBOSE"))
            printf("  %s %s %lu\n", label, kind_names[kind], n), fflush(stdout);
        kiln__fault_arm(kind, n);
        kiln_status st = fn(w);
        if (getenv("KT_FAULT_VERBOSE"))
            printf("   -> %s: %s\n", kiln_status_name(st), kiln_last_error_message()),
                fflush(stdout);
        int fired = kiln__fault_fired();
        unsigned long seen = kiln__fault_seen(kind);
        kiln__fault_arm(kind, 0);
        if (!fired) {
            CHECK_MSG(st == KILN_OK && !w->wrong,
                      "%s %s walk: a run past the last site "
                      "failed (%s, %s)",
                      label, kind_names[kind], kiln_status_name(st),
                      w->wrong_step ? w->wrong_step : "-");
            n = seen + 1; /* the sites: every event of the run */
            break;
        }
        tried++;
        if (st != KILN_OK) {
            failed_status++;
            /* A real status with a message, never a crash or INTERNAL. */
            if (st == KILN_ERROR_INTERNAL || !kiln_last_error_message()[0])
                CHECK_MSG(0, "%s %s %lu: %s with message \"%s\"", label, kind_names[kind], n,
                          kiln_status_name(st), kiln_last_error_message());
        } else {
            recovered++; /* a failure kiln can live with (a cache write) */
        }
        if (w->wrong)
            CHECK_MSG(0, "%s %s %lu: KILN_OK but a wrong answer in %s", label, kind_names[kind], n,
                      w->wrong_step);
        /* The library works afterwards: a launch on a fresh context at once
         * (the whole workload runs again, unarmed, after the walk). */
        kiln_status again = run_quick(w);
        if (again != KILN_OK || w->wrong)
            CHECK_MSG(0, "%s %s %lu: the next launch failed: %s (%s) %s", label, kind_names[kind],
                      n, kiln_status_name(again), kiln_last_error_message(),
                      w->wrong_step ? w->wrong_step : "");
    }
    w->salt++;
    kiln_status again = fn(w);
    CHECK_MSG(again == KILN_OK && !w->wrong, "after the %s %s walk the workload fails: %s (%s)",
              label, kind_names[kind], kiln_status_name(again), kiln_last_error_message());
    printf("  %s, %s: %lu sites, %lu failed in turn (every %lu; %lu with a status, %lu absorbed "
           "with right answers)\n",
           label, kind_names[kind], n - 1, tried, stride, failed_status, recovered);
    fflush(stdout);
    CHECK(n > 1);
    return n - 1;
}

/* The algorithms' walk of host allocations fails every k-th of its ~1050
 * sites in CI (k = $KT_FAULT_STRIDE_ALGO, default 25, from a start that
 * varies with $KILN_TEST_SEED; 1 = every site, which takes ~45 minutes
 * under ASan on 2 cores); its device allocations and builds are walked
 * whole. */
static unsigned long algo_stride(kiln__fault_kind kind) {
    if (kind != KILN__FAULT_HOST_ALLOC)
        return 1;
    const char *e = getenv("KT_FAULT_STRIDE_ALGO");
    unsigned long k = e ? strtoul(e, NULL, 10) : 25;
    return k ? k : 1;
}

static void test_device(kiln_queue *queue, void *user) {
    (void)user;
    workload w = { .device = kiln_queue_device(queue) };
    /* Warm-up: one-time state (device lists, the warm cache) before counting. */
    use_cache_dir("warm", 1);
    CHECK_OK(run_workload(&w));
    CHECK(!w.wrong);
    w.salt++;
    CHECK_OK(run_workload(&w));
    unsigned long total = 0;
    if (!getenv("KT_FAULT_ALGO_ONLY"))
        for (int kind = 0; kind < KILN__FAULT_KINDS; kind++)
            total += walk(&w, (kiln__fault_kind)kind, run_workload, "core", 1);
    /* The algorithms: which libraries this device has (a tiny matmul and
     * FFT), then the warm-up and the walks. */
    {
        kiln_context *c = kiln_queue_context(queue);
        size_t s2[2] = { 1, 1 }, one = 1;
        kiln_array *m = NULL, *z = NULL;
        kiln_array_zeros(queue, KILN_FLOAT32, 2, s2, 0, NULL, NULL, &m);
        kiln_array_zeros(queue, KILN_COMPLEX64, 1, &one, 0, NULL, NULL, &z);
        (void)c;
        w.no_blas = kiln_linalg_matmul_out(queue, m, m, m, 0, NULL, NULL) != KILN_OK;
        w.no_fft = kiln_fft_c2c_out(queue, z, z, 1, 0, 0, 0, NULL, NULL) != KILN_OK;
        kiln_queue_finish(queue);
        KT_RELEASE(m, z);
        if (w.no_blas || w.no_fft)
            printf("  (no %s%s%s here: left out of the algorithms' workload)\n",
                   w.no_blas ? "BLAS" : "", w.no_blas && w.no_fft ? " or " : "",
                   w.no_fft ? "FFT" : "");
    }
    CHECK_OK(run_algo(&w));
    CHECK_MSG(!w.wrong, "the algorithms' workload, unarmed: wrong %s", w.wrong_step);
    CHECK_OK(run_algo(&w));
    unsigned long algo = 0;
    /* KT_FAULT_KIND=0, 1 or 2: only that kind's walk (to split a full walk
     * over several processes with KT_FAULT_FROM and KT_FAULT_STRIDE_ALGO) */
    const char *only = getenv("KT_FAULT_KIND");
    for (int kind = 0; kind < KILN__FAULT_KINDS; kind++)
        if (!only || atoi(only) == kind)
            algo += walk(&w, (kiln__fault_kind)kind, run_algo, "algorithms",
                         algo_stride((kiln__fault_kind)kind));
    printf("  %lu fault sites in all (%lu in the core workload, %lu in the algorithms')\n",
           total + algo, total, algo);
}

/* A data region whose end fails (its first host allocation refused) still
 * returns only after the region's copy in has run: that copy reads the
 * caller's memory, which may be gone once the call returns (a stack array
 * was read after its function had returned, once in CI). The queue is
 * held behind a gate that another thread opens 200 ms later; the failed
 * end must not return before that. */
typedef struct {
    kiln_event *gate;
    atomic_int opened;
} opener;

static void *open_later(void *arg) {
    opener *o = arg;
    usleep(200000);
    atomic_store(&o->opened, 1);
    kiln_event_set_complete(o->gate, KILN_EVENT_COMPLETE);
    return NULL;
}

static void test_region_end_fails(kiln_queue *queue, void *user) {
    (void)user;
    kiln_device *dev = kiln_queue_device(queue);
    kiln_context *ctx = NULL;
    kiln_queue *q = NULL;
    if (!KT_OPEN_QUEUE(dev, 0, &ctx, &q))
        return;
    double v[N];
    for (int i = 0; i < N; i++)
        v[i] = i;
    opener o = { .gate = NULL };
    atomic_init(&o.opened, 0);
    kiln_data_region *region = NULL;
    kiln_arg maps[] = { KILN_TOFROM(v, sizeof v) };
    CHECK_OK(kiln_event_create_user(ctx, &o.gate));
    CHECK_OK(kiln_queue_marker(q, 1, &o.gate, NULL));
    if (CHECK_OK(kiln_data_region_begin(q, NULL, 1, maps, &region))) {
        pthread_t th;
        CHECK(pthread_create(&th, NULL, open_later, &o) == 0);
        kiln__fault_arm(KILN__FAULT_HOST_ALLOC, 1);
        kiln_status st = kiln_data_region_end(region);
        int fired = kiln__fault_fired();
        kiln__fault_arm(KILN__FAULT_HOST_ALLOC, 0);
        int opened = atomic_load(&o.opened);
        pthread_join(th, NULL);
        CHECK_MSG(fired && st != KILN_OK,
                  "kiln_data_region_end made no host allocation to refuse "
                  "(fired %d, %s)",
                  fired, kiln_status_name(st));
        CHECK_MSG(opened, "the failed kiln_data_region_end returned while its "
                          "copy in (reading v) was still queued");
    }
    CHECK_OK(kiln_queue_finish(q));
    KT_RELEASE(o.gate, q, ctx);
}

int main(void) {
    const char *base = getenv("KILN_CACHE_DIR");
    snprintf(cache_root, sizeof cache_root, "%s", base && *base ? base : "/tmp/kiln-fault-test");
    mkdir(cache_root, 0700);
    kt_for_each_device(test_region_end_fails, NULL);
    kt_for_each_device(test_device, NULL);
    return kt_report();
}
