/* The core's object layouts, shared by the src/core files.
 *
 * Every object holds its backend table and its backend handle, so that a
 * call goes straight from the public function to the driver with no lookup.
 * Reference counts are C11 atomics: objects are shared between host threads
 * and kiln's callback thread. */
#ifndef KILN_CORE_INTERNAL_H
#define KILN_CORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "backend/backend.h"
#include "base/error.h"
#include "base/lock.h"
#include "base/refcount.h"
#include "core/signature.h"
#include "kiln.h"

/* Wait lists and argument lists up to this length live on the stack. */
#define KILN__STACK_ARGS 16

struct kiln_device {
    kiln__bdevice b; /* as the backend reported it */
    const kiln__backend *backend;
    size_t index; /* position in kiln_device_at order */
};

/* One compiled program for one device, kept by the context's memory cache
 * (keyed by the cache key) for the context's lifetime. */
typedef struct kiln__built {
    struct kiln__built *next; /* hash chain */
    char key[65];
    void *handle;  /* backend program */
    char *log;     /* build log (warnings), never NULL */
    int from_disk; /* 1 if loaded from the disk cache */
} kiln__built;

#define KILN__BUILT_BUCKETS 64

/* The context's memory pool (pool.c). */
typedef struct kiln__pool_block kiln__pool_block;
typedef struct kiln__pool {
    kiln__lock lock; /* guards everything below */
    int disabled;
    size_t max_cached;              /* 0: no limit */
    kiln__pool_block *ready;        /* cached, free to hand out */
    kiln__pool_block *waiting;      /* cached, behind a fence of queued work, */
    kiln__pool_block *waiting_tail; /* oldest first */
    kiln_queue *queues;             /* the context's live queues */
    void **retired;                 /* markers of freed queues, not yet seen complete */
    size_t num_retired, cap_retired;
    kiln_pool_stats stats;
} kiln__pool;

struct kiln_context {
    atomic_int refs;
    const kiln__backend *backend;
    void *handle;
    size_t num_devices;
    kiln_device **devices;
    pthread_mutex_t lock; /* guards the memory cache */
    kiln__built *built[KILN__BUILT_BUCKETS];
    atomic_int handles;                /* the caller's references and queues */
    struct kiln__attachment *attached; /* kiln_context_attach (attach.c) */
    kiln__pool pool;                   /* pool.c */
    unsigned char failed_wait_hangs;   /* a PoCL device: see waitlist.c */
};

struct kiln_queue {
    atomic_int refs;
    const kiln__backend *backend;
    void *handle;
    kiln_context *context;
    kiln_device *device;
    size_t device_slot; /* index of device in context->devices */
    unsigned flags;
    unsigned serial; /* 1, 2, ... in creation order (the timeline's rows) */
    /* Backend events of the commands enqueued with a wait list since the
     * last kiln_queue_finish: the ones that can fail without faulting, and
     * that the drivers' own finish keeps quiet about (waitlist.c). */
    pthread_mutex_t watch_lock;
    void **watch;
    size_t num_watch, cap_watch;
    int watch_failed;      /* a pruned watched event had failed */
    kiln_queue *pool_next; /* the context's queue list (pool.c) */
    /* The graph this queue records into (graph.c), NULL when it runs
     * commands. */
    _Atomic(struct kiln_graph *) rec;
};

struct kiln_buffer {
    atomic_int refs;
    const kiln__backend *backend;
    void *handle;
    kiln_context *context;
    kiln_buffer *parent; /* sub-buffers hold their parent */
    kiln_buffer *root;   /* the top-level buffer (self if none) */
    size_t root_offset;  /* offset of this view in root */
    size_t size;
    struct kiln__mapped *mapped; /* live kiln_buffer_map pointers (buffer.c) */
    kiln__pool_block *block;     /* a pooled root buffer's block, else NULL */
};

struct kiln_program {
    atomic_int refs;
    const kiln__backend *backend;
    kiln_context *context;
    kiln__built **built; /* one per context device (owned by context) */
    kiln__sig_list sigs; /* kernels parsed from the user's source */
};

struct kiln_kernel {
    atomic_int refs;
    const kiln__backend *backend;
    kiln_program *program;
    kiln_context *context;
    const kiln__sig *sig; /* NULL if the parser did not find it */
    char *name;
    void **handles; /* one backend kernel per context device */
};

struct kiln_event {
    atomic_int refs;
    const kiln__backend *backend;
    void *handle; /* backend event */
    kiln_context *context;
    unsigned char profiling;  /* made on a profiling queue */
    unsigned char user;       /* made by kiln_event_create_user */
    atomic_int user_set;      /* user event completed already */
    atomic_int failed;        /* a user event kiln set to an error (kiln__event_user_end) */
    char label[80];           /* "kernel 'name'" for a launch, else "":
                                 a failed wait names what failed */
    struct kiln_graph *graph; /* an event of a recorded command (graph.c):
                                 no handle; held */
    size_t node;              /* its node */
};

/* buildlog.c: after a failed build of final (whose first prelude_lines
 * lines are the backend's prelude), returns a copy of the compiler's log
 * (malloc'd; NULL if out of memory) with line references mapped back to the
 * user's source when the compiler ignored the #line directives, followed by
 * the source lines the errors point at. where (if not NULL) gets the first
 * of those as "label:line: text" ("" if none). */
char *kiln__build_log_map(const char *final, size_t prelude_lines, const char *log, char *where,
                          size_t where_cap);

/* device.c: makes sure the backends are loaded; returns the status. */
kiln_status kiln__registry_init(void);

/* context.c, queue.c: the one constructor of each, shared by the create
 * calls and the native wrappers (interop.c), which differ only in how the
 * backend handle is made. make gets arg and returns a status already
 * prefixed with the caller's name; fn names the caller in other errors.
 * The devices (and the queue's device slot) are checked by the caller. */
typedef kiln_status (*kiln__context_make)(const void *arg, const kiln__bdevice *const *bdevs,
                                          size_t num_devices, void **handle);
kiln_status kiln__context_new(const char *fn, kiln_device *const *devices, size_t num_devices,
                              kiln__context_make make, const void *arg, kiln_context **context);
typedef kiln_status (*kiln__queue_make)(const void *arg, kiln_context *context, kiln_device *device,
                                        unsigned flags, void **handle);
kiln_status kiln__queue_new(const char *fn, kiln_context *context, size_t slot, unsigned flags,
                            kiln__queue_make make, const void *arg, kiln_queue **queue);

/* buffer.c: fills in a new whole buffer (not a view) of size bytes on
 * context (its handle is the caller's to set): one reference, and one on
 * the context. */
void kiln__buffer_init_root(kiln_buffer *b, kiln_context *context, size_t size);

/* buffer.c: the one door to the backends' allocators (a fault-injection
 * site): allocates, and on running out of memory empties the context's
 * pool and tries once more. */
kiln_status kiln__buffer_alloc(kiln_context *context, size_t size, unsigned flags,
                               const void *host_data, void **handle);

/* pool.c. init/destroy with the context (destroy frees every cached block;
 * no pooled buffer is live then). */
void kiln__pool_init(kiln_context *context);
void kiln__pool_destroy(kiln_context *context);
/* 1 if pooled allocations are on for the context. */
int kiln__pool_enabled(kiln_context *context);
/* A block of size's class for b (b->handle and b->block set). */
kiln_status kiln__pool_alloc(kiln_context *context, size_t size, unsigned flags, kiln_buffer *b);
/* A pooled root buffer's block comes back (keep 0: free it instead). */
void kiln__pool_put(kiln_context *context, kiln__pool_block *block, int keep);
/* Frees cached blocks until at most keep bytes stay; returns bytes freed. */
size_t kiln__pool_trim(kiln_context *context, size_t keep);
/* queue.c: a queue joins the context's list when made and leaves it when
 * freed (before its backend queue goes). */
void kiln__pool_queue_add(kiln_queue *queue);
void kiln__pool_queue_remove(kiln_queue *queue);

/* context.c: core objects (buffers, programs, events) hold the context
 * with these; they do not count as handles (see context.c). */
void kiln__context_retain(kiln_context *context);
void kiln__context_unref(kiln_context *context);
/* attach.c: destroys the attached data (when the last handle goes). */
void kiln__context_drop_attachments(kiln_context *context);

/* event.c, waitlist.c, queue.c (kiln__nothing_done) */
/* Wraps a backend event (taking over its reference) into a new kiln_event.
 * On allocation failure releases the backend event. */
kiln_status kiln__event_wrap(kiln_context *context, void *handle, int profiling,
                             kiln_event **event);
/* A kiln_event with no backend event yet (set ->handle before use), and its
 * disposal while the handle is still unset. */
kiln_event *kiln__event_alloc(kiln_context *context, void *handle, int profiling);
void kiln__event_discard(kiln_event *event);
/* A new user event of the context (not yet complete). */
kiln_status kiln__event_user_new(kiln_context *context, kiln_event **event);
/* A completed event on the context (for operations that do nothing). */
kiln_status kiln__event_completed(kiln_context *context, kiln_event **event);
/* Completes a user event (failed: to an error), marking a failed one so
 * that later wait lists stand a completed event in for it (waitlist.c). */
kiln_status kiln__event_user_end(kiln_event *event, int failed);
/* The event (if asked for) of an operation that has nothing to do: complete
 * at once, or a marker over its wait list when it has one. */
kiln_status kiln__nothing_done(kiln_queue *queue, size_t num_wait, kiln_event *const *wait,
                               kiln_event **event);
/* Translates a public wait list into backend events. An event of another
 * context is replaced by a user event of this one that completes when it
 * does (the host bridges devices and backends). storage has
 * KILN__STACK_ARGS entries; a longer list, or one with such stand-ins, is
 * allocated. Always pair with kiln__wait_list_free (after the enqueue). */
kiln_status kiln__wait_list(kiln_context *context, size_t num_wait, kiln_event *const *wait,
                            void **storage, void *const **out);
void kiln__wait_list_free(void *const *list, void **storage, size_t num_wait);
/* The frame of an enqueue: begin translates the wait list (for the backend
 * call: num_wait entries in e.wait, and &e.event where an event is asked
 * for); end frees it, then wraps the backend event into *event (when
 * st is KILN_OK and event is not NULL). Both prefix their failures with fn
 * (unless fn is NULL) and pass a failing st through. The kiln_event for
 * *event is allocated by begin, before anything is enqueued: a command
 * that has been enqueued is never reported as failed for want of memory
 * (its caller would reclaim memory the command still uses). */
typedef struct kiln__enqueue {
    void *storage[KILN__STACK_ARGS];
    void *const *wait;
    size_t num_wait;
    void *event;
    const char *name;         /* the command's name on the timeline */
    uint64_t enqueued_ns;     /* host clock at enqueue; 0 when no trace is on */
    kiln_event *wrapper;      /* allocated by begin when an event is asked for */
    int nvtx;                 /* an NVTX range was pushed by begin (nvtx.c) */
    struct kiln_graph *graph; /* kiln__graph_or_begin: the graph recording it */
} kiln__enqueue;

/* NVTX ranges around enqueues (nvtx.c): push returns 1 when it pushed one
 * (a profiler is attached and kiln was built with NVTX), and then end pops
 * it on the same thread. */
int kiln__nvtx_push(const char *name);
void kiln__nvtx_pop(void);

/* 1 when called on the kiln-callback thread (callback.c). */
int kiln__on_callback_thread(void);

/* The timeline (trace.c). */
int kiln__trace_on(void);
uint64_t kiln__trace_now_ns(void);
void kiln__trace_command(kiln_queue *queue, const char *name, uint64_t enqueued_ns,
                         kiln_event *event);
kiln_status kiln__enqueue_begin(kiln__enqueue *e, const char *fn, kiln_queue *queue,
                                size_t num_wait, kiln_event *const *wait, kiln_event **event);
kiln_status kiln__enqueue_end(kiln__enqueue *e, const char *fn, kiln_status st, kiln_queue *queue,
                              kiln_event **event);
/* Where the backend call puts its event: &e->event when the caller asked
 * for one, the command waits on others (the queue watches it) or a trace
 * records every command (trace.c), else NULL. */
void **kiln__enqueue_out(kiln__enqueue *e, kiln_event **event);
/* After the queue has finished: KILN_ERROR_EVENT_FAILED (with a message) if
 * a watched command failed, and forgets them all. */
kiln_status kiln__queue_watch_check(kiln_queue *queue);
void kiln__queue_watch_clear(kiln_queue *queue);
/* 1 if a watched command has not ended yet. */
int kiln__queue_watch_pending(kiln_queue *queue);

/* Command graphs (graph.c). kiln__graph_of: the graph a command on queue
 * with this wait list is recorded into (NULL: run it), joining the queue
 * to a recording one of its wait events belongs to; an error for events
 * that cannot be waited on there. The add functions record a command whose
 * arguments the caller has checked (fn names it in messages). */
kiln_status kiln__graph_of(const char *fn, kiln_queue *queue, size_t num_wait,
                           kiln_event *const *wait, struct kiln_graph **graph);
/* kiln__graph_of into e->graph, then, when that is NULL, kiln__enqueue_begin. */
kiln_status kiln__graph_or_begin(kiln__enqueue *e, const char *fn, kiln_queue *queue,
                                 size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* A checked command on queue: recorded by record while queue records
 * into a graph, else enqueued by run (the backend call, given the
 * translated wait list and where its event goes) inside an enqueue frame. */
typedef kiln_status (*kiln__cmd_record)(struct kiln_graph *graph, kiln_queue *queue,
                                        const void *arg, size_t num_wait, kiln_event *const *wait,
                                        kiln_event **event);
typedef kiln_status (*kiln__cmd_run)(kiln_queue *queue, const void *arg, size_t num_wait,
                                     void *const *wait, void **out);
kiln_status kiln__command(const char *fn, kiln_queue *queue, kiln__cmd_record record,
                          kiln__cmd_run run, const void *arg, size_t num_wait,
                          kiln_event *const *wait, kiln_event **event);
kiln_status kiln__graph_add_launch(struct kiln_graph *g, kiln_queue *q, kiln_kernel *kernel,
                                   unsigned dims, const size_t *global, const size_t *local,
                                   size_t num_args, const kiln_arg *args, size_t num_wait,
                                   kiln_event *const *wait, kiln_event **event);
kiln_status kiln__graph_add_copy(struct kiln_graph *g, kiln_queue *q, kiln_buffer *src,
                                 size_t src_offset, kiln_buffer *dst, size_t dst_offset,
                                 size_t size, size_t num_wait, kiln_event *const *wait,
                                 kiln_event **event);
kiln_status kiln__graph_add_fill(struct kiln_graph *g, kiln_queue *q, kiln_buffer *buffer,
                                 const void *pattern, size_t pattern_size, size_t offset,
                                 size_t size, size_t num_wait, kiln_event *const *wait,
                                 kiln_event **event);
kiln_status kiln__graph_add_transfer(struct kiln_graph *g, kiln_queue *q, int to_device,
                                     kiln_buffer *buffer, size_t offset, size_t size, void *host,
                                     size_t num_wait, kiln_event *const *wait, kiln_event **event);
kiln_status kiln__graph_add_marker(struct kiln_graph *g, kiln_queue *q, int barrier,
                                   size_t num_wait, kiln_event *const *wait, kiln_event **event);
/* A call that cannot be recorded, made on a recording queue (or on an
 * event of a recorded command: g from the event): spoils the recording and
 * returns KILN_ERROR_WRONG_STATE naming fn and why. */
kiln_status kiln__graph_refuse(struct kiln_graph *g, const char *fn, const char *why);
#define KILN__RECORDED_WHY                                                                \
    "the event stands for a command recorded into a graph, which never runs itself (use " \
    "kiln_graph_exec_launch's event)"
/* The recording a queue or event belongs to (NULL if none). */
#define kiln__queue_rec(q) atomic_load_explicit(&(q)->rec, memory_order_acquire)
/* A test hook (tests/test_graph_native.c): when set, graph.c builds native
 * graphs through this table instead of the backend's own. */
extern const struct kiln__backend_graph *kiln__graph_test_table;
/* An event's last release drops its graph (event.c). */
void kiln__graph_unref(struct kiln_graph *g);
/* kernel.c: checks args[i] against parameter p (NULL when unknown) and
 * fills *out (graph.c checks kiln_graph_exec_set_arg with it). */
kiln_status kiln__kernel_arg_check(const kiln_kernel *k, const kiln_context *ctx, size_t i,
                                   const kiln_arg *a, kiln__barg *out);

#endif
