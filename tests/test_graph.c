/* Command graphs (kiln/graph.h): a replay gives bit for bit what the same
 * calls give when made directly, on random inputs at awkward sizes; new
 * scalars (kiln_graph_exec_set_arg) and new buffers
 * (kiln_graph_exec_replace_buffer) without recording again; fork/join over
 * two queues, replayed on an in-order and an out-of-order queue; the calls
 * that cannot be recorded are refused and spoil the recording; bad input;
 * scratch buffers stay with the graph (pool statistics). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char *src =
    "KILN_KERNEL void axpy(float a, KILN_GLOBAL const float *x, KILN_GLOBAL float *y, uint n) {\n"
    "    size_t i = kiln_global_id(0);\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n"
    "KILN_KERNEL void sqmb(KILN_GLOBAL float *z, float b, uint n) {\n"
    "    size_t i = kiln_global_id(0);\n"
    "    if (i < n) z[i] = z[i] * z[i] - b;\n"
    "}\n";

static void rand_floats(float *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(kt_rand_unit() * 200.0 - 100.0);
}

typedef struct fix {
    kiln_queue *q;
    kiln_context *ctx;
    kiln_program *prog;
    kiln_kernel *axpy, *sqmb;
} fix;

/* The sequence, on (x, y, z) of n floats: x <- hx (write), y <- fill 0.25,
 * y = a*x + y, z <- y (copy), z = z*z - b, hz <- z (read). Recorded or
 * run, as the queue decides. *axpy_node gets the launch's node when
 * recording. */
static kiln_status sequence(fix *f, kiln_buffer *x, kiln_buffer *y, kiln_buffer *z, const float *hx,
                            float *hz, size_t n, float a, float b, size_t *axpy_node) {
    size_t bytes = n * sizeof(float);
    float quarter = 0.25f;
    kiln_status st = kiln_buffer_write_async(f->q, x, 0, bytes, hx, 0, NULL, NULL);
    if (st == KILN_OK)
        st = kiln_buffer_fill(f->q, y, &quarter, sizeof quarter, 0, bytes, 0, NULL, NULL);
    kiln_arg a1[] = { KILN_ARG_F32(a), KILN_ARG_BUF(x), KILN_ARG_BUF(y),
                      KILN_ARG_U32((uint32_t)n) };
    size_t g = n;
    if (st == KILN_OK)
        st = kiln_kernel_launch(f->q, f->axpy, 1, &g, NULL, 4, a1, 0, NULL, NULL);
    if (st == KILN_OK && axpy_node && n)
        st = kiln_graph_last_node(f->q, axpy_node);
    if (st == KILN_OK)
        st = kiln_buffer_copy(f->q, y, 0, z, 0, bytes, 0, NULL, NULL);
    kiln_arg a2[] = { KILN_ARG_BUF(z), KILN_ARG_F32(b), KILN_ARG_U32((uint32_t)n) };
    if (st == KILN_OK)
        st = kiln_kernel_launch(f->q, f->sqmb, 1, &g, NULL, 3, a2, 0, NULL, NULL);
    if (st == KILN_OK)
        st = kiln_buffer_read_async(f->q, z, 0, bytes, hz, 0, NULL, NULL);
    return st;
}

static void count_cb(kiln_event *e, kiln_event_state s, void *user) {
    (void)e;
    if (s == KILN_EVENT_COMPLETE)
        atomic_fetch_add((atomic_int *)user, 1);
}

static void test_nodes(fix *f, size_t n) {
    size_t bytes = n * sizeof(float), nb = bytes ? bytes : 4;
    float *hx = malloc(nb), *hgot = malloc(nb);
    rand_floats(hx, n);
    kiln_buffer *x, *y, *z, *y2, *dx, *dy, *dz;
    CHECK_OK(kiln_buffer_create(f->ctx, nb, 0, NULL, &x));
    CHECK_OK(kiln_buffer_create(f->ctx, nb, 0, NULL, &y));
    CHECK_OK(kiln_buffer_create(f->ctx, nb, 0, NULL, &z));
    CHECK_OK(kiln_buffer_create(f->ctx, nb + 64, 0, NULL, &y2));
    CHECK_OK(kiln_buffer_create(f->ctx, nb, 0, NULL, &dx));
    CHECK_OK(kiln_buffer_create(f->ctx, nb, 0, NULL, &dy));
    CHECK_OK(kiln_buffer_create(f->ctx, nb, 0, NULL, &dz));

    /* record */
    size_t axpy_node = (size_t)-1;
    CHECK_OK(kiln_graph_record_begin(f->q));
    CHECK(kiln_graph_recording(f->q) == 1);
    CHECK_OK(sequence(f, x, y, z, hx, hgot, n, 1.5f, 3.0f, &axpy_node));
    kiln_graph *graph = NULL;
    CHECK_OK(kiln_graph_record_end(f->q, &graph));
    CHECK(kiln_graph_recording(f->q) == 0);
    size_t nodes = kiln_graph_num_nodes(graph);
    /* n = 0: every command has nothing to do and records a marker */
    CHECK_MSG(nodes == 6, "n %zu: %zu nodes", n, nodes);
    kiln_graph_node_kind kind = 0;
    if (n) {
        CHECK_OK(kiln_graph_get_node_kind(graph, axpy_node, &kind));
        CHECK(kind == KILN_GRAPH_NODE_KERNEL);
        CHECK_OK(kiln_graph_get_node_kind(graph, 0, &kind));
        CHECK(kind == KILN_GRAPH_NODE_WRITE);
        CHECK_OK(kiln_graph_get_node_kind(graph, 5, &kind));
        CHECK(kind == KILN_GRAPH_NODE_READ);
    }
    CHECK_STATUS(kiln_graph_get_node_kind(graph, 6, &kind), KILN_ERROR_OUT_OF_RANGE);
    /* nothing ran: hgot untouched by the recording */
    memset(hgot, 0x5a, nb);
    float keep = n ? hx[0] : 0;
    if (n)
        hx[0] = 1234.5f; /* the write's bytes were copied when recorded */

    kiln_graph_exec *exec = NULL;
    CHECK_OK(kiln_graph_instantiate(graph, &exec));
    kiln_graph_impl impl = kiln_graph_exec_impl(exec);
    CHECK(impl == KILN_GRAPH_IMPL_REPLAY || impl == KILN_GRAPH_IMPL_NATIVE);
    if (n)
        hx[0] = keep;
    for (int round = 0; round < 3; round++) {
        float a = round == 0 ? 1.5f : round == 1 ? -2.25f : 0.125f;
        if (round == 1 && n) {
            kiln_arg na = KILN_ARG_F32(a);
            CHECK_OK(kiln_graph_exec_set_arg(exec, axpy_node, 0, &na));
        }
        if (round == 2 && n) {
            kiln_arg na = KILN_ARG_F32(a);
            CHECK_OK(kiln_graph_exec_set_arg(exec, axpy_node, 0, &na));
            CHECK_OK(kiln_graph_exec_replace_buffer(exec, y, y2));
        }
        kiln_event *done = NULL;
        atomic_int called = 0;
        CHECK_OK(kiln_graph_exec_launch(f->q, exec, 0, NULL, &done));
        CHECK_OK(kiln_event_on_complete(done, count_cb, &called));
        CHECK_OK(kiln_event_wait(done));
        kiln_event_release(done);
        for (int spin = 0; spin < 2000 && atomic_load(&called) == 0; spin++)
            usleep(1000);
        CHECK_MSG(atomic_load(&called) == 1, "n %zu round %d: the launch's callback ran %d times",
                  n, round, atomic_load(&called));
        /* direct */
        float *dgot = malloc(nb);
        CHECK_OK(sequence(f, dx, dy, dz, hx, dgot, n, a, 3.0f, NULL));
        CHECK_OK(kiln_queue_finish(f->q));
        CHECK_MSG(memcmp(dgot, hgot, bytes) == 0, "n %zu round %d: replay differs from direct", n,
                  round);
        /* and the serial reference, for sanity */
        int near = 1;
        for (size_t i = 0; i < n; i++) {
            float yv = a * hx[i] + 0.25f;
            float zv = yv * yv - 3.0f;
            float tol = 1e-5f * (yv * yv + 2 * fabsf(a * hx[i]) * fabsf(yv) + 3);
            if (!(fabsf(dgot[i] - zv) <= tol))
                near = 0;
        }
        CHECK_MSG(near, "n %zu round %d: direct differs from the serial loop", n, round);
        if (round == 2 && n) {
            /* the replacement got y's values; y kept round 1's */
            float *h2 = malloc(nb);
            CHECK_OK(kiln_buffer_read(f->q, y2, 0, bytes, h2));
            float *hd = malloc(nb);
            CHECK_OK(kiln_buffer_read(f->q, dy, 0, bytes, hd));
            CHECK(memcmp(h2, hd, bytes) == 0);
            CHECK_OK(kiln_buffer_read(f->q, y, 0, bytes, h2));
            CHECK(memcmp(h2, hd, bytes) != 0);
            KT_FREE(h2, hd);
        }
        free(dgot);
    }
    /* undo the replacement */
    if (n)
        CHECK_OK(kiln_graph_exec_replace_buffer(exec, y, y));
    /* bad input */
    kiln_arg bad = KILN_ARG_I32(1);
    CHECK_STATUS(kiln_graph_exec_set_arg(exec, 0, 0, &bad), KILN_ERROR_INVALID_ARGUMENT);
    if (n) {
        CHECK_STATUS(kiln_graph_exec_set_arg(exec, axpy_node, 0, &bad), KILN_ERROR_KERNEL_ARGS);
        CHECK_STATUS(kiln_graph_exec_set_arg(exec, axpy_node, 9, &bad), KILN_ERROR_OUT_OF_RANGE);
        kiln_arg buf = KILN_ARG_BUF(y);
        CHECK_STATUS(kiln_graph_exec_set_arg(exec, axpy_node, 0, &buf), KILN_ERROR_KERNEL_ARGS);
        CHECK_STATUS(kiln_graph_exec_replace_buffer(exec, y, dx), KILN_OK);
        CHECK_STATUS(kiln_graph_exec_replace_buffer(exec, y2, y2), KILN_ERROR_INVALID_ARGUMENT);
    }
    CHECK_STATUS(kiln_graph_exec_set_arg(exec, 99, 0, &bad), KILN_ERROR_OUT_OF_RANGE);
    kiln_buffer *small = NULL;
    CHECK_OK(kiln_buffer_create(f->ctx, 2, 0, NULL, &small));
    CHECK_STATUS(kiln_graph_exec_replace_buffer(exec, x, small), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_graph_exec_replace_buffer(exec, NULL, small), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_graph_exec_launch(f->q, NULL, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    kiln_buffer_release(small);
    /* a launch then the release at once: the release waits for it */
    CHECK_OK(kiln_graph_exec_launch(f->q, exec, 0, NULL, NULL));
    KT_RELEASE(exec, graph);
    CHECK_OK(kiln_queue_finish(f->q));

    kiln_buffer *all[] = { x, y, z, y2, dx, dy, dz };
    for (size_t i = 0; i < 7; i++)
        kiln_buffer_release(all[i]);
    KT_FREE(hx, hgot);
}

/* One kernel recorded several times with other arguments each time (a
 * command buffer must keep each launch's own). */
static void test_repeat(fix *f, size_t n) {
    size_t bytes = n * sizeof(float);
    float *hx = malloc(bytes), *hg = malloc(bytes), *hd = malloc(bytes);
    rand_floats(hx, n);
    kiln_buffer *x, *y[2], *d[2];
    CHECK_OK(kiln_buffer_create(f->ctx, bytes, 0, hx, &x));
    for (int i = 0; i < 2; i++) {
        CHECK_OK(kiln_buffer_create(f->ctx, bytes, 0, NULL, &y[i]));
        CHECK_OK(kiln_buffer_create(f->ctx, bytes, 0, NULL, &d[i]));
    }
    for (int rec = 0; rec < 2; rec++) {
        kiln_buffer **t = rec ? d : y;
        float zero = 0;
        if (!rec)
            CHECK_OK(kiln_graph_record_begin(f->q));
        for (int i = 0; i < 2; i++)
            CHECK_OK(kiln_buffer_fill(f->q, t[i], &zero, 4, 0, bytes, 0, NULL, NULL));
        for (int k = 0; k < 6; k++) {
            kiln_arg a[] = { KILN_ARG_F32(0.5f + (float)k), KILN_ARG_BUF(k % 3 ? x : t[0]),
                             KILN_ARG_BUF(t[(k / 2) % 2]), KILN_ARG_U32((uint32_t)(n - k)) };
            size_t g = n;
            CHECK_OK(kiln_kernel_launch(f->q, f->axpy, 1, &g, NULL, 4, a, 0, NULL, NULL));
        }
        if (!rec) {
            kiln_graph *graph;
            CHECK_OK(kiln_graph_record_end(f->q, &graph));
            kiln_graph_exec *exec;
            CHECK_OK(kiln_graph_instantiate(graph, &exec));
            /* test_graph_cl: PoCL's command buffers asked for, and taken */
            const char *env = getenv("KILN_GRAPH_NATIVE");
            if (env && strcmp(env, "1") == 0 &&
                strstr(kiln_device_extensions(kiln_queue_device(f->q)), "cl_khr_command_buffer"))
                CHECK_MSG(kiln_graph_exec_impl(exec) == KILN_GRAPH_IMPL_NATIVE,
                          "KILN_GRAPH_NATIVE=1 on a device with cl_khr_command_buffer: %s",
                          kiln_last_error_message());
            CHECK_OK(kiln_graph_exec_launch(f->q, exec, 0, NULL, NULL));
            KT_RELEASE(exec, graph);
        }
    }
    CHECK_OK(kiln_queue_finish(f->q));
    for (int i = 0; i < 2; i++) {
        CHECK_OK(kiln_buffer_read(f->q, y[i], 0, bytes, hg));
        CHECK_OK(kiln_buffer_read(f->q, d[i], 0, bytes, hd));
        CHECK_MSG(memcmp(hg, hd, bytes) == 0,
                  "n %zu: buffer %d after one kernel recorded six "
                  "times",
                  n, i);
        KT_RELEASE(y[i], d[i]);
    }
    kiln_buffer_release(x);
    KT_FREE(hx, hg, hd);
}

/* Generator and algorithm calls: elementwise, scan, reduction into a
 * device array, sort, random numbers, recorded and run directly. */
typedef struct alg {
    kiln_array *x, *t, *c, *r, *s, *u;
} alg;

static kiln_status algorithms(kiln_queue *q, alg *a, kiln_rng *rng) {
    kiln_status st =
        kiln_array_binary_scalar_out(q, KILN_OP_MUL, a->t, a->x, KILN_ARG_F64(3.0), 0, NULL, NULL);
    if (st == KILN_OK)
        st = kiln_array_cumsum_out(q, a->c, a->t, 0, 0, NULL, NULL);
    if (st == KILN_OK)
        st = kiln_array_reduce_async(q, KILN_REDUCE_SUM, a->c, a->r, NULL, 0, NULL, NULL);
    if (st == KILN_OK)
        st = kiln_array_sort_out(q, a->s, NULL, a->x, NULL, NULL, 0, NULL, NULL);
    if (st == KILN_OK)
        st = kiln_rng_uniform(q, rng, a->u, 0, NULL, NULL);
    return st;
}

static void alg_make(kiln_context *ctx, size_t n, alg *a) {
    size_t one = 1;
    CHECK_OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &a->x));
    CHECK_OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &a->t));
    CHECK_OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &a->c));
    CHECK_OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &one, &a->r));
    CHECK_OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &a->s));
    CHECK_OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &a->u));
}

static void alg_free(alg *a) {
    KT_RELEASE(a->x, a->t, a->c, a->r, a->s, a->u);
}

static int same(kiln_queue *q, kiln_array *a, kiln_array *b) {
    size_t bytes = kiln_array_size(a) * 4;
    if (!bytes)
        return 1;
    void *ha = malloc(bytes), *hb = malloc(bytes);
    int ok = kiln_array_read(q, a, ha) == KILN_OK && kiln_array_read(q, b, hb) == KILN_OK &&
             memcmp(ha, hb, bytes) == 0;
    KT_FREE(ha, hb);
    return ok;
}

static void test_algorithms(fix *f, size_t n) {
    alg g, d;
    alg_make(f->ctx, n, &g);
    alg_make(f->ctx, n, &d);
    size_t nb = n ? n * 4 : 4;
    float *h = malloc(nb), *h2 = malloc(nb);
    rand_floats(h, n);
    rand_floats(h2, n);
    if (n) {
        CHECK_OK(kiln_array_write(f->q, g.x, h));
        CHECK_OK(kiln_array_write(f->q, d.x, h));
    }
    kiln_rng *rng_g = NULL, *rng_d = NULL;
    CHECK_OK(kiln_rng_create(&KILN_RNG_DESC(.seed = 7), &rng_g));
    CHECK_OK(kiln_rng_create(&KILN_RNG_DESC(.seed = 7), &rng_d));

    kiln_pool_stats before, during, after;
    CHECK_OK(kiln_queue_finish(f->q));
    CHECK_OK(kiln_pool_get_stats(f->ctx, &before));
    CHECK_OK(kiln_graph_record_begin(f->q));
    kiln_status st = algorithms(f->q, &g, rng_g);
    CHECK_MSG(st == KILN_OK, "n %zu: recording the algorithms: %s", n, kiln_last_error_message());
    kiln_graph *graph = NULL;
    CHECK_OK(kiln_graph_record_end(f->q, &graph));
    kiln_graph_exec *exec = NULL;
    CHECK_OK(kiln_graph_instantiate(graph, &exec));
    CHECK_OK(kiln_pool_get_stats(f->ctx, &during));
    /* the same calls made directly on another queue right after recording:
     * no scratch (nor an event of a recorded command) is shared with them */
    kiln_queue *q2 = NULL;
    CHECK_OK(kiln_queue_create(f->ctx, kiln_queue_device(f->q), 0, &q2));
    CHECK_OK(kiln_rng_set_offset(rng_d, 0));
    CHECK_MSG(algorithms(q2, &d, rng_d) == KILN_OK, "n %zu: direct calls on another queue: %s", n,
              kiln_last_error_message());
    CHECK_OK(kiln_queue_finish(q2));
    kiln_queue_release(q2);
    for (int round = 0; round < 2; round++) {
        CHECK_OK(kiln_graph_exec_launch(f->q, exec, 0, NULL, NULL));
        /* the recorded rng call drew at the recorded offset: reset the
         * direct one to the same offset each round */
        CHECK_OK(kiln_rng_set_offset(rng_d, 0));
        CHECK_OK(algorithms(f->q, &d, rng_d));
        CHECK_OK(kiln_queue_finish(f->q));
        CHECK_MSG(same(f->q, g.t, d.t), "n %zu round %d: elementwise", n, round);
        CHECK_MSG(same(f->q, g.c, d.c), "n %zu round %d: cumsum", n, round);
        CHECK_MSG(same(f->q, g.r, d.r), "n %zu round %d: reduction", n, round);
        CHECK_MSG(same(f->q, g.s, d.s), "n %zu round %d: sort", n, round);
        CHECK_MSG(same(f->q, g.u, d.u), "n %zu round %d: uniform", n, round);
    }
    /* new input: a replacement for x's buffer */
    if (n) {
        kiln_array *x2 = NULL;
        CHECK_OK(kiln_array_empty(f->ctx, KILN_FLOAT32, 1, &n, &x2));
        CHECK_OK(kiln_array_write(f->q, x2, h2));
        CHECK_OK(kiln_array_write(f->q, d.x, h2));
        CHECK_OK(
            kiln_graph_exec_replace_buffer(exec, kiln_array_buffer(g.x), kiln_array_buffer(x2)));
        CHECK_OK(kiln_graph_exec_launch(f->q, exec, 0, NULL, NULL));
        CHECK_OK(kiln_rng_set_offset(rng_d, 0));
        CHECK_OK(algorithms(f->q, &d, rng_d));
        CHECK_OK(kiln_queue_finish(f->q));
        CHECK_MSG(same(f->q, g.s, d.s), "n %zu: sort of the replacement", n);
        CHECK_MSG(same(f->q, g.r, d.r), "n %zu: reduction of the replacement", n);
        /* and against a serial reference: the sorted input */
        float *hs = malloc(nb);
        CHECK_OK(kiln_array_read(f->q, g.s, hs));
        int sorted = 1;
        for (size_t i = 1; i < n; i++)
            sorted &= hs[i - 1] <= hs[i];
        CHECK_MSG(sorted, "n %zu: the replayed sort is not sorted", n);
        free(hs);
        kiln_array_release(x2);
    }
    CHECK_OK(kiln_queue_finish(f->q));
    kiln_pool_stats pre;
    CHECK_OK(kiln_pool_get_stats(f->ctx, &pre));
    KT_RELEASE(exec, graph);
    CHECK_OK(kiln_queue_finish(f->q));
    CHECK_OK(kiln_pool_get_stats(f->ctx, &after));
    /* scratch taken while recording is held by the graph (the pool's bytes
     * in use grew by it), and given back with it */
    size_t held = during.bytes_in_use - before.bytes_in_use;
    CHECK_MSG(during.bytes_in_use >= before.bytes_in_use, "in use %zu -> %zu", before.bytes_in_use,
              during.bytes_in_use);
    CHECK_MSG(pre.bytes_in_use - after.bytes_in_use >= held,
              "n %zu: the graph held %zu bytes, its release gave back %zu", n, held,
              pre.bytes_in_use - after.bytes_in_use);
    if (n > 1000)
        CHECK_MSG(held > 0, "n %zu: no scratch held by the graph", n);
    KT_RELEASE(rng_g, rng_d);
    alg_free(&g);
    alg_free(&d);
    KT_FREE(h, h2);
}

/* Fork/join: q records, q2 joins by waiting on q's event, q joins back by
 * waiting on q2's. Replayed on in-order and out-of-order queues. */
static void test_fork_join(fix *f, size_t n) {
    size_t nb = n * 4;
    kiln_queue *q2 = NULL, *ooo = NULL;
    CHECK_OK(kiln_queue_create(f->ctx, kiln_queue_device(f->q), 0, &q2));
    kiln_status so =
        kiln_queue_create(f->ctx, kiln_queue_device(f->q), KILN_QUEUE_OUT_OF_ORDER, &ooo);
    if (so != KILN_OK)
        ooo = NULL;
    float *ha = malloc(nb), *hb = malloc(nb), *hc = malloc(nb), *want = malloc(nb);
    rand_floats(ha, n);
    rand_floats(hb, n);
    kiln_buffer *a, *b, *c;
    CHECK_OK(kiln_buffer_create(f->ctx, nb, 0, NULL, &a));
    CHECK_OK(kiln_buffer_create(f->ctx, nb, 0, NULL, &b));
    CHECK_OK(kiln_buffer_create(f->ctx, nb, 0, NULL, &c));
    size_t g = n;
    CHECK_OK(kiln_graph_record_begin(f->q));
    kiln_event *e1 = NULL, *e2 = NULL, *e3 = NULL;
    CHECK_OK(kiln_buffer_write_async(f->q, a, 0, nb, ha, 0, NULL, &e1));
    /* fork: q2 waits on a recorded event */
    CHECK_OK(kiln_buffer_write_async(q2, b, 0, nb, hb, 1, &e1, NULL));
    CHECK(kiln_graph_recording(q2) == 1);
    kiln_arg a1[] = { KILN_ARG_F32(2.0f), KILN_ARG_BUF(a), KILN_ARG_BUF(b),
                      KILN_ARG_U32((uint32_t)n) };
    CHECK_OK(kiln_kernel_launch(q2, f->axpy, 1, &g, NULL, 4, a1, 0, NULL, &e2)); /* b = 2a + b */
    kiln_arg a2[] = { KILN_ARG_BUF(a), KILN_ARG_F32(1.0f), KILN_ARG_U32((uint32_t)n) };
    CHECK_OK(kiln_kernel_launch(f->q, f->sqmb, 1, &g, NULL, 3, a2, 1, &e2, &e3)); /* a = a*a - 1 */
    kiln_graph *bad = NULL;
    CHECK_STATUS(kiln_graph_record_end(q2, &bad), KILN_ERROR_WRONG_STATE);
    CHECK_STATUS(kiln_event_wait(e3), KILN_ERROR_WRONG_STATE); /* spoils the recording */
    kiln_graph *graph = NULL;
    CHECK_STATUS(kiln_graph_record_end(f->q, &graph), KILN_ERROR_WRONG_STATE);
    CHECK(graph == NULL);
    CHECK(kiln_graph_recording(q2) == 0);
    KT_RELEASE(e1, e2, e3);

    /* again, without the wait */
    CHECK_OK(kiln_graph_record_begin(f->q));
    CHECK_OK(kiln_buffer_write_async(f->q, a, 0, nb, ha, 0, NULL, &e1));
    CHECK_OK(kiln_buffer_write_async(q2, b, 0, nb, hb, 1, &e1, NULL));
    CHECK_OK(kiln_kernel_launch(q2, f->axpy, 1, &g, NULL, 4, a1, 0, NULL, &e2));
    /* axpy reads a: a = a*a - 1 follows it (e2) */
    CHECK_OK(kiln_kernel_launch(f->q, f->sqmb, 1, &g, NULL, 3, a2, 1, &e2, NULL));
    /* join b into c on q */
    CHECK_OK(kiln_buffer_copy(f->q, b, 0, c, 0, nb, 0, NULL, NULL));
    CHECK_OK(kiln_graph_record_end(f->q, &graph));
    CHECK(kiln_graph_recording(q2) == 0);
    /* an event of the ended recording cannot be waited on in a command */
    CHECK_STATUS(kiln_queue_marker(f->q, 1, &e2, NULL), KILN_ERROR_WRONG_STATE);
    void *p = NULL;
    CHECK_OK(kiln_buffer_map(f->q, c, KILN_MAP_WRITE, 0, 4, &p));
    CHECK_STATUS(kiln_buffer_unmap(f->q, c, p, 1, &e2, NULL), KILN_ERROR_WRONG_STATE);
    CHECK_OK(kiln_buffer_unmap(f->q, c, p, 0, NULL, NULL));
    KT_RELEASE(e1, e2);
    for (size_t i = 0; i < n; i++)
        want[i] = 2.0f * ha[i] + hb[i];
    kiln_graph_exec *exec = NULL;
    CHECK_OK(kiln_graph_instantiate(graph, &exec));
    kiln_queue *qs[2] = { f->q, ooo };
    for (int k = 0; k < 2; k++) {
        if (!qs[k])
            continue;
        float zero = 0;
        kiln_event *cleared = NULL, *done = NULL;
        CHECK_OK(kiln_buffer_fill(f->q, c, &zero, 4, 0, nb, 0, NULL, &cleared));
        CHECK_OK(kiln_graph_exec_launch(qs[k], exec, 1, &cleared, &done));
        CHECK_OK(kiln_event_wait(done));
        CHECK_OK(kiln_buffer_read(f->q, c, 0, nb, hc));
        CHECK_MSG(memcmp(hc, want, nb) == 0, "n %zu %s queue: fork/join result", n,
                  k ? "out-of-order" : "in-order");
        CHECK_OK(kiln_buffer_read(f->q, a, 0, nb, hc));
        int ok = 1;
        for (size_t i = 0; i < n; i++)
            ok &= hc[i] == ha[i] * ha[i] - 1.0f || hc[i] == fmaf(ha[i], ha[i], -1.0f);
        CHECK_MSG(ok, "n %zu %s queue: the branch on q", n, k ? "out-of-order" : "in-order");
        KT_RELEASE(cleared, done);
    }
    KT_RELEASE(exec, graph, a, b, c, q2, ooo);
    KT_FREE(ha, hb, hc, want);
}

/* Threads: one graph, an executable graph per thread with its own output
 * buffer (kiln_graph_exec_replace_buffer), launched concurrently on each
 * thread's queue, with updates in between. */
typedef struct worker {
    fix *f;
    kiln_graph *graph;
    kiln_buffer *y_recorded;
    size_t node, n;
    int id, ok;
} worker;

static void *worker_main(void *p) {
    worker *w = p;
    kiln_queue *q = NULL;
    kiln_graph_exec *x = NULL;
    kiln_buffer *y = NULL;
    size_t bytes = w->n * 4;
    w->ok = kiln_queue_create(w->f->ctx, kiln_queue_device(w->f->q), 0, &q) == KILN_OK &&
            kiln_graph_instantiate(w->graph, &x) == KILN_OK &&
            kiln_buffer_create(w->f->ctx, bytes, 0, NULL, &y) == KILN_OK &&
            kiln_graph_exec_replace_buffer(x, w->y_recorded, y) == KILN_OK;
    float *h = malloc(bytes);
    for (int r = 0; r < 20 && w->ok; r++) {
        kiln_arg a = KILN_ARG_F32((float)(w->id * 100 + r));
        w->ok = kiln_graph_exec_set_arg(x, w->node, 0, &a) == KILN_OK &&
                kiln_graph_exec_launch(q, x, 0, NULL, NULL) == KILN_OK &&
                kiln_buffer_read(q, y, 0, bytes, h) == KILN_OK;
        /* y = fill 0 then a * 1 + y: a everywhere */
        for (size_t i = 0; i < w->n && w->ok; i++)
            w->ok = h[i] == (float)(w->id * 100 + r);
    }
    free(h);
    KT_RELEASE(x, y, q);
    return NULL;
}

static void test_threads(fix *f) {
    size_t n = 512, bytes = n * 4;
    kiln_buffer *x, *y;
    float *ones = malloc(bytes), zero = 0;
    for (size_t i = 0; i < n; i++)
        ones[i] = 1.0f;
    CHECK_OK(kiln_buffer_create(f->ctx, bytes, 0, ones, &x));
    CHECK_OK(kiln_buffer_create(f->ctx, bytes, 0, NULL, &y));
    CHECK_OK(kiln_graph_record_begin(f->q));
    CHECK_OK(kiln_buffer_fill(f->q, y, &zero, 4, 0, bytes, 0, NULL, NULL));
    kiln_arg a[] = { KILN_ARG_F32(1.0f), KILN_ARG_BUF(x), KILN_ARG_BUF(y),
                     KILN_ARG_U32((uint32_t)n) };
    CHECK_OK(kiln_kernel_launch(f->q, f->axpy, 1, &n, NULL, 4, a, 0, NULL, NULL));
    size_t node = 0;
    CHECK_OK(kiln_graph_last_node(f->q, &node));
    kiln_graph *graph;
    CHECK_OK(kiln_graph_record_end(f->q, &graph));
    enum { T = 4 };
    worker w[T];
    pthread_t th[T];
    for (int t = 0; t < T; t++) {
        w[t] = (worker){ .f = f, .graph = graph, .y_recorded = y, .node = node, .n = n, .id = t };
        pthread_create(&th[t], NULL, worker_main, &w[t]);
    }
    for (int t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        CHECK_MSG(w[t].ok, "thread %d: %s", t, kiln_last_error_message());
    }
    KT_RELEASE(graph, x, y);
    free(ones);
}

/* Calls that cannot be recorded. */
static void test_refused(fix *f) {
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(f->ctx, 64, 0, NULL, &b));
    char host[64] = { 0 };
    kiln_graph *graph = (kiln_graph *)1;
    CHECK_STATUS(kiln_graph_record_end(f->q, &graph), KILN_ERROR_WRONG_STATE);
    CHECK(graph == NULL);
    size_t node;
    CHECK_STATUS(kiln_graph_last_node(f->q, &node), KILN_ERROR_WRONG_STATE);
    CHECK_STATUS(kiln_graph_record_begin(NULL), KILN_ERROR_NULL_HANDLE);

    /* each refusal, then the end reports it */
    for (int which = 0; which < 9; which++) {
        kiln_event *outside = NULL;
        CHECK_OK(kiln_queue_marker(f->q, 0, NULL, &outside));
        CHECK_OK(kiln_graph_record_begin(f->q));
        CHECK_STATUS(kiln_graph_record_begin(f->q), KILN_ERROR_WRONG_STATE);
        CHECK_STATUS(kiln_graph_last_node(f->q, &node), KILN_ERROR_WRONG_STATE);
        kiln_event *ev = NULL;
        CHECK_OK(kiln_buffer_write_async(f->q, b, 0, 64, host, 0, NULL, &ev));
        CHECK_OK(kiln_graph_last_node(f->q, &node));
        CHECK(node == 0);
        kiln_status st = KILN_OK;
        float sum;
        void *p = NULL;
        size_t n1 = 1;
        kiln_array *arr = NULL;
        switch (which) {
        case 0:
            st = kiln_buffer_read(f->q, b, 0, 64, host);
            break;
        case 1:
            st = kiln_queue_finish(f->q);
            break;
        case 2:
            st = kiln_buffer_map(f->q, b, KILN_MAP_READ, 0, 64, &p);
            break;
        case 3:
            st = kiln_event_wait(ev);
            break;
        case 4:
            st = kiln_buffer_copy(f->q, b, 0, b, 32, 32, 1, &outside, NULL);
            break;
        case 5:
            CHECK_OK(kiln_array_from_buffer(b, 0, KILN_FLOAT32, 1, &n1, NULL, &arr));
            st = kiln_array_reduce(f->q, KILN_REDUCE_SUM, arr, &sum); /* blocks */
            kiln_array_release(arr);
            break;
        case 6: {
            kiln_event_state s;
            st = kiln_event_get_state(ev, &s);
            break;
        }
        case 7:
            CHECK_OK(kiln_array_from_buffer(b, 0, KILN_FLOAT32, 1, &n1, NULL, &arr));
            st = kiln_array_read(f->q, arr, &sum);
            kiln_array_release(arr);
            break;
        case 8: {
            kiln_future *fut = NULL;
            st = kiln_buffer_read_future(f->q, b, 0, 4, 0, NULL, &fut);
            CHECK(fut == NULL);
            break;
        }
        }
        CHECK_MSG(st == KILN_ERROR_WRONG_STATE, "refusal %d: status %d", which, (int)st);
        CHECK_MSG(strstr(kiln_last_error_message(), "cannot be recorded") != NULL,
                  "refusal %d: message '%s'", which, kiln_last_error_message());
        graph = NULL;
        CHECK_STATUS(kiln_graph_record_end(f->q, &graph), KILN_ERROR_WRONG_STATE);
        CHECK(graph == NULL);
        CHECK(kiln_graph_recording(f->q) == 0);
        KT_RELEASE(ev, outside);
    }
    CHECK_OK(kiln_queue_finish(f->q));

    /* a library call (BLAS: OpenBLAS on a CPU device, CLBlast or cuBLAS on a
     * GPU) is refused whole, or the library is missing */
    size_t sq[2] = { 4, 4 };
    kiln_array *ma = NULL, *mb = NULL, *mc = NULL;
    CHECK_OK(kiln_array_zeros(f->q, KILN_FLOAT32, 2, sq, 0, NULL, NULL, &ma));
    CHECK_OK(kiln_array_zeros(f->q, KILN_FLOAT32, 2, sq, 0, NULL, NULL, &mb));
    CHECK_OK(kiln_array_zeros(f->q, KILN_FLOAT32, 2, sq, 0, NULL, NULL, &mc));
    CHECK_OK(kiln_queue_finish(f->q));
    CHECK_OK(kiln_graph_record_begin(f->q));
    kiln_status blas = kiln_linalg_matmul_out(f->q, mc, ma, mb, 0, NULL, NULL);
    kiln_status ended = kiln_graph_record_end(f->q, &graph);
    CHECK_MSG((blas == KILN_ERROR_WRONG_STATE && ended == KILN_ERROR_WRONG_STATE) ||
                  blas == KILN_ERROR_NO_RUNTIME,
              "kiln_linalg_matmul_out while recording: %s, the end: %s (%s)",
              kiln_status_name(blas), kiln_status_name(ended), kiln_last_error_message());
    if (ended == KILN_OK)
        kiln_graph_release(graph);
    printf("  kiln_linalg_matmul_out while recording: %s\n", kiln_status_name(blas));
    KT_RELEASE(ma, mb, mc);
    CHECK_OK(kiln_queue_finish(f->q));

    /* an empty graph launches and completes */
    CHECK_OK(kiln_graph_record_begin(f->q));
    CHECK_OK(kiln_graph_record_end(f->q, &graph));
    CHECK(kiln_graph_num_nodes(graph) == 0);
    kiln_graph_exec *exec = NULL;
    CHECK_OK(kiln_graph_instantiate(graph, &exec));
    kiln_graph_release(graph); /* the exec holds it */
    kiln_event *done = NULL;
    CHECK_OK(kiln_graph_exec_launch(f->q, exec, 0, NULL, &done));
    CHECK_OK(kiln_event_wait(done));
    kiln_event_release(done);
    /* a graph launch is not recorded into another graph */
    CHECK_OK(kiln_graph_record_begin(f->q));
    CHECK_STATUS(kiln_graph_exec_launch(f->q, exec, 0, NULL, NULL), KILN_ERROR_WRONG_STATE);
    CHECK_STATUS(kiln_graph_record_end(f->q, &graph), KILN_ERROR_WRONG_STATE);
    kiln_graph_exec_release(exec);
    kiln_graph_release(NULL);
    kiln_graph_exec_release(NULL);
    CHECK(kiln_graph_num_nodes(NULL) == 0);
    CHECK(kiln_graph_recording(NULL) == 0);
    CHECK_STATUS(kiln_graph_instantiate(NULL, &exec), KILN_ERROR_NULL_HANDLE);
    kiln_buffer_release(b);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    fix f = { .q = q, .ctx = kiln_queue_context(q) };
    if (!KT_BUILD(f.ctx, src, NULL, &f.prog, "axpy", &f.axpy, "sqmb", &f.sqmb))
        return;
    size_t sizes[] = { 0, 1, 17, 1025, 4097 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        test_nodes(&f, sizes[i]);
    test_repeat(&f, 300);
    size_t asizes[] = { 0, 1, 257, 5003 };
    for (size_t i = 0; i < sizeof asizes / sizeof *asizes; i++)
        test_algorithms(&f, asizes[i]);
    test_fork_join(&f, 1000);
    test_threads(&f);
    test_refused(&f);
    KT_RELEASE(f.axpy, f.sqmb, f.prog);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
