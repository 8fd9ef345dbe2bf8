/* Memory pools (docs/pools.md): statistics through allocate / release /
 * reuse / peak, size classes, trimming (by request, by the cached limit,
 * after a failed allocation), no reuse of a block that queued work still
 * uses (in-order and out-of-order queues, a queue freed with work pending,
 * a waiting block trimmed), the off switches (option and KILN_POOL=0),
 * pinned blocks, arrays and sub-buffers on pooled memory, the algorithms'
 * scratch, threads sharing a pool, bad input. Each device gets contexts of
 * its own so that the counts are the test's alone. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "harness.h"
#include "testing/kiln_test_internal.h"

#define MIB ((size_t)1 << 20)

static kiln_pool_stats stats(kiln_context *c) {
    kiln_pool_stats s;
    memset(&s, 0xab, sizeof s);
    CHECK_OK(kiln_pool_get_stats(c, &s));
    return s;
}

/* The stats once no block waits (up to 10 s). A release fences itself with
 * markers on every live queue of the context; finishing one queue does not
 * complete the markers on the others, which end a moment later (test_pool
 * failed in CI once checking bytes_waiting == 0 right after a finish). */
static kiln_pool_stats stats_settled(kiln_context *c) {
    kiln_pool_stats s = stats(c);
    for (int ms = 0; s.bytes_waiting > 0 && ms < 10000; ms++) {
        usleep(1000);
        s = stats(c);
    }
    return s;
}

static kiln_buffer *pooled(kiln_context *c, size_t bytes, unsigned flags) {
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(c, bytes, flags | KILN_BUFFER_POOLED, NULL, &b));
    return b;
}

/* Counts, classes, reuse, peak, trim, the cached limit, pinned blocks. */
static void counts(kiln_device *dev) {
    kiln_context *c = NULL;
    kiln_queue *q = NULL;
    if (!CHECK_OK(kiln_context_create(&dev, 1, &c)) || !CHECK_OK(kiln_queue_create(c, dev, 0, &q)))
        goto out;
    kiln_pool_stats s = stats(c);
    CHECK(s.bytes_in_use == 0 && s.bytes_cached == 0 && s.peak_in_use == 0 && s.allocations == 0 &&
          s.hits == 0);

    /* a plain buffer is not pooled */
    kiln_buffer *plain = NULL;
    CHECK_OK(kiln_buffer_create(c, MIB, 0, NULL, &plain));
    kiln_buffer_release(plain);
    s = stats(c);
    CHECK(s.allocations == 0 && s.bytes_cached == 0);

    /* classes: 1 MiB exactly; 1025 bytes -> 1280; 100 -> 512; 5 MiB + 1 -> 6 MiB */
    kiln_buffer *a = pooled(c, MIB, 0);
    CHECK(kiln_buffer_size(a) == MIB);
    s = stats(c);
    CHECK_MSG(s.bytes_in_use == MIB && s.allocations == 1 && s.hits == 0,
              "in use %zu, allocations %llu", s.bytes_in_use, (unsigned long long)s.allocations);
    kiln_buffer *odd = pooled(c, 1025, 0), *tiny = pooled(c, 100, 0),
                *big = pooled(c, 5 * MIB + 1, 0);
    CHECK(kiln_buffer_size(odd) == 1025 && kiln_buffer_size(big) == 5 * MIB + 1);
    s = stats(c);
    CHECK_MSG(s.bytes_in_use == MIB + 1280 + 512 + 6 * MIB, "in use %zu", s.bytes_in_use);
    size_t peak = s.bytes_in_use;
    /* the whole requested range works (write and read back past the class's
     * rounding is refused) */
    unsigned char w[1025], r[1025];
    for (size_t i = 0; i < sizeof w; i++)
        w[i] = (unsigned char)(i * 7 + 1);
    CHECK_OK(kiln_buffer_write(q, odd, 0, sizeof w, w));
    CHECK_OK(kiln_buffer_read(q, odd, 0, sizeof r, r));
    CHECK(memcmp(w, r, sizeof w) == 0);
    CHECK_STATUS(kiln_buffer_read(q, odd, 0, 1026, r), KILN_ERROR_OUT_OF_RANGE);
    KT_RELEASE(odd, tiny, big, a);
    CHECK_OK(kiln_queue_finish(q));
    s = stats(c);
    CHECK_MSG(s.bytes_in_use == 0 && s.bytes_cached == peak && s.bytes_waiting == 0 &&
                  s.peak_in_use == peak,
              "in use %zu, cached %zu, waiting %zu, peak %zu", s.bytes_in_use, s.bytes_cached,
              s.bytes_waiting, s.peak_in_use);

    /* reuse: the same class is a hit, another size class is not */
    a = pooled(c, MIB - 1000, 0); /* class 1 MiB */
    s = stats(c);
    CHECK(s.hits == 1 && s.allocations == 5 && s.bytes_in_use == MIB &&
          s.bytes_cached == peak - MIB);
    kiln_buffer *b = pooled(c, 3 * MIB, 0); /* class 3 MiB: a miss */
    s = stats(c);
    CHECK(s.hits == 1 && s.allocations == 6 && s.bytes_in_use == 4 * MIB);
    CHECK(s.peak_in_use == peak); /* 4 MiB < 8 MiB + 1792 */
    KT_RELEASE(a, b);

    /* trim: keep 4 MiB, then nothing */
    size_t freed = 0, before = stats(c).bytes_cached;
    CHECK_OK(kiln_pool_trim(c, 4 * MIB, &freed));
    s = stats(c);
    CHECK_MSG(s.bytes_cached <= 4 * MIB && freed == before - s.bytes_cached && freed > 0,
              "cached %zu, freed %zu of %zu", s.bytes_cached, freed, before);
    size_t left = s.bytes_cached;
    CHECK_OK(kiln_pool_trim(c, 0, &freed));
    s = stats(c);
    CHECK_MSG(s.bytes_cached == 0 && s.bytes_waiting == 0 && freed == left,
              "cached %zu, waiting %zu, freed %zu of %zu", s.bytes_cached, s.bytes_waiting, freed,
              left);
    CHECK(s.blocks_freed == 5);   /* 1 MiB (a, reused), odd, tiny, big, b */
    CHECK(s.peak_in_use == peak); /* trimming keeps the peak */

    /* the cached limit */
    CHECK_OK(kiln_pool_configure(c, &KILN_POOL_OPTS(.max_cached_bytes = 2 * MIB)));
    kiln_buffer *x[3] = { pooled(c, MIB, 0), pooled(c, MIB, 0), pooled(c, MIB, 0) };
    for (int i = 0; i < 3; i++)
        kiln_buffer_release(x[i]);
    s = stats(c);
    CHECK_MSG(s.bytes_cached <= 2 * MIB && s.bytes_cached > 0, "cached %zu", s.bytes_cached);
    CHECK_OK(kiln_pool_configure(c, &KILN_POOL_OPTS()));

    /* pinned blocks are kept apart */
    CHECK_OK(kiln_pool_trim(c, 0, NULL));
    kiln_buffer *p = pooled(c, 4096, KILN_BUFFER_HOST_PINNED);
    s = stats(c);
    CHECK(s.pinned_bytes_in_use == 4096 && s.bytes_in_use == 4096);
    kiln_buffer_release(p);
    CHECK_OK(kiln_queue_finish(q));
    s = stats(c);
    CHECK(s.pinned_bytes_cached == 4096 && s.pinned_bytes_in_use == 0);
    uint64_t hits = s.hits;
    kiln_buffer *d = pooled(c, 4096, 0); /* device memory: not the pinned block */
    CHECK(stats(c).hits == hits);
    kiln_buffer *p2 = pooled(c, 4000, KILN_BUFFER_HOST_PINNED); /* class 4096 */
    s = stats(c);
    CHECK(s.hits == hits + 1 && s.pinned_bytes_cached == 0 && s.pinned_bytes_in_use == 4096);
    KT_RELEASE(d, p2);

    /* a pooled buffer with initial data is a plain one */
    uint64_t allocations = stats(c).allocations;
    kiln_buffer *h = NULL;
    CHECK_OK(kiln_buffer_create(c, sizeof w, KILN_BUFFER_POOLED, w, &h));
    memset(r, 0, sizeof r);
    CHECK_OK(kiln_buffer_read(q, h, 0, sizeof r, r));
    CHECK(memcmp(w, r, sizeof w) == 0);
    CHECK(stats(c).allocations == allocations);
    kiln_buffer_release(h);

    /* a view keeps its pooled parent's block in use */
    CHECK_OK(kiln_pool_trim(c, 0, NULL));
    kiln_buffer *parent = pooled(c, 8192, 0), *view = NULL;
    CHECK_OK(kiln_buffer_create_sub(parent, 4096, 1024, &view));
    kiln_buffer_release(parent);
    CHECK(stats(c).bytes_in_use == 8192);
    kiln_buffer_release(view);
    CHECK_OK(kiln_queue_finish(q));
    s = stats(c);
    CHECK(s.bytes_in_use == 0 && s.bytes_cached == 8192);

    /* arrays are pooled */
    allocations = stats(c).allocations;
    kiln_array *arr = NULL;
    size_t n = 1000;
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &arr));
    CHECK(stats(c).allocations == allocations + 1);
    kiln_array_release(arr);
out:
    kiln_queue_release(q);
    kiln_context_release(c); /* frees the cache (LeakSanitizer checks) */
}

/* A block released while queued work still uses it is not handed out
 * before that work has ended. Queue g is gated behind a user event: it
 * fills a (released at once) and copies it to keep; a new array of the
 * same class, filled and read on queue o while the gate is shut, must be
 * other memory, and stays intact when the gated fill runs. */
static void no_early_reuse(kiln_device *dev) {
    kiln_context *c = NULL;
    kiln_queue *g = NULL, *o = NULL;
    kiln_event *gate = NULL;
    if (!CHECK_OK(kiln_context_create(&dev, 1, &c)) ||
        !CHECK_OK(kiln_queue_create(c, dev, 0, &g)) ||
        !CHECK_OK(kiln_queue_create(c, dev, 0, &o)) || !CHECK_OK(kiln_event_create_user(c, &gate)))
        goto out;
    size_t n = MIB / 4 + 3; /* an awkward size */
    kiln_array *a = NULL, *keep = NULL, *b = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &a));
    CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &keep));
    uint32_t seven = 7, nine = 9;
    CHECK_OK(kiln_array_fill(g, a, KILN_ARG_U32(seven), 1, &gate, NULL));
    CHECK_OK(kiln_array_copy_out(g, keep, a, 0, NULL, NULL));
    kiln_array_release(a); /* the gated work still uses it */
    kiln_pool_stats s = stats(c);
    CHECK_MSG(s.bytes_waiting > 0 && s.bytes_waiting == s.bytes_cached, "waiting %zu, cached %zu",
              s.bytes_waiting, s.bytes_cached);
    uint64_t hits = s.hits;
    CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &b));
    CHECK_MSG(stats(c).hits == hits, "a block behind the gate was handed out");
    uint32_t *host = malloc(n * sizeof *host);
    if (!host)
        goto out;
    CHECK_OK(kiln_array_fill(o, b, KILN_ARG_U32(nine), 0, NULL, NULL));
    CHECK_OK(kiln_array_read(o, b, host));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += host[i] != 9;
    CHECK_MSG(bad == 0, "before the gate: %zu wrong", bad);
    /* open the gate: a = 7, keep = a */
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_queue_finish(g));
    CHECK_OK(kiln_queue_finish(o));
    CHECK_OK(kiln_array_read(o, b, host));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += host[i] != 9;
    CHECK_MSG(bad == 0, "b after the gated fill: %zu wrong (aliased a)", bad);
    CHECK_OK(kiln_array_read(o, keep, host));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += host[i] != 7;
    CHECK_MSG(bad == 0, "a's gated result: %zu wrong", bad);
    free(host);
    /* the work ended: the block is ready and the next one reuses it */
    s = stats_settled(c);
    CHECK_MSG(s.bytes_waiting == 0 && s.bytes_cached > 0, "waiting %zu, cached %zu",
              s.bytes_waiting, s.bytes_cached);
    kiln_array *again = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &again));
    CHECK(stats(c).hits == hits + 1);
    KT_RELEASE(again, b, keep);

    /* a queue freed with work pending still fences later releases */
    kiln_event *gate2 = NULL;
    kiln_queue *t = NULL;
    if (CHECK_OK(kiln_event_create_user(c, &gate2)) && CHECK_OK(kiln_queue_create(c, dev, 0, &t))) {
        CHECK_OK(kiln_pool_trim(c, 0, NULL)); /* no other block of the class */
        kiln_array *d = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &d));
        CHECK_OK(kiln_array_fill(t, d, KILN_ARG_U32(seven), 1, &gate2, NULL));
        kiln_queue_release(t); /* its last work waits for gate2 */
        kiln_array_release(d);
        s = stats(c);
        CHECK_MSG(s.bytes_waiting > 0, "released behind a freed queue: waiting %zu",
                  s.bytes_waiting);
        hits = s.hits;
        kiln_array *e = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &e));
        CHECK(stats(c).hits == hits);
        kiln_array_release(e);
        CHECK_OK(kiln_event_set_complete(gate2, KILN_EVENT_COMPLETE));
        CHECK_OK(kiln_event_wait(gate2));
    }
    kiln_event_release(gate2);

    /* trimming frees a waiting block: the driver keeps its memory until the
     * gated work has run */
    kiln_event *gate3 = NULL;
    if (CHECK_OK(kiln_event_create_user(c, &gate3))) {
        CHECK_OK(kiln_pool_trim(c, 0, NULL));
        kiln_array *f = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &f));
        CHECK_OK(kiln_array_fill(g, f, KILN_ARG_U32(seven), 1, &gate3, NULL));
        kiln_array_release(f);
        CHECK(stats(c).bytes_waiting > 0);
        size_t freed = 0;
        CHECK_OK(kiln_pool_trim(c, 0, &freed));
        s = stats(c);
        CHECK(freed > 0 && s.bytes_cached == 0 && s.bytes_waiting == 0);
        CHECK_OK(kiln_event_set_complete(gate3, KILN_EVENT_COMPLETE));
        CHECK_OK(kiln_queue_finish(g));
    }
    kiln_event_release(gate3);

    /* an out-of-order queue: the fence waits for all its earlier commands */
    kiln_queue *ooo = NULL;
    kiln_event *gate4 = NULL;
    kiln_status made = kiln_queue_create(c, dev, KILN_QUEUE_OUT_OF_ORDER, &ooo);
    if (made == KILN_OK && CHECK_OK(kiln_event_create_user(c, &gate4))) {
        CHECK_OK(kiln_pool_trim(c, 0, NULL));
        kiln_array *h = NULL, *other = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &h));
        CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &other));
        CHECK_OK(kiln_array_fill(ooo, h, KILN_ARG_U32(seven), 1, &gate4, NULL));  /* gated */
        CHECK_OK(kiln_array_fill(ooo, other, KILN_ARG_U32(nine), 0, NULL, NULL)); /* free to run */
        kiln_array_release(h);
        s = stats(c);
        hits = s.hits;
        CHECK_MSG(s.bytes_waiting > 0, "out of order: waiting %zu", s.bytes_waiting);
        kiln_array *k = NULL;
        CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &k));
        CHECK(stats(c).hits == hits);
        KT_RELEASE(k, other);
        CHECK_OK(kiln_event_set_complete(gate4, KILN_EVENT_COMPLETE));
        CHECK_OK(kiln_queue_finish(ooo));
        CHECK(stats_settled(c).bytes_waiting == 0);
    } else if (made != KILN_OK) {
        CHECK_STATUS(made, KILN_ERROR_UNSUPPORTED);
    }
    KT_RELEASE(gate4, ooo);
out:
    KT_RELEASE(gate, g, o, c);
}

/* The off switches, a failed allocation that trims and retries, bad input. */
static void switches(kiln_device *dev) {
    kiln_context *c = NULL;
    if (!CHECK_OK(kiln_context_create(&dev, 1, &c)))
        return;
    kiln_buffer *b = pooled(c, MIB, 0);
    kiln_buffer_release(b);
    CHECK(stats(c).bytes_cached == MIB);
    CHECK_OK(kiln_pool_configure(c, &KILN_POOL_OPTS(.disabled = 1)));
    kiln_pool_stats s = stats(c);
    CHECK(s.bytes_cached == 0);
    b = pooled(c, MIB, 0);
    CHECK(stats(c).allocations == s.allocations && stats(c).bytes_in_use == 0);
    kiln_buffer_release(b);
    CHECK(stats(c).bytes_cached == 0);
    /* on again; a block allocated while on and released while off is freed */
    CHECK_OK(kiln_pool_configure(c, &KILN_POOL_OPTS(.disabled = 0)));
    b = pooled(c, MIB, 0);
    CHECK(stats(c).bytes_in_use == MIB);
    CHECK_OK(kiln_pool_configure(c, &KILN_POOL_OPTS(.disabled = 1)));
    kiln_buffer_release(b);
    s = stats(c);
    CHECK(s.bytes_in_use == 0 && s.bytes_cached == 0);
    CHECK_OK(kiln_pool_configure(c, &KILN_POOL_OPTS()));

    /* out of memory: the cache is emptied and the allocation retried once */
    b = pooled(c, MIB, 0);
    kiln_buffer_release(b);
    CHECK(stats(c).bytes_cached == MIB);
    kiln__fault_arm(KILN__FAULT_DEVICE_ALLOC, 1);
    b = pooled(c, 3 * MIB, 0);
    kiln__fault_arm(KILN__FAULT_DEVICE_ALLOC, 0);
    s = stats(c);
    CHECK(b != NULL && s.oom_retries == 1 && s.bytes_cached == 0 && s.bytes_in_use == 3 * MIB);
    kiln_buffer_release(b);
    CHECK_OK(kiln_pool_trim(c, 0, NULL));
    /* nothing cached: the failure stands */
    kiln__fault_arm(KILN__FAULT_DEVICE_ALLOC, 1);
    kiln_buffer *none = NULL;
    CHECK_STATUS(kiln_buffer_create(c, MIB, KILN_BUFFER_POOLED, NULL, &none),
                 KILN_ERROR_OUT_OF_DEVICE_MEMORY);
    kiln__fault_arm(KILN__FAULT_DEVICE_ALLOC, 0);
    CHECK(none == NULL && stats(c).oom_retries == 1 && stats(c).bytes_in_use == 0);

    /* bad input */
    CHECK_STATUS(kiln_pool_get_stats(NULL, &s), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_pool_get_stats(c, (kiln_pool_stats *)NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS((kiln_pool_get_stats)(c, &s, 8), KILN_ERROR_INVALID_ARGUMENT);
    size_t freed = 99;
    CHECK_STATUS(kiln_pool_trim(NULL, 0, &freed), KILN_ERROR_NULL_HANDLE);
    CHECK(freed == 0);
    CHECK_STATUS(kiln_pool_configure(NULL, &KILN_POOL_OPTS()), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_pool_configure(c, NULL), KILN_ERROR_NULL_HANDLE);
    kiln_pool_opts raw;
    memset(&raw, 0, sizeof raw);
    CHECK_STATUS(kiln_pool_configure(c, &raw), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "KILN_POOL_OPTS") != NULL);
    CHECK_STATUS(kiln_pool_configure(c, &KILN_POOL_OPTS(.disabled = 2)),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_buffer_create(c, MIB, 16, NULL, &none), KILN_ERROR_INVALID_ARGUMENT);
    /* an older caller's smaller struct gets its prefix */
    size_t small = offsetof(kiln_pool_stats, oom_retries) + sizeof s.oom_retries;
    CHECK_OK((kiln_pool_get_stats)(c, &s, small));
    kiln_context_release(c);

    /* KILN_POOL=0: contexts made afterwards do not pool */
    setenv("KILN_POOL", "0", 1);
    kiln_context *off = NULL;
    if (CHECK_OK(kiln_context_create(&dev, 1, &off))) {
        b = pooled(off, MIB, 0);
        kiln_buffer_release(b);
        s = stats(off);
        CHECK(s.allocations == 0 && s.bytes_cached == 0);
        kiln_context_release(off);
    }
    unsetenv("KILN_POOL");
}

/* Threads sharing a context's pool, each on its own queue: arrays of
 * varied sizes, filled with the thread's own values; every other one is
 * released while its fill may still be queued. A block handed out while
 * another thread's fill still wrote it would show in the read-back. */
#define NTHREADS 4
#define ROUNDS 40
typedef struct {
    kiln_context *c;
    kiln_device *dev;
    unsigned t;
    size_t bad;
    kiln_status st;
} job;

static void *worker(void *arg) {
    job *j = arg;
    kiln_queue *q = NULL;
    j->st = kiln_queue_create(j->c, j->dev, 0, &q);
    uint32_t *host = malloc(200000 * sizeof *host);
    if (!host && j->st == KILN_OK)
        j->st = KILN_ERROR_OUT_OF_HOST_MEMORY;
    for (unsigned i = 0; i < ROUNDS && j->st == KILN_OK; i++) {
        size_t n = (i * 7919u + j->t * 104729u) % 200000u + 1;
        uint32_t v = j->t * 1000u + i;
        kiln_array *a = NULL;
        j->st = kiln_array_empty(j->c, KILN_UINT32, 1, &n, &a);
        if (j->st == KILN_OK)
            j->st = kiln_array_fill(q, a, KILN_ARG_U32(v), 0, NULL, NULL);
        if (j->st == KILN_OK && i % 2 == 0) {
            j->st = kiln_array_read(q, a, host);
            for (size_t k = 0; j->st == KILN_OK && k < n; k++)
                j->bad += host[k] != v;
        }
        kiln_array_release(a);
    }
    if (q && j->st == KILN_OK)
        j->st = kiln_queue_finish(q);
    free(host);
    kiln_queue_release(q);
    return NULL;
}

static void threads(kiln_device *dev) {
    kiln_context *c = NULL;
    if (!CHECK_OK(kiln_context_create(&dev, 1, &c)))
        return;
    job jobs[NTHREADS];
    pthread_t th[NTHREADS];
    for (unsigned t = 0; t < NTHREADS; t++) {
        jobs[t] = (job){ .c = c, .dev = dev, .t = t };
        CHECK(pthread_create(&th[t], NULL, worker, &jobs[t]) == 0);
    }
    for (unsigned t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK_MSG(jobs[t].st == KILN_OK && jobs[t].bad == 0, "thread %u: %s, %zu wrong", t,
                  kiln_status_name(jobs[t].st), jobs[t].bad);
    }
    /* A release fences itself with markers on every live queue, other
     * threads' finished queues included: nobody waits for those, so they
     * complete a moment later: a check of bytes_waiting == 0 at once races
     * them (test_pool failed once in a loaded full ctest -j2 on PoCL; which
     * check was not kept, and this is the one that can race). Waiting
     * blocks must become ready, not at once. */
    kiln_pool_stats s = stats_settled(c);
    CHECK_MSG(s.bytes_in_use == 0 && s.allocations == NTHREADS * ROUNDS && s.hits > 0 &&
                  s.bytes_waiting == 0,
              "in use %zu, allocations %llu, hits %llu, waiting %zu", s.bytes_in_use,
              (unsigned long long)s.allocations, (unsigned long long)s.hits, s.bytes_waiting);
    kiln_context_release(c);
}

/* The algorithms' scratch and temporaries come from the pool too. */
static void algorithms(kiln_device *dev) {
    kiln_context *c = NULL;
    kiln_queue *q = NULL;
    if (!CHECK_OK(kiln_context_create(&dev, 1, &c)) || !CHECK_OK(kiln_queue_create(c, dev, 0, &q)))
        goto out;
    size_t n = 100003;
    kiln_array *x = NULL, *sorted = NULL;
    CHECK_OK(kiln_array_arange(q, KILN_INT32, n, (double)n, -1.0, 0, NULL, NULL, &x));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &sorted));
    uint64_t arrays = stats(c).allocations;
    CHECK(arrays == 2);
    union {
        int32_t i32;
        int64_t i64;
    } sum = { 0 };
    kiln_dtype rd = kiln_dtype_reduce_result(KILN_REDUCE_SUM, KILN_INT32);
    CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_SUM, x, &sum));
    int64_t want = (int64_t)n * (int64_t)(n + 1) / 2;
    CHECK_MSG(rd == KILN_INT64 ? sum.i64 == want : sum.i32 == (int32_t)(uint32_t)want,
              "sum: dtype %d", (int)rd);
    CHECK_OK(kiln_array_sort_out(q, sorted, NULL, x, NULL, NULL, 0, NULL, NULL));
    int32_t first[4] = { 0 };
    CHECK_OK(kiln_queue_finish(q));
    kiln_array *head = NULL;
    kiln_slice sl = KILN_SLICE(0, 4, 1);
    CHECK_OK(kiln_array_view(sorted, &sl, &head));
    CHECK_OK(kiln_array_read(q, head, first));
    CHECK(first[0] == 1 && first[1] == 2 && first[3] == 4);
    kiln_array_release(head);
    kiln_pool_stats s = stats(c);
    CHECK_MSG(s.allocations > arrays,
              "the reduction and the sort allocated nothing pooled "
              "(%llu allocations)",
              (unsigned long long)s.allocations);
    KT_RELEASE(x, sorted);
out:
    KT_RELEASE(q, c);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_device *dev = kiln_queue_device(q);
    counts(dev);
    no_early_reuse(dev);
    switches(dev);
    threads(dev);
    algorithms(dev);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
