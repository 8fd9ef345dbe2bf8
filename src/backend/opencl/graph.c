/* Native command graphs on OpenCL: cl_khr_command_buffer (backend.h's
 * kiln__backend_graph). The core's recorded nodes become commands of one
 * command buffer of the queue the recording began on, with sync points for
 * the recorded dependencies; a launch is one clEnqueueCommandBufferKHR.
 *
 * The extension is provisional and its versions are not compatible: from
 * 0.9.5 on, clCommandCopyBufferKHR, clCommandFillBufferKHR and
 * clCommandBarrierWithWaitListKHR take a properties list after the queue.
 * The device's version (CL_DEVICE_EXTENSIONS_WITH_VERSION; 0.9.0 where the
 * query is missing) picks the prototypes. PoCL 3.1 (CI) has 0.9.0.
 *
 * Without cl_khr_command_buffer_mutable_dispatch a recorded kernel's
 * arguments are fixed: set_kernel_args is KILN_ERROR_UNSUPPORTED, and the
 * core builds the command buffer again at the next launch. Without
 * simultaneous use, a command buffer still pending cannot be enqueued
 * again: such a launch is KILN_ERROR_UNSUPPORTED and the core replays it
 * instead (same results). Off unless KILN_GRAPH_NATIVE=1 (see the table). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/ocl.h"
#include "base/fault.h"

typedef cl_command_buffer_khr (*fn_create)(cl_uint, const cl_command_queue *,
                                           const cl_command_buffer_properties_khr *, cl_int *);
typedef cl_int (*fn_cb)(cl_command_buffer_khr);
typedef cl_int (*fn_enqueue)(cl_uint, cl_command_queue *, cl_command_buffer_khr, cl_uint,
                             const cl_event *, cl_event *);
typedef cl_int (*fn_ndrange)(cl_command_buffer_khr, cl_command_queue, const cl_properties *,
                             cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,
                             cl_uint, const cl_sync_point_khr *, cl_sync_point_khr *,
                             cl_mutable_command_khr *);
/* up to 0.9.4 */
typedef cl_int (*fn_copy_old)(cl_command_buffer_khr, cl_command_queue, cl_mem, cl_mem, size_t,
                              size_t, size_t, cl_uint, const cl_sync_point_khr *,
                              cl_sync_point_khr *, cl_mutable_command_khr *);
typedef cl_int (*fn_fill_old)(cl_command_buffer_khr, cl_command_queue, cl_mem, const void *, size_t,
                              size_t, size_t, cl_uint, const cl_sync_point_khr *,
                              cl_sync_point_khr *, cl_mutable_command_khr *);
typedef cl_int (*fn_barrier_old)(cl_command_buffer_khr, cl_command_queue, cl_uint,
                                 const cl_sync_point_khr *, cl_sync_point_khr *,
                                 cl_mutable_command_khr *);
/* 0.9.5 and later: a properties list after the queue */
typedef cl_int (*fn_copy_new)(cl_command_buffer_khr, cl_command_queue, const cl_properties *,
                              cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
                              const cl_sync_point_khr *, cl_sync_point_khr *,
                              cl_mutable_command_khr *);
typedef cl_int (*fn_fill_new)(cl_command_buffer_khr, cl_command_queue, const cl_properties *,
                              cl_mem, const void *, size_t, size_t, size_t, cl_uint,
                              const cl_sync_point_khr *, cl_sync_point_khr *,
                              cl_mutable_command_khr *);
typedef cl_int (*fn_barrier_new)(cl_command_buffer_khr, cl_command_queue, const cl_properties *,
                                 cl_uint, const cl_sync_point_khr *, cl_sync_point_khr *,
                                 cl_mutable_command_khr *);
typedef void *(*fn_ext_address)(cl_platform_id, const char *);

/* The entry points of one platform. */
typedef struct clg_api {
    fn_create create;
    fn_cb finalize, release;
    fn_enqueue enqueue;
    fn_ndrange ndrange;
    void *copy, *fill, *barrier; /* fn_*_old or fn_*_new by new_api */
} clg_api;

typedef struct clg_node {
    struct clg_node *next;
    cl_sync_point_khr sp;
    cl_kernel kernel; /* a kernel node's own clone, or NULL */
} clg_node;

typedef cl_kernel (*fn_clone)(cl_kernel, cl_int *);

typedef struct clg {
    clg_api api;
    int new_api;      /* 0.9.5 prototypes */
    int simultaneous; /* may be enqueued while pending */
    cl_command_buffer_khr cb;
    cl_command_queue queue; /* retained */
    pthread_mutex_t lock;   /* last */
    cl_event last;          /* the last enqueue (retained), or NULL */
    clg_node *nodes;
    fn_clone clone; /* clCloneKernel */
} clg;

#define CLG_VERSION(major, minor, patch) \
    (((cl_uint)(major) << 22) | ((cl_uint)(minor) << 12) | (cl_uint)(patch))

/* The extension's version on the device: 0 if it lacks it; 0.9.0 if the
 * device cannot say (OpenCL below 3.0). */
static cl_uint clg_version(cl_device_id dev, const char *extensions) {
    if (!extensions || !strstr(extensions, "cl_khr_command_buffer"))
        return 0;
    size_t bytes = 0;
    if (kiln__cl.clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, NULL, &bytes) !=
            CL_SUCCESS ||
        bytes == 0)
        return CLG_VERSION(0, 9, 0);
    cl_name_version *v = kiln__malloc(bytes);
    cl_uint found = CLG_VERSION(0, 9, 0);
    if (v && kiln__cl.clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS_WITH_VERSION, bytes, v, NULL) ==
                 CL_SUCCESS) {
        for (size_t i = 0; i < bytes / sizeof *v; i++)
            if (strcmp(v[i].name, "cl_khr_command_buffer") == 0)
                found = v[i].version;
    }
    free(v);
    return found;
}

static kiln_status clg_create(void *context, const kiln__bdevice *device, void *queue, void **out) {
    (void)context;
    *out = NULL;
    cl_device_id dev = (cl_device_id)device->handle;
    cl_uint version = clg_version(dev, device->extensions);
    if (!version)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "%s has no cl_khr_command_buffer",
                               device->info.id);
    fn_ext_address ext = NULL;
    void *sym = kiln__ocl_symbol("clGetExtensionFunctionAddressForPlatform");
    memcpy(&ext, &sym, sizeof sym);
    if (!ext || !device->platform)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "the OpenCL loader lacks clGetExtensionFunctionAddressForPlatform");
    clg_api api;
    memset(&api, 0, sizeof api);
    cl_platform_id p = (cl_platform_id)device->platform;
#define CLG_GET(field, name)              \
    do {                                  \
        void *f = ext(p, name);           \
        memcpy(&api.field, &f, sizeof f); \
    } while (0)
    CLG_GET(create, "clCreateCommandBufferKHR");
    CLG_GET(finalize, "clFinalizeCommandBufferKHR");
    CLG_GET(release, "clReleaseCommandBufferKHR");
    CLG_GET(enqueue, "clEnqueueCommandBufferKHR");
    CLG_GET(ndrange, "clCommandNDRangeKernelKHR");
    api.copy = ext(p, "clCommandCopyBufferKHR");
    api.fill = ext(p, "clCommandFillBufferKHR");
    api.barrier = ext(p, "clCommandBarrierWithWaitListKHR");
#undef CLG_GET
    if (!api.create || !api.finalize || !api.release || !api.enqueue || !api.ndrange || !api.copy ||
        !api.fill || !api.barrier)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "the driver lists cl_khr_command_buffer but lacks its functions");
    /* the queue must have the properties the device requires, and be in
     * order unless command buffers may be out of order */
    cl_command_queue_properties have = 0, need = 0;
    cl_device_command_buffer_capabilities_khr caps = 0;
    kiln__cl.clGetCommandQueueInfo((cl_command_queue)queue, CL_QUEUE_PROPERTIES, sizeof have, &have,
                                   NULL);
    kiln__cl.clGetDeviceInfo(dev, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR,
                             sizeof need, &need, NULL);
    kiln__cl.clGetDeviceInfo(dev, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof caps, &caps,
                             NULL);
    if ((have & need) != need || ((have & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) &&
                                  !(caps & CL_COMMAND_BUFFER_CAPABILITY_OUT_OF_ORDER_KHR)))
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "the recording's queue cannot hold a command buffer");
    clg *g = kiln__calloc(1, sizeof *g);
    if (!g)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory");
    g->api = api;
    void *cs = kiln__ocl_symbol("clCloneKernel");
    memcpy(&g->clone, &cs, sizeof cs);
    g->new_api = version >= CLG_VERSION(0, 9, 5);
    g->simultaneous = (caps & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) != 0;
    cl_command_buffer_properties_khr props[] = { CL_COMMAND_BUFFER_FLAGS_KHR,
                                                 CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0 };
    cl_int err = CL_SUCCESS;
    cl_command_queue q = (cl_command_queue)queue;
    g->cb = api.create(1, &q, g->simultaneous ? props : NULL, &err);
    if (!g->cb || err != CL_SUCCESS) {
        free(g);
        return kiln__ocl_fail(err ? err : CL_INVALID_OPERATION, "clCreateCommandBufferKHR");
    }
    kiln__cl.clRetainCommandQueue(q);
    g->queue = q;
    pthread_mutex_init(&g->lock, NULL);
    *out = g;
    return KILN_OK;
}

/* deps -> sync points (storage of KILN__CLG_STACK, or allocated) */
#define CLG_STACK 16
static cl_sync_point_khr *clg_syncs(size_t num_deps, void *const *deps, cl_sync_point_khr *stack) {
    cl_sync_point_khr *s = num_deps > CLG_STACK ? kiln__malloc(num_deps * sizeof *s) : stack;
    for (size_t i = 0; s && i < num_deps; i++)
        s[i] = ((clg_node *)deps[i])->sp;
    return s;
}

static kiln_status clg_node_add(clg *g, clg_node *n, void **node) {
    n->next = g->nodes;
    g->nodes = n;
    *node = n;
    return KILN_OK;
}

/* A node being recorded and its dependencies' sync points (sl: NULL for
 * none, as the extension asks); not to be copied (s may point into stack). */
typedef struct clg_rec {
    clg_node *n;
    cl_sync_point_khr stack[CLG_STACK];
    cl_sync_point_khr *s;
    cl_uint ns;
    const cl_sync_point_khr *sl;
} clg_rec;

static kiln_status clg_rec_begin(clg_rec *r, size_t num_deps, void *const *deps) {
    r->n = kiln__calloc(1, sizeof *r->n);
    r->s = r->n ? clg_syncs(num_deps, deps, r->stack) : NULL;
    if (!r->n || !r->s) {
        free(r->n);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory");
    }
    r->ns = (cl_uint)num_deps;
    r->sl = r->ns ? r->s : NULL;
    return KILN_OK;
}

/* Frees the sync points; adds the node, or frees it and returns st. */
static kiln_status clg_rec_end(clg *g, clg_rec *r, kiln_status st, void **node) {
    if (r->s != r->stack)
        free(r->s);
    if (st != KILN_OK) {
        free(r->n);
        return st;
    }
    return clg_node_add(g, r->n, node);
}

static kiln_status clg_status(cl_int err, const char *call) {
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, call);
}

/* Each kernel node records a clone of the kernel, made with the node's
 * arguments set: PoCL 3.1's command buffers (0.9.0) run every node of one
 * kernel with the arguments the kernel has at execution, not those it had
 * when recorded (tests/test_graph.c, test_repeat, found it), and a clone
 * is never given other arguments afterwards. */
typedef struct ndr {
    clg *g;
    clg_node *n;
    unsigned dims;
    const size_t *global, *local;
    cl_uint num;
    const cl_sync_point_khr *syncs;
    cl_sync_point_khr *sp;
} ndr;

static cl_int clg_ndrange(cl_kernel k, void *user) {
    ndr *a = user;
    cl_int err = CL_SUCCESS;
    a->n->kernel = a->g->clone(k, &err);
    if (!a->n->kernel || err != CL_SUCCESS)
        return err ? err : CL_OUT_OF_HOST_MEMORY;
    return a->g->api.ndrange(a->g->cb, NULL, NULL, a->n->kernel, a->dims, NULL, a->global, a->local,
                             a->num, a->syncs, a->sp, NULL);
}

static kiln_status clg_add_kernel(void *graph, void *kernel, unsigned dims, const size_t *global,
                                  const size_t *local, size_t num_args, const kiln__barg *args,
                                  size_t num_deps, void *const *deps, void **node) {
    clg *g = graph;
    *node = NULL;
    if (!g->clone)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "the OpenCL loader lacks clCloneKernel (OpenCL 2.1)");
    clg_rec r;
    kiln_status st = clg_rec_begin(&r, num_deps, deps);
    if (st != KILN_OK)
        return st;
    ndr a = { g, r.n, dims, global, local, r.ns, r.sl, &r.n->sp };
    cl_int err = CL_SUCCESS;
    st = kiln__ocl_kernel_with_args(kernel, num_args, args, clg_ndrange, &a, &err);
    if (st == KILN_OK)
        st = clg_status(err, "clCommandNDRangeKernelKHR");
    if (st != KILN_OK && r.n->kernel)
        kiln__cl.clReleaseKernel(r.n->kernel);
    return clg_rec_end(g, &r, st, node);
}

/* Records one command (cmd, on the sync points of r) as a node. */
typedef cl_int (*clg_cmd)(clg *g, const void *args, const clg_rec *r);

static kiln_status clg_add(void *graph, size_t num_deps, void *const *deps, void **node,
                           clg_cmd cmd, const void *args, const char *call) {
    clg *g = graph;
    *node = NULL;
    clg_rec r;
    kiln_status st = clg_rec_begin(&r, num_deps, deps);
    if (st != KILN_OK)
        return st;
    return clg_rec_end(g, &r, clg_status(cmd(g, args, &r), call), node);
}

/* A copy's or a fill's arguments (a fill writes pattern into dst). */
typedef struct clg_xfer {
    cl_mem src, dst;
    const void *pattern;
    size_t pattern_size, src_offset, dst_offset, size;
} clg_xfer;

static cl_int clg_copy_cmd(clg *g, const void *args, const clg_rec *r) {
    const clg_xfer *a = args;
    if (g->new_api) {
        fn_copy_new f;
        memcpy(&f, &g->api.copy, sizeof f);
        return f(g->cb, NULL, NULL, a->src, a->dst, a->src_offset, a->dst_offset, a->size, r->ns,
                 r->sl, &r->n->sp, NULL);
    }
    fn_copy_old f;
    memcpy(&f, &g->api.copy, sizeof f);
    return f(g->cb, NULL, a->src, a->dst, a->src_offset, a->dst_offset, a->size, r->ns, r->sl,
             &r->n->sp, NULL);
}

static kiln_status clg_add_copy(void *graph, void *src, size_t src_offset, void *dst,
                                size_t dst_offset, size_t size, size_t num_deps, void *const *deps,
                                void **node) {
    clg_xfer a = {
        .src = src, .dst = dst, .src_offset = src_offset, .dst_offset = dst_offset, .size = size
    };
    return clg_add(graph, num_deps, deps, node, clg_copy_cmd, &a, "clCommandCopyBufferKHR");
}

static cl_int clg_fill_cmd(clg *g, const void *args, const clg_rec *r) {
    const clg_xfer *a = args;
    if (g->new_api) {
        fn_fill_new f;
        memcpy(&f, &g->api.fill, sizeof f);
        return f(g->cb, NULL, NULL, a->dst, a->pattern, a->pattern_size, a->dst_offset, a->size,
                 r->ns, r->sl, &r->n->sp, NULL);
    }
    fn_fill_old f;
    memcpy(&f, &g->api.fill, sizeof f);
    return f(g->cb, NULL, a->dst, a->pattern, a->pattern_size, a->dst_offset, a->size, r->ns, r->sl,
             &r->n->sp, NULL);
}

static kiln_status clg_add_fill(void *graph, void *buffer, const void *pattern, size_t pattern_size,
                                size_t offset, size_t size, size_t num_deps, void *const *deps,
                                void **node) {
    clg_xfer a = { .dst = buffer,
                   .pattern = pattern,
                   .pattern_size = pattern_size,
                   .dst_offset = offset,
                   .size = size };
    return clg_add(graph, num_deps, deps, node, clg_fill_cmd, &a, "clCommandFillBufferKHR");
}

static cl_int clg_barrier_cmd(clg *g, const void *args, const clg_rec *r) {
    (void)args;
    if (g->new_api) {
        fn_barrier_new f;
        memcpy(&f, &g->api.barrier, sizeof f);
        return f(g->cb, NULL, NULL, r->ns, r->sl, &r->n->sp, NULL);
    }
    fn_barrier_old f;
    memcpy(&f, &g->api.barrier, sizeof f);
    return f(g->cb, NULL, r->ns, r->sl, &r->n->sp, NULL);
}

static kiln_status clg_add_empty(void *graph, size_t num_deps, void *const *deps, void **node) {
    return clg_add(graph, num_deps, deps, node, clg_barrier_cmd, NULL,
                   "clCommandBarrierWithWaitListKHR");
}

static kiln_status clg_instantiate(void *graph) {
    clg *g = graph;
    return clg_status(g->api.finalize(g->cb), "clFinalizeCommandBufferKHR");
}

static kiln_status clg_set_kernel_args(void *graph, void *node, size_t num_args,
                                       const kiln__barg *args) {
    (void)graph;
    (void)node;
    (void)num_args;
    (void)args;
    return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                           "a recorded command buffer's kernel arguments are fixed (no "
                           "cl_khr_command_buffer_mutable_dispatch)");
}

static kiln_status clg_launch(void *queue, void *graph, size_t num_wait, void *const *wait,
                              void **out_event) {
    clg *g = graph;
    if ((cl_command_queue)queue != g->queue)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                               "a command buffer runs on the queue it was recorded for");
    pthread_mutex_lock(&g->lock);
    if (g->last && !g->simultaneous) {
        cl_int state = CL_QUEUED;
        kiln__cl.clGetEventInfo(g->last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state,
                                NULL);
        if (state > CL_COMPLETE) { /* still pending (a failure is < 0) */
            pthread_mutex_unlock(&g->lock);
            return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                                   "the command buffer is still pending");
        }
    }
    cl_event ev = NULL;
    cl_int err = g->api.enqueue(0, NULL, g->cb, KILN__OCL_WAIT(num_wait, wait), &ev);
    if (err == CL_SUCCESS) {
        if (g->last)
            kiln__cl.clReleaseEvent(g->last);
        g->last = ev;
        if (out_event) {
            kiln__cl.clRetainEvent(ev);
            *out_event = ev;
        }
    }
    pthread_mutex_unlock(&g->lock);
    if (err == CL_INVALID_OPERATION) /* pending after all (another thread) */
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "clEnqueueCommandBufferKHR refused");
    return err == CL_SUCCESS ? KILN_OK : kiln__ocl_fail(err, "clEnqueueCommandBufferKHR");
}

static void clg_release(void *graph) {
    clg *g = graph;
    if (!g)
        return;
    if (g->last)
        kiln__cl.clReleaseEvent(g->last);
    g->api.release(g->cb);
    kiln__cl.clReleaseCommandQueue(g->queue);
    while (g->nodes) {
        clg_node *n = g->nodes;
        g->nodes = n->next;
        if (n->kernel)
            kiln__cl.clReleaseKernel(n->kernel);
        free(n);
    }
    pthread_mutex_destroy(&g->lock);
    free(g);
}

/* Off by default: on PoCL 3.1, the one implementation at hand, a
 * command buffer of 1000 tiny kernels ran 7x slower than the launches one
 * by one (bench/README.md, "Command graphs"); KILN_GRAPH_NATIVE=1 turns it
 * on (test_graph_cl runs test_graph so). */
const struct kiln__backend_graph kiln__ocl_graph_table = {
    .default_on = 0,
    .create = clg_create,
    .add_kernel = clg_add_kernel,
    .add_copy = clg_add_copy,
    .add_fill = clg_add_fill,
    .add_empty = clg_add_empty,
    .instantiate = clg_instantiate,
    .set_kernel_args = clg_set_kernel_args,
    .launch = clg_launch,
    .release = clg_release,
};
