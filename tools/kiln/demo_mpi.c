/* kiln-mpi-demo (`mpirun -np N kiln demo --mpi` runs it): the demo's two
 * workloads over kiln_mpi (docs/distributed.md), one device per rank.
 *
 *  - the polygon mask split by rows: rank r computes rows [s_r, s_r + c_r)
 *    of the width x width image with the demo's fast kernel (the polygon
 *    shifted up by s_r rows: its vertices stay exact multiples of 1/256, so
 *    every pixel is the same), into a row-block kiln_mpi_darray, gathered
 *    on rank 0;
 *  - the pairwise distances split by row blocks: every rank holds the m
 *    points (same seed), computes rows [s_r, s_r + c_r) of the m x m result
 *    with a kernel of its own into a row-block darray, gathered on rank 0.
 *
 * Rank 0 checks both against the single-device result (the whole problem
 * on rank 0's device: the demo's kernels) and the serial C reference, and
 * prints the table with the rank count. Exit 0 when everything matches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_work.h"
#include "kiln/mpi.h"

static int R, P;

static double max_over_ranks(double v) {
    double out = v;
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

static int fail(const char *what, kiln_status st) {
    fprintf(stderr, "kiln-mpi-demo: rank %d: %s: %s: %s%s\n", R, what, kiln_status_name(st),
            kiln_mpi_last_error_message(),
            *kiln_mpi_last_error_message() ? "" : kiln_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
}

#define TRY(what, x)                \
    do {                            \
        kiln_status st_ = (x);      \
        if (st_ != KILN_OK)         \
            return fail(what, st_); \
    } while (0)

typedef struct row {
    const char *work;
    char size[32];
    double compute_s, gather_s, one_s;
    char check[64];
    int ok;
} row;

static int run_mask(kiln_mpi *m, demo_kernels *k, int w, int reps, row *out) {
    uint64_t seed = 42;
    demo_polygon poly;
    demo_polygon_random(&poly, 24, w, w, &seed);
    kiln_mpi_darray *d = NULL;
    TRY("kiln_mpi_darray_rows_empty",
        kiln_mpi_darray_rows_empty(m, KILN_UINT8, (size_t)w, (size_t)w, 0, &d));
    size_t s0 = kiln_mpi_darray_start(d), c = kiln_mpi_darray_count(d);
    /* this rank's rows: the polygon shifted up by s0 rows */
    demo_polygon mine = poly;
    double ys[DEMO_MAX_VERTS];
    for (int i = 0; i < poly.n; i++)
        ys[i] = poly.y[i] - (double)s0;
    demo_polygon_set(&mine, poly.n, poly.x, ys);
    uint8_t *part = malloc((size_t)w * (c ? c : 1));
    demo_time t = { 0 };
    if (c)
        TRY("demo_mask_kernel",
            demo_mask_kernel(k, DEMO_F32, 1, &mine, w, (int)c, reps, 10.0, part, &t));
    double compute = max_over_ranks(c ? t.device_s : 0.0);
    if (c)
        TRY("kiln_array_write",
            kiln_array_write(kiln_mpi_queue(m), kiln_mpi_darray_local(d), part));
    uint8_t *all = R == 0 ? malloc((size_t)w * (size_t)w) : NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double g0 = demo_now();
    kiln_event *e = NULL;
    TRY("kiln_mpi_darray_gather", kiln_mpi_darray_gather(m, NULL, d, all, 0, 0, NULL, &e));
    TRY("kiln_mpi_wait (gather)", kiln_mpi_wait(m, e));
    kiln_event_release(e);
    double gather = max_over_ranks(demo_now() - g0);
    out->work = "polygon mask (rows)";
    snprintf(out->size, sizeof out->size, "%dx%d", w, w);
    out->compute_s = compute;
    out->gather_s = gather;
    out->ok = 1;
    if (R == 0) {
        uint8_t *one = malloc((size_t)w * (size_t)w), *ser = malloc((size_t)w * (size_t)w);
        demo_time t1 = { 0 };
        TRY("demo_mask_kernel (one device)",
            demo_mask_kernel(k, DEMO_F32, 1, &poly, w, w, reps, 10.0, one, &t1));
        demo_mask_serial(&poly, DEMO_F32, w, w, ser);
        size_t diff = 0, dser = 0;
        for (size_t i = 0; i < (size_t)w * (size_t)w; i++) {
            diff += all[i] != one[i];
            dser += all[i] != ser[i];
        }
        out->one_s = t1.device_s;
        out->ok = diff == 0 && dser == 0;
        if (out->ok)
            snprintf(out->check, sizeof out->check, "identical (one device, serial C)");
        else
            snprintf(out->check, sizeof out->check, "%zu / %zu pixels differ", diff, dser);
        free(one);
        free(ser);
    }
    MPI_Bcast(&out->ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    free(part);
    kiln_mpi_darray_release(d);
    return 0;
}

static int run_pdist(kiln_mpi *m, demo_kernels *k, int np, int dims, int reps, row *out) {
    size_t n = (size_t)np * (size_t)dims;
    float *x = malloc(n * sizeof *x);
    uint64_t seed = 7;
    for (size_t i = 0; i < n; i++)
        x[i] = (float)demo_rand_unit(&seed);
    kiln_context *ctx = kiln_mpi_context(m);
    kiln_queue *q = k->queue; /* profiling, of the kiln_mpi's context */
    kiln_array *X = NULL;
    size_t shape = n;
    TRY("kiln_array_from_host", kiln_array_from_host(ctx, KILN_FLOAT32, 1, &shape, x, &X));
    kiln_mpi_darray *d = NULL;
    TRY("kiln_mpi_darray_rows_empty",
        kiln_mpi_darray_rows_empty(m, KILN_FLOAT32, (size_t)np, (size_t)np, 0, &d));
    size_t s0 = kiln_mpi_darray_start(d), c = kiln_mpi_darray_count(d);
    kiln_elementwise *ew = NULL;
    TRY("kiln_elementwise_create",
        kiln_elementwise_create(
            ctx,
            &KILN_ELEMENTWISE_DESC(
                    .arguments = "float *out, const float *x, int m, int d, int i0",
                    .operation =
                        "long r = i / m + i0, c = i % m; float s = 0.0f;"
                        "for (int k = 0; k < d; k++) { float t = x[r * d + k] - x[c * d + k];"
                        " s += t * t; } out[i] = sqrt(s)",
                    .name = "kiln_mpi_demo_pdist_rows", .flags = KILN_ELEMENTWISE_ANY_SHAPE),
            &ew));
    kiln_arg args[5] = { KILN_ARG_ARRAY(kiln_mpi_darray_local(d)), KILN_ARG_ARRAY(X),
                         KILN_ARG_I32(np), KILN_ARG_I32(dims), KILN_ARG_I32((int)s0) };
    double best = 1e30;
    for (int it = 0; it < reps + 1; it++) { /* the first run warms up */
        kiln_event *e = NULL;
        double dt = 0;
        if (c) {
            kiln_event_times tm;
            TRY("kiln_elementwise_launch",
                kiln_elementwise_launch(q, ew, c * (size_t)np, 5, args, 0, NULL, &e));
            TRY("kiln_event_wait", kiln_event_wait(e));
            TRY("kiln_event_get_times", kiln_event_get_times(e, &tm));
            dt = (double)(tm.ended - tm.started) * 1e-9;
            kiln_event_release(e);
        }
        dt = max_over_ranks(dt);
        if (it > 0 && dt < best)
            best = dt;
    }
    float *all = R == 0 ? malloc((size_t)np * (size_t)np * sizeof *all) : NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double g0 = demo_now();
    kiln_event *e = NULL;
    TRY("kiln_mpi_darray_gather", kiln_mpi_darray_gather(m, NULL, d, all, 0, 0, NULL, &e));
    TRY("kiln_mpi_wait (gather)", kiln_mpi_wait(m, e));
    kiln_event_release(e);
    out->gather_s = max_over_ranks(demo_now() - g0);
    out->compute_s = best;
    out->work = "pairwise distances (row blocks)";
    snprintf(out->size, sizeof out->size, "%dx%d", np, dims);
    out->ok = 1;
    if (R == 0) {
        size_t mm = (size_t)np * (size_t)np;
        float *one = malloc(mm * sizeof *one), *ser = malloc(mm * sizeof *ser);
        demo_time t1 = { 0 };
        TRY("demo_pdist_kernel (one device)",
            demo_pdist_kernel(k, DEMO_F32, x, np, dims, reps, 10.0, one, &t1));
        demo_pdist_serial(DEMO_F32, x, np, dims, ser);
        double e1 = 0, e2 = 0;
        for (size_t i = 0; i < mm; i++) {
            double r1 = fabs((double)all[i] - one[i]) / (fabs(one[i]) + 1e-6);
            double r2 = fabs((double)all[i] - ser[i]) / (fabs(ser[i]) + 1e-6);
            e1 = r1 > e1 || isnan(r1) ? r1 : e1;
            e2 = r2 > e2 || isnan(r2) ? r2 : e2;
        }
        out->one_s = t1.device_s;
        /* float32 sums of dims terms in another order: a few ulps */
        out->ok = e1 <= 1e-5 && e2 <= 1e-5;
        snprintf(out->check, sizeof out->check, "max rel. diff %.1e / %.1e", e1, e2);
        free(one);
        free(ser);
    }
    MPI_Bcast(&out->ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    free(x);
    kiln_elementwise_release(ew);
    kiln_array_release(X);
    kiln_mpi_darray_release(d);
    return 0;
}

static const char usage[] =
    "usage: mpirun -np N kiln demo --mpi [--mask W] [--points M] [--dims D] [--reps R]\n"
    "The demo's polygon mask (W x W, split by rows) and pairwise distances\n"
    "(M points of D dimensions, split by row blocks) over N ranks, one device\n"
    "each (KILN_DEVICE; CPU devices are split between the ranks of a node),\n"
    "gathered on rank 0 and checked against the single-device result.\n"
    "Defaults: --mask 1024 --points 1024 --dims 32 --reps 3.\n";

int main(int argc, char **argv) {
    int w = 1024, np = 1024, dims = 32, reps = 3;
    for (int i = 1; i < argc; i++) {
        int *dst = !strcmp(argv[i], "--mask")     ? &w
                   : !strcmp(argv[i], "--points") ? &np
                   : !strcmp(argv[i], "--dims")   ? &dims
                   : !strcmp(argv[i], "--reps")   ? &reps
                                                  : NULL;
        if (!strcmp(argv[i], "--mpi"))
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        char *end = NULL;
        long v = dst && i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
        if (!dst || !end || *end || v < 1 || v > 65536) {
            fprintf(stderr, "kiln demo --mpi: bad option '%s'%s%s\n%s", argv[i],
                    dst && i + 1 < argc ? " " : "", dst && i + 1 < argc ? argv[i + 1] : "", usage);
            return 2;
        }
        *dst = (int)v;
        i++;
    }
    int prov = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    kiln_mpi *m = NULL;
    kiln_status st = kiln_mpi_create(MPI_COMM_WORLD, NULL, &m);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (st != KILN_OK)
        return fail("kiln_mpi_create", st);
    if (P > w || P > np) {
        if (R == 0)
            fprintf(stderr, "kiln demo --mpi: %d ranks for %d rows / %d points: too many ranks\n",
                    P, w, np);
        kiln_mpi_release(m);
        MPI_Finalize();
        return 2;
    }
    kiln_queue *q = NULL;
    TRY("kiln_queue_create",
        kiln_queue_create(kiln_mpi_context(m), kiln_mpi_device(m), KILN_QUEUE_PROFILING, &q));
    demo_kernels k;
    memset(&k, 0, sizeof k);
    TRY("demo_kernels_create", demo_kernels_create(q, &k));
    kiln_queue_release(q);
    row rows[2];
    memset(rows, 0, sizeof rows);
    if (run_mask(m, &k, w, reps, &rows[0]) || run_pdist(m, &k, np, dims, reps, &rows[1]))
        return 2;
    if (R == 0) {
        printf("kiln demo --mpi: %d rank%s, rank 0 on %s (%s), transport %s\n", P, P > 1 ? "s" : "",
               k.info.id, k.info.name,
               kiln_mpi_get_transport(m) == KILN_MPI_TRANSPORT_NCCL ? "nccl" : "staged");
        printf("%-32s %-10s %5s %12s %12s %14s  %s\n", "workload", "size", "ranks", "compute (ms)",
               "gather (ms)", "1 device (ms)", "check");
        for (int i = 0; i < 2; i++)
            printf("%-32s %-10s %5d %12.3f %12.3f %14.3f  %s%s\n", rows[i].work, rows[i].size, P,
                   rows[i].compute_s * 1e3, rows[i].gather_s * 1e3, rows[i].one_s * 1e3,
                   rows[i].check, rows[i].ok ? "" : "  MISMATCH");
        printf("compute: the slowest rank's kernel (device time; the distances' row-block "
               "kernel is kiln_mpi's own, plain), the gather to rank 0 apart; 1 device: the "
               "whole problem with the demo's tuned kernel on rank 0's device\n");
    }
    int ok = rows[0].ok && rows[1].ok;
    demo_kernels_release(&k);
    kiln_mpi_release(m);
    MPI_Finalize();
    return ok ? 0 : 1;
}
