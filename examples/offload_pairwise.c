/* offload_pairwise — pairwise distances between the M rows of X (M x N),
 * one row of D at a time, as in the Cython offload proposal's
 * pairwise_distance_target_row_context_annotated_func:
 *
 *   with device({X: 'to'}):              -> data region, X mapped TO once
 *       for i in range(M):
 *           Dslice = D[i, :]
 *           with parallel(device={Dslice: 'from'}):   -> one offload run,
 *               for j in prange(M):                      Dslice mapped FROM
 *                   Dslice[j] = _dist(X[i], X[j])   -> _dist: a KILN_FUNC
 *
 * Checked against a serial C loop; prints the times.
 * Usage: offload_pairwise [device] [M] [N]
 * Build: cc offload_pairwise.c $(pkg-config --cflags --libs kiln) -lm */
#include <kiln.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRY(call)                                                                 \
    do {                                                                          \
        if ((call) != KILN_OK) {                                                  \
            fprintf(stderr, "offload_pairwise: %s\n", kiln_last_error_message()); \
            return 1;                                                             \
        }                                                                         \
    } while (0)

/* The seed's @cython.device function, in kiln's portable dialect. */
static const char *preamble =
    "KILN_FUNC double dist(KILN_GLOBAL const double *v1, KILN_GLOBAL const double *v2, int n) {\n"
    "    double d = 0.0;\n"
    "    for (int k = 0; k < n; k++) { double t = v1[k] - v2[k]; d += t * t; }\n"
    "    return sqrt(d);\n"
    "}\n";

static double now(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC); /* C11 */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    int M = argc > 2 ? atoi(argv[2]) : 512, N = argc > 3 ? atoi(argv[3]) : 32;
    if (M < 1 || N < 1) {
        fprintf(stderr, "offload_pairwise: M and N must be >= 1\n");
        return 1;
    }
    kiln_queue *q;
    TRY(kiln_queue_create_default(argc > 1 ? argv[1] : NULL, KILN_QUEUE_IN_ORDER, &q));
    double *X = malloc(sizeof *X * (size_t)M * N), *D = malloc(sizeof *D * (size_t)M * M);
    if (!X || !D) {
        fprintf(stderr, "offload_pairwise: out of memory\n");
        return 1;
    }
    srand(1);
    for (size_t k = 0; k < (size_t)M * N; k++)
        X[k] = rand() / (double)RAND_MAX;
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    if (!info.fp64) {
        fprintf(stderr, "offload_pairwise: %s has no double precision\n", info.name);
        return 1;
    }
    /* The loop over j; i, M, N are scalars of the run. Compiled once (cached). */
    kiln_offload_opts opts =
        KILN_OFFLOAD_OPTS(.index_names = "j", .preamble = preamble, .name = "pairwise_row");
    kiln_offload *row;
    double t0 = now();
    TRY(kiln_offload_create(kiln_queue_context(q),
                            "const double *X, double *Dslice, int i, int M, int N",
                            "Dslice[j] = dist(X + (long)i * N, X + j * N, N);", 1, &opts, &row));
    double t1 = now();

    kiln_data_region *region; /* with device({X: 'to'}): */
    kiln_arg xmap = KILN_TO(X, sizeof *X * (size_t)M * N);
    TRY(kiln_data_region_begin(q, NULL, 1, &xmap, &region));
    for (int i = 0; i < M; i++) {
        double *Dslice = D + (size_t)i * M; /* Dslice = D[i, :] */
        kiln_arg args[] = { KILN_PRESENT(X), KILN_FROM(Dslice, sizeof *D * (size_t)M),
                            KILN_ARG_I32(i), KILN_ARG_I32(M), KILN_ARG_I32(N) };
        size_t range = (size_t)M;                               /* for j in prange(M) */
        TRY(kiln_offload_run(q, row, region, &range, 5, args)); /* blocks: Dslice is FROM */
    }
    kiln_offload_stats st;
    TRY(kiln_data_region_get_stats(region, &st));
    TRY(kiln_data_region_end(region));
    double t2 = now();

    /* The serial C reference. */
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            double d = 0.0;
            for (int k = 0; k < N; k++) {
                double t = X[(size_t)i * N + k] - X[(size_t)j * N + k];
                d += t * t;
            }
            double e = fabs(sqrt(d) - D[(size_t)i * M + j]);
            if (!(e <= worst))
                worst = e;
        }
    double t3 = now();
    printf("offload_pairwise: M=%d N=%d on %s\n", M, N, info.name);
    printf("  compile %.3f s, %d row offloads %.3f s (%.1f us/row), serial C %.3f s\n", t1 - t0, M,
           t2 - t1, 1e6 * (t2 - t1) / M, t3 - t2);
    printf("  X copied to the device %llu time(s); %llu row copies back\n",
           (unsigned long long)st.copies_to, (unsigned long long)st.copies_from);
    printf("  max |error| %.3g: %s\n", worst, worst <= 1e-12 ? "OK" : "MISMATCH");
    kiln_offload_release(row);
    kiln_queue_release(q);
    free(X);
    free(D);
    return worst <= 1e-12 ? 0 : 1;
}
