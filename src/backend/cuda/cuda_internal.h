/* The CUDA backend's internals: the driver and NVRTC entry points loaded with
 * dlopen, and the objects behind the backend's opaque handles.
 *
 * ABI versions: every driver entry point is resolved by the exact symbol
 * name that cuda.h's own macros map the plain name to (cuMemAlloc ->
 * cuMemAlloc_v2, cuEventElapsedTime -> cuEventElapsedTime_v2, ...), and its
 * pointer type is __typeof__ of that very prototype. So a function is always
 * called with the ABI that the header we compiled against declares; a
 * driver that lacks the symbol is refused at load time, never mis-called.
 *
 * Contexts: each device's primary context. Any host thread may call the
 * backend, so every entry point makes the right context current first
 * (kiln__cu_ctx_use). */
#ifndef KILN_BACKEND_CUDA_INTERNAL_H
#define KILN_BACKEND_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <nvrtc.h>

#include "backend/backend.h"
#include "backend/cuda/nvrtc_tools.h"

/* Driver functions used by the backend. X(name) is expanded with cuda.h's
 * macros applied, so `name` becomes the versioned symbol. */
#define KILN__CU_DRIVER_FUNCS(X)                   \
    X(cuInit)                                      \
    X(cuDriverGetVersion)                          \
    X(cuGetErrorName)                              \
    X(cuGetErrorString)                            \
    X(cuDeviceGetCount)                            \
    X(cuDeviceGet)                                 \
    X(cuDeviceGetName)                             \
    X(cuDeviceTotalMem)                            \
    X(cuDeviceGetAttribute)                        \
    X(cuDeviceCanAccessPeer)                       \
    X(cuDevicePrimaryCtxRetain)                    \
    X(cuDevicePrimaryCtxRelease)                   \
    X(cuCtxSetCurrent)                             \
    X(cuCtxGetCurrent)                             \
    X(cuCtxSynchronize)                            \
    X(cuCtxEnablePeerAccess)                       \
    X(cuCtxPushCurrent)                            \
    X(cuCtxPopCurrent)                             \
    X(cuCtxGetDevice)                              \
    X(cuStreamGetCtx)                              \
    X(cuStreamCreate)                              \
    X(cuStreamDestroy)                             \
    X(cuStreamSynchronize)                         \
    X(cuStreamWaitEvent)                           \
    X(cuStreamAddCallback)                         \
    X(cuLaunchHostFunc)                            \
    X(cuStreamWaitValue32)                         \
    X(cuEventCreate)                               \
    X(cuEventDestroy)                              \
    X(cuEventRecord)                               \
    X(cuEventQuery)                                \
    X(cuEventSynchronize)                          \
    X(cuMemAlloc)                                  \
    X(cuMemFree)                                   \
    X(cuMemAllocHost)                              \
    X(cuMemHostAlloc)                              \
    X(cuMemFreeHost)                               \
    X(cuMemPoolCreate)                             \
    X(cuMemPoolDestroy)                            \
    X(cuMemPoolSetAttribute)                       \
    X(cuMemAllocFromPoolAsync)                     \
    X(cuMemFreeAsync)                              \
    X(cuMemHostGetDevicePointer)                   \
    X(cuPointerGetAttributes)                      \
    X(cuMemcpyHtoD)                                \
    X(cuMemcpyHtoDAsync)                           \
    X(cuMemcpyDtoHAsync)                           \
    X(cuMemcpyDtoDAsync)                           \
    X(cuMemsetD8Async)                             \
    X(cuMemsetD16Async)                            \
    X(cuMemsetD32Async)                            \
    X(cuMemsetD2D32Async)                          \
    X(cuModuleLoadData)                            \
    X(cuModuleUnload)                              \
    X(cuModuleGetFunction)                         \
    X(cuFuncGetAttribute)                          \
    X(cuFuncSetAttribute)                          \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
    X(cuLaunchKernel)

#define KILN__CU_NVRTC_FUNCS(X)  \
    X(nvrtcGetErrorString)       \
    X(nvrtcVersion)              \
    X(nvrtcGetNumSupportedArchs) \
    X(nvrtcGetSupportedArchs)    \
    X(nvrtcCreateProgram)        \
    X(nvrtcDestroyProgram)       \
    X(nvrtcCompileProgram)       \
    X(nvrtcGetProgramLogSize)    \
    X(nvrtcGetProgramLog)        \
    X(nvrtcGetCUBINSize)         \
    X(nvrtcGetCUBIN)             \
    X(nvrtcGetPTXSize)           \
    X(nvrtcGetPTX)

#define KILN__CU_FIELD(name) __typeof__(name) *name;

typedef struct kiln__cu_api {
    KILN__CU_DRIVER_FUNCS(KILN__CU_FIELD)
    /* cuEventElapsedTime_v2 (CUDA >= 12.8 drivers) or the older symbol:
     * both have this same prototype. */
    CUresult (*elapsed)(float *ms, CUevent start, CUevent end);
    KILN__CU_NVRTC_FUNCS(KILN__CU_FIELD)
    int driver_version; /* cuDriverGetVersion: 13000 for 13.0 */
    int have_nvrtc;     /* NVRTC loaded */
    int nvrtc_major, nvrtc_minor;
    char nvrtc_error[512]; /* why NVRTC did not load */
    char nvrtc_path[256];  /* which library did */
} kiln__cu_api;

#undef KILN__CU_FIELD

/* The loaded API; valid after a successful load() (kiln__cu_api_get returns NULL
 * before). */
extern kiln__cu_api kiln__cu;
const kiln__cu_api *kiln__cuda_api(void);
kiln_status kiln__cuda_load(void);

/* "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory" as the thread's
 * error; returns the kiln status that fits the CUresult. */
kiln_status kiln__cu_fail(const char *call, CUresult r);
kiln_status kiln__cu_status_of(CUresult r);
const char *kiln__cu_err_name(CUresult r);
/* Host CLOCK_MONOTONIC in ns. */
uint64_t kiln__cu_now_ns(void);

/* Makes c current on this thread (no-op if it already is). */
kiln_status kiln__cu_ctx_use(CUcontext c);

/* ---- objects ------------------------------------------------------------ */

typedef struct kiln__cu_dev {
    int ordinal;
    CUdevice dev;
    CUcontext ctx; /* retained primary context */
    unsigned cc;   /* major*10 + minor */
    int max_threads, max_block[3], max_grid[3];
    /* dynamic shared memory a launch may use: the opt-in limit
     * (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 227 KiB on
     * Hopper); above the default 48 KiB the kernel's attribute is raised */
    size_t shared_per_block, shared_default;
    /* fill.c's kernel: state 0 not loaded, 1 loaded, -1 refused */
    int fill_state;
    CUmodule fill_module;
    CUfunction fill_fn;
} kiln__cu_dev;

struct kiln__cu_queue;

/* Stream-ordered device memory of a one-device context (memory.c): a
 * memory pool of kiln's own, a stream that allocates (and is waited for at
 * once: it never waits for anything) and one that frees, each free
 * enqueued behind events of every stream that may still use the memory.
 * So a release never synchronises the device: cuMemFree does, holding a
 * driver lock that every other CUDA call then waits for, and with work
 * gated behind a user event that the caller has yet to set, that was a
 * deadlock (test_pool on an H100). */
typedef struct kiln__cu_mem {
    pthread_mutex_t lock;
    int state; /* 0: not tried yet, 1: ready, -1: none */
    CUmemoryPool pool;
    CUstream alloc_stream, free_stream;
    struct kiln__cu_queue *queues; /* live queues of the context */
    CUevent *retired;              /* the last work of released queues */
    size_t num_retired, cap_retired;
} kiln__cu_mem;

typedef struct kiln__cu_context {
    atomic_int refs;
    kiln__cu_mem mem;
    pthread_mutex_t fill_lock; /* fill.c's lazy module loads */
    size_t n;
    kiln__cu_dev dev[]; /* buffers live on dev[0] */
} kiln__cu_context;

/* memory.c: queues join and leave the context's list of streams that a
 * stream-ordered free waits for. */
void kiln__cu_mem_queue_add(kiln__cu_context *c, struct kiln__cu_queue *q);
void kiln__cu_mem_queue_remove(kiln__cu_context *c, struct kiln__cu_queue *q);
void kiln__cu_mem_destroy(kiln__cu_context *c);

void kiln__cu_context_unref(kiln__cu_context *c);

/* fill.c: fills of at least this many bytes of device memory whose
 * pattern repeats every 1..16 bytes run as a kernel (*done = 1) when the
 * driver loads it; otherwise *done = 0 and the caller uses memsets. */
#define KILN__CU_FILL_KERNEL_MIN ((size_t)1 << 20)
kiln_status kiln__cu_fill_kernel(kiln__cu_context *c, kiln__cu_dev *d, CUstream stream,
                                 CUdeviceptr dst, const unsigned char *pattern, size_t ps,
                                 size_t size, int *done);
void kiln__cu_fill_unload(kiln__cu_dev *d);
void kiln__cu_context_ref(kiln__cu_context *c);
/* Index of the ordinal in c, or -1. */
int kiln__cu_context_find(const kiln__cu_context *c, int ordinal);

struct kiln__cu_event;

/* Streams of an out-of-order queue: commands without a wait list between
 * them go to these in turn, so they may run concurrently. */
#define KILN__CU_LANES 4

typedef struct kiln__cu_queue {
    atomic_int refs; /* the core's + one per live event */
    kiln__cu_context *ctx;
    kiln__cu_dev *dev;
    /* the stream of the command being enqueued (set under lock by
     * kiln__cu_submit; an in-order queue has only lanes[0]) */
    CUstream stream;
    CUstream lanes[KILN__CU_LANES];
    int nlanes; /* 1: in order; KILN__CU_LANES: out of order */
    /* host gating (gate.c): commands held back on the host, in order,
     * while they wait for an unset user event (or, in order, behind one
     * that does); under lock. held_cond: signalled when the list empties */
    struct kiln__cu_held *held_head, *held_tail;
    int held_barrier; /* out of order: a held barrier holds what follows */
    int gated;        /* in gate.c's list of queues with held commands */
    int native;       /* its CUstream was handed out (or is the user's):
                         no host gating, streams wait on user events */
    pthread_cond_t held_cond;
    unsigned next_lane;
    CUstream notify_stream; /* lazily made: stream callbacks for notify */
    int profiling;
    pthread_mutex_t lock; /* one command (waits, records, work) at a time */
    /* profiling: an event recorded (and waited for) when the queue was made,
     * at host time base_ns; device times are base_ns + elapsed(base, x) */
    CUevent base;
    uint64_t base_ns;
    /* recycled events of this queue */
    pthread_mutex_t pool_lock;
    struct kiln__cu_event *pool;
    size_t pool_size;
    int borrowed;                    /* a user's stream (interop.c): never destroyed */
    struct kiln__cu_queue *mem_next; /* the context's list (kiln__cu_mem) */
} kiln__cu_queue;

void kiln__cu_queue_ref(kiln__cu_queue *q);
void kiln__cu_queue_unref(kiln__cu_queue *q);

typedef struct kiln__cu_event {
    atomic_int refs;
    int is_user;
    kiln__cu_queue *queue; /* command events: holds a queue reference */
    kiln__cu_context *ctx; /* user events: holds a context reference */
    CUevent start;         /* profiling queues only */
    CUevent end;
    CUstream stream;    /* command events: the stream it was recorded on */
    uint64_t queued_ns; /* host time at enqueue */
    /* user events of the wait list (flattened, retained): the command
     * reports failure if one of them failed */
    struct kiln__cu_event **deps;
    size_t num_deps, cap_deps;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done; /* user: set; command: known complete */
    int failed;
    /* command events: 1 while the command is held on the host (gate.c) and
     * its CUevents are not recorded yet (one held command that could not
     * be submitted afterwards ends failed, its CUevents never recorded) */
    int held;
    /* user events only */
    int slot;                      /* index of the pinned flag word */
    uint32_t target;               /* the value that means "set" */
    struct kiln__cu_notify *notes; /* pending notify callbacks (user
                                      events; held command events) */
    struct kiln__cu_event *next_free;
} kiln__cu_event;

/* event.c: frees an event that is not pooled; its CUDA events only with
 * destroy_cuda_events (the device's context is current). */
void kiln__cu_event_free(kiln__cu_event *e, int destroy_cuda_events);

/* A new command event for q, holding one reference (and one on q). */
kiln_status kiln__cu_event_new(kiln__cu_queue *q, kiln__cu_event **out);
void kiln__cu_event_retain(void *e);
void kiln__cu_event_release(void *e);
/* Enqueue on q->stream what must come before a command: waits for the wait
 * list, collecting failing user events into ev (may be NULL); *failed
 * (may be NULL) tells whether something in the list has failed already.
 * Call with q->lock held and the context current. */
kiln_status kiln__cu_wait_list(kiln__cu_queue *q, size_t num_wait, void *const *wait,
                               kiln__cu_event *ev, int *failed);
/* 1 while a wait on e could not be expressed on a stream: e is a user
 * event not yet set, or a command event still held on the host. */
int kiln__cu_event_pending(kiln__cu_event *e);
/* Registers notify callbacks kept on a held event (after it was
 * submitted; q->lock not held). */
void kiln__cu_event_attach_notes(kiln__cu_event *e);
/* Record the start (profiling) of ev, with q->lock held. */
kiln_status kiln__cu_event_begin(kiln__cu_queue *q, kiln__cu_event *ev);
/* Record the end of ev, with q->lock held. */
kiln_status kiln__cu_event_end(kiln__cu_queue *q, kiln__cu_event *ev);
/* Objects whose last reference drops inside a driver callback (where CUDA
 * calls are forbidden) are destroyed later by the next ordinary call. */
void kiln__cu_reap(void);
extern _Thread_local int kiln__cu_in_callback;

/* ---- commands and host gating (queue.c, gate.c) ------------------------
 *
 * Every command is an operation type and its arguments. kiln__cu_enqueue
 * runs it at once on the queue's stream, or holds it on the host when its
 * wait list holds something a stream cannot wait for yet (a user event
 * not set: a stream cannot skip a command, so one behind a user event that
 * fails would still run) or, on an in-order queue, when a command before
 * it is held. Held commands go to the stream, in order, when what they
 * wait for completes (kiln__cu_gate_kick); a command whose wait list has
 * failed is not run at all: only its event is recorded, failed. */
typedef struct kiln__cu_optype {
    /* the work, on q->stream (q->lock held, the context current) */
    kiln_status (*run)(kiln__cu_queue *q, void *args);
    /* a heap copy of args for a held command, owning what it needs later
     * (buffers and programs retained, caller's bytes copied where the call
     * promises they may change on return); NULL when out of memory */
    void *(*hold)(const void *args);
    void (*drop)(void *held); /* frees what hold made */
} kiln__cu_optype;

/* Ordering of a command on an out-of-order queue. */
enum {
    KILN__CU_JOINS = 1,  /* waits for every command enqueued before it */
    KILN__CU_BARRIER = 2 /* and every later command waits for it */
};

/* Enqueues one command: event when want_event or blocking; blocking waits
 * for it. */
kiln_status kiln__cu_enqueue(kiln__cu_queue *q, size_t num_wait, void *const *wait, int want_event,
                             int blocking, unsigned order, const kiln__cu_optype *type, void *args,
                             void **out_event);
/* Runs a command on the stream now: lane, wait list, events, work (none
 * when the wait list failed). q->lock held, context current. */
kiln_status kiln__cu_submit(kiln__cu_queue *q, const kiln__cu_optype *type, void *args,
                            size_t num_wait, void *const *wait, kiln__cu_event *ev);

typedef struct kiln__cu_held {
    struct kiln__cu_held *next;
    const kiln__cu_optype *type;
    void *args;  /* type->hold's copy */
    void **wait; /* retained */
    size_t num_wait;
    kiln__cu_event *ev; /* retained; ev->held */
    unsigned order;
} kiln__cu_held;

/* gate.c. With q->lock held: whether a command must be held. */
int kiln__cu_gate_must_hold(kiln__cu_queue *q, unsigned order, size_t num_wait, void *const *wait);
/* With q->lock held: holds a command (makes *ev when NULL). */
kiln_status kiln__cu_gate_hold(kiln__cu_queue *q, const kiln__cu_optype *type, const void *args,
                               unsigned order, size_t num_wait, void *const *wait,
                               kiln__cu_event **ev);
/* After a user event completed: submits every held command that can go.
 * On a driver thread (no CUDA calls there) kiln's gate thread does it. */
void kiln__cu_gate_kick(void);
/* Blocks until q holds no command (q->lock held; it is released while
 * waiting). */
void kiln__cu_gate_drain_wait(kiln__cu_queue *q);
/* Submits every held command now, those behind unset user events with
 * stream-side waits (they will run even if the event fails): for code that
 * puts work on a stream kiln does not see (q->lock not held). */
void kiln__cu_gate_flush_all(void);
/* q's stream is handed out: q stops holding commands, for good (what it
 * holds goes to the stream now). */
kiln_status kiln__cu_gate_go_native(kiln__cu_queue *q);

/* ---- pinned staging memory (stage.c) ----------------------------------
 *
 * CUDA's "API synchronization behavior": a DtoH copy into pageable host
 * memory returns only once the copy has completed, and an HtoD copy from
 * pageable memory may synchronise with the stream first. Behind a command
 * that waits for an unset user event, either would block the host forever.
 * So a non-blocking transfer to or from memory that CUDA does not know as
 * page-locked goes through a pinned staging block: the DMA uses the block,
 * and a host function (cuLaunchHostFunc) ordered in the stream does the
 * memcpy to the user's memory and hands the block back. Blocks come from a
 * process-wide pool of portable pinned memory (pinned allocations are
 * slow); they are freed only where the backend synchronises anyway. */
typedef struct kiln__cu_stage {
    void *host; /* pinned, portable */
    size_t cap;
    int cls;       /* size class: cap == 1 << cls */
    CUcontext ctx; /* the (kept) primary context that allocated it */
    struct kiln__cu_stage *next;
} kiln__cu_stage;

/* A block of at least n bytes; the context of d must be current. */
kiln_status kiln__cu_stage_get(kiln__cu_dev *d, size_t n, kiln__cu_stage **out);
/* Back to the pool (no CUDA call: safe in a host function). */
void kiln__cu_stage_put(kiln__cu_stage *s);
/* Frees pooled blocks of ctx beyond the pool's budget. cuMemFreeHost may
 * synchronise: call only right after ctx was synchronised anyway. */
void kiln__cu_stage_trim(CUcontext ctx);
/* 1 if [p, p+n) lies in one page-locked host allocation CUDA knows
 * (cuMemHostAlloc, cuMemAllocHost, cuMemHostRegister), not managed. */
int kiln__cu_host_pinned(const void *p, size_t n);
/* Keeps d's primary context alive for the life of the process: pinned
 * memory that outlives kiln's contexts (the pool, user event words) would
 * otherwise be freed when the last kiln context of d releases it. */
kiln_status kiln__cu_keep_primary(kiln__cu_dev *d);
/* cuMemHostAlloc(n, flags) in d's primary context (kept for the process),
 * whatever context is current; *owner (if not NULL) gets that context. */
kiln_status kiln__cu_pinned_alloc(kiln__cu_dev *d, size_t n, unsigned flags, void **p,
                                  CUcontext *owner);
/* st, or OUT_OF_HOST_MEMORY ("pinned <what>") where CUDA reported running
 * out of pinned host memory as OUT_OF_DEVICE_MEMORY. */
kiln_status kiln__cu_pinned_status(kiln_status st, const char *what);

/* Host-side work ordered in a stream (cuLaunchHostFunc): memmove (or a
 * pattern fill), then the staging block goes back to the pool. */
typedef struct kiln__cu_hostjob {
    void *dst;
    const void *src; /* NULL: nothing to copy */
    size_t n;
    size_t pattern_size;   /* > 0: fill dst with data[0..pattern_size) */
    kiln__cu_stage *stage; /* returned after the copy */
    unsigned char data[];  /* inline source or pattern */
} kiln__cu_hostjob;

/* malloc'd job with `extra` inline bytes. */
kiln__cu_hostjob *kiln__cu_hostjob_new(size_t extra);
/* Enqueues the job on s; on failure frees the job (not its stage) and
 * sets the error. */
kiln_status kiln__cu_hostjob_launch(CUstream s, kiln__cu_hostjob *j);

typedef struct kiln__cu_mapping {
    void *host;
    size_t offset, size;
    unsigned flags;
    int direct;            /* pinned buffer: host points into it, nothing to copy */
    kiln__cu_stage *stage; /* staging copy otherwise */
    struct kiln__cu_mapping *next;
} kiln__cu_mapping;

typedef struct kiln__cu_buffer {
    atomic_int refs;
    kiln__cu_context *ctx;
    struct kiln__cu_buffer *parent; /* sub-buffers */
    CUdeviceptr ptr;
    void *host; /* HOST_PINNED: the pinned memory */
    size_t size;
    int pinned;
    pthread_mutex_t lock; /* maps */
    kiln__cu_mapping *maps;
    int borrowed;       /* a user's memory (interop.c): never freed */
    int stream_ordered; /* from the context's pool (kiln__cu_mem) */
} kiln__cu_buffer;

typedef struct kiln__cu_program {
    kiln__cu_context *ctx;
    kiln__cu_dev *dev;
    CUmodule module;
    void *binary; /* cubin, or PTX when NVRTC cannot target the device */
    size_t binary_size;
    atomic_int refs; /* the core's + one per kernel */
} kiln__cu_program;

typedef struct kiln__cu_kernel {
    kiln__cu_program *program;
    CUfunction fn;
    int max_threads;
} kiln__cu_kernel;

/* Raises fn's dynamic shared memory limit to shared bytes when they pass
 * the device's default 48 KiB (up to its opt-in limit). */
kiln_status kiln__cu_allow_shared(const kiln__cu_dev *dev, CUfunction fn, size_t shared);

/* memory.c: a reference on a buffer (held commands keep theirs). */
void kiln__cu_buffer_ref(kiln__cu_buffer *b);
void kiln__cu_buffer_unref(kiln__cu_buffer *b);
/* program.c */
void kiln__cu_program_ref(kiln__cu_program *p);
void kiln__cu_program_unref(kiln__cu_program *p);

/* program.c: a launch's block and grid (b, grid: 3 entries; *empty when
 * a global size is 0) and cuLaunchKernel's parameter array (params and
 * ptrs: num_args entries; *shared: the dynamic shared memory), on dev. */
kiln_status kiln__cu_launch_shape(const kiln__cu_dev *dev, const kiln__cu_kernel *k, unsigned dims,
                                  const size_t *global, const size_t *local, size_t *b,
                                  size_t *grid, int *empty);
kiln_status kiln__cu_launch_params(const kiln__cu_dev *dev, size_t num_args, const kiln__barg *args,
                                   void **params, CUdeviceptr *ptrs, size_t *shared);
/* memory.c: backend.h's buffer_copy_peer. */
kiln_status kiln__cu_buffer_copy_peer(void *queue, void *src, size_t src_offset, void *dst,
                                      size_t dst_offset, size_t size, size_t num_wait,
                                      void *const *wait, void **out_event);
/* probe.c: a symbol of the loaded libcuda.so.1 (NULL if it lacks it: an
 * optional entry point, such as the graph and green-context calls). */
void *kiln__cu_symbol(const char *name);
/* graph.c: native command graphs (backend.h's kiln__backend_graph). */
extern const struct kiln__backend_graph kiln__cu_graph_table;

/* kiln__cuda_compile, kiln__cuda_check_image, kiln__cuda_nvrtc_ready and
 * kiln__cuda_pick_block: nvrtc_tools.h. */

/* backend entry points, by file */
kiln_status kiln__cu_load(void);
kiln_status kiln__cu_enumerate(kiln__bdevice **devices, size_t *count);
kiln_status kiln__cu_partition(const kiln__bdevice *device, unsigned units_each,
                               kiln__bdevice *subdevices, size_t capacity, size_t *count);
kiln_status kiln__cu_partition_counts(const kiln__bdevice *device, const unsigned *counts,
                                      size_t num_counts, kiln__bdevice *subdevices, size_t capacity,
                                      size_t *count);
kiln_status kiln__cu_context_create(const kiln__bdevice *const *devices, size_t num_devices,
                                    void **context);
void kiln__cu_context_release(void *context);

kiln_status kiln__cu_queue_create(void *context, const kiln__bdevice *device, unsigned flags,
                                  void **queue);
void kiln__cu_queue_release(void *queue);
kiln_status kiln__cu_queue_finish(void *queue);
kiln_status kiln__cu_queue_flush(void *queue);
kiln_status kiln__cu_queue_marker(void *queue, int barrier, size_t num_wait, void *const *wait,
                                  void **out_event);

kiln_status kiln__cu_buffer_create(void *context, size_t size, unsigned flags,
                                   const void *host_data, void **buffer);
kiln_status kiln__cu_buffer_create_sub(void *parent, size_t offset, size_t size, void **buffer);
void kiln__cu_buffer_release(void *buffer);
kiln_status kiln__cu_buffer_write(void *queue, void *buffer, size_t offset, size_t size,
                                  const void *src, int blocking, size_t num_wait, void *const *wait,
                                  void **out_event);
kiln_status kiln__cu_buffer_read(void *queue, void *buffer, size_t offset, size_t size, void *dst,
                                 int blocking, size_t num_wait, void *const *wait,
                                 void **out_event);
kiln_status kiln__cu_buffer_copy(void *queue, void *src, size_t src_offset, void *dst,
                                 size_t dst_offset, size_t size, size_t num_wait, void *const *wait,
                                 void **out_event);
kiln_status kiln__cu_buffer_fill(void *queue, void *buffer, const void *pattern,
                                 size_t pattern_size, size_t offset, size_t size, size_t num_wait,
                                 void *const *wait, void **out_event);
kiln_status kiln__cu_buffer_map(void *queue, void *buffer, unsigned map_flags, size_t offset,
                                size_t size, void **host_ptr);
kiln_status kiln__cu_buffer_unmap(void *queue, void *buffer, void *host_ptr, size_t num_wait,
                                  void *const *wait, void **out_event);

/* The prelude text (the table names it: prelude_file); only
 * bench/bench_launch_cuda.c still calls this. */
const char *kiln__cu_prelude(void);
kiln_status kiln__cu_program_build(void *context, const kiln__bdevice *device, const char *source,
                                   const char *options, void **program, char **log);
kiln_status kiln__cu_program_binary(void *program, void **binary, size_t *size);
kiln_status kiln__cu_program_load(void *context, const kiln__bdevice *device, const void *binary,
                                  size_t size, const char *options, void **program);
void kiln__cu_program_release(void *program);
kiln_status kiln__cu_kernel_create(void *program, const char *name, void **kernel);
void kiln__cu_kernel_release(void *kernel);
kiln_status kiln__cu_kernel_occupancy(void *kernel, size_t local, unsigned *groups_per_cu);
kiln_status kiln__cu_kernel_launch(void *queue, void *kernel, unsigned dims, const size_t *global,
                                   const size_t *local, size_t num_args, const kiln__barg *args,
                                   size_t num_wait, void *const *wait, void **out_event);

kiln_status kiln__cu_event_wait(size_t num, void *const *events);
kiln_status kiln__cu_event_state(void *event, kiln_event_state *state);
kiln_status kiln__cu_event_times(void *event, kiln_event_times *times);
kiln_status kiln__cu_event_notify(void *event, kiln__notify_fn fn, void *arg);
kiln_status kiln__cu_user_event_create(void *context, void **event);
/* How many user events are not completed yet (0: no stream waits for the
 * host). */
int kiln__cu_user_events_unset(void);
/* deferred.c: runs fn(arg) on kiln's CUDA worker thread, in order (inline
 * if the thread cannot be started): for work that synchronises a context
 * and must not block the caller while a stream waits for a user event. */
void kiln__cu_defer(void (*fn)(void *arg), void *arg);
/* Blocks until no user event is pending (deferred.c says why). */
void kiln__cu_wait_no_user_events(void);
kiln_status kiln__cu_user_event_set(void *event, int failed);

/* interop.c: the backend's interop table (backend/interop.h) */
extern const struct kiln__backend_interop kiln__cu_interop;

#endif
