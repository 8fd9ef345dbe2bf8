/* monte_carlo_pi — pi from random points in the unit square, as one
 * reduction: each index i draws its own point (x, y) from kiln's
 * counter-based generator (kiln_rand_uniform_n: Philox4x32-10 with
 * substream i), so the count is the same on every device and launch shape.
 * Usage: monte_carlo_pi [device] [points] [seed]. The host recounts the
 * same points with kiln_rng_philox4x32_10 and checks the count is identical.
 * Build: cc monte_carlo_pi.c $(pkg-config --cflags --libs kiln) -lm */
#include <kiln.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define PI 3.14159265358979323846
#define TRY(call)                                                               \
    do {                                                                        \
        if ((call) != KILN_OK) {                                                \
            fprintf(stderr, "monte_carlo_pi: %s\n", kiln_last_error_message()); \
            goto fail;                                                          \
        }                                                                       \
    } while (0)

/* The host's count of the same points (the reference). */
static long long host_count(unsigned long long seed, size_t n) {
    long long hits = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t ctr[4] = { 0, 0, (uint32_t)i, (uint32_t)((uint64_t)i >> 32) };
        uint32_t key[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) }, w[4];
        kiln_rng_philox4x32_10(ctr, key, w);
        float x = (float)(w[0] >> 8) * 0x1p-24f, y = (float)(w[1] >> 8) * 0x1p-24f;
        hits += x * x + y * y < 1.0f;
    }
    return hits;
}

int main(int argc, char **argv) {
    const char *device = argc > 1 && argv[1][0] ? argv[1] : NULL;
    long long points = argc > 2 ? atoll(argv[2]) : 1 << 22;
    unsigned long long seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 2026;
    if (points < 1) {
        fprintf(stderr, "monte_carlo_pi: points must be >= 1\n");
        return 1;
    }
    size_t n = (size_t)points;
    kiln_queue *q = NULL;
    kiln_reduction *red = NULL;
    kiln_array *idx = NULL;
    TRY(kiln_queue_create_default(device, KILN_QUEUE_IN_ORDER, &q));
    /* The one line: hits = sum over i of [x_i^2 + y_i^2 < 1]. The array only
     * gives the index range [0, n) (generators take their range from it). */
    kiln_reduction_desc d = KILN_REDUCTION_DESC(
            .arguments = "ulong seed, const uchar *point", .out_type = "long", .neutral = "0",
            .reduce = "a + b",
            .map = "kiln_rand_uniform_n(seed, i, 0) * kiln_rand_uniform_n(seed, i, 0) + "
                   "kiln_rand_uniform_n(seed, i, 1) * kiln_rand_uniform_n(seed, i, 1) < 1.0f");
    TRY(kiln_reduction_create(kiln_queue_context(q), &d, &red));
    TRY(kiln_array_zeros(q, KILN_UINT8, 1, &n, 0, NULL, NULL, &idx));
    long long hits = 0;
    kiln_arg args[] = { KILN_ARG_U64(seed), KILN_ARG_ARRAY(idx) };
    TRY(kiln_reduction_run(q, red, n, 2, args, &hits));
    long long want = host_count(seed, n);
    double pi = 4.0 * (double)hits / (double)n;
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    printf("monte_carlo_pi: %zu points, seed %llu on %s: pi ~ %.6f (error %.2e), "
           "%lld hits, host %lld: %s\n",
           n, seed, info.name, pi, fabs(pi - PI), hits, want, hits == want ? "OK" : "MISMATCH");
    kiln_array_release(idx);
    kiln_reduction_release(red);
    kiln_queue_release(q);
    return hits == want ? 0 : 1;
fail:
    kiln_array_release(idx);
    kiln_reduction_release(red);
    kiln_queue_release(q);
    return 1;
}
