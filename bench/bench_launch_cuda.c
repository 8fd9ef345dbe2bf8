/* Per-launch overhead of an empty 3-argument kernel through kiln
 * (kiln_kernel_launch on "cuda:0") against raw cuLaunchKernel of the same
 * CUfunction (kiln_cuda_kernel_native) on a stream of the bench's own, in the
 * same context, in interleaved rounds (medians, ratio); the launch+wait
 * round trip; command graphs (issue 47): 1000 launches recorded with
 * kiln_graph_record_begin and replayed (a CUDA graph underneath) against a
 * raw CUDA graph of the same 1000 kernel nodes (cuGraphAddKernelNode,
 * one chain) and against the launches one by one, per node, and a
 * parameter update (kiln_graph_exec_set_arg against raw
 * cuGraphExecKernelNodeSetParams); and NVRTC compile time cold against kiln's disk cache. Uses
 * only the public API and kiln/cuda.h; libcuda is dlopen'd as kiln does.
 *
 * Run: build/bench/bench_launch_cuda [rounds]   (exits 0 without a GPU) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kiln.h"

#if KILN_HAVE_CUDA
#include <dlfcn.h>

#include "kiln/cuda.h"

#define XSTR(x) STR(x)
#define STR(x) #x
/* cuda.h maps names to versioned symbols (cuStreamDestroy_v2): resolve
 * those, with their prototypes. */
#define CU_FUNCS(X)                \
    X(cuGetErrorName)              \
    X(cuCtxSetCurrent)             \
    X(cuStreamCreate)              \
    X(cuStreamDestroy)             \
    X(cuStreamSynchronize)         \
    X(cuLaunchKernel)              \
    X(cuGraphCreate)               \
    X(cuGraphDestroy)              \
    X(cuGraphAddKernelNode)        \
    X(cuGraphInstantiateWithFlags) \
    X(cuGraphExecDestroy)          \
    X(cuGraphLaunch)               \
    X(cuGraphExecKernelNodeSetParams)

static struct {
#define FIELD(f) __typeof__(&f) f;
    CU_FUNCS(FIELD)
#undef FIELD
} api;

static int load_cuda(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 0;
#define RESOLVE(f)                     \
    {                                  \
        void *p = dlsym(lib, XSTR(f)); \
        if (!p)                        \
            return 0;                  \
        memcpy(&api.f, &p, sizeof p);  \
    }
    CU_FUNCS(RESOLVE)
#undef RESOLVE
    return 1;
}

static const char *cu_err_name(CUresult r) {
    const char *name = NULL;
    if (api.cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
        return "CUDA_ERROR_UNKNOWN";
    return name;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *src = "KILN_KERNEL void empty3(KILN_GLOBAL int *a, int b, float c) { }\n";

#define CK(x)                                                                                      \
    do {                                                                                           \
        kiln_status st_ = (x);                                                                     \
        if (st_ != KILN_OK) {                                                                      \
            fprintf(stderr, "%s: %s: %s\n", #x, kiln_status_name(st_), kiln_last_error_message()); \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)
#define CU(x)                                                 \
    do {                                                      \
        CUresult r_ = (x);                                    \
        if (r_ != CUDA_SUCCESS) {                             \
            fprintf(stderr, "%s: %s\n", #x, cu_err_name(r_)); \
            return 1;                                         \
        }                                                     \
    } while (0)

/* Program build: cold (no cache) vs from the disk cache, in new contexts
 * (no in-memory reuse). Prints one line; 0 on success. */
static int bench_compile(kiln_device *dev) {
    kiln_program_opts cold = KILN_PROGRAM_OPTS(.no_cache = 1);
    double t_cold[3], t_warm[5];
    kiln_context *ctx = NULL;
    kiln_program *prog = NULL;
    for (int i = 0; i < 3; i++) {
        CK(kiln_context_create(&dev, 1, &ctx));
        double t0 = now_us();
        CK(kiln_program_create(ctx, src, &cold, &prog));
        t_cold[i] = now_us() - t0;
        kiln_program_release(prog);
        kiln_context_release(ctx);
    }
    /* fill the cache once, then new contexts (no in-memory reuse) */
    CK(kiln_context_create(&dev, 1, &ctx));
    CK(kiln_program_create(ctx, src, NULL, &prog));
    kiln_program_release(prog);
    kiln_context_release(ctx);
    int from_cache = 1;
    for (int i = 0; i < 5; i++) {
        CK(kiln_context_create(&dev, 1, &ctx));
        double t0 = now_us();
        CK(kiln_program_create(ctx, src, NULL, &prog));
        t_warm[i] = now_us() - t0;
        from_cache &= kiln_program_from_cache(prog, dev);
        kiln_program_release(prog);
        kiln_context_release(ctx);
    }
    double mc = median(t_cold, 3), mw = median(t_warm, 5);
    printf("compile (NVRTC, cold): %.1f ms; from disk cache: %.3f ms "
           "(%.0fx faster)%s\n",
           mc / 1e3, mw / 1e3, mc / mw,
           from_cache ? "" : "  [WARNING: not reported as from the cache]");

    return 0;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 15;
    if (rounds < 3)
        rounds = 3;
    char cache_dir[] = "/tmp/kiln-bench-cuda-XXXXXX";
    if (!mkdtemp(cache_dir)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("KILN_CACHE_DIR", cache_dir, 1);

    kiln_device *dev = NULL;
    if (kiln_device_select("cuda:0", &dev) != KILN_OK) {
        printf("no CUDA device: %s\nbench_launch_cuda skipped\n", kiln_last_error_message());
        return 0;
    }
    kiln_device_info info;
    CK(kiln_device_get_info(dev, &info));
    if (!load_cuda()) {
        printf("libcuda.so.1 lacks an entry point the bench uses: skipped\n");
        return 0;
    }
    printf("device: %s (%s, sm_%u), driver %s\n", info.name, info.id, info.compute_capability,
           info.driver_version);

    if (bench_compile(dev) != 0)
        return 1;

    /* --- launch overhead ------------------------------------------------- */
    kiln_queue *q = NULL;
    CK(kiln_queue_create_default("cuda:0", 0, &q));
    kiln_context *ctx = kiln_queue_context(q);
    kiln_program *prog = NULL;
    CK(kiln_program_create(ctx, src, NULL, &prog));
    kiln_kernel *k = NULL;
    CK(kiln_kernel_create(prog, "empty3", &k));
    kiln_buffer *buf = NULL;
    CK(kiln_buffer_create(ctx, 256, 0, NULL, &buf));
    kiln_arg args[3] = { KILN_ARG_BUF(buf), KILN_ARG_I32(7), KILN_ARG_F32(1.5f) };
    size_t global = 256, local = 256;

    /* raw: kiln's own CUfunction and device pointer, launched with
     * cuLaunchKernel on a stream of the bench's own, same context */
    CUfunction fn;
    CUcontext cuctx;
    CUdeviceptr dptr;
    CUstream stream;
    CK(kiln_cuda_kernel_native(k, dev, &fn));
    CK(kiln_cuda_context_native(ctx, &cuctx));
    CK(kiln_cuda_buffer_native(buf, &dptr));
    CU(api.cuCtxSetCurrent(cuctx));
    CU(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    int b = 7;
    float c = 1.5f;
    void *params[3] = { &dptr, &b, &c };

    enum { BATCH = 200 };
    double *kl = malloc(sizeof(double) * (size_t)rounds);
    double *rl = malloc(sizeof(double) * (size_t)rounds);
    double *kt = malloc(sizeof(double) * (size_t)rounds);
    double *rt = malloc(sizeof(double) * (size_t)rounds);
    /* warm-up */
    for (int i = 0; i < 100; i++) {
        CK(kiln_kernel_launch(q, k, 1, &global, &local, 3, args, 0, NULL, NULL));
        CU(api.cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, stream, params, NULL));
    }
    CK(kiln_queue_finish(q));
    CU(api.cuStreamSynchronize(stream));
    for (int r = 0; r < rounds; r++) {
        for (int side = 0; side < 2; side++) {
            int kiln_side = (side + r) % 2 == 0;
            double t0 = now_us();
            if (kiln_side) {
                for (int i = 0; i < BATCH; i++)
                    CK(kiln_kernel_launch(q, k, 1, &global, &local, 3, args, 0, NULL, NULL));
                kl[r] = (now_us() - t0) / BATCH;
                CK(kiln_queue_finish(q));
            } else {
                for (int i = 0; i < BATCH; i++)
                    CU(api.cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, stream, params, NULL));
                rl[r] = (now_us() - t0) / BATCH;
                CU(api.cuStreamSynchronize(stream));
            }
        }
        /* launch + wait round trip */
        for (int side = 0; side < 2; side++) {
            double acc = 0;
            for (int i = 0; i < 20; i++) {
                double t0 = now_us();
                if (side == 0) {
                    kiln_event *ev = NULL;
                    CK(kiln_kernel_launch(q, k, 1, &global, &local, 3, args, 0, NULL, &ev));
                    CK(kiln_event_wait(ev));
                    kiln_event_release(ev);
                } else {
                    CU(api.cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, stream, params, NULL));
                    CU(api.cuStreamSynchronize(stream));
                }
                acc += now_us() - t0;
            }
            (side == 0 ? kt : rt)[r] = acc / 20;
        }
    }
    double mk = median(kl, rounds), mr = median(rl, rounds);
    double mkt = median(kt, rounds), mrt = median(rt, rounds);
    printf("launch (enqueue, %d per batch, %d rounds, medians):\n", BATCH, rounds);
    printf("  kiln  %.3f us/launch\n  raw   %.3f us/launch (cuLaunchKernel)\n", mk, mr);
    printf("  ratio kiln/raw = %.3f %s\n", mk / mr,
           mk / mr <= 1.10 ? "(<= 1.10: ok)" : "(> 1.10: TOO SLOW)");
    printf("launch + wait round trip: kiln %.2f us (event wait), raw %.2f us "
           "(cuStreamSynchronize), ratio %.3f\n",
           mkt, mrt, mkt / mrt);

    /* --- command graphs ---------------------------------------------------- */
    enum { NODES = 1000 };
    kiln_graph *g = NULL;
    kiln_graph_exec *gx = NULL;
    size_t first = 0;
    CK(kiln_graph_record_begin(q));
    for (int i = 0; i < NODES; i++) {
        CK(kiln_kernel_launch(q, k, 1, &global, &local, 3, args, 0, NULL, NULL));
        if (i == 0)
            CK(kiln_graph_last_node(q, &first));
    }
    CK(kiln_graph_record_end(q, &g));
    CK(kiln_graph_instantiate(g, &gx));
    CU(api.cuCtxSetCurrent(cuctx));
    CUgraph rg;
    CUgraphExec rx;
    CUgraphNode prev = NULL, node0 = NULL;
    CU(api.cuGraphCreate(&rg, 0));
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = fn;
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = 256;
    kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = params;
    for (int i = 0; i < NODES; i++) {
        CUgraphNode nd;
        CU(api.cuGraphAddKernelNode(&nd, rg, prev ? &prev : NULL, prev ? 1 : 0, &kp));
        if (i == 0)
            node0 = nd;
        prev = nd;
    }
    CU(api.cuGraphInstantiateWithFlags(&rx, rg, 0));
    double *gk = malloc(sizeof(double) * (size_t)rounds);
    double *gr = malloc(sizeof(double) * (size_t)rounds);
    double *go = malloc(sizeof(double) * (size_t)rounds);
    CK(kiln_graph_exec_launch(q, gx, 0, NULL, NULL)); /* warm */
    CK(kiln_queue_finish(q));
    CU(api.cuGraphLaunch(rx, stream));
    CU(api.cuStreamSynchronize(stream));
    for (int r = 0; r < rounds; r++) {
        double t0 = now_us();
        CK(kiln_graph_exec_launch(q, gx, 0, NULL, NULL));
        CK(kiln_queue_finish(q));
        gk[r] = (now_us() - t0) / NODES;
        CU(api.cuCtxSetCurrent(cuctx));
        t0 = now_us();
        CU(api.cuGraphLaunch(rx, stream));
        CU(api.cuStreamSynchronize(stream));
        gr[r] = (now_us() - t0) / NODES;
        t0 = now_us();
        for (int i = 0; i < NODES; i++)
            CK(kiln_kernel_launch(q, k, 1, &global, &local, 3, args, 0, NULL, NULL));
        CK(kiln_queue_finish(q));
        go[r] = (now_us() - t0) / NODES;
    }
    enum { UPDATES = 10000 };
    double t0 = now_us();
    for (int i = 0; i < UPDATES; i++) {
        kiln_arg a = KILN_ARG_I32(i);
        CK(kiln_graph_exec_set_arg(gx, first, 1, &a));
    }
    double ku = (now_us() - t0) / UPDATES;
    CU(api.cuCtxSetCurrent(cuctx));
    t0 = now_us();
    for (int i = 0; i < UPDATES; i++) {
        b = i;
        CU(api.cuGraphExecKernelNodeSetParams(rx, node0, &kp));
    }
    double ru = (now_us() - t0) / UPDATES;
    double mgk = median(gk, rounds), mgr = median(gr, rounds), mgo = median(go, rounds);
    printf("command graph of %d launches (launch + synchronise, per node, medians), %s:\n", NODES,
           kiln_graph_exec_impl(gx) == KILN_GRAPH_IMPL_NATIVE ? "kiln's graph is a CUDA graph"
                                                              : "kiln's graph REPLAYS");
    printf("  kiln graph  %.3f us/node (goal <= 1.0)\n  raw graph   %.3f us/node\n"
           "  one by one  %.3f us/node (kiln_kernel_launch)\n  ratio kiln/raw graph = %.3f "
           "(goal <= 1.1)\n",
           mgk, mgr, mgo, mgk / mgr);
    printf("parameter update: kiln_graph_exec_set_arg %.3f us, raw "
           "cuGraphExecKernelNodeSetParams %.3f us, ratio %.3f (goals <= 0.5 us, <= 1.2)\n",
           ku, ru, ku / ru);
    kiln_graph_exec_release(gx);
    kiln_graph_release(g);
    api.cuCtxSetCurrent(cuctx);
    api.cuGraphExecDestroy(rx);
    api.cuGraphDestroy(rg);
    free(gk), free(gr), free(go);

    api.cuCtxSetCurrent(cuctx);
    api.cuStreamDestroy(stream);
    free(kl), free(rl), free(kt), free(rt);
    kiln_buffer_release(buf);
    kiln_kernel_release(k);
    kiln_program_release(prog);
    kiln_queue_release(q);
    size_t removed = 0;
    kiln_cache_clear(&removed);
    rmdir(cache_dir);
    return 0;
}
#else
int main(void) {
    printf("built without cuda.h: bench_launch_cuda skipped\n");
    return 0;
}
#endif
