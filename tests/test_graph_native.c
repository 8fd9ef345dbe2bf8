/* The core's side of native command graphs (src/core/graph.c's
 * kiln__native_build and the native launch/update paths), on the CI
 * machine: a stand-in graph table (kiln__graph_test_table) keeps the nodes
 * it is given and, at launch, runs them in order through the OpenCL
 * backend's own table. Checked: which graphs go native, that a native
 * launch gives the replay's results bit for bit, that set_arg reaches the
 * native node, that a replaced buffer or a refused update builds the graph
 * again, that a refused node kind falls back to the replay, and
 * KILN_GRAPH_NATIVE=0. The real tables (CUDA's) need a GPU. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "testing/kiln_test_internal.h"

typedef struct fnode {
    int kind; /* 1 kernel, 2 copy, 3 fill, 4 empty */
    void *kernel;
    unsigned dims;
    size_t global[3], local[3];
    int has_local;
    size_t num_args;
    kiln__barg args[8];
    unsigned char bytes[8][8];
    void *buf[2];
    size_t off[2], size;
    unsigned char pattern[128];
    size_t pattern_size;
    size_t index;
} fnode;

typedef struct fgraph {
    fnode nodes[64];
    size_t n;
    int instantiated;
} fgraph;

static int built, updates, refuse_fill8, refuse_update;

static kiln_status f_create(void *context, const kiln__bdevice *device, void *queue, void **graph) {
    (void)context;
    (void)device;
    (void)queue;
    *graph = calloc(1, sizeof(fgraph));
    built++;
    return *graph ? KILN_OK : KILN_ERROR_OUT_OF_HOST_MEMORY;
}

/* deps must be nodes made before (the core's topological order) */
static int deps_ok(fgraph *g, size_t num_deps, void *const *deps) {
    for (size_t i = 0; i < num_deps; i++) {
        fnode *d = deps[i];
        if (d < g->nodes || d >= g->nodes + g->n)
            return 0;
    }
    return 1;
}

static fnode *f_new(fgraph *g, size_t num_deps, void *const *deps) {
    if (g->n == 64 || !deps_ok(g, num_deps, deps))
        return NULL;
    fnode *n = &g->nodes[g->n];
    memset(n, 0, sizeof *n);
    n->index = g->n++;
    return n;
}

static void set_args(fnode *n, size_t num_args, const kiln__barg *args) {
    n->num_args = num_args;
    for (size_t i = 0; i < num_args && i < 8; i++) {
        n->args[i] = args[i];
        if (args[i].kind == KILN_ARG_SCALAR) {
            memcpy(n->bytes[i], args[i].bytes, args[i].size);
            n->args[i].bytes = n->bytes[i];
        }
    }
}

static kiln_status f_add_kernel(void *graph, void *kernel, unsigned dims, const size_t *global,
                                const size_t *local, size_t num_args, const kiln__barg *args,
                                size_t num_deps, void *const *deps, void **node) {
    fnode *n = f_new(graph, num_deps, deps);
    if (!n || num_args > 8)
        return KILN_ERROR_INTERNAL;
    n->kind = 1;
    n->kernel = kernel;
    n->dims = dims;
    for (unsigned d = 0; d < dims; d++) {
        n->global[d] = global[d];
        n->local[d] = local ? local[d] : 0;
    }
    n->has_local = local != NULL;
    set_args(n, num_args, args);
    *node = n;
    return KILN_OK;
}

static kiln_status f_add_copy(void *graph, void *src, size_t so, void *dst, size_t doff,
                              size_t size, size_t num_deps, void *const *deps, void **node) {
    fnode *n = f_new(graph, num_deps, deps);
    if (!n)
        return KILN_ERROR_INTERNAL;
    n->kind = 2;
    n->buf[0] = src;
    n->buf[1] = dst;
    n->off[0] = so;
    n->off[1] = doff;
    n->size = size;
    *node = n;
    return KILN_OK;
}

static kiln_status f_add_fill(void *graph, void *buffer, const void *pattern, size_t psize,
                              size_t offset, size_t size, size_t num_deps, void *const *deps,
                              void **node) {
    if (refuse_fill8 && psize == 8)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "stand-in: no 8-byte fills");
    fnode *n = f_new(graph, num_deps, deps);
    if (!n)
        return KILN_ERROR_INTERNAL;
    n->kind = 3;
    n->buf[0] = buffer;
    n->off[0] = offset;
    n->size = size;
    memcpy(n->pattern, pattern, psize);
    n->pattern_size = psize;
    *node = n;
    return KILN_OK;
}

static kiln_status f_add_empty(void *graph, size_t num_deps, void *const *deps, void **node) {
    fnode *n = f_new(graph, num_deps, deps);
    if (!n)
        return KILN_ERROR_INTERNAL;
    n->kind = 4;
    *node = n;
    return KILN_OK;
}

static kiln_status f_instantiate(void *graph) {
    ((fgraph *)graph)->instantiated = 1;
    return KILN_OK;
}

static kiln_status f_set_kernel_args(void *graph, void *node, size_t num_args,
                                     const kiln__barg *args) {
    (void)graph;
    if (refuse_update)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "stand-in: no updates");
    fnode *n = node;
    if (n->kind != 1)
        return KILN_ERROR_INTERNAL;
    set_args(n, num_args, args);
    updates++;
    return KILN_OK;
}

static kiln_status f_launch(void *queue, void *graph, size_t num_wait, void *const *wait,
                            void **out) {
    const kiln__backend *be = &kiln__backend_opencl;
    fgraph *g = graph;
    if (!g->instantiated)
        return KILN_ERROR_INTERNAL;
    kiln_status st = num_wait ? be->queue_marker(queue, 1, num_wait, wait, NULL) : KILN_OK;
    for (size_t i = 0; i < g->n && st == KILN_OK; i++) {
        fnode *n = &g->nodes[i];
        switch (n->kind) {
        case 1:
            st = be->kernel_launch(queue, n->kernel, n->dims, n->global,
                                   n->has_local ? n->local : NULL, n->num_args, n->args, 0, NULL,
                                   NULL);
            break;
        case 2:
            st = be->buffer_copy(queue, n->buf[0], n->off[0], n->buf[1], n->off[1], n->size, 0,
                                 NULL, NULL);
            break;
        case 3:
            st = be->buffer_fill(queue, n->buf[0], n->pattern, n->pattern_size, n->off[0], n->size,
                                 0, NULL, NULL);
            break;
        default:
            break;
        }
    }
    if (st == KILN_OK)
        st = be->queue_marker(queue, 0, 0, NULL, out);
    return st;
}

static void f_release(void *graph) {
    free(graph);
}

static const struct kiln__backend_graph fake = {
    .default_on = 1,
    .create = f_create,
    .add_kernel = f_add_kernel,
    .add_copy = f_add_copy,
    .add_fill = f_add_fill,
    .add_empty = f_add_empty,
    .instantiate = f_instantiate,
    .set_kernel_args = f_set_kernel_args,
    .launch = f_launch,
    .release = f_release,
};

static const char *src =
    "KILN_KERNEL void axpy(float a, KILN_GLOBAL const float *x, KILN_GLOBAL float *y, uint n) {\n"
    "    size_t i = kiln_global_id(0);\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

typedef struct fix {
    kiln_queue *q;
    kiln_context *ctx;
    kiln_kernel *k;
    size_t n;
} fix;

/* y <- fill (4 or 8 bytes of pattern), y = a*x + y, z <- y; the axpy's
 * node in *node when recording. */
static void seq(fix *f, kiln_buffer *x, kiln_buffer *y, kiln_buffer *z, float a, int wide,
                size_t *node) {
    size_t bytes = f->n * 4;
    float quarter[2] = { 0.25f, 0.5f };
    CHECK_OK(kiln_buffer_fill(f->q, y, quarter, wide ? 8 : 4, 0, bytes, 0, NULL, NULL));
    kiln_arg args[] = { KILN_ARG_F32(a), KILN_ARG_BUF(x), KILN_ARG_BUF(y),
                        KILN_ARG_U32((uint32_t)f->n) };
    CHECK_OK(kiln_kernel_launch(f->q, f->k, 1, &f->n, NULL, 4, args, 0, NULL, NULL));
    if (node)
        CHECK_OK(kiln_graph_last_node(f->q, node));
    CHECK_OK(kiln_queue_marker(f->q, 0, NULL, NULL));
    CHECK_OK(kiln_buffer_copy(f->q, y, 0, z, 0, bytes, 0, NULL, NULL));
}

static int equal(fix *f, kiln_buffer *a, kiln_buffer *b) {
    size_t bytes = f->n * 4;
    float *ha = malloc(bytes), *hb = malloc(bytes);
    int ok = kiln_buffer_read(f->q, a, 0, bytes, ha) == KILN_OK &&
             kiln_buffer_read(f->q, b, 0, bytes, hb) == KILN_OK && memcmp(ha, hb, bytes) == 0;
    KT_FREE(ha, hb);
    return ok;
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    if (info.backend != KILN_BACKEND_OPENCL)
        KT_SKIP("the stand-in graph table runs nodes through the OpenCL backend");
    fix f = { .q = q, .ctx = kiln_queue_context(q), .n = 1000 };
    kiln_program *prog;
    if (!KT_BUILD(f.ctx, src, NULL, &prog, "axpy", &f.k))
        return;
    size_t bytes = f.n * 4;
    float *hx = malloc(bytes);
    for (size_t i = 0; i < f.n; i++)
        hx[i] = (float)(kt_rand_unit() * 10 - 5);
    kiln_buffer *x, *y, *z, *y2, *dy, *dz;
    CHECK_OK(kiln_buffer_create(f.ctx, bytes, 0, hx, &x));
    kiln_buffer **bs[] = { &y, &z, &y2, &dy, &dz };
    for (int i = 0; i < 5; i++)
        CHECK_OK(kiln_buffer_create(f.ctx, bytes, 0, NULL, bs[i]));
    kiln__graph_test_table = &fake;

    for (int wide = 0; wide < 2; wide++) {
        refuse_fill8 = 1;
        built = updates = 0;
        size_t node = 0;
        CHECK_OK(kiln_graph_record_begin(q));
        seq(&f, x, y, z, 1.5f, wide, &node);
        kiln_graph *g;
        CHECK_OK(kiln_graph_record_end(q, &g));
        kiln_graph_exec *e;
        CHECK_OK(kiln_graph_instantiate(g, &e));
        /* 8-byte fills refused by the stand-in: the replay instead */
        CHECK_MSG(kiln_graph_exec_impl(e) ==
                      (wide ? KILN_GRAPH_IMPL_REPLAY : KILN_GRAPH_IMPL_NATIVE),
                  "wide %d: impl %d", wide, (int)kiln_graph_exec_impl(e));
        CHECK(built == 1);
        for (int round = 0; round < 4; round++) {
            float a = round < 1 ? 1.5f : round < 2 ? -0.75f : 3.0f;
            if (round == 1 || round == 2) {
                kiln_arg na = KILN_ARG_F32(a);
                refuse_update = round == 2;
                CHECK_OK(kiln_graph_exec_set_arg(e, node, 0, &na));
                refuse_update = 0;
            }
            if (round == 3)
                CHECK_OK(kiln_graph_exec_replace_buffer(e, z, y2));
            CHECK_OK(kiln_graph_exec_launch(q, e, 0, NULL, NULL));
            seq(&f, x, dy, dz, a, wide, NULL);
            CHECK_OK(kiln_queue_finish(q));
            CHECK_MSG(equal(&f, round == 3 ? y2 : z, dz), "wide %d round %d: result", wide, round);
        }
        if (!wide) {
            /* an update, a refused update (built again at the next launch),
             * a replacement (built again) */
            CHECK_MSG(updates == 1, "updates %d", updates);
            CHECK_MSG(built == 3, "built %d", built);
            CHECK(kiln_graph_exec_impl(e) == KILN_GRAPH_IMPL_NATIVE);
        } else {
            CHECK_MSG(built == 1 && updates == 0, "built %d updates %d", built, updates);
        }
        KT_RELEASE(e, g);
    }

    /* a host write in the graph, and KILN_GRAPH_NATIVE=0: the replay */
    built = 0;
    CHECK_OK(kiln_graph_record_begin(q));
    CHECK_OK(kiln_buffer_write_async(q, y, 0, bytes, hx, 0, NULL, NULL));
    kiln_graph *g;
    CHECK_OK(kiln_graph_record_end(q, &g));
    kiln_graph_exec *e;
    CHECK_OK(kiln_graph_instantiate(g, &e));
    CHECK(kiln_graph_exec_impl(e) == KILN_GRAPH_IMPL_REPLAY && built == 0);
    KT_RELEASE(e, g);
    setenv("KILN_GRAPH_NATIVE", "0", 1);
    CHECK_OK(kiln_graph_record_begin(q));
    seq(&f, x, y, z, 1.0f, 0, NULL);
    CHECK_OK(kiln_graph_record_end(q, &g));
    CHECK_OK(kiln_graph_instantiate(g, &e));
    CHECK(kiln_graph_exec_impl(e) == KILN_GRAPH_IMPL_REPLAY && built == 0);
    KT_RELEASE(e, g);
    unsetenv("KILN_GRAPH_NATIVE");
    kiln__graph_test_table = NULL;

    kiln_buffer_release(x);
    for (int i = 0; i < 5; i++)
        kiln_buffer_release(*bs[i]);
    KT_RELEASE(f.k, prog);
    free(hx);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
