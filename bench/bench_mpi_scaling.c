/* Weak and strong scaling of kiln_mpi's all-reduce, global scan and sample
 * sort (issue 46, item 8; the distributed mask and distances are timed by
 * `kiln demo --mpi`, tools/kiln/demo_mpi.c: bench/README.md has both).
 *
 *   mpirun -np P build/bench/bench_mpi_scaling [log2 n] [reps]
 *
 * strong: n elements in all (the all-reduce: n per rank, as its result is
 * n long whatever P); weak: n elements per rank. Prints one line per
 * (kind, operation): the slowest rank's median time of reps after a
 * warm-up. Run it at P = 1, 2, 4 and compare. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kiln/mpi.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double slowest(double t) {
    double m = 0;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

int main(int argc, char **argv) {
    int prov = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    int lg = argc > 1 ? atoi(argv[1]) : 22, reps = argc > 2 ? atoi(argv[2]) : 5;
    kiln_mpi *m = NULL;
    if (kiln_mpi_create(MPI_COMM_WORLD, NULL, &m) != KILN_OK) {
        fprintf(stderr, "%s\n", kiln_mpi_last_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int P = kiln_mpi_size(m), R = kiln_mpi_rank(m);
    kiln_queue *q = kiln_mpi_queue(m);
    size_t n = (size_t)1 << lg;
    double *t = calloc((size_t)reps, sizeof *t);
    for (int weak = 0; weak < 2; weak++)
        for (int what = 0; what < 3; what++) {
            size_t total = weak ? n * (size_t)P : n;
            kiln_mpi_darray *d = NULL;
            kiln_array *a = NULL;
            float one = 1;
            if (what == 0)
                kiln_array_full(q, KILN_FLOAT32, 1, &n, KILN_ARG_F32(one), 0, NULL, NULL, &a);
            else
                kiln_mpi_darray_empty(m, KILN_FLOAT32, total, &d);
            kiln_rng *g = NULL;
            kiln_rng_create(&KILN_RNG_DESC(.seed = 7), &g);
            int fails = 0;
            for (int r = -1; r < reps; r++) {
                if (d)
                    kiln_mpi_darray_uniform(m, q, g, d, 0, NULL, NULL);
                kiln_queue_finish(q);
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = now();
                kiln_event *e = NULL;
                kiln_status st = KILN_OK;
                if (what == 0)
                    st = kiln_mpi_allreduce(m, q, a, KILN_MPI_SUM, 0, NULL, &e);
                else if (what == 1)
                    st = kiln_mpi_darray_cumsum(m, q, d, d, 0, 0, NULL, &e);
                else
                    st = kiln_mpi_darray_sort(m, q, d);
                if (st == KILN_OK && e)
                    st = kiln_mpi_wait(m, e);
                kiln_event_release(e);
                fails += st != KILN_OK;
                double dt = slowest(now() - t0);
                if (r >= 0)
                    t[r] = dt;
            }
            qsort(t, (size_t)reps, sizeof *t, cmp);
            static const char *names[] = { "allreduce", "cumsum", "sort" };
            if (R == 0)
                printf("P=%d %-6s %-9s %10zu elements%s: median %9.2f ms%s\n", P,
                       weak ? "weak" : "strong", names[what], what == 0 ? n : total,
                       what == 0 ? " per rank" : " in all", t[reps / 2] * 1e3,
                       fails ? "  (FAILED)" : "");
            kiln_rng_release(g);
            kiln_array_release(a);
            kiln_mpi_darray_release(d);
        }
    free(t);
    kiln_mpi_release(m);
    MPI_Finalize();
    return 0;
}
