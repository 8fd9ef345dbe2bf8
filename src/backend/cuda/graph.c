/* Native command graphs on CUDA (backend.h's kiln__backend_graph): the
 * core's recorded nodes built into a CUgraph node by node (kernel, memcpy,
 * memset and empty nodes, with the recorded dependencies as edges),
 * instantiated once, launched with cuGraphLaunch as one command of a
 * queue (through kiln__cu_enqueue, so host gating holds it like any
 * command), and updated with cuGraphExecKernelNodeSetParams.
 *
 * The graph calls are looked up when first needed (kiln__cu_symbol), not
 * with the driver's required entry points: a driver without them makes
 * create return KILN_ERROR_UNSUPPORTED and the core replays instead. Not
 * run in CI (no GPU there): compiled against the CUDA headers only. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/refcount.h"
#include "backend/cuda/cuda_internal.h"
#include "base/error.h"
#include "base/fault.h"

typedef CUresult (*fn_create)(CUgraph *, unsigned int);
typedef CUresult (*fn_destroy)(CUgraph);
typedef CUresult (*fn_add_kernel)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                  const CUDA_KERNEL_NODE_PARAMS *);
typedef CUresult (*fn_add_memcpy)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                  const CUDA_MEMCPY3D *, CUcontext);
typedef CUresult (*fn_add_memset)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                  const CUDA_MEMSET_NODE_PARAMS *, CUcontext);
typedef CUresult (*fn_add_empty)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t);
typedef CUresult (*fn_instantiate)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*fn_exec_destroy)(CUgraphExec);
typedef CUresult (*fn_launch)(CUgraphExec, CUstream);
typedef CUresult (*fn_set_params)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);

static struct {
    fn_create create;
    fn_destroy destroy;
    fn_add_kernel add_kernel;
    fn_add_memcpy add_memcpy;
    fn_add_memset add_memset;
    fn_add_empty add_empty;
    fn_instantiate instantiate;
    fn_exec_destroy exec_destroy;
    fn_launch launch;
    fn_set_params set_params;
    int ok;
} g_api;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

#define KILN__CUG_STR2(x) #x
#define KILN__CUG_STR(x) KILN__CUG_STR2(x)

/* The names as cuda.h's macros spell them (cuGraphAddKernelNode is
 * cuGraphAddKernelNode_v2 in CUDA 12 and 13). */
static void g_load(void) {
    *(void **)&g_api.create = kiln__cu_symbol(KILN__CUG_STR(cuGraphCreate));
    *(void **)&g_api.destroy = kiln__cu_symbol(KILN__CUG_STR(cuGraphDestroy));
    *(void **)&g_api.add_kernel = kiln__cu_symbol(KILN__CUG_STR(cuGraphAddKernelNode));
    *(void **)&g_api.add_memcpy = kiln__cu_symbol(KILN__CUG_STR(cuGraphAddMemcpyNode));
    *(void **)&g_api.add_memset = kiln__cu_symbol(KILN__CUG_STR(cuGraphAddMemsetNode));
    *(void **)&g_api.add_empty = kiln__cu_symbol(KILN__CUG_STR(cuGraphAddEmptyNode));
    *(void **)&g_api.instantiate = kiln__cu_symbol("cuGraphInstantiateWithFlags");
    *(void **)&g_api.exec_destroy = kiln__cu_symbol(KILN__CUG_STR(cuGraphExecDestroy));
    *(void **)&g_api.launch = kiln__cu_symbol("cuGraphLaunch");
    *(void **)&g_api.set_params = kiln__cu_symbol(KILN__CUG_STR(cuGraphExecKernelNodeSetParams));
    g_api.ok = g_api.create && g_api.destroy && g_api.add_kernel && g_api.add_memcpy &&
               g_api.add_memset && g_api.add_empty && g_api.instantiate && g_api.exec_destroy &&
               g_api.launch && g_api.set_params;
}

/* A kernel node: what cuGraphExecKernelNodeSetParams needs besides the
 * arguments. */
typedef struct cug_node {
    struct cug_node *next; /* the graph's list */
    CUgraphNode node;
    CUfunction fn;
    unsigned grid[3], block[3];
} cug_node;

typedef struct cug_graph {
    atomic_int refs; /* the core's + one per queued launch */
    kiln__cu_context *ctx;
    kiln__cu_dev *dev;
    CUgraph graph;
    CUgraphExec exec;
    cug_node *nodes;
    pthread_mutex_t lock; /* node list */
} cug_graph;

static void cug_unref(cug_graph *g) {
    if (!kiln__ref_release(&g->refs))
        return;
    if (kiln__cu_ctx_use(g->dev->ctx) == KILN_OK) {
        if (g->exec)
            g_api.exec_destroy(g->exec);
        if (g->graph)
            g_api.destroy(g->graph);
    }
    while (g->nodes) {
        cug_node *n = g->nodes;
        g->nodes = n->next;
        free(n);
    }
    pthread_mutex_destroy(&g->lock);
    kiln__cu_context_unref(g->ctx);
    free(g);
}

static kiln_status cug_create(void *context, const kiln__bdevice *device, void *queue, void **out) {
    (void)queue; /* a CUgraphExec launches on any stream of its device */
    *out = NULL;
    pthread_once(&g_once, g_load);
    if (!g_api.ok)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "the NVIDIA driver lacks the CUDA graph entry points");
    kiln__cu_context *c = context;
    int idx = kiln__cu_context_find(c, (int)(intptr_t)device->handle);
    if (idx < 0)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "device %s is not in the context",
                               device->info.id);
    kiln_status st = kiln__cu_ctx_use(c->dev[idx].ctx);
    if (st != KILN_OK)
        return st;
    cug_graph *g = kiln__calloc(1, sizeof *g);
    if (!g)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory");
    CUresult r = g_api.create(&g->graph, 0);
    if (r != CUDA_SUCCESS) {
        free(g);
        return kiln__cu_fail("cuGraphCreate", r);
    }
    atomic_init(&g->refs, 1);
    pthread_mutex_init(&g->lock, NULL);
    g->ctx = c;
    kiln__cu_context_ref(c);
    g->dev = &c->dev[idx];
    *out = g;
    return KILN_OK;
}

static kiln_status cug_add_kernel(void *graph, void *kernel, unsigned dims, const size_t *global,
                                  const size_t *local, size_t num_args, const kiln__barg *args,
                                  size_t num_deps, void *const *deps, void **node) {
    cug_graph *g = graph;
    kiln__cu_kernel *k = kernel;
    *node = NULL;
    if (k->program->dev->ordinal != g->dev->ordinal)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0, "the kernel was built for another device");
    size_t b[3], grid[3];
    int empty = 0;
    kiln_status st = kiln__cu_launch_shape(g->dev, k, dims, global, local, b, grid, &empty);
    if (st != KILN_OK)
        return st;
    if (empty) /* the core records an empty range as a marker */
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "an empty launch");
    cug_node *n = kiln__calloc(1, sizeof *n);
    void **params = kiln__calloc(num_args ? num_args : 1, sizeof *params);
    CUdeviceptr *ptrs = kiln__calloc(num_args ? num_args : 1, sizeof *ptrs);
    CUgraphNode *d = kiln__calloc(num_deps ? num_deps : 1, sizeof *d);
    size_t shared = 0;
    if (!n || !params || !ptrs || !d)
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory");
    if (st == KILN_OK)
        st = kiln__cu_launch_params(g->dev, num_args, args, params, ptrs, &shared);
    if (st == KILN_OK)
        st = kiln__cu_ctx_use(g->dev->ctx);
    if (st == KILN_OK)
        st = kiln__cu_allow_shared(g->dev, k->fn, shared);
    if (st == KILN_OK) {
        for (size_t i = 0; i < num_deps; i++)
            d[i] = ((cug_node *)deps[i])->node;
        n->fn = k->fn;
        for (int i = 0; i < 3; i++) {
            n->grid[i] = (unsigned)grid[i];
            n->block[i] = (unsigned)b[i];
        }
        CUDA_KERNEL_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        p.func = k->fn;
        p.gridDimX = n->grid[0];
        p.gridDimY = n->grid[1];
        p.gridDimZ = n->grid[2];
        p.blockDimX = n->block[0];
        p.blockDimY = n->block[1];
        p.blockDimZ = n->block[2];
        p.sharedMemBytes = (unsigned)shared;
        p.kernelParams = params;
        CUresult r = g_api.add_kernel(&n->node, g->graph, d, num_deps, &p);
        if (r != CUDA_SUCCESS)
            st = kiln__cu_fail("cuGraphAddKernelNode", r);
    }
    free(params);
    free(ptrs);
    free(d);
    if (st != KILN_OK) {
        free(n);
        return st;
    }
    pthread_mutex_lock(&g->lock);
    n->next = g->nodes;
    g->nodes = n;
    pthread_mutex_unlock(&g->lock);
    *node = n;
    return KILN_OK;
}

/* A node that is not a kernel: its handle is a cug_node too (fn NULL), so
 * that deps are read one way. */
static kiln_status cug_node_new(cug_graph *g, size_t num_deps, void *const *deps, cug_node **out,
                                CUgraphNode **d) {
    *out = kiln__calloc(1, sizeof **out);
    *d = kiln__calloc(num_deps ? num_deps : 1, sizeof **d);
    if (!*out || !*d) {
        free(*out);
        free(*d);
        *out = NULL;
        *d = NULL;
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory");
    }
    for (size_t i = 0; i < num_deps; i++)
        (*d)[i] = ((cug_node *)deps[i])->node;
    return kiln__cu_ctx_use(g->dev->ctx);
}

static kiln_status cug_node_done(cug_graph *g, cug_node *n, CUgraphNode *d, CUresult r,
                                 const char *call, void **node) {
    free(d);
    if (r != CUDA_SUCCESS) {
        free(n);
        return kiln__cu_fail(call, r);
    }
    pthread_mutex_lock(&g->lock);
    n->next = g->nodes;
    g->nodes = n;
    pthread_mutex_unlock(&g->lock);
    *node = n;
    return KILN_OK;
}

static kiln_status cug_add_copy(void *graph, void *src, size_t src_offset, void *dst,
                                size_t dst_offset, size_t size, size_t num_deps, void *const *deps,
                                void **node) {
    cug_graph *g = graph;
    *node = NULL;
    if (((kiln__cu_buffer *)src)->pinned || ((kiln__cu_buffer *)dst)->pinned)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "page-locked host buffers are copied by the host (replayed)");
    cug_node *n;
    CUgraphNode *d;
    kiln_status st = cug_node_new(g, num_deps, deps, &n, &d);
    if (st != KILN_OK) {
        free(n);
        free(d);
        return st;
    }
    CUDA_MEMCPY3D p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p.srcDevice = ((kiln__cu_buffer *)src)->ptr + src_offset;
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.dstDevice = ((kiln__cu_buffer *)dst)->ptr + dst_offset;
    p.WidthInBytes = size;
    p.Height = 1;
    p.Depth = 1;
    CUresult r = g_api.add_memcpy(&n->node, g->graph, d, num_deps, &p, g->dev->ctx);
    return cug_node_done(g, n, d, r, "cuGraphAddMemcpyNode", node);
}

static kiln_status cug_add_fill(void *graph, void *buffer, const void *pattern, size_t pattern_size,
                                size_t offset, size_t size, size_t num_deps, void *const *deps,
                                void **node) {
    cug_graph *g = graph;
    *node = NULL;
    if (((kiln__cu_buffer *)buffer)->pinned)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "page-locked host buffers are filled by the host (replayed)");
    /* the shortest period the pattern repeats with (an int64 zero is a
     * 1-byte pattern), as the backend's own fill does */
    const unsigned char *pb = pattern;
    for (size_t per = 1; per <= 4 && per < pattern_size; per *= 2) {
        size_t i = per;
        while (i < pattern_size && pb[i] == pb[i % per])
            i++;
        if (i == pattern_size) {
            pattern_size = per;
            break;
        }
    }
    if (offset % pattern_size || ((kiln__cu_buffer *)buffer)->ptr % pattern_size)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "a memset node needs aligned memory");
    if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "a memset node takes 1, 2 or 4-byte patterns, not %zu",
                               pattern_size);
    cug_node *n;
    CUgraphNode *d;
    kiln_status st = cug_node_new(g, num_deps, deps, &n, &d);
    if (st != KILN_OK) {
        free(n);
        free(d);
        return st;
    }
    CUDA_MEMSET_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.dst = ((kiln__cu_buffer *)buffer)->ptr + offset;
    unsigned v = 0;
    if (pattern_size == 1)
        v = *(const uint8_t *)pattern;
    else if (pattern_size == 2)
        v = *(const uint16_t *)pattern;
    else
        v = *(const uint32_t *)pattern;
    p.value = v;
    p.elementSize = (unsigned)pattern_size;
    p.width = size / pattern_size;
    p.height = 1;
    p.pitch = size;
    CUresult r = g_api.add_memset(&n->node, g->graph, d, num_deps, &p, g->dev->ctx);
    return cug_node_done(g, n, d, r, "cuGraphAddMemsetNode", node);
}

static kiln_status cug_add_empty(void *graph, size_t num_deps, void *const *deps, void **node) {
    cug_graph *g = graph;
    *node = NULL;
    cug_node *n;
    CUgraphNode *d;
    kiln_status st = cug_node_new(g, num_deps, deps, &n, &d);
    if (st != KILN_OK) {
        free(n);
        free(d);
        return st;
    }
    CUresult r = g_api.add_empty(&n->node, g->graph, d, num_deps);
    return cug_node_done(g, n, d, r, "cuGraphAddEmptyNode", node);
}

static kiln_status cug_instantiate(void *graph) {
    cug_graph *g = graph;
    kiln_status st = kiln__cu_ctx_use(g->dev->ctx);
    if (st != KILN_OK)
        return st;
    CUresult r = g_api.instantiate(&g->exec, g->graph, 0);
    return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuGraphInstantiateWithFlags", r);
}

static kiln_status cug_set_kernel_args(void *graph, void *node, size_t num_args,
                                       const kiln__barg *args) {
    cug_graph *g = graph;
    cug_node *n = node;
    if (!n->fn)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "not a kernel node");
    void *stack_params[32];
    CUdeviceptr stack_ptrs[32];
    void **params = stack_params;
    CUdeviceptr *ptrs = stack_ptrs;
    if (num_args > 32) {
        params = kiln__malloc(num_args * sizeof *params);
        ptrs = kiln__malloc(num_args * sizeof *ptrs);
    }
    size_t shared = 0;
    kiln_status st = !params || !ptrs
                         ? kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory")
                         : kiln__cu_launch_params(g->dev, num_args, args, params, ptrs, &shared);
    if (st == KILN_OK)
        st = kiln__cu_ctx_use(g->dev->ctx);
    if (st == KILN_OK)
        st = kiln__cu_allow_shared(g->dev, n->fn, shared);
    if (st == KILN_OK) {
        CUDA_KERNEL_NODE_PARAMS p;
        memset(&p, 0, sizeof p);
        p.func = n->fn;
        p.gridDimX = n->grid[0];
        p.gridDimY = n->grid[1];
        p.gridDimZ = n->grid[2];
        p.blockDimX = n->block[0];
        p.blockDimY = n->block[1];
        p.blockDimZ = n->block[2];
        p.sharedMemBytes = (unsigned)shared;
        p.kernelParams = params;
        CUresult r = g_api.set_params(g->exec, n->node, &p);
        if (r != CUDA_SUCCESS)
            st = kiln__cu_fail("cuGraphExecKernelNodeSetParams", r);
    }
    if (params != stack_params)
        free(params);
    if (ptrs != stack_ptrs)
        free(ptrs);
    return st;
}

/* The launch as a queue command: held launches keep the graph. */
static kiln_status launch_run(kiln__cu_queue *q, void *p) {
    cug_graph *g = p;
    CUresult r = g_api.launch(g->exec, q->stream);
    return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuGraphLaunch", r);
}

static void *launch_hold(const void *p) {
    cug_graph *g = (cug_graph *)p;
    kiln__ref_take(&g->refs);
    return g;
}

static void launch_drop(void *p) {
    cug_unref(p);
}

static const kiln__cu_optype launch_type = { launch_run, launch_hold, launch_drop };

static kiln_status cug_launch(void *queue, void *graph, size_t num_wait, void *const *wait,
                              void **out_event) {
    kiln__cu_queue *q = queue;
    cug_graph *g = graph;
    if (!g->exec)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0, "the graph is not instantiated");
    if (q->dev->ordinal != g->dev->ordinal)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "the graph was built for cuda:%d, the queue is on cuda:%d",
                               g->dev->ordinal, q->dev->ordinal);
    return kiln__cu_enqueue(q, num_wait, wait, out_event != NULL, 0, 0, &launch_type, g, out_event);
}

static void cug_release(void *graph) {
    if (graph)
        cug_unref(graph);
}

const struct kiln__backend_graph kiln__cu_graph_table = {
    .default_on = 1,
    .create = cug_create,
    .add_kernel = cug_add_kernel,
    .add_copy = cug_add_copy,
    .add_fill = cug_add_fill,
    .add_empty = cug_add_empty,
    .instantiate = cug_instantiate,
    .set_kernel_args = cug_set_kernel_args,
    .launch = cug_launch,
    .release = cug_release,
};
