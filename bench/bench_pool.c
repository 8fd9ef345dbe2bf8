/* Many short-lived arrays with and without the memory pool (docs/pools.md).
 *
 *   bench_pool [iterations [bytes [device]]]     (default 10000, 1 MiB)
 *
 * Each iteration allocates an array of `bytes`, fills it on the queue (its
 * use) and releases it. "async" waits only every 64 iterations (a pipeline
 * 64 deep: released arrays are still used by queued fills, so their blocks
 * wait for the next finish before they are reused); "sync" reads one
 * element back each iteration (the work has ended by the next
 * allocation). Each mode runs with the pool off
 * (kiln_pool_configure .disabled = 1) and on, in fresh contexts, after one
 * warm-up round; the best of three runs is printed with the ratio and the
 * pool's hit rate and what it keeps cached at the end. */
#include <stdio.h>
#include <stdlib.h>

#include "bench_timing.h"
#include "kiln.h"

static int fail(const char *what, kiln_status st) {
    fprintf(stderr, "%s: %s: %s\n", what, kiln_status_name(st), kiln_last_error_message());
    return 1;
}

/* Seconds for n iterations on a fresh context; stats filled at the end. */
static int run(kiln_device *dev, int pool, int sync, size_t n, size_t bytes, double *secs,
               kiln_pool_stats *stats) {
    kiln_context *c = NULL;
    kiln_queue *q = NULL;
    kiln_status st = kiln_context_create(&dev, 1, &c);
    if (st == KILN_OK)
        st = kiln_queue_create(c, dev, 0, &q);
    if (st == KILN_OK && !pool)
        st = kiln_pool_configure(c, &KILN_POOL_OPTS(.disabled = 1));
    size_t elems = bytes / sizeof(float);
    float one = 1, back = 0;
    /* warm up: builds the fill kernel, touches the allocator */
    for (size_t i = 0; i < 8 && st == KILN_OK; i++) {
        kiln_array *a = NULL;
        st = kiln_array_empty(c, KILN_FLOAT32, 1, &elems, &a);
        if (st == KILN_OK)
            st = kiln_array_fill(q, a, KILN_ARG_F32(one), 0, NULL, NULL);
        kiln_array_release(a);
    }
    if (st == KILN_OK)
        st = kiln_queue_finish(q);
    double t0 = bench_now();
    for (size_t i = 0; i < n && st == KILN_OK; i++) {
        kiln_array *a = NULL;
        st = kiln_array_empty(c, KILN_FLOAT32, 1, &elems, &a);
        if (st == KILN_OK)
            st = kiln_array_fill(q, a, KILN_ARG_F32(one), 0, NULL, NULL);
        if (st == KILN_OK && sync)
            st = kiln_buffer_read(q, kiln_array_buffer(a), 0, sizeof back, &back);
        kiln_array_release(a);
        if (st == KILN_OK && !sync && i % 64 == 63)
            st = kiln_queue_finish(q);
    }
    if (st == KILN_OK)
        st = kiln_queue_finish(q);
    *secs = bench_now() - t0;
    if (st == KILN_OK)
        st = kiln_pool_get_stats(c, stats);
    kiln_queue_release(q);
    kiln_context_release(c);
    return st == KILN_OK ? 0 : fail(pool ? "pool on" : "pool off", st);
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000;
    size_t bytes = argc > 2 ? strtoull(argv[2], NULL, 10) : (size_t)1 << 20;
    kiln_device *dev = NULL;
    kiln_status st = kiln_device_select(argc > 3 ? argv[3] : NULL, &dev);
    if (st != KILN_OK)
        return fail("kiln_device_select", st);
    kiln_device_info info;
    kiln_device_get_info(dev, &info);
    printf("device %s (%s); %zu x (allocate %zu bytes, fill, release)\n", info.id, info.name, n,
           bytes);
    printf("%-6s %10s %10s %7s %9s %9s %7s %11s\n", "mode", "off_s", "on_s", "ratio", "us/it_off",
           "us/it_on", "hits%", "cached_MiB");
    for (int sync = 0; sync < 2; sync++) {
        double best[2] = { 1e30, 1e30 };
        kiln_pool_stats s = { 0 };
        for (int rep = 0; rep < 3; rep++)
            for (int pool = 0; pool < 2; pool++) {
                double t;
                kiln_pool_stats got = { 0 };
                if (run(dev, pool, sync, n, bytes, &t, &got))
                    return 1;
                if (t < best[pool])
                    best[pool] = t;
                if (pool)
                    s = got;
            }
        printf("%-6s %10.4f %10.4f %7.2f %9.2f %9.2f %7.1f %11.1f\n", sync ? "sync" : "async",
               best[0], best[1], best[0] / best[1], best[0] / (double)n * 1e6,
               best[1] / (double)n * 1e6,
               s.allocations ? 100.0 * (double)s.hits / (double)s.allocations : 0.0,
               (double)s.bytes_cached / 1048576.0);
    }
    return 0;
}
