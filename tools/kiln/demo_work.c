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

/* The nearest multiple of 1/256 within +-DEMO_COORD_LIMIT (NaN: 0). */
static double fixed_point(double v) {
    if (!(v == v))
        return 0.0;
    if (v > DEMO_COORD_LIMIT)
        v = DEMO_COORD_LIMIT;
    if (v < -DEMO_COORD_LIMIT)
        v = -DEMO_COORD_LIMIT;
    return nearbyint(v * 256.0) / 256.0;
}

void demo_polygon_set(demo_polygon *poly, int n, const double *x, const double *y) {
    if (n > DEMO_MAX_VERTS)
        n = DEMO_MAX_VERTS;
    poly->n = n < 0 ? 0 : n;
    for (int i = 0; i < poly->n; i++) {
        poly->x[i] = fixed_point(x[i]);
        poly->y[i] = fixed_point(y[i]);
        poly->xf[i] = (float)poly->x[i]; /* exact */
        poly->yf[i] = (float)poly->y[i];
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void demo_polygon_random(demo_polygon *poly, int n, int width, int height, uint64_t *state) {
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

/* The seeds' insidePolygon on the fixed-point values (demo_work.h): the
 * same integer operations as the kernels' inside_polygon. */
static int inside_fixed(const int *vx, const int *vy, int n, int px, int py) {
    int counter = 0;
    for (int i = 0; i < n; i++) {
        int j = i + 1 == n ? 0 : i + 1;
        int x1 = vx[i], y1 = vy[i], x2 = vx[j], y2 = vy[j];
        if (x1 == px && y1 == py)
            return 1;
        if (py > (y1 < y2 ? y1 : y2) && py <= (y1 > y2 ? y1 : y2) && px <= (x1 > x2 ? x1 : x2)) {
            int64_t lhs = (int64_t)(px - x1) * (int64_t)(y2 - y1);
            int64_t rhs = (int64_t)(py - y1) * (int64_t)(x2 - x1);
            if (y2 > y1 ? lhs <= rhs : lhs >= rhs)
                counter++;
        }
    }
    return counter & 1;
}

/* The vertices * 256 (exact integers) from the precision's copy. */
typedef struct fixed_poly {
    int n, x[DEMO_MAX_VERTS], y[DEMO_MAX_VERTS];
} fixed_poly;

static void to_fixed(const demo_polygon *poly, demo_prec prec, fixed_poly *f) {
    f->n = poly->n;
    for (int i = 0; i < poly->n; i++) {
        if (prec == DEMO_F64) {
            f->x[i] = (int)(poly->x[i] * 256.0);
            f->y[i] = (int)(poly->y[i] * 256.0);
        } else {
            f->x[i] = (int)(poly->xf[i] * 256.0f);
            f->y[i] = (int)(poly->yf[i] * 256.0f);
        }
    }
}

static void mask_row(const fixed_poly *f, int width, int y, uint8_t *row) {
    int py = 256 * y + 128;
    for (int x = 0; x < width; x++)
        row[x] = (uint8_t)inside_fixed(f->x, f->y, f->n, 256 * x + 128, py);
}

void demo_mask_serial(const demo_polygon *poly, demo_prec prec, int width, int height,
                      uint8_t *mask) {
    fixed_poly f;
    to_fixed(poly, prec, &f);
    for (int y = 0; y < height; y++)
        mask_row(&f, width, y, mask + (size_t)y * (size_t)width);
}

void demo_mask_serial_rows(const demo_polygon *poly, demo_prec prec, int width, int y0, int y1,
                           int step, uint8_t *mask) {
    fixed_poly f;
    to_fixed(poly, prec, &f);
    for (int y = y0; y<y1; y += step> 0 ? step : 1)
        mask_row(&f, width, y, mask + (size_t)y * (size_t)width);
}

void demo_mask_openmp(const demo_polygon *poly, demo_prec prec, int width, int height,
                      uint8_t *mask) {
    fixed_poly f;
    to_fixed(poly, prec, &f);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 4)
#endif
    for (int y = 0; y < height; y++)
        mask_row(&f, width, y, mask + (size_t)y * (size_t)width);
}

/* The row-crossing algorithm of kiln's fast kernel, on the host: floor(a /
 * b) for b > 0, and the pixels x = 0 .. t-1 that edge (x1,y1)-(x2,y2)
 * crosses on the row with centre line py (demo_kernels.h's edge_crossings,
 * the seeds' test solved for x). */
static int64_t floor_div64(int64_t a, int64_t b) {
    int64_t q = a / b;
    return q * b > a ? q - 1 : q;
}

static int edge_crossings(int x1, int y1, int x2, int y2, int py, int width) {
    if (!(py > (y1 < y2 ? y1 : y2) && py <= (y1 > y2 ? y1 : y2)))
        return 0;
    int64_t dy = (int64_t)y2 - y1, num = (int64_t)(py - y1) * (x2 - x1);
    if (dy < 0) {
        dy = -dy;
        num = -num;
    }
    int64_t t = floor_div64(floor_div64(num, dy) + x1 - 128, 256) + 1;
    return t < 0 ? 0 : t > width ? width : (int)t;
}

/* One row: the crossings once, sorted; pixel x is inside when an odd number
 * of them exceed x, so the row is runs between consecutive crossings, each
 * written by one memset; then the vertices on the row's pixel centres. */
static void mask_row_crossing(const fixed_poly *f, int width, int y, uint8_t *row) {
    int py = 256 * y + 128, t[DEMO_MAX_VERTS], nt = 0;
    for (int i = 0; i < f->n; i++) {
        int j = i + 1 == f->n ? 0 : i + 1;
        int c = edge_crossings(f->x[i], f->y[i], f->x[j], f->y[j], py, width);
        if (c <= 0)
            continue;
        int at = nt++; /* insertion sort: at most DEMO_MAX_VERTS entries */
        for (; at > 0 && t[at - 1] > c; at--)
            t[at] = t[at - 1];
        t[at] = c;
    }
    int x = 0;
    for (int k = 0; k < nt; x = t[k++])
        memset(row + x, (nt - k) & 1, (size_t)(t[k] - x));
    memset(row + x, 0, (size_t)(width - x));
    for (int i = 0; i < f->n; i++) {
        int vx = f->x[i] - 128;
        if (f->y[i] == py && vx >= 0 && (vx & 255) == 0 && vx / 256 < width)
            row[vx / 256] = 1;
    }
}

void demo_mask_rows_serial(const demo_polygon *poly, demo_prec prec, int width, int height,
                           uint8_t *mask) {
    fixed_poly f;
    to_fixed(poly, prec, &f);
    for (int y = 0; y < height; y++)
        mask_row_crossing(&f, width, y, mask + (size_t)y * (size_t)width);
}

void demo_mask_rows_openmp(const demo_polygon *poly, demo_prec prec, int width, int height,
                           uint8_t *mask) {
    fixed_poly f;
    to_fixed(poly, prec, &f);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int y = 0; y < height; y++)
        mask_row_crossing(&f, width, y, mask + (size_t)y * (size_t)width);
}

/* ------------------------------------------------------- host distances */

#define DEFINE_PDIST_ROW(NAME, REAL, SQRT)                            \
    static void NAME(const REAL *x, int m, int d, int i, REAL *out) { \
        const REAL *xi = x + (size_t)i * (size_t)d;                   \
        for (int j = 0; j < m; j++) {                                 \
            const REAL *xj = x + (size_t)j * (size_t)d;               \
            REAL s = 0;                                               \
            for (int k = 0; k < d; k++) {                             \
                REAL t = xi[k] - xj[k];                               \
                s = s + t * t;                                        \
            }                                                         \
            out[(size_t)i * (size_t)m + (size_t)j] = SQRT(s);         \
        }                                                             \
    }
DEFINE_PDIST_ROW(pdist_row_f32, float, sqrtf)
DEFINE_PDIST_ROW(pdist_row_f64, double, sqrt)

/* Row i of the symmetric version: out[i, j] for j >= i, each also stored
 * at out[j, i]. The same sum in the same order as pdist_row, and (a - b)^2
 * == (b - a)^2 exactly, so the same bits. */
#define DEFINE_PDIST_SYM_ROW(NAME, REAL, SQRT)                        \
    static void NAME(const REAL *x, int m, int d, int i, REAL *out) { \
        const REAL *xi = x + (size_t)i * (size_t)d;                   \
        for (int j = i; j < m; j++) {                                 \
            const REAL *xj = x + (size_t)j * (size_t)d;               \
            REAL s = 0;                                               \
            for (int k = 0; k < d; k++) {                             \
                REAL t = xi[k] - xj[k];                               \
                s = s + t * t;                                        \
            }                                                         \
            s = SQRT(s);                                              \
            out[(size_t)i * (size_t)m + (size_t)j] = s;               \
            out[(size_t)j * (size_t)m + (size_t)i] = s;               \
        }                                                             \
    }
DEFINE_PDIST_SYM_ROW(pdist_sym_row_f32, float, sqrtf)
DEFINE_PDIST_SYM_ROW(pdist_sym_row_f64, double, sqrt)

static void pdist_sym_row(demo_prec prec, const void *x, int m, int d, int i, void *out) {
    if (prec == DEMO_F64)
        pdist_sym_row_f64(x, m, d, i, out);
    else
        pdist_sym_row_f32(x, m, d, i, out);
}

void demo_pdist_sym_serial(demo_prec prec, const void *x, int m, int d, void *out) {
    for (int i = 0; i < m; i++)
        pdist_sym_row(prec, x, m, d, i, out);
}

void demo_pdist_sym_openmp(demo_prec prec, const void *x, int m, int d, void *out) {
    /* Row i has m - i outputs: dynamic chunks balance the triangle. */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 8)
#endif
    for (int i = 0; i < m; i++)
        pdist_sym_row(prec, x, m, d, i, out);
}

void demo_pdist_serial(demo_prec prec, const void *x, int m, int d, void *out) {
    for (int i = 0; i < m; i++) {
        if (prec == DEMO_F64)
            pdist_row_f64(x, m, d, i, out);
        else
            pdist_row_f32(x, m, d, i, out);
    }
}

void demo_pdist_serial_rows(demo_prec prec, const void *x, int m, int d, int i0, int i1,
                            void *out) {
    for (int i = i0 < 0 ? 0 : i0; i < i1 && i < m; i++) {
        if (prec == DEMO_F64)
            pdist_row_f64(x, m, d, i, out);
        else
            pdist_row_f32(x, m, d, i, out);
    }
}

void demo_pdist_openmp(demo_prec prec, const void *x, int m, int d, void *out) {
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

void demo_time_host(void (*fn)(void *), void *arg, int reps, double budget_s, demo_time *t) {
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
    t->e2e_s = t->wall_s; /* host data is where the program wants it */
    t->reps = n;
}

/* --------------------------------------------------------- kiln kernels */

void demo_kernels_release(demo_kernels *k) {
    for (int p = 0; p < 2; p++) {
        kiln_kernel_release(k->naive[p]);
        kiln_kernel_release(k->fast[p]);
        kiln_kernel_release(k->rows[p]);
        kiln_kernel_release(k->pdist[p]);
        kiln_kernel_release(k->pdist_sym[p]);
        kiln_kernel_release(k->pdist_cpu[p]);
        kiln_program_release(k->program[p]);
    }
    kiln_queue_release(k->queue);
    memset(k, 0, sizeof *k);
}

/* "TSxRBI[xRBJ][,kKT][,pPF][,bMINB][,vVEC]", e.g. "16x8",
 * "16x4x8,k16,p1,b2", "16x8,v0" (scalar local loads):
 * the fields given replace those of *t; 0 when the whole spec is valid
 * (else *t is left as it was). */
static int pd_tile_parse(const char *spec, demo_pd_tile *t) {
    demo_pd_tile n = *t;
    char *end;
    long v[3];
    int nv = 0;
    const char *s = spec;
    while (nv < 3) {
        v[nv] = strtol(s, &end, 10);
        if (end == s)
            return -1;
        nv++;
        s = end;
        if (*s != 'x')
            break;
        s++;
    }
    if (nv < 2 || v[0] < 1 || v[0] * v[0] > 1024 || v[1] < 1 || v[1] > 16 ||
        (nv == 3 && (v[2] < 1 || v[2] > 16)))
        return -1;
    n.ts = (int)v[0];
    n.rbi = (int)v[1];
    n.rbj = nv == 3 ? (int)v[2] : (int)v[1];
    while (*s == ',') {
        char key = s[1];
        long val = strtol(s + 2, &end, 10);
        if (end == s + 2)
            return -1;
        if (key == 'k' && val >= 1 && val <= 64)
            n.kt = (int)val;
        else if (key == 'p' && (val == 0 || val == 1))
            n.prefetch = (int)val;
        else if (key == 'b' && val >= 1 && val <= 8)
            n.minb = (int)val;
        else if (key == 'v' && (val == 0 || val == 1))
            n.vec = (int)val;
        else
            return -1;
        s = end;
    }
    if (*s)
        return -1;
    *t = n;
    return 0;
}

/* The GPU kernel's P_V: a work-item's rows and columns come in runs of 16
 * bytes (4 floats, 2 doubles) read with one vector load, where the tile
 * allows (both counts multiples of it) and vectors are on; else 1. */
static int pd_vector_width(const demo_pd_tile *t, int p, int sym) {
    int vmax = p == DEMO_F64 ? 2 : 4, rbj = sym ? t->rbi : t->rbj;
    return t->vec && t->rbi % vmax == 0 && rbj % vmax == 0 ? vmax : 1;
}

void demo_pdist_describe(const demo_kernels *k, demo_prec prec, int sym, char *buf, size_t cap) {
    if (!k || !buf || cap == 0)
        return;
    if (k->pd_cpu && k->pdist_cpu[prec]) {
        snprintf(buf, cap, "pdist_cpu, %d columns per work-item", k->pc_jb);
        return;
    }
    const demo_pd_tile *t = &k->pd_tile[sym != 0][prec];
    snprintf(buf, cap, "%s %dx%dx%d k%d, prefetch %s%s, %d-wide loads", sym ? "pdist_sym" : "pdist",
             t->ts, t->rbi, t->rbj, t->kt, t->prefetch ? "on" : "off",
             t->minb > 1 ? (t->minb == 2 ? ", 2 groups/SM" : ", >2 groups/SM") : "",
             pd_vector_width(t, prec, sym));
}

/* The program for one precision: the common kernels, then the GPU distance
 * kernel once per variant with its tile. Returns 0, or -1 when cap is too
 * small. */
static int build_source(const demo_kernels *k, int p, char *src, size_t cap) {
    int n = snprintf(src, cap,
                     "#define REAL %s\n#define REAL_IS_DOUBLE %d\n"
                     "#define PC_JB %d\n#define PC_VW %d\n"
                     "#define PC_REALV %s\n#define PC_VLOAD %s\n%s",
                     p == DEMO_F64 ? "double" : "float", p == DEMO_F64, k->pc_jb,
                     p == DEMO_F64 ? 4 : 8, p == DEMO_F64 ? "double4" : "float8",
                     p == DEMO_F64 ? "vload4" : "vload8", demo_kernel_source);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    size_t used = (size_t)n;
    for (int sym = 0; sym < 2; sym++) {
        const demo_pd_tile *t = &k->pd_tile[sym][p];
        /* The mirror passes use the tiles' local memory: as many rows of
         * the transposed block as fit (at least P_TS). */
        int rbj = sym ? t->rbi : t->rbj;
        int v = pd_vector_width(t, p, sym);
        int bt = t->ts * t->rbi, mpad = p == DEMO_F64 ? 1 : 2;
        int tiles = t->kt * (t->ts * (t->rbi + rbj) + 2 * (v > 1 ? v : 1));
        int mp = tiles / (t->ts * (bt + mpad));
        mp = mp < 1 ? 1 : mp > rbj ? rbj : mp;
        n = snprintf(src + used, cap - used,
                     "\n#define P_NAME %s\n#define P_SYM %d\n#define P_TS %d\n"
                     "#define P_RBI %d\n#define P_RBJ %d\n#define P_KT %d\n"
                     "#define P_PF %d\n#define P_MINB %d\n#define P_MP %d\n"
                     "#define P_V %d\n%s"
                     "#undef P_NAME\n#undef P_SYM\n#undef P_TS\n#undef P_RBI\n"
                     "#undef P_RBJ\n#undef P_KT\n#undef P_PF\n#undef P_MINB\n"
                     "#undef P_MP\n#undef P_V\n",
                     sym ? "pdist_sym" : "pdist", sym, t->ts, t->rbi, rbj, t->kt, t->prefetch,
                     t->minb, mp, v, demo_pdist_source);
        if (n < 0 || (size_t)n >= cap - used)
            return -1;
        used += (size_t)n;
    }
    return 0;
}

/* NVIDIA's OpenCL has no __launch_bounds__: the tiles' groups per SM
 * (bN > 1) become a register cap for the program (the loosest any of its
 * two distance kernels asks for, so neither is squeezed below its own),
 * as ptxas allocates them (steps of 8). "" elsewhere. */
static void pd_build_options(const demo_kernels *k, int p, char *opts, size_t cap) {
    opts[0] = '\0';
    const char *ext = kiln_device_extensions(kiln_queue_device(k->queue));
    if (k->info.backend != KILN_BACKEND_OPENCL || !k->gpu_like || !ext ||
        !strstr(ext, "cl_nv_compiler_options"))
        return;
    int regs = 0;
    for (int sym = 0; sym < 2; sym++) {
        const demo_pd_tile *t = &k->pd_tile[sym][p];
        if (t->minb <= 1)
            return; /* a kernel without a cap: none for the program */
        int r = (65536 / (t->ts * t->ts * t->minb)) & ~7;
        regs = r > regs ? r : regs;
    }
    if (regs > 255)
        return;
    snprintf(opts, cap, "-cl-nv-maxrregcount=%d", regs);
}

/* The GPU distance tiles: defaults, then the tuning variables. */
static void pd_tiles_init(demo_kernels *k) {
    /* The fastest of sweeps on H200s (16384 x 64, --kernels-only,
     * scripts/gpu-bench-demo.sh with PDIST_CFGS, 2026-11-27; bench/README.md
     * has the tables), {ts, rbi, rbj, kt, prefetch, minb, vec}. CUDA
     * (NVRTC, sm_90): 16-byte local loads everywhere; float32 16x8x8 k8
     * with 2 groups an SM (128 registers; uncapped it took 138 and one
     * group) full 1.54 ms, symmetric 1.02; float64 full 16x4x8 k16, 2
     * groups 2.83, symmetric 16x4x4 k16, 3 groups 1.63. NVIDIA's OpenCL
     * (its own compiler, same kernels): the float32 full kernel is faster
     * with scalar loads (1.61 against 1.82 ms, capped or not), float64 full
     * with vectors and k8 (2.86 against 2.99), symmetric float32 with
     * vectors k8 (1.00 against 1.07), symmetric float64 scalar (1.60
     * against 1.62). */
    static const demo_pd_tile cuda_defaults[2][2] = {
        { { 16, 8, 8, 8, 0, 2, 1 }, { 16, 4, 8, 16, 0, 2, 1 } }, /* every block */
        { { 16, 8, 8, 8, 0, 2, 1 }, { 16, 4, 4, 16, 0, 3, 1 } }
    }; /* symmetric */
    static const demo_pd_tile opencl_defaults[2][2] = {
        { { 16, 8, 8, 16, 0, 2, 0 }, { 16, 4, 8, 8, 0, 2, 1 } },
        { { 16, 8, 8, 8, 0, 2, 1 }, { 16, 4, 4, 16, 0, 2, 0 } }
    };
    const demo_pd_tile(*defaults)[2] =
        k->info.backend == KILN_BACKEND_CUDA ? cuda_defaults : opencl_defaults;
    memcpy(k->pd_tile, defaults, sizeof cuda_defaults);
    /* CPU devices run pdist_cpu; when the GPU kernel is forced on one
     * (KILN_DEMO_PDIST_KERNEL=gpu, the tests on PoCL), a small tile keeps
     * PoCL's compile of the unrolled kernel short. */
    if (!k->gpu_like)
        for (int sym = 0; sym < 2; sym++)
            for (int p = 0; p < 2; p++)
                k->pd_tile[sym][p] = (demo_pd_tile){ 16, 4, 4, 8, 0, 1, 1 };
    /* KILN_DEMO_PDIST_TILE sets all four; _TILE_F32/_F64 the full
     * kernel's, _SYM_TILE_F32/_F64 the symmetric one's (which keeps
     * rbj = rbi); _PREFETCH=0|1 overrides every prefetch, _VEC=0|1 every
     * choice of vector loads. */
    static const char *const names[2][2] = {
        { "KILN_DEMO_PDIST_TILE_F32", "KILN_DEMO_PDIST_TILE_F64" },
        { "KILN_DEMO_PDIST_SYM_TILE_F32", "KILN_DEMO_PDIST_SYM_TILE_F64" }
    };
    const char *all = getenv("KILN_DEMO_PDIST_TILE");
    const char *pf = getenv("KILN_DEMO_PDIST_PREFETCH");
    const char *vec = getenv("KILN_DEMO_PDIST_VEC");
    for (int sym = 0; sym < 2; sym++) {
        for (int p = 0; p < 2; p++) {
            demo_pd_tile *t = &k->pd_tile[sym][p];
            const char *one = getenv(names[sym][p]);
            if (all)
                pd_tile_parse(all, t);
            if (one)
                pd_tile_parse(one, t);
            if (pf && (pf[0] == '0' || pf[0] == '1') && !pf[1])
                t->prefetch = pf[0] - '0';
            if (vec && (vec[0] == '0' || vec[0] == '1') && !vec[1])
                t->vec = vec[0] - '0';
            if (sym)
                t->rbj = t->rbi;
        }
    }
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
    /* The fast mask: one work-group per row; on a GPU 256 work-items (an
     * 8192 row is 1024 words: 4 stores each), on a CPU 16 (PoCL runs a
     * group as a loop; a few items keep the barrier cheap). */
    k->mask_local = k->gpu_like ? 256 : 16;
    /* CPU devices run mask_rows (no barrier); KILN_DEMO_MASK_KERNEL=fast|rows
     * overrides. */
    k->mask_rows = !k->gpu_like;
    const char *mk = getenv("KILN_DEMO_MASK_KERNEL");
    if (mk && strcmp(mk, "fast") == 0)
        k->mask_rows = 0;
    else if (mk && strcmp(mk, "rows") == 0)
        k->mask_rows = 1;
    pd_tiles_init(k); /* reads gpu_like */
    /* The distances of a point set to itself are symmetric: on GPUs the
     * symmetric kernel is the default (bit-identical results, half the
     * arithmetic). KILN_DEMO_PDIST_SYM=0|1 overrides. */
    k->pd_sym = k->gpu_like;
    const char *sym = getenv("KILN_DEMO_PDIST_SYM");
    if (sym && (sym[0] == '0' || sym[0] == '1') && !sym[1])
        k->pd_sym = sym[0] - '0';
    /* CPU devices (OpenCL and host) run pdist_cpu: 8 columns per work-item
     * (8 vector accumulators + 2 temporaries fit the 16 AVX registers;
     * 2048x64 on PoCL: 4 columns 1.5x slower). CUDA has no such kernel. */
    int can_cpu = k->info.backend != KILN_BACKEND_CUDA;
    k->pd_cpu = can_cpu && !k->gpu_like;
    k->pc_jb = 8;
    const char *jb = getenv("KILN_DEMO_PDIST_JB"); /* tuning: 1..16 */
    if (jb && atoi(jb) >= 1 && atoi(jb) <= 16)
        k->pc_jb = atoi(jb);
    const char *which = getenv("KILN_DEMO_PDIST_KERNEL"); /* "gpu", "cpu" */
    if (which && strcmp(which, "gpu") == 0)
        k->pd_cpu = 0;
    else if (which && strcmp(which, "cpu") == 0 && can_cpu)
        k->pd_cpu = 1;
    size_t len = sizeof demo_kernel_source + 2 * sizeof demo_pdist_source + 2048;
    char *src = malloc(len);
    if (!src) {
        demo_kernels_release(k);
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (int p = 0; p < 2; p++) {
        if (p == DEMO_F64 && !k->info.fp64)
            continue;
        if (build_source(k, p, src, len) != 0) {
            free(src);
            demo_kernels_release(k);
            return KILN_ERROR_OUT_OF_HOST_MEMORY; /* cannot happen: len
                                                     has room to spare */
        }
        char opts[64];
        pd_build_options(k, p, opts, sizeof opts);
        kiln_program_opts po = KILN_PROGRAM_OPTS(.build_options = opts);
        st = kiln_program_create(kiln_queue_context(queue), src, &po, &k->program[p]);
        if (st == KILN_OK)
            st = kiln_kernel_create(k->program[p], "mask_naive", &k->naive[p]);
        if (st == KILN_OK)
            st = kiln_kernel_create(k->program[p], "mask_fast", &k->fast[p]);
        if (st == KILN_OK)
            st = kiln_kernel_create(k->program[p], "mask_rows", &k->rows[p]);
        if (st == KILN_OK)
            st = kiln_kernel_create(k->program[p], "pdist", &k->pdist[p]);
        if (st == KILN_OK)
            st = kiln_kernel_create(k->program[p], "pdist_sym", &k->pdist_sym[p]);
        if (st == KILN_OK && can_cpu)
            st = kiln_kernel_create(k->program[p], "pdist_cpu", &k->pdist_cpu[p]);
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

static size_t round_up(size_t n, size_t m) {
    return (n + m - 1) / m * m;
}

/* One timed run of a launch sequence: wall time around launch + wait, and
 * the device time from the first event's start to the last one's end. */
typedef kiln_status (*launch_fn)(void *ctx, kiln_event **first, kiln_event **last);

static kiln_status timed_runs(demo_kernels *k, launch_fn launch, void *ctx, int reps,
                              double budget_s, demo_time *t) {
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
        dev[n] = b.ended > a.started ? 1e-9 * (double)(b.ended - a.started) : 0.0;
        spent += wall[n++];
    }
    t->wall_s = median(wall, n);
    t->device_s = median(dev, n);
    t->reps = n;
    return KILN_OK;
}

/* End to end: up to reps runs (at least one, within budget_s) of upload
 * (blocking writes of in[0..nin)), the launches, and the read-back of out,
 * timed on the host; the median goes to t->e2e_s. The last run leaves the
 * result in host_out. */
typedef struct demo_xfer {
    kiln_buffer *buf;
    const void *host;
    size_t bytes;
} demo_xfer;

static kiln_status e2e_runs(demo_kernels *k, launch_fn launch, void *ctx, const demo_xfer *in,
                            int nin, demo_xfer out, void *host_out, int reps, double budget_s,
                            demo_time *t) {
    double e2e[DEMO_MAX_REPS], spent = 0.0;
    int n = 0;
    if (reps < 1)
        reps = 1;
    if (reps > DEMO_MAX_REPS)
        reps = DEMO_MAX_REPS;
    while (n < reps && (n == 0 || spent < budget_s)) {
        kiln_event *first = NULL, *last = NULL, *read = NULL;
        double t0 = demo_now();
        kiln_status st = KILN_OK;
        for (int i = 0; i < nin && st == KILN_OK; i++)
            st = kiln_buffer_write(k->queue, in[i].buf, 0, in[i].bytes, in[i].host);
        if (st == KILN_OK)
            st = launch(ctx, &first, &last);
        if (st == KILN_OK)
            st = kiln_buffer_read_async(k->queue, out.buf, 0, out.bytes, host_out, 1, &last, &read);
        if (st == KILN_OK)
            st = kiln_event_wait(read);
        double t1 = demo_now();
        if (first != last)
            kiln_event_release(first);
        kiln_event_release(last);
        kiln_event_release(read);
        if (st != KILN_OK) {
            kiln_queue_finish(k->queue);
            return st;
        }
        e2e[n] = t1 - t0;
        spent += e2e[n++];
    }
    t->e2e_s = median(e2e, n);
    return KILN_OK;
}

typedef struct mask_run {
    demo_kernels *k;
    demo_prec prec;
    int fast, n, width, height;
    kiln_buffer *vx, *vy, *mask;
} mask_run;

static kiln_status mask_launch(void *ctx, kiln_event **first, kiln_event **last) {
    mask_run *r = ctx;
    demo_kernels *k = r->k;
    int p = r->prec;
    kiln_arg args[] = { KILN_ARG_BUF(r->vx),    KILN_ARG_BUF(r->vy),     KILN_ARG_I32(r->n),
                        KILN_ARG_I32(r->width), KILN_ARG_I32(r->height), KILN_ARG_BUF(r->mask) };
    kiln_status st;
    if (!r->fast) {
        size_t local[2] = { 16, 16 };
        size_t global[2] = { round_up((size_t)r->width, 16), round_up((size_t)r->height, 16) };
        st = kiln_kernel_launch(k->queue, k->naive[p], 2, global, local, 6, args, 0, NULL, last);
    } else if (k->mask_rows) {
        /* 8 rows a work-item (MASK_ROWS_PER_ITEM), mask_local work-items
         * a group (a CPU thread's chunk of rows). */
        size_t local = (size_t)k->mask_local;
        size_t global = round_up(((size_t)r->height + 7) / 8, local);
        st = kiln_kernel_launch(k->queue, k->rows[p], 1, &global, &local, 6, args, 0, NULL, last);
    } else {
        /* One group per row; no more items than the row has words (a
         * narrow image wastes no work-items). */
        size_t words = ((size_t)r->width + 7) / 8;
        size_t local = (size_t)k->mask_local;
        while (local > 32 && local / 2 >= words)
            local /= 2;
        size_t global = local * (size_t)r->height;
        st = kiln_kernel_launch(k->queue, k->fast[p], 1, &global, &local, 6, args, 0, NULL, last);
    }
    *first = *last;
    return st;
}

kiln_status demo_mask_kernel(demo_kernels *k, demo_prec prec, int fast, const demo_polygon *poly,
                             int width, int height, int reps, double budget_s, uint8_t *out,
                             demo_time *t) {
    if (!k || !poly || !out || !t || width < 1 || height < 1 || width > 65536 || height > 65536 ||
        poly->n < 1 || poly->n > DEMO_MAX_VERTS || (prec != DEMO_F32 && prec != DEMO_F64))
        return KILN_ERROR_INVALID_ARGUMENT;
    if (!k->have[prec])
        return KILN_ERROR_UNSUPPORTED;
    kiln_context *ctx = kiln_queue_context(k->queue);
    size_t esize = prec == DEMO_F64 ? sizeof(double) : sizeof(float);
    const void *hx = prec == DEMO_F64 ? (const void *)poly->x : (const void *)poly->xf;
    const void *hy = prec == DEMO_F64 ? (const void *)poly->y : (const void *)poly->yf;
    size_t npix = (size_t)width * (size_t)height;
    mask_run r = {
        .k = k, .prec = prec, .fast = fast, .n = poly->n, .width = width, .height = height
    };
    kiln_status st =
        kiln_buffer_create(ctx, esize * (size_t)poly->n, KILN_BUFFER_READ_ONLY, hx, &r.vx);
    if (st == KILN_OK)
        st = kiln_buffer_create(ctx, esize * (size_t)poly->n, KILN_BUFFER_READ_ONLY, hy, &r.vy);
    if (st == KILN_OK)
        st = kiln_buffer_create(ctx, npix, KILN_BUFFER_WRITE_ONLY, NULL, &r.mask);
    if (st == KILN_OK)
        st = timed_runs(k, mask_launch, &r, reps, budget_s, t);
    demo_xfer in[2] = { { r.vx, hx, esize * (size_t)poly->n },
                        { r.vy, hy, esize * (size_t)poly->n } };
    if (st == KILN_OK)
        st = e2e_runs(k, mask_launch, &r, in, 2, (demo_xfer){ r.mask, NULL, npix }, out, reps,
                      budget_s, t);
    kiln_buffer_release(r.vx);
    kiln_buffer_release(r.vy);
    kiln_buffer_release(r.mask);
    return st;
}

typedef struct pdist_run {
    demo_kernels *k;
    demo_prec prec;
    int m, d;
    kiln_buffer *x, *out;
} pdist_run;

static kiln_status pdist_launch(void *ctx, kiln_event **first, kiln_event **last) {
    pdist_run *r = ctx;
    demo_kernels *k = r->k;
    kiln_arg args[] = { KILN_ARG_BUF(r->x), KILN_ARG_I32(r->m), KILN_ARG_I32(r->d),
                        KILN_ARG_BUF(r->out) };
    kiln_status st;
    if (k->pd_cpu && k->pdist_cpu[r->prec]) {
        /* Work-item (column block, row); groups of 8 rows sharing the
         * column block's points in cache. */
        size_t jb = (size_t)k->pc_jb;
        size_t global[2] = { ((size_t)r->m + jb - 1) / jb, round_up((size_t)r->m, 8) };
        size_t local[2] = { 1, 8 };
        st = kiln_kernel_launch(k->queue, k->pdist_cpu[r->prec], 2, global, local, 4, args, 0, NULL,
                                last);
    } else {
        int sym = k->pd_sym != 0;
        const demo_pd_tile *t = &k->pd_tile[sym][r->prec];
        size_t ts = (size_t)t->ts;
        size_t bi = ((size_t)r->m + ts * (size_t)t->rbi - 1) / (ts * (size_t)t->rbi);
        size_t bj = ((size_t)r->m + ts * (size_t)t->rbj - 1) / (ts * (size_t)t->rbj);
        size_t local[2] = { ts, ts };
        size_t global[2] = { bj * ts, bi * ts };
        if (sym) { /* one group per block of the upper triangle */
            global[0] = bi * (bi + 1) / 2 * ts;
            global[1] = ts;
        }
        st = kiln_kernel_launch(k->queue, sym ? k->pdist_sym[r->prec] : k->pdist[r->prec], 2,
                                global, local, 4, args, 0, NULL, last);
    }
    *first = *last;
    return st;
}

kiln_status demo_pdist_kernel(demo_kernels *k, demo_prec prec, const void *x, int m, int d,
                              int reps, double budget_s, void *out, demo_time *t) {
    if (!k || !x || !out || !t || m < 1 || d < 1 || (prec != DEMO_F32 && prec != DEMO_F64))
        return KILN_ERROR_INVALID_ARGUMENT;
    if (!k->have[prec])
        return KILN_ERROR_UNSUPPORTED;
    kiln_context *ctx = kiln_queue_context(k->queue);
    size_t esize = prec == DEMO_F64 ? sizeof(double) : sizeof(float);
    size_t out_bytes = esize * (size_t)m * (size_t)m;
    pdist_run r = { .k = k, .prec = prec, .m = m, .d = d };
    kiln_status st =
        kiln_buffer_create(ctx, esize * (size_t)m * (size_t)d, KILN_BUFFER_READ_ONLY, x, &r.x);
    if (st == KILN_OK)
        st = kiln_buffer_create(ctx, out_bytes, KILN_BUFFER_WRITE_ONLY, NULL, &r.out);
    if (st == KILN_OK)
        st = timed_runs(k, pdist_launch, &r, reps, budget_s, t);
    demo_xfer in = { r.x, x, esize * (size_t)m * (size_t)d };
    if (st == KILN_OK)
        st = e2e_runs(k, pdist_launch, &r, &in, 1, (demo_xfer){ r.out, NULL, out_bytes }, out, reps,
                      budget_s, t);
    kiln_buffer_release(r.x);
    kiln_buffer_release(r.out);
    return st;
}
