/* Command graph replay against the same launches made one by one, in one
 * run on one device (KILN_DEVICE picks it).
 *
 *   bench_graph [nodes] [rounds]      (default 1000 nodes, 9 rounds)
 *
 * Kernels: `nodes` launches of a tiny kernel (64 work-items, p[i] += a*i),
 * each its own scalar a, on an in-order queue. Per round:
 *   direct   nodes kiln_kernel_launch calls, then kiln_queue_finish
 *   graph    one kiln_graph_exec_launch of the recorded launches, then a finish
 * each as the enqueue time (host, until the calls return) and the total
 * time (until the finish returns), per node, median over the rounds. Then
 * the cost of one kiln_graph_exec_set_arg (a new scalar), and the same
 * comparison for a chain of array calls (16 kiln_array_binary_scalar on
 * 1000 float32: generated kernels, as an algorithm pipeline records them).
 * The buffers both ways end bit-identical (checked: exit 1 otherwise). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"
#include "kiln.h"

#define FAIL_IF(cond, what)                                                            \
    do {                                                                               \
        if (cond) {                                                                    \
            fprintf(stderr, "bench_graph: %s: %s\n", what, kiln_last_error_message()); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static const char *src = "KILN_KERNEL void tiny(KILN_GLOBAL float *p, float a) {\n"
                         "    size_t i = kiln_global_id(0);\n"
                         "    p[i] += a * (float)i;\n"
                         "}\n";

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void launches(kiln_queue *q, kiln_kernel *k, kiln_buffer *b, size_t nodes) {
    size_t g = 64;
    for (size_t i = 0; i < nodes; i++) {
        kiln_arg args[] = { KILN_ARG_BUF(b), KILN_ARG_F32((float)(i % 7) * 0.5f) };
        FAIL_IF(kiln_kernel_launch(q, k, 1, &g, NULL, 2, args, 0, NULL, NULL) != KILN_OK, "launch");
    }
}

static void chain(kiln_queue *q, kiln_array *a, int steps) {
    for (int i = 0; i < steps; i++)
        FAIL_IF(kiln_array_binary_scalar(q, i % 2 ? KILN_OP_ADD : KILN_OP_MUL, a, a,
                                         i % 2 ? 0.25 : 1.0009765625, 0, NULL, NULL) != KILN_OK,
                "array op");
}

int main(int argc, char **argv) {
    size_t nodes = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 1000;
    int rounds = argc > 2 ? atoi(argv[2]) : 9;
    if (nodes == 0 || rounds < 1 || rounds > 101) {
        fprintf(stderr, "usage: bench_graph [nodes >= 1] [rounds 1..101]\n");
        return 2;
    }
    kiln_queue *q;
    FAIL_IF(kiln_queue_create_default(NULL, 0, &q) != KILN_OK, "queue");
    kiln_context *ctx = kiln_queue_context(q);
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    kiln_program *prog;
    kiln_kernel *k;
    FAIL_IF(kiln_program_create(ctx, src, NULL, &prog) != KILN_OK, "build");
    FAIL_IF(kiln_kernel_create(prog, "tiny", &k) != KILN_OK, "kernel");
    kiln_buffer *bd, *bg;
    FAIL_IF(kiln_buffer_create(ctx, 64 * sizeof(float), 0, NULL, &bd) != KILN_OK, "buffer");
    FAIL_IF(kiln_buffer_create(ctx, 64 * sizeof(float), 0, NULL, &bg) != KILN_OK, "buffer");
    float zero = 0;
    kiln_buffer_fill(q, bd, &zero, 4, 0, 256, 0, NULL, NULL);
    kiln_buffer_fill(q, bg, &zero, 4, 0, 256, 0, NULL, NULL);

    double t0 = bench_now();
    FAIL_IF(kiln_graph_record_begin(q) != KILN_OK, "record");
    launches(q, k, bg, nodes);
    kiln_graph *graph;
    FAIL_IF(kiln_graph_record_end(q, &graph) != KILN_OK, "record end");
    kiln_graph_exec *exec;
    FAIL_IF(kiln_graph_instantiate(graph, &exec) != KILN_OK, "instantiate");
    double t_record = bench_now() - t0;
    launches(q, k, bd, nodes); /* warm both paths */
    kiln_graph_exec_launch(q, exec, 0, NULL, NULL);
    kiln_queue_finish(q);

    double *de = calloc((size_t)rounds, sizeof(double)),
           *dt = calloc((size_t)rounds, sizeof(double));
    double *ge = calloc((size_t)rounds, sizeof(double)),
           *gt = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        double s = bench_now();
        launches(q, k, bd, nodes);
        de[r] = bench_now() - s;
        kiln_queue_finish(q);
        dt[r] = bench_now() - s;
        s = bench_now();
        FAIL_IF(kiln_graph_exec_launch(q, exec, 0, NULL, NULL) != KILN_OK, "graph launch");
        ge[r] = bench_now() - s;
        kiln_queue_finish(q);
        gt[r] = bench_now() - s;
    }
    float hd[64], hg[64];
    kiln_buffer_read(q, bd, 0, sizeof hd, hd);
    kiln_buffer_read(q, bg, 0, sizeof hg, hg);
    int same = memcmp(hd, hg, sizeof hd) == 0;

    /* a parameter update */
    size_t updates = nodes * 10;
    double s = bench_now();
    for (size_t i = 0; i < updates; i++) {
        kiln_arg a = KILN_ARG_F32((float)(i % 7) * 0.5f);
        FAIL_IF(kiln_graph_exec_set_arg(exec, i % nodes, 1, &a) != KILN_OK, "set_arg");
    }
    double t_update = (bench_now() - s) / (double)updates;

    /* an array chain */
    enum { STEPS = 16 };
    size_t n = 1000;
    kiln_array *ad, *ag;
    FAIL_IF(kiln_array_zeros(q, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &ad) != KILN_OK, "array");
    FAIL_IF(kiln_array_zeros(q, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &ag) != KILN_OK, "array");
    chain(q, ad, STEPS); /* builds the kernels before recording */
    FAIL_IF(kiln_graph_record_begin(q) != KILN_OK, "record");
    chain(q, ag, STEPS);
    kiln_graph *cgraph;
    FAIL_IF(kiln_graph_record_end(q, &cgraph) != KILN_OK, "record end");
    kiln_graph_exec *cexec;
    FAIL_IF(kiln_graph_instantiate(cgraph, &cexec) != KILN_OK, "instantiate");
    kiln_graph_exec_launch(q, cexec, 0, NULL, NULL);
    kiln_queue_finish(q);
    double *ct = calloc((size_t)rounds, sizeof(double)),
           *cg = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        double t = bench_now();
        chain(q, ad, STEPS);
        kiln_queue_finish(q);
        ct[r] = bench_now() - t;
        t = bench_now();
        kiln_graph_exec_launch(q, cexec, 0, NULL, NULL);
        kiln_queue_finish(q);
        cg[r] = bench_now() - t;
    }
    float *had = malloc(n * 4), *hag = malloc(n * 4);
    kiln_array_read(q, ad, had);
    kiln_array_read(q, ag, hag);
    int csame = memcmp(had, hag, n * 4) == 0;

    double us = 1e6 / (double)nodes;
    printf("device: %s (%s)\n", info.name, info.id);
    printf("graph implementation: %s (KILN_GRAPH_NATIVE=0 forces kiln's replay)\n",
           kiln_graph_exec_impl(exec) == KILN_GRAPH_IMPL_NATIVE ? "native (the driver's graph)"
                                                                : "kiln's replay");
    printf("%zu tiny launches, %d rounds, medians per node:\n", nodes, rounds);
    printf("  record + instantiate once:   %8.3f us/node\n", t_record * us);
    printf("  direct, enqueue:             %8.3f us/node\n", median(de, rounds) * us);
    printf("  graph,  enqueue:             %8.3f us/node   (%.2fx direct)\n",
           median(ge, rounds) * us, median(ge, rounds) / median(de, rounds));
    printf("  direct, enqueue + run:       %8.3f us/node\n", median(dt, rounds) * us);
    printf("  graph,  enqueue + run:       %8.3f us/node   (%.2fx direct)\n",
           median(gt, rounds) * us, median(gt, rounds) / median(dt, rounds));
    printf("  kiln_graph_exec_set_arg:     %8.3f us/update\n", t_update * 1e6);
    printf("%d array ops (kiln_array_binary_scalar, 1000 float32), per chain:\n", STEPS);
    printf("  direct:                      %8.1f us\n", median(ct, rounds) * 1e6);
    printf("  graph:                       %8.1f us        (%.2fx direct)\n",
           median(cg, rounds) * 1e6, median(cg, rounds) / median(ct, rounds));
    printf("results bit-identical: launches %s, array chain %s\n", same ? "yes" : "NO",
           csame ? "yes" : "NO");

    kiln_graph_exec_release(exec);
    kiln_graph_release(graph);
    kiln_graph_exec_release(cexec);
    kiln_graph_release(cgraph);
    kiln_array_release(ad);
    kiln_array_release(ag);
    kiln_buffer_release(bd);
    kiln_buffer_release(bg);
    kiln_kernel_release(k);
    kiln_program_release(prog);
    kiln_queue_release(q);
    free(de);
    free(dt);
    free(ge);
    free(gt);
    free(ct);
    free(cg);
    free(had);
    free(hag);
    return same && csame ? 0 : 1;
}
