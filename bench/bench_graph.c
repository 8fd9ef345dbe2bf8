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
 * comparison for a chain of array calls (16 kiln_array_binary_scalar_out on
 * 1000 float32: generated kernels, as an algorithm pipeline records them).
 * The buffers both ways end bit-identical (checked: exit 1 otherwise).
 * On a CUDA device, the same nodes as a raw CUDA graph made through the
 * driver API (a chain of kernel nodes of kiln's CUfunction, launched with
 * cuGraphLaunch) in the same run, and raw cuGraphExecKernelNodeSetParams
 * against kiln_graph_exec_set_arg: the goals are <= 1.0 us a node
 * and <= 1.1x the raw graph, an update <= 0.5 us and <= 1.2x raw. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"
#include "kiln.h"
#if KILN_HAVE_CUDA
#include "kiln/cuda.h"
#endif

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
        FAIL_IF(kiln_array_binary_scalar_out(q, i % 2 ? KILN_OP_ADD : KILN_OP_MUL, a, a,
                                             KILN_ARG_F64(i % 2 ? 0.25 : 1.0009765625), 0, NULL,
                                             NULL) != KILN_OK,
                "array op");
}

#if KILN_HAVE_CUDA
#define RAW_STR2(x) #x
#define RAW_STR(x) RAW_STR2(x) /* the name cuda.h maps it to (_v2...) */

/* The raw CUDA graph of the same launches: per node the launch + run time
 * (median over rounds) and per update the cost of
 * cuGraphExecKernelNodeSetParams; 0 where the device is not CUDA. */
static int raw_cuda(kiln_queue *q, kiln_kernel *k, size_t nodes, int rounds, double *per_node,
                    double *per_update) {
    CUfunction fn;
    CUstream stream;
    CUcontext ctx;
    CUdeviceptr ptr;
    kiln_buffer *b;
    kiln_context *kctx = kiln_queue_context(q);
    if (kiln_cuda_kernel_native(k, kiln_queue_device(q), &fn) != KILN_OK ||
        kiln_cuda_queue_native(q, &stream) != KILN_OK ||
        kiln_cuda_context_native(kctx, &ctx) != KILN_OK)
        return 0;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 0;
    CUresult (*create)(CUgraph *, unsigned) =
        (CUresult(*)(CUgraph *, unsigned))dlsym(lib, "cuGraphCreate");
    CUresult (*add)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                    const CUDA_KERNEL_NODE_PARAMS *);
    *(void **)&add = dlsym(lib, RAW_STR(cuGraphAddKernelNode));
    CUresult (*inst)(CUgraphExec *, CUgraph, unsigned long long);
    *(void **)&inst = dlsym(lib, "cuGraphInstantiateWithFlags");
    CUresult (*launch)(CUgraphExec, CUstream);
    *(void **)&launch = dlsym(lib, "cuGraphLaunch");
    CUresult (*sync)(CUstream);
    *(void **)&sync = dlsym(lib, "cuStreamSynchronize");
    CUresult (*set)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);
    *(void **)&set = dlsym(lib, RAW_STR(cuGraphExecKernelNodeSetParams));
    CUresult (*push)(CUcontext);
    *(void **)&push = dlsym(lib, RAW_STR(cuCtxPushCurrent));
    CUresult (*pop)(CUcontext *);
    *(void **)&pop = dlsym(lib, RAW_STR(cuCtxPopCurrent));
    CUresult (*exec_destroy)(CUgraphExec);
    *(void **)&exec_destroy = dlsym(lib, RAW_STR(cuGraphExecDestroy));
    CUresult (*destroy)(CUgraph);
    *(void **)&destroy = dlsym(lib, RAW_STR(cuGraphDestroy));
    if (!create || !add || !inst || !launch || !sync || !set || !push || !pop || !exec_destroy ||
        !destroy)
        return 0;
    FAIL_IF(kiln_buffer_create(kctx, 64 * sizeof(float), 0, NULL, &b) != KILN_OK, "buffer");
    FAIL_IF(kiln_cuda_buffer_native(b, &ptr) != KILN_OK, "buffer pointer");
    float *scalars = malloc(nodes * sizeof *scalars);
    CUgraphNode *node = malloc(nodes * sizeof *node);
    CUgraph g;
    CUgraphExec e;
    CUcontext dummy;
    push(ctx);
    int ok = create(&g, 0) == CUDA_SUCCESS;
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = fn;
    p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 64;
    p.blockDimY = p.blockDimZ = 1;
    for (size_t i = 0; ok && i < nodes; i++) {
        scalars[i] = (float)(i % 7) * 0.5f;
        void *params[] = { &ptr, &scalars[i] };
        p.kernelParams = params;
        ok = add(&node[i], g, i ? &node[i - 1] : NULL, i ? 1 : 0, &p) == CUDA_SUCCESS;
    }
    ok = ok && inst(&e, g, 0) == CUDA_SUCCESS;
    ok = ok && launch(e, stream) == CUDA_SUCCESS && sync(stream) == CUDA_SUCCESS; /* warm */
    double *t = calloc((size_t)rounds, sizeof *t);
    for (int r = 0; ok && r < rounds; r++) {
        double s = bench_now();
        ok = launch(e, stream) == CUDA_SUCCESS && sync(stream) == CUDA_SUCCESS;
        t[r] = bench_now() - s;
    }
    if (ok)
        *per_node = median(t, rounds) / (double)nodes;
    size_t updates = nodes * 10;
    double s = bench_now();
    for (size_t i = 0; ok && i < updates; i++) {
        float a = (float)(i % 7) * 0.5f;
        void *params[] = { &ptr, &a };
        p.kernelParams = params;
        ok = set(e, node[i % nodes], &p) == CUDA_SUCCESS;
    }
    if (ok)
        *per_update = (bench_now() - s) / (double)updates;
    exec_destroy(e);
    destroy(g);
    pop(&dummy);
    free(t);
    free(node);
    free(scalars);
    kiln_buffer_release(b);
    return ok;
}
#endif

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
    printf("%d array ops (kiln_array_binary_scalar_out, 1000 float32), per chain:\n", STEPS);
    printf("  direct:                      %8.1f us\n", median(ct, rounds) * 1e6);
    printf("  graph:                       %8.1f us        (%.2fx direct)\n",
           median(cg, rounds) * 1e6, median(cg, rounds) / median(ct, rounds));
    printf("results bit-identical: launches %s, array chain %s\n", same ? "yes" : "NO",
           csame ? "yes" : "NO");
#if KILN_HAVE_CUDA
    double raw_node = 0, raw_update = 0;
    if (info.backend == KILN_BACKEND_CUDA &&
        raw_cuda(q, k, nodes, rounds, &raw_node, &raw_update)) {
        double kn = median(gt, rounds) / (double)nodes;
        printf("raw CUDA graph of the same %zu nodes (driver API, same run):\n", nodes);
        printf(
            "  raw graph, launch + run:     %8.3f us/node   kiln graph %.2fx raw (goal <= 1.0 us "
            "and <= 1.1x)\n",
            raw_node * 1e6, kn / raw_node);
        printf("  raw cuGraphExecKernelNodeSetParams: %6.3f us/update   kiln set_arg %.2fx raw "
               "(goal <= 0.5 us and <= 1.2x)\n",
               raw_update * 1e6, t_update / raw_update);
    }
#endif

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
