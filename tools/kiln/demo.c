/* kiln demo — the seeds' speed-up table on this machine, with kiln on top.
 *
 * Two workloads, each on the host (serial C, OpenMP C) and on every device
 * kiln finds (or those named with --device):
 *   1. the polygon mask of the seeds (even-odd rule, 24-edge polygon): the
 *      seeds' naive kernel and kiln's fast row-span kernels;
 *   2. the pairwise Euclidean distances of the seeds' offload proposal, in
 *      float32 and float64: kiln's tiled kernel.
 * Each case runs two algorithms (the seeds' and the one kiln's fastest
 * kernel uses: row crossing for the mask, symmetry for the distances) on
 * the host and on the devices, so that the table separates what the
 * algorithm gains from what the device gains. Every result is checked
 * against serial C; a table (method, time, device time, end-to-end time,
 * speed-up over the seeds' serial C and over the best host version of the
 * same algorithm) goes to stdout, progress to stderr, pictures
 * (the mask, a chart of the speed-ups) under --out.
 *
 * How the kiln parts work: demo_work.c (host code) and demo_kernels.h
 * (kernels). Pictures: demo_pictures.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "demo_pictures.h"
#include "demo_work.h"
#include "kiln.h"

static const char demo_usage[] =
    "usage: kiln demo [options]\n"
    "\n"
    "Runs the seeds' polygon mask and pairwise distances on the host (serial C,\n"
    "OpenMP C) and on kiln's devices, checks every result against serial C and\n"
    "prints the speed-up table. Each case runs two algorithms, each on the host\n"
    "and on the devices: the seeds' (per-pixel test; every pair) and kiln's\n"
    "(row crossing; symmetry). Pictures go to --out.\n"
    "\n"
    "Options:\n"
    "  --device SEL    run on this device (repeatable; default: every device);\n"
    "                  SEL as in 'kiln devices': opencl:0:0, cuda:0, pocl, gpu\n"
    "  --sizes LIST    mask sizes, comma separated (default 1024,8192)\n"
    "  --points M      points for the distances (default 2048)\n"
    "  --dims D        dimensions of each point (default 64)\n"
    "  --reps N        timed repetitions, the median is shown (default 5;\n"
    "                  a method stops repeating after 3 s of work)\n"
    "  --no-openmp     leave out the OpenMP C rows\n"
    "  --no-symmetry   GPU distances: only the kernel that computes every\n"
    "                  block (like torch.cdist); by default the symmetric one\n"
    "                  (blocks on and above the diagonal, mirrored; the same\n"
    "                  bits) runs first and this one second\n"
    "  --host-max-seconds S\n"
    "                  if serial C would take longer than S seconds for a case\n"
    "                  (timed on 1/16 of the rows), show 16x that sample's time,\n"
    "                  marked estimated, and compute the reference with OpenMP\n"
    "                  (the same code per row, so the same results)\n"
    "  --quick         small sizes for a fast run (256,1024; 512 points x 16)\n"
    "  --kernels-only  distances: no host rows, only the kernels (for tile\n"
    "                  sweeps); the reference comes from OpenMP C\n"
    "  --out DIR       where the pictures go (default ./out)\n"
    "  --json          print the results as JSON on stdout instead of the table\n"
    "  --mpi           under mpirun: the workloads split over the ranks\n"
    "                  (runs kiln-mpi-demo from beside kiln; --mpi --help)\n"
    "  -h, --help      show this help\n";

#define DEMO_MAX_DEVICES 16
#define DEMO_MAX_SIZES 8
#define DEMO_EDGES 24
#define DEMO_SEED 20140211u /* the seeds' lecture date: same polygon each run */

typedef struct demo_opts {
    const char *devices[DEMO_MAX_DEVICES];
    int num_devices;
    int sizes[DEMO_MAX_SIZES];
    int num_sizes;
    int points, dims, reps, openmp, json, no_symmetry;
    int kernels_only; /* distances: no host rows (tile sweeps) */
    const char *out_dir;
    double budget_s;
    double host_max_s; /* 0: no limit */
} demo_opts;

/* Each case runs two algorithms, on the host and on the devices, so the
 * table separates what the algorithm gains from what the device gains:
 * mask: the seeds' per-pixel test (serial, OpenMP, the naive kernel) and
 * the row crossing of kiln's fast kernel (serial, OpenMP, the fast kernel);
 * distances: every pair (serial, OpenMP, the full GPU kernel or the CPU
 * kernel) and symmetry (serial, OpenMP, the symmetric GPU kernel). */
typedef enum demo_algo { ALGO_SEEDS = 0, ALGO_KILN = 1 } demo_algo;

static const char *algo_key(const char *workload, int algo) {
    if (strcmp(workload, "mask") == 0)
        return algo == ALGO_KILN ? "row-crossing" : "seeds";
    return algo == ALGO_KILN ? "symmetry" : "all-pairs";
}

static const char *algo_title(const char *workload, int algo) {
    if (strcmp(workload, "mask") == 0)
        return algo == ALGO_KILN ? "row-crossing algorithm (each row's edge crossings "
                                   "once, then runs of pixels)"
                                 : "seeds' algorithm (insidePolygon for every pixel)";
    return algo == ALGO_KILN ? "symmetry (pairs j >= i computed once, mirrored)"
                             : "all pairs (the seeds' loop; like torch.cdist)";
}

/* One row of the table. */
typedef struct demo_result {
    char workload[16]; /* "mask", "pdist" */
    char label[48];    /* "1024x1024 float64", "2048x64 float32" */
    char method[96];
    char device[80];  /* "" for the host */
    char variant[16]; /* pdist kernels: "symmetric", "full", "cpu" */
    char shape[96];   /* pdist kernels: demo_pdist_describe's text */
    int algo;         /* demo_algo: which algorithm the row runs */
    int kernel;       /* 1: has a device time */
    int estimated;    /* serial C: time extrapolated from a sample */
    demo_time time;
    double speedup;      /* serial C of the seeds' algorithm / this (wall) */
    double speedup_algo; /* the best host version of the same algorithm /
                            this (wall) */
    long mismatches;     /* mask: pixels that differ from serial C */
    double relerr;       /* pdist: |out - ref| / |ref| against float64 */
    int ok;              /* the check passed */
    char error[200];     /* non-empty: the method failed to run */
} demo_result;

typedef struct demo_state {
    demo_opts opts;
    demo_kernels dev[DEMO_MAX_DEVICES];
    char dev_name[DEMO_MAX_DEVICES][80];
    int ndev;
    demo_result *results;
    int nresults, cap;
    int step, steps;
} demo_state;

/* ------------------------------------------------------------- helpers */

static void progress(demo_state *s, const char *what, const char *where, const char *label) {
    s->step++;
    fprintf(stderr, "[%d/%d] %s%s%s %s ...\n", s->step, s->steps, what, where[0] ? " on " : "",
            where, label);
}

static demo_result *add_result(demo_state *s, const char *workload, const char *label, int algo,
                               const char *method, const char *device) {
    if (s->nresults == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        demo_result *r = realloc(s->results, (size_t)cap * sizeof *r);
        if (!r)
            return NULL;
        s->results = r;
        s->cap = cap;
    }
    demo_result *r = &s->results[s->nresults++];
    memset(r, 0, sizeof *r);
    snprintf(r->workload, sizeof r->workload, "%s", workload);
    snprintf(r->label, sizeof r->label, "%s", label);
    snprintf(r->method, sizeof r->method, "%s", method);
    snprintf(r->device, sizeof r->device, "%s", device);
    r->algo = algo;
    r->relerr = -1.0;
    return r;
}

static void set_error(demo_result *r, kiln_status st) {
    const char *msg = kiln_last_error_message();
    snprintf(r->error, sizeof r->error, "%s%s%s", kiln_status_name(st), msg && *msg ? ": " : "",
             msg ? msg : "");
    fprintf(stderr, "      failed: %s\n", r->error);
}

static long count_mismatches(const uint8_t *a, const uint8_t *b, size_t n) {
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += a[i] != b[i];
    return bad;
}

/* |out - ref| / |ref| (Frobenius norms) with ref in float64. */
static double relative_error(demo_prec prec, const void *out, const double *ref, size_t n) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        double v = prec == DEMO_F64 ? ((const double *)out)[i] : (double)((const float *)out)[i];
        num += (v - ref[i]) * (v - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static const char *prec_name(demo_prec p) {
    return p == DEMO_F64 ? "float64" : "float32";
}

/* --------------------------------------------------------- the mask */

typedef struct mask_call {
    const demo_polygon *poly;
    demo_prec prec;
    int size, openmp, algo;
    uint8_t *out;
} mask_call;

static void run_mask_host(void *arg) {
    mask_call *c = arg;
    void (*fn)(const demo_polygon *, demo_prec, int, int, uint8_t *) =
        c->algo == ALGO_KILN ? (c->openmp ? demo_mask_rows_openmp : demo_mask_rows_serial)
                             : (c->openmp ? demo_mask_openmp : demo_mask_serial);
    fn(c->poly, c->prec, c->size, c->size, c->out);
}

/* A host row of the mask's table (not the baseline), checked against ref. */
static int mask_host_row(demo_state *s, const char *label, mask_call *call, const uint8_t *ref,
                         double serial_s) {
    const demo_opts *o = &s->opts;
    char method[96];
    if (call->openmp)
        snprintf(method, sizeof method, "OpenMP C (%d threads)%s", demo_have_openmp(),
                 call->algo == ALGO_KILN ? ", row crossing" : "");
    else
        snprintf(method, sizeof method, "serial C%s",
                 call->algo == ALGO_KILN ? ", row crossing" : "");
    progress(s, method, "", label);
    demo_result *r = add_result(s, "mask", label, call->algo, method, "");
    if (!r)
        return -1;
    size_t npix = (size_t)call->size * (size_t)call->size;
    memset(call->out, 0xAA, npix);
    demo_time_host(run_mask_host, call, o->reps, o->budget_s, &r->time);
    r->speedup = serial_s / r->time.wall_s;
    r->mismatches = count_mismatches(call->out, ref, npix);
    r->ok = r->mismatches == 0;
    return 0;
}

#define DEMO_SAMPLE 16

/* --host-max-seconds: serial C on every DEMO_SAMPLE-th row; when the whole
 * would take longer than the limit, the row reports DEMO_SAMPLE x that time
 * (marked estimated) and OpenMP computes the reference (the same row code,
 * so the same pixels). Returns 1 when estimated. */
static int mask_serial_estimated(const demo_opts *o, const demo_polygon *poly, int size,
                                 uint8_t *ref, demo_result *base) {
    if (o->host_max_s <= 0.0 || size < 4 * DEMO_SAMPLE)
        return 0;
    double t0 = demo_now();
    demo_mask_serial_rows(poly, DEMO_F64, size, 0, size, DEMO_SAMPLE, ref);
    double est = DEMO_SAMPLE * (demo_now() - t0);
    if (est <= o->host_max_s)
        return 0;
    fprintf(stderr,
            "      serial C would take ~%.0f s: estimated from 1/%d "
            "of the rows\n",
            est, DEMO_SAMPLE);
    demo_mask_openmp(poly, DEMO_F64, size, size, ref);
    base->time.wall_s = est;
    base->time.reps = 1;
    base->estimated = 1;
    snprintf(base->method, sizeof base->method, "serial C (estimated from 1/%d of the rows)",
             DEMO_SAMPLE);
    return 1;
}

/* The same for the distances: rows [0, m / DEMO_SAMPLE) of out. */
static int pdist_serial_estimated(const demo_opts *o, demo_prec prec, const void *x, int m, int d,
                                  void *out, demo_result *base) {
    if (o->host_max_s <= 0.0 || m < 4 * DEMO_SAMPLE)
        return 0;
    int rows = m / DEMO_SAMPLE;
    double t0 = demo_now();
    demo_pdist_serial_rows(prec, x, m, d, 0, rows, out);
    double est = (double)m / rows * (demo_now() - t0);
    if (est <= o->host_max_s)
        return 0;
    fprintf(stderr,
            "      serial C would take ~%.0f s: estimated from 1/%d "
            "of the rows\n",
            est, DEMO_SAMPLE);
    demo_pdist_openmp(prec, x, m, d, out);
    base->time.wall_s = est;
    base->time.reps = 1;
    base->estimated = 1;
    snprintf(base->method, sizeof base->method, "serial C (estimated from 1/%d of the rows)",
             DEMO_SAMPLE);
    return 1;
}

static void run_mask_size(demo_state *s, int size, int *picture_done) {
    const demo_opts *o = &s->opts;
    size_t npix = (size_t)size * (size_t)size;
    uint64_t seed = DEMO_SEED;
    demo_polygon poly;
    demo_polygon_random(&poly, DEMO_EDGES, size, size, &seed);
    uint8_t *ref[2] = { NULL, NULL }, *out = malloc(npix);
    ref[DEMO_F64] = malloc(npix);
    if (!out || !ref[DEMO_F64]) {
        fprintf(stderr, "kiln demo: out of memory for a %dx%d mask\n", size, size);
        free(out);
        free(ref[DEMO_F64]);
        return;
    }
    char label[48], method[96];
    snprintf(label, sizeof label, "%dx%d", size, size);

    /* Serial C of the seeds' algorithm in float64: the reference and the
     * baseline of the first speed-up column. */
    progress(s, "serial C", "", label);
    mask_call call = { &poly, DEMO_F64, size, 0, ALGO_SEEDS, ref[DEMO_F64] };
    demo_result *base = add_result(s, "mask", label, ALGO_SEEDS, "serial C", "");
    if (!base)
        goto done;
    if (!mask_serial_estimated(o, &poly, size, ref[DEMO_F64], base))
        demo_time_host(run_mask_host, &call, o->reps, o->budget_s, &base->time);
    base->speedup = 1.0;
    base->ok = 1;
    double serial_s = base->time.wall_s;

    /* Each algorithm's group: its host rows, then its kernel on every
     * device (the naive kernel runs the seeds' test, the fast kernel the
     * row crossing). */
    for (int algo = ALGO_SEEDS; algo <= ALGO_KILN; algo++) {
        call.algo = algo;
        call.out = out;
        for (call.openmp = algo == ALGO_SEEDS; call.openmp <= o->openmp; call.openmp++)
            if (mask_host_row(s, label, &call, ref[DEMO_F64], serial_s) != 0)
                goto done;
        for (int d = 0; d < s->ndev; d++) {
            demo_kernels *k = &s->dev[d];
            /* float64 where the device has it; else float32, checked
             * against serial C in float32 (computed once, untimed). */
            demo_prec prec = k->have[DEMO_F64] ? DEMO_F64 : DEMO_F32;
            if (!ref[prec]) {
                ref[prec] = malloc(npix);
                if (!ref[prec])
                    goto done;
                demo_mask_serial(&poly, prec, size, size, ref[prec]);
            }
            int fast = algo == ALGO_KILN;
            const char *what = fast ? "kiln fast kernel" : "naive kernel";
            progress(s, what, s->dev_name[d], label);
            snprintf(method, sizeof method, "%s%s", what, prec == DEMO_F32 ? " (float32)" : "");
            demo_result *r = add_result(s, "mask", label, algo, method, s->dev_name[d]);
            if (!r)
                goto done;
            r->kernel = 1;
            memset(out, 0xAA, npix); /* stale bytes must not pass the check */
            kiln_status st = demo_mask_kernel(k, prec, fast, &poly, size, size, o->reps,
                                              o->budget_s, out, &r->time);
            if (st != KILN_OK) {
                set_error(r, st);
                continue;
            }
            r->speedup = serial_s / r->time.wall_s;
            r->mismatches = count_mismatches(out, ref[prec], npix);
            r->ok = r->mismatches == 0;
        }
    }

    /* The picture: the smallest mask of the run. */
    if (!*picture_done && o->out_dir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/mask-%d.png", o->out_dir, size);
        if (demo_write_mask_png(path, ref[DEMO_F64], size, size) == 0) {
            fflush(stdout); /* keep the table and this line in order */
            fprintf(stderr, "      wrote %s\n", path);
            *picture_done = 1;
        }
    }
done:
    free(out);
    free(ref[0]);
    free(ref[1]);
}

/* ---------------------------------------------------- pairwise distances */

typedef struct pdist_call {
    demo_prec prec;
    const void *x;
    int m, d, openmp, algo;
    void *out;
} pdist_call;

static void run_pdist_host(void *arg) {
    pdist_call *c = arg;
    void (*fn)(demo_prec, const void *, int, int, void *) =
        c->algo == ALGO_KILN ? (c->openmp ? demo_pdist_sym_openmp : demo_pdist_sym_serial)
                             : (c->openmp ? demo_pdist_openmp : demo_pdist_serial);
    fn(c->prec, c->x, c->m, c->d, c->out);
}

static int pdist_ok(demo_prec prec, double relerr) {
    return relerr < (prec == DEMO_F64 ? 1e-13 : 1e-6);
}

/* A host row of the distances' table (not the baseline). */
static int pdist_host_row(demo_state *s, const char *label, pdist_call *call, const double *ref,
                          double serial_s) {
    const demo_opts *o = &s->opts;
    char method[96];
    const char *alg = call->algo == ALGO_KILN ? ", symmetry" : "";
    if (call->openmp)
        snprintf(method, sizeof method, "OpenMP C (%d threads)%s", demo_have_openmp(), alg);
    else
        snprintf(method, sizeof method, "serial C%s", alg);
    progress(s, method, "", label);
    demo_result *r = add_result(s, "pdist", label, call->algo, method, "");
    if (!r)
        return -1;
    size_t nout = (size_t)call->m * (size_t)call->m;
    memset(call->out, 0, nout * sizeof(double));
    demo_time_host(run_pdist_host, call, o->reps, o->budget_s, &r->time);
    r->speedup = serial_s / r->time.wall_s;
    r->relerr = relative_error(call->prec, call->out, ref, nout);
    r->ok = pdist_ok(call->prec, r->relerr);
    return 0;
}

/* One kiln row of the distances on device i: variant 1 the symmetric GPU
 * kernel, 0 the full one, -1 the CPU kernel (k->pd_sym is set by the
 * caller). -1 when out of memory. */
static int pdist_device_row(demo_state *s, int i, demo_prec prec, int variant, const char *label,
                            const void *x, double serial_s, const double *ref, void *out) {
    const demo_opts *o = &s->opts;
    int m = o->points, d = o->dims;
    size_t nout = (size_t)m * (size_t)m;
    const char *method = variant < 0   ? "kiln kernel"
                         : variant > 0 ? "kiln kernel (symmetry)"
                                       : "kiln kernel (no symmetry)";
    progress(s, method, s->dev_name[i], label);
    demo_result *r =
        add_result(s, "pdist", label, variant > 0 ? ALGO_KILN : ALGO_SEEDS, method, s->dev_name[i]);
    if (!r)
        return -1;
    snprintf(r->variant, sizeof r->variant, "%s",
             variant < 0 ? "cpu"
             : variant   ? "symmetric"
                         : "full");
    demo_pdist_describe(&s->dev[i], prec, variant > 0, r->shape, sizeof r->shape);
    r->kernel = 1;
    if (!s->dev[i].have[prec]) {
        snprintf(r->error, sizeof r->error, "the device has no %s support", prec_name(prec));
        fprintf(stderr, "      skipped: %s\n", r->error);
        return 0;
    }
    memset(out, 0, nout * sizeof(double));
    kiln_status st =
        demo_pdist_kernel(&s->dev[i], prec, x, m, d, o->reps, o->budget_s, out, &r->time);
    if (st != KILN_OK) {
        set_error(r, st);
        return 0;
    }
    r->speedup = serial_s / r->time.wall_s;
    r->relerr = relative_error(prec, out, ref, nout);
    r->ok = pdist_ok(prec, r->relerr);
    return 0;
}

static void run_pdist(demo_state *s) {
    const demo_opts *o = &s->opts;
    int m = o->points, d = o->dims;
    size_t nx = (size_t)m * (size_t)d, nout = (size_t)m * (size_t)m;
    /* Random points in float32; the float64 points are the same values, so
     * one float64 serial result is the reference for both precisions. */
    float *x32 = malloc(nx * sizeof *x32);
    double *x64 = malloc(nx * sizeof *x64);
    double *ref = malloc(nout * sizeof *ref);
    void *out = malloc(nout * sizeof(double));
    if (!x32 || !x64 || !ref || !out) {
        fprintf(stderr, "kiln demo: out of memory for %d x %d distances\n", m, d);
        goto done;
    }
    uint64_t seed = DEMO_SEED;
    for (size_t i = 0; i < nx; i++) {
        x32[i] = (float)demo_rand_unit(&seed);
        x64[i] = (double)x32[i];
    }
    for (int p = DEMO_F64; p >= DEMO_F32; p--) {
        demo_prec prec = (demo_prec)p;
        const void *x = prec == DEMO_F64 ? (const void *)x64 : (const void *)x32;
        char label[48];
        snprintf(label, sizeof label, "%dx%d %s", m, d, prec_name(prec));
        pdist_call call = { prec, x, m, d, 0, ALGO_SEEDS, prec == DEMO_F64 ? ref : out };
        double serial_s = 0.0; /* --kernels-only: no speed-ups */
        if (o->kernels_only) {
            /* the reference alone: float64 (the first) into ref */
            if (prec == DEMO_F64)
                demo_pdist_openmp(prec, x, m, d, ref);
        } else {
            progress(s, "serial C", "", label);
            demo_result *base = add_result(s, "pdist", label, ALGO_SEEDS, "serial C", "");
            if (!base)
                goto done;
            if (!pdist_serial_estimated(o, prec, x, m, d, call.out, base))
                demo_time_host(run_pdist_host, &call, o->reps, o->budget_s, &base->time);
            serial_s = base->time.wall_s;
            base->speedup = 1.0;
            base->relerr = relative_error(prec, call.out, ref, nout);
            base->ok = pdist_ok(prec, base->relerr);
        }
        /* Each algorithm's group: host rows, then the kernels that run it
         * (every pair: the full GPU kernel or the CPU kernel; symmetry: the
         * symmetric GPU kernel, where it is on). */
        for (int algo = ALGO_SEEDS; algo <= ALGO_KILN; algo++) {
            call.algo = algo;
            call.out = out;
            for (call.openmp = algo == ALGO_SEEDS; call.openmp <= o->openmp && !o->kernels_only;
                 call.openmp++)
                if (pdist_host_row(s, label, &call, ref, serial_s) != 0)
                    goto done;
            for (int i = 0; i < s->ndev; i++) {
                demo_kernels *k = &s->dev[i];
                int gpu = !(k->pd_cpu && k->pdist_cpu[prec]), saved = k->pd_sym;
                if (algo == ALGO_KILN && !(gpu && saved))
                    continue;
                int variant = algo == ALGO_KILN ? 1 : gpu ? 0 : -1;
                k->pd_sym = variant > 0;
                int failed = pdist_device_row(s, i, prec, variant, label, x, serial_s, ref, out);
                k->pd_sym = saved;
                if (failed)
                    goto done;
            }
        }
    }
done:
    free(x32);
    free(x64);
    free(ref);
    free(out);
}

/* ------------------------------------------------------------- output */

static void format_ms(double s, char *buf, size_t cap) {
    double ms = 1e3 * s;
    if (ms >= 100.0)
        snprintf(buf, cap, "%.0f", ms);
    else if (ms >= 1.0)
        snprintf(buf, cap, "%.2f", ms);
    else
        snprintf(buf, cap, "%.4f", ms);
}

/* speedup_algo of every row: the best (shortest) host time of the same
 * case and algorithm over the row's time. */
static void set_speedup_algo(demo_state *s) {
    for (int i = 0; i < s->nresults; i++) {
        demo_result *r = &s->results[i];
        double best = 0.0;
        for (int j = 0; j < s->nresults; j++) {
            const demo_result *h = &s->results[j];
            if (h->kernel || h->error[0] || h->algo != r->algo ||
                strcmp(h->workload, r->workload) != 0 || strcmp(h->label, r->label) != 0)
                continue;
            if (best == 0.0 || h->time.wall_s < best)
                best = h->time.wall_s;
        }
        r->speedup_algo = best > 0.0 && r->time.wall_s > 0.0 ? best / r->time.wall_s : 0.0;
    }
}

static void print_tables(const demo_state *s) {
    char section[80] = "";
    int group = -1;
    for (int i = 0; i < s->nresults; i++) {
        const demo_result *r = &s->results[i];
        char key[80];
        snprintf(key, sizeof key, "%s %s", r->workload, r->label);
        int is_mask = strcmp(r->workload, "mask") == 0;
        if (strcmp(key, section) != 0) { /* a new table */
            snprintf(section, sizeof section, "%s", key);
            group = -1;
            if (is_mask)
                printf("\nPolygon mask %s (%d edges, even-odd rule)\n", r->label, DEMO_EDGES);
            else
                printf("\nPairwise distances %s (points x dims)\n", r->label);
            printf("%-56s %10s %10s %10s %9s %9s  %s\n", "Method", "Time (ms)", "Device",
                   "End-to-end", "vs seeds", "vs host", "Check");
        }
        if (r->algo != group) { /* a new algorithm inside the table */
            group = r->algo;
            printf("  %s\n", algo_title(r->workload, r->algo));
        }
        char method[192], t[32], dt[32], e2e[32], check[64];
        snprintf(method, sizeof method, "    %s%s%s", r->method, r->device[0] ? " on " : "",
                 r->device);
        if (r->error[0]) {
            printf("%-56.56s %10s %10s %10s %9s %9s  %s\n", method, "-", "-", "-", "-", "-",
                   "not run (see above)");
            continue;
        }
        format_ms(r->time.wall_s, t, sizeof t);
        format_ms(r->time.e2e_s, e2e, sizeof e2e);
        if (r->kernel)
            format_ms(r->time.device_s, dt, sizeof dt);
        else
            snprintf(dt, sizeof dt, "-");
        if (is_mask && r->algo == ALGO_SEEDS && !r->kernel &&
            strncmp(r->method, "serial C", 8) == 0)
            snprintf(check, sizeof check, "reference");
        else if (is_mask)
            snprintf(check, sizeof check, "%s (%ld pixels differ)", r->ok ? "ok" : "MISMATCH",
                     r->mismatches);
        else
            snprintf(check, sizeof check, "%s (rel. error %.1e)", r->ok ? "ok" : "INACCURATE",
                     r->relerr);
        /* 0: no host row to compare with (--kernels-only) */
        char su[16] = "-", sa[16] = "-";
        if (r->speedup > 0.0)
            snprintf(su, sizeof su, "%.1fx", r->speedup);
        if (r->speedup_algo > 0.0)
            snprintf(sa, sizeof sa, "%.1fx", r->speedup_algo);
        printf("%-56.56s %10s %10s %10s %9s %9s  %s\n", method, t, dt, e2e, su, sa, check);
    }
    printf("\nTime: median wall-clock time of the timed repetitions; for "
           "kernels it includes\nthe launch and the wait, not the upload or "
           "read-back. Device: the kernels'\nown time from event profiling. "
           "End-to-end: upload of the inputs + kernel +\nread-back of the "
           "result into host memory (what a program waits for; host\nrows: "
           "= Time). vs seeds: serial C of the seeds' algorithm / Time. vs "
           "host:\nthe best host version (serial or OpenMP C) of the same "
           "algorithm / Time, i.e.\nwhat the device gains once the "
           "algorithm is the same. With --host-max-seconds\nan estimated "
           "serial C time is 16x the time of 1/16 of the rows.\n");
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned)(unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void print_json(const demo_state *s) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    printf("{\n  \"kiln_version\": ");
    json_string(stdout, kiln_version());
    printf(",\n  \"host\": ");
    json_string(stdout, host);
    printf(",\n  \"openmp_threads\": %d,\n  \"devices\": [", demo_have_openmp());
    for (int d = 0; d < s->ndev; d++) {
        printf("%s\n    {\"id\": ", d ? "," : "");
        json_string(stdout, s->dev[d].info.id);
        printf(", \"name\": ");
        json_string(stdout, s->dev[d].info.name);
        printf(", \"short\": ");
        json_string(stdout, s->dev_name[d]);
        const demo_kernels *k = &s->dev[d];
        printf(", \"compute_units\": %u, \"fp64\": %d, \"mask_local\": %d, "
               "\"pdist\": ",
               k->info.compute_units, k->info.fp64, k->mask_local);
        /* The distance kernels run per precision: "float32: ...; float64:
         * ..." (the symmetric one first where it runs). */
        char pd[512] = "";
        size_t used = 0;
        for (int p = 0; p < 2; p++) {
            if (!k->have[p])
                continue;
            int gpu = !(k->pd_cpu && k->pdist_cpu[p]);
            for (int v = gpu && k->pd_sym ? 1 : 0; v >= 0; v--) {
                char one[128];
                demo_pdist_describe(k, (demo_prec)p, v, one, sizeof one);
                int n = snprintf(pd + used, sizeof pd - used, "%s%s: %s", used ? "; " : "",
                                 prec_name((demo_prec)p), one);
                if (n > 0 && (size_t)n < sizeof pd - used)
                    used += (size_t)n;
            }
        }
        json_string(stdout, pd);
        printf("}");
    }
    printf("\n  ],\n  \"results\": [");
    for (int i = 0; i < s->nresults; i++) {
        const demo_result *r = &s->results[i];
        printf("%s\n    {\"workload\": ", i ? "," : "");
        json_string(stdout, r->workload);
        printf(", \"case\": ");
        json_string(stdout, r->label);
        printf(", \"method\": ");
        json_string(stdout, r->method);
        printf(", \"device\": ");
        json_string(stdout, r->device);
        printf(", \"algorithm\": ");
        json_string(stdout, algo_key(r->workload, r->algo));
        if (r->variant[0]) {
            printf(", \"variant\": ");
            json_string(stdout, r->variant);
            printf(", \"kernel\": ");
            json_string(stdout, r->shape);
        }
        if (r->error[0]) {
            printf(", \"error\": ");
            json_string(stdout, r->error);
            printf("}");
            continue;
        }
        printf(", \"wall_ms\": %.6g, \"device_ms\": ", 1e3 * r->time.wall_s);
        if (r->kernel)
            printf("%.6g", 1e3 * r->time.device_s);
        else
            printf("null");
        printf(", \"end_to_end_ms\": %.6g, \"reps\": %d, \"speedup\": %.6g, "
               "\"speedup_same_algorithm\": %.6g, \"ok\": %s",
               1e3 * r->time.e2e_s, r->time.reps, r->speedup, r->speedup_algo,
               r->ok ? "true" : "false");
        if (r->estimated)
            printf(", \"estimated\": true");
        if (strcmp(r->workload, "mask") == 0)
            printf(", \"mismatches\": %ld}", r->mismatches);
        else
            printf(", \"relerr\": %.3e}", r->relerr);
    }
    printf("\n  ]\n}\n");
}

static void write_chart(const demo_state *s) {
    demo_bar bars[256];
    int n = 0;
    for (int i = 0; i < s->nresults && n < 256; i++) {
        const demo_result *r = &s->results[i];
        if (r->error[0] || r->speedup <= 0.0)
            continue;
        int is_mask = strcmp(r->workload, "mask") == 0;
        snprintf(bars[n].group, sizeof bars[n].group, "%s %s: %s",
                 is_mask ? "Polygon mask" : "Pairwise distances", r->label,
                 is_mask ? (r->algo == ALGO_KILN ? "row-crossing algorithm" : "seeds' algorithm")
                         : (r->algo == ALGO_KILN ? "symmetry" : "every pair"));
        snprintf(bars[n].label, sizeof bars[n].label, "%s%s%s", r->method,
                 r->device[0] ? " on " : "", r->device);
        bars[n].value = r->speedup;
        bars[n].highlight = strstr(r->method, "kiln") != NULL;
        n++;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/speedups.png", s->opts.out_dir);
    if (demo_write_chart_png(path,
                             "Speed-up over serial C of the seeds' algorithm "
                             "(log scale), grouped by algorithm",
                             bars, n) == 0) {
        fflush(stdout); /* the table first when both go to one file */
        fprintf(stderr, "wrote %s\n", path);
    }
}

/* ------------------------------------------------------------- options */

static int parse_sizes(const char *text, demo_opts *o) {
    o->num_sizes = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > 65536 || o->num_sizes == DEMO_MAX_SIZES)
            return -1;
        o->sizes[o->num_sizes++] = (int)v;
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return o->num_sizes > 0 ? 0 : -1;
}

static int parse_int(const char *text, int lo, int hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_options(int argc, char **argv, demo_opts *o) {
    memset(o, 0, sizeof *o);
    o->sizes[0] = 1024;
    o->sizes[1] = 8192;
    o->num_sizes = 2;
    o->points = 2048;
    o->dims = 64;
    o->reps = 5;
    o->openmp = demo_have_openmp() > 0;
    o->out_dir = "out";
    o->budget_s = 3.0;
    int quick = 0, sizes_set = 0, points_set = 0, dims_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int got;
        if (kiln_cli_is_help(argv[i])) {
            fputs(demo_usage, stdout);
            return 1;
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = 1;
        } else if (strcmp(argv[i], "--no-openmp") == 0) {
            o->openmp = 0;
        } else if (strcmp(argv[i], "--no-symmetry") == 0) {
            o->no_symmetry = 1;
        } else if (strcmp(argv[i], "--kernels-only") == 0) {
            o->kernels_only = 1;
        } else if ((got = kiln_cli_option_value(argc, argv, &i, "--host-max-seconds", NULL, &v)) !=
                   0) {
            char *end;
            double lim = got > 0 ? strtod(v, &end) : 0.0;
            if (got < 0 || end == v || *end || !(lim >= 0.0)) {
                if (got > 0)
                    kiln_cli_usage_error("demo", demo_usage, "bad --host-max-seconds '%s'", v);
                return -1;
            }
            o->host_max_s = lim;
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if ((got = kiln_cli_option_value(argc, argv, &i, "--device", NULL, &v)) != 0) {
            if (got < 0)
                return -1;
            if (o->num_devices == DEMO_MAX_DEVICES) {
                kiln_cli_usage_error("demo", demo_usage, "at most %d --device options",
                                     DEMO_MAX_DEVICES);
                return -1;
            }
            o->devices[o->num_devices++] = v;
        } else if ((got = kiln_cli_option_value(argc, argv, &i, "--sizes", NULL, &v)) != 0) {
            if (got < 0 || parse_sizes(v, o) != 0) {
                if (got > 0)
                    kiln_cli_usage_error("demo", demo_usage, "bad --sizes '%s' (e.g. 1024,8192)",
                                         v);
                return -1;
            }
            sizes_set = 1;
        } else if ((got = kiln_cli_option_value(argc, argv, &i, "--points", NULL, &v)) != 0) {
            if (got < 0 || parse_int(v, 1, 65536, &o->points) != 0) {
                if (got > 0)
                    kiln_cli_usage_error("demo", demo_usage, "bad --points '%s' (1..65536)", v);
                return -1;
            }
            points_set = 1;
        } else if ((got = kiln_cli_option_value(argc, argv, &i, "--dims", NULL, &v)) != 0) {
            if (got < 0 || parse_int(v, 1, 4096, &o->dims) != 0) {
                if (got > 0)
                    kiln_cli_usage_error("demo", demo_usage, "bad --dims '%s' (1..4096)", v);
                return -1;
            }
            dims_set = 1;
        } else if ((got = kiln_cli_option_value(argc, argv, &i, "--reps", NULL, &v)) != 0) {
            if (got < 0 || parse_int(v, 1, 100, &o->reps) != 0) {
                if (got > 0)
                    kiln_cli_usage_error("demo", demo_usage, "bad --reps '%s' (1..100)", v);
                return -1;
            }
        } else if ((got = kiln_cli_option_value(argc, argv, &i, "--out", NULL, &v)) != 0) {
            if (got < 0)
                return -1;
            o->out_dir = v;
        } else {
            kiln_cli_usage_error("demo", demo_usage, "unknown option '%s'", argv[i]);
            return -1;
        }
    }
    if (quick) {
        if (!sizes_set) {
            o->sizes[0] = 256;
            o->sizes[1] = 1024;
        }
        if (!points_set)
            o->points = 512;
        if (!dims_set)
            o->dims = 16;
        if (o->reps > 3)
            o->reps = 3;
        o->budget_s = 1.0;
    }
    return 0;
}

/* ------------------------------------------------------------- devices */

static void open_device(demo_state *s, kiln_device *dev) {
    kiln_device_info info;
    kiln_context *ctx = NULL;
    kiln_queue *q = NULL;
    kiln_status st = kiln_device_get_info(dev, &info);
    if (st == KILN_OK)
        fprintf(stderr, "building the demo's kernels for %s (%s) ...\n", info.id, info.name);
    if (st == KILN_OK)
        st = kiln_context_create(&dev, 1, &ctx);
    if (st == KILN_OK)
        st = kiln_queue_create(ctx, dev, KILN_QUEUE_PROFILING, &q);
    if (st == KILN_OK)
        st = demo_kernels_create(q, &s->dev[s->ndev]);
    if (st == KILN_OK && s->opts.no_symmetry)
        s->dev[s->ndev].pd_sym = 0;
    kiln_queue_release(q); /* the kernels hold their own reference */
    kiln_context_release(ctx);
    if (st != KILN_OK) {
        const char *log = kiln_last_build_log();
        fprintf(stderr, "kiln demo: skipping %s: %s: %s\n", st == KILN_OK ? "?" : info.id,
                kiln_status_name(st), kiln_last_error_message());
        if (st == KILN_ERROR_BUILD && log && *log)
            fprintf(stderr, "%s\n", log);
        return;
    }
    /* "opencl:0:0 pthread-haswell-AMD EPYC..." cut to fit the table. */
    char name[48];
    kiln_cli_fit(info.name, 30, name, sizeof name);
    snprintf(s->dev_name[s->ndev], sizeof s->dev_name[0], "%s %s", info.id, name);
    s->ndev++;
}

static void open_devices(demo_state *s) {
    const demo_opts *o = &s->opts;
    if (o->num_devices > 0) {
        for (int i = 0; i < o->num_devices; i++) {
            kiln_device *dev = NULL;
            kiln_status st = kiln_device_select(o->devices[i], &dev);
            if (st != KILN_OK) {
                fprintf(stderr, "kiln demo: --device %s: %s\n", o->devices[i],
                        kiln_last_error_message());
                continue;
            }
            open_device(s, dev);
        }
        return;
    }
    size_t count = 0;
    kiln_status st = kiln_device_count(&count);
    if (st != KILN_OK || count == 0) {
        fprintf(stderr,
                "kiln demo: no device found (%s); running the host versions "
                "only.\n",
                st != KILN_OK ? kiln_last_error_message() : "no OpenCL platform or CUDA device");
        return;
    }
    for (size_t i = 0; i < count && s->ndev < DEMO_MAX_DEVICES; i++) {
        kiln_device *dev = NULL;
        if (kiln_device_at(i, &dev) == KILN_OK)
            open_device(s, dev);
    }
}

/* ---------------------------------------------------------------- main */

/* --mpi: kiln-mpi-demo, beside this binary (built with kiln_mpi), takes
 * over this process (mpirun's rank environment and all). */
static int run_mpi_demo(int argc, char **argv) {
    char self[4096], path[4200];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fprintf(stderr, "kiln demo --mpi: cannot find the kiln binary's folder\n");
        return KILN_CLI_FAILED;
    }
    self[len] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    snprintf(path, sizeof path, "%s/kiln-mpi-demo", self);
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args)
        return KILN_CLI_FAILED;
    args[0] = path;
    for (int i = 1; i < argc; i++)
        args[i] = argv[i];
    execv(path, args);
    fprintf(stderr,
            "kiln demo --mpi: cannot run %s: %s (it is built with kiln_mpi, where CMake "
            "finds MPI: apt-get install libopenmpi-dev openmpi-bin)\n",
            path, strerror(errno));
    free(args);
    return KILN_CLI_FAILED;
}

int kiln_cmd_demo(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--mpi") == 0)
            return run_mpi_demo(argc, argv);
    demo_state *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "kiln demo: out of memory\n");
        return KILN_CLI_FAILED;
    }
    int rc = parse_options(argc, argv, &s->opts);
    if (rc != 0) {
        free(s);
        return rc > 0 ? KILN_CLI_OK : KILN_CLI_USAGE;
    }
    demo_opts *o = &s->opts;
    if (mkdir(o->out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "kiln demo: cannot create %s: %s (no pictures)\n", o->out_dir,
                strerror(errno));
        o->out_dir = NULL;
    }
    if (!demo_pictures_available())
        fprintf(stderr, "kiln demo: built without libpng/cairo: no pictures "
                        "(install libpng-dev and libcairo2-dev, rebuild)\n");
    if (!demo_have_openmp() && o->openmp == 0)
        fprintf(stderr, "kiln demo: built without OpenMP: no OpenMP C rows\n");

    open_devices(s);
    int host_rows = 1 + (o->openmp ? 1 : 0), pdist_rows = 0;
    for (int d = 0; d < s->ndev; d++) /* GPU kernels: symmetric and full */
        pdist_rows += 1 + (s->dev[d].pd_sym && !(s->dev[d].pd_cpu && s->dev[d].pdist_cpu[0]));
    /* Two algorithms per case, each with its host rows. */
    s->steps = o->num_sizes * (2 * host_rows + 2 * s->ndev) + 2 * 2 * host_rows + 2 * pdist_rows;

    int picture_done = 0;
    for (int i = 0; i < o->num_sizes; i++)
        run_mask_size(s, o->sizes[i], &picture_done);
    run_pdist(s);
    set_speedup_algo(s);

    if (o->json)
        print_json(s);
    else
        print_tables(s);
    if (o->out_dir)
        write_chart(s);

    int all_ok = 1;
    for (int i = 0; i < s->nresults; i++)
        if (!s->results[i].error[0] && !s->results[i].ok)
            all_ok = 0;
    if (!all_ok)
        fprintf(stderr, "kiln demo: some results do not match serial C "
                        "(see the Check column)\n");
    for (int d = 0; d < s->ndev; d++)
        demo_kernels_release(&s->dev[d]);
    free(s->results);
    free(s);
    return all_ok ? KILN_CLI_OK : KILN_CLI_FAILED;
}
