/* kiln_mpi's staged all-reduce against what a program would write by hand:
 * one device-to-host copy, MPI_Allreduce on the host buffer, one
 * host-to-device copy (issue 46's speed target: within 1.2x of that).
 *
 *   mpirun -np 2 build/bench/bench_mpi_allreduce [log2 n] [reps]
 *
 * n float32 (default 2^26) on each rank's device (KILN_DEVICE, else the
 * default; on PoCL the ranks of a node get disjoint sub-devices), sum over
 * the ranks, in place. kiln's run is timed for several staging chunk sizes
 * (chunk 0: the whole array in one piece, no overlap). Each time is the
 * slowest rank's, after a barrier; the best and the median of reps are
 * printed with the bus bandwidth NCCL's tests report (2 (P-1)/P bytes over
 * the time). KILN_MPI_TRANSPORT=nccl (one rank a GPU) times NCCL instead
 * of the staged path (the chunk sizes then do not matter). The result is
 * checked (every element = number of ranks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void report(int rank, int size, const char *what, double *t, int reps, size_t bytes) {
    qsort(t, (size_t)reps, sizeof *t, cmp);
    double bus = size > 1 ? 2.0 * (size - 1) / size * (double)bytes / t[reps / 2] * 1e-9 : 0;
    if (rank == 0)
        printf("%-34s best %8.2f ms  median %8.2f ms  (%6.2f GB/s of the array, bus %6.2f GB/s "
               "at the median)\n",
               what, t[0] * 1e3, t[reps / 2] * 1e3, bytes / t[0] * 1e-9, bus);
}

/* the slowest rank's time */
static double slowest(double t) {
    double m = 0;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

int main(int argc, char **argv) {
    int prov = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    int lg = argc > 1 ? atoi(argv[1]) : 26, reps = argc > 2 ? atoi(argv[2]) : 5;
    size_t n = (size_t)1 << lg, bytes = n * sizeof(float);
    size_t chunks[] = { 256u << 10, 1u << 20, 4u << 20, 16u << 20, 0 };
    double *t = calloc((size_t)reps, sizeof *t);
    int rank = 0, size = 1, fails = 0;
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
        kiln_mpi *m = NULL;
        size_t cb = chunks[c] ? chunks[c] : bytes;
        if (kiln_mpi_create(MPI_COMM_WORLD, &KILN_MPI_OPTS(.chunk_bytes = cb), &m) != KILN_OK) {
            fprintf(stderr, "kiln_mpi_create: %s\n", kiln_mpi_last_error_message());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        rank = kiln_mpi_rank(m);
        size = kiln_mpi_size(m);
        kiln_queue *q = kiln_mpi_queue(m);
        kiln_array *a = NULL;
        float one = 1.0f;
        kiln_array_full(q, KILN_FLOAT32, 1, &n, KILN_ARG_F32(one), 0, NULL, NULL, &a);
        if (c == 0 && rank == 0) {
            kiln_device_info info;
            kiln_device_get_info(kiln_mpi_device(m), &info);
            kiln_mpi_transport tr = kiln_mpi_get_transport(m);
            printf("%d ranks, %zu float32 (%.0f MiB) each, device %s (%s, %u compute units), "
                   "transport %s%s\n",
                   size, n, bytes / 1048576.0, info.id, info.name, info.compute_units,
                   tr == KILN_MPI_TRANSPORT_NCCL ? "nccl" : "staged",
                   kiln_mpi_direct(m) ? " (direct memory)" : "");
        }
        if (c == 0) {
            /* by hand: D2H, MPI_Allreduce on the host, H2D */
            float *h = NULL;
            if (posix_memalign((void **)&h, 4096, bytes) != 0)
                MPI_Abort(MPI_COMM_WORLD, 1);
            for (int r = -1; r < reps; r++) {
                kiln_array_fill(q, a, KILN_ARG_F32(one), 0, NULL, NULL);
                kiln_queue_finish(q);
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = now();
                kiln_buffer_read(q, kiln_array_buffer(a), 0, bytes, h);
                MPI_Allreduce(MPI_IN_PLACE, h, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                kiln_buffer_write(q, kiln_array_buffer(a), 0, bytes, h);
                double dt = slowest(now() - t0);
                if (r >= 0)
                    t[r] = dt;
            }
            report(rank, size, "D2H + MPI_Allreduce + H2D", t, reps, bytes);
            free(h);
        }
        for (int r = -1; r < reps; r++) {
            kiln_array_fill(q, a, KILN_ARG_F32(one), 0, NULL, NULL);
            kiln_queue_finish(q);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now();
            kiln_event *e = NULL;
            kiln_status st = kiln_mpi_allreduce(m, q, a, KILN_MPI_SUM, 0, NULL, &e);
            if (st == KILN_OK)
                st = kiln_mpi_wait(m, e);
            kiln_event_release(e);
            double dt = slowest(now() - t0);
            if (st != KILN_OK) {
                fprintf(stderr, "kiln_mpi_allreduce: %s\n", kiln_mpi_last_error_message());
                fails++;
            }
            if (r >= 0)
                t[r] = dt;
        }
        char what[64];
        if (chunks[c])
            snprintf(what, sizeof what, "kiln_mpi_allreduce, %zu KiB chunks", chunks[c] >> 10);
        else
            snprintf(what, sizeof what, "kiln_mpi_allreduce, one chunk");
        report(rank, size, what, t, reps, bytes);
        /* check the last result */
        float *h = malloc(bytes);
        kiln_array_read(q, a, h);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += h[i] != (float)size;
        if (bad) {
            fprintf(stderr, "rank %d: %zu elements wrong\n", rank, bad);
            fails++;
        }
        free(h);
        kiln_array_release(a);
        kiln_mpi_release(m);
    }
    free(t);
    MPI_Finalize();
    return fails != 0;
}
