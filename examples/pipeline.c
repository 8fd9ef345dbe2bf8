/* pipeline — a data set larger than the device-memory budget, streamed
 * through the device in blocks with copies, kernels and host work
 * overlapping (docs/pipelines.md).
 *
 * The work: for n points in d dimensions, how many other points lie within
 * radius r of each point — the pairwise distances of the seeds, n x n of
 * them (4 GiB at n = 32768), computed in row blocks of B rows. The example
 * caps its device memory at a budget (default 256 MiB) and streams: per
 * block, upload the block's rows (host-to-device), compute the B x n
 * distances (kernel), download them (device-to-host, into page-locked host
 * memory), count the neighbours on the host. S slots, each with its own
 * queue, device buffers and pinned host buffers, keep S blocks in flight,
 * so one block's download overlaps the next one's kernel and the host's
 * counting of an earlier one.
 *
 * It then times each part alone (every upload, every kernel, every
 * download, all host counting; each part's blocks one after another on one
 * queue) and prints the pipeline's time against the sum of the parts and
 * the slowest part. Sampled rows are checked against a serial count.
 *
 *   pipeline [n] [d] [budget MiB] [slots] [--bits] [--trace FILE.json]
 *
 * --bits: the kernel compares each distance with the radius itself and the
 * block comes back as one bit a pair (32x fewer bytes to download and to
 * count), for when the host's memory bandwidth, shared by the downloads
 * and the counting, is what limits the distances' pipeline (docs/pipelines.md).
 *
 * With --trace, the run's timeline is written for ui.perfetto.dev, and
 * `kiln timeline FILE.json FILE.png` draws it. Device: $KILN_DEVICE. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, sysconf */
#include <kiln.h>
#include <math.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SLOTS 8
#define TRY(call)                                                                            \
    do {                                                                                     \
        if ((call) != KILN_OK) {                                                             \
            fprintf(stderr, "pipeline: line %d: %s\n", __LINE__, kiln_last_error_message()); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static const char *source =
    "KILN_KERNEL void dist2(KILN_GLOBAL const float *xb, KILN_GLOBAL const float *y,\n"
    "                       KILN_GLOBAL float *out, int n, int d, int rows, int sj, int sk) {\n"
    "    int j = (int)kiln_global_id(0), i = (int)kiln_global_id(1);\n"
    "    if (j >= n || i >= rows) return;\n"
    "    float s = 0.0f;\n"
    "    for (int k = 0; k < d; k++) { float t = xb[i * d + k] - y[(long)j * sj + (long)k * sk]; s "
    "+= t * t; }\n"
    "    out[(long)i * n + j] = s;\n"
    "}\n"
    /* 256 columns a work-group: each work-item one pair, then 8 of them
     * pack the group's 256 answers into 8 words of 32 bits */
    "KILN_KERNEL void near_bits(KILN_GLOBAL const float *xb, KILN_GLOBAL const float *y,\n"
    "                           KILN_GLOBAL uint *out, int n, int d, int rows, int sj, int sk,\n"
    "                           float r2, int nw) {\n"
    "    KILN_LOCAL uint near[256];\n"
    "    int l = (int)kiln_local_id(0), j = (int)kiln_global_id(0), i = (int)kiln_global_id(1);\n"
    "    uint hit = 0;\n"
    "    if (j < n && i < rows) {\n"
    "        float s = 0.0f;\n"
    "        for (int k = 0; k < d; k++) { float t = xb[i * d + k] - y[(long)j * sj + (long)k * "
    "sk]; s += t * t; }\n"
    "        hit = s <= r2;\n"
    "    }\n"
    "    near[l] = hit;\n"
    "    kiln_barrier();\n"
    "    if (l < 8 && i < rows) {\n"
    "        int w = (j - l) / 32 + l;\n"
    "        uint m = 0;\n"
    "        for (int b = 0; b < 32; b++) m |= near[l * 32 + b] << b;\n"
    "        if (w < nw) out[(long)i * nw + w] = m;\n"
    "    }\n"
    "}\n";

typedef struct slot {
    kiln_queue *q;
    kiln_buffer *xb, *db;         /* device: the block's rows, its distances */
    kiln_buffer *hx_buf, *hd_buf; /* page-locked host staging */
    float *hx;                    /* their mapped host pointers */
    void *hd;                     /* distances (float) or bits (uint32) */
    kiln_event *done;             /* the block's download */
    long block;                   /* the block in flight, -1 if none */
} slot;

static int n, d, B, nblocks, nslots;
static int bits, nw;   /* --bits; words of 32 pairs a row */
static int y_sj, y_sk; /* the resident points' strides: point j, dim k */
static float *X, radius2;
static int *counts;
static kiln_context *ctx;
static kiln_kernel *kern, *kern_bits;
static kiln_buffer *Y;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int rows_of(long b) {
    return (int)((b + 1) * B <= n ? B : n - b * B);
}

static void upload(slot *s, long b, kiln_event **ev) {
    int rows = rows_of(b);
    memcpy(s->hx, X + (size_t)b * B * d, (size_t)rows * d * sizeof(float));
    TRY(kiln_buffer_write_async(s->q, s->xb, 0, (size_t)rows * d * sizeof(float), s->hx, 0, NULL,
                                ev));
}

static void compute(slot *s, long b, kiln_event **ev) {
    int rows = rows_of(b);
    kiln_arg args[] = { KILN_ARG_BUF(s->xb), KILN_ARG_BUF(Y),    KILN_ARG_BUF(s->db),
                        KILN_ARG_I32(n),     KILN_ARG_I32(d),    KILN_ARG_I32(rows),
                        KILN_ARG_I32(y_sj),  KILN_ARG_I32(y_sk), KILN_ARG_F32(radius2),
                        KILN_ARG_I32(nw) };
    if (bits) {
        size_t global[2] = { ((size_t)nw * 32 + 255) & ~(size_t)255, (size_t)rows };
        size_t local[2] = { 256, 1 };
        TRY(kiln_kernel_launch(s->q, kern_bits, 2, global, local, 10, args, 0, NULL, ev));
    } else {
        size_t global[2] = { (size_t)n, (size_t)rows };
        TRY(kiln_kernel_launch(s->q, kern, 2, global, NULL, 8, args, 0, NULL, ev));
    }
}

/* bytes of one row's results */
static size_t row_bytes(void) {
    return bits ? (size_t)nw * 4 : (size_t)n * sizeof(float);
}

static void download(slot *s, long b, kiln_event **ev) {
    TRY(kiln_buffer_read_async(s->q, s->db, 0, (size_t)rows_of(b) * row_bytes(), s->hd, 0, NULL,
                               ev));
}

/* the host's part: neighbours within the radius (the point itself not),
 * rows split over host threads */
typedef struct count_job {
    const slot *s;
    long b;
    int first, last;
} count_job;

static void *count_rows(void *arg) {
    const count_job *j = arg;
    for (int i = j->first; i < j->last; i++) {
        int c = 0;
        if (bits) {
            const unsigned *row = (const unsigned *)j->s->hd + (size_t)i * nw;
            for (int k = 0; k < nw; k++)
                c += __builtin_popcount(row[k]);
        } else {
            const float *row = (const float *)j->s->hd + (size_t)i * n;
            for (int k = 0; k < n; k++)
                c += row[k] <= radius2;
        }
        counts[j->b * B + i] = c - 1;
    }
    return NULL;
}

static int host_threads = 1;

static void count(const slot *s, long b) {
    pthread_t t[16];
    count_job jobs[16];
    int rows = rows_of(b), nt = host_threads < rows ? host_threads : rows;
    for (int k = 0; k < nt; k++) {
        jobs[k] = (count_job){ s, b, rows * k / nt, rows * (k + 1) / nt };
        if (k && pthread_create(&t[k], NULL, count_rows, &jobs[k]) != 0)
            count_rows(&jobs[k]); /* no thread: do it here */
        else if (k)
            continue;
    }
    count_rows(&jobs[0]);
    for (int k = 1; k < nt; k++)
        pthread_join(t[k], NULL);
}

static slot slots[MAX_SLOTS];

/* Every block through the slots, S in flight: before a slot takes its next
 * block, the host counts the block it had (whose download has finished),
 * while the other slots' blocks go on on the device. */
static double pipeline(void) {
    double t0 = now();
    for (long b = 0; b < nblocks + nslots; b++) {
        slot *s = &slots[b % nslots];
        if (s->block >= 0) {
            TRY(kiln_event_wait(s->done));
            kiln_event_release(s->done);
            s->done = NULL;
            count(s, s->block);
            s->block = -1;
        }
        if (b >= nblocks)
            continue;
        upload(s, b, NULL);
        compute(s, b, NULL);
        download(s, b, &s->done);
        TRY(kiln_queue_flush(s->q));
        s->block = b;
    }
    return now() - t0;
}

/* One part alone: every block's step, one after another on slot 0. */
enum part { UPLOADS, KERNELS, DOWNLOADS, COUNTING };
static double part_alone(enum part p) {
    slot *s = &slots[0];
    double t0 = now();
    for (long b = 0; b < nblocks; b++) {
        if (p == UPLOADS)
            upload(s, b, NULL);
        else if (p == KERNELS)
            compute(s, b, NULL);
        else if (p == DOWNLOADS)
            download(s, b, NULL);
        else
            count(s, b);
    }
    TRY(kiln_queue_finish(s->q));
    return now() - t0;
}

/* Sampled rows against a serial count in double; a pair within 1e-5 of the
 * radius may fall either way (float rounding), so it is allowed to. */
static int check(void) {
    int bad = 0;
    for (int t = 0; t < 64; t++) {
        int i = (int)(((long)t * 7919) % n);
        int lo = 0, hi = 0;
        for (int j = 0; j < n; j++) {
            double s2 = 0;
            for (int k = 0; k < d; k++) {
                double u = (double)X[(size_t)i * d + k] - X[(size_t)j * d + k];
                s2 += u * u;
            }
            lo += s2 <= radius2 * (1 - 1e-5);
            hi += s2 <= radius2 * (1 + 1e-5);
        }
        lo--, hi--;
        if (counts[i] < lo || counts[i] > hi) {
            if (bad++ < 5)
                fprintf(stderr, "pipeline: row %d: %d neighbours, serial count %d..%d\n", i,
                        counts[i], lo, hi);
        }
    }
    return bad;
}

int main(int argc, char **argv) {
    const char *trace = NULL;
    long arg[4] = { 8192, 32, 256, 3 }; /* n, d, budget MiB, slots */
    int na = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--trace") && i + 1 < argc)
            trace = argv[++i];
        else if (!strcmp(argv[i], "--bits"))
            bits = 1;
        else if (na < 4)
            arg[na++] = strtol(argv[i], NULL, 0);
    }
    n = (int)arg[0], d = (int)arg[1], nslots = (int)arg[3];
    size_t budget = (size_t)arg[2] << 20;
    if (n < 2 || d < 1 || nslots < 1 || nslots > MAX_SLOTS || arg[2] < 1) {
        fprintf(stderr,
                "usage: pipeline [n >= 2] [d >= 1] [budget MiB] [slots 1..%d] "
                "[--bits] [--trace FILE.json]\n",
                MAX_SLOTS);
        return 2;
    }
    /* rows per block: the slots' buffers and the resident points fit the budget */
    nw = (n + 31) / 32;
    size_t resident = (size_t)n * d * sizeof(float);
    size_t per_row = (row_bytes() + (size_t)d * sizeof(float)) * nslots;
    if (budget <= resident || (budget - resident) / per_row < 1) {
        fprintf(stderr,
                "pipeline: a budget of %zu MiB cannot hold the points and one row per "
                "slot\n",
                budget >> 20);
        return 2;
    }
    size_t rows = (budget - resident) / per_row;
    B = rows > (size_t)n ? n : (int)rows;
    nblocks = (n + B - 1) / B;
    X = malloc((size_t)n * d * sizeof(float));
    counts = malloc((size_t)n * sizeof(int));
    if (!X || !counts)
        return 1;
    srand(12345);
    for (size_t i = 0; i < (size_t)n * d; i++)
        X[i] = (float)rand() / (float)RAND_MAX;
    radius2 = 0.03f * (float)d; /* a few percent of the points are neighbours */

    kiln_queue *q0 = NULL;
    TRY(kiln_queue_create_default(NULL, KILN_QUEUE_IN_ORDER, &q0));
    ctx = kiln_queue_context(q0);
    kiln_device *dev = kiln_queue_device(q0);
    kiln_program *prog = NULL;
    TRY(kiln_program_create(ctx, source, NULL, &prog));
    TRY(kiln_kernel_create(prog, "dist2", &kern));
    TRY(kiln_kernel_create(prog, "near_bits", &kern_bits));
    /* the points stay on the device: on a GPU transposed (d x n), so that
     * neighbouring work-items read neighbouring words; on a CPU device as
     * they are (a point's coordinates in one cache line: 2.3x faster on
     * PoCL than transposed) */
    kiln_device_info info;
    kiln_device_get_info(dev, &info);
    int transpose = info.type != KILN_DEVICE_CPU;
    y_sj = transpose ? 1 : d, y_sk = transpose ? n : 1;
    float *Yh = malloc(resident);
    if (!Yh)
        return 1;
    for (size_t i = 0; i < (size_t)n; i++)
        for (size_t k = 0; k < (size_t)d; k++)
            Yh[i * (size_t)y_sj + k * (size_t)y_sk] = X[i * d + k];
    TRY(kiln_buffer_create(ctx, resident, KILN_BUFFER_READ_ONLY, Yh, &Y));
    free(Yh);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    host_threads = cpus < 2 ? 1 : cpus > 16 ? 8 : (int)cpus / 2;
    for (int i = 0; i < nslots; i++) {
        slot *s = &slots[i];
        s->block = -1;
        size_t xbytes = (size_t)B * d * sizeof(float), dbytes = (size_t)B * row_bytes();
        /* profiling: device times for the timeline */
        TRY(kiln_queue_create(ctx, dev, KILN_QUEUE_PROFILING, &s->q));
        TRY(kiln_buffer_create(ctx, xbytes, KILN_BUFFER_READ_ONLY, NULL, &s->xb));
        TRY(kiln_buffer_create(ctx, dbytes, KILN_BUFFER_WRITE_ONLY, NULL, &s->db));
        TRY(kiln_buffer_create(ctx, xbytes, KILN_BUFFER_HOST_PINNED, NULL, &s->hx_buf));
        TRY(kiln_buffer_create(ctx, dbytes, KILN_BUFFER_HOST_PINNED, NULL, &s->hd_buf));
        void *p = NULL;
        TRY(kiln_buffer_map(s->q, s->hx_buf, KILN_MAP_WRITE, 0, xbytes, &p));
        s->hx = p;
        TRY(kiln_buffer_map(s->q, s->hd_buf, KILN_MAP_READ | KILN_MAP_WRITE, 0, dbytes, &p));
        s->hd = p;
    }
    printf("pipeline: %d points x %d dims on %s: %.2f GiB of %s, budget %zu MiB, "
           "%d blocks of %d rows, %d slots, %d host threads\n",
           n, d, info.name, (double)n * row_bytes() / (1u << 30),
           bits ? "bits (one a pair)" : "distances", budget >> 20, nblocks, B, nslots,
           host_threads);

    (void)pipeline(); /* warm-up: builds, first touches */
    if (trace)
        TRY(kiln_trace_start(trace));
    double t_pipe = pipeline();
    int bad = check();
    if (trace)
        TRY(kiln_trace_stop()); /* the trace shows the pipelines, not the parts */
    const char *names[4] = { "uploads", "kernels", "downloads", "host counting" };
    double t[4], sum = 0, slowest = 0;
    int which = 0;
    for (int p = 0; p < 4; p++) {
        t[p] = part_alone((enum part)p);
        sum += t[p];
        if (t[p] > slowest)
            slowest = t[p], which = p;
    }
    for (int p = 0; p < 4; p++)
        printf("  %-14s alone %9.2f ms\n", names[p], t[p] * 1e3);
    printf("  pipeline          %9.2f ms = %.2f x the sum of the parts (%.2f ms), "
           "%.2f x the slowest part (%s)\n",
           t_pipe * 1e3, t_pipe / sum, sum * 1e3, t_pipe / slowest, names[which]);
    printf("RESULT pipeline %.6e\nRESULT sum_of_parts %.6e\nRESULT slowest_part %.6e\n", t_pipe,
           sum, slowest);
    printf("pipeline: %s\n", bad ? "MISMATCH" : "OK");

    for (int i = 0; i < nslots; i++) {
        slot *s = &slots[i];
        TRY(kiln_buffer_unmap(s->q, s->hx_buf, s->hx, 0, NULL, NULL));
        TRY(kiln_buffer_unmap(s->q, s->hd_buf, s->hd, 0, NULL, NULL));
        TRY(kiln_queue_finish(s->q));
        kiln_buffer_release(s->xb), kiln_buffer_release(s->db);
        kiln_buffer_release(s->hx_buf), kiln_buffer_release(s->hd_buf);
        kiln_queue_release(s->q);
    }
    kiln_buffer_release(Y);
    kiln_kernel_release(kern);
    kiln_kernel_release(kern_bits);
    kiln_program_release(prog);
    kiln_queue_release(q0);
    free(X), free(counts);
    return bad ? 1 : 0;
}
