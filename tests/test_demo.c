/* The demo's kernels (tools/kiln/demo_kernels.h, run by demo_work.c) against
 * the serial C versions: the polygon mask must match pixel for pixel
 * (random, self-intersecting, vertices on pixel centres, horizontal edges,
 * degenerate polygons, odd image sizes; float32 and float64), pairwise
 * distances must be accurate per element (awkward M and D, nearly equal
 * points; both the GPU and the CPU distance kernels wherever they build),
 * and bad arguments must give a status, not a crash. The degenerate
 * polygons (collinear, two vertices, repeated vertices, vertices on pixel
 * centres) are the ones NVIDIA's OpenCL got wrong in float32 while the
 * crossing test divided; it is exact integer arithmetic now. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "demo_work.h"
#include "harness.h"

static const int sizes[][2] = { { 1, 1 },   { 17, 33 },  { 1000, 3 }, { 3, 1000 },
                                { 64, 64 }, { 129, 67 }, { 256, 256 } };
#define NUM_SIZES (sizeof sizes / sizeof sizes[0])

enum {
    P_STAR,
    P_RANDOM,
    P_CENTRES,
    P_HORIZONTAL,
    P_COLLINEAR,
    P_TWO,
    P_REPEATED,
    P_OUTSIDE,
    P_SINGLE,
    NUM_POLYS
};
static const char *poly_names[NUM_POLYS] = { "star",
                                             "random (self-intersecting)",
                                             "vertices on pixel centres",
                                             "horizontal edges",
                                             "collinear (zero area)",
                                             "two vertices",
                                             "repeated vertices",
                                             "partly outside",
                                             "one vertex" };

/* A polygon of the given kind scaled to a w x h image. */
static void make_polygon(int kind, int w, int h, demo_polygon *p) {
    double x[DEMO_MAX_VERTS], y[DEMO_MAX_VERTS];
    int n = 0;
    uint64_t seed = kt_rand_u64() | 1;
    switch (kind) {
    case P_STAR:
        demo_polygon_random(p, 24, w, h, &seed);
        return;
    case P_RANDOM:
        n = 24;
        for (int i = 0; i < n; i++) {
            x[i] = kt_rand_unit() * w;
            y[i] = kt_rand_unit() * h;
        }
        break;
    case P_CENTRES: /* every vertex exactly on a pixel centre */
        n = 12;
        for (int i = 0; i < n; i++) {
            x[i] = (double)(kt_rand_u64() % (uint64_t)w) + 0.5;
            y[i] = (double)(kt_rand_u64() % (uint64_t)h) + 0.5;
        }
        break;
    case P_HORIZONTAL: { /* a staircase: horizontal edges on and off centres */
        double yy[4] = { 0.5, h * 0.3, (double)(h / 2) + 0.5, h - 0.25 };
        double xx[4] = { 0.25, w * 0.3, (double)(w / 2) + 0.5, w - 0.5 };
        for (int i = 0; i < 4; i++) {
            x[n] = xx[i];
            y[n++] = yy[i];
            x[n] = i + 1 < 4 ? xx[i + 1] : xx[i];
            y[n++] = yy[i];
        }
        x[n] = xx[0];
        y[n++] = yy[3];
        break;
    }
    case P_COLLINEAR: /* all on one line through pixel centres */
        n = 5;
        for (int i = 0; i < n; i++) {
            x[i] = 0.5 + (double)(i * (w - 1)) / 4.0;
            y[i] = 0.5 + (double)(i * (h - 1)) / 4.0;
        }
        break;
    case P_TWO:
        n = 2;
        x[0] = 0.5;
        y[0] = 0.5;
        x[1] = w - 0.5;
        y[1] = h - 0.5;
        break;
    case P_REPEATED: /* a triangle with every vertex twice */
        n = 6;
        x[0] = x[1] = 0.5;
        y[0] = y[1] = 0.5;
        x[2] = x[3] = w - 0.5;
        y[2] = y[3] = h * 0.5;
        x[4] = x[5] = w * 0.25;
        y[4] = y[5] = h - 0.5;
        break;
    case P_OUTSIDE:
        n = 4;
        x[0] = -0.3 * w;
        y[0] = 0.5 * h;
        x[1] = 0.5 * w;
        y[1] = -0.2 * h;
        x[2] = 1.4 * w;
        y[2] = 0.5 * h;
        x[3] = 0.5 * w;
        y[3] = 0.7 * h;
        break;
    default: /* P_SINGLE */
        n = 1;
        x[0] = (double)(w / 2) + 0.5;
        y[0] = (double)(h / 2) + 0.5;
        break;
    }
    demo_polygon_set(p, n, x, y);
}

static long mismatches(const uint8_t *a, const uint8_t *b, size_t n) {
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += a[i] != b[i];
    return bad;
}

/* A known answer: the rectangle [2,10] x [3,7] in a 16 x 12 image holds
 * the pixels whose centres satisfy 2 < px <= 10 and 3 < py <= 7 (the tie
 * rule): columns 2..9, rows 3..6. */
static void test_known_answer(demo_kernels *k) {
    double x[4] = { 2, 10, 10, 2 }, y[4] = { 3, 3, 7, 7 };
    demo_polygon p;
    demo_polygon_set(&p, 4, x, y);
    uint8_t want[16 * 12], got[16 * 12];
    for (int r = 0; r < 12; r++)
        for (int c = 0; c < 16; c++)
            want[r * 16 + c] = c >= 2 && c <= 9 && r >= 3 && r <= 6;
    for (int prec = 0; prec < 2; prec++) {
        demo_mask_serial(&p, (demo_prec)prec, 16, 12, got);
        CHECK(mismatches(got, want, sizeof want) == 0);
        demo_mask_rows_serial(&p, (demo_prec)prec, 16, 12, got);
        CHECK(mismatches(got, want, sizeof want) == 0);
        for (int fast = 0; fast <= 1 && k; fast++) {
            if (!k->have[prec])
                continue;
            demo_time t;
            memset(got, 7, sizeof got);
            if (CHECK_OK(demo_mask_kernel(k, (demo_prec)prec, fast, &p, 16, 12, 1, 0.0, got, &t)))
                CHECK_MSG(mismatches(got, want, sizeof want) == 0, "prec %d fast %d", prec, fast);
        }
    }
}

/* Vertices become multiples of 1/256 within +-DEMO_COORD_LIMIT, equal in
 * the float and double copies; float32 and float64 masks are then equal. */
static void test_fixed_point(void) {
    double x[5] = { 1e9, -1e9, 0.1, 3.0 + 1.0 / 512.0, NAN };
    double y[5] = { 2.5, 7.00390625, -0.2, 1.0 / 3.0, 4.0 };
    demo_polygon p;
    demo_polygon_set(&p, 5, x, y);
    CHECK(p.n == 5);
    CHECK(p.x[0] == DEMO_COORD_LIMIT && p.x[1] == -DEMO_COORD_LIMIT);
    CHECK(p.y[1] == 7.00390625 && p.y[0] == 2.5);
    CHECK(p.x[4] == 0.0); /* NaN */
    for (int i = 0; i < 5; i++) {
        CHECK(p.x[i] * 256.0 == floor(p.x[i] * 256.0));
        CHECK(p.y[i] * 256.0 == floor(p.y[i] * 256.0));
        CHECK((double)p.xf[i] == p.x[i] && (double)p.yf[i] == p.y[i]);
    }
    uint8_t a[40 * 30], b[40 * 30];
    for (int kind = 0; kind < NUM_POLYS; kind++) {
        make_polygon(kind, 40, 30, &p);
        demo_mask_serial(&p, DEMO_F32, 40, 30, a);
        demo_mask_serial(&p, DEMO_F64, 40, 30, b);
        CHECK_MSG(mismatches(a, b, sizeof a) == 0, "%s", poly_names[kind]);
    }
}

/* The row-crossing algorithm on the host (serial and OpenMP) gives the
 * seeds' pixels: every polygon kind, every size, both precisions. */
static void test_row_crossing_host(void) {
    for (size_t s = 0; s < NUM_SIZES; s++) {
        int w = sizes[s][0], h = sizes[s][1];
        size_t npix = (size_t)w * (size_t)h;
        uint8_t *ref = malloc(npix), *got = malloc(npix);
        if (!ref || !got) {
            CHECK(0);
            KT_FREE(ref, got);
            return;
        }
        for (int kind = 0; kind < NUM_POLYS; kind++) {
            demo_polygon p;
            make_polygon(kind, w, h, &p);
            for (int prec = 0; prec < 2; prec++) {
                demo_mask_serial(&p, (demo_prec)prec, w, h, ref);
                for (int omp = 0; omp < 2; omp++) {
                    memset(got, 7, npix);
                    (omp ? demo_mask_rows_openmp : demo_mask_rows_serial)(&p, (demo_prec)prec, w, h,
                                                                          got);
                    CHECK_MSG(mismatches(got, ref, npix) == 0,
                              "row crossing (%s) %dx%d %s prec %d: %ld", omp ? "OpenMP" : "serial",
                              w, h, poly_names[kind], prec, mismatches(got, ref, npix));
                }
            }
        }
        KT_FREE(ref, got);
    }
}

/* The symmetric host distances give the same bits as every pair. */
static void test_pdist_sym_host(void) {
    static const int ms[] = { 1, 2, 17, 33, 65 }, ds[] = { 1, 3, 16 };
    for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++) {
        for (size_t b = 0; b < sizeof ds / sizeof ds[0]; b++) {
            int m = ms[a], d = ds[b];
            double *x = malloc((size_t)m * (size_t)d * sizeof *x);
            double *o[3];
            size_t bytes = (size_t)m * (size_t)m * sizeof(double);
            for (int v = 0; v < 3; v++)
                o[v] = malloc(bytes);
            if (!x || !o[0] || !o[1] || !o[2]) {
                CHECK(0);
                goto next;
            }
            for (int prec = 0; prec < 2; prec++) {
                for (size_t i = 0; i < (size_t)m * (size_t)d; i++) {
                    double v = kt_rand_unit() - 0.5;
                    if (prec == DEMO_F64)
                        x[i] = v;
                    else
                        ((float *)x)[i] = (float)v;
                }
                size_t n =
                    (size_t)m * (size_t)m * (prec == DEMO_F64 ? sizeof(double) : sizeof(float));
                for (int v = 0; v < 3; v++)
                    memset(o[v], 0x55, bytes);
                demo_pdist_serial((demo_prec)prec, x, m, d, o[0]);
                demo_pdist_sym_serial((demo_prec)prec, x, m, d, o[1]);
                demo_pdist_sym_openmp((demo_prec)prec, x, m, d, o[2]);
                CHECK_MSG(memcmp(o[0], o[1], n) == 0 && memcmp(o[0], o[2], n) == 0,
                          "symmetric host distances m=%d d=%d prec %d", m, d, prec);
            }
        next:
            free(x);
            for (int v = 0; v < 3; v++)
                free(o[v]);
        }
    }
}

static void test_masks(demo_kernels *k) {
    for (size_t s = 0; s < NUM_SIZES; s++) {
        int w = sizes[s][0], h = sizes[s][1];
        size_t npix = (size_t)w * (size_t)h;
        uint8_t *ref = malloc(npix), *got = malloc(npix);
        if (!ref || !got) {
            CHECK(0);
            KT_FREE(ref, got);
            return;
        }
        for (int kind = 0; kind < NUM_POLYS; kind++) {
            demo_polygon p;
            make_polygon(kind, w, h, &p);
            for (int prec = 0; prec < 2; prec++) {
                demo_mask_serial(&p, (demo_prec)prec, w, h, ref);
                memset(got, 7, npix);
                demo_mask_openmp(&p, (demo_prec)prec, w, h, got);
                CHECK_MSG(mismatches(got, ref, npix) == 0, "OpenMP %dx%d %s prec %d", w, h,
                          poly_names[kind], prec);
                if (!k || !k->have[prec])
                    continue;
                for (int fast = 0; fast <= 1; fast++) {
                    demo_time t;
                    memset(got, 7, npix);
                    kiln_status st =
                        demo_mask_kernel(k, (demo_prec)prec, fast, &p, w, h, 1, 0.0, got, &t);
                    if (!CHECK_OK(st))
                        continue;
                    long bad = mismatches(got, ref, npix);
                    CHECK_MSG(bad == 0, "%s kernel %dx%d %s %s: %ld pixels",
                              fast ? "fast" : "naive", w, h, poly_names[kind],
                              prec ? "float64" : "float32", bad);
                    CHECK(t.reps == 1 && t.wall_s > 0.0 && t.e2e_s > 0.0);
                }
            }
        }
        KT_FREE(ref, got);
    }
}

/* Per-element check of a distance matrix against the float64 reference
 * computed from the same input values. */
static void check_distances(demo_prec prec, const void *out, const double *ref, int m,
                            const char *what, int d) {
    double tol = prec == DEMO_F64 ? 1e-12 : 1e-5, worst = 0.0;
    for (size_t i = 0; i < (size_t)m * (size_t)m; i++) {
        double v = prec == DEMO_F64 ? ((const double *)out)[i] : (double)((const float *)out)[i];
        double err = fabs(v - ref[i]);
        if (ref[i] > 0.0)
            err /= ref[i];
        if (err > worst)
            worst = err;
    }
    CHECK_MSG(worst <= tol, "%s m=%d d=%d %s: worst relative error %.3g", what, m, d,
              prec == DEMO_F64 ? "float64" : "float32", worst);
}

static void test_distances(demo_kernels *k, int near) {
    /* 68: m a multiple of 4, so whole 16-byte stores of rows, and a
     * partial block on PoCL's 64-row tiles */
    static const int ms[] = { 1, 3, 17, 65, 68, 130 };
    static const int ds[] = { 1, 3, 8, 17, 65 };
    for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++) {
        for (size_t b = 0; b < sizeof ds / sizeof ds[0]; b++) {
            int m = ms[a], d = ds[b];
            size_t nx = (size_t)m * (size_t)d, nout = (size_t)m * (size_t)m;
            float *x32 = malloc(nx * sizeof *x32);
            double *x64 = malloc(nx * sizeof *x64);
            double *ref = malloc(nout * sizeof *ref);
            void *out = malloc(nout * sizeof(double));
            if (!x32 || !x64 || !ref || !out) {
                CHECK(0);
                goto next;
            }
            /* near: every point is the first one plus up to 1e-4 per
             * coordinate; |x|^2 + |y|^2 - 2x.y would lose every digit. */
            for (size_t i = 0; i < nx; i++) {
                double base = near ? 1.0 + 0.5 * (double)(i % (size_t)d) / (double)d : 0.0;
                double jitter = near ? 1e-4 * kt_rand_unit() : 2.0 * kt_rand_unit() - 1.0;
                x32[i] = (float)(base + jitter);
                x64[i] = (double)x32[i];
            }
            demo_pdist_serial(DEMO_F64, x64, m, d, ref);
            for (int prec = 0; prec < 2; prec++) {
                const void *x = prec == DEMO_F64 ? (const void *)x64 : (const void *)x32;
                demo_pdist_openmp((demo_prec)prec, x, m, d, out);
                check_distances((demo_prec)prec, out, ref, m, near ? "OpenMP near" : "OpenMP", d);
                if (!k || !k->have[prec])
                    continue;
                demo_time t;
                memset(out, 0xFF, nout * sizeof(double));
                if (CHECK_OK(demo_pdist_kernel(k, (demo_prec)prec, x, m, d, 1, 0.0, out, &t))) {
                    check_distances((demo_prec)prec, out, ref, m, near ? "kernel near" : "kernel",
                                    d);
                    CHECK(t.e2e_s > 0.0);
                }
            }
        next:
            KT_FREE(x32, x64, ref, out);
        }
    }
}

static void test_bad_arguments(demo_kernels *k) {
    demo_polygon p;
    uint64_t seed = 1;
    demo_polygon_random(&p, 8, 16, 16, &seed);
    uint8_t mask[16 * 16];
    float x[4] = { 0 }, out[4];
    demo_time t;
    CHECK_STATUS(demo_mask_kernel(NULL, DEMO_F32, 1, &p, 16, 16, 1, 0, mask, &t),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(demo_mask_kernel(k, DEMO_F32, 1, NULL, 16, 16, 1, 0, mask, &t),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(demo_mask_kernel(k, DEMO_F32, 1, &p, 0, 16, 1, 0, mask, &t),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(demo_mask_kernel(k, DEMO_F32, 1, &p, 65537, 1, 1, 0, mask, &t),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(demo_mask_kernel(k, (demo_prec)7, 0, &p, 16, 16, 1, 0, mask, &t),
                 KILN_ERROR_INVALID_ARGUMENT);
    p.n = DEMO_MAX_VERTS + 1;
    CHECK_STATUS(demo_mask_kernel(k, DEMO_F32, 1, &p, 16, 16, 1, 0, mask, &t),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(demo_pdist_kernel(k, DEMO_F32, x, 0, 2, 1, 0, out, &t),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(demo_pdist_kernel(k, DEMO_F32, NULL, 2, 2, 1, 0, out, &t),
                 KILN_ERROR_INVALID_ARGUMENT);
    if (k && !k->have[DEMO_F64])
        CHECK_STATUS(demo_pdist_kernel(k, DEMO_F64, x, 2, 2, 1, 0, out, &t),
                     KILN_ERROR_UNSUPPORTED);
}

/* kiln's mask with the other kernel (mask_fast on CPUs, mask_rows on
 * GPUs) and each with the other launch shape (GPU: 256 work-items, CPU:
 * 16): mask_fast's crossings are listed by min(items, 32) work-items, so
 * both fewer and more items than edges are covered; mask_rows takes that
 * many rows a group. */
static void test_other_mask_shape(demo_kernels *k) {
    int saved = k->mask_local, saved_rows = k->mask_rows;
    int other = saved >= 256 ? 16 : 256;
    for (int rows = 0; rows < 2; rows++) {
        k->mask_rows = rows;
        if (rows != saved_rows)
            test_masks(k);
        if ((size_t)other <= k->info.max_work_group_size) {
            k->mask_local = other;
            test_masks(k);
            k->mask_local = saved;
        }
    }
    k->mask_rows = saved_rows;
}

/* Every distance kernel that is not the device's default, where it builds
 * (the GPU kernels also run on PoCL; pdist_cpu only on OpenCL): the CPU or
 * the GPU kernel, and the GPU kernel both symmetric and full. */
static void test_other_pdist_kernel(demo_kernels *k) {
    int saved = k->pd_cpu, saved_sym = k->pd_sym;
    for (int cpu = 0; cpu < 2; cpu++) {
        if (cpu && !k->pdist_cpu[DEMO_F32])
            continue;
        k->pd_cpu = cpu;
        for (int sym = 0; sym < 2 - cpu; sym++) {
            k->pd_sym = cpu ? saved_sym : sym;
            if (cpu == saved && (cpu || sym == saved_sym))
                continue; /* the default, tested already */
            test_distances(k, 0);
            test_distances(k, 1);
        }
    }
    k->pd_cpu = saved;
    k->pd_sym = saved_sym;
}

/* The symmetric GPU kernel writes each block and its mirror from one
 * computation: the same bits as the full kernel, element by element
 * (every sum runs in the same order, (a - b)^2 == (b - a)^2). */
static void test_symmetric_bits(demo_kernels *k) {
    static const int ms[] = { 2, 129, 200 };
    int saved = k->pd_cpu, saved_sym = k->pd_sym;
    k->pd_cpu = 0;
    for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++) {
        int m = ms[a], d = 19;
        size_t nx = (size_t)m * d, nout = (size_t)m * m;
        double *x64 = malloc(nx * sizeof *x64);
        float *x32 = malloc(nx * sizeof *x32);
        unsigned char *o[2] = { malloc(nout * sizeof(double)), malloc(nout * sizeof(double)) };
        if (!x64 || !x32 || !o[0] || !o[1]) {
            CHECK(0);
            goto next;
        }
        for (size_t i = 0; i < nx; i++) {
            x64[i] = 2.0 * kt_rand_unit() - 1.0;
            x32[i] = (float)x64[i];
        }
        for (int prec = 0; prec < 2; prec++) {
            if (!k->have[prec])
                continue;
            const void *x = prec == DEMO_F64 ? (const void *)x64 : (const void *)x32;
            size_t bytes = nout * (prec == DEMO_F64 ? 8 : 4);
            demo_time t;
            int ok = 1;
            for (int sym = 0; sym < 2; sym++) {
                k->pd_sym = sym;
                memset(o[sym], sym ? 0x55 : 0xAA, bytes);
                ok &= CHECK_OK(demo_pdist_kernel(k, (demo_prec)prec, x, m, d, 1, 0.0, o[sym], &t));
            }
            if (ok)
                CHECK_MSG(memcmp(o[0], o[1], bytes) == 0, "symmetric != full, m=%d %s", m,
                          prec ? "float64" : "float32");
        }
    next:
        KT_FREE(x64, x32, o[0], o[1]);
    }
    k->pd_cpu = saved;
    k->pd_sym = saved_sym;
}

/* Odd GPU tiles from the tuning variables: a non-square register block
 * (the full kernel's blocks 8 x 12; the symmetric one keeps 8 x 8), 5
 * dimensions per step, prefetch; many blocks at m = 130. A bad spec is
 * ignored. The float64 full kernel (4x2x4: 2-double vector loads, 3
 * dimensions a step) and the float32 symmetric one (8x4: 4-float vector
 * loads, 8 x 8 work-items) take vectors; the others have block sizes that
 * are not multiples of a vector, and the float64 symmetric one has them
 * switched off (v0). */
static void test_odd_tiles(kiln_queue *queue) {
    enum { NV = 5 };
    static const char *const vars[NV] = { "KILN_DEMO_PDIST_TILE", "KILN_DEMO_PDIST_SYM_TILE_F64",
                                          "KILN_DEMO_PDIST_TILE_F32", "KILN_DEMO_PDIST_TILE_F64",
                                          "KILN_DEMO_PDIST_SYM_TILE_F32" };
    static const char *const vals[NV] = { "4x2x3,k5,p1", "4x2,k2,p0,b2,v0", "4x2x3,k5,q1",
                                          "4x2x4,k3,p1", "8x4,k3" };
    char *old[NV];
    for (int i = 0; i < NV; i++) {
        const char *v = getenv(vars[i]);
        old[i] = v ? strdup(v) : NULL;
        setenv(vars[i], vals[i], 1);
    }
    demo_kernels k;
    kiln_status st = demo_kernels_create(queue, &k);
    for (int i = 0; i < NV; i++) {
        if (old[i])
            setenv(vars[i], old[i], 1);
        else
            unsetenv(vars[i]);
        free(old[i]);
    }
    if (!CHECK_OK(st)) {
        fprintf(stderr, "%s\n", kiln_last_build_log());
        return;
    }
    const demo_pd_tile *f = &k.pd_tile[0][DEMO_F32];
    CHECK(f->ts == 4 && f->rbi == 2 && f->rbj == 3 && f->kt == 5 &&
          f->prefetch == 1); /* the bad spec left the common one */
    const demo_pd_tile *sf = &k.pd_tile[1][DEMO_F32];
    CHECK(sf->ts == 8 && sf->rbi == 4 && sf->rbj == 4 && sf->vec == 1);
    if (k.have[DEMO_F64]) {
        const demo_pd_tile *s64 = &k.pd_tile[1][DEMO_F64];
        CHECK(s64->rbi == 2 && s64->rbj == 2 && s64->kt == 2 && s64->minb == 2 && s64->vec == 0);
        const demo_pd_tile *f64 = &k.pd_tile[0][DEMO_F64];
        CHECK(f64->rbi == 2 && f64->rbj == 4 && f64->kt == 3 && f64->vec);
    }
    k.pd_cpu = 0;
    for (int sym = 0; sym < 2; sym++) {
        k.pd_sym = sym;
        test_distances(&k, 0);
    }
    test_symmetric_bits(&k);
    demo_kernels_release(&k);
}

static void on_device(kiln_queue *queue, void *user) {
    (void)user;
    demo_kernels k;
    if (!CHECK_OK(demo_kernels_create(queue, &k))) {
        fprintf(stderr, "%s\n", kiln_last_build_log());
        return;
    }
    CHECK(k.have[DEMO_F32]);
    CHECK(k.have[DEMO_F64] == k.info.fp64);
    test_known_answer(&k);
    test_masks(&k);
    test_distances(&k, 0);
    test_distances(&k, 1);
    test_other_pdist_kernel(&k);
    test_symmetric_bits(&k);
    test_other_mask_shape(&k);
    test_bad_arguments(&k);
    demo_kernels_release(&k);
    test_odd_tiles(queue);
}

int main(void) {
    /* Host versions alone first, so they are covered without a device. */
    test_known_answer(NULL);
    test_fixed_point();
    test_row_crossing_host();
    test_pdist_sym_host();
    kt_for_each_device(on_device, NULL);
    return kt_report();
}
