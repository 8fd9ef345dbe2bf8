/* The demo's workloads, shared by `kiln demo` (tools/kiln/demo.c) and its
 * test (tests/test_demo.c):
 *
 *  1. The polygon mask of the seeds: which pixels of a width x height image
 *     lie inside a polygon (even-odd rule). Two algorithms: the seeds'
 *     insidePolygon, one call per pixel (serial C, OpenMP C, the seeds'
 *     naive kernel: one work-item per pixel), and row crossing (serial C,
 *     OpenMP C, kiln's fast kernel: one work-group per row, the row's edge
 *     crossings once, then the row written 8 pixels per store).
 *  2. Pairwise Euclidean distances of the seeds' offload proposal:
 *     out[i*m + j] = sqrt(sum_k (x[i*d+k] - x[j*d+k])^2). Every pair
 *     (serial C, OpenMP C, kiln's full GPU kernel or its CPU kernel) and
 *     symmetry, pairs j >= i mirrored (serial C, OpenMP C, kiln's symmetric
 *     GPU kernel). GPU kernels: register-tiled with local memory; CPU:
 *     vectorised over the dimensions, no local memory.
 *
 * The rules every mask version follows, so that all agree bit for bit:
 *  - the vertices are fixed-point values: multiples of 1/256 pixel with
 *    |v| <= DEMO_COORD_LIMIT (demo_polygon_set rounds and clamps them), so
 *    v * 256 is an exact integer in float and in double;
 *  - pixel (col x, row y) is the point (x + 0.5, y + 0.5);
 *  - a point equal to a vertex is inside;
 *  - edge (x1,y1)-(x2,y2) is crossed when min(y1,y2) < py <= max(y1,y2) and
 *    px <= xinters, xinters = x1 + (py - y1) * (x2 - x1) / (y2 - y1) taken
 *    exactly: every version tests (px - x1) * (y2 - y1) <= (py - y1) *
 *    (x2 - x1) (>= when y2 < y1) in 64-bit integers on the fixed-point
 *    values. No rounded division, no FMA contraction, no compiler option
 *    can change a pixel, so float32 and float64 give the same mask;
 *  - inside when the number of crossed edges is odd.
 */
#ifndef KILN_TOOL_DEMO_WORK_H
#define KILN_TOOL_DEMO_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "kiln.h"

/* The kernels keep a row's crossings in fixed arrays of this size. */
#define DEMO_MAX_VERTS 64
/* Vertex coordinates are clamped to [-DEMO_COORD_LIMIT, DEMO_COORD_LIMIT]:
 * 256 * 65535 < 2^24 keeps them exact in float. */
#define DEMO_COORD_LIMIT 65535.0

typedef enum demo_prec { DEMO_F32 = 0, DEMO_F64 = 1 } demo_prec;

typedef struct demo_polygon {
    int n; /* 1..DEMO_MAX_VERTS vertices */
    double x[DEMO_MAX_VERTS], y[DEMO_MAX_VERTS];
    float xf[DEMO_MAX_VERTS], yf[DEMO_MAX_VERTS]; /* the same, rounded */
} demo_polygon;

/* xorshift64* on *state (never 0). */
uint64_t demo_rand_u64(uint64_t *state);
double demo_rand_unit(uint64_t *state); /* [0, 1) */

/* Sets the vertices (n <= DEMO_MAX_VERTS), rounded to the nearest 1/256 and
 * clamped to +-DEMO_COORD_LIMIT, and their float copies (equal values). */
void demo_polygon_set(demo_polygon *poly, int n, const double *x, const double *y);
/* A random star-shaped polygon of n vertices (sorted random angles, random
 * radii) that fits a width x height image. */
void demo_polygon_random(demo_polygon *poly, int n, int width, int height, uint64_t *state);

/* Host versions (mask: width*height bytes, 1 inside, 0 outside). */
void demo_mask_serial(const demo_polygon *poly, demo_prec prec, int width, int height,
                      uint8_t *mask);
void demo_mask_openmp(const demo_polygon *poly, demo_prec prec, int width, int height,
                      uint8_t *mask);
/* kiln's fast kernel's algorithm on the host (row crossing): each row's
 * edge crossings once (solved for x in the same exact integer test), then
 * the row written run by run. The same pixels as demo_mask_serial. */
void demo_mask_rows_serial(const demo_polygon *poly, demo_prec prec, int width, int height,
                           uint8_t *mask);
void demo_mask_rows_openmp(const demo_polygon *poly, demo_prec prec, int width, int height,
                           uint8_t *mask);
/* x: m*d values (float or double per prec), out: m*m of the same type. */
void demo_pdist_serial(demo_prec prec, const void *x, int m, int d, void *out);
void demo_pdist_openmp(demo_prec prec, const void *x, int m, int d, void *out);
/* The symmetric kernel's algorithm on the host: out[i, j] for j >= i,
 * mirrored to out[j, i]; half the arithmetic, the same bits as
 * demo_pdist_serial. */
void demo_pdist_sym_serial(demo_prec prec, const void *x, int m, int d, void *out);
void demo_pdist_sym_openmp(demo_prec prec, const void *x, int m, int d, void *out);
/* Parts of the serial versions, for estimating the serial time of a large
 * case from a sample: rows y0, y0 + step, ... < y1 of the mask (written at
 * their place in mask, a width x (rows) image), rows [i0, i1) of out. */
void demo_mask_serial_rows(const demo_polygon *poly, demo_prec prec, int width, int y0, int y1,
                           int step, uint8_t *mask);
void demo_pdist_serial_rows(demo_prec prec, const void *x, int m, int d, int i0, int i1, void *out);
/* OpenMP's thread count; 0 if this binary was built without OpenMP. */
int demo_have_openmp(void);

/* ----------------------------------------------------- kiln kernels */

/* The shape of a GPU distance kernel (demo_kernels.h): a ts x ts
 * work-group, rbi x rbj outputs per work-item, kt dimensions staged per
 * step, register prefetch of the next step (0/1), and minb groups per SM
 * that the registers must allow (CUDA's __launch_bounds__; 1: no limit
 * beyond the group size). The symmetric kernel needs rbi == rbj. */
typedef struct demo_pd_tile {
    int ts, rbi, rbj, kt, prefetch, minb;
    int vec; /* 1: 16-byte local loads where rbi, rbj allow (P_V) */
} demo_pd_tile;

typedef struct demo_kernels {
    kiln_queue *queue; /* a profiling queue (one reference held) */
    kiln_device_info info;
    int have[2]; /* precision built (fp64 needs the device) */
    kiln_program *program[2];
    kiln_kernel *naive[2], *fast[2], *rows[2], *pdist[2], *pdist_sym[2], *pdist_cpu[2];
    int gpu_like;               /* launch shapes for a GPU, else a CPU */
    int mask_local;             /* work-group size of the fast mask (a row) */
    int mask_rows;              /* 1: kiln's mask as mask_rows (a row per
                                   work-item, no barrier: CPU devices);
                                   0: mask_fast (a group per row) */
    demo_pd_tile pd_tile[2][2]; /* [symmetric][precision] */
    int pd_sym;                 /* 1: the GPU kernel computes the blocks on
                                   and above the diagonal and mirrors them
                                   (default on GPUs); 0: every block, like
                                   torch.cdist. Both are built: may be
                                   changed after create */
    int pd_cpu;                 /* 1: run pdist_cpu (CPU devices: OpenCL, host);
                                   may be changed after create where
                                   pdist_cpu[p] is not NULL */
    int pc_jb;                  /* pdist_cpu: columns per work-item */
} demo_kernels;

/* Builds the demo's programs for the queue's device (float always, double
 * when the device has fp64). Blocks. On failure everything is released. */
kiln_status demo_kernels_create(kiln_queue *queue, demo_kernels *k);
void demo_kernels_release(demo_kernels *k);

/* Timings: median over the timed repetitions. wall_s is host time from
 * before the launches to the end of the wait (launch overhead included),
 * device_s the event-profiling time from the first kernel's start to the
 * last one's end; neither includes the buffer uploads or the read-back.
 * e2e_s (end to end) is what a program waits for: upload of the inputs,
 * the kernel and the read-back of the result into host memory (for host
 * versions it equals wall_s). */
typedef struct demo_time {
    double wall_s, device_s, e2e_s;
    int reps;
} demo_time;

/* Runs the mask kernel (fast = 0: the seeds' naive kernel; 1: kiln's
 * one-group-per-row kernel) once untimed, then up to reps timed runs
 * (stopping early after budget_s seconds, at least one), then up to reps
 * end-to-end runs (upload, kernel, read-back into out). width and height: 1..65536. */
kiln_status demo_mask_kernel(demo_kernels *k, demo_prec prec, int fast, const demo_polygon *poly,
                             int width, int height, int reps, double budget_s, uint8_t *out,
                             demo_time *t);
/* The same for pairwise distances (the distances of one point set to
 * itself, so the symmetric kernel applies). */
kiln_status demo_pdist_kernel(demo_kernels *k, demo_prec prec, const void *x, int m, int d,
                              int reps, double budget_s, void *out, demo_time *t);

/* "pdist 16x8x8 k16, prefetch off" or "pdist_cpu, 8 columns per
 * work-item": the kernel demo_pdist_kernel runs for prec with sym. */
void demo_pdist_describe(const demo_kernels *k, demo_prec prec, int sym, char *buf, size_t cap);

/* Host timing helper: runs fn(arg) up to reps times (at least once, stopping
 * after budget_s) and returns the median seconds in t->wall_s. */
void demo_time_host(void (*fn)(void *), void *arg, int reps, double budget_s, demo_time *t);
double demo_now(void);

#endif
