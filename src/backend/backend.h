/* The backend interface: what src/core asks of a driver.
 *
 * A backend is a versioned table of function pointers (kiln__backend). The
 * core never includes a vendor header; a backend never knows about
 * algorithms, caches or kiln's public objects. All handles crossing this
 * interface are the backend's own opaque pointers (void *): a cl_context, a
 * CUDA stream wrapper, and so on.
 *
 * Error reporting: a backend function returns a kiln_status; on failure it
 * first calls kiln__error_set(status, native_code, "fmt", ...) (see
 * src/base/error.h) so that the user can read what the driver said, e.g.
 * "clCreateBuffer: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)". The core may
 * prefix the message with context (which call, which argument).
 *
 * Threads: every function may be called from any thread, concurrently,
 * except where a comment says otherwise. The backend serialises what its
 * driver does not (clSetKernelArg + clEnqueueNDRangeKernel on one kernel).
 *
 * Events: functions that enqueue take a wait list of backend events and, if
 * out_event is non-NULL, return a new backend event holding one reference.
 * A backend event must support: wait, status, profiling times, a completion
 * notification (notify), retain/release.
 */
#ifndef KILN_BACKEND_H
#define KILN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "kiln.h"

/* 2: the table describes its backend (selector_prefix ... install_hint);
 *    the prelude is named by file (prelude_file), no longer a function.
 * 3: native command graphs (graph, optional), fission by counts
 *    (partition_counts, optional), copies between contexts
 *    (buffer_copy_peer, optional). */
#define KILN__BACKEND_ABI 3

/* Device allocations are rounded up to whole 32-bit words: 8- and 16-bit
 * atomics are compare-and-swap loops on the word that holds the element,
 * so the last element's word must lie inside the allocation. 0 where the
 * rounded size does not fit a size_t. */
static inline size_t kiln__buffer_alloc_size(size_t size) {
    return size > SIZE_MAX - 3 ? 0 : (size + 3) & ~(size_t)3;
}

/* A device as a backend reports it. The registry copies it. */
typedef struct kiln__bdevice {
    /* Every field filled by the backend (include/kiln.h says what each
     * means), the capabilities too: backend_name (= selector_prefix),
     * languages (= the table's), forward_progress, device_sleep,
     * warp_shuffle, subgroup_size, fp16, fp64. Algorithms choose their
     * variants from these. */
    kiln_device_info info;
    char *extensions;        /* malloc'd, "" if none; the registry owns it */
    void *handle;            /* cl_device_id; CUDA: (void*)(intptr_t)ordinal */
    void *platform;          /* cl_platform_id; NULL on CUDA */
    unsigned platform_index; /* OpenCL platform number; 0 on CUDA */
    unsigned device_index;   /* index within the platform / CUDA ordinal */
    /* A string that changes whenever compiled binaries may change: driver
     * and platform versions, device name. Used in the cache key. */
    char identity[512];
} kiln__bdevice;

/* One kernel argument, already checked by the core against the kernel's
 * parameter list. */
typedef struct kiln__barg {
    kiln_arg_kind kind;
    void *mem;         /* KILN_ARG_BUFFER: the backend buffer handle */
    const void *bytes; /* KILN_ARG_SCALAR: the value's bytes */
    size_t size;       /* KILN_ARG_SCALAR: bytes; KILN_ARG_LOCAL: bytes */
} kiln__barg;

/* Called by the backend, on any thread (often a driver thread), exactly once
 * when a backend event completes (failed = 0) or fails (failed = 1). It must
 * return quickly: the core only queues the work for its own thread. */
typedef void (*kiln__notify_fn)(void *arg, int failed);

typedef struct kiln__backend {
    int abi;                /* KILN__BACKEND_ABI */
    kiln_backend_kind kind; /* kiln_device_info.backend of its devices */
    const char *name;       /* "opencl", "cuda": in messages */

    /* --- what the backend is (core reads these; it never tests a backend's
     * kind or name to decide anything) ------------------------------------ */
    /* Selectors "<prefix>:N" (the N-th device of this backend, sub-devices
     * not counted) and "<prefix>:P:D" (platform_index P, device_index D;
     * a backend without platforms reports platform 0) pick its devices.
     * Lower case; matched case-insensitively. Also kiln_device_info's
     * backend_name and the start of each device's id. */
    const char *selector_prefix;
    /* The default choice (kiln_device_select(NULL)) takes a GPU, then an
     * accelerator, then a CPU; among devices of one type it takes the
     * backend with the highest priority (on a tie, the first in
     * kiln_device_at order). CUDA is 20, OpenCL 10: when both drive one
     * NVIDIA GPU, CUDA launches faster. */
    int priority;
    /* The native kernel languages the backend compiles: bit (1u << L) for
     * each kiln_language L (KILN_LANG_OPENCL_C, KILN_LANG_CUDA_C). Every
     * backend also compiles kiln's portable dialect (KILN_LANG_AUTO);
     * kiln_program_create refuses a language whose bit is missing. */
    unsigned languages;
    /* The embedded file (base/embedded.h, from src/backend/<name>/) the core
     * puts before every source: the portable dialect's prelude. It ends
     * with a "#line 1" directive so that log line numbers are the user's. */
    const char *prelude_file;
    /* What to install to get this backend's driver, for the message when no
     * backend loads (load's own message says what exactly is missing). */
    const char *install_hint;

    /* --- loading and devices ------------------------------------------ */
    /* Loads the driver library (dlopen). Called once, under the registry's
     * lock. On failure sets the error message: what is missing and which
     * package provides it. */
    kiln_status (*load)(void);
    /* Fills a malloc'd array of devices (the registry frees the array and
     * each extensions string). Zero devices is KILN_OK with *count = 0. */
    kiln_status (*enumerate)(kiln__bdevice **devices, size_t *count);
    /* Device fission. Fills up to capacity sub-devices (same ownership as
     * enumerate's entries, one at a time) and *count. */
    kiln_status (*partition)(const kiln__bdevice *device, unsigned units_each,
                             kiln__bdevice *subdevices, size_t capacity, size_t *count);

    /* --- contexts and queues ------------------------------------------- */
    kiln_status (*context_create)(const kiln__bdevice *const *devices, size_t num_devices,
                                  void **context);
    void (*context_release)(void *context);
    /* flags: kiln_queue_flags. A backend that cannot honour
     * KILN_QUEUE_OUT_OF_ORDER returns KILN_ERROR_UNSUPPORTED with a message. */
    kiln_status (*queue_create)(void *context, const kiln__bdevice *device, unsigned flags,
                                void **queue);
    void (*queue_release)(void *queue);
    kiln_status (*queue_finish)(void *queue);
    kiln_status (*queue_flush)(void *queue);
    /* barrier = 0: marker; 1: barrier. */
    kiln_status (*queue_marker)(void *queue, int barrier, size_t num_wait, void *const *wait,
                                void **out_event);

    /* --- memory (offsets and sizes already range-checked) -------------- */
    /* Allocates at least kiln__buffer_alloc_size(size) bytes. */
    kiln_status (*buffer_create)(void *context, size_t size, unsigned flags, const void *host_data,
                                 void **buffer);
    kiln_status (*buffer_create_sub)(void *parent, size_t offset, size_t size, void **buffer);
    void (*buffer_release)(void *buffer);
    kiln_status (*buffer_write)(void *queue, void *buffer, size_t offset, size_t size,
                                const void *src, int blocking, size_t num_wait, void *const *wait,
                                void **out_event);
    kiln_status (*buffer_read)(void *queue, void *buffer, size_t offset, size_t size, void *dst,
                               int blocking, size_t num_wait, void *const *wait, void **out_event);
    kiln_status (*buffer_copy)(void *queue, void *src, size_t src_offset, void *dst,
                               size_t dst_offset, size_t size, size_t num_wait, void *const *wait,
                               void **out_event);
    kiln_status (*buffer_fill)(void *queue, void *buffer, const void *pattern, size_t pattern_size,
                               size_t offset, size_t size, size_t num_wait, void *const *wait,
                               void **out_event);
    /* Blocking map. */
    kiln_status (*buffer_map)(void *queue, void *buffer, unsigned map_flags, size_t offset,
                              size_t size, void **host_ptr);
    kiln_status (*buffer_unmap)(void *queue, void *buffer, void *host_ptr, size_t num_wait,
                                void *const *wait, void **out_event);

    /* --- programs and kernels ------------------------------------------ */
    /* Compiles source for one device. On a compile error returns
     * KILN_ERROR_BUILD and *log (malloc'd) holds the compiler's log; on
     * success *log may hold warnings or be NULL. */
    kiln_status (*program_build)(void *context, const kiln__bdevice *device, const char *source,
                                 const char *options, void **program, char **log);
    /* The device binary of a built program (malloc'd), for the disk cache. */
    kiln_status (*program_binary)(void *program, void **binary, size_t *size);
    /* Loads a binary made by program_binary. Any failure (corrupt binary)
     * returns an error; the core then rebuilds from source. */
    kiln_status (*program_load)(void *context, const kiln__bdevice *device, const void *binary,
                                size_t size, const char *options, void **program);
    void (*program_release)(void *program);
    kiln_status (*kernel_create)(void *program, const char *name, void **kernel);
    void (*kernel_release)(void *kernel);
    /* Work-groups of `local` work-items one compute unit runs at once for
     * this kernel (its registers and local memory decide); NULL where the
     * driver cannot tell (OpenCL). */
    kiln_status (*kernel_occupancy)(void *kernel, size_t local, unsigned *groups_per_cu);
    /* global: work-items per dimension (not blocks); local may be NULL. */
    kiln_status (*kernel_launch)(void *queue, void *kernel, unsigned dims, const size_t *global,
                                 const size_t *local, size_t num_args, const kiln__barg *args,
                                 size_t num_wait, void *const *wait, void **out_event);

    /* --- events ---------------------------------------------------------- */
    kiln_status (*event_wait)(size_t num, void *const *events);
    kiln_status (*event_state)(void *event, kiln_event_state *state);
    kiln_status (*event_times)(void *event, kiln_event_times *times);
    /* Arranges for fn(arg, failed) to be called exactly once when the event
     * completes or fails (at once, possibly on this thread, if it already
     * has). */
    kiln_status (*event_notify)(void *event, kiln__notify_fn fn, void *arg);
    kiln_status (*user_event_create)(void *context, void **event);
    kiln_status (*user_event_set)(void *event, int failed);
    void (*event_retain)(void *event);
    void (*event_release)(void *event);
    const struct kiln__backend_interop *interop; /* backend/interop.h */
    /* Native command graphs; NULL where the driver has none (the core then
     * replays graphs itself, src/core/graph.c). */
    const struct kiln__backend_graph *graph;
    /* Device fission by counts (optional; NULL: UNSUPPORTED): one
     * sub-device per entry of counts, of that many compute units. Same
     * ownership as partition's. */
    kiln_status (*partition_counts)(const kiln__bdevice *device, const unsigned *counts,
                                    size_t num_counts, kiln__bdevice *subdevices, size_t capacity,
                                    size_t *count);
    /* A copy from src, a buffer of another context of this backend (another
     * device), into dst on queue (optional; NULL: UNSUPPORTED, the caller
     * stages it through the host). The wait list's events are the queue's
     * context's (the core bridges the others). */
    kiln_status (*buffer_copy_peer)(void *queue, void *src, size_t src_offset, void *dst,
                                    size_t dst_offset, size_t size, size_t num_wait,
                                    void *const *wait, void **out_event);
} kiln__backend;

/* A native command graph, built for one device of a context (and queue,
 * the one the recording began on: an OpenCL command buffer belongs to one)
 * node by node in record order (src/core/graph.c): each add function puts a node after
 * the nodes in deps (handles an add returned) and hands back its handle,
 * owned by the graph. Any function may return KILN_ERROR_UNSUPPORTED (a
 * node kind or size the driver's graphs cannot take, an old driver): the
 * core then drops the graph and replays instead. instantiate ends the
 * building; launch enqueues the whole graph as one command on a queue of
 * the graph's device (KILN_ERROR_UNSUPPORTED for a queue it cannot run on,
 * or at a moment it cannot: the core replays that launch); set_kernel_args
 * gives a kernel node new arguments for the launches after it. release may come while launches are
 * queued (the backend keeps what they need). */
struct kiln__backend_graph {
    /* 1: the core builds native graphs unless KILN_GRAPH_NATIVE=0; 0: only
     * with KILN_GRAPH_NATIVE=1 (a driver's graphs measured slower than the
     * replay: PoCL 3.1's command buffers, bench/README.md) */
    int default_on;
    kiln_status (*create)(void *context, const kiln__bdevice *device, void *queue, void **graph);
    kiln_status (*add_kernel)(void *graph, void *kernel, unsigned dims, const size_t *global,
                              const size_t *local, size_t num_args, const kiln__barg *args,
                              size_t num_deps, void *const *deps, void **node);
    kiln_status (*add_copy)(void *graph, void *src, size_t src_offset, void *dst, size_t dst_offset,
                            size_t size, size_t num_deps, void *const *deps, void **node);
    kiln_status (*add_fill)(void *graph, void *buffer, const void *pattern, size_t pattern_size,
                            size_t offset, size_t size, size_t num_deps, void *const *deps,
                            void **node);
    kiln_status (*add_empty)(void *graph, size_t num_deps, void *const *deps, void **node);
    kiln_status (*instantiate)(void *graph);
    kiln_status (*set_kernel_args)(void *graph, void *node, size_t num_args,
                                   const kiln__barg *args);
    kiln_status (*launch)(void *queue, void *graph, size_t num_wait, void *const *wait,
                          void **out_event);
    void (*release)(void *graph);
};

/* Each backend defines its table in src/backend/<name>/backend.c; the
 * registry (src/backend/registry.c) lists them. */

#endif
