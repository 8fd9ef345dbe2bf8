/* polygon_mask — the exercise of the seeds (J. Kieffer's "High Performance
 * computing with Python"): the 1024x1024 uint8 mask of the pixels inside a
 * random 24-edge polygon, by the even-odd rule, one work-item per pixel.
 * Each work-item casts a horizontal ray from its pixel centre and counts the
 * polygon edges it crosses (the naive kernel of the seeds); an odd count
 * means inside. The device's mask is checked against a serial C loop.
 *
 * usage: polygon_mask [SEED [SELECTOR]]     (device also from $KILN_DEVICE)
 *
 * Exactness: vertices sit on the integer grid and pixel centres at
 * half-integers, so in doubled coordinates everything is an integer and the
 * crossing test is exact integer arithmetic. The device and the host then
 * agree bit for bit, whatever the device's floating-point rounding. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <kiln.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SIDE 1024 /* the mask is SIDE x SIDE pixels */
#define EDGES 24

static const char *source =
    "/* v: 2*EDGES ints, the vertices (x, y) in doubled coordinates. */\n"
    "KILN_KERNEL void polygon_mask(KILN_GLOBAL const int *v, int edges, int width,\n"
    "                              int height, KILN_GLOBAL unsigned char *mask) {\n"
    "    int x = (int)kiln_global_id(0), y = (int)kiln_global_id(1);\n"
    "    if (x >= width || y >= height)\n"
    "        return;\n"
    "    int px = 2 * x + 1, py = 2 * y + 1; /* the pixel centre, doubled */\n"
    "    int inside = 0;\n"
    "    for (int i = 0, j = edges - 1; i < edges; j = i++) {\n"
    "        int xi = v[2 * i], yi = v[2 * i + 1], xj = v[2 * j], yj = v[2 * j + 1];\n"
    "        if ((yi > py) != (yj > py)) {\n"
    "            /* The edge crosses the ray's line; count it if the crossing\n"
    "             * lies right of the pixel: px < xi + (py-yi)(xj-xi)/(yj-yi). */\n"
    "            int lhs = (px - xi) * (yj - yi), rhs = (py - yi) * (xj - xi);\n"
    "            if (yj > yi ? lhs < rhs : lhs > rhs)\n"
    "                inside ^= 1;\n"
    "        }\n"
    "    }\n"
    "    mask[y * width + x] = (unsigned char)inside;\n"
    "}\n";

/* The same test, serially on the host: the reference. */
static void mask_serial(const int *v, int edges, int width, int height, unsigned char *mask) {
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            int px = 2 * x + 1, py = 2 * y + 1, inside = 0;
            for (int i = 0, j = edges - 1; i < edges; j = i++) {
                int xi = v[2 * i], yi = v[2 * i + 1], xj = v[2 * j], yj = v[2 * j + 1];
                if ((yi > py) != (yj > py)) {
                    int lhs = (px - xi) * (yj - yi), rhs = (py - yi) * (xj - xi);
                    if (yj > yi ? lhs < rhs : lhs > rhs)
                        inside ^= 1;
                }
            }
            mask[y * width + x] = (unsigned char)inside;
        }
}

/* xorshift64*: the same polygon for the same seed on every machine. */
static uint64_t rng_state;
static double rng_unit(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A random star-shaped polygon: EDGES vertices at random angles around the
 * centre, sorted by angle, at random radii; in doubled coordinates. */
static void random_polygon(uint64_t seed, int *v) {
    double angle[EDGES];
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < EDGES; i++)
        angle[i] = 2.0 * 3.14159265358979323846 * rng_unit();
    qsort(angle, EDGES, sizeof angle[0], cmp_double);
    for (int i = 0; i < EDGES; i++) {
        double r = (0.15 + 0.85 * rng_unit()) * (SIDE / 2 - 8);
        v[2 * i] = 2 * (int)lround(SIDE / 2 + r * cos(angle[i]));
        v[2 * i + 1] = 2 * (int)lround(SIDE / 2 + r * sin(angle[i]));
    }
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#define TRY(call)                                                             \
    do {                                                                      \
        if ((call) != KILN_OK) {                                              \
            fprintf(stderr, "polygon_mask: %s\n", kiln_last_error_message()); \
            return 1;                                                         \
        }                                                                     \
    } while (0)

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 2014;
    const char *selector = argc > 2 ? argv[2] : NULL;
    int v[2 * EDGES];
    random_polygon(seed, v);
    static unsigned char mask[SIDE * SIDE], want[SIDE * SIDE];

    kiln_queue *q;
    kiln_buffer *dv, *dmask;
    kiln_program *prog;
    kiln_kernel *k;
    kiln_device_info info;
    TRY(kiln_queue_create_default(selector, KILN_QUEUE_PROFILING, &q));
    TRY(kiln_device_get_info(kiln_queue_device(q), &info));
    kiln_context *ctx = kiln_queue_context(q);
    TRY(kiln_buffer_create(ctx, sizeof v, KILN_BUFFER_READ_ONLY, v, &dv));
    TRY(kiln_buffer_create(ctx, sizeof mask, KILN_BUFFER_WRITE_ONLY, NULL, &dmask));
    double t0 = now_ms();
    TRY(kiln_program_create(ctx, source, NULL, &prog));
    double build_ms = now_ms() - t0;
    int cached = kiln_program_from_cache(prog, kiln_queue_device(q));
    TRY(kiln_kernel_create(prog, "polygon_mask", &k));

    kiln_arg args[] = { KILN_ARG_BUF(dv), KILN_ARG_I32(EDGES), KILN_ARG_I32(SIDE),
                        KILN_ARG_I32(SIDE), KILN_ARG_BUF(dmask) };
    size_t global[2] = { SIDE, SIDE };
    /* The first launch warms up; the best of the next five is reported, by
     * the device's own clock (profiling) and by the host's (launch + wait). */
    double best_kernel = 1e30, best_host = 1e30;
    for (int rep = 0; rep < 6; rep++) {
        kiln_event *ev;
        kiln_event_times t;
        double h0 = now_ms();
        TRY(kiln_kernel_launch(q, k, 2, global, NULL, 5, args, 0, NULL, &ev));
        TRY(kiln_event_wait(ev));
        double host = now_ms() - h0;
        TRY(kiln_event_get_times(ev, &t));
        kiln_event_release(ev);
        double kernel = (double)(t.ended - t.started) / 1e6;
        if (rep > 0 && kernel < best_kernel)
            best_kernel = kernel;
        if (rep > 0 && host < best_host)
            best_host = host;
    }
    TRY(kiln_buffer_read(q, dmask, 0, sizeof mask, mask));

    t0 = now_ms();
    mask_serial(v, EDGES, SIDE, SIDE, want);
    double serial_ms = now_ms() - t0;

    long inside = 0, bad = 0;
    for (int i = 0; i < SIDE * SIDE; i++) {
        inside += want[i];
        if (mask[i] != want[i] && bad++ < 10)
            fprintf(stderr, "mismatch at pixel (x=%d, y=%d): device %d, host %d\n", i % SIDE,
                    i / SIDE, mask[i], want[i]);
    }
    printf("polygon_mask: %dx%d pixels, %d-edge polygon (seed %llu), %ld inside\n", SIDE, SIDE,
           EDGES, (unsigned long long)seed, inside);
    printf("  device:      %s (%s)\n", info.name, info.id);
    printf("  build:       %.1f ms%s\n", build_ms, cached ? " (from the cache)" : "");
    printf("  kernel:      %.3f ms (device clock), %.3f ms launch to completion\n", best_kernel,
           best_host);
    printf("  serial C:    %.3f ms (one host core)\n", serial_ms);
    printf("  check:       %s", bad ? "MISMATCH" : "OK, identical to the serial loop\n");
    if (bad)
        printf(": %ld of %d pixels differ\n", bad, SIDE * SIDE);

    kiln_kernel_release(k);
    kiln_program_release(prog);
    kiln_buffer_release(dv);
    kiln_buffer_release(dmask);
    kiln_queue_release(q);
    return bad ? 1 : 0;
}
