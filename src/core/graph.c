/* Command graphs (include/kiln/graph.h): recording the commands of queues
 * into nodes, and the portable replay that runs every backend.
 *
 * Recording. A queue records while its `rec` points at a graph. The core's
 * enqueue calls (kernel.c, buffer.c, queue.c) check their arguments as
 * always, then ask kiln__graph_of whether the command is to be recorded;
 * if so they hand it to an add function here instead of the backend. A
 * node keeps what the command needs to run again (the kernel and its
 * arguments with buffers retained, ranges, the fill pattern, a copy of a
 * write's bytes) and its dependencies: the nodes of its wait list (events
 * of recorded commands are kiln_events with no backend handle, naming
 * their graph and node) and, on an in-order queue, the node recorded
 * before it on that queue. Record order is a topological order: a command
 * can only wait on one recorded before it.
 *
 * Replay. kiln_graph_exec_launch enqueues every node in record order
 * straight through the backend table (the arguments were checked when
 * recorded, or by kiln_graph_exec_set_arg): on an in-order queue without
 * events between nodes; on an out-of-order queue each node waits on the
 * backend events of its dependencies in this launch. The launch's wait
 * list becomes a barrier before the first node; its event is the last
 * node's (in-order) or a marker after all of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "base/strbuf.h"
#include "core/internal.h"

typedef struct kiln__gnode {
    kiln_graph_node_kind kind;
    kiln_queue *queue; /* where it was recorded */
    size_t *deps, num_deps;
    /* KILN_GRAPH_NODE_KERNEL */
    kiln_kernel *kernel;
    unsigned dims;
    size_t global[3], local[3];
    int has_local;
    size_t num_args;
    kiln_arg *args; /* buffers retained */
    /* copy (buf[0] src, buf[1] dst), fill, write, read (buf[0]) */
    kiln_buffer *buf[2];
    size_t off[2], size;
    unsigned char pattern[128];
    size_t pattern_size;
    void *bytes; /* a write's bytes, owned */
    void *host;  /* a read's destination */
    int barrier; /* a marker node made by kiln_queue_barrier */
} kiln__gnode;

/* A queue taking part in a recording. */
typedef struct kiln__grq {
    kiln_queue *queue; /* retained while recording */
    size_t last;       /* its last node + 1 (0: none yet) */
    size_t barrier;    /* its last barrier/marker node + 1 (out of order) */
} kiln__grq;

struct kiln_graph {
    atomic_int refs;
    pthread_mutex_t lock; /* guards everything below while recording */
    kiln_context *context;
    kiln_queue *origin; /* held until the graph goes (a native graph may be
                           built for it) */
    size_t origin_slot; /* the device the native graph is built for */
    int recording;
    kiln_status failed; /* the first refused call, KILN_OK if none */
    char *failed_msg;
    kiln__gnode *nodes;
    size_t num_nodes, cap_nodes;
    kiln__grq *queues;
    size_t num_queues, cap_queues;
};

/* One node of an executable graph: its own arguments and buffers. */
typedef struct kiln__xnode {
    kiln_arg *args;      /* a copy of the recorded ones (buffers retained) */
    kiln_buffer *buf[2]; /* copy/fill/write/read: the buffers in use (retained) */
} kiln__xnode;

struct kiln_graph_exec {
    atomic_int refs;
    pthread_mutex_t lock; /* launches and updates */
    kiln_graph *graph;    /* held */
    kiln__xnode *x;
    void **events; /* per node, for out-of-order launches */
    void *last;    /* backend event ending the last launch, or NULL */
    const kiln__backend *last_backend;
    /* The backend's native graph (backend.h's kiln__backend_graph) for
     * the recording's device, when it could take every node; NULL: replay.
     * stale: built again at the next launch (a buffer was replaced, or the
     * driver refused an argument update). */
    void *native;
    void **native_nodes;
    int stale;
};

/* ----------------------------------------------------------- the graph */

kiln_status kiln_graph_retain(kiln_graph *graph) {
    return kiln__ref_retain(graph ? &graph->refs : NULL, "kiln_graph_retain", "graph");
}

static void kiln__grq_release_all(kiln_graph *g) {
    for (size_t i = 0; i < g->num_queues; i++) {
        atomic_store_explicit(&g->queues[i].queue->rec, NULL, memory_order_release);
        kiln_queue_release(g->queues[i].queue);
    }
    free(g->queues);
    g->queues = NULL;
    g->num_queues = g->cap_queues = 0;
}

void kiln_graph_release(kiln_graph *graph) {
    if (!kiln__ref_release(graph ? &graph->refs : NULL))
        return;
    kiln__grq_release_all(graph); /* none left unless recording was never ended */
    for (size_t i = 0; i < graph->num_nodes; i++) {
        kiln__gnode *n = &graph->nodes[i];
        free(n->deps);
        for (size_t a = 0; a < n->num_args; a++)
            if (n->args[a].kind == KILN_ARG_BUFFER)
                kiln_buffer_release(n->args[a].value.buffer);
        free(n->args);
        kiln_kernel_release(n->kernel);
        kiln_buffer_release(n->buf[0]);
        kiln_buffer_release(n->buf[1]);
        free(n->bytes);
    }
    free(graph->nodes);
    free(graph->failed_msg);
    kiln_queue_release(graph->origin);
    pthread_mutex_destroy(&graph->lock);
    kiln__context_unref(graph->context);
    free(graph);
}

void kiln__graph_unref(kiln_graph *g) {
    kiln_graph_release(g);
}

size_t kiln_graph_num_nodes(const kiln_graph *graph) {
    return graph ? graph->num_nodes : 0;
}

kiln_status kiln_graph_get_node_kind(const kiln_graph *graph, size_t node,
                                     kiln_graph_node_kind *kind) {
    if (!graph || !kind)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "kiln_graph_get_node_kind: %s is NULL",
                               graph ? "kind" : "graph");
    if (node >= graph->num_nodes)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "kiln_graph_get_node_kind: node %zu of a graph of %zu nodes", node,
                               graph->num_nodes);
    *kind = graph->nodes[node].kind;
    return KILN_OK;
}

/* ----------------------------------------------------------- recording */

kiln_status kiln_graph_record_begin(kiln_queue *queue) {
    static const char fn[] = "kiln_graph_record_begin";
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue is NULL", fn);
    kiln_graph *g = kiln__calloc(1, sizeof *g);
    kiln__grq *rq = kiln__calloc(4, sizeof *rq);
    if (!g || !rq) {
        free(g);
        free(rq);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    }
    atomic_init(&g->refs, 1);
    pthread_mutex_init(&g->lock, NULL);
    g->context = queue->context;
    kiln__context_retain(g->context);
    g->origin = queue;
    g->origin_slot = queue->device_slot;
    g->recording = 1;
    g->queues = rq;
    g->cap_queues = 4;
    g->num_queues = 1;
    rq[0].queue = queue;
    kiln_graph *none = NULL;
    if (!atomic_compare_exchange_strong(&queue->rec, &none, g)) {
        g->num_queues = 0;
        g->origin = NULL;
        kiln_graph_release(g);
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "%s: the queue is recording already (end that recording with "
                               "kiln_graph_record_end first)",
                               fn);
    }
    kiln_queue_retain(queue); /* the recording's */
    kiln_queue_retain(queue); /* the graph's (origin) */
    return KILN_OK;
}

int kiln_graph_recording(const kiln_queue *queue) {
    return queue && atomic_load_explicit(&((kiln_queue *)queue)->rec, memory_order_acquire);
}

kiln_status kiln_graph_record_end(kiln_queue *queue, kiln_graph **graph) {
    static const char fn[] = "kiln_graph_record_end";
    if (!graph)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: graph is NULL", fn);
    *graph = NULL;
    if (!queue)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: queue is NULL", fn);
    kiln_graph *g = kiln__queue_rec(queue);
    if (!g)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "%s: the queue is not recording (kiln_graph_record_begin)", fn);
    pthread_mutex_lock(&g->lock);
    if (g->origin != queue) {
        pthread_mutex_unlock(&g->lock);
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "%s: the queue joined a recording begun on another queue; end "
                               "it on that one",
                               fn);
    }
    g->recording = 0;
    kiln__grq_release_all(g);
    kiln_status failed = g->failed;
    pthread_mutex_unlock(&g->lock);
    if (failed != KILN_OK) {
        kiln_status st = kiln__error_set(failed, 0,
                                         "%s: a call was refused while recording, so "
                                         "the graph is incomplete: %s",
                                         fn, g->failed_msg ? g->failed_msg : "");
        kiln_graph_release(g);
        return st;
    }
    *graph = g;
    return KILN_OK;
}

kiln_status kiln_graph_last_node(kiln_queue *queue, size_t *node) {
    static const char fn[] = "kiln_graph_last_node";
    const char *missing = KILN__FIRST_NULL2(queue, node);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    kiln_graph *g = kiln__queue_rec(queue);
    if (!g)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0, "%s: the queue is not recording", fn);
    kiln_status st = KILN_ERROR_WRONG_STATE;
    pthread_mutex_lock(&g->lock);
    for (size_t i = 0; i < g->num_queues; i++)
        if (g->queues[i].queue == queue && g->queues[i].last) {
            *node = g->queues[i].last - 1;
            st = KILN_OK;
        }
    pthread_mutex_unlock(&g->lock);
    return st == KILN_OK ? st : kiln__error_set(st, 0, "%s: nothing recorded on the queue yet", fn);
}

kiln_status kiln__graph_refuse(kiln_graph *g, const char *fn, const char *why) {
    kiln_status st = kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                                     "%s: cannot be recorded into a command graph: %s", fn, why);
    pthread_mutex_lock(&g->lock);
    if (g->recording && g->failed == KILN_OK) {
        g->failed = st;
        g->failed_msg = kiln__strdup(kiln_last_error_message());
    }
    pthread_mutex_unlock(&g->lock);
    return st;
}

kiln_status kiln__graph_of(const char *fn, kiln_queue *queue, size_t num_wait,
                           kiln_event *const *wait, kiln_graph **graph) {
    kiln_graph *g = kiln__queue_rec(queue);
    *graph = NULL;
    if (!g && num_wait == 0)
        return KILN_OK;
    size_t joined = 0;
    for (size_t i = 0; !g && wait && i < num_wait; i++)
        if (wait[i] && wait[i]->graph) {
            g = wait[i]->graph;
            joined = i;
        }
    if (!g)
        return KILN_OK;
    if (!kiln__queue_rec(queue) && wait[joined]->context != queue->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: wait[%zu] is an event of a command recorded on another "
                               "context",
                               fn, joined);
    pthread_mutex_lock(&g->lock);
    int recording = g->recording;
    pthread_mutex_unlock(&g->lock);
    if (!recording)
        return kiln__error_set(KILN_ERROR_WRONG_STATE, 0,
                               "%s: wait[%zu] stands for a command recorded into a graph whose "
                               "recording has ended; it never runs (wait on "
                               "kiln_graph_exec_launch's event)",
                               fn, joined);
    for (size_t i = 0; wait && i < num_wait; i++) {
        const kiln_event *ev = wait[i];
        if (!ev)
            continue; /* kiln__graph_add names it */
        if (!ev->graph)
            return kiln__graph_refuse(
                g, fn,
                "its wait list holds an event from outside the recording (give it to "
                "kiln_graph_exec_launch's wait list instead)");
        if (ev->graph != g)
            return kiln__graph_refuse(g, fn,
                                      "its wait list holds an event recorded into another graph");
    }
    *graph = g;
    return KILN_OK;
}

kiln_status kiln__graph_or_begin(kiln__enqueue *e, const char *fn, kiln_queue *queue,
                                 size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    kiln_status st = kiln__graph_of(fn, queue, num_wait, wait, &e->graph);
    if (st != KILN_OK || e->graph)
        return st;
    return kiln__enqueue_begin(e, fn, queue, num_wait, wait, event);
}

kiln_status kiln__command(const char *fn, kiln_queue *queue, kiln__cmd_record record,
                          kiln__cmd_run run, const void *arg, size_t num_wait,
                          kiln_event *const *wait, kiln_event **event) {
    kiln__enqueue e;
    kiln_status st = kiln__graph_or_begin(&e, fn, queue, num_wait, wait, event);
    if (st != KILN_OK)
        return st;
    if (e.graph)
        return record(e.graph, queue, arg, num_wait, wait, event);
    st = run(queue, arg, num_wait, e.wait, kiln__enqueue_out(&e, event));
    return kiln__enqueue_end(&e, fn, st, queue, event);
}

/* Under g->lock: the queue's entry, joining it to the recording. */
static kiln__grq *kiln__grq_get(kiln_graph *g, kiln_queue *q) {
    for (size_t i = 0; i < g->num_queues; i++)
        if (g->queues[i].queue == q)
            return &g->queues[i];
    if (g->num_queues == g->cap_queues) {
        kiln__grq *v = kiln__realloc(g->queues, 2 * g->cap_queues * sizeof *v);
        if (!v)
            return NULL;
        g->queues = v;
        g->cap_queues *= 2;
    }
    kiln_graph *none = NULL;
    if (!atomic_compare_exchange_strong(&q->rec, &none, g))
        return NULL; /* raced with another recording: refused by the caller */
    kiln_queue_retain(q);
    kiln__grq *r = &g->queues[g->num_queues++];
    memset(r, 0, sizeof *r);
    r->queue = q;
    return r;
}

static int kiln__dep_add(size_t **deps, size_t *num, size_t *cap, size_t d) {
    for (size_t i = 0; i < *num; i++)
        if ((*deps)[i] == d)
            return 1;
    if (*num == *cap) {
        size_t c = *cap ? 2 * *cap : 4;
        size_t *v = kiln__realloc(*deps, c * sizeof *v);
        if (!v)
            return 0;
        *deps = v;
        *cap = c;
    }
    (*deps)[(*num)++] = d;
    return 1;
}

/* Appends *n (whose owned members pass to the graph on success; on failure
 * the caller frees them) recorded on q after wait; hands back its event. */
static kiln_status kiln__graph_add(kiln_graph *g, kiln_queue *q, kiln__gnode *n, size_t num_wait,
                                   kiln_event *const *wait, kiln_event **event, const char *fn) {
    if (event)
        *event = NULL;
    for (size_t i = 0; i < num_wait; i++)
        if (!wait || !wait[i])
            return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0,
                                   "%s: wait[%zu] is NULL (a wait list holds %zu events, none "
                                   "NULL)",
                                   fn, i, num_wait);
    kiln_event *ev = NULL;
    if (event) {
        ev = kiln__event_alloc(q->context, NULL, 0);
        if (!ev)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    }
    pthread_mutex_lock(&g->lock);
    kiln_status st = KILN_OK;
    kiln__grq *r = NULL;
    size_t cap = 0;
    n->deps = NULL;
    n->num_deps = 0;
    if (!g->recording) {
        st = kiln__error_set(KILN_ERROR_WRONG_STATE, 0, "%s: the recording ended meanwhile", fn);
        goto fail;
    }
    r = kiln__grq_get(g, q);
    if (!r) {
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                             "%s: out of memory (or the queue records into another graph)", fn);
        goto fail;
    }
    if (g->num_nodes == g->cap_nodes) {
        size_t c = g->cap_nodes ? 2 * g->cap_nodes : 16;
        kiln__gnode *v = kiln__realloc(g->nodes, c * sizeof *v);
        if (!v) {
            st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
            goto fail;
        }
        g->nodes = v;
        g->cap_nodes = c;
    }
    size_t self = g->num_nodes;
    int ok = 1;
    for (size_t i = 0; i < num_wait; i++)
        ok &= kiln__dep_add(&n->deps, &n->num_deps, &cap, wait[i]->node);
    int in_order = !(q->flags & KILN_QUEUE_OUT_OF_ORDER);
    if (in_order) {
        if (r->last)
            ok &= kiln__dep_add(&n->deps, &n->num_deps, &cap, r->last - 1);
    } else if (n->kind == KILN_GRAPH_NODE_MARKER && num_wait == 0) {
        /* a marker or barrier without a wait list follows everything
         * recorded on the queue before it */
        for (size_t i = r->barrier ? r->barrier - 1 : 0; i < self; i++)
            if (g->nodes[i].queue == q)
                ok &= kiln__dep_add(&n->deps, &n->num_deps, &cap, i);
    } else if (r->barrier) {
        ok &= kiln__dep_add(&n->deps, &n->num_deps, &cap, r->barrier - 1);
    }
    if (!ok) {
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
        goto fail;
    }
    n->queue = q;
    g->nodes[self] = *n;
    g->num_nodes++;
    r->last = self + 1;
    if (!in_order && n->kind == KILN_GRAPH_NODE_MARKER && (n->barrier || num_wait == 0))
        r->barrier = self + 1;
    pthread_mutex_unlock(&g->lock);
    if (ev) {
        kiln_graph_retain(g);
        ev->graph = g;
        ev->node = self;
        if (n->kind == KILN_GRAPH_NODE_KERNEL)
            snprintf(ev->label, sizeof ev->label, "kernel '%.56s' (recorded)", n->kernel->name);
        *event = ev;
    }
    return KILN_OK;
fail:
    pthread_mutex_unlock(&g->lock);
    free(n->deps);
    n->deps = NULL;
    kiln__event_discard(ev);
    return st;
}

kiln_status kiln__graph_add_launch(kiln_graph *g, kiln_queue *q, kiln_kernel *kernel, unsigned dims,
                                   const size_t *global, const size_t *local, size_t num_args,
                                   const kiln_arg *args, size_t num_wait, kiln_event *const *wait,
                                   kiln_event **event) {
    kiln__gnode n;
    memset(&n, 0, sizeof n);
    n.kind = KILN_GRAPH_NODE_KERNEL;
    n.dims = dims;
    for (unsigned d = 0; d < dims; d++) {
        n.global[d] = global[d];
        n.local[d] = local ? local[d] : 0;
    }
    n.has_local = local != NULL;
    n.num_args = num_args;
    if (num_args) {
        n.args = kiln__malloc(num_args * sizeof *n.args);
        if (!n.args)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "kiln_kernel_launch(%s): out of memory", kernel->name);
        memcpy(n.args, args, num_args * sizeof *n.args);
    }
    n.kernel = kernel;
    char fn[96];
    snprintf(fn, sizeof fn, "kiln_kernel_launch(%.64s)", kernel->name);
    kiln_status st = kiln__graph_add(g, q, &n, num_wait, wait, event, fn);
    if (st != KILN_OK) {
        free(n.args);
        return st;
    }
    kiln_kernel_retain(kernel);
    for (size_t a = 0; a < num_args; a++)
        if (args[a].kind == KILN_ARG_BUFFER)
            kiln_buffer_retain(args[a].value.buffer);
    return KILN_OK;
}

kiln_status kiln__graph_add_copy(kiln_graph *g, kiln_queue *q, kiln_buffer *src, size_t src_offset,
                                 kiln_buffer *dst, size_t dst_offset, size_t size, size_t num_wait,
                                 kiln_event *const *wait, kiln_event **event) {
    kiln__gnode n;
    memset(&n, 0, sizeof n);
    n.kind = KILN_GRAPH_NODE_COPY;
    n.buf[0] = src;
    n.buf[1] = dst;
    n.off[0] = src_offset;
    n.off[1] = dst_offset;
    n.size = size;
    kiln_status st = kiln__graph_add(g, q, &n, num_wait, wait, event, "kiln_buffer_copy");
    if (st == KILN_OK) {
        kiln_buffer_retain(src);
        kiln_buffer_retain(dst);
    }
    return st;
}

kiln_status kiln__graph_add_fill(kiln_graph *g, kiln_queue *q, kiln_buffer *buffer,
                                 const void *pattern, size_t pattern_size, size_t offset,
                                 size_t size, size_t num_wait, kiln_event *const *wait,
                                 kiln_event **event) {
    kiln__gnode n;
    memset(&n, 0, sizeof n);
    n.kind = KILN_GRAPH_NODE_FILL;
    n.buf[0] = buffer;
    n.off[0] = offset;
    n.size = size;
    memcpy(n.pattern, pattern, pattern_size);
    n.pattern_size = pattern_size;
    kiln_status st = kiln__graph_add(g, q, &n, num_wait, wait, event, "kiln_buffer_fill");
    if (st == KILN_OK)
        kiln_buffer_retain(buffer);
    return st;
}

kiln_status kiln__graph_add_transfer(kiln_graph *g, kiln_queue *q, int to_device,
                                     kiln_buffer *buffer, size_t offset, size_t size, void *host,
                                     size_t num_wait, kiln_event *const *wait, kiln_event **event) {
    const char *fn = to_device ? "kiln_buffer_write_async" : "kiln_buffer_read_async";
    kiln__gnode n;
    memset(&n, 0, sizeof n);
    n.kind = to_device ? KILN_GRAPH_NODE_WRITE : KILN_GRAPH_NODE_READ;
    n.buf[0] = buffer;
    n.off[0] = offset;
    n.size = size;
    if (to_device) {
        n.bytes = kiln__malloc(size);
        if (!n.bytes)
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0,
                                   "%s: out of memory for a copy of the %zu bytes to record", fn,
                                   size);
        memcpy(n.bytes, host, size);
    } else {
        n.host = host;
    }
    kiln_status st = kiln__graph_add(g, q, &n, num_wait, wait, event, fn);
    if (st != KILN_OK) {
        free(n.bytes);
        return st;
    }
    kiln_buffer_retain(buffer);
    return KILN_OK;
}

kiln_status kiln__graph_add_marker(kiln_graph *g, kiln_queue *q, int barrier, size_t num_wait,
                                   kiln_event *const *wait, kiln_event **event) {
    kiln__gnode n;
    memset(&n, 0, sizeof n);
    n.kind = KILN_GRAPH_NODE_MARKER;
    n.barrier = barrier;
    return kiln__graph_add(g, q, &n, num_wait, wait, event,
                           barrier ? "kiln_queue_barrier" : "kiln_queue_marker");
}

/* ------------------------------------------------------------ executing */

/* kiln_arg -> kiln__barg (what the replay and the native graph pass). */
static void kiln__bargs_of(const kiln_arg *args, size_t n, kiln__barg *b) {
    for (size_t a = 0; a < n; a++) {
        const kiln_arg *arg = &args[a];
        b[a].kind = arg->kind;
        b[a].mem = arg->kind == KILN_ARG_BUFFER ? arg->value.buffer->handle : NULL;
        b[a].bytes = arg->kind == KILN_ARG_SCALAR ? (const void *)&arg->value : NULL;
        b[a].size = arg->kind == KILN_ARG_SCALAR  ? kiln_dtype_size(arg->dtype)
                    : arg->kind == KILN_ARG_LOCAL ? arg->bytes
                                                  : 0;
    }
}

const struct kiln__backend_graph *kiln__graph_test_table;

static const struct kiln__backend_graph *kiln__native_table(const kiln_graph *g) {
    return kiln__graph_test_table ? kiln__graph_test_table : g->context->backend->graph;
}

static void kiln__native_drop(kiln_graph_exec *x) {
    if (x->native)
        kiln__native_table(x->graph)->release(x->native);
    x->native = NULL;
    free(x->native_nodes);
    x->native_nodes = NULL;
}

/* Builds the backend's native graph of x for the recording's device, where
 * the backend has native graphs and takes every node (KILN_GRAPH_NATIVE=0
 * turns it off, =1 on where the backend leaves it off by default); else leaves x->native NULL (the
 * replay runs; the driver's refusal stays in the thread's last error message, though the call that
 * built succeeds). Under x->lock (or before x is shared). */
static void kiln__native_build(kiln_graph_exec *x) {
    kiln_graph *g = x->graph;
    const struct kiln__backend_graph *t = kiln__native_table(g);
    const char *env = getenv("KILN_GRAPH_NATIVE");
    x->stale = 0;
    if (!t || (env && strcmp(env, "0") == 0))
        return;
    if (!t->default_on && !(env && strcmp(env, "1") == 0))
        return;
    size_t n = g->num_nodes;
    for (size_t i = 0; i < n; i++)
        if (g->nodes[i].kind == KILN_GRAPH_NODE_WRITE || g->nodes[i].kind == KILN_GRAPH_NODE_READ)
            return; /* host memory: the backends stage it at the call */
    kiln_device *dev = g->context->devices[g->origin_slot];
    void *ng = NULL;
    void **nodes = kiln__calloc(n ? n : 1, sizeof *nodes);
    kiln_status st = nodes ? t->create(g->context->handle, &dev->b, g->origin->handle, &ng)
                           : KILN_ERROR_OUT_OF_HOST_MEMORY;
    for (size_t i = 0; i < n && st == KILN_OK; i++) {
        const kiln__gnode *nd = &g->nodes[i];
        const kiln__xnode *xn = &x->x[i];
        void *stack[KILN__STACK_ARGS];
        void **deps = stack;
        if (nd->num_deps > KILN__STACK_ARGS &&
            !(deps = kiln__malloc(nd->num_deps * sizeof *deps))) {
            st = KILN_ERROR_OUT_OF_HOST_MEMORY;
            break;
        }
        for (size_t d = 0; d < nd->num_deps; d++)
            deps[d] = nodes[nd->deps[d]];
        switch (nd->kind) {
        case KILN_GRAPH_NODE_KERNEL: {
            kiln__barg bstack[KILN__STACK_ARGS];
            kiln__barg *b = bstack;
            if (nd->num_args > KILN__STACK_ARGS && !(b = kiln__malloc(nd->num_args * sizeof *b))) {
                st = KILN_ERROR_OUT_OF_HOST_MEMORY;
                break;
            }
            kiln__bargs_of(xn->args, nd->num_args, b);
            st = t->add_kernel(ng, nd->kernel->handles[g->origin_slot], nd->dims, nd->global,
                               nd->has_local ? nd->local : NULL, nd->num_args, b, nd->num_deps,
                               deps, &nodes[i]);
            if (b != bstack)
                free(b);
            break;
        }
        case KILN_GRAPH_NODE_COPY:
            st = t->add_copy(ng, xn->buf[0]->handle, nd->off[0], xn->buf[1]->handle, nd->off[1],
                             nd->size, nd->num_deps, deps, &nodes[i]);
            break;
        case KILN_GRAPH_NODE_FILL:
            st = t->add_fill(ng, xn->buf[0]->handle, nd->pattern, nd->pattern_size, nd->off[0],
                             nd->size, nd->num_deps, deps, &nodes[i]);
            break;
        default:
            st = t->add_empty(ng, nd->num_deps, deps, &nodes[i]);
            break;
        }
        if (deps != stack)
            free(deps);
    }
    if (st == KILN_OK && ng)
        st = t->instantiate(ng);
    if (st == KILN_OK && ng) {
        x->native = ng;
        x->native_nodes = nodes;
    } else {
        if (ng)
            t->release(ng);
        free(nodes);
    }
}

kiln_status kiln_graph_instantiate(kiln_graph *graph, kiln_graph_exec **exec) {
    static const char fn[] = "kiln_graph_instantiate";
    if (!exec)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: exec is NULL", fn);
    *exec = NULL;
    if (!graph)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: graph is NULL", fn);
    kiln_graph_exec *x = kiln__calloc(1, sizeof *x);
    size_t n = graph->num_nodes;
    if (x) {
        x->x = kiln__calloc(n ? n : 1, sizeof *x->x);
        x->events = kiln__calloc(n ? n : 1, sizeof *x->events);
    }
    int ok = x && x->x && x->events;
    for (size_t i = 0; ok && i < n; i++) {
        const kiln__gnode *g = &graph->nodes[i];
        if (g->num_args) {
            x->x[i].args = kiln__malloc(g->num_args * sizeof *g->args);
            ok = x->x[i].args != NULL;
            if (ok)
                memcpy(x->x[i].args, g->args, g->num_args * sizeof *g->args);
        }
    }
    if (!ok) {
        for (size_t i = 0; x && x->x && i < n; i++)
            free(x->x[i].args);
        if (x) {
            free(x->x);
            free(x->events);
        }
        free(x);
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    }
    for (size_t i = 0; i < n; i++) {
        const kiln__gnode *g = &graph->nodes[i];
        for (size_t a = 0; a < g->num_args; a++)
            if (g->args[a].kind == KILN_ARG_BUFFER)
                kiln_buffer_retain(g->args[a].value.buffer);
        for (int b = 0; b < 2; b++)
            if ((x->x[i].buf[b] = g->buf[b]) != NULL)
                kiln_buffer_retain(g->buf[b]);
    }
    atomic_init(&x->refs, 1);
    pthread_mutex_init(&x->lock, NULL);
    kiln_graph_retain(graph);
    x->graph = graph;
    kiln__native_build(x);
    *exec = x;
    return KILN_OK;
}

kiln_status kiln_graph_exec_retain(kiln_graph_exec *exec) {
    return kiln__ref_retain(exec ? &exec->refs : NULL, "kiln_graph_exec_retain", "exec");
}

static void kiln__exec_free(kiln_graph_exec *x) {
    kiln_graph *graph = x->graph;
    for (size_t i = 0; i < graph->num_nodes; i++) {
        for (size_t a = 0; a < graph->nodes[i].num_args; a++)
            if (x->x[i].args[a].kind == KILN_ARG_BUFFER)
                kiln_buffer_release(x->x[i].args[a].value.buffer);
        free(x->x[i].args);
        kiln_buffer_release(x->x[i].buf[0]);
        kiln_buffer_release(x->x[i].buf[1]);
    }
    if (x->last)
        x->last_backend->event_release(x->last);
    kiln__native_drop(x);
    free(x->x);
    free(x->events);
    pthread_mutex_destroy(&x->lock);
    kiln_graph_release(graph);
    free(x);
}

static void kiln__exec_free_later(kiln_event *ev, kiln_event_state state, void *x) {
    (void)ev;
    (void)state;
    kiln__exec_free(x);
}

void kiln_graph_exec_release(kiln_graph_exec *exec) {
    if (!kiln__ref_release(exec ? &exec->refs : NULL))
        return;
    /* A write node's bytes (the graph's) may still be read by a launch
     * that has not ended: free once the last launch's end has been seen. */
    kiln_event_state s = KILN_EVENT_COMPLETE;
    if (exec->last && exec->last_backend->event_state(exec->last, &s) == KILN_OK &&
        s != KILN_EVENT_COMPLETE && s != KILN_EVENT_ERROR) {
        kiln_event *ev = NULL;
        exec->last_backend->event_retain(exec->last);
        if (kiln__event_wrap(exec->graph->context, exec->last, 0, &ev) == KILN_OK) {
            kiln_status st = kiln_event_on_complete(ev, kiln__exec_free_later, exec);
            kiln_event_release(ev);
            if (st == KILN_OK)
                return;
        }
        /* no callback: wait here rather than free what a launch reads */
        exec->last_backend->event_wait(1, &exec->last);
    }
    kiln__exec_free(exec);
}

kiln_graph_impl kiln_graph_exec_impl(const kiln_graph_exec *exec) {
    if (!exec)
        return 0;
    pthread_mutex_lock(&((kiln_graph_exec *)exec)->lock);
    int native = exec->native != NULL || exec->stale;
    pthread_mutex_unlock(&((kiln_graph_exec *)exec)->lock);
    return native ? KILN_GRAPH_IMPL_NATIVE : KILN_GRAPH_IMPL_REPLAY;
}

kiln_status kiln_graph_exec_set_arg(kiln_graph_exec *exec, size_t node, size_t index,
                                    const kiln_arg *arg) {
    static const char fn[] = "kiln_graph_exec_set_arg";
    const char *missing = KILN__FIRST_NULL2(exec, arg);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    kiln_graph *g = exec->graph;
    if (node >= g->num_nodes)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0, "%s: node %zu of a graph of %zu nodes",
                               fn, node, g->num_nodes);
    const kiln__gnode *n = &g->nodes[node];
    if (n->kind != KILN_GRAPH_NODE_KERNEL)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: node %zu is not a kernel launch (kind %d)", fn, node,
                               (int)n->kind);
    if (index >= n->num_args)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: argument %zu of kernel '%s', which takes %zu", fn, index,
                               n->kernel->name, n->num_args);
    kiln__barg b;
    kiln_status st = kiln__kernel_arg_check(n->kernel, g->context, index, arg, &b);
    if (st != KILN_OK)
        return kiln__error_prefix(st, "%s(node %zu)", fn, node);
    if (arg->kind != n->args[index].kind)
        return kiln__error_set(KILN_ERROR_KERNEL_ARGS, 0,
                               "%s(node %zu): argument %zu was recorded as another kind of "
                               "argument (a buffer, a scalar or local memory)",
                               fn, node, index);
    if (arg->kind == KILN_ARG_SCALAR && arg->dtype != n->args[index].dtype)
        return kiln__error_set(
            KILN_ERROR_KERNEL_ARGS, 0, "%s(node %zu): argument %zu was recorded as %s, got %s", fn,
            node, index, kiln_dtype_name(n->args[index].dtype), kiln_dtype_name(arg->dtype));
    pthread_mutex_lock(&exec->lock);
    kiln_arg *slot = &exec->x[node].args[index];
    if (arg->kind == KILN_ARG_BUFFER)
        kiln_buffer_retain(arg->value.buffer);
    if (slot->kind == KILN_ARG_BUFFER)
        kiln_buffer_release(slot->value.buffer);
    *slot = *arg;
    if (exec->native) {
        /* the native kernel node too; if the driver refuses, the graph is
         * built again at the next launch */
        kiln__barg stack[KILN__STACK_ARGS];
        kiln__barg *bs =
            n->num_args > KILN__STACK_ARGS ? kiln__malloc(n->num_args * sizeof *bs) : stack;
        kiln_status ns = KILN_ERROR_OUT_OF_HOST_MEMORY;
        if (bs) {
            kiln__bargs_of(exec->x[node].args, n->num_args, bs);
            ns = kiln__native_table(g)->set_kernel_args(exec->native, exec->native_nodes[node],
                                                        n->num_args, bs);
            if (bs != stack)
                free(bs);
        }
        if (ns != KILN_OK) {
            kiln__native_drop(exec);
            exec->stale = 1;
        }
    }
    pthread_mutex_unlock(&exec->lock);
    return KILN_OK;
}

/* The buffer to use in place of recorded use u, given the replacement of
 * top-level buffer (or buffer) old: NULL if u is not affected, else a new
 * reference (*st set on failure). */
static kiln_buffer *kiln__replaced(kiln_buffer *u, kiln_buffer *old, kiln_buffer *rep,
                                   kiln_status *st) {
    if (!u)
        return NULL;
    if (u == old) {
        kiln_buffer_retain(rep);
        return rep;
    }
    if (u->root != old)
        return NULL;
    if (rep == old) {
        kiln_buffer_retain(u);
        return u;
    }
    kiln_buffer *view = NULL;
    *st = kiln_buffer_create_sub(rep, u->root_offset, u->size, &view);
    return view;
}

kiln_status kiln_graph_exec_replace_buffer(kiln_graph_exec *exec, kiln_buffer *recorded,
                                           kiln_buffer *replacement) {
    static const char fn[] = "kiln_graph_exec_replace_buffer";
    const char *missing = KILN__FIRST_NULL3(exec, recorded, replacement);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    kiln_graph *g = exec->graph;
    if (replacement->context != g->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the replacement belongs to another context than the graph", fn);
    if (replacement->size < recorded->size)
        return kiln__error_set(KILN_ERROR_OUT_OF_RANGE, 0,
                               "%s: the replacement has %zu bytes, fewer than the %zu of the "
                               "recorded buffer",
                               fn, replacement->size, recorded->size);
    /* every slot that changes gets its new buffer first (a view can fail),
     * then all are swapped at once */
    size_t n = g->num_nodes, slots = 0;
    for (size_t i = 0; i < n; i++)
        slots += g->nodes[i].num_args + 2;
    kiln_buffer **fresh = kiln__calloc(slots ? slots : 1, sizeof *fresh);
    if (!fresh)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "%s: out of memory", fn);
    kiln_status st = KILN_OK;
    size_t at = 0, used = 0;
    for (size_t i = 0; i < n && st == KILN_OK; i++) {
        const kiln__gnode *nd = &g->nodes[i];
        for (size_t a = 0; a < nd->num_args && st == KILN_OK; a++, at++)
            if (nd->args[a].kind == KILN_ARG_BUFFER &&
                (fresh[at] = kiln__replaced(nd->args[a].value.buffer, recorded, replacement, &st)))
                used++;
        for (int b = 0; b < 2 && st == KILN_OK; b++, at++)
            if ((fresh[at] = kiln__replaced(nd->buf[b], recorded, replacement, &st)))
                used++;
    }
    if (st == KILN_OK && !used)
        st =
            kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                            "%s: the graph does not use the recorded buffer (nor views of it)", fn);
    if (st != KILN_OK) {
        for (size_t i = 0; i < slots; i++)
            kiln_buffer_release(fresh[i]);
        free(fresh);
        return st == KILN_ERROR_INVALID_ARGUMENT ? st : kiln__error_prefix(st, "%s", fn);
    }
    pthread_mutex_lock(&exec->lock);
    at = 0;
    for (size_t i = 0; i < n; i++) {
        const kiln__gnode *nd = &g->nodes[i];
        for (size_t a = 0; a < nd->num_args; a++, at++)
            if (fresh[at]) {
                kiln_buffer_release(exec->x[i].args[a].value.buffer);
                exec->x[i].args[a].value.buffer = fresh[at];
            }
        for (int b = 0; b < 2; b++, at++)
            if (fresh[at]) {
                kiln_buffer_release(exec->x[i].buf[b]);
                exec->x[i].buf[b] = fresh[at];
            }
    }
    if (exec->native) { /* built again, over the new buffers, at the next launch */
        kiln__native_drop(exec);
        exec->stale = 1;
    }
    pthread_mutex_unlock(&exec->lock);
    free(fresh);
    return KILN_OK;
}

/* Enqueues node i of x on queue q after num_wait backend events. */
static kiln_status kiln__node_run(kiln_graph_exec *x, size_t i, kiln_queue *q, size_t num_wait,
                                  void *const *wait, void **out) {
    const kiln__gnode *n = &x->graph->nodes[i];
    const kiln__xnode *xn = &x->x[i];
    const kiln__backend *be = q->backend;
    switch (n->kind) {
    case KILN_GRAPH_NODE_KERNEL: {
        kiln__barg stack[KILN__STACK_ARGS];
        kiln__barg *b = stack;
        if (n->num_args > KILN__STACK_ARGS && !(b = kiln__malloc(n->num_args * sizeof *b)))
            return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory");
        kiln__bargs_of(xn->args, n->num_args, b);
        kiln_status st =
            be->kernel_launch(q->handle, n->kernel->handles[q->device_slot], n->dims, n->global,
                              n->has_local ? n->local : NULL, n->num_args, b, num_wait, wait, out);
        if (b != stack)
            free(b);
        return st == KILN_OK ? st : kiln__error_prefix(st, "kernel '%s'", n->kernel->name);
    }
    case KILN_GRAPH_NODE_COPY:
        return be->buffer_copy(q->handle, xn->buf[0]->handle, n->off[0], xn->buf[1]->handle,
                               n->off[1], n->size, num_wait, wait, out);
    case KILN_GRAPH_NODE_FILL:
        return be->buffer_fill(q->handle, xn->buf[0]->handle, n->pattern, n->pattern_size,
                               n->off[0], n->size, num_wait, wait, out);
    case KILN_GRAPH_NODE_WRITE:
        return be->buffer_write(q->handle, xn->buf[0]->handle, n->off[0], n->size, n->bytes, 0,
                                num_wait, wait, out);
    case KILN_GRAPH_NODE_READ:
        return be->buffer_read(q->handle, xn->buf[0]->handle, n->off[0], n->size, n->host, 0,
                               num_wait, wait, out);
    case KILN_GRAPH_NODE_MARKER:
        return be->queue_marker(q->handle, 0, num_wait, wait, out);
    }
    return kiln__error_set(KILN_ERROR_INTERNAL, 0, "unknown node kind %d", (int)n->kind);
}

/* end, the launch's last backend event, becomes exec's last (the one
 * before released) and the event the caller asked for, if any. */
static void kiln__exec_keep_last(kiln_graph_exec *exec, const kiln__backend *be, kiln__enqueue *e,
                                 kiln_event **event, void *end) {
    if (exec->last)
        exec->last_backend->event_release(exec->last);
    exec->last = end;
    exec->last_backend = be;
    void **out = kiln__enqueue_out(e, event);
    if (out && end) {
        be->event_retain(end);
        *out = end;
    }
}

/* Enqueues node i of exec on an out-of-order queue after the events of
 * the nodes it depends on; exec->events[i] gets its event. */
static kiln_status kiln__node_run_after_deps(kiln_graph_exec *exec, size_t i, kiln_queue *queue) {
    const kiln__gnode *nd = &exec->graph->nodes[i];
    kiln_status st = KILN_OK;
    void *stack[KILN__STACK_ARGS];
    void **deps = stack;
    if (nd->num_deps > KILN__STACK_ARGS && !(deps = kiln__malloc(nd->num_deps * sizeof *deps)))
        st = kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "out of memory");
    for (size_t d = 0; st == KILN_OK && d < nd->num_deps; d++)
        deps[d] = exec->events[nd->deps[d]];
    if (st == KILN_OK)
        st = kiln__node_run(exec, i, queue, nd->num_deps, deps, &exec->events[i]);
    if (deps != stack)
        free(deps);
    return st;
}

/* Enqueues exec's nodes one by one on queue after the num_wait backend
 * events; *end gets the event of the last. Under exec->lock. */
static kiln_status kiln__exec_replay(kiln_graph_exec *exec, kiln_queue *queue, size_t num_wait,
                                     void *const *wait, void **end) {
    const kiln_graph *g = exec->graph;
    const kiln__backend *be = queue->backend;
    int ooo = (queue->flags & KILN_QUEUE_OUT_OF_ORDER) != 0;
    size_t n = g->num_nodes;
    kiln_status st = KILN_OK;
    *end = NULL;
    if (num_wait)
        st = be->queue_marker(queue->handle, 1, num_wait, wait, NULL);
    /* the commands that run: marker nodes on an in-order queue add nothing */
    size_t last = n;
    for (size_t i = 0; i < n; i++)
        if (ooo || g->nodes[i].kind != KILN_GRAPH_NODE_MARKER)
            last = i;
    for (size_t i = 0; i < n && st == KILN_OK; i++) {
        if (ooo)
            st = kiln__node_run_after_deps(exec, i, queue);
        else if (g->nodes[i].kind != KILN_GRAPH_NODE_MARKER)
            st = kiln__node_run(exec, i, queue, 0, NULL, i == last ? end : NULL);
    }
    if (ooo) {
        for (size_t i = 0; i < n; i++)
            if (exec->events[i]) {
                be->event_release(exec->events[i]);
                exec->events[i] = NULL;
            }
    }
    if (st == KILN_OK && (ooo || !*end))
        st = be->queue_marker(queue->handle, 0, 0, NULL, end);
    return st;
}

kiln_status kiln_graph_exec_launch(kiln_queue *queue, kiln_graph_exec *exec, size_t num_wait,
                                   kiln_event *const *wait, kiln_event **event) {
    static const char fn[] = "kiln_graph_exec_launch";
    if (event)
        *event = NULL;
    const char *missing = KILN__FIRST_NULL2(queue, exec);
    if (missing)
        return kiln__error_set(KILN_ERROR_NULL_HANDLE, 0, "%s: %s is NULL", fn, missing);
    kiln_graph *g = exec->graph;
    if (queue->context != g->context)
        return kiln__error_set(KILN_ERROR_MISMATCH, 0,
                               "%s: the queue belongs to another context than the graph", fn);
    kiln__enqueue e;
    kiln_status st = kiln__graph_or_begin(&e, fn, queue, num_wait, wait, event);
    if (st != KILN_OK)
        return st;
    if (e.graph)
        return kiln__graph_refuse(e.graph, fn, "a graph launch is not recorded into another graph");
    const kiln__backend *be = queue->backend;
    void *end = NULL;
    pthread_mutex_lock(&exec->lock);
    if (exec->stale)
        kiln__native_build(exec);
    if (exec->native && queue->device_slot == g->origin_slot) {
        st = kiln__native_table(g)->launch(queue->handle, exec->native, num_wait, e.wait, &end);
        /* KILN_ERROR_UNSUPPORTED: not on this queue, or not now: replayed */
        if (st != KILN_ERROR_UNSUPPORTED) {
            if (st == KILN_OK)
                kiln__exec_keep_last(exec, be, &e, event, end);
            pthread_mutex_unlock(&exec->lock);
            return kiln__enqueue_end(&e, fn, st, queue, event);
        }
    }
    st = kiln__exec_replay(exec, queue, num_wait, e.wait, &end);
    if (st != KILN_OK) {
        /* part of the graph may be enqueued: let it end before reporting */
        kiln_status failed = st;
        be->queue_finish(queue->handle);
        pthread_mutex_unlock(&exec->lock);
        if (end)
            be->event_release(end);
        kiln__enqueue_end(&e, NULL, failed, queue, event);
        return kiln__error_prefix(failed, "%s", fn);
    }
    kiln__exec_keep_last(exec, be, &e, event, end);
    pthread_mutex_unlock(&exec->lock);
    return kiln__enqueue_end(&e, fn, KILN_OK, queue, event);
}
