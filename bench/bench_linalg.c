/* Benchmark of kiln's BLAS and FFT on one device: matmul (float32 and
 * float64 n x n) and complex64 FFTs (one of n points; a batch of b
 * transforms of m points), median of R runs after a warm-up, every result
 * spot-checked against a serial reference. Prints a table and RESULT lines
 * (seconds) that bench/peers_linalg.py reads.
 *
 *   bench_linalg [--matmul N] [--matmul64 N] [--fft N] [--fft-batch B M]
 *                [--runs R]
 * Defaults by device: CPU matmul 2048 (float32), FFT 2^20, batch 256 x
 * 4096; GPU matmul 8192 (float32) and 4096 (float64), FFT 2^24, batch
 * 4096 x 4096. The device: $KILN_DEVICE (kiln_device_select). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"
#include "kiln.h"

#define TRY(x)                                                                                    \
    do {                                                                                          \
        kiln_status st_ = (x);                                                                    \
        if (st_ != KILN_OK) {                                                                     \
            fprintf(stderr, "bench_linalg: %s at line %d: %s\n", kiln_status_name(st_), __LINE__, \
                    kiln_last_error_message());                                                   \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

static int runs = 7;

typedef struct job {
    kiln_queue *q;
    kiln_array *a, *b, *c;
    unsigned axes;
} job;

static kiln_status do_matmul(void *arg, kiln_event **e) {
    job *j = arg;
    return kiln_linalg_matmul_out(j->q, j->c, j->a, j->b, 0, NULL, e);
}
static kiln_status do_fft(void *arg, kiln_event **e) {
    job *j = arg;
    return kiln_fft_c2c_out(j->q, j->b, j->a, j->axes, 0, KILN_FFT_NORM_BACKWARD, 0, NULL, e);
}

/* The median device time of runs calls; *wall_med gets the median host
 * wall time of the same calls (enqueue to the end event's wait), which
 * must not be far below the device time: a check on the event timing. */
static double median_time2(kiln_queue *q, kiln_status (*f)(void *, kiln_event **), job *j,
                           double *wall_med) {
    int events_ok = 1;
    double wall, *t = malloc((size_t)runs * sizeof *t), *w = malloc((size_t)runs * sizeof *w);
    kiln_status st;
    bench_time_enqueue(q, f, j, &events_ok, &wall, &st); /* warm-up, plan */
    TRY(st);
    for (int r = 0; r < runs; r++) {
        t[r] = bench_time_enqueue(q, f, j, &events_ok, &wall, &st);
        w[r] = wall;
        TRY(st);
    }
    qsort(t, (size_t)runs, sizeof *t, bench_cmp_double);
    qsort(w, (size_t)runs, sizeof *w, bench_cmp_double);
    double m = t[runs / 2];
    *wall_med = w[runs / 2];
    free(t);
    free(w);
    return m;
}

static void bench_matmul(kiln_queue *q, kiln_dtype d, size_t n) {
    kiln_context *c = kiln_queue_context(q);
    size_t sh[2] = { n, n }, es = kiln_dtype_size(d);
    char *ha = malloc(n * n * es), *hb = malloc(n * n * es);
    for (size_t i = 0; i < n * n; i++) {
        double x = (double)((i * 7919) % 13) / 13 - 0.5, y = (double)((i * 104729) % 17) / 17 - 0.5;
        if (d == KILN_FLOAT32) {
            ((float *)ha)[i] = (float)x;
            ((float *)hb)[i] = (float)y;
        } else {
            ((double *)ha)[i] = x;
            ((double *)hb)[i] = y;
        }
    }
    job j = { .q = q };
    TRY(kiln_array_from_host(c, d, 2, sh, ha, &j.a));
    TRY(kiln_array_from_host(c, d, 2, sh, hb, &j.b));
    TRY(kiln_array_empty(c, d, 2, sh, &j.c));
    double wall;
    double t = median_time2(q, do_matmul, &j, &wall);
    char *hc = malloc(n * n * es);
    TRY(kiln_array_read(q, j.c, hc));
    size_t bad = 0;
    for (int s = 0; s < 16; s++) { /* spot checks */
        size_t i = (size_t)s * 7 % n, k = (size_t)s * 13 % n;
        double ref = 0, mag = 0, got;
        for (size_t l = 0; l < n; l++) {
            double x = d == KILN_FLOAT32 ? ((float *)ha)[i * n + l] : ((double *)ha)[i * n + l];
            double y = d == KILN_FLOAT32 ? ((float *)hb)[l * n + k] : ((double *)hb)[l * n + k];
            ref += x * y;
            mag += fabs(x * y);
        }
        got = d == KILN_FLOAT32 ? ((float *)hc)[i * n + k] : ((double *)hc)[i * n + k];
        bad += fabs(got - ref) > (d == KILN_FLOAT32 ? 1e-5 : 1e-12) * (mag + 1);
    }
    if (bad)
        fprintf(stderr, "bench_linalg: matmul gave %zu WRONG spot checks\n", bad);
    double gflops = 2.0 * n * n * n / t * 1e-9;
    printf("%-26s %12.3f %12.1f GFLOP/s  %s (wall %.3f ms)\n",
           d == KILN_FLOAT32 ? "matmul float32" : "matmul float64", t * 1e3, gflops,
           kiln_blas_library(q), wall * 1e3);
    printf("RESULT matmul_%s_%zu %.6e\n", d == KILN_FLOAT32 ? "f32" : "f64", n, t);
    free(ha);
    free(hb);
    free(hc);
    kiln_array_release(j.a);
    kiln_array_release(j.b);
    kiln_array_release(j.c);
}

static void bench_fft(kiln_queue *q, size_t batch, size_t n) {
    kiln_context *c = kiln_queue_context(q);
    size_t total = batch * n;
    float *h = malloc(total * 8), *g = malloc(total * 8);
    for (size_t i = 0; i < total; i++) {
        h[2 * i] = (float)sin(0.001 * (double)i);
        h[2 * i + 1] = (float)((i % 7) * 0.1);
    }
    size_t sh[2] = { batch, n };
    job j = { .q = q, .axes = 1 };
    TRY(kiln_array_from_host(c, KILN_COMPLEX64, batch > 1 ? 2 : 1, batch > 1 ? sh : sh + 1, h,
                             &j.a));
    TRY(kiln_array_empty(c, KILN_COMPLEX64, batch > 1 ? 2 : 1, batch > 1 ? sh : sh + 1, &j.b));
    double wall;
    double t = median_time2(q, do_fft, &j, &wall);
    TRY(kiln_array_read(q, j.b, g));
    size_t bad = 0;
    for (int s = 0; s < 4; s++) { /* bins of the last transform, naive */
        size_t k = (size_t)s * 101 % n, base = (batch - 1) * n;
        double complex ref = 0;
        double mag = 0;
        for (size_t l = 0; l < n; l++) {
            double complex x = CMPLX(h[2 * (base + l)], h[2 * (base + l) + 1]);
            ref += x * cexp(-2 * M_PI * I * (double)((l * k) % n) / (double)n);
            mag += cabs(x);
        }
        double complex got = CMPLX(g[2 * (base + k)], g[2 * (base + k) + 1]);
        bad += cabs(got - ref) > 1e-5 * (mag + 1);
    }
    if (bad)
        fprintf(stderr, "bench_linalg: fft gave %zu WRONG bins\n", bad);
    char name[64];
    if (batch > 1)
        snprintf(name, sizeof name, "fft c64 %zu x %zu", batch, n);
    else
        snprintf(name, sizeof name, "fft c64 %zu", n);
    double gflops = 5.0 * total * log2((double)n) / t * 1e-9;
    printf("%-26s %12.3f %12.1f GFLOP/s  %s (wall %.3f ms)\n", name, t * 1e3, gflops,
           kiln_fft_library(q), wall * 1e3);
    printf("RESULT fft_c64_%zux%zu %.6e\n", batch, n, t);
    free(h);
    free(g);
    kiln_array_release(j.a);
    kiln_array_release(j.b);
}

int main(int argc, char **argv) {
    kiln_queue *q = NULL;
    TRY(kiln_queue_create_default(NULL, KILN_QUEUE_PROFILING, &q));
    kiln_device_info info;
    memset(&info, 0, sizeof info);
    TRY(kiln_device_get_info(kiln_queue_device(q), &info));
    int gpu = info.type != KILN_DEVICE_CPU;
    size_t mm = gpu ? 8192 : 2048, mm64 = gpu ? 4096 : 0;
    size_t fftn = gpu ? (size_t)1 << 24 : (size_t)1 << 20;
    size_t fb = gpu ? 4096 : 256, fm = 4096;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--matmul") && i + 1 < argc)
            mm = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--matmul64") && i + 1 < argc)
            mm64 = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--fft") && i + 1 < argc)
            fftn = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--fft-batch") && i + 2 < argc) {
            fb = strtoull(argv[++i], NULL, 0);
            fm = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
        else {
            fprintf(stderr, "usage: bench_linalg [--matmul N] [--matmul64 N] "
                            "[--fft N] [--fft-batch B M] [--runs R]\n");
            return 2;
        }
    }
    printf("bench_linalg on %s (%s)\n", info.name, info.id);
    printf("%-26s %12s %12s\n", "op", "ms", "rate");
    if (mm)
        bench_matmul(q, KILN_FLOAT32, mm);
    if (mm64 && info.fp64)
        bench_matmul(q, KILN_FLOAT64, mm64);
    if (fftn)
        bench_fft(q, 1, fftn);
    if (fb && fm)
        bench_fft(q, fb, fm);
    printf("(median of %d runs; results spot-checked)\n", runs);
    kiln_queue_release(q);
    return 0;
}
