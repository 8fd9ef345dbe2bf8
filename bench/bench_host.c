/* The host backend's speed goals (issue 45) in one process, in interleaved
 * rounds so that a shared machine's load falls on every row alike:
 *
 *   bench_host [--rounds R] [--per P] [--min N] [--max N] [--devices SEL,SEL...]
 *              [--serve]
 *
 * Per round, per device (default host:0,opencl:0:0) and per size n = M
 * (default 2^10), 4M, 16M ... N (default 2^24): P timed runs (after 2 warm-ups in the first
 * round) of
 *   axpy        z = 2x + y, float32 (kiln_array_axpy_out, then the event waited)
 *   sum         float32 sum into a host float (kiln_array_reduce, blocking)
 *   dot         float32 dot into a host float (kiln_array_dot, blocking)
 *   scan_int32  inclusive int32 scan (kiln_array_cumsum_out, event waited)
 * each wall time from the call to a finished result, plus
 *   memcpy2     a two-thread memcpy of 4n bytes (pthreads, each half), the
 *               bandwidth reference
 *   launch1     an empty kernel, one work-item: launch + event wait
 *   launchall   the same with as many work-groups of 64 as the device has
 *               compute units (every core runs one)
 * Every first run of a round is checked against a serial C loop. Output:
 * `S dev op n t1 ... tP` (seconds) per cell and `END` after each round;
 * with --serve a round starts only when a line arrives on stdin (so a
 * driver, bench/peers_host.py, runs NumPy between the rounds); without it,
 * the R rounds run back to back and the medians are printed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_timing.h"
#include "kiln.h"
#include "kiln/array.h"

#define DIE(st)                                                                            \
    do {                                                                                   \
        fprintf(stderr, "bench_host: line %d: %s\n", __LINE__, kiln_last_error_message()); \
        exit(1);                                                                           \
    } while (0)

#define MAX_DEV 4
#define MAX_SIZES 16
#define OPS 7
static const char *const op_names[OPS] = { "axpy",    "sum",     "dot",      "scan_int32",
                                           "memcpy2", "launch1", "launchall" };

typedef struct dev {
    char sel[64];
    kiln_queue *q;
    kiln_array *X, *Y, *Z, *I, *O; /* full size */
    kiln_kernel *empty;
    kiln_program *prog;
    kiln_buffer *dummy;
    size_t cus;
} dev;

static size_t max_n = (size_t)1 << 24;
static float *hx, *hy, *hz;
static int32_t *hi, *ho;
static char *mc_src, *mc_dst;

static double now(void) {
    return bench_now();
}

typedef struct mc_job {
    char *d;
    const char *s;
    size_t n;
} mc_job;
static void *mc_thread(void *arg) {
    mc_job *j = arg;
    memcpy(j->d, j->s, j->n);
    return NULL;
}
static double memcpy2(size_t bytes) {
    size_t half = bytes / 2 & ~(size_t)63;
    mc_job a = { mc_dst, mc_src, half }, b = { mc_dst + half, mc_src + half, bytes - half };
    pthread_t t;
    double t0 = now();
    if (pthread_create(&t, NULL, mc_thread, &b) != 0) {
        fprintf(stderr, "bench_host: pthread_create failed\n");
        exit(1);
    }
    mc_thread(&a);
    pthread_join(t, NULL);
    return now() - t0;
}

static void views(dev *d, size_t n, kiln_array **x, kiln_array **y, kiln_array **z, kiln_array **i,
                  kiln_array **o) {
    kiln_slice sl = KILN_SLICE(0, (ptrdiff_t)n, 1);
    kiln_status st;
    if ((st = kiln_array_view(d->X, &sl, x)) || (st = kiln_array_view(d->Y, &sl, y)) ||
        (st = kiln_array_view(d->Z, &sl, z)) || (st = kiln_array_view(d->I, &sl, i)) ||
        (st = kiln_array_view(d->O, &sl, o)))
        DIE(st);
}

/* One timed run of op k at n on d; checks the result when check. */
static double run_op(dev *d, int k, size_t n, kiln_array *X, kiln_array *Y, kiln_array *Z,
                     kiln_array *I, kiln_array *O, int check) {
    kiln_status st = KILN_OK;
    kiln_event *e = NULL;
    float f = 0;
    double t0 = now(), t;
    switch (k) {
    case 0:
        if ((st = kiln_array_axpy_out(d->q, Z, KILN_ARG_F64(2.0), X, Y, 0, NULL, &e)) ||
            (st = kiln_event_wait(e)))
            DIE(st);
        break;
    case 1:
        if ((st = kiln_array_reduce(d->q, KILN_REDUCE_SUM, X, &f)))
            DIE(st);
        break;
    case 2:
        if ((st = kiln_array_dot(d->q, X, Y, &f)))
            DIE(st);
        break;
    case 3:
        if ((st = kiln_array_cumsum_out(d->q, O, I, 0, 0, NULL, &e)) || (st = kiln_event_wait(e)))
            DIE(st);
        break;
    case 4:
        return memcpy2(4 * n);
    case 5:
    case 6: {
        size_t g = k == 5 ? 1 : 64 * d->cus, l = k == 5 ? 1 : 64;
        kiln_arg a[] = { KILN_ARG_BUF(d->dummy), KILN_ARG_I32(1), KILN_ARG_F32(2.0f) };
        if ((st = kiln_kernel_launch(d->q, d->empty, 1, &g, &l, 3, a, 0, NULL, &e)) ||
            (st = kiln_event_wait(e)))
            DIE(st);
        break;
    }
    }
    t = now() - t0;
    kiln_event_release(e);
    if (!check)
        return t;
    int ok = 1;
    if (k == 0) {
        if ((st = kiln_array_read(d->q, Z, hz)))
            DIE(st);
        for (size_t i = 0; i < n && ok; i++)
            ok = hz[i] == 2.0f * hx[i] + hy[i];
    } else if (k == 1 || k == 2) {
        double ref = 0;
        for (size_t i = 0; i < n; i++)
            ref += k == 1 ? (double)hx[i] : (double)hx[i] * hy[i];
        ok = (double)f > ref - 1e-3 * (double)n && (double)f < ref + 1e-3 * (double)n;
    } else if (k == 3) {
        if ((st = kiln_array_read(d->q, O, ho)))
            DIE(st);
        int32_t acc = 0;
        for (size_t i = 0; i < n && ok; i++) {
            acc = (int32_t)((uint32_t)acc + (uint32_t)hi[i]);
            ok = ho[i] == acc;
        }
    }
    if (!ok) {
        fprintf(stderr, "bench_host: %s on %s at n = %zu gave a wrong result\n", op_names[k],
                d->sel, n);
        exit(1);
    }
    return t;
}

static void open_dev(dev *d) {
    kiln_status st;
    kiln_device_info info;
    if ((st = kiln_queue_create_default(d->sel, 0, &d->q)) ||
        (st = kiln_device_get_info(kiln_queue_device(d->q), &info)))
        DIE(st);
    d->cus = info.compute_units ? info.compute_units : 1;
    kiln_context *c = kiln_queue_context(d->q);
    if ((st = kiln_array_from_host(c, KILN_FLOAT32, 1, &max_n, hx, &d->X)) ||
        (st = kiln_array_from_host(c, KILN_FLOAT32, 1, &max_n, hy, &d->Y)) ||
        (st = kiln_array_empty(c, KILN_FLOAT32, 1, &max_n, &d->Z)) ||
        (st = kiln_array_from_host(c, KILN_INT32, 1, &max_n, hi, &d->I)) ||
        (st = kiln_array_empty(c, KILN_INT32, 1, &max_n, &d->O)) ||
        (st = kiln_buffer_create(c, 64, 0, NULL, &d->dummy)) ||
        (st = kiln_program_create(c,
                                  "KILN_KERNEL void empty(KILN_GLOBAL float *p, int a, float b) "
                                  "{ (void)p; (void)a; (void)b; }\n",
                                  NULL, &d->prog)) ||
        (st = kiln_kernel_create(d->prog, "empty", &d->empty)))
        DIE(st);
    printf("DEVICE %s %s (%s) compute_units %zu\n", d->sel, info.name, info.id, d->cus);
}

static void close_dev(dev *d) {
    kiln_array_release(d->X);
    kiln_array_release(d->Y);
    kiln_array_release(d->Z);
    kiln_array_release(d->I);
    kiln_array_release(d->O);
    kiln_buffer_release(d->dummy);
    kiln_kernel_release(d->empty);
    kiln_program_release(d->prog);
    kiln_queue_release(d->q);
}

int main(int argc, char **argv) {
    int rounds = 10, per = 10, serve = 0;
    size_t min_n = 1024;
    const char *devs = "host:0,opencl:0:0";
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--rounds") && a + 1 < argc)
            rounds = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--per") && a + 1 < argc)
            per = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--max") && a + 1 < argc)
            max_n = (size_t)strtoull(argv[++a], NULL, 0);
        else if (!strcmp(argv[a], "--min") && a + 1 < argc)
            min_n = (size_t)strtoull(argv[++a], NULL, 0);
        else if (!strcmp(argv[a], "--devices") && a + 1 < argc)
            devs = argv[++a];
        else if (!strcmp(argv[a], "--serve"))
            serve = 1;
        else {
            fprintf(stderr, "usage: bench_host [--rounds R] [--per P] [--min N] [--max N] "
                            "[--devices SEL,...] [--serve]\n");
            return 2;
        }
    }
    if (rounds < 1 || per < 1 || per > 1000 || max_n < 1024 || min_n < 1 || min_n > max_n) {
        fprintf(stderr, "bench_host: bad --rounds/--per/--max\n");
        return 2;
    }
    size_t sizes[MAX_SIZES];
    int ns = 0;
    for (size_t s = min_n; s <= max_n && ns < MAX_SIZES; s *= 4)
        sizes[ns++] = s;
    hx = malloc(max_n * 4);
    hy = malloc(max_n * 4);
    hz = malloc(max_n * 4);
    hi = malloc(max_n * 4);
    ho = malloc(max_n * 4);
    /* 2 MiB aligned and advised to huge pages, as the host backend's large
     * buffers and NumPy's large arrays are */
    size_t mc_bytes = (max_n * 4 + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
    mc_src = aligned_alloc((size_t)2 << 20, mc_bytes);
    mc_dst = aligned_alloc((size_t)2 << 20, mc_bytes);
#ifdef MADV_HUGEPAGE
    if (mc_src && mc_dst) {
        (void)madvise(mc_src, mc_bytes, MADV_HUGEPAGE);
        (void)madvise(mc_dst, mc_bytes, MADV_HUGEPAGE);
    }
#endif
    if (!hx || !hy || !hz || !hi || !ho || !mc_src || !mc_dst) {
        fprintf(stderr, "bench_host: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < max_n; i++) {
        hx[i] = (float)((i * 7u) % 13u) * 0.25f; /* exact sums in float */
        hy[i] = (float)((i * 3u) % 5u) * 0.5f;
        hi[i] = (int32_t)((i * 2654435761u) >> 20) - 2048;
    }
    memset(mc_src, 1, max_n * 4);
    memset(mc_dst, 0, max_n * 4);
    dev d[MAX_DEV];
    int nd = 0;
    for (const char *p = devs; *p && nd < MAX_DEV;) {
        size_t len = strcspn(p, ",");
        memset(&d[nd], 0, sizeof d[nd]);
        snprintf(d[nd].sel, sizeof d[nd].sel, "%.*s", (int)len, p);
        open_dev(&d[nd++]);
        p += len + (p[len] == ',');
    }
    double *samples =
        malloc(sizeof(double) * (size_t)rounds * (size_t)per * MAX_DEV * OPS * MAX_SIZES);
    if (!samples)
        return 1;
#define SAMPLE(di, k, s, r, j) \
    samples[((((size_t)(di)*OPS + (k)) * MAX_SIZES + (s)) * rounds + (r)) * per + (j)]
    char line[64];
    for (int r = 0; r < rounds; r++) {
        if (serve && !fgets(line, sizeof line, stdin))
            break;
        for (int s = 0; s < ns; s++) {
            size_t n = sizes[s];
            for (int di = 0; di < nd; di++) {
                kiln_array *X, *Y, *Z, *I, *O;
                views(&d[di], n, &X, &Y, &Z, &I, &O);
                for (int k = 0; k < OPS; k++) {
                    if (k == 4 && di > 0)
                        continue; /* memcpy2: once per size */
                    if (k >= 5 && s > 0)
                        continue; /* launches: no size */
                    int warm = r == 0 ? 2 : 0;
                    for (int j = -warm; j < per; j++) {
                        double t = run_op(&d[di], k, n, X, Y, Z, I, O, j == 0);
                        if (j >= 0)
                            SAMPLE(di, k, s, r, j) = t;
                    }
                    printf("S %s %s %zu", k == 4 ? "cpu" : d[di].sel, op_names[k], n);
                    for (int j = 0; j < per; j++)
                        printf(" %.9f", SAMPLE(di, k, s, r, j));
                    printf("\n");
                }
                kiln_array_release(X);
                kiln_array_release(Y);
                kiln_array_release(Z);
                kiln_array_release(I);
                kiln_array_release(O);
            }
        }
        printf("END\n");
        fflush(stdout);
        if (serve)
            continue;
        if (r + 1 < rounds)
            continue;
        size_t m = (size_t)rounds * (size_t)per;
        printf("\nmedians of %zu runs (%d rounds x %d), us\n", m, rounds, per);
        for (int di = 0; di < nd; di++)
            for (int k = 0; k < OPS; k++)
                for (int s = 0; s < ns; s++) {
                    if ((k == 4 && di > 0) || (k >= 5 && s > 0))
                        continue;
                    double *v = &SAMPLE(di, k, s, 0, 0);
                    qsort(v, m, sizeof *v, bench_cmp_double);
                    printf("MED %s %s %zu %.3f\n", k == 4 ? "cpu" : d[di].sel, op_names[k],
                           sizes[s], v[m / 2] * 1e6);
                }
    }
    for (int di = 0; di < nd; di++)
        close_dev(&d[di]);
    free(samples);
    free(hx);
    free(hy);
    free(hz);
    free(hi);
    free(ho);
    free(mc_src);
    free(mc_dst);
    return 0;
}
