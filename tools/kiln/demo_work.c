/* The demo's workloads: host versions (serial C, OpenMP C) and the kiln
 * host code that runs the kernels of demo_kernels.h. See demo_work.h. */
#include "demo_work.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "demo_kernels.h"

/* Must match the kernels' MAX_VERTS and ROW_INTS. */
#define DEMO_ROW_INTS (2 * DEMO_MAX_VERTS + 4)

double demo_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int demo_have_openmp(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 0;
#endif
}

uint64_t demo_rand_u64(uint64_t *state) {
    uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ULL;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

double demo_rand_unit(uint64_t *state) {
    return (double)(demo_rand_u64(state) >> 11) * (1.0 / 9007199254740992.0);
}

void demo_polygon_set(demo_polygon *poly, int n, const double *x,
                      const double *y) {
    if (n > DEMO_MAX_VERTS)
        n = DEMO_MAX_VERTS;
    poly->n = n < 0 ? 0 : n;
    for (int i = 0; i < poly->n; i++) {
        poly->x[i] = x[i];
        poly->y[i] = y[i];
        poly->xf[i] = (float)x[i];
        poly->yf[i] = (float)y[i];
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void demo_polygon_random(demo_polygon *poly, int n, int width, int height,
                         uint64_t *state) {
    double ang[DEMO_MAX_VERTS], x[DEMO_MAX_VERTS], y[DEMO_MAX_VERTS];
    if (n > DEMO_MAX_VERTS)
        n = DEMO_MAX_VERTS;
    for (int i = 0; i < n; i++)
        ang[i] = 2.0 * 3.14159265358979323846 * demo_rand_unit(state);
    qsort(ang, (size_t)n, sizeof ang[0], cmp_double);
    for (int i = 0; i < n; i++) {
        double r = 0.15 + 0.35 * demo_rand_unit(state); /* of the image */
        x[i] = 0.5 * width + r * width * cos(ang[i]);
        y[i] = 0.5 * height + r * height * sin(ang[i]);
    }
    demo_polygon_set(poly, n, x, y);
}

/* ------------------------------------------------------------ host mask */

/* The seeds' insidePolygon, written once for float and once for double;
 * the same operations in the same order as the kernel. */
#define DEFINE_INSIDE(NAME, REAL)                                              \
    static int NAME(const REAL *vx, const REAL *vy, int n, REAL px,            \
                    REAL py) {                                                 \
        int counter = 0;                                                       \
        for (int i = 0; i < n; i++) {                                          \
            int j = i + 1 == n ? 0 : i + 1;                                    \
            REAL x1 = vx[i], y1 = vy[i], x2 = vx[j], y2 = vy[j];               \
            if (x1 == px && y1 == py)                                          \
                return 1;                                                      \
            if (py > (y1 < y2 ? y1 : y2) && py <= (y1 > y2 ? y1 : y2) &&       \
                px <= (x1 > x2 ? x1 : x2) && y1 != y2) {                       \
                REAL xinters = (py - y1) * (x2 - x1) / (y2 - y1) + x1;         \
                if (x1 == x2 || px <= xinters)                                 \
                    counter++;                                                 \
            }                                                                  \
        }                                                                      \
        return counter & 1;                                                    \
    }
DEFINE_INSIDE(inside_f32, float)
DEFINE_INSIDE(inside_f64, double)

static void mask_row(const demo_polygon *poly, demo_prec prec, int width,
                     int y, uint8_t *row) {
    if (prec == DEMO_F64) {
        double py = (double)y + 0.5;
        for (int x = 0; x < width; x++)
            row[x] = (uint8_t)inside_f64(poly->x, poly->y, poly->n,
                                         (double)x + 0.5, py);
    } else {
        float py = (float)y + 0.5f;
        for (int x = 0; x < width; x++)
            row[x] = (uint8_t)inside_f32(poly->xf, poly->yf, poly->n,
                                         (float)x + 0.5f, py);
    }
}

void demo_mask_serial(const demo_polygon *poly, demo_prec prec, int width,
                      int height, uint8_t *mask) {
    for (int y = 0; y < height; y++)
        mask_row(poly, prec, width, y, mask + (size_t)y * (size_t)width);
}

void demo_mask_openmp(const demo_polygon *poly, demo_prec prec, int width,
                      int height, uint8_t *mask) {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 4)
#endif
    for (int y = 0; y < height; y++)
        mask_row(poly, prec, width, y, mask + (size_t)y * (size_t)width);
}

/* ------------------------------------------------------- host distances */

#define DEFINE_PDIST_ROW(NAME, REAL, SQRT)                                     \
    static void NAME(const REAL *x, int m, int d, int i, REAL *out) {          \
        const REAL *xi = x + (size_t)i * (size_t)d;                            \
        for (int j = 0; j < m; j++) {                                          \
            const REAL *xj = x + (size_t)j * (size_t)d;                        \
            REAL s = 0;                                                        \
            for (int k = 0; k < d; k++) {                                      \
                REAL t = xi[k] - xj[k];                                        \
                s = s + t * t;                                                 \
            }                                                                  \
            out[(size_t)i * (size_t)m + (size_t)j] = SQRT(s);                  \
        }                                                                      \
    }
DEFINE_PDIST_ROW(pdist_row_f32, float, sqrtf)
DEFINE_PDIST_ROW(pdist_row_f64, double, sqrt)

void demo_pdist_serial(demo_prec prec, const void *x, int m, int d,
                       void *out) {
    for (int i = 0; i < m; i++) {
        if (prec == DEMO_F64)
            pdist_row_f64(x, m, d, i, out);
        else
            pdist_row_f32(x, m, d, i, out);
    }
}

void demo_pdist_openmp(demo_prec prec, const void *x, int m, int d,
                       void *out) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int i = 0; i < m; i++) {
        if (prec == DEMO_F64)
            pdist_row_f64(x, m, d, i, out);
        else
            pdist_row_f32(x, m, d, i, out);
    }
}

/* ----------------------------------------------------------- timing */

static int cmp_time(const void *a, const void *b) {
    return cmp_double(a, b);
}

static double median(double *v, int n) {
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof v[0], cmp_time);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define DEMO_MAX_REPS 100

void demo_time_host(void (*fn)(void *), void *arg, int reps, double budget_s,
                    demo_time *t) {
    double times[DEMO_MAX_REPS], spent = 0.0;
    int n = 0;
    if (reps < 1)
        reps = 1;
    if (reps > DEMO_MAX_REPS)
        reps = DEMO_MAX_REPS;
    while (n < reps && (n == 0 || spent < budget_s)) {
        double t0 = demo_now();
        fn(arg);
        times[n] = demo_now() - t0;
        spent += times[n++];
    }
    t->wall_s = median(times, n);
    t->device_s = 0.0;
    t->reps = n;
}

/* --------------------------------------------------------- kiln kernels */

void demo_kernels_release(demo_kernels *k) {
    for (int p = 0; p < 2; p++) {
        kiln_kernel_release(k->naive[p]);
        kiln_kernel_release(k->spans[p]);
        kiln_kernel_release(k->fill[p]);
        kiln_kernel_release(k->pdist[p]);
        kiln_program_release(k->program[p]);
    }
    kiln_queue_release(k->queue);
    memset(k, 0, sizeof *k);
}

kiln_status demo_kernels_create(kiln_queue *queue, demo_kernels *k) {
    memset(k, 0, sizeof *k);
    kiln_status st = kiln_device_get_info(kiln_queue_device(queue), &k->info);
    if (st != KILN_OK)
        return st;
    st = kiln_queue_retain(queue);
    if (st != KILN_OK)
        return st;
    k->queue = queue;
    k->gpu_like = k->info.type != KILN_DEVICE_CPU;
    /* Pairwise tile: a 16x16 group with 8x8 outputs each on a GPU (a
     * 128x128 block); smaller on a CPU, where PoCL keeps the per-work-item
     * accumulators in memory across the barriers. */
    k->pd_ts = k->gpu_like ? 16 : 8;
    k->pd_rb = k->gpu_like ? 8 : 4;
    /* For tuning: KILN_DEMO_PDIST_TILE="TSxRB", e.g. "16x4". */
    const char *tile = getenv("KILN_DEMO_PDIST_TILE");
    int ts, rb;
    if (tile && sscanf(tile, "%dx%d", &ts, &rb) == 2 && ts >= 1 && rb >= 1 &&
        ts * ts <= 1024 && rb <= 16) {
        k->pd_ts = ts;
        k->pd_rb = rb;
    }
    size_t len = sizeof demo_kernel_source + 256;
    char *src = malloc(len);
    if (!src) {
        demo_kernels_release(k);
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (int p = 0; p < 2; p++) {
        if (p == DEMO_F64 && !k->info.fp64)
            continue;
        snprintf(src, len,
                 "#define REAL %s\n#define REAL_IS_DOUBLE %d\n"
                 "#define PD_TS %d\n#define PD_RB %d\n%s",
                 p == DEMO_F64 ? "double" : "float", p == DEMO_F64, k->pd_ts,
                 k->pd_rb, demo_kernel_source);
        st = kiln_program_create(kiln_queue_context(queue), src, NULL,
                                 &k->program[p]);
        if (st == KILN_OK)
            st = kiln_kernel_create(k->program[p], "mask_naive", &k->naive[p]);
        if (st == KILN_OK)
            st = kiln_kernel_create(k->program[p], "mask_spans", &k->spans[p]);
        if (st == KILN_OK)
            st = kiln_kernel_create(k->program[p], "mask_fill", &k->fill[p]);
        if (st == KILN_OK)
            st = kiln_kernel_create(k->program[p], "pdist", &k->pdist[p]);
        if (st != KILN_OK) {
            free(src);
            demo_kernels_release(k);
            return st;
        }
        k->have[p] = 1;
    }
    free(src);
    return KILN_OK;
}

static size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

/* One timed run of a launch sequence: wall time around launch + wait, and
 * the device time from the first event's start to the last one's end. */
typedef kiln_status (*launch_fn)(void *ctx, kiln_event **first,
                                 kiln_event **last);

static kiln_status timed_runs(demo_kernels *k, launch_fn launch, void *ctx,
                              int reps, double budget_s, demo_time *t) {
    double wall[DEMO_MAX_REPS], dev[DEMO_MAX_REPS], spent = 0.0;
    int n = 0;
    if (reps < 1)
        reps = 1;
    if (reps > DEMO_MAX_REPS)
        reps = DEMO_MAX_REPS;
    /* rep -1 is the warm-up: the first launch may compile (PoCL builds the
     * work-group function for each local size on first use). */
    for (int rep = -1; rep < reps && (rep < 1 || spent < budget_s); rep++) {
        kiln_event *first = NULL, *last = NULL;
        double t0 = demo_now();
        kiln_status st = launch(ctx, &first, &last);
        if (st == KILN_OK)
            st = kiln_event_wait(last);
        double t1 = demo_now();
        kiln_event_times a, b;
        if (st == KILN_OK)
            st = kiln_event_get_times(first, &a);
        if (st == KILN_OK)
            st = kiln_event_get_times(last, &b);
        if (first != last)
            kiln_event_release(first);
        kiln_event_release(last);
        if (st != KILN_OK) {
            kiln_queue_finish(k->queue);
            return st;
        }
        if (rep < 0)
            continue;
        wall[n] = t1 - t0;
        dev[n] = b.ended > a.started ? 1e-9 * (double)(b.ended - a.started)
                                     : 0.0;
        spent += wall[n++];
    }
    t->wall_s = median(wall, n);
    t->device_s = median(dev, n);
    t->reps = n;
    return KILN_OK;
}

typedef struct mask_run {
    demo_kernels *k;
    demo_prec prec;
    int fast, n, width, height;
    kiln_buffer *vx, *vy, *rows, *mask;
} mask_run;

static kiln_status mask_launch(void *ctx, kiln_event **first,
                               kiln_event **last) {
    mask_run *r = ctx;
    demo_kernels *k = r->k;
    int p = r->prec;
    if (!r->fast) {
        size_t local[2] = {16, 16};
        size_t global[2] = {round_up((size_t)r->width, 16),
                            round_up((size_t)r->height, 16)};
        kiln_arg args[] = {KILN_ARG_BUF(r->vx),        KILN_ARG_BUF(r->vy),
                           KILN_ARG_I32(r->n),         KILN_ARG_I32(r->width),
                           KILN_ARG_I32(r->height),    KILN_ARG_BUF(r->mask)};
        kiln_status st = kiln_kernel_launch(k->queue, k->naive[p], 2, global,
                                            local, 6, args, 0, NULL, last);
        *first = *last;
        return st;
    }
    size_t l1 = 64, g1 = round_up((size_t)r->height, l1);
    kiln_arg a1[] = {KILN_ARG_BUF(r->vx),     KILN_ARG_BUF(r->vy),
                     KILN_ARG_I32(r->n),      KILN_ARG_I32(r->width),
                     KILN_ARG_I32(r->height), KILN_ARG_BUF(r->rows)};
    kiln_status st = kiln_kernel_launch(k->queue, k->spans[p], 1, &g1, &l1,
                                        6, a1, 0, NULL, first);
    if (st != KILN_OK)
        return st;
    /* GPU: 2 words (16 pixels) per work-item, neighbours on neighbouring
     * words, so each store instruction of a warp is one contiguous run.
     * CPU: one work-item per row, streaming it out in order. */
    int words = (r->width + 7) / 8;
    int items = k->gpu_like ? (words + 1) / 2 : 1;
    size_t local[2], global[2];
    if (k->gpu_like) {
        local[0] = 64;
        local[1] = 4;
    } else {
        local[0] = 1;
        local[1] = 8;
    }
    global[0] = round_up((size_t)items, local[0]);
    global[1] = round_up((size_t)r->height, local[1]);
    kiln_arg a2[] = {KILN_ARG_BUF(r->rows), KILN_ARG_I32(r->width),
                     KILN_ARG_I32(r->height), KILN_ARG_I32(items),
                     KILN_ARG_BUF(r->mask)};
    st = kiln_kernel_launch(k->queue, k->fill[p], 2, global, local, 5, a2, 0,
                            NULL, last);
    if (st != KILN_OK) {
        kiln_event_wait(*first);
        kiln_event_release(*first);
        *first = NULL;
    }
    return st;
}

kiln_status demo_mask_kernel(demo_kernels *k, demo_prec prec, int fast,
                             const demo_polygon *poly, int width, int height,
                             int reps, double budget_s, uint8_t *out,
                             demo_time *t) {
    if (!k || !poly || !out || !t || width < 1 || height < 1 ||
        poly->n < 1 || poly->n > DEMO_MAX_VERTS ||
        (prec != DEMO_F32 && prec != DEMO_F64))
        return KILN_ERROR_INVALID_ARGUMENT;
    if (!k->have[prec])
        return KILN_ERROR_UNSUPPORTED;
    kiln_context *ctx = kiln_queue_context(k->queue);
    size_t esize = prec == DEMO_F64 ? sizeof(double) : sizeof(float);
    const void *hx = prec == DEMO_F64 ? (const void *)poly->x
                                      : (const void *)poly->xf;
    const void *hy = prec == DEMO_F64 ? (const void *)poly->y
                                      : (const void *)poly->yf;
    size_t npix = (size_t)width * (size_t)height;
    mask_run r = {.k = k, .prec = prec, .fast = fast, .n = poly->n,
                  .width = width, .height = height};
    kiln_status st = kiln_buffer_create(ctx, esize * (size_t)poly->n,
                                        KILN_BUFFER_READ_ONLY, hx, &r.vx);
    if (st == KILN_OK)
        st = kiln_buffer_create(ctx, esize * (size_t)poly->n,
                                KILN_BUFFER_READ_ONLY, hy, &r.vy);
    if (st == KILN_OK)
        st = kiln_buffer_create(ctx, npix, KILN_BUFFER_WRITE_ONLY, NULL,
                                &r.mask);
    if (st == KILN_OK && fast)
        st = kiln_buffer_create(ctx,
                                sizeof(int) * DEMO_ROW_INTS * (size_t)height,
                                KILN_BUFFER_READ_WRITE, NULL, &r.rows);
    if (st == KILN_OK)
        st = timed_runs(k, mask_launch, &r, reps, budget_s, t);
    if (st == KILN_OK)
        st = kiln_buffer_read(k->queue, r.mask, 0, npix, out);
    kiln_buffer_release(r.vx);
    kiln_buffer_release(r.vy);
    kiln_buffer_release(r.rows);
    kiln_buffer_release(r.mask);
    return st;
}

typedef struct pdist_run {
    demo_kernels *k;
    demo_prec prec;
    int m, d;
    kiln_buffer *x, *out;
} pdist_run;

static kiln_status pdist_launch(void *ctx, kiln_event **first,
                                kiln_event **last) {
    pdist_run *r = ctx;
    demo_kernels *k = r->k;
    size_t bt = (size_t)(k->pd_ts * k->pd_rb);
    size_t blocks = ((size_t)r->m + bt - 1) / bt;
    size_t local[2] = {(size_t)k->pd_ts, (size_t)k->pd_ts};
    size_t global[2] = {blocks * local[0], blocks * local[1]};
    kiln_arg args[] = {KILN_ARG_BUF(r->x), KILN_ARG_I32(r->m),
                       KILN_ARG_I32(r->d), KILN_ARG_BUF(r->out)};
    kiln_status st = kiln_kernel_launch(k->queue, k->pdist[r->prec], 2,
                                        global, local, 4, args, 0, NULL, last);
    *first = *last;
    return st;
}

kiln_status demo_pdist_kernel(demo_kernels *k, demo_prec prec, const void *x,
                              int m, int d, int reps, double budget_s,
                              void *out, demo_time *t) {
    if (!k || !x || !out || !t || m < 1 || d < 1 ||
        (prec != DEMO_F32 && prec != DEMO_F64))
        return KILN_ERROR_INVALID_ARGUMENT;
    if (!k->have[prec])
        return KILN_ERROR_UNSUPPORTED;
    kiln_context *ctx = kiln_queue_context(k->queue);
    size_t esize = prec == DEMO_F64 ? sizeof(double) : sizeof(float);
    size_t out_bytes = esize * (size_t)m * (size_t)m;
    pdist_run r = {.k = k, .prec = prec, .m = m, .d = d};
    kiln_status st = kiln_buffer_create(ctx, esize * (size_t)m * (size_t)d,
                                        KILN_BUFFER_READ_ONLY, x, &r.x);
    if (st == KILN_OK)
        st = kiln_buffer_create(ctx, out_bytes, KILN_BUFFER_WRITE_ONLY, NULL,
                                &r.out);
    if (st == KILN_OK)
        st = timed_runs(k, pdist_launch, &r, reps, budget_s, t);
    if (st == KILN_OK)
        st = kiln_buffer_read(k->queue, r.out, 0, out_bytes, out);
    kiln_buffer_release(r.x);
    kiln_buffer_release(r.out);
    return st;
}
