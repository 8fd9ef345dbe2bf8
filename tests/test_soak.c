/* Soak (issue 41, item 15): a mixed workload over every algorithm, from 8
 * host threads at once on shared contexts and queues, for
 * $KILN_SOAK_SECONDS seconds (default 20: with the warm-up and settling,
 * about 30 s here, the CI form).
 *
 * Two contexts on the test device, two in-order queues on each (the
 * array calls order their work by the queue's order); thread t uses context t % 2 and queue (t / 2)
 * % 2 of it, so every queue has two threads on it. The generators (elementwise, allocate, offload),
 * the random generator and a hash table per context are shared by the threads of that context. Each
 * thread runs, in a random order, steps of: sort and argsort, topk, copy_if / partition / unique,
 * cumsum, reduce (blocking and through a future with a continuation),
 * random numbers, bincount and histogram, hash-table insert and lookup,
 * axis reductions, take and put, the list builder (kiln_allocate), an
 * offload in a data region, and event callbacks; sizes are random and
 * include 0 and 1. Every result is checked against a serial C reference.
 *
 * Steady state: after a warm-up round (every step at sizes 0, 1, 100 and
 * the largest on every thread, so every program is built) and
 * $KILN_SOAK_SETTLE_SECONDS (default 10) of random steps, in which the
 * allocators (ASan's, PoCL's, kiln's pools) grow to their working size
 * (on the host backend under ASan RSS rose 12% from 3 s to 30 s of a cold
 * run, then 4% over the next 90 s), and each capped pool's cache is filled
 * to its cap (fill_pool_cache), the timed phase runs; at the end of its first tenth and
 * at its end every thread stops at a barrier, and the process's RSS and the
 * pools' bytes (in use + cached, both contexts) are read. Neither may grow
 * by more than 5% over its value after the first tenth (pool bytes: or one
 * 64 KiB block); shrinking is no leak (a capped cache trims whichever
 * classes the last steps did not use), and the pooled bytes in use must be the same (only
 * the hash tables hold blocks then). Each context's pool is capped at
 * $KILN_SOAK_POOL_CAP_MB MiB of cached blocks (default 4; 0: no cap, the
 * default pool, whose cache holds for each of its ~48 size classes met
 * here as many blocks as were ever live at once in that class, and so
 * grows for a long time under random sizes; see docs/pools.md). No step may fail, nothing may hang
 * (a watchdog aborts the process if no step completes for 300 s). */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

enum { NTHREADS = 8, MAXN = 3000, NSTEPS = 13 };

typedef struct ctx_share {
    kiln_context *ctx;
    kiln_queue *q[2];
    kiln_elementwise *axpy;
    kiln_allocate *list;
    kiln_offload *off;
    kiln_rng *rng;
    kiln_hash_table *table;     /* keys inserted: distinct per thread and step */
    pthread_mutex_t table_lock; /* insert+lookup+clear as one step */
} ctx_share;

static struct {
    ctx_share c[2];
    atomic_int failures;
    atomic_long steps;
    atomic_long callbacks, callbacks_want;
    atomic_long last_progress; /* seconds, CLOCK_MONOTONIC */
    atomic_int stop;
    pthread_barrier_t barrier;
    int phase_marks; /* 0: warm-up only; 1: timed */
    double seconds, settle;
    long steps_timed; /* S.steps when the timed phase began */
    size_t pool_cap;  /* max_cached_bytes of each context; 0: no limit */
    long step_counts[NSTEPS];
    pthread_mutex_t count_lock;
} S;

/* Under AddressSanitizer, freed memory waits in a quarantine of 256 MiB
 * before it is reused, so RSS climbs for the first few hundred MiB of
 * frees: longer than a tenth of the CI form. A small quarantine (still
 * catching a use right after a free) lets RSS settle within the first
 * tenth; ASAN_OPTIONS in the environment still overrides this. */
#if defined(__SANITIZE_ADDRESS__)
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
    return "quarantine_size_mb=16";
}
#endif

static const char *step_names[NSTEPS] = { "sort",    "topk",     "select", "cumsum", "reduce",
                                          "future",  "random",   "hist",   "hash",   "axis",
                                          "takeput", "allocate", "offload" };

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fail(int t, const char *step, size_t n, const char *fmt, ...) {
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (atomic_fetch_add(&S.failures, 1) < 40)
        fprintf(stderr, "soak: thread %d, %s, n = %zu: %s (%s)\n", t, step, n, msg,
                kiln_last_error_message());
}

typedef struct rnd {
    uint64_t s;
} rnd;
static uint64_t rn(rnd *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}
/* 0 and 1 often, else up to MAXN (small ones more often than large). */
static size_t rand_size(rnd *r) {
    uint64_t k = rn(r) % 16;
    if (k == 0)
        return 0;
    if (k == 1)
        return 1;
    if (k < 8)
        return 2 + rn(r) % 64;
    return 2 + rn(r) % (MAXN - 1);
}

#define OK(expr)                                                  \
    do {                                                          \
        kiln_status st_ = (expr);                                 \
        if (st_ != KILN_OK) {                                     \
            fail(t, name, n, "%s -> status %d", #expr, (int)st_); \
            goto out;                                             \
        }                                                         \
    } while (0)

/* The names every step uses: t (the thread), name (the step's), ctx. */
#define STEP_BEGIN(step_name)       \
    int t = s->t;                   \
    const char *name = (step_name); \
    kiln_context *ctx = s->c->ctx;  \
    (void)ctx

static void release_arrays(int n, ...) {
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        kiln_array_release(va_arg(ap, kiln_array *));
    va_end(ap);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

typedef struct tstate {
    int t;
    rnd r;
    ctx_share *c;
    kiln_queue *q;
    int32_t *h0, *h1, *h2, *ref;
    int64_t *l0;
    float *f0;
} tstate;

static int32_t *fill_keys(tstate *s, int32_t *h, size_t n, int range) {
    for (size_t i = 0; i < n; i++)
        h[i] = (int32_t)(rn(&s->r) % (uint64_t)range) - range / 2;
    return h;
}

static int step_sort(tstate *s, size_t n) {
    STEP_BEGIN("sort");
    kiln_queue *q = s->q;
    kiln_array *k = NULL, *v = NULL, *ko = NULL, *vo = NULL, *ix = NULL;
    kiln_event *e = NULL;
    fill_keys(s, s->h0, n, n > 50 ? 1000 : 7);
    for (size_t i = 0; i < n; i++)
        s->h1[i] = (int32_t)i;
    memcpy(s->ref, s->h0, n * sizeof *s->ref);
    qsort(s->ref, n, sizeof *s->ref, cmp_i32);
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &n, s->h0, &k));
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &n, s->h1, &v));
    OK(kiln_array_empty(ctx, KILN_INT32, 1, &n, &ko));
    OK(kiln_array_empty(ctx, KILN_INT32, 1, &n, &vo));
    OK(kiln_array_empty(ctx, KILN_INT64, 1, &n, &ix));
    OK(kiln_array_sort_out(q, ko, vo, k, v, NULL, 0, NULL, &e));
    OK(kiln_array_argsort_out(q, ix, k, NULL, 1, &e, NULL));
    OK(kiln_array_read(q, ko, s->h2));
    OK(kiln_array_read(q, vo, s->h1));
    OK(kiln_array_read(q, ix, s->l0));
    for (size_t i = 0; i < n; i++) {
        int32_t vi = s->h1[i];
        if (s->h2[i] != s->ref[i] || vi < 0 || (size_t)vi >= n || s->h0[vi] != s->h2[i] ||
            (i && s->h2[i] == s->h2[i - 1] && vi < s->h1[i - 1])) {
            fail(t, name, n, "sort wrong at %zu", i);
            break;
        }
        if (s->l0[i] < 0 || (size_t)s->l0[i] >= n || s->h0[s->l0[i]] != s->ref[i]) {
            fail(t, name, n, "argsort wrong at %zu", i);
            break;
        }
    }
out:
    kiln_event_release(e);
    release_arrays(5, k, v, ko, vo, ix);
    return 0;
}

/* topk over rows: a (rows, cols) with k in [1, cols]. */
static int step_topk(tstate *s, size_t n) {
    STEP_BEGIN("topk");
    kiln_array *a = NULL, *vo = NULL, *io = NULL;
    size_t cols = n ? 1 + rn(&s->r) % (n < 200 ? n : 200) : 1;
    size_t rows = n / cols;
    size_t k = 1 + rn(&s->r) % cols;
    size_t sh[2] = { rows, cols }, so[2] = { rows, k };
    n = rows * cols;
    fill_keys(s, s->h0, n, 100);
    OK(kiln_array_from_host(ctx, KILN_INT32, 2, sh, s->h0, &a));
    OK(kiln_array_empty(ctx, KILN_INT32, 2, so, &vo));
    OK(kiln_array_empty(ctx, KILN_INT64, 2, so, &io));
    OK(kiln_array_topk_out(s->q, vo, io, a, k, 1, 0, NULL, NULL));
    OK(kiln_array_read(s->q, vo, s->h1));
    OK(kiln_array_read(s->q, io, s->l0));
    for (size_t r = 0; r < rows; r++) {
        memcpy(s->ref, s->h0 + r * cols, cols * sizeof *s->ref);
        qsort(s->ref, cols, sizeof *s->ref, cmp_i32);
        for (size_t j = 0; j < k; j++) {
            int64_t ix = s->l0[r * k + j];
            if (s->h1[r * k + j] != s->ref[cols - 1 - j] || ix < 0 || (size_t)ix >= cols ||
                s->h0[r * cols + (size_t)ix] != s->h1[r * k + j]) {
                fail(t, name, n, "row %zu item %zu (k %zu, cols %zu)", r, j, k, cols);
                goto out;
            }
        }
    }
out:
    release_arrays(3, a, vo, io);
    return 0;
}

static int step_select(tstate *s, size_t n) {
    kiln_queue *q = s->q;
    STEP_BEGIN("select");
    kiln_array *a = NULL, *o = NULL, *rj = NULL, *cnt = NULL, *sorted = NULL, *uc = NULL;
    kiln_event *e = NULL;
    size_t one = 1;
    fill_keys(s, s->h0, n, 9);
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &n, s->h0, &a));
    OK(kiln_array_empty(ctx, KILN_INT32, 1, &n, &o));
    OK(kiln_array_empty(ctx, KILN_INT32, 1, &n, &rj));
    OK(kiln_array_empty(ctx, KILN_INT64, 1, &one, &cnt));
    OK(kiln_array_empty(ctx, KILN_INT64, 1, &n, &uc));
    int64_t hc = -1;
    OK(kiln_array_copy_if_out(q, o, cnt, &hc, a, "x > 0", 0, NULL, &e));
    OK(kiln_event_wait(e));
    kiln_event_release(e);
    e = NULL;
    OK(kiln_array_read(q, o, s->h1));
    size_t want = 0;
    for (size_t i = 0; i < n; i++)
        if (s->h0[i] > 0 && (want >= (size_t)hc || s->h1[want++] != s->h0[i])) {
            fail(t, name, n, "copy_if item %zu", i);
            goto out;
        }
    if ((size_t)hc != want)
        fail(t, name, n, "copy_if count %lld, want %zu", (long long)hc, want);
    /* partition into two outputs */
    hc = -1;
    OK(kiln_array_partition_out(q, o, rj, cnt, &hc, a, "x % 2 == 0", 0, NULL, &e));
    OK(kiln_event_wait(e));
    kiln_event_release(e);
    e = NULL;
    OK(kiln_array_read(q, o, s->h1));
    OK(kiln_array_read(q, rj, s->h2));
    size_t ys = 0, no = 0;
    for (size_t i = 0; i < n; i++) {
        int even = s->h0[i] % 2 == 0;
        int32_t got = even ? s->h1[ys++] : s->h2[no++];
        if (got != s->h0[i]) {
            fail(t, name, n, "partition item %zu", i);
            goto out;
        }
    }
    if ((size_t)hc != ys)
        fail(t, name, n, "partition count %lld, want %zu", (long long)hc, ys);
    /* unique with counts of the sorted input */
    memcpy(s->ref, s->h0, n * sizeof *s->ref);
    qsort(s->ref, n, sizeof *s->ref, cmp_i32);
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &n, s->ref, &sorted));
    hc = -1;
    OK(kiln_array_unique_out(q, o, uc, cnt, &hc, sorted, 0, NULL, &e));
    OK(kiln_event_wait(e));
    OK(kiln_array_read(q, o, s->h1));
    OK(kiln_array_read(q, uc, s->l0));
    size_t runs = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && s->ref[i] == s->ref[i - 1])
            continue;
        size_t j = i;
        while (j < n && s->ref[j] == s->ref[i])
            j++;
        if (runs >= (size_t)hc || s->h1[runs] != s->ref[i] || s->l0[runs] != (int64_t)(j - i)) {
            fail(t, name, n, "unique run %zu", runs);
            goto out;
        }
        runs++;
    }
    if ((size_t)hc != runs)
        fail(t, name, n, "unique count %lld, want %zu", (long long)hc, runs);
out:
    kiln_event_release(e);
    release_arrays(6, a, o, rj, cnt, sorted, uc);
    return 0;
}

static int step_cumsum(tstate *s, size_t n) {
    STEP_BEGIN("cumsum");
    kiln_array *a = NULL, *o = NULL;
    int excl = (int)(rn(&s->r) % 2);
    fill_keys(s, s->h0, n, 21);
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &n, s->h0, &a));
    OK(kiln_array_empty(ctx, KILN_INT32, 1, &n, &o));
    OK(kiln_array_cumsum_out(s->q, o, a, excl, 0, NULL, NULL));
    OK(kiln_array_read(s->q, o, s->h1));
    int32_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!excl)
            acc += s->h0[i];
        if (s->h1[i] != acc) {
            fail(t, name, n, "%s item %zu: %d, want %d", excl ? "exclusive" : "inclusive", i,
                 s->h1[i], acc);
            break;
        }
        if (excl)
            acc += s->h0[i];
    }
out:
    release_arrays(2, a, o);
    return 0;
}

static int step_reduce(tstate *s, size_t n) {
    STEP_BEGIN("reduce");
    kiln_array *a = NULL, *y = NULL;
    fill_keys(s, s->h0, n, 1000);
    int64_t want = 0;
    int32_t mx = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        want += 3 * s->h0[i] + 1;
        if (s->h0[i] > mx)
            mx = s->h0[i];
    }
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &n, s->h0, &a));
    OK(kiln_array_empty(ctx, KILN_INT32, 1, &n, &y));
    /* a shared elementwise generator, then two reductions */
    kiln_arg ea[] = { KILN_ARG_I32(3), KILN_ARG_ARRAY(a), KILN_ARG_ARRAY(y) };
    OK(kiln_elementwise_launch(s->q, s->c->axpy, n, 3, ea, 0, NULL, NULL));
    int32_t sum = -1;
    OK(kiln_array_reduce(s->q, KILN_REDUCE_SUM, y, &sum));
    if (sum != (int32_t)want)
        fail(t, name, n, "sum %d, want %lld", sum, (long long)want);
    if (n) {
        int32_t got = 0;
        OK(kiln_array_reduce(s->q, KILN_REDUCE_MAX, a, &got));
        if (got != mx)
            fail(t, name, n, "max %d, want %d", got, mx);
    }
out:
    release_arrays(2, a, y);
    return 0;
}

/* A future of a device read, a continuation after it, and when_all. */
typedef struct cont_data {
    kiln_context *ctx;
    int32_t seen;
    atomic_int calls;
} cont_data;
static kiln_status cont_double(const void *value, size_t size, void *user, kiln_future **next) {
    cont_data *d = user;
    int32_t v = 0;
    if (size == sizeof v)
        memcpy(&v, value, sizeof v);
    d->seen = v;
    atomic_fetch_add(&d->calls, 1);
    v *= 2;
    return kiln_future_ready(d->ctx, &v, sizeof v, next);
}

static int step_future(tstate *s, size_t n) {
    STEP_BEGIN("future");
    kiln_array *a = NULL;
    kiln_future *f = NULL, *g = NULL, *all = NULL;
    cont_data d = { ctx, 0, 0 };
    if (!n)
        n = 1;
    fill_keys(s, s->h0, n, 1000);
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &n, s->h0, &a));
    size_t at = rn(&s->r) % n;
    OK(kiln_buffer_read_future(s->q, kiln_array_buffer(a), at * sizeof(int32_t), sizeof(int32_t), 0,
                               NULL, &f));
    OK(kiln_future_then(f, cont_double, &d, &g));
    kiln_future *both[2] = { f, g };
    OK(kiln_future_when_all(2, both, &all));
    OK(kiln_future_wait(all));
    int32_t got = 0;
    OK(kiln_future_copy(g, &got, sizeof got));
    if (d.seen != s->h0[at] || got != 2 * s->h0[at] || atomic_load(&d.calls) != 1)
        fail(t, name, n, "value %d, continuation saw %d (%d calls), want %d", got, d.seen,
             atomic_load(&d.calls), s->h0[at]);
out:
    KT_RELEASE(all, g, f, a);
    return 0;
}

static int step_random(tstate *s, size_t n) {
    STEP_BEGIN("random");
    kiln_array *r = NULL, *f = NULL;
    int64_t hi = 1 + (int64_t)(rn(&s->r) % 50);
    OK(kiln_array_empty(ctx, KILN_INT32, 1, &n, &r));
    OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &f));
    OK(kiln_rng_integers(s->q, s->c->rng, r, -3, hi, 0, NULL, NULL));
    OK(kiln_rng_uniform(s->q, s->c->rng, f, 0, NULL, NULL));
    OK(kiln_array_read(s->q, r, s->h1));
    OK(kiln_array_read(s->q, f, s->f0));
    for (size_t i = 0; i < n; i++)
        if (s->h1[i] < -3 || s->h1[i] >= hi || !(s->f0[i] >= 0 && s->f0[i] < 1)) {
            fail(t, name, n, "item %zu: %d (range [-3, %lld)), %g", i, s->h1[i], (long long)hi,
                 (double)s->f0[i]);
            break;
        }
out:
    release_arrays(2, r, f);
    return 0;
}

static int step_hist(tstate *s, size_t n) {
    STEP_BEGIN("hist");
    kiln_array *a = NULL, *bc = NULL, *h = NULL, *fa = NULL;
    kiln_event *e = NULL;
    size_t bins = 1 + rn(&s->r) % 40;
    for (size_t i = 0; i < n; i++) {
        s->h0[i] = (int32_t)(rn(&s->r) % bins);
        s->f0[i] = (float)s->h0[i] + 0.5f; /* bin centres: no edge rounding */
    }
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &n, s->h0, &a));
    OK(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &n, s->f0, &fa));
    OK(kiln_array_bincount(s->q, a, NULL, bins, &bc));
    OK(kiln_array_read(s->q, bc, s->l0));
    int64_t want[40] = { 0 };
    for (size_t i = 0; i < n; i++)
        want[s->h0[i]]++;
    for (size_t b = 0; b < bins; b++)
        if (s->l0[b] != want[b]) {
            fail(t, name, n, "bincount bin %zu: %lld, want %lld", b, (long long)s->l0[b],
                 (long long)want[b]);
            goto out;
        }
    OK(kiln_array_histogram(s->q, fa, bins, 0, (double)bins, NULL, 0, NULL, &e, &h));
    OK(kiln_event_wait(e));
    OK(kiln_array_read(s->q, h, s->l0));
    for (size_t b = 0; b < bins; b++)
        if (s->l0[b] != want[b]) {
            fail(t, name, n, "histogram bin %zu: %lld, want %lld", b, (long long)s->l0[b],
                 (long long)want[b]);
            goto out;
        }
out:
    kiln_event_release(e);
    release_arrays(4, a, fa, bc, h);
    return 0;
}

/* Keys distinct per thread (t in the top bits), values derived from keys;
 * the table is shared, so each thread looks up only its own keys. */
static int step_hash(tstate *s, size_t n) {
    STEP_BEGIN("hash");
    kiln_array *k = NULL, *v = NULL, *g = NULL;
    uint32_t *hk = (uint32_t *)s->h0, *hv = (uint32_t *)s->h1, *hg = (uint32_t *)s->h2;
    if (n > 400)
        n = 400; /* table capacity 4096 for 8 threads' keys at once */
    uint32_t base = (uint32_t)(rn(&s->r) % 1000000) * 400u;
    for (size_t i = 0; i < n; i++) {
        hk[i] = ((uint32_t)t << 28) | ((base + (uint32_t)i) & 0x0fffffffu);
        hv[i] = hk[i] * 2654435761u;
    }
    OK(kiln_array_from_host(ctx, KILN_UINT32, 1, &n, hk, &k));
    OK(kiln_array_from_host(ctx, KILN_UINT32, 1, &n, hv, &v));
    OK(kiln_array_empty(ctx, KILN_UINT32, 1, &n, &g));
    pthread_mutex_lock(&s->c->table_lock);
    kiln_status st = kiln_hash_table_insert(s->q, s->c->table, k, v);
    uint32_t missing = 0xdeadbeefu;
    if (st == KILN_OK)
        st = kiln_hash_table_lookup(s->q, s->c->table, k, g, KILN_ARG_U32(missing), NULL, 0, NULL,
                                    NULL);
    size_t count = 0;
    if (st == KILN_OK)
        st = kiln_hash_table_count(s->q, s->c->table, &count);
    if (st == KILN_OK)
        st = kiln_hash_table_clear(s->q, s->c->table);
    pthread_mutex_unlock(&s->c->table_lock);
    OK(st);
    OK(kiln_array_read(s->q, g, hg));
    if (count != n)
        fail(t, name, n, "count %zu", count);
    for (size_t i = 0; i < n; i++)
        if (hg[i] != hv[i]) {
            fail(t, name, n, "lookup %zu: %u, want %u", i, hg[i], hv[i]);
            break;
        }
out:
    release_arrays(3, k, v, g);
    return 0;
}

/* Sum along a random axis (negative too) of a (r, c) int32 matrix. */
static int step_axis(tstate *s, size_t n) {
    STEP_BEGIN("axis");
    kiln_array *m = NULL, *o = NULL;
    kiln_event *e = NULL;
    size_t cols = 1 + rn(&s->r) % 70;
    size_t rows = n / cols;
    size_t sh[2] = { rows, cols };
    int axis = (int)(rn(&s->r) % 4) - 2; /* -2 .. 1 */
    int a0 = axis < 0 ? axis + 2 : axis;
    n = rows * cols;
    fill_keys(s, s->h0, n, 50);
    OK(kiln_array_from_host(ctx, KILN_INT32, 2, sh, s->h0, &m));
    OK(kiln_array_reduce_axis(s->q, KILN_REDUCE_SUM, m, axis, 0, 0, NULL, &e, &o));
    OK(kiln_event_wait(e));
    size_t outn = a0 == 0 ? cols : rows;
    if (kiln_array_size(o) != outn) {
        fail(t, name, n, "axis %d of (%zu, %zu): %zu results", axis, rows, cols,
             kiln_array_size(o));
        goto out;
    }
    if (kiln_array_dtype(o) != KILN_INT64 && kiln_array_dtype(o) != KILN_INT32) {
        fail(t, name, n, "dtype %d", (int)kiln_array_dtype(o));
        goto out;
    }
    OK(kiln_array_read(s->q, o, s->l0));
    for (size_t j = 0; j < outn; j++) {
        int64_t want = 0;
        for (size_t i = 0; i < (a0 == 0 ? rows : cols); i++)
            want += s->h0[a0 == 0 ? i * cols + j : j * cols + i];
        int64_t got = kiln_array_dtype(o) == KILN_INT64 ? s->l0[j] : ((int32_t *)s->l0)[j];
        if (got != want) {
            fail(t, name, n, "axis %d of (%zu, %zu) item %zu: %lld, want %lld", axis, rows, cols, j,
                 (long long)got, (long long)want);
            break;
        }
    }
out:
    kiln_event_release(e);
    release_arrays(2, m, o);
    return 0;
}

static int step_takeput(tstate *s, size_t n) {
    STEP_BEGIN("takeput");
    kiln_array *a = NULL, *ix = NULL, *o = NULL, *acc = NULL, *one = NULL;
    size_t m = n ? n : 1; /* a may not be empty with indices in WRAP mode */
    size_t ni = rn(&s->r) % (MAXN / 2);
    if (rn(&s->r) % 8 == 0)
        ni = rn(&s->r) % 2;
    fill_keys(s, s->h0, m, 1000);
    for (size_t i = 0; i < ni; i++)
        s->l0[i] = (int64_t)(rn(&s->r) % (3 * m)) - (int64_t)m; /* wraps */
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &m, s->h0, &a));
    OK(kiln_array_from_host(ctx, KILN_INT64, 1, &ni, s->l0, &ix));
    OK(kiln_array_empty(ctx, KILN_INT32, 1, &ni, &o));
    OK(kiln_array_take_out(s->q, o, a, ix, KILN_INDEX_WRAP, 0, NULL, NULL));
    OK(kiln_array_read(s->q, o, s->h1));
    for (size_t i = 0; i < ni; i++) {
        int64_t j = ((s->l0[i] % (int64_t)m) + (int64_t)m) % (int64_t)m;
        if (s->h1[i] != s->h0[j]) {
            fail(t, name, n, "take %zu", i);
            goto out;
        }
    }
    /* np.add.at(acc, ix, 1) */
    memset(s->h2, 0, m * sizeof *s->h2);
    size_t onen = 1;
    int32_t onev = 1;
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &m, s->h2, &acc));
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &onen, &onev, &one));
    OK(kiln_array_put(s->q, acc, ix, one, KILN_INDEX_WRAP, KILN_PUT_ADD, 0, NULL, NULL));
    OK(kiln_array_read(s->q, acc, s->h1));
    for (size_t i = 0; i < ni; i++)
        s->h2[((s->l0[i] % (int64_t)m) + (int64_t)m) % (int64_t)m]++;
    for (size_t i = 0; i < m; i++)
        if (s->h1[i] != s->h2[i]) {
            fail(t, name, n, "put add %zu: %d, want %d", i, s->h1[i], s->h2[i]);
            break;
        }
out:
    release_arrays(5, a, ix, o, acc, one);
    return 0;
}

/* The list builder: item i emits i % 3 values k[i] + j. */
static int step_allocate(tstate *s, size_t n) {
    STEP_BEGIN("allocate");
    kiln_array *k = NULL, *it = NULL, *of = NULL;
    fill_keys(s, s->h0, n, 100000);
    OK(kiln_array_from_host(ctx, KILN_INT32, 1, &n, s->h0, &k));
    kiln_arg aa[] = { KILN_ARG_ARRAY(k) };
    OK(kiln_allocate_run(s->q, s->c->list, n, 1, aa, &it, &of));
    OK(kiln_array_read(s->q, of, s->l0));
    size_t total = (size_t)s->l0[n];
    if (total != n / 3 * 3 + (n % 3 == 2 ? 1 : 0)) {
        fail(t, name, n, "total %zu", total);
        goto out;
    }
    if (total)
        OK(kiln_array_read(s->q, it, s->h1));
    for (size_t i = 0, at = 0; i < n; i++) {
        if (s->l0[i] != (int64_t)at) {
            fail(t, name, n, "offset %zu", i);
            goto out;
        }
        for (size_t j = 0; j < i % 3; j++, at++)
            if (s->h1[at] != s->h0[i] + (int32_t)j) {
                fail(t, name, n, "item %zu of %zu", j, i);
                goto out;
            }
    }
out:
    release_arrays(3, k, it, of);
    return 0;
}

static int step_offload(tstate *s, size_t n) {
    double *v = (double *)s->l0;
    kiln_data_region *region = NULL;
    STEP_BEGIN("offload");
    for (size_t i = 0; i < n; i++)
        v[i] = (double)i;
    if (!n) /* a map of 0 bytes: the region needs memory to map */
        return 0;
    kiln_arg maps[] = { KILN_TOFROM(v, n * sizeof *v) };
    OK(kiln_data_region_begin(s->q, NULL, 1, maps, &region));
    kiln_arg args[] = { KILN_PRESENT(v), KILN_ARG_F64(2.0) };
    OK(kiln_offload_run(s->q, s->c->off, region, &n, 2, args));
    kiln_data_region *done = region;
    region = NULL;
    OK(kiln_data_region_end(done));
    for (size_t i = 0; i < n; i++)
        if (v[i] != 2.0 * (double)i + 1) {
            fail(t, name, n, "item %zu: %g", i, v[i]);
            break;
        }
out:
    if (region)
        kiln_data_region_end(region);
    return 0;
}

static void on_done(kiln_event *e, kiln_event_state st, void *user) {
    (void)e;
    (void)user;
    if (st == KILN_EVENT_COMPLETE)
        atomic_fetch_add(&S.callbacks, 1);
}

typedef int (*step_fn)(tstate *, size_t);
static const step_fn steps[NSTEPS] = { step_sort,   step_topk,   step_select,  step_cumsum,
                                       step_reduce, step_future, step_random,  step_hist,
                                       step_hash,   step_axis,   step_takeput, step_allocate,
                                       step_offload };

/* One step, plus a callback on a marker of the queue every few steps. */
static void run_step(tstate *s, int k, size_t n) {
    steps[k](s, n);
    if (rn(&s->r) % 4 == 0) {
        kiln_event *m = NULL;
        if (kiln_queue_marker(s->q, 0, NULL, &m) == KILN_OK) {
            atomic_fetch_add(&S.callbacks_want, 1);
            if (kiln_event_on_complete(m, on_done, NULL) != KILN_OK)
                fail(s->t, "callback", n, "kiln_event_on_complete failed");
            kiln_event_release(m);
        } else {
            fail(s->t, "callback", n, "kiln_queue_marker failed");
        }
    }
    atomic_fetch_add(&S.steps, 1);
    atomic_store(&S.last_progress, (long)now_s());
}

static void *worker(void *arg) {
    tstate *s = arg;
    /* warm-up: every step at sizes 0, 1, 100 and the largest (so every
     * program is built and the pools have seen the largest blocks) */
    static const size_t warm[] = { 0, 1, 100, MAXN };
    for (int k = 0; k < NSTEPS; k++)
        for (int i = 0; i < 4; i++)
            run_step(s, k, warm[i]);
    /* settling: random steps until main says stop (the allocators' and
     * the driver's own caches grow to their working size here) */
    while (!atomic_load(&S.stop))
        run_step(s, (int)(rn(&s->r) % NSTEPS), rand_size(&s->r));
    pthread_barrier_wait(&S.barrier); /* A: stopped */
    pthread_barrier_wait(&S.barrier); /* A2: the timer starts */
    for (int mark = 0; mark < 2; mark++) {
        long local[NSTEPS] = { 0 };
        while (!atomic_load(&S.stop)) {
            int k = (int)(rn(&s->r) % NSTEPS);
            run_step(s, k, rand_size(&s->r));
            local[k]++;
        }
        pthread_mutex_lock(&S.count_lock);
        for (int k = 0; k < NSTEPS; k++)
            S.step_counts[k] += local[k];
        pthread_mutex_unlock(&S.count_lock);
        pthread_barrier_wait(&S.barrier); /* B/D: stopped, main measures */
        pthread_barrier_wait(&S.barrier); /* C/E: go on */
    }
    return NULL;
}

/* In use + cached over both contexts; *in_use gets the in-use part. */
static size_t pool_bytes(size_t *in_use) {
    size_t total = 0;
    *in_use = 0;
    for (int c = 0; c < 2; c++) {
        kiln_pool_stats ps;
        if (CHECK_OK(kiln_pool_get_stats(S.c[c].ctx, &ps))) {
            total += ps.bytes_in_use + ps.bytes_cached;
            *in_use += ps.bytes_in_use;
        }
    }
    return total;
}

static void *watchdog(void *arg) {
    (void)arg;
    while (atomic_load(&S.stop) != 2) {
        sleep(1);
        if (now_s() - (double)atomic_load(&S.last_progress) > 300) {
            fprintf(stderr, "soak: no step completed for 300 s: a hang\n");
            abort();
        }
    }
    return NULL;
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Waits for the workers to stop (they are at barrier B/D after this). */
static void run_for(double seconds, double tenth) {
    double start = now_s(), end = start + seconds, next = start + tenth;
    while (now_s() < end) {
        usleep(100000);
        if (tenth > 0 && now_s() >= next && now_s() < end - tenth / 2) {
            /* the trend, sampled while the threads run */
            printf("  %5.0f s: RSS %ld KiB, %ld steps of the timed phase\n", now_s() - start,
                   rss_kib(), atomic_load(&S.steps) - S.steps_timed);
            fflush(stdout);
            next += tenth;
        }
    }
    atomic_store(&S.stop, 1);
    pthread_barrier_wait(&S.barrier);
}

static int setup_ctx(ctx_share *c, kiln_device *dev) {
    if (kiln_context_create(&dev, 1, &c->ctx) != KILN_OK ||
        kiln_queue_create(c->ctx, dev, KILN_QUEUE_IN_ORDER, &c->q[0]) != KILN_OK ||
        kiln_queue_create(c->ctx, dev, KILN_QUEUE_IN_ORDER, &c->q[1]) != KILN_OK)
        return 0;
    kiln_elementwise_desc ed =
        KILN_ELEMENTWISE_DESC(.arguments = "int a, const int *x, int *y",
                              .operation = "y[i] = a * x[i] + 1", .name = "soak_axpy");
    kiln_allocate_desc ad =
        KILN_ALLOCATE_DESC(.arguments = "const int *k", .item_type = "int",
                           .operation =
                               "for (int t = 0; t < (int)(i % 3); t++) KILN_EMIT(k[i] + t);",
                           .name = "soak_list");
    pthread_mutex_init(&c->table_lock, NULL);
    if (S.pool_cap &&
        !CHECK_OK(kiln_pool_configure(c->ctx, &KILN_POOL_OPTS(.max_cached_bytes = S.pool_cap))))
        return 0;
    return CHECK_OK(kiln_elementwise_create(c->ctx, &ed, &c->axpy)) &&
           CHECK_OK(kiln_allocate_create(c->ctx, &ad, &c->list)) &&
           CHECK_OK(kiln_offload_create(c->ctx, "double *v, double s", "v[i] = s * v[i] + 1;", 1,
                                        NULL, &c->off)) &&
           CHECK_OK(kiln_rng_create(&KILN_RNG_DESC(.seed = 2026), &c->rng)) &&
           CHECK_OK(kiln_hash_table_create(c->q[0], 4096, KILN_UINT32, KILN_UINT32, &c->table));
}

static void teardown_ctx(ctx_share *c) {
    for (int i = 0; i < 2; i++)
        if (c->q[i])
            CHECK_OK(kiln_queue_finish(c->q[i]));
    kiln_hash_table_release(c->table); /* its own commands go on q[0] */
    for (int i = 0; i < 2; i++)
        kiln_queue_release(c->q[i]);
    KT_RELEASE(c->axpy, c->list, c->off, c->rng);
    pthread_mutex_destroy(&c->table_lock);
    kiln_context_release(c->ctx);
}

/* Fills a capped pool's cache to its cap (pooled blocks of the steps' sizes,
 * 512 B to 64 KiB, made at once and released), so that the timed phase
 * starts with the pools at their working size: random sizes fill a capped
 * cache only over many minutes, and a cache cannot grow past its cap, so
 * growth after this is a leak (docs/fuzzing.md has the runs). */
static void fill_pool_cache(kiln_context *ctx) {
    enum { MAX_BLOCKS = 4096 };
    static kiln_buffer *blocks[MAX_BLOCKS];
    size_t made = 0, bytes = 0;
    while (S.pool_cap && bytes < S.pool_cap + (64u << 10) && made < MAX_BLOCKS) {
        size_t size = (size_t)512 << (made % 8);
        if (!CHECK_OK(kiln_buffer_create(ctx, size, KILN_BUFFER_POOLED, NULL, &blocks[made])))
            break;
        bytes += size;
        made++;
    }
    for (size_t i = 0; i < made; i++)
        kiln_buffer_release(blocks[i]);
}

/* the soak looks for growth: a value may fall, not rise past 5% + slack */
static int no_growth(double end, double base, double slack) {
    return end <= base * 1.05 + slack;
}

static void soak(kiln_queue *queue, void *user) {
    (void)user;
    kiln_device *dev = kiln_queue_device(queue);
    memset(&S.c, 0, sizeof S.c);
    const char *cap = getenv("KILN_SOAK_POOL_CAP_MB");
    S.pool_cap = (size_t)(cap && *cap ? atof(cap) : 4) << 20;
    printf("pool: max_cached_bytes %zu per context (KILN_SOAK_POOL_CAP_MB)\n", S.pool_cap);
    if (!setup_ctx(&S.c[0], dev) || !setup_ctx(&S.c[1], dev)) {
        CHECK_MSG(0, "setting up the shared contexts: %s", kiln_last_error_message());
        return;
    }
    const char *env = getenv("KILN_SOAK_SECONDS");
    S.seconds = env && *env ? atof(env) : 20;
    if (S.seconds < 1)
        S.seconds = 1;
    env = getenv("KILN_SOAK_SETTLE_SECONDS");
    S.settle = env && *env ? atof(env) : 10;
    if (S.settle < 0)
        S.settle = 0;
    pthread_barrier_init(&S.barrier, NULL, NTHREADS + 1);
    pthread_mutex_init(&S.count_lock, NULL);
    atomic_store(&S.last_progress, (long)now_s());
    pthread_t th[NTHREADS], wd;
    tstate ts[NTHREADS];
    uint64_t seed = kt_rand_u64();
    for (int t = 0; t < NTHREADS; t++) {
        tstate *s = &ts[t];
        memset(s, 0, sizeof *s);
        s->t = t;
        s->r.s = seed + 0x9E3779B97F4A7C15ull * (uint64_t)(t + 1);
        s->c = &S.c[t % 2];
        s->q = s->c->q[(t / 2) % 2];
        s->h0 = malloc(MAXN * sizeof *s->h0);
        s->h1 = malloc(MAXN * sizeof *s->h1);
        s->h2 = malloc(MAXN * sizeof *s->h2);
        s->ref = malloc(MAXN * sizeof *s->ref);
        s->l0 = malloc((MAXN + 1) * sizeof *s->l0);
        s->f0 = malloc(MAXN * sizeof *s->f0);
        pthread_create(&th[t], NULL, worker, s);
    }
    pthread_create(&wd, NULL, watchdog, NULL);
    double t0 = now_s();
    /* the warm-up, then settle seconds of random steps */
    while (atomic_load(&S.steps) < NTHREADS * NSTEPS * 4)
        usleep(100000);
    double warm = now_s() - t0;
    sleep((unsigned)S.settle);
    atomic_store(&S.stop, 1);
    pthread_barrier_wait(&S.barrier); /* A */
    for (int c = 0; c < 2; c++)
        fill_pool_cache(S.c[c].ctx);
    atomic_store(&S.stop, 0);
    pthread_barrier_wait(&S.barrier); /* A2 */
    printf("warm-up: %.1f s (every step on every thread), then %.0f s of settling "
           "(KILN_SOAK_SETTLE_SECONDS)\n",
           warm, S.settle);
    long steps0 = atomic_load(&S.steps);
    S.steps_timed = steps0;
    double start = now_s();
    run_for(S.seconds / 10, 0); /* B */
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 2; i++)
            CHECK_OK(kiln_queue_finish(S.c[c].q[i]));
    long rss1 = rss_kib();
    size_t used1 = 0, used2 = 0;
    size_t pool1 = pool_bytes(&used1);
    long steps1 = atomic_load(&S.steps);
    printf("after the first tenth (%.1f s): RSS %ld KiB, pool bytes %zu (in use %zu), "
           "%ld steps\n",
           now_s() - start, rss1, pool1, used1, steps1 - steps0);
    fflush(stdout);
    atomic_store(&S.stop, 0);
    pthread_barrier_wait(&S.barrier);                    /* C */
    run_for(S.seconds - S.seconds / 10, S.seconds / 10); /* D */
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 2; i++)
            CHECK_OK(kiln_queue_finish(S.c[c].q[i]));
    long rss2 = rss_kib();
    size_t pool2 = pool_bytes(&used2);
    long steps2 = atomic_load(&S.steps);
    double took = now_s() - start;
    atomic_store(&S.stop, 2);
    pthread_barrier_wait(&S.barrier); /* E */
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        KT_FREE(ts[t].h0, ts[t].h1, ts[t].h2, ts[t].ref, ts[t].l0, ts[t].f0);
    }
    pthread_join(wd, NULL);
    printf("at the end (%.1f s): RSS %ld KiB (%+.2f%%), pool bytes %zu (%+.2f%%), %ld steps, "
           "%d failures\n",
           took, rss2, 100.0 * (double)(rss2 - rss1) / (double)rss1, pool2,
           pool1 ? 100.0 * ((double)pool2 - (double)pool1) / (double)pool1 : 0.0, steps2 - steps0,
           atomic_load(&S.failures));
    printf("steps:");
    for (int k = 0; k < NSTEPS; k++)
        printf(" %s %ld", step_names[k], S.step_counts[k]);
    printf("\n");
    CHECK_MSG(atomic_load(&S.failures) == 0, "%d steps failed", atomic_load(&S.failures));
    CHECK_MSG(no_growth((double)rss2, (double)rss1, 0), "RSS %ld KiB at the end, %ld after a tenth",
              rss2, rss1);
    /* the pool's cache may still be filling towards its cap after a tenth
     * (its size then depends on the machine's load): growth up to the cap
     * is not a leak; a leak shows in the bytes in use (below) or as a cache
     * past its cap */
    size_t cap2 = 2 * S.pool_cap;
    CHECK_MSG(no_growth((double)pool2, (double)pool1, 65536) || pool2 - used2 <= cap2,
              "pool bytes %zu at the end, %zu after a tenth (cached %zu, cap %zu)", pool2, pool1,
              pool2 - used2, cap2);
    /* at a quiescent point only the long-lived objects (the hash tables)
     * hold pooled blocks: anything more is a leaked buffer */
    CHECK_MSG(used2 == used1, "pooled bytes in use %zu at the end, %zu after a tenth", used2,
              used1);
    for (int k = 0; k < NSTEPS; k++)
        CHECK_MSG(S.step_counts[k] > 0, "step %s never ran in the timed phase", step_names[k]);
    /* every callback runs once its marker has completed (the queues are
     * finished; the callback thread may still be behind) */
    for (int i = 0; i < 300 && atomic_load(&S.callbacks) != atomic_load(&S.callbacks_want); i++)
        usleep(100000);
    CHECK_MSG(atomic_load(&S.callbacks) == atomic_load(&S.callbacks_want), "%ld callbacks of %ld",
              atomic_load(&S.callbacks), atomic_load(&S.callbacks_want));
    teardown_ctx(&S.c[0]);
    teardown_ctx(&S.c[1]);
    pthread_barrier_destroy(&S.barrier);
    pthread_mutex_destroy(&S.count_lock);
}

int main(void) {
    kt_for_each_device(soak, NULL);
    return kt_report();
}
